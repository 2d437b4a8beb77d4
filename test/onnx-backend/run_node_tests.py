#!/usr/bin/env python3
"""Run the ONNX backend node test suite through v4fc and v4f-run.

For every test directory of the pinned onnx package's node suite
(onnx/backend/test/data/node/<test>/):
  1. `v4fc check model.onnx`            -> per-operator support table (for the coverage doc),
  2. `v4fc compile model.onnx -o m.v4f` -> a clean error here is a failure with v4fc's reason,
  3. every test_data_set_*/input_*.pb   -> <graph input name>.npy (onnx.numpy_helper.to_array;
     names are the graph inputs that are not initializers, in order),
  4. `v4f-run m.v4f --input NAME=FILE.npy ... --output-dir OUT --threads 1`,
  5. OUT/<sanitized graph output name>.npy is compared with output_*.pb: dtype and shape
     exactly, values at the per-dtype tolerances in TOLERANCES below.

Where the installed onnx wheel does not ship data/node (onnx >= 1.20 wheels no longer do),
the suite is generated once from the same wheel's test-case definitions
(onnx.backend.test.case.node, i.e. what `python -m onnx.backend.test.cmd_tools generate-data`
writes; numpy's global RNG seeded with 0 so the data is reproducible) into a cache
directory next to this file (.node-data-onnx-<version>/, git-ignored).

Results are checked against expected_failures.txt (`test_name  # category: detail`):
  - a failing test not in the list                  -> FAIL (exit 1)
  - a listed test that passes                        -> XPASS (exit 1 unless --allow-xpass)
  - a listed name that is not in the suite           -> error (exit 2)
  - a crash (v4fc/v4f-run killed by a signal) or a timeout is always printed loudly, and is
    unexpected unless it is listed under category `crash` / `timeout`.

With --symbolic, every test the static suite passes (every test not in
expected_failures.txt) runs again with each graph-input and graph-output dim made a
fresh symbol (`dim_param` s0, s1, ...; no two dims share one), value_info dropped: a
1-D int32/int64 input keeps its length (it may fix an output's rank, e.g. Reshape's
shape). Same data, same tolerances, its own list: expected_failures_symbolic.txt.

Typical use:
  .venv/bin/python test/onnx-backend/run_node_tests.py                  # full suite, -j nproc
  .venv/bin/python test/onnx-backend/run_node_tests.py -k relu -v      # subset (regex, repeatable)
  .venv/bin/python test/onnx-backend/run_node_tests.py -k '^test_conv(_|$)' -k '^test_gemm' -v
  .venv/bin/python test/onnx-backend/run_node_tests.py --op LayerNormalization -v   # by op type
  .venv/bin/python test/onnx-backend/run_node_tests.py --symbolic               # every dim a symbol
  .venv/bin/python test/onnx-backend/run_node_tests.py --update-expected-failures \
      --write-coverage docs/op-coverage.md                              # refresh list + doc
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional, Set, Tuple

import numpy as np
import onnx
from onnx import numpy_helper

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from op_coverage import write_coverage  # noqa: E402
ROOT = HERE.parent.parent

# ---------------------------------------------------------------------------
# Tolerances: ONE table, keyed by numpy dtype name of the expected output.
# An element passes when |got - exp| <= atol + rtol * |exp| (numpy.isclose semantics);
# NaN positions must match exactly, infinities must match exactly (value and sign).
# float32 is stricter in rtol than the onnx backend runner's default (rtol=1e-3, atol=1e-7)
# and looser in atol: 1e-4 relative is ~1000 ulp, ample for a correct kernel, while
# atol=1e-5 keeps near-zero results (e.g. sin(pi)) from failing on ulp-level noise.
# Dtypes not in the table (all integer types, bool, strings) must match exactly.
TOLERANCES: Dict[str, Tuple[float, float]] = {
    # dtype            rtol    atol
    "float64":        (1e-7,   1e-9),
    "float32":        (1e-4,   1e-5),
    "float16":        (2e-3,   1e-3),   # fp16 eps is 9.8e-4
    "bfloat16":       (1.6e-2, 1e-2),   # bf16 eps is 7.8e-3
    "float8_e4m3fn":  (1.3e-1, 1e-2),   # fp8: one ulp at the top of a binade
    "float8_e4m3fnuz": (1.3e-1, 1e-2),
    "float8_e5m2":    (2.5e-1, 1e-2),
    "float8_e5m2fnuz": (2.5e-1, 1e-2),
    "float4_e2m1":    (5e-1,   1e-2),
}

DEFAULT_TIMEOUT_S = 60
TOOL_RETRY_S = 180   # how long to wait for a v4fc/v4f-run binary that cannot be executed
CATEGORIES = ["unsupported-op", "unsupported-dtype", "unsupported-attribute",
              "dynamic-shape", "numerics", "other", "crash", "timeout"]


def sanitize(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]", "_", name)


# ---------------------------------------------------------------------------
# Suite location / generation

def wheel_node_dir() -> Path:
    return Path(onnx.__file__).resolve().parent / "backend" / "test" / "data" / "node"


def generated_node_dir() -> Path:
    return HERE / f".node-data-onnx-{onnx.__version__}"


def _write_value(path: Path, value, vtype: onnx.TypeProto, name: str) -> None:
    if vtype.HasField("map_type"):
        proto = numpy_helper.from_dict(value, name)
    elif vtype.HasField("sequence_type"):
        proto = numpy_helper.from_list(value, name)
    elif vtype.HasField("optional_type"):
        proto = numpy_helper.from_optional(value, name)
    elif isinstance(value, onnx.TensorProto):
        proto = value
    else:
        proto = numpy_helper.from_array(value, name)
    path.write_bytes(proto.SerializeToString())


def generate_node_suite(dest: Path) -> None:
    """Same layout and content as onnx.backend.test.cmd_tools generate-data (node kind)."""
    import warnings
    warnings.filterwarnings("ignore")
    np.random.seed(0)
    from onnx.backend.test.case import node as node_cases
    t0 = time.time()
    cases = node_cases.collect_testcases()
    tmp = Path(tempfile.mkdtemp(prefix=dest.name + ".tmp.", dir=dest.parent))
    for case in cases:
        cdir = tmp / case.name
        cdir.mkdir()
        (cdir / "model.onnx").write_bytes(case.model.SerializeToString())
        for i, (inputs, outputs) in enumerate(case.data_sets):
            ddir = cdir / f"test_data_set_{i}"
            ddir.mkdir()
            for j, v in enumerate(inputs):
                gi = case.model.graph.input[j]
                _write_value(ddir / f"input_{j}.pb", v, gi.type, gi.name)
            for j, v in enumerate(outputs):
                go = case.model.graph.output[j]
                _write_value(ddir / f"output_{j}.pb", v, go.type, go.name)
    (tmp / "GENERATED").write_text(
        f"onnx {onnx.__version__}: {len(cases)} node tests generated from "
        f"onnx.backend.test.case.node with np.random.seed(0)\n")
    if dest.exists():
        shutil.rmtree(dest)
    tmp.rename(dest)
    print(f"generated {len(cases)} node tests into {dest} in {time.time() - t0:.1f}s",
          flush=True)


def locate_suite(args) -> Path:
    if args.suite_dir:
        return Path(args.suite_dir)
    w = wheel_node_dir()
    if w.is_dir() and any(w.iterdir()):
        return w
    g = generated_node_dir()
    if args.regenerate or not (g / "GENERATED").exists():
        print(f"onnx {onnx.__version__} wheel has no {w}; generating the node suite ...",
              flush=True)
        generate_node_suite(g)
    return g


# ---------------------------------------------------------------------------
# Expected failures

def parse_expected(path: Path) -> Dict[str, Tuple[str, str]]:
    """name -> (category, detail)."""
    out: Dict[str, Tuple[str, str]] = {}
    if not path.exists():
        return out
    for lineno, raw in enumerate(path.read_text().splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        name, _, reason = line.partition("#")
        name = name.strip()
        cat, _, detail = reason.strip().partition(":")
        cat = cat.strip() or "other"
        if cat not in CATEGORIES:
            sys.exit(f"{path}:{lineno}: unknown category '{cat}' (use one of {CATEGORIES})")
        if name in out:
            sys.exit(f"{path}:{lineno}: duplicate entry {name}")
        out[name] = (cat, detail.strip())
    return out


def write_expected(path: Path, entries: Dict[str, Tuple[str, str]], cmd: str) -> None:
    lines = [
        "# ONNX backend node tests expected to fail with v4fc/v4f-run.",
        "# Format: test_name  # category: detail",
        f"# Categories: {', '.join(CATEGORIES)}",
        f"# Regenerate from current results: {cmd}",
        "# (hand-edited details are kept while the category stays the same).",
        "# A test that starts passing must be removed (the runner reports it as XPASS).",
        "",
    ]
    width = max((len(n) for n in entries), default=0)
    for name in sorted(entries):
        cat, detail = entries[name]
        lines.append(f"{name:<{width}}  # {cat}: {detail}")
    path.write_text("\n".join(lines) + "\n")


# ---------------------------------------------------------------------------
# Running one test

@dataclass
class Result:
    name: str
    status: str = "pass"          # pass | fail | crash | timeout
    category: str = ""
    reason: str = ""
    stderr: str = ""
    op_status: Dict[str, bool] = field(default_factory=dict)   # from `v4fc check`
    opset: Optional[int] = None
    dtypes: Set[str] = field(default_factory=set)
    seconds: float = 0.0
    compile_seconds: float = 0.0


class TestFailure(Exception):
    def __init__(self, status: str, category: str, reason: str, stderr: str = ""):
        super().__init__(reason)
        self.status, self.category, self.reason, self.stderr = status, category, reason, stderr


def categorize(reason: str) -> str:
    r = reason.lower()
    if ("not supported" in r and ("operator" in r or "domain" in r)) or \
            "no default-domain opset" in r:
        return "unsupported-op"
    if "is not a tensor" in r or "is a sequence" in r or "is a optional" in r or \
            "is a map" in r:
        return "unsupported-dtype"
    if "kernel_shape" in r or re.search(r"\b[a-z_]+=\S+ is not supported", r):
        return "unsupported-attribute"
    if "must be static" in r or "needs static" in r or "need static" in r or "needs a static" in r:
        return "dynamic-shape"
    if "element type" in r or "dtype" in r or "must be float32" in r or \
            re.search(r"\b(int|uint|float|bfloat)\d+\b.*not supported", r) or \
            "sequence" in r or "optional" in r or "map type" in r or "string" in r:
        return "unsupported-dtype"
    if "attribute" in r:
        return "unsupported-attribute"
    if "dynamic" in r or "symbolic" in r or "unknown dim" in r or "static shape" in r or \
            "data-dependent" in r or "must be a constant" in r or "must be constant" in r \
            or "initializer" in r:
        return "dynamic-shape"
    if r.startswith("mismatch") or "dtype mismatch" in r or "shape mismatch" in r:
        return "numerics"
    return "other"


def v4fc_reason(stderr: str, model_path: str) -> str:
    """One line from v4fc's `error:` message, with paths and node names stripped."""
    lines = [ln.rstrip() for ln in stderr.splitlines() if ln.strip()]
    idx = next((i for i, ln in enumerate(lines) if "error:" in ln), None)
    if idx is None:
        return lines[0].strip() if lines else "(no message)"
    msg = lines[idx].split("error:", 1)[1].strip()
    msg = msg.replace(model_path + ": ", "").replace(model_path, "model.onnx")
    if msg.endswith(":") and idx + 1 < len(lines):   # "N node(s) cannot be compiled:" + details
        msg = lines[idx + 1].strip()
    # "node 'Celu#0' (Celu, opset 17): operator is not supported" -> "Celu: operator ..."
    m = re.match(r"node '[^']*' \(([^,]+), opset \d+\): (.*)", msg)
    if m:
        msg = f"{m.group(1)}: {m.group(2)}"
    return msg.replace("#", "_")   # '#' starts the reason in expected_failures.txt


def run_proc(cmd: List[str], deadline: float, what: str) -> subprocess.CompletedProcess:
    left = deadline - time.monotonic()
    if left <= 0:
        raise TestFailure("timeout", "timeout", f"timeout (before {what})")
    try:
        for attempt in range(TOOL_RETRY_S + 1):
            try:
                p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                   text=True, errors="replace",
                                   timeout=max(0.1, deadline - time.monotonic()))
                break
            except OSError as e:
                # The tool cannot be executed at all: typically build/ is being relinked by
                # a concurrent rebuild (missing / not yet executable / text file busy).
                # Wait for it; never turn this into a test failure.
                if attempt == TOOL_RETRY_S:
                    raise TestFailure("error", "other", f"cannot execute {cmd[0]}: {e}")
                time.sleep(1.0)
                deadline += 1.0
    except subprocess.TimeoutExpired as e:
        err = e.stderr.decode(errors="replace") if isinstance(e.stderr, bytes) else (e.stderr or "")
        raise TestFailure("timeout", "timeout", f"timeout ({what})", err)
    if p.returncode < 0:
        sig = -p.returncode
        try:
            import signal
            sname = signal.Signals(sig).name
        except Exception:  # noqa: BLE001
            sname = "?"
        raise TestFailure("crash", "crash", f"crash (signal {sig} {sname}) in {what}",
                          p.stderr + p.stdout)
    return p


def passing_tests() -> Tuple[Path, List[str]]:
    """The node-suite directory and the sorted names of the tests the CPU
    passes (those not in expected_failures.txt), for the suites built on this
    one (test/gpu, scripts/gpu_bundle.py)."""
    class _Args:
        suite_dir = None
        regenerate = False
    suite = locate_suite(_Args)
    expected = parse_expected(HERE / "expected_failures.txt")
    return suite, sorted(d.name for d in suite.iterdir() if d.is_dir() and d.name not in expected)


def op_types(model_path: Path) -> Set[str]:
    """The op types of a model's nodes and of its subgraphs' nodes (If, Loop, Scan)."""
    def walk(graph) -> Set[str]:
        ops = set()
        for n in graph.node:
            ops.add(n.op_type)
            for a in n.attribute:
                for g in ([a.g] if a.HasField("g") else []) + list(a.graphs):
                    ops |= walk(g)
        return ops
    try:
        return walk(onnx.load(str(model_path), load_external_data=False).graph)
    except Exception:  # noqa: BLE001  (an unreadable model is its test's failure, not the filter's)
        return set()


def tensor_dtype_name(elem_type: int) -> str:
    try:
        return np.dtype(onnx.helper.tensor_dtype_to_np_dtype(elem_type)).name
    except Exception:  # noqa: BLE001
        return onnx.TensorProto.DataType.Name(elem_type).lower()


def value_type_name(t: onnx.TypeProto) -> str:
    if t.HasField("tensor_type"):
        return tensor_dtype_name(t.tensor_type.elem_type)
    return t.WhichOneof("value")  # sequence_type / map_type / optional_type / ...


# Storage-only ONNX types (ml_dtypes arrays in numpy) travel through .npy as
# the storage integers v4f-run uses: bfloat16 -> uint16 bits, float8 -> uint8
# bits, [u]int4/[u]int2 -> one (u)int8 per element.
def to_npy_storage(arr: np.ndarray) -> np.ndarray:
    import ml_dtypes
    d = arr.dtype
    if d in (ml_dtypes.int4, ml_dtypes.int2):
        return arr.astype(np.int8)
    if d in (ml_dtypes.uint4, ml_dtypes.uint2):
        return arr.astype(np.uint8)
    if d == ml_dtypes.bfloat16:
        return arr.view(np.uint16)
    if d.name.startswith("float8") or d.name.startswith("float4"):
        return arr.view(np.uint8)
    return arr


def from_npy_storage(got: np.ndarray, like: np.ndarray) -> np.ndarray:
    """Reinterprets v4f-run's storage integers as `like`'s ml_dtypes type."""
    import ml_dtypes
    d = like.dtype
    if d in (ml_dtypes.int4, ml_dtypes.int2, ml_dtypes.uint4, ml_dtypes.uint2):
        return got.astype(d) if got.dtype.kind in "iu" and got.itemsize == 1 else got
    if (d == ml_dtypes.bfloat16 and got.dtype == np.uint16) or \
            ((d.name.startswith("float8") or d.name.startswith("float4")) and got.dtype == np.uint8):
        return got.view(d)
    return got


def compare(name: str, got: np.ndarray, exp: np.ndarray) -> Optional[str]:
    got = from_npy_storage(got, exp)
    if got.dtype != exp.dtype:
        return f"dtype mismatch on '{name}': got {got.dtype}, expected {exp.dtype}"
    if got.shape != exp.shape:
        return f"shape mismatch on '{name}': got {list(got.shape)}, expected {list(exp.shape)}"
    tol = TOLERANCES.get(exp.dtype.name)
    if tol is None:
        if exp.dtype == object:
            ok = np.array([a == b for a, b in zip(got.ravel(), exp.ravel())], dtype=bool)
        else:
            ok = got == exp
        if not np.all(ok):
            n = int(np.size(ok) - np.count_nonzero(ok))
            if exp.dtype.kind in "iu":
                err = int(np.max(np.abs(got.astype(np.int64) - exp.astype(np.int64))))
                return f"mismatch on '{name}': {n} of {exp.size} differ, max_abs_err={err}"
            return f"mismatch on '{name}': {n} of {exp.size} elements differ"
        return None
    rtol, atol = tol
    g = got.astype(np.float64)
    e = exp.astype(np.float64)
    gn, en = np.isnan(g), np.isnan(e)
    if not np.array_equal(gn, en):
        return (f"mismatch on '{name}': NaN positions differ "
                f"({int(gn.sum())} NaN got, {int(en.sum())} expected)")
    ginf, einf = np.isinf(g), np.isinf(e)
    if not np.array_equal(ginf, einf) or not np.array_equal(g[einf], e[einf]):
        return f"mismatch on '{name}': infinities differ"
    fin = ~(en | einf)
    diff = np.abs(g[fin] - e[fin])
    bad = diff > atol + rtol * np.abs(e[fin])
    if np.any(bad):
        maxabs = float(diff.max())
        with np.errstate(divide="ignore", invalid="ignore"):
            rel = diff / np.abs(e[fin])
        maxrel = float(np.nanmax(np.where(np.isfinite(rel), rel, np.nan))) if rel.size else 0.0
        return (f"mismatch on '{name}': max_abs_err={maxabs:.3g} max_rel_err={maxrel:.3g} "
                f"({int(bad.sum())} of {exp.size} outside rtol={rtol:g} atol={atol:g})")
    return None


def symbolic_model(model: onnx.ModelProto) -> onnx.ModelProto:
    """The model with every graph-input and graph-output dim a fresh symbol
    (1-D int32/int64 inputs keep their length) and no value_info."""
    m = onnx.ModelProto()
    m.CopyFrom(model)
    inits = {i.name for i in m.graph.initializer}
    counter = 0
    int_types = (onnx.TensorProto.INT32, onnx.TensorProto.INT64)

    def fresh(v: onnx.ValueInfoProto, keep_1d_int: bool) -> None:
        nonlocal counter
        if not v.type.HasField("tensor_type") or not v.type.tensor_type.HasField("shape"):
            return
        tt = v.type.tensor_type
        if keep_1d_int and len(tt.shape.dim) == 1 and tt.elem_type in int_types:
            return
        for d in tt.shape.dim:
            d.Clear()
            d.dim_param = f"s{counter}"
            counter += 1

    for v in m.graph.input:
        if v.name not in inits:
            fresh(v, keep_1d_int=True)
    for v in m.graph.output:
        fresh(v, keep_1d_int=False)
    del m.graph.value_info[:]
    return m


def run_test(tdir: Path, v4fc: str, v4frun: str, timeout: float, tmp_root: Path,
             keep: bool, symbolic: bool = False) -> Result:
    res = Result(tdir.name)
    t0 = time.monotonic()
    deadline = t0 + timeout
    work = Path(tempfile.mkdtemp(prefix=tdir.name + ".", dir=tmp_root))
    try:
        _run_test(res, tdir, work, v4fc, v4frun, deadline, symbolic)
    except TestFailure as f:
        res.status, res.category, res.reason, res.stderr = f.status, f.category, f.reason, f.stderr
    except Exception as e:  # noqa: BLE001  (harness problem on this test: report, don't die)
        res.status, res.category = "error", "other"
        res.reason = f"runner error: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
    finally:
        if not keep:
            shutil.rmtree(work, ignore_errors=True)
    res.seconds = time.monotonic() - t0
    return res


def _run_test(res: Result, tdir: Path, work: Path, v4fc: str, v4frun: str,
              deadline: float, symbolic: bool = False) -> None:
    model_path = tdir / "model.onnx"
    try:
        model = onnx.load(str(model_path))
    except Exception as e:  # noqa: BLE001
        raise TestFailure("fail", "other", f"cannot load model.onnx: {e}".splitlines()[0])
    inits = {i.name for i in model.graph.initializer}
    ginputs = [i for i in model.graph.input if i.name not in inits]
    goutputs = list(model.graph.output)
    for v in list(ginputs) + goutputs:
        res.dtypes.add(value_type_name(v.type))
    res.opset = next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), None)

    # 1. coverage table
    p = run_proc([v4fc, "check", str(model_path)], deadline, "v4fc check")
    for ln in p.stdout.splitlines():
        m = re.match(r"^(\S+)\s+\d+\s+(supported|UNSUPPORTED)\b", ln)
        if m:
            res.op_status[m.group(1)] = m.group(2) == "supported"
        m = re.match(r"^model: .*\(ir_version \d+, opset (\d+)\)", ln)
        if m:
            res.opset = int(m.group(1))

    # 2. compile (the symbolic form of the model with --symbolic)
    if symbolic:
        model_path = work / "model.symbolic.onnx"
        onnx.save(symbolic_model(model), str(model_path))
    artifact = work / "model.v4f"
    t = time.monotonic()
    p = run_proc([v4fc, "compile", str(model_path), "-o", str(artifact)], deadline, "v4fc compile")
    res.compile_seconds = time.monotonic() - t
    if p.returncode != 0:
        reason = v4fc_reason(p.stderr + p.stdout, str(model_path))
        raise TestFailure("fail", categorize(reason), reason, p.stderr)

    # 3-5. every data set
    dsets = sorted(tdir.glob("test_data_set_*"), key=lambda d: int(d.name.rsplit("_", 1)[1]))
    if not dsets:
        raise TestFailure("fail", "other", "test has no test_data_set_* directory")
    for ds in dsets:
        in_files = sorted(ds.glob("input_*.pb"), key=lambda f: int(f.stem.split("_")[1]))
        out_files = sorted(ds.glob("output_*.pb"), key=lambda f: int(f.stem.split("_")[1]))
        if len(in_files) != len(ginputs):
            raise TestFailure("fail", "other",
                              f"{ds.name} has {len(in_files)} inputs, model has {len(ginputs)} "
                              "(optional trailing inputs would get random data)")
        cmd = [v4frun, str(artifact)]
        for gi, f in zip(ginputs, in_files):
            if not gi.type.HasField("tensor_type"):
                raise TestFailure("fail", "unsupported-dtype",
                                  f"input '{gi.name}' is a {value_type_name(gi.type)}")
            arr = to_npy_storage(numpy_helper.to_array(onnx.load_tensor(str(f))))
            npy = work / f"in_{ds.name}_{sanitize(gi.name)}.npy"
            np.save(npy, arr, allow_pickle=(arr.dtype == object))
            cmd += ["--input", f"{gi.name}={npy}"]
        outdir = work / f"out_{ds.name}"
        outdir.mkdir()
        cmd += ["--output-dir", str(outdir), "--threads", "1", "--print", "0"]
        p = run_proc(cmd, deadline, "v4f-run")
        if p.returncode != 0:
            lines = [ln for ln in (p.stderr + p.stdout).splitlines() if ln.strip()]
            first = next((ln for ln in lines if "error" in ln.lower()), lines[0] if lines else "")
            raise TestFailure("fail", "other", f"v4f-run exit {p.returncode}: {first.strip()}",
                              p.stderr)
        for go, f in zip(goutputs, out_files):
            if not go.type.HasField("tensor_type"):
                raise TestFailure("fail", "unsupported-dtype",
                                  f"output '{go.name}' is a {value_type_name(go.type)}")
            exp = numpy_helper.to_array(onnx.load_tensor(str(f)))
            gpath = outdir / (sanitize(go.name) + ".npy")
            if not gpath.exists():
                raise TestFailure("fail", "other", f"v4f-run wrote no {gpath.name}")
            got = np.load(gpath, allow_pickle=False)
            err = compare(go.name, got, exp)
            if err:
                raise TestFailure("fail", "numerics", f"{ds.name}: {err}")


# ---------------------------------------------------------------------------

def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=str(ROOT / "build"),
                    help="build directory with bin/v4fc and bin/v4f-run (default: %(default)s)")
    ap.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1,
                    help="tests run in parallel (default: nproc = %(default)s)")
    ap.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT_S,
                    help="per-test time limit in seconds (default: %(default)s)")
    ap.add_argument("-k", "--filter", action="append", default=[],
                    help="only run tests whose name matches this regex (repeatable)")
    ap.add_argument("--op", action="append", default=[], metavar="OP_TYPE",
                    help="only run tests whose model has a node (or a subgraph node) of this ONNX op "
                    "type, e.g. --op Conv also runs the *_expanded tests built of it (repeatable)")
    ap.add_argument("--suite-dir", help="node test directory (default: the onnx wheel's "
                    "data/node, else a suite generated from the wheel's test cases)")
    ap.add_argument("--regenerate", action="store_true",
                    help="regenerate the cached node suite")
    ap.add_argument("--prepare", action="store_true",
                    help="only locate (generate if needed) the suite and exit: scripts/test.sh does this "
                    "before the phases that read it run side by side")
    ap.add_argument("--symbolic", action="store_true",
                    help="run the statically passing tests with every input/output dim a fresh "
                         "symbol, against expected_failures_symbolic.txt")
    ap.add_argument("--expected-failures", default=None,
                    help="expected-failure list (default: expected_failures.txt, "
                         "or expected_failures_symbolic.txt with --symbolic)")
    ap.add_argument("--update-expected-failures", action="store_true",
                    help="rewrite the expected-failure list from this run's results")
    ap.add_argument("--allow-xpass", action="store_true",
                    help="listed tests that pass do not make the run fail")
    ap.add_argument("--write-coverage", metavar="FILE.md",
                    help="write the per-operator coverage doc (full runs only)")
    ap.add_argument("--keep-temp", action="store_true", help="keep per-test work dirs")
    ap.add_argument("-v", "--verbose", action="store_true", help="print every test's result")
    args = ap.parse_args()

    if args.prepare:
        suite = locate_suite(args)
        print(f"node suite: {sum(1 for d in suite.iterdir() if d.is_dir())} tests in {suite}")
        return 0
    v4fc = str(Path(args.build) / "bin" / "v4fc")
    v4frun = str(Path(args.build) / "bin" / "v4f-run")
    for b in (v4fc, v4frun):
        if not os.access(b, os.X_OK):
            print(f"error: {b} not found or not executable", file=sys.stderr)
            return 2

    t_start = time.monotonic()
    suite = locate_suite(args)
    all_tests = {d.name: d for d in sorted(suite.iterdir())
                 if d.is_dir() and d.name.startswith("test_")}
    if not all_tests:
        print(f"error: no tests in {suite}", file=sys.stderr)
        return 2
    exp_path = Path(args.expected_failures or
                    HERE / ("expected_failures_symbolic.txt" if args.symbolic else "expected_failures.txt"))
    if args.symbolic:
        # The symbolic suite is the statically passing tests.
        static_fail = parse_expected(HERE / "expected_failures.txt")
        all_tests = {n: d for n, d in all_tests.items() if n not in static_fail}
        if args.write_coverage:
            print("error: --write-coverage describes the static suite (no --symbolic)", file=sys.stderr)
            return 2
    expected = parse_expected(exp_path)
    unknown = sorted(n for n in expected if n not in all_tests)
    if unknown and not args.update_expected_failures:
        print(f"error: {len(unknown)} name(s) in {exp_path} are not tests of the suite "
              f"({suite}):", file=sys.stderr)
        for n in unknown:
            print(f"  {n}", file=sys.stderr)
        return 2

    selected = {n: d for n, d in all_tests.items()
                if not args.filter or any(re.search(f, n) for f in args.filter)}
    if args.op:
        selected = {n: d for n, d in selected.items() if op_types(d / "model.onnx") & set(args.op)}
    full_run = len(selected) == len(all_tests)
    if args.write_coverage and not full_run:
        print("error: --write-coverage needs a full run (no -k, no --op)", file=sys.stderr)
        return 2
    print(f"running {len(selected)} of {len(all_tests)} node tests from {suite} "
          f"with -j {args.jobs}, timeout {args.timeout:g}s", flush=True)

    tmp_root = Path(tempfile.mkdtemp(prefix="v4f-node-tests."))
    results: Dict[str, Result] = {}
    t_tests = time.monotonic()
    try:
        with cf.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
            futs = {pool.submit(run_test, d, v4fc, v4frun, args.timeout, tmp_root,
                                args.keep_temp, args.symbolic): n for n, d in selected.items()}
            done = 0
            for fut in cf.as_completed(futs):
                r = fut.result()
                results[r.name] = r
                done += 1
                if args.verbose:
                    tag = "PASS" if r.status == "pass" else r.status.upper()
                    print(f"[{done}/{len(futs)}] {tag:7} {r.name} ({r.seconds:.2f}s)"
                          + (f": {r.reason}" if r.reason else ""), flush=True)
                elif done % 200 == 0:
                    print(f"  {done}/{len(futs)} ...", flush=True)
    finally:
        if not args.keep_temp:
            shutil.rmtree(tmp_root, ignore_errors=True)
        else:
            print(f"work dirs kept in {tmp_root}")
    wall_tests = time.monotonic() - t_tests

    errors = sorted((r for r in results.values() if r.status == "error"), key=lambda r: r.name)
    if args.update_expected_failures and errors:
        print(f"\n{len(errors)} runner error(s) (not test results); expected failures NOT "
              "updated:", file=sys.stderr)
        for r in errors[:20]:
            print(f"  {r.name}: {r.reason}", file=sys.stderr)
        return 2
    if args.update_expected_failures:
        new: Dict[str, Tuple[str, str]] = {}
        for name, (cat, detail) in expected.items():   # keep entries of tests not run
            if name in all_tests and name not in results:
                new[name] = (cat, detail)
        for r in results.values():
            if r.status == "pass":
                continue
            old = expected.get(r.name)
            new[r.name] = old if old and old[0] == r.category else (r.category, r.reason)
        cmd = ("python test/onnx-backend/run_node_tests.py --symbolic --update-expected-failures"
               if args.symbolic else
               "python test/onnx-backend/run_node_tests.py --update-expected-failures "
               "--write-coverage docs/op-coverage.md")
        write_expected(exp_path, new, cmd)
        print(f"wrote {exp_path} ({len(new)} entries)")
        expected = new

    # ---- classify
    passed, xfail, xpass, unexpected, crashes, timeouts, changed = [], [], [], [], [], [], []
    for name in sorted(results):
        r = results[name]
        listed = expected.get(name)
        if r.status == "crash":
            crashes.append(r)
        if r.status == "timeout":
            timeouts.append(r)
        if r.status == "pass":
            (xpass if listed else passed).append(r)
        elif listed is None or r.status == "error":
            unexpected.append(r)   # runner errors are never expected
        elif r.status in ("crash", "timeout") and listed[0] != r.status:
            unexpected.append(r)   # a new crash/timeout is never hidden by another category
        else:
            xfail.append(r)
            if listed[0] != r.category:
                changed.append((r, listed))

    # ---- report
    def show(title: str, rs, with_stderr: bool = False) -> None:
        if not rs:
            return
        print(f"\n{title} ({len(rs)}):")
        for r in rs:
            print(f"  {r.name}: [{r.category}] {r.reason}")
            if with_stderr and r.stderr.strip():
                for ln in r.stderr.strip().splitlines()[-15:]:
                    print(f"      | {ln}")

    show("UNEXPECTED FAILURES (not in expected_failures.txt)", unexpected)
    if xpass:
        print(f"\nXPASS — remove from the list ({len(xpass)}):")
        for r in xpass:
            print(f"  {r.name}  (listed as: {expected[r.name][0]}: {expected[r.name][1]})")
    if changed and args.verbose:
        print(f"\nexpected failures whose category changed ({len(changed)}):")
        for r, (cat, _) in changed:
            print(f"  {r.name}: listed {cat}, now [{r.category}] {r.reason}")
    if crashes or timeouts:
        bar = "!" * 78
        print(f"\n{bar}\n!!! {len(crashes)} CRASH(ES) and {len(timeouts)} TIMEOUT(S) — "
              f"compiler/runtime bugs, listed or not\n{bar}")
        show("CRASH", crashes, with_stderr=True)
        show("TIMEOUT", timeouts, with_stderr=True)
        print(bar)

    fail_cats = Counter(r.category for r in results.values() if r.status != "pass")
    compile_times = sorted(r.compile_seconds for r in results.values()
                           if r.compile_seconds and r.status == "pass")
    wall = time.monotonic() - t_start
    n_unexp = len(unexpected) + (0 if args.allow_xpass else len(xpass))
    summary = [
        f"tests run:            {len(results)} of {len(all_tests)}",
        f"passed:               {len(passed)}",
        f"failed (unexpected):  {len(unexpected)}",
        f"expected failures:    {len(xfail)}",
        f"xpass:                {len(xpass)}",
        f"crash:                {len(crashes)}",
        f"timeout:              {len(timeouts)}",
        *([f"runner errors:        {len(errors)}  (harness, not v4f: see above)"] if errors else []),
        "failures by category: " + (", ".join(f"{c} {fail_cats[c]}" for c in CATEGORIES
                                              if fail_cats.get(c)) or "none"),
    ]
    if compile_times:
        summary.append(f"v4fc compile (passing tests): median "
                       f"{compile_times[len(compile_times) // 2] * 1000:.0f} ms, max "
                       f"{compile_times[-1] * 1000:.0f} ms")
    print("\n==== onnx node tests: summary ====")
    for ln in summary:
        print(ln)
    print(f"wall time:            {wall:.1f}s (tests {wall_tests:.1f}s, -j {args.jobs})")

    if args.write_coverage:
        cmd = ("python test/onnx-backend/run_node_tests.py --update-expected-failures "
               "--write-coverage docs/op-coverage.md")
        write_coverage(Path(args.write_coverage), results, all_tests, expected, wall_tests,
                       args.jobs, summary, cmd, CATEGORIES)
        print(f"wrote {args.write_coverage}")

    if n_unexp:
        print(f"\nFAILED: {len(unexpected)} unexpected failure(s)"
              + (f", {len(xpass)} xpass" if xpass and not args.allow_xpass else ""))
        return 1
    print("\nOK: nothing unexpected")
    return 0


if __name__ == "__main__":
    sys.exit(main())
