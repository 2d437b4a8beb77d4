/* greedy_decode.c - greedy decoding with a GPT-style decoder and a KV cache,
 * using only the v4f runtime's C API.
 *
 *   v4f-greedy-decode [--threads N] MODEL.v4f N_NEW TOKEN...
 *
 * The model has inputs (input_ids int64 [1, S], past_key, past_value float32
 * [layers, 1, heads, P, head_size]) and outputs (logits [1, S, vocab],
 * present_key, present_value [layers, 1, heads, P + S, head_size]), as
 * test/models/gpt_tiny_kv.onnx. The first call runs the whole prompt with an
 * empty past (P = 0); every later call feeds the one token chosen last
 * (argmax of the last position's logits). present_* are bound to past_* with
 * v4f_session_bind_feedback, so the cache is never copied by the caller.
 * Prints the generated tokens and the decode speed. */
#include "v4f/artifact_format.h"
#include "v4f/runtime.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int check(v4f_status_t s, const char *what) {
  if (!s) return 0;
  fprintf(stderr, "v4f-greedy-decode: %s: %s\n", what, v4f_status_message(s));
  v4f_status_free(s);
  return 1;
}

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

/* Index of the model input or output called `name`, or -1. */
static long find(const v4f_model_t *model, int output, const char *name) {
  size_t n = output ? v4f_model_output_count(model) : v4f_model_input_count(model);
  for (size_t i = 0; i < n; ++i) {
    v4f_tensor_info_t info;
    if (check(output ? v4f_model_output_info(model, i, &info) : v4f_model_input_info(model, i, &info), "info"))
      return -1;
    if (strcmp(info.name, name) == 0) return (long)i;
  }
  fprintf(stderr, "v4f-greedy-decode: the model has no %s '%s'\n", output ? "output" : "input", name);
  return -1;
}

int main(int argc, char **argv) {
  int threads = 0; /* 0: every core */
  if (argc > 2 && strcmp(argv[1], "--threads") == 0) {
    threads = atoi(argv[2]);
    argc -= 2;
    argv += 2;
  }
  if (argc < 4) {
    fprintf(stderr, "usage: v4f-greedy-decode [--threads N] MODEL.v4f N_NEW TOKEN...\n");
    return 2;
  }
  long n_new = strtol(argv[2], NULL, 10);
  int n_prompt = argc - 3;
  if (n_new < 1 || n_new > 100000) {
    fprintf(stderr, "v4f-greedy-decode: N_NEW must be in [1, 100000]\n");
    return 2;
  }
  int64_t *prompt = malloc(sizeof(int64_t) * (size_t)n_prompt);
  for (int i = 0; i < n_prompt; ++i) prompt[i] = strtoll(argv[3 + i], NULL, 10);

  v4f_model_t *model = NULL;
  v4f_session_t *session = NULL;
  if (check(v4f_model_load_file(argv[1], NULL, NULL, &model), argv[1])) return 1;
  v4f_session_options_t options;
  v4f_session_options_init(&options);
  options.thread_count = threads;
  if (check(v4f_session_create(model, &options, NULL, &session), "session")) return 1;
  long ids = find(model, 0, "input_ids"), pk = find(model, 0, "past_key"), pv = find(model, 0, "past_value");
  long lo = find(model, 1, "logits"), ok = find(model, 1, "present_key"), ov = find(model, 1, "present_value");
  if (ids < 0 || pk < 0 || pv < 0 || lo < 0 || ok < 0 || ov < 0) return 1;
  if (v4f_model_input_count(model) != 3 || v4f_model_output_count(model) != 3) {
    fprintf(stderr, "v4f-greedy-decode: expected 3 inputs and 3 outputs\n");
    return 1;
  }
  if (check(v4f_session_bind_feedback(session, (size_t)ok, (size_t)pk), "feedback") ||
      check(v4f_session_bind_feedback(session, (size_t)ov, (size_t)pv), "feedback"))
    return 1;

  /* The empty past of the first call: [layers, 1, heads, 0, head_size]. */
  v4f_tensor_info_t past_info;
  if (check(v4f_model_input_info(model, (size_t)pk, &past_info), "info")) return 1;
  v4f_tensor_t inputs[3];
  memset(inputs, 0, sizeof inputs);
  for (int k = 0; k < 2; ++k) {
    v4f_tensor_t *t = &inputs[k == 0 ? pk : pv];
    t->dtype = V4F_DTYPE_FLOAT32;
    t->rank = past_info.rank;
    for (int d = 0; d < past_info.rank; ++d) t->dims[d] = past_info.dims[d] >= 0 ? past_info.dims[d] : 1;
    t->dims[3] = 0; /* past length */
  }
  v4f_tensor_t outputs[3];
  memset(outputs, 0, sizeof outputs);
  float *logits = NULL;
  size_t logits_cap = 0;
  int64_t next = 0;
  double first_ms = 0, decode_ms = 0;
  printf("tokens:");
  for (long step = 0; step < n_new; ++step) {
    v4f_tensor_t *in = &inputs[ids];
    in->dtype = V4F_DTYPE_INT64;
    in->rank = 2;
    in->dims[0] = 1;
    in->dims[1] = step == 0 ? n_prompt : 1;
    in->data = step == 0 ? (void *)prompt : (void *)&next;
    in->byte_size = sizeof(int64_t) * (size_t)in->dims[1];
    if (check(v4f_session_resolve_output_shapes(session, inputs, 3, outputs, 3), "shapes")) return 1;
    if (outputs[lo].byte_size > logits_cap) {
      logits_cap = outputs[lo].byte_size;
      logits = realloc(logits, logits_cap);
    }
    outputs[lo].data = logits;
    outputs[lo].byte_size = logits_cap;
    double t0 = now_ms();
    if (check(v4f_session_run(session, inputs, 3, outputs, 3), "run")) return 1;
    double ms = now_ms() - t0;
    if (step == 0)
      first_ms = ms;
    else
      decode_ms += ms;
    /* Argmax over the last position's logits. */
    int64_t S = outputs[lo].dims[1], V = outputs[lo].dims[2];
    const float *row = logits + (S - 1) * V;
    int64_t best = 0;
    for (int64_t v = 1; v < V; ++v)
      if (row[v] > row[best]) best = v;
    next = best;
    printf(" %lld", (long long)next);
  }
  printf("\n");
  printf("prompt: %d tokens in %.3f ms\n", n_prompt, first_ms);
  if (n_new > 1)
    printf("decode: %ld tokens in %.3f ms = %.1f tokens/s\n", n_new - 1, decode_ms, (n_new - 1) / (decode_ms / 1e3));
  free(logits);
  free(prompt);
  v4f_session_release(session);
  v4f_model_release(model);
  return 0;
}
