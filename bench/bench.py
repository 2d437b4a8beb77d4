#!/usr/bin/env python3
"""v4f vs ONNX Runtime latency on the same machine, model, inputs and thread count.

  bench/bench.py                              # ResNet-50 (test/e2e/models.py), T = 1,2
  bench/bench.py --model mlp --threads 2      # any generator name from test/e2e/models.py
  bench/bench.py --model path/to/model.onnx --dim N=1 --runs 100

For each thread count T, the model is compiled once with `v4fc compile`, then in R
alternating rounds (v4f, ORT, v4f, ORT, ...):
  * v4f:  `v4f-run model.v4f --input ... --benchmark n --threads T --json round.json`
          (v4f-run does its own warm-up and reports per-run latencies),
  * ORT:  the same inputs on an InferenceSession with intra_op_num_threads=T,
          inter_op_num_threads=1, ORT_ENABLE_ALL, ORT_SEQUENTIAL (warmed up once).
Each side gets >= --runs timed runs in total.  Reported: medians over all timed runs,
and the ratio v4f/ORT computed pair by pair (median of per-round ratios).
Writes bench/results/<model>.md and .json.  Timings are never asserted anywhere.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import math
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Dict, List, Optional, Tuple

import numpy as np
import onnx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "test" / "e2e"))
import models  # noqa: E402

INTERESTING_FLAGS = ["sse4_2", "avx", "avx2", "fma", "f16c", "avx512f", "avx512bw", "avx512vl",
                     "avx512dq", "avx512_vnni", "avx512_bf16", "avx512_fp16", "avx_vnni",
                     "amx_tile", "amx_bf16", "amx_int8"]


# ---------------------------------------------------------------------------
# machine


def cpu_info() -> Dict:
    info = {"model": platform.processor() or "unknown", "flags": [], "logical_cpus": os.cpu_count()}
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return info
    m = re.search(r"^model name\s*:\s*(.+)$", text, re.M)
    if m:
        info["model"] = m.group(1).strip()
    m = re.search(r"^flags\s*:\s*(.+)$", text, re.M)
    if m:
        info["flags"] = m.group(1).split()
    m = re.search(r"^cpu MHz\s*:\s*(.+)$", text, re.M)
    if m:
        info["nominal_mhz"] = float(m.group(1))
    info["simd_flags"] = [f for f in INTERESTING_FLAGS if f in info["flags"]]
    return info


# ---------------------------------------------------------------------------
# model + inputs


def load_model(spec: str, dims: Dict[str, int], workdir: Path) -> Tuple[str, Path, Dict[str, np.ndarray]]:
    gens = models.all_generators()
    if spec in gens:
        case = gens[spec]()
        path = workdir / f"{spec.replace('/', '_')}.onnx"
        path.write_bytes(case.model.SerializeToString())
        return spec.replace("/", "_"), path, case.input_sets[0]
    path = Path(spec)
    if not path.exists():
        raise SystemExit(f"--model {spec!r}: neither a file nor one of {sorted(gens)}")
    model = onnx.load(str(path), load_external_data=False)
    init_names = {i.name for i in model.graph.initializer}
    rng = np.random.default_rng(0)
    inputs = {}
    for vi in model.graph.input:
        if vi.name in init_names:
            continue
        tt = vi.type.tensor_type
        shape = []
        for d in tt.shape.dim:
            if d.HasField("dim_value"):
                shape.append(d.dim_value)
            else:
                shape.append(dims.get(d.dim_param, 1))
        np_dtype = onnx.helper.tensor_dtype_to_np_dtype(tt.elem_type)
        if np.issubdtype(np_dtype, np.integer):
            inputs[vi.name] = rng.integers(0, 10, size=shape).astype(np_dtype)
        else:
            inputs[vi.name] = rng.standard_normal(shape).astype(np_dtype)
    return path.stem, path, inputs


def count_macs(model_path: Path, inputs: Dict[str, np.ndarray]) -> Optional[int]:
    """Multiply-accumulates of Conv/Gemm/MatMul (from ONNX shape inference)."""
    try:
        m = onnx.load(str(model_path))
        for vi in m.graph.input:  # pin symbolic dims to the benchmark inputs
            if vi.name in inputs:
                for d, n in zip(vi.type.tensor_type.shape.dim, inputs[vi.name].shape):
                    d.ClearField("dim_param")
                    d.dim_value = n
        m = onnx.shape_inference.infer_shapes(m)
        shapes = {}
        for vi in list(m.graph.input) + list(m.graph.value_info) + list(m.graph.output):
            dims = [d.dim_value if d.HasField("dim_value") else None for d in vi.type.tensor_type.shape.dim]
            shapes[vi.name] = dims
        for t in m.graph.initializer:
            shapes[t.name] = list(t.dims)
        total = 0
        for n in m.graph.node:
            if n.op_type == "Conv":
                w, y = shapes.get(n.input[1]), shapes.get(n.output[0])
                if not w or not y or None in w or None in y:
                    return None
                total += math.prod(y) * math.prod(w[1:])
            elif n.op_type in ("Gemm", "MatMul"):
                a, y = shapes.get(n.input[0]), shapes.get(n.output[0])
                if not a or not y or None in a or None in y:
                    return None
                k = a[-1]
                if n.op_type == "Gemm" and any(at.name == "transA" and at.i for at in n.attribute):
                    k = a[0]
                total += math.prod(y) * k
        return total
    except Exception:
        return None


# ---------------------------------------------------------------------------
# v4f side


class BenchError(SystemExit):
    """A step of one model's measurement failed (v4fc, v4f-run or the v4f-run JSON).
    A SystemExit so the single-model CLIs (bench.py, compare_builds.py) still stop with
    the message; bench/suite.py catches it and goes on with the next model."""

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message

    def first_line(self) -> str:
        """The first informative line of the tool output (skipping the command echo)."""
        lines = [l.strip() for l in self.message.splitlines() if l.strip()]
        body = lines[1:] if len(lines) > 1 and lines[0].startswith("`") else lines
        return body[0] if body else (lines[0] if lines else "")


def write_inputs(inputs: Dict[str, np.ndarray], workdir: Path, prefix: str = "in") -> Dict[str, Path]:
    """One .npy per input (for v4f-run --input name=file)."""
    files = {}
    for k, v in inputs.items():
        f = workdir / f"{prefix}_{re.sub(r'[^A-Za-z0-9._-]', '_', k)}.npy"
        np.save(f, v)
        files[k] = f
    return files


def compile_model(v4fc: Path, model_path: Path, artifact: Path, flags: Optional[List[str]] = None) -> float:
    """`v4fc compile model -o artifact [flags]`; returns the compile time in seconds."""
    cmd = [str(v4fc), "compile", str(model_path), "-o", str(artifact)] + list(flags or [])
    t0 = time.perf_counter()
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace")
    compile_s = time.perf_counter() - t0
    if p.returncode != 0:
        raise BenchError(f"`{' '.join(cmd)}` failed (rc={p.returncode}):\n{p.stdout[-3000:]}")
    return compile_s


def _unit_scale(key: str) -> float:
    k = key.lower()
    if k.endswith("_ns") or k.endswith("ns"):
        return 1e-6
    if k.endswith("_us") or k.endswith("us"):
        return 1e-3
    if k.endswith("_s") and not k.endswith("_ms"):
        return 1e3
    return 1.0  # milliseconds


def parse_v4f_json(doc) -> Tuple[List[float], Optional[float]]:
    """Returns (per-run latencies in ms, median in ms).  Accepts the schema in
    bench/README.md and tolerates close variants (keys *_ms/_us/_ns)."""
    samples: List[float] = []
    median: Optional[float] = None

    def walk(obj, path=""):
        nonlocal samples, median
        if isinstance(obj, dict):
            for k, v in obj.items():
                kl = k.lower()
                if isinstance(v, list) and v and all(isinstance(x, (int, float)) for x in v) \
                        and re.search(r"sample|latenc|times|runs|iterations", kl) and not samples:
                    samples = [float(x) * _unit_scale(k) for x in v]
                elif isinstance(v, (int, float)) and re.fullmatch(r"(p50|median)(_?(ms|us|ns|s))?", kl) \
                        and median is None:
                    scale = _unit_scale(k) if re.search(r"(ms|us|ns|_s)$", kl) else _unit_scale(path)
                    median = float(v) * scale
                else:
                    walk(v, kl)

    walk(doc)
    if samples:
        median = statistics.median(samples)
    return samples, median


def run_v4f(v4frun: Path, artifact: Path, input_files: Dict[str, Path], n: int, threads: int,
            json_path: Path, warmup: Optional[int] = None) -> Tuple[List[float], float]:
    """One v4f-run --benchmark n; returns (per-run samples in ms, possibly empty; median ms).
    warmup=None leaves v4f-run's own default warm-up."""
    cmd = [str(v4frun), str(artifact)]
    for k, f in input_files.items():
        cmd += ["--input", f"{k}={f}"]
    cmd += ["--benchmark", str(n), "--threads", str(threads), "--json", str(json_path)]
    if warmup is not None:
        cmd += ["--warmup", str(warmup)]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace")
    if p.returncode != 0:
        raise BenchError(f"`{' '.join(cmd)}` failed (rc={p.returncode}):\n{p.stdout[-3000:]}")
    samples, median = parse_v4f_json(json.loads(json_path.read_text()))
    if median is None:
        raise BenchError(f"cannot find per-run latencies or p50 in {json_path}; see bench/README.md")
    return samples, median


# ---------------------------------------------------------------------------
# ORT side


def make_ort_session(model_path: Path, threads: int):
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    t0 = time.perf_counter()
    sess = ort.InferenceSession(str(model_path), so, providers=["CPUExecutionProvider"])
    return sess, (time.perf_counter() - t0) * 1e3


def run_ort(sess, inputs, n: int) -> List[float]:
    out = []
    for _ in range(n):
        t0 = time.perf_counter()
        sess.run(None, inputs)
        out.append((time.perf_counter() - t0) * 1e3)
    return out


# ---------------------------------------------------------------------------
# one model at one thread count


def measure(v4frun: Path, artifact: Path, model_path: Path, inputs: Dict[str, np.ndarray],
            input_files: Dict[str, Path], threads: int, *, runs: int = 50, rounds: int = 5,
            warmup: int = 5, v4f_warmup: Optional[int] = None, macs: Optional[int] = None,
            workdir: Path, tag: str = "v4f") -> Dict:
    """The bench.py method for one (model, thread count): an ORT session (warmed up with
    `warmup` runs), then `rounds` alternating rounds v4f, ORT, each side doing
    ceil(runs / rounds) timed runs.  Returns the result row (medians, ratio = median of
    per-round ratios, all samples, GFLOP/s when `macs` is known).  Raises BenchError
    when v4f-run fails."""
    per_round = max(1, math.ceil(runs / rounds))
    sess, ort_create_ms = make_ort_session(model_path, threads)
    run_ort(sess, inputs, warmup)
    v_all, o_all, ratios, loads = [], [], [], []
    try:
        for r in range(rounds):
            json_path = workdir / f"{tag}_{threads}_{r}.json"
            vs, vmed = run_v4f(v4frun, artifact, input_files, per_round, threads, json_path, warmup=v4f_warmup)
            load_ms = json.loads(json_path.read_text()).get("load_ms")
            if load_ms is not None:
                loads.append(float(load_ms))
            os_ = run_ort(sess, inputs, per_round)
            # ORT's intra-op pool spin-waits after a run; on a 2-core machine a
            # still-spinning worker would share the cores with the next
            # v4f-run process. Let it go idle first (v4f-run exits, so ORT
            # always starts on a quiet machine).
            time.sleep(0.05)
            v_all += vs if vs else [vmed]
            o_all += os_
            ratios.append(vmed / statistics.median(os_))
    finally:
        del sess
    v_med = statistics.median(v_all)
    o_med = statistics.median(o_all)
    row = {
        "threads": threads,
        "v4f_median_ms": v_med,
        "ort_median_ms": o_med,
        "ratio_v4f_over_ort": statistics.median(ratios),
        "ratio_per_round": ratios,
        "v4f_runs": per_round * rounds,
        "ort_runs": len(o_all),
        # v4f-run --json reports only p50 per invocation unless it writes samples_ms:
        # then these are the per-round medians.
        "v4f_samples_ms": v_all,
        "ort_samples_ms": o_all,
        "ort_session_create_ms": ort_create_ms,
        # Load: v4f_model_load_file (read, digests, verification, kernels
        # mapped; median over the rounds' v4f-run processes) vs one ORT
        # InferenceSession creation (graph optimization included).
        "v4f_load_ms": statistics.median(loads) if loads else None,
        "load_ratio_v4f_over_ort": statistics.median(loads) / ort_create_ms if loads and ort_create_ms else None,
    }
    if macs:
        row["v4f_gflops"] = 2 * macs / (v_med * 1e-3) / 1e9
        row["ort_gflops"] = 2 * macs / (o_med * 1e-3) / 1e9
    return row


LOAD_RE = re.compile(r"^load time:\s+([0-9.]+) ms", re.M)


def measure_paired(v4frun: Path, artifact: Path, model_path: Path, inputs: Dict[str, np.ndarray],
                   input_files: Dict[str, Path], threads: int, *, pairs: int = 60, warmup: int = 5,
                   settle_ms: float = 20.0, macs: Optional[int] = None) -> Dict:
    """Paired measurement for one (model, thread count): one `v4f-run --timed-stdin`
    process (warmed up with `warmup` runs) and an ORT session (the same) alternate
    single runs, `pairs` times, in the order v4f, ORT then ORT, v4f; each side's run
    starts `settle_ms` after the other's ended (both pools spin-wait briefly after a
    run). The ratio is the median of the per-pair ratios v4f_i / ORT_i: two runs
    tens of milliseconds apart see the same machine, so a shared host's slow
    periods (seen here: whole seconds at 1.5x) cancel instead of landing on one
    side's round. Raises BenchError when v4f-run fails."""
    sess, ort_create_ms = make_ort_session(model_path, threads)
    run_ort(sess, inputs, warmup)
    cmd = [str(v4frun), str(artifact)]
    for k, f in input_files.items():
        cmd += ["--input", f"{k}={f}"]
    cmd += ["--threads", str(threads), "--warmup", str(warmup), "--timed-stdin"]
    proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace")
    preamble = []
    try:
        for line in proc.stdout:
            if line.strip() == "ready":
                break
            preamble.append(line)
        else:
            proc.wait()
            raise BenchError(f"`{' '.join(cmd)}` failed (rc={proc.returncode}):\n{''.join(preamble)[-3000:]}")

        def v4f_once() -> float:
            proc.stdin.write("\n")
            proc.stdin.flush()
            line = proc.stdout.readline()
            try:
                return float(line)
            except ValueError:
                proc.kill()
                raise BenchError(f"`{' '.join(cmd)}`: expected a time, got {line!r}")

        v, o = [], []
        for i in range(pairs):
            for side in ((0, 1) if i % 2 == 0 else (1, 0)):
                if side == 0:
                    v.append(v4f_once())
                else:
                    o += run_ort(sess, inputs, 1)
                time.sleep(settle_ms / 1e3)
        proc.stdin.close()
        if proc.wait() != 0:
            raise BenchError(f"`{' '.join(cmd)}` exited with rc={proc.returncode}")
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        del sess
    ratios = sorted(a / b for a, b in zip(v, o))
    q = lambda f: ratios[min(len(ratios) - 1, int(f * len(ratios)))]
    m = LOAD_RE.search("".join(preamble))
    v_med, o_med = statistics.median(v), statistics.median(o)
    row = {
        "threads": threads,
        "v4f_median_ms": v_med,
        "ort_median_ms": o_med,
        "ratio_v4f_over_ort": statistics.median(ratios),
        "ratio_quartiles": [q(0.25), q(0.75)],
        "ratio_of_medians": v_med / o_med,
        "v4f_runs": len(v),
        "ort_runs": len(o),
        "v4f_samples_ms": v,
        "ort_samples_ms": o,
        "ort_session_create_ms": ort_create_ms,
        "v4f_load_ms": float(m.group(1)) if m else None,
        "load_ratio_v4f_over_ort": float(m.group(1)) / ort_create_ms if m and ort_create_ms else None,
    }
    if macs:
        row["v4f_gflops"] = 2 * macs / (v_med * 1e-3) / 1e9
        row["ort_gflops"] = 2 * macs / (o_med * 1e-3) / 1e9
    return row


def _output_file_name(name: str) -> str:
    """v4f-run --output-dir's file name for an output (sanitizeFileName in v4f-run.cpp)."""
    s = re.sub(r"[^A-Za-z0-9._-]", "_", name or "output")
    return ("_" + s[1:] if s.startswith(".") else s) + ".npy"


def check_outputs(v4frun: Path, artifact: Path, model_path: Path, inputs: Dict[str, np.ndarray],
                  input_files: Dict[str, Path], threads: int, workdir: Path) -> Dict:
    """One run of each side on the benchmark inputs: max abs difference of the model's
    first output, v4f vs ORT, and that difference relative to max |ORT output|."""
    out_dir = workdir / "check_outputs"
    cmd = [str(v4frun), str(artifact)]
    for k, f in input_files.items():
        cmd += ["--input", f"{k}={f}"]
    cmd += ["--threads", str(threads), "--output-dir", str(out_dir)]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace")
    if p.returncode != 0:
        raise BenchError(f"`{' '.join(cmd)}` failed (rc={p.returncode}):\n{p.stdout[-3000:]}")
    sess, _ = make_ort_session(model_path, threads)
    name = sess.get_outputs()[0].name
    ref = np.asarray(sess.run([name], inputs)[0])
    del sess
    got = np.load(out_dir / _output_file_name(name))
    res = {"output": name, "shape": list(ref.shape), "v4f_shape": list(got.shape)}
    if got.shape != ref.shape:
        res.update(max_abs_diff=None, max_abs_ref=None, rel_err=None, ok=False, error="shape mismatch")
        return res
    diff = np.abs(got.astype(np.float64) - ref.astype(np.float64))
    max_abs = float(np.max(diff)) if diff.size else 0.0
    max_ref = float(np.max(np.abs(ref))) if ref.size else 0.0
    rel = max_abs / max_ref if max_ref > 0 else max_abs
    res.update(max_abs_diff=max_abs, max_abs_ref=max_ref, rel_err=rel, ok=bool(np.isfinite(rel) and rel <= 1e-3))
    return res


def git_commit() -> Optional[str]:
    git = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True).stdout.strip()
    return git or None


# ---------------------------------------------------------------------------


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default="resnet50", help="generator name from test/e2e/models.py or an .onnx path")
    ap.add_argument("--build", default=str(ROOT / "build"))
    ap.add_argument("--threads", default="1,2", help="comma-separated thread counts")
    ap.add_argument("--runs", type=int, default=50, help="timed runs per side (at least)")
    ap.add_argument("--rounds", type=int, default=5, help="alternating v4f/ORT rounds")
    ap.add_argument("--warmup", type=int, default=5, help="ORT warm-up runs (v4f-run warms up itself)")
    ap.add_argument("--dim", action="append", default=[], help="symbolic dim value, e.g. N=1 (default 1)")
    ap.add_argument("--compile-flags", default="", help="extra flags for v4fc compile")
    ap.add_argument("--out-dir", default=str(ROOT / "bench" / "results"))
    args = ap.parse_args()

    build = Path(args.build)
    v4fc, v4frun = build / "bin" / "v4fc", build / "bin" / "v4f-run"
    for tool in (v4fc, v4frun):
        if not tool.exists():
            raise SystemExit(f"{tool} not found: build first (scripts/setup.sh)")
    import onnxruntime as ort

    threads_list = [int(t) for t in args.threads.split(",") if t.strip()]
    dims = {k: int(v) for k, v in (d.split("=", 1) for d in args.dim)}
    per_round = max(1, math.ceil(args.runs / args.rounds))
    cpu = cpu_info()

    with tempfile.TemporaryDirectory(prefix="v4f-bench-") as td:
        work = Path(td)
        name, model_path, inputs = load_model(args.model, dims, work)
        input_files = write_inputs(inputs, work)
        macs = count_macs(model_path, inputs)

        artifact = work / "model.v4f"
        compile_s = compile_model(v4fc, model_path, artifact, args.compile_flags.split())
        print(f"{name}: compiled in {compile_s:.2f}s, artifact {artifact.stat().st_size} bytes"
              + (f", {macs / 1e9:.3f} GMAC/inference" if macs else ""), flush=True)

        rows = []
        for T in threads_list:
            row = measure(v4frun, artifact, model_path, inputs, input_files, T, runs=args.runs,
                          rounds=args.rounds, warmup=args.warmup, macs=macs, workdir=work)
            rows.append(row)
            load = (f"; load v4f {row['v4f_load_ms']:.1f} ms, ORT session {row['ort_session_create_ms']:.1f} ms, "
                    f"v4f/ORT {row['load_ratio_v4f_over_ort']:.3f}" if row.get("v4f_load_ms") else "")
            print(f"  T={T}: v4f {row['v4f_median_ms']:.3f} ms, ORT {row['ort_median_ms']:.3f} ms, "
                  f"v4f/ORT {row['ratio_v4f_over_ort']:.3f}{load}", flush=True)
        artifact_bytes = artifact.stat().st_size

    git = git_commit()
    result = {
        "model": name,
        "model_source": args.model,
        "inputs": {k: {"shape": list(v.shape), "dtype": str(v.dtype)} for k, v in inputs.items()},
        "macs_per_inference": macs,
        "compile_s": compile_s,
        "artifact_bytes": artifact_bytes,
        "date_utc": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "v4f_commit": git or None,
        "onnxruntime": ort.__version__,
        "cpu": {k: cpu.get(k) for k in ("model", "logical_cpus", "nominal_mhz", "simd_flags", "flags")},
        "method": f"{args.rounds} alternating rounds x {per_round} timed runs per side; "
                  "ratio = median of per-round (v4f median / ORT median)",
        "results": rows,
    }

    md = [f"# v4f vs ONNX Runtime: {name}", "",
          f"- CPU: {cpu['model']} ({cpu.get('logical_cpus')} logical CPUs)",
          f"- SIMD flags: {' '.join(cpu.get('simd_flags', [])) or 'n/a'}",
          f"- inputs: " + ", ".join(f"{k} {list(v.shape)} {v.dtype}" for k, v in inputs.items()),
          f"- work: {macs / 1e9:.3f} GMAC/inference" if macs else "- work: n/a",
          f"- onnxruntime {ort.__version__} (ORT_ENABLE_ALL, sequential, inter_op 1); "
          f"v4f commit {git or 'n/a'}; {result['date_utc']}",
          f"- method: {result['method']}", "",
          "| model | threads | v4f median (ms) | ORT median (ms) | v4f / ORT | v4f load (ms) | ORT session (ms) "
          "| load v4f / ORT |",
          "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        load = (f"| {r['v4f_load_ms']:.1f} | {r['ort_session_create_ms']:.1f} | {r['load_ratio_v4f_over_ort']:.3f} |"
                if r.get("v4f_load_ms") else "| n/a | n/a | n/a |")
        md.append(f"| {name} | {r['threads']} | {r['v4f_median_ms']:.3f} | {r['ort_median_ms']:.3f} "
                  f"| {r['ratio_v4f_over_ort']:.3f} {load}")
    text = "\n".join(md) + "\n"
    print()
    print(text)

    out = Path(args.out_dir)
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{name}.md").write_text(text)
    (out / f"{name}.json").write_text(json.dumps(result, indent=2) + "\n")
    print(f"wrote {out / (name + '.md')} and {out / (name + '.json')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
