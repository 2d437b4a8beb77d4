"""Bad input gives a clear v4f.Error, never a crash."""

import os

import numpy as np
import pytest

import v4f


def test_wrong_dtype(session):
    with pytest.raises(v4f.InvalidArgumentError, match=r"input 'x' has dtype float64; the model expects float32"):
        session.run(None, {"x": np.ones((2, 8))})
    with pytest.raises(v4f.InvalidArgumentError, match="has dtype int32"):
        session.run(None, {"x": np.ones((2, 8), np.int32)})


def test_wrong_shape(session):
    with pytest.raises(v4f.InvalidArgumentError, match="'x'") as e:
        session.run(None, {"x": np.ones((2, 9), np.float32)})
    assert "8" in str(e.value) and "9" in str(e.value)
    with pytest.raises(v4f.InvalidArgumentError, match="'x'"):
        session.run(None, {"x": np.ones((2, 8, 1), np.float32)})
    with pytest.raises(v4f.InvalidArgumentError, match="'x'"):
        session.run(None, {"x": np.ones((1,) * 9, np.float32)})


def test_missing_and_extra_inputs(session):
    x = np.ones((2, 8), np.float32)
    with pytest.raises(v4f.InvalidArgumentError, match=r"missing input 'x' \(the model's inputs: 'x'\)"):
        session.run(None, {})
    with pytest.raises(v4f.InvalidArgumentError, match="no input named 'extra'"):
        session.run(None, {"x": x, "extra": x})
    with pytest.raises(v4f.InvalidArgumentError, match="names must be strings"):
        session.run(None, {"x": x, 3: x})
    with pytest.raises(v4f.InvalidArgumentError, match="must be a dict"):
        session.run(None, None)
    with pytest.raises(v4f.InvalidArgumentError, match="must be a dict"):
        session.run(None, [x])
    # A ValueError too, as the built-in equivalent.
    with pytest.raises(ValueError):
        session.run(None, {})


def test_unconvertible_input(session):
    with pytest.raises(v4f.InvalidArgumentError, match="cannot convert it to an array of float32"):
        session.run(None, {"x": object()})
    with pytest.raises(v4f.InvalidArgumentError, match="cannot convert"):
        session.run(None, {"x": [[1, 2], [3]]})


def test_noncontiguous_result_is_right(session):
    big = np.random.default_rng(0).standard_normal((4, 16)).astype(np.float32)
    x = big[:, ::2]  # strided view
    (y,) = session.run(["y"], {"x": x})
    assert session.last_input_copies == 1
    (y_ref,) = session.run(["y"], {"x": x.copy()})
    np.testing.assert_array_equal(y, y_ref)


def test_closed_session(mlp):
    s = v4f.Session(mlp[1], threads=1)
    s.close()
    assert s.closed
    with pytest.raises(v4f.SessionClosedError, match="closed"):
        s.run(None, {"x": np.ones((1, 8), np.float32)})
    with pytest.raises(v4f.SessionClosedError):
        s.reset_feedback()
    s.close()  # twice is fine
    assert "closed" in repr(s)


def test_missing_file(tmp_path):
    with pytest.raises(v4f.NotFoundError) as e:
        v4f.Session(str(tmp_path / "nope.v4f"))
    assert "nope.v4f" in str(e.value)
    assert isinstance(e.value, FileNotFoundError)


def test_directory_and_fifo_are_refused(tmp_path):
    with pytest.raises(v4f.Error, match=str(tmp_path)):
        v4f.Session(str(tmp_path))
    fifo = tmp_path / "fifo.v4f"
    os.mkfifo(fifo)
    with pytest.raises(v4f.Error, match="fifo.v4f"):
        v4f.Session(str(fifo))


def test_corrupt_artifacts(mlp, tmp_path):
    data = open(mlp[1], "rb").read()
    cases = {
        "empty": b"",
        "garbage": b"not an artifact at all" * 10,
        "truncated": data[: len(data) // 2],
        "header_only": data[:64],
    }
    flipped = bytearray(data)
    flipped[len(data) - 100] ^= 0xFF  # a byte of the last section: its digest fails
    cases["flipped"] = bytes(flipped)
    for name, blob in cases.items():
        path = tmp_path / f"{name}.v4f"
        path.write_bytes(blob)
        with pytest.raises(v4f.InvalidArtifactError) as e:
            v4f.Session(str(path))
        assert f"{name}.v4f" in str(e.value), name
        with pytest.raises(v4f.InvalidArtifactError):
            v4f.Session(blob)


def test_bad_arguments(mlp):
    with pytest.raises(TypeError, match="path or bytes"):
        v4f.Session(12)
    with pytest.raises(v4f.InvalidArgumentError, match="threads"):
        v4f.Session(mlp[1], threads=-1)
    with pytest.raises(v4f.InvalidArgumentError, match="threads"):
        v4f.Session(mlp[1], threads=2**32 + 1)


def test_every_error_is_a_v4f_error():
    for cls in (v4f.InvalidArgumentError, v4f.NotFoundError, v4f.InvalidArtifactError, v4f.UnsupportedError,
                v4f.ResourceExhaustedError, v4f.KernelError, v4f.InternalError, v4f.SessionClosedError,
                v4f.CompileError):
        assert issubclass(cls, v4f.Error)
