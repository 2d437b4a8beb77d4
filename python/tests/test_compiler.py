"""v4f.compile / check / inspect and the console scripts."""

import os
import subprocess
import sys

import numpy as np
import pytest
from onnx import TensorProto, helper

import v4f
from conftest import make_model, mlp_model


def _unsupported_model():
    nodes = [helper.make_node("Relu", ["x"], ["r"], name="ok_relu"),
             helper.make_node("StringNormalizer", ["r"], ["y"], name="the_bad_node")]
    return make_model(nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])], name="bad")


def test_compile_from_path_bytes_and_proto(tmp_path):
    model = mlp_model()
    onnx_path = tmp_path / "mlp.onnx"
    onnx_path.write_bytes(model.SerializeToString())
    a = v4f.compile(str(onnx_path))
    b = v4f.compile(model.SerializeToString())
    c = v4f.compile(model)
    assert isinstance(a, bytes) and a[:8] == b"V4FART\r\n"
    assert a == c  # deterministic: the same file from a path and a ModelProto named like it
    with v4f.Session(b) as s:  # from bytes: named "model"
        assert s.model_name == "model"
    out = tmp_path / "out.v4f"
    assert v4f.compile(onnx_path, out) == out
    assert out.read_bytes() == a
    with v4f.Session(a) as s:
        assert [t.name for t in s.inputs] == ["x"]


def test_compile_text_emits(tmp_path):
    text = v4f.compile(mlp_model(), emit="mlir")
    assert isinstance(text, str) and "v4f." in text
    imported = v4f.compile(mlp_model(), emit="imported-mlir")
    assert "v4f.matmul" in imported
    with pytest.raises(v4f.InvalidArgumentError, match="emit must be one of"):
        v4f.compile(mlp_model(), emit="exe")


def test_shape_options(tmp_path):
    model = mlp_model()
    info = v4f.inspect(v4f.compile(model, input_shapes={"x": [3, 8]}))
    assert info["inputs"][0]["shape"] == [3, 8]
    info = v4f.inspect(v4f.compile(model, dims={"N": 5}))
    assert info["inputs"][0]["shape"] == [5, 8]
    info = v4f.inspect(v4f.compile(model, dims={"N": (2, 16)}))
    assert info["inputs"][0]["shape"] == ["N", 8]
    assert info["inputs"][0]["dim_bounds"] == [[2, 16], None]
    with v4f.Session(v4f.compile(model, dims={"N": (2, 16)}), threads=1) as s:
        with pytest.raises(v4f.InvalidArgumentError, match="N"):
            s.run(None, {"x": np.ones((1, 8), np.float32)})
    with pytest.raises(v4f.CompileError, match="--dim"):
        v4f.compile(model, dims={"nope": 3})


def test_input_values_fold_an_input(tmp_path):
    nodes = [helper.make_node("Mul", ["x", "s"], ["y"])]
    model = make_model(nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3]),
                               helper.make_tensor_value_info("s", TensorProto.FLOAT, [1])],
                       [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3])])
    with v4f.Session(v4f.compile(model, input_values={"s": np.array([3.0], np.float32)}), threads=1) as sess:
        assert [t.name for t in sess.inputs] == ["x"]
        (y,) = sess.run(None, {"x": np.array([1, 2, 3], np.float32)})
        np.testing.assert_array_equal(y, [3, 6, 9])


def test_compile_error_names_the_node_and_leaves_no_file(tmp_path):
    out = tmp_path / "bad.v4f"
    with pytest.raises(v4f.CompileError) as e:
        v4f.compile(_unsupported_model(), out)
    assert "the_bad_node" in e.value.message and "StringNormalizer" in e.value.message
    assert e.value.returncode == 1
    assert not out.exists()
    assert not any(p.name.startswith("bad.v4f") for p in tmp_path.iterdir())


def test_compile_errors_on_unreadable_models(tmp_path):
    with pytest.raises(v4f.CompileError, match="model"):
        v4f.compile(b"this is not a protobuf")
    with pytest.raises(v4f.CompileError):
        v4f.compile(str(tmp_path / "missing.onnx"))
    with pytest.raises(TypeError, match="ModelProto"):
        v4f.compile(12)
    with pytest.raises(TypeError):
        v4f.compile(mlp_model(), optimise=True)  # not an option


def test_check_reports_unsupported_nodes_as_data():
    report = v4f.check(_unsupported_model())
    assert not report.ok
    assert report.op_counts == {"Relu": 1, "StringNormalizer": 1}
    assert [(u.node, u.op_type) for u in report.unsupported] == [("the_bad_node", "StringNormalizer")]
    assert report.unsupported[0].reason
    assert report.graph_passes == "not run"
    good = v4f.check(mlp_model())
    assert good.ok and not good.unsupported and good.graph_passes == "ok" and good.error is None
    assert good.opset == 17


def test_check_runs_the_graph_passes_with_shape_options():
    # A shape the model contradicts: supported ops, failing import.
    report = v4f.check(mlp_model(), input_shapes={"x": [2, 9]})
    assert not report.ok and report.graph_passes == "failed" and "x" in report.error


def test_inspect(tmp_path):
    path = tmp_path / "mlp.v4f"
    v4f.compile(mlp_model(), path, target_cpu=["x86-64-v2", "x86-64-v3"])
    info = v4f.inspect(path)
    assert info["model"] == "mlp" and info["format_version"].startswith("5.")
    assert [i["name"] for i in info["inputs"]] == ["x"]
    assert [o["name"] for o in info["outputs"]] == ["y", "z"]
    assert len(info["plans"]) == 2
    assert info["plans"][1]["executables"][0]["cpu"] == "x86-64-v3"
    assert "avx2" in info["plans"][1]["executables"][0]["cpu_features"]
    assert "dispatches" not in info["plans"][0]
    assert info["plans"][0]["arena_bytes"] == 0  # one fused dispatch per output: no transient buffers
    detailed = v4f.inspect(path.read_bytes(), plan=True)
    assert detailed["plans"][0]["dispatches"][0]["name"]
    bad = tmp_path / "bad.v4f"
    bad.write_bytes(b"garbage" * 20)
    with pytest.raises(v4f.CompileError, match="bad magic"):
        v4f.inspect(bad)


def _chain_model():
    """x [N, 16] -> MatMul -> Softmax (rows) -> Softmax (columns) -> MatMul: transient buffers."""
    rng = np.random.default_rng(5)
    w = helper.make_tensor("w", TensorProto.FLOAT, [16, 32], rng.standard_normal(512).astype(np.float32))
    v = helper.make_tensor("v", TensorProto.FLOAT, [32, 16], rng.standard_normal(512).astype(np.float32))
    nodes = [helper.make_node("MatMul", ["x", "w"], ["a"]), helper.make_node("Softmax", ["a"], ["s"], axis=-1),
             helper.make_node("Softmax", ["s"], ["t"], axis=0), helper.make_node("MatMul", ["t", "v"], ["y"])]
    return make_model(nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 16])],
                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 16])], [w, v], name="chain")


def test_inspect_reports_the_arena_the_runtime_plans():
    dynamic = v4f.inspect(v4f.compile(_chain_model()))
    assert dynamic["plans"][0]["arena_bytes"] is None  # N symbolic: sized at run time
    artifact = v4f.compile(_chain_model(), dims={"N": 16})
    arena = v4f.inspect(artifact)["plans"][0]["arena_bytes"]
    with v4f.Session(artifact, threads=1) as s:
        s.run(None, {"x": np.ones((16, 16), np.float32)})
        assert arena == s.peak_memory > 0


def test_console_scripts(tmp_path):
    bindir = os.path.dirname(sys.executable)
    out = subprocess.run([os.path.join(bindir, "v4fc"), "--version"], capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout.startswith("v4fc ")
    model = tmp_path / "m.onnx"
    model.write_bytes(mlp_model().SerializeToString())
    artifact = tmp_path / "m.v4f"
    subprocess.run([os.path.join(bindir, "v4fc"), "compile", str(model), "-o", str(artifact)], check=True)
    run = subprocess.run([os.path.join(bindir, "v4f-run"), str(artifact), "--dim", "N=2", "--threads", "1"],
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    bad = subprocess.run([os.path.join(bindir, "v4fc"), "compile", str(tmp_path / "none.onnx"), "-o", "x"],
                         capture_output=True, text=True)
    assert bad.returncode != 0 and "none.onnx" in bad.stderr
