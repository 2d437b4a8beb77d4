#!/usr/bin/env python3
"""Builds the model repository the v4f-serve tests use: small ONNX models made
with onnx.helper (deterministic weights), compiled with v4fc into
REPO/<model>/<version>/model.v4f, plus each model's config.json.

  mlp     x FP32 [batch,16] -> y FP32 [batch,4], s FP32 [batch,1]; dynamic
          batching (max 8, 20 ms delay), two instances. Version 2 doubles y.
  dtypes  INT32/FP16/UINT8/BOOL inputs -> INT32/FP16/INT64/BOOL/FP64 outputs,
          static shapes, not batched (every datatype path of the protocol).
  slow    a chain of 16 [256,1024]x[1024,1024] MatMuls, max_queue_size 2 (for the
          queue-full and timeout tests); not batched.

Usage: make_repository.py --v4fc build/bin/v4fc --out DIR [--resnet18]
--resnet18 adds `resnet18` (random weights, batch dim 'N', 3x224x224) for
bench/serve_batching.py.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def mlp_model(scale):
    rng = np.random.default_rng(7)
    w1 = rng.standard_normal((16, 32)).astype(np.float32) * 0.3
    b1 = rng.standard_normal(32).astype(np.float32) * 0.1
    w2 = rng.standard_normal((32, 4)).astype(np.float32) * 0.3 * scale
    inits = [numpy_helper.from_array(w1, "w1"), numpy_helper.from_array(b1, "b1"),
             numpy_helper.from_array(w2, "w2"), numpy_helper.from_array(np.array([1], np.int64), "axes")]
    nodes = [
        helper.make_node("MatMul", ["x", "w1"], ["h0"]),
        helper.make_node("Add", ["h0", "b1"], ["h1"]),
        helper.make_node("Relu", ["h1"], ["h"]),
        helper.make_node("MatMul", ["h", "w2"], ["y"]),
        helper.make_node("ReduceSum", ["y", "axes"], ["s"], keepdims=1),
    ]
    g = helper.make_graph(nodes, "mlp", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 16])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 4]),
                           helper.make_tensor_value_info("s", TensorProto.FLOAT, ["batch", 1])], inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


def dtypes_model():
    nodes = [
        helper.make_node("Add", ["a", "a"], ["a2"]),
        helper.make_node("Add", ["b", "b"], ["b2"]),
        helper.make_node("Cast", ["c"], ["c64"], to=TensorProto.INT64),
        helper.make_node("Not", ["d"], ["nd"]),
        helper.make_node("Cast", ["a"], ["af64"], to=TensorProto.DOUBLE),
    ]
    g = helper.make_graph(
        nodes, "dtypes",
        [helper.make_tensor_value_info("a", TensorProto.INT32, [2, 3]),
         helper.make_tensor_value_info("b", TensorProto.FLOAT16, [2, 3]),
         helper.make_tensor_value_info("c", TensorProto.UINT8, [2, 3]),
         helper.make_tensor_value_info("d", TensorProto.BOOL, [2, 3])],
        [helper.make_tensor_value_info("a2", TensorProto.INT32, [2, 3]),
         helper.make_tensor_value_info("b2", TensorProto.FLOAT16, [2, 3]),
         helper.make_tensor_value_info("c64", TensorProto.INT64, [2, 3]),
         helper.make_tensor_value_info("nd", TensorProto.BOOL, [2, 3]),
         helper.make_tensor_value_info("af64", TensorProto.DOUBLE, [2, 3])])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


def slow_model():
    # ~0.1 s of matrix products per request on one core: long enough to
    # fill a 2-request queue from a few clients.
    rng = np.random.default_rng(3)
    w = (rng.standard_normal((1024, 1024)) / 32).astype(np.float32)
    inits = [numpy_helper.from_array(w, "w")]
    nodes, prev = [], "x"
    for i in range(16):
        nodes.append(helper.make_node("MatMul", [prev, "w"], [f"m{i}"]))
        prev = f"m{i}"
    nodes.append(helper.make_node("Identity", [prev], ["y"]))
    g = helper.make_graph(nodes, "slow", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [256, 1024])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [256, 1024])], inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


def resnet18_model():
    """ResNet-18's layer shapes (11.7 M parameters, 1.8 GFLOP at 224x224),
    random weights, symbolic batch 'N'."""
    rng = np.random.default_rng(18)
    inits, nodes = [], []
    counter = [0]

    def name(p):
        counter[0] += 1
        return f"{p}{counter[0]}"

    def conv(x, cin, cout, k, stride, relu):
        w = name("w")
        b = name("b")
        fan = cin * k * k
        inits.append(numpy_helper.from_array((rng.standard_normal((cout, cin, k, k)) * np.sqrt(2.0 / fan)).astype(np.float32), w))
        inits.append(numpy_helper.from_array((rng.standard_normal(cout) * 0.01).astype(np.float32), b))
        y = name("c")
        nodes.append(helper.make_node("Conv", [x, w, b], [y], kernel_shape=[k, k], strides=[stride, stride],
                                      pads=[k // 2] * 4))
        if relu:
            r = name("r")
            nodes.append(helper.make_node("Relu", [y], [r]))
            return r
        return y

    x = conv("input", 3, 64, 7, 2, True)
    p = name("p")
    nodes.append(helper.make_node("MaxPool", [x], [p], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]))
    x, cin = p, 64
    for cout, stride in [(64, 1), (128, 2), (256, 2), (512, 2)]:
        for block in range(2):
            s = stride if block == 0 else 1
            h = conv(x, cin, cout, 3, s, True)
            h = conv(h, cout, cout, 3, 1, False)
            short = x if (s == 1 and cin == cout) else conv(x, cin, cout, 1, s, False)
            a = name("a")
            nodes.append(helper.make_node("Add", [h, short], [a]))
            r = name("r")
            nodes.append(helper.make_node("Relu", [a], [r]))
            x, cin = r, cout
    gp = name("gap")
    nodes.append(helper.make_node("GlobalAveragePool", [x], [gp]))
    fl = name("flat")
    nodes.append(helper.make_node("Flatten", [gp], [fl], axis=1))
    inits.append(numpy_helper.from_array((rng.standard_normal((1000, 512)) * 0.04).astype(np.float32), "fc_w"))
    inits.append(numpy_helper.from_array(np.zeros(1000, np.float32), "fc_b"))
    nodes.append(helper.make_node("Gemm", [fl, "fc_w", "fc_b"], ["logits"], transB=1))
    g = helper.make_graph(nodes, "resnet18", [helper.make_tensor_value_info("input", TensorProto.FLOAT, ["N", 3, 224, 224])],
                          [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["N", 1000])], inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


def compile_into(v4fc, model, out_dir, name, version, config=None):
    vdir = os.path.join(out_dir, name, str(version))
    os.makedirs(vdir, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, f"{name}.onnx")
        onnx.save(model, src)
        subprocess.run([v4fc, "compile", src, "-o", os.path.join(vdir, "model.v4f")], check=True)
    if config is not None:
        with open(os.path.join(out_dir, name, "config.json"), "w") as f:
            json.dump(config, f, indent=2)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--v4fc", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--resnet18", action="store_true")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    mlp_config = {"max_batch_size": 8, "instance_count": 2,
                  "dynamic_batching": {"max_queue_delay_microseconds": 20000, "preferred_batch_size": [8]},
                  "version_policy": {"all": {}}}
    compile_into(a.v4fc, mlp_model(1.0), a.out, "mlp", 1, mlp_config)
    compile_into(a.v4fc, mlp_model(2.0), a.out, "mlp", 2)
    compile_into(a.v4fc, dtypes_model(), a.out, "dtypes", 1)
    compile_into(a.v4fc, slow_model(), a.out, "slow", 1, {"max_queue_size": 2, "threads": 1})
    if a.resnet18:
        compile_into(a.v4fc, resnet18_model(), a.out, "resnet18", 1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
