#!/usr/bin/env python3
"""Greedy decoding with v4f's KV-cache feedback next to ONNX Runtime.

Compiles test/models/gpt_tiny_kv.onnx (a small random-initialized GPT-style
decoder with past_key_values, written by torch.onnx.export) once, runs
build/bin/v4f-greedy-decode (the C example: the runtime feeds present_* back
as past_* without copying) and the same greedy loop with ONNX Runtime (the
cache fed back by hand), and checks that both produce the same tokens.
Prints both decode speeds (tokens/s, same machine, same thread count); the
numbers are reported, never asserted.

  compare_with_ort.py [--build build] [--tokens 24] [--prompt 3 14 15 92]
Exits 1 when the token sequences differ or a step fails.
"""
import argparse
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import onnxruntime as ort

ROOT = Path(__file__).resolve().parents[2]


def ort_greedy(model: Path, prompt, n_new, threads):
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = threads
    opts.inter_op_num_threads = 1
    sess = ort.InferenceSession(str(model), opts, providers=["CPUExecutionProvider"])
    past_shape = sess.get_inputs()[1].shape  # [layers, B, heads, P, head_size]
    shape = [d if isinstance(d, int) else 1 for d in past_shape]
    shape[3] = 0
    past_k = np.zeros(shape, np.float32)
    past_v = np.zeros(shape, np.float32)
    ids = np.array([prompt], np.int64)
    tokens, decode_s = [], 0.0
    for step in range(n_new):
        t0 = time.perf_counter()
        logits, past_k, past_v = sess.run(None, {"input_ids": ids, "past_key": past_k, "past_value": past_v})
        if step:
            decode_s += time.perf_counter() - t0
        nxt = int(np.argmax(logits[0, -1]))
        tokens.append(nxt)
        ids = np.array([[nxt]], np.int64)
    return tokens, decode_s


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default="build")
    ap.add_argument("--tokens", type=int, default=24)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--prompt", type=int, nargs="+", default=[3, 14, 15, 92])
    args = ap.parse_args()
    build = Path(args.build).resolve()
    model = ROOT / "test/models/gpt_tiny_kv.onnx"
    with tempfile.TemporaryDirectory() as tmp:
        artifact = Path(tmp) / "gpt.v4f"
        subprocess.run([str(build / "bin/v4fc"), "compile", str(model), "-o", str(artifact)], check=True)
        run = subprocess.run([str(build / "bin/v4f-greedy-decode"), "--threads", str(args.threads), str(artifact),
                              str(args.tokens)] + [str(t) for t in args.prompt], capture_output=True, text=True)
    if run.returncode != 0:
        print(run.stdout + run.stderr)
        print("greedy decode: v4f FAILED")
        return 1
    print(run.stdout, end="")
    v4f_tokens = [int(t) for t in re.search(r"^tokens:(.*)$", run.stdout, re.M).group(1).split()]
    m = re.search(r"= ([0-9.]+) tokens/s", run.stdout)
    v4f_tps = float(m.group(1)) if m else float("nan")
    ref_tokens, ort_s = ort_greedy(model, args.prompt, args.tokens, args.threads)
    ort_tps = (args.tokens - 1) / ort_s if ort_s > 0 else float("nan")
    print(f"onnxruntime {ort.__version__} tokens:", " ".join(map(str, ref_tokens)))
    print(f"decode speed: v4f {v4f_tps:.1f} tokens/s, onnxruntime {ort_tps:.1f} tokens/s "
          f"(v4f/ORT time ratio {ort_tps / v4f_tps:.2f})")
    if v4f_tokens != ref_tokens:
        first = next(i for i, (a, b) in enumerate(zip(v4f_tokens, ref_tokens)) if a != b) \
            if any(a != b for a, b in zip(v4f_tokens, ref_tokens)) else min(len(v4f_tokens), len(ref_tokens))
        print(f"greedy decode: FAILED (tokens differ from ONNX Runtime's at position {first})")
        return 1
    print(f"greedy decode: ok ({args.tokens} tokens equal to ONNX Runtime's)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
