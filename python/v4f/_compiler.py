"""v4f.compile, v4f.check and v4f.inspect: the compiler from Python.

The compiler runs as the package's ``v4fc`` executable in a child process, so
``import v4f`` never loads LLVM or MLIR into the Python process (the runtime
side stays small) and a compiler crash cannot take the interpreter down.
Options are keyword arguments named like the ``v4fc compile`` flags.
"""

import json
import os
import subprocess
import tempfile
from dataclasses import dataclass, field
from typing import Dict, List, Optional

from ._errors import CompileError, InvalidArgumentError
from ._tools import tool_path

__all__ = ["compile", "check", "inspect", "CheckReport", "UnsupportedNode"]

# Text emits return str, the others bytes.
_EMITS = {"artifact": False, "mlir": True, "imported-mlir": True, "llvm": True, "obj": False}


def _dims_text(dims):
    return ",".join(str(int(d)) for d in dims)


def _dim_spec(name, value):
    """dims={"N": 4} -> N=4; {"N": (1, 8)} -> N=1..8; {"N": (None, 8)} -> N=..8."""
    if isinstance(value, (tuple, list, range)):
        if isinstance(value, range):
            lo, hi = value.start, value.stop - 1
        elif len(value) == 2:
            lo, hi = value
        else:
            raise InvalidArgumentError(f"dims[{name!r}]: expected a value or a (min, max) pair, got {value!r}")
        return f"{name}={'' if lo is None else int(lo)}..{int(hi)}"
    return f"{name}={int(value)}"


class _Args:
    """Builds a v4fc command line from keyword options; temporary files
    (models given as bytes, input values given as arrays) live in `tmp`."""

    def __init__(self, tmp):
        self.tmp = tmp
        self.argv = []

    def shape_options(self, input_shapes=None, dims=None, input_values=None):
        for name, shape in (input_shapes or {}).items():
            self.argv += ["--input-shape", f"{name}={_dims_text(shape)}"]
        for name, value in (dims or {}).items():
            self.argv += ["--dim", _dim_spec(name, value)]
        for i, (name, value) in enumerate((input_values or {}).items()):
            if not isinstance(value, (str, os.PathLike)):
                import numpy as np

                path = os.path.join(self.tmp, f"input_value_{i}.npy")
                np.save(path, np.asarray(value))
                value = path
            self.argv += ["--input-value", f"{name}={os.fspath(value)}"]

    def model_path(self, model):
        """A path for `model`: a path, bytes or an onnx.ModelProto."""
        if isinstance(model, (str, os.PathLike)):
            return os.fspath(model)
        if isinstance(model, (bytes, bytearray, memoryview)):
            data = bytes(model)
        elif hasattr(model, "SerializeToString"):  # onnx.ModelProto
            data = model.SerializeToString()
        else:
            raise TypeError(f"model must be a path, bytes or an onnx.ModelProto, not {type(model).__name__}")
        # The artifact's model name is the file's stem: the graph's name for
        # a ModelProto (as an exported file is usually named), else "model".
        stem = "model"
        if hasattr(model, "graph") and getattr(model.graph, "name", ""):
            stem = "".join(c if c.isalnum() or c in "-_." else "_" for c in model.graph.name)[:100] or "model"
        path = os.path.join(self.tmp, stem + ".onnx")
        with open(path, "wb") as f:
            f.write(data)
        return path


def _run_tool(argv, what):
    try:
        proc = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    except OSError as e:
        raise CompileError(f"{what}: cannot run {argv[0]}: {e}") from None
    return proc


def _error_of(proc, what):
    text = proc.stderr.decode(errors="replace").strip()
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith("v4fc: error: ")), None)
    if start is not None:  # the error (it may span several lines): from its first line on
        message = "\n".join(lines[start:])[len("v4fc: error: "):]
    else:
        message = text or f"{what} failed with exit status {proc.returncode}"
    if proc.returncode < 0:
        message = f"{what}: v4fc was killed by signal {-proc.returncode}" + (f": {message}" if text else "")
    return CompileError(message, proc.returncode, text)


def compile(model, output=None, target_cpu="host", *, input_shapes=None, dims=None, input_values=None,
            max_loop_iterations=None, emit="artifact", verbose=False, print_ir_after_all=False):
    """Compiles an ONNX model, as ``v4fc compile``.

    model:      a path, the model's bytes, or an ``onnx.ModelProto`` (a model
                with external data must be given as a path).
    output:     where to write; None returns the result instead (bytes, or
                str for the text emits mlir, imported-mlir and llvm).
    target_cpu: "host", "x86-64-v2|v3|v4", an LLVM CPU name, or a list of
                them for one multi-ISA artifact (``--target-cpu A,B``).
    input_shapes: {input: [d0, d1, ...]}          (``--input-shape``)
    dims:         {dim: value | (min, max)}        (``--dim``)
    input_values: {input: array or .npy path}      (``--input-value``)
    max_loop_iterations, emit, verbose, print_ir_after_all: as the flags
                (verbose notes and the IR print go to this process's stderr).

    Returns ``output`` (as given) when it is set. Raises CompileError with
    v4fc's message (file, node and reason) when the model cannot be compiled;
    no partial output file is left behind.
    """
    if emit not in _EMITS:
        raise InvalidArgumentError(f"compile: emit must be one of {', '.join(_EMITS)} (got {emit!r})")
    if not isinstance(target_cpu, str):
        target_cpu = ",".join(target_cpu)
    with tempfile.TemporaryDirectory(prefix="v4f-compile-") as tmp:
        args = _Args(tmp)
        path = args.model_path(model)
        target = os.fspath(output) if output is not None else os.path.join(tmp, "out")
        argv = [tool_path("v4fc"), "compile", path, "-o", target, "--target-cpu", target_cpu, "--emit", emit]
        args.shape_options(input_shapes, dims, input_values)
        argv += args.argv
        if max_loop_iterations is not None:
            argv += ["--max-loop-iterations", str(int(max_loop_iterations))]
        if verbose:
            argv.append("--verbose")
        if print_ir_after_all:
            argv.append("--print-ir-after-all")
        proc = _run_tool(argv, "compile")
        if verbose or print_ir_after_all:
            import sys

            sys.stderr.write(proc.stderr.decode(errors="replace"))
        if proc.returncode != 0:
            raise _error_of(proc, "compile")
        if output is not None:
            return output
        with open(target, "rb") as f:
            data = f.read()
        return data.decode() if _EMITS[emit] else data


@dataclass
class UnsupportedNode:
    node: str
    op_type: str
    opset: int
    reason: str


@dataclass
class CheckReport:
    """What ``v4fc check`` found: ``ok`` when every node is supported and the
    import and graph passes ran; ``unsupported`` lists the nodes that are
    not (with the reason); ``error`` is the message when something failed."""

    ok: bool
    ir_version: int
    opset: int
    op_counts: Dict[str, int] = field(default_factory=dict)
    unsupported: List[UnsupportedNode] = field(default_factory=list)
    graph_passes: str = "not run"
    error: Optional[str] = None


def check(model, *, input_shapes=None, dims=None, input_values=None):
    """Checks a model without generating code (``v4fc check``): operator
    coverage, then the import and graph passes with the given shape options.
    Returns a :class:`CheckReport`; raises CompileError only when the model
    cannot be read at all."""
    with tempfile.TemporaryDirectory(prefix="v4f-check-") as tmp:
        args = _Args(tmp)
        argv = [tool_path("v4fc"), "check", args.model_path(model), "--json"]
        args.shape_options(input_shapes, dims, input_values)
        proc = _run_tool(argv + args.argv, "check")
    try:
        report = json.loads(proc.stdout)
    except ValueError:
        raise _error_of(proc, "check") from None
    return CheckReport(
        ok=proc.returncode == 0,
        ir_version=report["ir_version"],
        opset=report["opset"],
        op_counts={o["op_type"]: o["nodes"] for o in report["operators"]},
        unsupported=[UnsupportedNode(u["node"], u["op_type"], u["opset"], u["reason"]) for u in report["unsupported"]],
        graph_passes=report["graph_passes"],
        error=report["error"],
    )


def inspect(artifact, plan=False):
    """The manifest of a .v4f artifact (a path or its bytes) as a dict
    (``v4fc inspect --json``): format_version, producer, model, inputs,
    outputs, sections, and plans (one per CPU target, each with its
    executables and counts; with ``plan=True`` also every dispatch)."""
    with tempfile.TemporaryDirectory(prefix="v4f-inspect-") as tmp:
        if isinstance(artifact, (bytes, bytearray, memoryview)):
            path = os.path.join(tmp, "artifact.v4f")
            with open(path, "wb") as f:
                f.write(artifact)
        else:
            path = os.fspath(artifact)
        argv = [tool_path("v4fc"), "inspect", path, "--json"] + (["--plan"] if plan else [])
        proc = _run_tool(argv, "inspect")
    if proc.returncode != 0:
        raise _error_of(proc, "inspect")
    return json.loads(proc.stdout)
