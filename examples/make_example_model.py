#!/usr/bin/env python3
"""Writes the bundled example model used by scripts/demo.sh.

A small image classifier (Conv+BatchNorm+Relu, MaxPool, Conv+Relu, GlobalAveragePool,
Flatten, Gemm, Softmax) whose input has a symbolic batch dimension "N", with fixed
random weights, plus a sample input (batch 2) and ONNX Runtime's output for it.

  make_example_model.py [--out-dir build/examples]
writes  <out-dir>/example_cnn.onnx, <out-dir>/input.npy (name "image"),
        <out-dir>/reference/probs.npy (when onnxruntime is installed)
"""
import argparse
import math
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def build(seed: int = 0) -> onnx.ModelProto:
    rng = np.random.default_rng(seed)
    inits = []

    def w(name, shape, scale):
        inits.append(numpy_helper.from_array((rng.standard_normal(shape) * scale).astype(np.float32), name))
        return name

    def bn(prefix, c):
        for suffix, arr in (("scale", rng.uniform(0.5, 1.5, c)), ("bias", rng.standard_normal(c) * 0.1),
                            ("mean", rng.standard_normal(c) * 0.1), ("var", rng.uniform(0.5, 1.5, c))):
            inits.append(numpy_helper.from_array(arr.astype(np.float32), f"{prefix}.{suffix}"))
        return [f"{prefix}.{s}" for s in ("scale", "bias", "mean", "var")]

    nodes = [
        helper.make_node("Conv", ["image", w("conv1.w", [16, 3, 3, 3], math.sqrt(2 / 27))], ["c1"],
                         kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        helper.make_node("BatchNormalization", ["c1"] + bn("bn1", 16), ["b1"], epsilon=1e-5),
        helper.make_node("Relu", ["b1"], ["r1"]),
        helper.make_node("MaxPool", ["r1"], ["p1"], kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Conv", ["p1", w("conv2.w", [32, 16, 3, 3], math.sqrt(2 / 144)), w("conv2.b", [32], 0.05)],
                         ["c2"], kernel_shape=[3, 3], pads=[1, 1, 1, 1], strides=[2, 2]),
        helper.make_node("Relu", ["c2"], ["r2"]),
        helper.make_node("GlobalAveragePool", ["r2"], ["g"]),
        helper.make_node("Flatten", ["g"], ["f"], axis=1),
        helper.make_node("Gemm", ["f", w("fc.w", [10, 32], 1 / math.sqrt(32)), w("fc.b", [10], 0.05)],
                         ["logits"], transB=1),
        helper.make_node("Softmax", ["logits"], ["probs"], axis=-1),
    ]
    graph = helper.make_graph(
        nodes, "example_cnn",
        [helper.make_tensor_value_info("image", TensorProto.FLOAT, ["N", 3, 32, 32])],
        [helper.make_tensor_value_info("probs", TensorProto.FLOAT, ["N", 10])], inits)
    opsets = [helper.make_opsetid("", 17)]
    model = helper.make_model(graph, opset_imports=opsets, producer_name="v4f-example")
    model.ir_version = helper.find_min_ir_version_for(opsets)
    onnx.checker.check_model(model, full_check=True)
    return model


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out-dir", default="build/examples")
    ap.add_argument("--batch", type=int, default=2)
    args = ap.parse_args()
    out = Path(args.out_dir)
    out.mkdir(parents=True, exist_ok=True)
    model = build()
    onnx.save(model, out / "example_cnn.onnx")
    x = np.random.default_rng(1).standard_normal([args.batch, 3, 32, 32]).astype(np.float32)
    np.save(out / "input.npy", x)
    print(f"wrote {out / 'example_cnn.onnx'} ({len(model.graph.node)} nodes, input image[N,3,32,32]) "
          f"and {out / 'input.npy'} {list(x.shape)}")
    try:
        import onnxruntime as ort
    except ImportError:
        return
    sess = ort.InferenceSession(str(out / "example_cnn.onnx"), providers=["CPUExecutionProvider"])
    (out / "reference").mkdir(exist_ok=True)
    np.save(out / "reference" / "probs.npy", sess.run(["probs"], {"image": x})[0])


if __name__ == "__main__":
    main()
