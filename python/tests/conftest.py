"""Shared fixtures of the Python package's tests (pytest, run by scripts/test.sh
against the package installed in a fresh venv)."""

import os
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

REPO = Path(__file__).resolve().parents[2]
# The e2e model generators and tolerances (test/e2e) are reused as they are.
sys.path.insert(0, str(REPO / "test" / "e2e"))

import v4f  # noqa: E402


def make_model(nodes, inputs, outputs, initializers=(), opset=17, name="m"):
    graph = helper.make_graph(nodes, name, inputs, outputs, list(initializers))
    opsets = [helper.make_opsetid("", opset)]
    model = helper.make_model(graph, opset_imports=opsets, producer_name="v4f-pytest")
    model.ir_version = helper.find_min_ir_version_for(opsets)
    onnx.checker.check_model(model)
    return model


def mlp_model():
    """y = relu(x @ w + b) with x [N, 8] (N symbolic), and z = y * 2."""
    rng = np.random.default_rng(7)
    w = helper.make_tensor("w", TensorProto.FLOAT, [8, 4], rng.standard_normal((8, 4)).astype(np.float32).ravel())
    b = helper.make_tensor("b", TensorProto.FLOAT, [4], rng.standard_normal(4).astype(np.float32))
    two = helper.make_tensor("two", TensorProto.FLOAT, [], [2.0])
    nodes = [
        helper.make_node("MatMul", ["x", "w"], ["m"], name="mm"),
        helper.make_node("Add", ["m", "b"], ["a"], name="add"),
        helper.make_node("Relu", ["a"], ["y"], name="relu"),
        helper.make_node("Mul", ["y", "two"], ["z"], name="twice"),
    ]
    return make_model(
        nodes,
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 4]),
         helper.make_tensor_value_info("z", TensorProto.FLOAT, ["N", 4])],
        [w, b, two], name="mlp")


def reference(model, feed):
    import onnxruntime as ort

    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return sess.run(None, feed)


@pytest.fixture(scope="session")
def mlp(tmp_path_factory):
    """(onnx model, path of its .v4f)."""
    model = mlp_model()
    path = tmp_path_factory.mktemp("mlp") / "mlp.v4f"
    v4f.compile(model, str(path))
    return model, str(path)


@pytest.fixture
def session(mlp):
    with v4f.Session(mlp[1], threads=1) as s:
        yield s
