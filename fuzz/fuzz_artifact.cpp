// libFuzzer target: the artifact loader (header, signature trailer, manifest,
// FlatBuffers verification, sections, plan verification, CPU features) and a
// session over every artifact it accepts, resolving the output shapes for
// inputs of the signature's shapes (the shape program and the arena plan) and
// running the plan's dispatch loop (bindings, grids, scratch) on stub kernels.
//
// Each input is first loaded as a file with digests on (FuzzCommon.h
// loadAsFile: the file reader plans its hashing from the unverified header
// and manifest). Then it loads with verify_digests = 0, so mutations reach the
// FlatBuffers verifier and the plan checks instead of stopping at a BLAKE3
// or BLAKE2b digest (which a fuzzer cannot forge; the digest checks
// themselves are covered by the unit tests and the corruption sweep). The
// runtime of fuzzing builds (V4F_FUZZING_STUB_KERNELS) never hands a CPU
// library to the dynamic loader: with digests off, fuzzed ELF files would
// reach it, and the loader's robustness against hostile ELF is glibc's
// (digests and signatures protect real deployments). Kernels are stubs that
// fail cleanly.

#include "v4f/artifact_format.h"
#include "FuzzCommon.h"
#include "v4f/runtime.h"

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::vector<uint8_t> bytes(data, data + size);
  if (bytes.size() >= sizeof(v4f_file_header_t)) // file_size: let truncations through
    for (int i = 0; i < 8; ++i) bytes[16 + i] = static_cast<uint8_t>(uint64_t(bytes.size()) >> (8 * i));
  v4f_fuzz::loadAsFile(bytes);
  v4f_model_t *model = v4f_fuzz::loadModel(bytes);
  if (!model) return 0;
  v4f_session_t *session = nullptr;
  v4f_status_t s = v4f_fuzz::createSession(model, uint64_t(256) << 20, &session);
  if (!s) {
    // Inputs of the signature's shapes (symbolic dims 2), zero-filled, bounded.
    size_t n = v4f_model_input_count(model);
    std::vector<std::vector<uint8_t>> buffers(n);
    std::vector<v4f_tensor_t> inputs(n);
    bool ok = n <= 64;
    for (size_t i = 0; i < n && ok; ++i) {
      v4f_tensor_info_t info;
      if (v4f_model_input_info(model, i, &info)) {
        ok = false;
        break;
      }
      v4f_tensor_t &t = inputs[i];
      memset(&t, 0, sizeof t);
      t.dtype = info.dtype;
      t.rank = info.rank;
      size_t count = 1;
      for (int d = 0; d < info.rank; ++d) {
        t.dims[d] = info.dims[d] < 0 ? 2 : info.dims[d];
        count *= static_cast<size_t>(t.dims[d]);
        if (count > (1u << 20)) ok = false;
      }
      size_t es = v4f_dtype_size(info.dtype);
      if (!ok || es == 0) {
        ok = false;
        break;
      }
      buffers[i].assign(count * es, 0);
      t.data = buffers[i].data();
      t.byte_size = buffers[i].size();
    }
    size_t m = v4f_model_output_count(model);
    std::vector<v4f_tensor_t> outputs(m);
    if (ok && m <= 64 && !(s = v4f_session_resolve_output_shapes(session, inputs.data(), n, outputs.data(), m))) {
      std::vector<std::vector<uint8_t>> out(m);
      bool small = true;
      for (size_t o = 0; o < m; ++o) {
        small = small && outputs[o].byte_size <= (size_t(1) << 24);
        if (!small) break;
        out[o].resize(outputs[o].byte_size);
        outputs[o].data = out[o].data();
      }
      if (small) s = v4f_session_run(session, inputs.data(), n, outputs.data(), m);
    }
  }
  v4f_status_free(s);
  v4f_session_release(session);
  v4f_model_release(model);
  return 0;
}
