"""v4f.Session: load a .v4f artifact and run it (the C runtime only)."""

import os
from typing import NamedTuple, Tuple, Union

from . import _dtypes
from ._runtime import _Model, _Session

__all__ = ["Model", "Session", "TensorInfo"]

_DTYPES = None


def _dtype_table():
    global _DTYPES
    if _DTYPES is None:
        _DTYPES = _dtypes.numpy_dtypes()
    return _DTYPES


class TensorInfo(NamedTuple):
    """One input or output of a model: its name, NumPy dtype and shape, where
    a symbolic dim is its name (a str, "?" if it has none) and a static dim
    an int."""

    name: str
    dtype: object
    shape: Tuple[Union[int, str], ...]


def _source(model):
    """A path (str) or a bytes-like object for the runtime."""
    if isinstance(model, (str, os.PathLike)):
        source = os.fspath(model)
        return os.fsdecode(source) if isinstance(source, bytes) else source
    if isinstance(model, (bytes, bytearray, memoryview)):
        return model
    raise TypeError(f"model must be a path or bytes, not {type(model).__name__}")


def _disabled(features):
    features = features or ""
    return features if isinstance(features, str) else ",".join(features)


def _signature(entries, table):
    return tuple(TensorInfo(name, table[code][0], tuple(dims)) for name, code, dims in entries)


class Model:
    """A loaded artifact that several sessions share: the file is mapped and
    verified once, and every ``Session(model, threads=...)`` made from it
    runs on its own arena and thread pool (one session per thread runs in
    parallel). It stays loaded while any of its sessions is open.
    ``model``, ``verify_digests`` and ``disabled_cpu_features`` are as for
    :class:`Session`."""

    def __init__(self, model, *, verify_digests=True, disabled_cpu_features=None):
        self._m = _Model(_source(model), bool(verify_digests), _disabled(disabled_cpu_features))
        table = _dtype_table()
        self.inputs = list(_signature(self._m.input_info(), table))
        self.outputs = list(_signature(self._m.output_info(), table))

    model_name = property(lambda self: self._m.model_name)
    producer = property(lambda self: self._m.producer)
    target_cpu = property(lambda self: self._m.target_cpu)
    variant = property(lambda self: self._m.variant)
    variant_count = property(lambda self: self._m.variant_count)

    def __repr__(self):
        return f"<v4f.Model {self.model_name!r} on {self.target_cpu}>"


class Session:
    """A loaded artifact, ready to run.

    ``model`` is the path of a ``.v4f`` file (mapped read-only), a
    bytes-like object holding one (kept referenced until :meth:`close`), or a
    :class:`Model` shared with other sessions.
    ``threads`` is the number of threads kernels run on, the calling thread
    included (0: one per online core).

    Runs on one session are serialized (the runtime runs one call per session
    at a time); use one session per thread to run in parallel. The GIL is
    released while the kernels run.
    """

    def __init__(self, model, threads=0, *, verify_digests=True, disabled_cpu_features=None):
        from ._errors import InvalidArgumentError

        if not isinstance(threads, int) or isinstance(threads, bool) or not 0 <= threads <= 4096:
            raise InvalidArgumentError(f"Session: threads must be an int from 0 to 4096 (got {threads!r})")
        table = _dtype_table()
        if isinstance(model, Model):
            if not verify_digests or disabled_cpu_features:
                raise InvalidArgumentError("Session: verify_digests and disabled_cpu_features belong to the Model")
            self._s = _Session(model._m, threads, table)
        else:
            try:
                source = _source(model)
            except TypeError as e:
                raise TypeError(f"Session: {e}") from None
            self._s = _Session(source, threads, bool(verify_digests), _disabled(disabled_cpu_features), table)
        self._inputs = _signature(self._s.input_info(), table)
        self._outputs = _signature(self._s.output_info(), table)

    # -- running -----------------------------------------------------------

    def run(self, output_names=None, input_feed=None, *, out=None):
        """Runs the model and returns the outputs named in ``output_names``
        (all of them, in the model's order, when None) as NumPy arrays.

        ``input_feed`` maps every input name to an array. A C-contiguous
        ``numpy.ndarray`` of the input's dtype is read in place (no copy); a
        non-contiguous array, or a list or scalar, is converted once (see
        :attr:`last_input_copies`); an object with ``__dlpack__`` (a CPU torch
        tensor) is read in place through DLPack. The dtype must be the
        input's: v4f does not cast (float64 into a float32 input is an
        error, not a silent rounding).

        ``out`` maps output names to caller-owned arrays (C-contiguous,
        writable, of the output's dtype and shape for these inputs) that the
        kernels write directly; the same arrays are returned.
        """
        return self._s.run(output_names, input_feed, out)

    def bind_feedback(self, output, input):
        """Feeds output ``output`` back as input ``input`` on the following
        runs without copying (a decoder's KV cache). The first run after
        binding (or :meth:`reset_feedback`) reads ``input`` from the feed;
        later runs use the previous output and the input may be left out of
        the feed. The returned value of a fed-back output is a copy."""
        self._s.bind_feedback(output, input)

    def reset_feedback(self):
        """Forgets the fed-back state: the next run reads the inputs again."""
        self._s.reset_feedback()

    def enable_profiling(self, enable=True):
        """Per-dispatch timing of the following runs (see :meth:`profile`)."""
        self._s.set_profiling(bool(enable))

    def profile(self):
        """One dict per dispatch run by the last run: name, kernel,
        dispatch_index, workgroups, start_ns, duration_ns, flops."""
        return self._s.profile()

    # -- metadata ----------------------------------------------------------

    @property
    def inputs(self):
        """The model's inputs, as :class:`TensorInfo`."""
        return list(self._inputs)

    @property
    def outputs(self):
        """The model's outputs, as :class:`TensorInfo`."""
        return list(self._outputs)

    def get_inputs(self):  # ONNX Runtime's spelling
        return self.inputs

    def get_outputs(self):  # ONNX Runtime's spelling
        return self.outputs

    @property
    def model_name(self):
        return self._s.model_name

    @property
    def producer(self):
        return self._s.producer

    @property
    def target_cpu(self):
        """The CPU the loaded plan was compiled for (a multi-ISA artifact
        loads the plan that best fits this machine)."""
        return self._s.target_cpu

    @property
    def variant(self):
        """Index of the loaded plan (0 = the baseline) of :attr:`variant_count`."""
        return self._s.variant

    @property
    def variant_count(self):
        return self._s.variant_count

    @property
    def thread_count(self):
        return self._s.thread_count

    @property
    def peak_memory(self):
        """Bytes of the session's arena for the last planned shapes."""
        return self._s.peak_memory

    @property
    def last_input_copies(self):
        """How many inputs the last run had to copy (0 when every input was a
        C-contiguous array of the right dtype)."""
        return self._s.last_input_copies

    # -- lifetime ----------------------------------------------------------

    def close(self):
        """Releases the session and the model now (waiting for a run in
        another thread to finish); later calls raise SessionClosedError."""
        self._s.close()

    @property
    def closed(self):
        return self._s.closed

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self):
        if self.closed:
            return "<v4f.Session (closed)>"
        sig = ", ".join(f"{t.name}: {t.dtype}{list(t.shape)}" for t in self._inputs)
        return f"<v4f.Session {self.model_name!r} ({sig}) on {self.target_cpu}, {self.thread_count} threads>"
