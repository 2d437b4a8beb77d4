#!/usr/bin/env python3
"""Per-call overhead of the Python APIs: v4f.Session.run vs ONNX Runtime's
InferenceSession.run on tiny models, where the call itself dominates.

  build/python-venv/bin/python bench/python_overhead.py [--calls 20000] [--rounds 7]

Run it with a Python that has the v4f package installed (scripts/test_python.sh
leaves one at build/python-venv) plus onnx and onnxruntime. Both sides run with
one thread, the same inputs and the same model; rounds alternate v4f / ORT and
each round times `--calls` back-to-back calls. Reported: the median time per
call of each side (µs) and the median of the per-round ratios v4f/ORT.
Timings are printed, never asserted (docs/benchmarks.md records them).
"""

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper

import v4f


def tiny_models():
    """name -> (model, feed): a single Relu, and a two-input Add with two
    outputs (more dict work per call)."""
    def model(nodes, inputs, outputs, name):
        g = helper.make_graph(nodes, name, inputs, outputs)
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
        m.ir_version = 8
        onnx.checker.check_model(m)
        return m

    vi = helper.make_tensor_value_info
    relu = model([helper.make_node("Relu", ["x"], ["y"])], [vi("x", TensorProto.FLOAT, [1, 16])],
                 [vi("y", TensorProto.FLOAT, [1, 16])], "relu16")
    add = model([helper.make_node("Add", ["a", "b"], ["s"]), helper.make_node("Mul", ["a", "b"], ["p"])],
                [vi("a", TensorProto.FLOAT, [4, 64]), vi("b", TensorProto.FLOAT, [4, 64])],
                [vi("s", TensorProto.FLOAT, [4, 64]), vi("p", TensorProto.FLOAT, [4, 64])], "add_mul_4x64")
    rng = np.random.default_rng(0)
    return {
        "relu16": (relu, {"x": rng.standard_normal((1, 16)).astype(np.float32)}),
        "add_mul_4x64": (add, {"a": rng.standard_normal((4, 64)).astype(np.float32),
                               "b": rng.standard_normal((4, 64)).astype(np.float32)}),
    }


def time_calls(fn, calls):
    t0 = time.perf_counter()
    for _ in range(calls):
        fn()
    return (time.perf_counter() - t0) / calls * 1e6


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--calls", type=int, default=20000)
    ap.add_argument("--rounds", type=int, default=7)
    args = ap.parse_args()
    print(f"v4f {v4f.__version__} (runtime {v4f.runtime_version()}), onnxruntime {ort.__version__}")
    print(f"{'model':<14} {'v4f µs/call':>12} {'ORT µs/call':>12} {'v4f/ORT':>8}")
    with tempfile.TemporaryDirectory() as tmp:
        for name, (model, feed) in tiny_models().items():
            path = Path(tmp) / f"{name}.v4f"
            v4f.compile(model, path)
            sess = v4f.Session(path, threads=1)
            so = ort.SessionOptions()
            so.intra_op_num_threads = 1
            so.inter_op_num_threads = 1
            osess = ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
            for a, b in zip(sess.run(None, feed), osess.run(None, feed)):
                assert np.allclose(a, b, rtol=1e-6, atol=1e-6)
            run_v4f = lambda: sess.run(None, feed)  # noqa: E731
            run_ort = lambda: osess.run(None, feed)  # noqa: E731
            time_calls(run_v4f, args.calls // 10)  # warm up
            time_calls(run_ort, args.calls // 10)
            tv, to, ratios = [], [], []
            for _ in range(args.rounds):
                a = time_calls(run_v4f, args.calls)
                b = time_calls(run_ort, args.calls)
                tv.append(a)
                to.append(b)
                ratios.append(a / b)
            print(f"{name:<14} {statistics.median(tv):>12.2f} {statistics.median(to):>12.2f} "
                  f"{statistics.median(ratios):>8.2f}")
            sess.close()


if __name__ == "__main__":
    main()
