"""v4f.Session: signatures, zero-copy runs, out=, DLPack, feedback, profiling."""

import numpy as np
import pytest
from onnx import TensorProto, helper

import v4f
from conftest import make_model, reference


def test_signature(session):
    assert [t.name for t in session.inputs] == ["x"]
    assert session.inputs[0].dtype == np.float32
    assert session.inputs[0].shape == ("N", 8)
    assert [(t.name, t.shape) for t in session.outputs] == [("y", ("N", 4)), ("z", ("N", 4))]
    assert session.get_inputs() == session.inputs  # ONNX Runtime's spelling
    assert session.model_name == "mlp"
    assert session.producer.startswith("v4fc")
    assert session.thread_count == 1
    assert session.variant_count == 1 and session.variant == 0
    assert session.target_cpu
    assert "x: float32['N', 8]" in repr(session)


def test_run_matches_onnxruntime(mlp, session):
    model, _ = mlp
    for n in (1, 5, 64):
        x = np.random.default_rng(n).standard_normal((n, 8)).astype(np.float32)
        y, z = session.run(None, {"x": x})
        ry, rz = reference(model, {"x": x})
        assert y.dtype == np.float32 and y.shape == (n, 4)
        np.testing.assert_allclose(y, ry, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(z, rz, rtol=1e-5, atol=1e-5)
    assert session.peak_memory >= 0


def test_output_names_select_and_order(session):
    x = np.ones((2, 8), np.float32)
    y, z = session.run(None, {"x": x})
    (z2,) = session.run(["z"], {"x": x})
    z3, y3 = session.run(["z", "y"], {"x": x})
    np.testing.assert_array_equal(z2, z)
    np.testing.assert_array_equal(z3, z)
    np.testing.assert_array_equal(y3, y)
    with pytest.raises(v4f.InvalidArgumentError, match="no output named 'w'"):
        session.run(["w"], {"x": x})
    with pytest.raises(v4f.InvalidArgumentError, match="list of names or None"):
        session.run("y", {"x": x})


def test_contiguous_input_is_not_copied(session):
    x = np.random.default_rng(1).standard_normal((3, 8)).astype(np.float32)
    session.run(None, {"x": x})
    assert session.last_input_copies == 0
    # The runtime read the caller's memory itself.
    assert session._s.last_input_addresses() == [x.ctypes.data]


def test_noncontiguous_and_sequences_are_copied_once(session):
    base = np.random.default_rng(2).standard_normal((8, 3)).astype(np.float32)
    x = base.T  # [3, 8], Fortran order
    assert not x.flags.c_contiguous
    (y,) = session.run(["y"], {"x": x})
    assert session.last_input_copies == 1
    assert session._s.last_input_addresses() != [x.ctypes.data]
    (y_ref,) = session.run(["y"], {"x": np.ascontiguousarray(x)})
    np.testing.assert_array_equal(y, y_ref)
    (y_list,) = session.run(["y"], {"x": x.tolist()})
    assert session.last_input_copies == 1
    np.testing.assert_array_equal(y_list, y_ref)


def test_feed_may_be_any_mapping(session):
    from types import MappingProxyType

    x = np.ones((1, 8), np.float32)
    (a,) = session.run(["y"], MappingProxyType({"x": x}))
    (b,) = session.run(["y"], {"x": x})
    np.testing.assert_array_equal(a, b)


def test_caller_provided_outputs_are_written_in_place(session):
    x = np.random.default_rng(3).standard_normal((4, 8)).astype(np.float32)
    y_ref, z_ref = session.run(None, {"x": x})
    y = np.full((4, 4), np.nan, np.float32)
    ry, rz = session.run(None, {"x": x}, out={"y": y})
    assert ry is y
    np.testing.assert_array_equal(y, y_ref)
    np.testing.assert_array_equal(rz, z_ref)
    with pytest.raises(v4f.InvalidArgumentError, match=r"out\['y'\] has shape \(4, 5\)"):
        session.run(None, {"x": x}, out={"y": np.empty((4, 5), np.float32)})
    with pytest.raises(v4f.InvalidArgumentError, match="has dtype float64"):
        session.run(None, {"x": x}, out={"y": np.empty((4, 4), np.float64)})
    with pytest.raises(v4f.InvalidArgumentError, match="C-contiguous and writable"):
        session.run(None, {"x": x}, out={"y": np.empty((4, 4), np.float32).T})
    ro = np.empty((4, 4), np.float32)
    ro.flags.writeable = False
    with pytest.raises(v4f.InvalidArgumentError, match="C-contiguous and writable"):
        session.run(None, {"x": x}, out={"y": ro})
    with pytest.raises(v4f.InvalidArgumentError, match="no output named 'q'"):
        session.run(None, {"x": x}, out={"q": y})


class DLPackOnly:
    """A tensor that offers only the DLPack protocol (as torch.Tensor does)."""

    def __init__(self, array):
        self._a = array

    def __dlpack__(self, **kwargs):
        return self._a.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self._a.__dlpack_device__()


def test_dlpack_in_and_out(session):
    x = np.random.default_rng(4).standard_normal((2, 8)).astype(np.float32)
    (y,) = session.run(["y"], {"x": DLPackOnly(x)})
    assert session.last_input_copies == 0
    assert session._s.last_input_addresses() == [x.ctypes.data]
    (y_ref,) = session.run(["y"], {"x": x})
    np.testing.assert_array_equal(y, y_ref)
    # Outputs are NumPy arrays, which export DLPack themselves.
    back = np.from_dlpack(DLPackOnly(y))
    assert back.ctypes.data == y.ctypes.data


def test_load_from_bytes(mlp):
    data = open(mlp[1], "rb").read()
    with v4f.Session(data, threads=1) as s:
        (y,) = s.run(["y"], {"x": np.ones((1, 8), np.float32)})
    with v4f.Session(mlp[1], threads=1) as s:
        (y2,) = s.run(["y"], {"x": np.ones((1, 8), np.float32)})
    np.testing.assert_array_equal(y, y2)
    with v4f.Session(memoryview(bytearray(data))) as s:
        assert s.inputs[0].name == "x"


def test_profiling(session):
    session.enable_profiling()
    session.run(None, {"x": np.ones((2, 8), np.float32)})
    entries = session.profile()
    assert entries and all(e["duration_ns"] >= 0 and e["kernel"] for e in entries)
    session.enable_profiling(False)


def _cache_model():
    """present = Concat(past, x) along axis 1; y = ReduceSum(present) over axis 1."""
    nodes = [helper.make_node("Concat", ["past", "x"], ["present"], axis=1),
             helper.make_node("ReduceSum", ["present", "axes"], ["y"], keepdims=0)]
    axes = helper.make_tensor("axes", TensorProto.INT64, [1], [1])
    return make_model(
        nodes,
        [helper.make_tensor_value_info("past", TensorProto.FLOAT, [1, "T", 2]),
         helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 2])],
        [helper.make_tensor_value_info("present", TensorProto.FLOAT, [1, "T1", 2]),
         helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 2])],
        [axes], opset=17, name="cache")


def test_feedback_binding(tmp_path):
    path = str(tmp_path / "cache.v4f")
    v4f.compile(_cache_model(), path)
    with v4f.Session(path, threads=1) as s:
        s.bind_feedback("present", "past")
        steps = [np.full((1, 1, 2), float(i + 1), np.float32) for i in range(4)]
        past = np.zeros((1, 0, 2), np.float32)
        outs = []
        for i, x in enumerate(steps):
            feed = {"x": x} if i else {"x": x, "past": past}  # later runs: the session's state
            present, y = s.run(None, feed)
            outs.append(present)
            assert present.shape == (1, i + 1, 2)
            np.testing.assert_array_equal(y, present.sum(axis=1))
        # Returned fed-back outputs are copies: the next run does not change them.
        np.testing.assert_array_equal(outs[1], np.array([[[1, 1], [2, 2]]], np.float32))
        s.reset_feedback()
        with pytest.raises(v4f.InvalidArgumentError, match="missing input 'past'"):
            s.run(None, {"x": steps[0]})
        present, _ = s.run(None, {"x": steps[0], "past": past})
        assert present.shape == (1, 1, 2)
        with pytest.raises(v4f.InvalidArgumentError, match="fed back"):
            s.run(None, {"x": steps[0]}, out={"present": np.empty((1, 2, 2), np.float32)})
        with pytest.raises(v4f.InvalidArgumentError, match="no input named 'nope'"):
            s.bind_feedback("y", "nope")


def test_multi_isa_artifact_loads_best_plan(tmp_path, mlp):
    path = str(tmp_path / "multi.v4f")
    v4f.compile(mlp[0], path, target_cpu=["x86-64-v2", "x86-64-v3"])
    with v4f.Session(path, threads=1) as s:
        assert s.variant_count == 2
        want = 1 if v4f.cpu_has_feature("avx2") == 1 and v4f.cpu_has_feature("fma") == 1 else 0
        assert s.variant == want
    with v4f.Session(path, threads=1, disabled_cpu_features=["avx2"]) as s:
        assert s.variant == 0 and s.target_cpu == "x86-64-v2"


def test_bfloat16_through_ml_dtypes(tmp_path):
    ml_dtypes = pytest.importorskip("ml_dtypes")
    model = make_model([helper.make_node("Cast", ["x"], ["y"], to=TensorProto.FLOAT)],
                       [helper.make_tensor_value_info("x", TensorProto.BFLOAT16, [3])],
                       [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3])], name="bf16")
    path = str(tmp_path / "bf16.v4f")
    v4f.compile(model, path)
    with v4f.Session(path, threads=1) as s:
        assert s.inputs[0].dtype == np.dtype(ml_dtypes.bfloat16)
        x = np.array([1.5, -2.0, 3.25], dtype=ml_dtypes.bfloat16)
        (y,) = s.run(None, {"x": x})
        np.testing.assert_array_equal(y, np.array([1.5, -2.0, 3.25], np.float32))
        with pytest.raises(v4f.InvalidArgumentError, match="expects bfloat16"):
            s.run(None, {"x": np.ones(3, np.float32)})


def test_model_shared_by_sessions_on_two_threads(mlp):
    import threading

    model = v4f.Model(mlp[1])
    assert [t.name for t in model.inputs] == ["x"] and model.inputs[0].shape == ("N", 8)
    assert model.model_name == "mlp" and model.variant_count == 1 and model.target_cpu
    x = np.random.default_rng(11).standard_normal((5, 8)).astype(np.float32)
    with v4f.Session(mlp[1], threads=1) as alone:
        expect = alone.run(None, {"x": x})
    sessions = [v4f.Session(model, threads=1) for _ in range(2)]
    del model  # the sessions keep it loaded
    errors = []

    def work(s):
        for _ in range(100):
            y, z = s.run(None, {"x": x})
            if not (np.array_equal(y, expect[0]) and np.array_equal(z, expect[1])):
                errors.append("wrong result")

    threads = [threading.Thread(target=work, args=(s,)) for s in sessions]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    sessions[0].close()
    (y, _) = sessions[1].run(None, {"x": x})  # the other session still has the model
    np.testing.assert_array_equal(y, expect[0])
    sessions[1].close()
    with pytest.raises(v4f.InvalidArgumentError, match="belong to the Model"):
        v4f.Session(v4f.Model(mlp[1]), verify_digests=False)
    with pytest.raises(TypeError, match="path or bytes"):
        v4f.Model(3.5)
    with pytest.raises(v4f.InvalidArtifactError):
        v4f.Model(b"not an artifact")
