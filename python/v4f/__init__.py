"""v4f: compile ONNX models ahead of time and run the artifacts.

    import v4f
    v4f.compile("model.onnx", "model.v4f")
    sess = v4f.Session("model.v4f", threads=2)
    (y,) = sess.run(None, {"x": x})

``import v4f`` loads only the C runtime (no LLVM/MLIR); the compiler runs as
the package's ``v4fc`` executable. See docs/python.md.
"""

from ._errors import *  # noqa: F401,F403  (Error and its subclasses)
from . import _errors
from ._runtime import cpu_has_feature, runtime_version  # noqa: F401
from ._session import Model, Session, TensorInfo  # noqa: F401
from ._compiler import CheckReport, UnsupportedNode, check, compile, inspect  # noqa: F401

__version__ = "0.1.0"

__all__ = [
    "Model",
    "Session",
    "TensorInfo",
    "compile",
    "check",
    "inspect",
    "CheckReport",
    "UnsupportedNode",
    "runtime_version",
    "cpu_has_feature",
] + _errors.__all__
