#!/usr/bin/env python3
"""End-to-end numeric tests: ONNX model -> v4fc -> v4f-run, compared with ONNX Runtime.

For each test model (generated at test time by test/e2e/models.py):
  1. write model.onnx and random inputs (<input name>.npy) into a temp dir,
  2. run ONNX Runtime (CPUExecutionProvider) as the reference,
  3. `<build>/bin/v4fc compile model.onnx -o model.v4f`,
  4. `<build>/bin/v4f-run model.v4f --input <name>=<file.npy> ... --output-dir <dir> --threads 2`,
  5. load `<dir>/<sanitized output name>.npy` and compare with the reference at the
     tolerances in TOLERANCES below.

Also checks that compiling ResNet-50 twice gives byte-identical artifacts and prints
its compile time and artifact size.

  run_e2e.py --build build                 # everything
  run_e2e.py --only mlp --only opset_variants
  run_e2e.py -k winograd -k 'im2col_rows$'  # names matching a regex (here with their ISA variants)
  run_e2e.py --op Conv --op ConvTranspose  # the models with a node of one of these ONNX op types
  run_e2e.py --list [-k ...] [--op ...]    # what would run
  run_e2e.py --reference-only              # only run ORT: validates the generators
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import filecmp
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Optional, Tuple

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import models  # noqa: E402

# ---------------------------------------------------------------------------
# Tolerances, one row per test (prefix match on the test name; first match wins).
# All models are FP32; a result passes when |v4f - ort| <= atol + rtol * |ort|
# element-wise (numpy.allclose semantics) and shapes match exactly.
TOLERANCES: List[Tuple[str, float, float]] = [
    # name prefix          rtol   atol
    ("mlp",                1e-4,  1e-4),
    ("cnn",                1e-4,  1e-4),
    ("transformer",        1e-4,  1e-4),
    ("resnet50",           1e-4,  1e-4),  # logits are O(1) by construction (models.py)
    ("symbolic_batch",     1e-4,  1e-4),
    ("negative_batch",     1e-4,  1e-4),
    ("pinned_",            1e-4,  1e-4),
    ("bounded_batch",      1e-4,  1e-4),
    ("dynamic_hw",         1e-4,  1e-4),
    ("attention_dynamic",  1e-4,  1e-4),
    ("dynamic_broadcast_runs", 1e-5, 1e-5),
    ("reduce_runtime_axes", 1e-5, 1e-5),
    ("variadic_wide",      1e-4,  1e-4),
    ("slice_extreme",      0,     0),
    ("slice_runtime",      0,     0),
    ("same_pad_runtime",   1e-4,  1e-4),
    ("pool3d_runtime",     1e-5,  1e-5),
    ("window_conv",        1e-4,  1e-4),
    ("tree_ensemble",      1e-5,  1e-5),
    ("dynamic_quantize_lstm", 1e-5, 1e-5),
    ("ml_preprocessing",   1e-6,  1e-6),
    ("tree_ensemble_legacy", 1e-5, 1e-5),
    ("contrib_transformer_ops", 1e-4, 1e-5),
    ("matmul_nbits",       1e-4,  1e-5),
    ("ms_rotary",          1e-5,  1e-5),
    ("group_query_attention", 1e-4, 1e-5),
    ("range_float",        0,     0),
    ("batchnorm_opset7",   1e-5,  1e-5),
    ("stft_runtime",       1e-4,  1e-4),
    ("transposes",         0,     0),     # data movement: exact
    ("data_dependent",     1e-5,  1e-5),
    ("if_runtime_branches", 1e-5, 1e-5),
    ("recurrent_dynamic", 1e-4, 1e-5),
    ("loop_runtime",      1e-5,  1e-5),
    ("scan_runtime",      1e-5,  1e-5),
    ("loop_while",        1e-5,  1e-5),
    ("broadcast_runtime", 1e-5,  1e-5),
    ("loop_in_if",        1e-5,  1e-5),
    ("if_rank_",          1e-6,  1e-6),
    ("squeeze_runtime_dims", 1e-6, 1e-6),
    ("loop_counter_slice", 1e-6, 1e-6),
    ("packed_matmuls",    1e-5,  1e-5),   # K = 37 and 45 sums of O(1) terms
    ("gemm_edges",        1e-4,  1e-4),   # K = 1000 / 520 sums of O(0.05) terms, then a K = 40 product
    ("im2col_rows",       1e-5,  1e-5),   # K <= 75 sums of O(1) terms
    ("conv_packed_b",     1e-4,  1e-4),   # K = 288 / 800 sums of O(1) terms
    ("channel_lanes_convs", 1e-4, 1e-4),  # K up to 1024 sums of O(1) terms, blocked differently from ORT
    ("winograd_convs",    1e-4,  1e-4),
    ("maxpool_3x3s2",     0.0,   0.0),    # a max selects an input: exact
    ("channel_scaled_convs", 1e-5, 1e-5), # K <= 96 sums of O(1) terms; (W s) x rounds differently from W (s x)   # K up to 1152 sums, each of 16 transformed products (F(2x2, 3x3))
    ("pointwise_rows",    1e-4,  1e-4),   # K up to 300 sums of O(1) terms
    ("channels_last_followers", 1e-5, 1e-5),  # K <= 384 sums of O(1) terms (pools, pads, resizes exact or few taps)
    ("channels_last",     1e-5,  1e-5),   # K <= 432 sums of O(1) terms
    ("softmax_rows",      1e-5,  1e-6),   # probabilities in [0, 1]
    ("fused_attention",   1e-4,  1e-5),
    ("sdpa_attention",    1e-4,  1e-5),
    ("pointwise_depthwise", 1e-5, 1e-5),  # K = 8 sums, then 9 / 25 taps, of O(1) terms   # K = 24 / 40 / 16 sums of O(1) logits (exp amplifies), weighted sums of O(1) values
    ("small_input_convs", 1e-5, 1e-5),   # K <= 147 sums of O(1) terms
    ("depthwise_pointwise", 1e-4, 1e-5),  # 9 / 25 taps, then K <= 512 sums of O(1) terms
    ("scaled_masked_softmax", 1e-5, 1e-6),  # probabilities; x * (1/c) vs x / c rounds differently
    ("layer_norm_rows",   1e-4,  1e-5),   # normalized values of O(1)
    ("gelu_epilogue",     1e-5,  1e-5),   # K <= 37 sums of O(1) terms, then GELU
    ("packed_convs",      1e-5,  1e-5),
    ("depthwise_convs",   1e-5,  1e-5),
    ("depthwise_static",  1e-5,  1e-5),
    ("resize_runtime",     1e-5,  1e-5),
    ("opset_variants/",    1e-4,  1e-4),
]

COMPILE_TIMEOUT_S = 1200
RUN_TIMEOUT_S = 600
V4F_RUN_THREADS = 2


def tolerance_for(name: str) -> Tuple[float, float]:
    for prefix, rtol, atol in TOLERANCES:
        if name == prefix or name.startswith(prefix):
            return rtol, atol
    raise KeyError(f"no tolerance row for test {name!r}")


def sanitize(name: str) -> str:
    """Output file name used by v4f-run: chars other than [A-Za-z0-9._-] become '_'."""
    return re.sub(r"[^A-Za-z0-9._-]", "_", name)


@dataclass
class Result:
    name: str
    ok: bool
    detail: str


_print_lock = threading.Lock()


def report(r: Result) -> None:
    with _print_lock:
        if r.ok:
            print(f"PASS {r.name} ({r.detail})", flush=True)
        else:
            print(f"FAIL {r.name}: {r.detail}", flush=True)


# ---------------------------------------------------------------------------
# reference


def run_ort(model_path: Path, inputs: Dict[str, np.ndarray]) -> Dict[str, np.ndarray]:
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    # The reference should be the literal graph semantics: no fusions.
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    sess = ort.InferenceSession(str(model_path), so, providers=["CPUExecutionProvider"])
    names = [o.name for o in sess.get_outputs()]
    outs = sess.run(names, inputs)
    return dict(zip(names, outs))


def compare(actual: np.ndarray, ref: np.ndarray, rtol: float, atol: float) -> Tuple[bool, str, float, float]:
    if actual.shape != ref.shape:
        return False, f"shape {list(actual.shape)} != expected {list(ref.shape)}", np.inf, np.inf
    if actual.dtype != ref.dtype:
        return False, f"dtype {actual.dtype} != expected {ref.dtype}", np.inf, np.inf
    a = actual.astype(np.float64)
    b = ref.astype(np.float64)
    if a.size == 0:
        return True, "", 0.0, 0.0
    diff = np.abs(a - b)
    max_abs = float(np.nanmax(diff)) if np.isfinite(diff).any() else float("inf")
    max_rel = float(np.nanmax(diff / np.maximum(np.abs(b), 1e-12)))
    ok = bool(np.allclose(a, b, rtol=rtol, atol=atol, equal_nan=False))
    if not np.isfinite(a).all():
        ok = False
    return ok, "", max_abs, max_rel


# ---------------------------------------------------------------------------
# one test


class Runner:
    def __init__(self, args, workdir: Path):
        self.args = args
        self.workdir = workdir
        build = Path(args.build)
        self.v4fc = Path(args.v4fc) if args.v4fc else build / "bin" / "v4fc"
        self.v4frun = Path(args.v4f_run) if args.v4f_run else build / "bin" / "v4f-run"
        self.ops_seen: set = set()

    def _exec(self, cmd: List[str], timeout: int) -> Tuple[int, str, float]:
        t0 = time.perf_counter()
        try:
            p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               text=True, errors="replace", timeout=timeout)
            rc, out = p.returncode, p.stdout
        except subprocess.TimeoutExpired as e:
            rc, out = -1, f"timed out after {timeout}s: {e.output or ''}"
        return rc, out, time.perf_counter() - t0

    @staticmethod
    def _tail(text: str, n: int = 15) -> str:
        lines = [l for l in text.strip().splitlines() if l.strip()]
        return ("\n    | " + "\n    | ".join(lines[-n:])) if lines else " (no output)"

    def compile(self, model: Path, out: Path, flags: Optional[List[str]] = None) -> Tuple[Optional[str], float]:
        cmd = [str(self.v4fc), "compile", str(model), "-o", str(out)] + list(flags or [])
        rc, log, dt = self._exec(cmd, COMPILE_TIMEOUT_S)
        if rc != 0 or not out.exists():
            return f"`{' '.join(cmd)}` failed (rc={rc}){self._tail(log)}", dt
        return None, dt

    def run_one(self, name: str) -> List[Result]:
        gen = models.all_generators()[name]
        tdir = self.workdir / sanitize(name.replace("/", "__"))
        tdir.mkdir(parents=True, exist_ok=True)
        try:
            case = gen()
        except Exception as e:  # generator bug
            return [Result(name, False, f"generator raised {type(e).__name__}: {e}")]
        with _print_lock:
            self.ops_seen |= models.ops_used(case.model)
        model_path = tdir / "model.onnx"
        model_path.write_bytes(case.model.SerializeToString())
        out_names = [o.name for o in case.model.graph.output]

        # inputs + reference
        refs = []
        input_dirs = []
        for i, inputs in enumerate(case.input_sets):
            idir = tdir / f"inputs{i}"
            idir.mkdir(exist_ok=True)
            for k, v in inputs.items():
                np.save(idir / f"{sanitize(k)}.npy", v)
            input_dirs.append(idir)
            try:
                refs.append(run_ort(model_path, inputs))
            except Exception as e:
                return [Result(name, False, f"ONNX Runtime failed on the generated model: {e}")]

        if self.args.reference_only:
            parts = []
            for i, ref in enumerate(refs):
                for k in out_names:
                    r = ref[k]
                    if not np.isfinite(r).all():
                        return [Result(name, False, f"reference output {k!r} is not finite")]
                    parts.append(f"{k}{list(r.shape)} max|y|={np.abs(r).max():.3g}")
            ops = ",".join(sorted(models.ops_used(case.model)))
            return [Result(name, True, "ORT ok; " + "; ".join(parts) + f"; ops={ops}")]

        for tool in (self.v4fc, self.v4frun):
            if not tool.exists():
                return [Result(name, False, f"{tool} not found (build first: scripts/setup.sh)")]

        results: List[Result] = []
        artifact = tdir / "model.v4f"
        err, compile_s = self.compile(model_path, artifact, case.compile_flags)
        if err:
            return [Result(name, False, err)]

        if name == "resnet50":
            size = artifact.stat().st_size
            artifact2 = tdir / "model.again.v4f"
            err2, compile2_s = self.compile(model_path, artifact2)
            if err2:
                results.append(Result("resnet50/deterministic", False, "second compile: " + err2))
            elif not filecmp.cmp(artifact, artifact2, shallow=False):
                results.append(Result("resnet50/deterministic", False,
                                      "compiling the same model twice gave different artifacts "
                                      f"({artifact} vs {artifact2})"))
            else:
                results.append(Result("resnet50/deterministic", True,
                                      f"byte-identical, {size} bytes"))
            with _print_lock:
                print(f"INFO resnet50: compile time {compile_s:.2f}s (2nd: {compile2_s:.2f}s), "
                      f"artifact size {size} bytes ({size / 2**20:.1f} MiB)", flush=True)

        rtol, atol = tolerance_for(name)
        failures, stats = [], []
        for i, (inputs, ref) in enumerate(zip(case.input_sets, refs)):
            odir = tdir / f"outputs{i}"
            if odir.exists():
                shutil.rmtree(odir)
            cmd = [str(self.v4frun), str(artifact)]
            for k in inputs:
                cmd += ["--input", f"{k}={input_dirs[i] / (sanitize(k) + '.npy')}"]
            cmd += ["--output-dir", str(odir), "--threads", str(V4F_RUN_THREADS)]
            rc, log, _ = self._exec(cmd, RUN_TIMEOUT_S)
            tag = f"[set {i}: " + ",".join(f"{k}{list(v.shape)}" for k, v in inputs.items()) + "]"
            if rc != 0:
                failures.append(f"{tag} `{' '.join(cmd)}` failed (rc={rc}){self._tail(log)}")
                continue
            for k in out_names:
                f = odir / f"{sanitize(k)}.npy"
                if not f.exists():
                    failures.append(f"{tag} output {k!r}: {f} not written")
                    continue
                try:
                    actual = np.load(f, allow_pickle=False)
                except Exception as e:
                    failures.append(f"{tag} output {k!r}: cannot load {f}: {e}")
                    continue
                ok, why, max_abs, max_rel = compare(actual, ref[k], rtol, atol)
                label = k if len(case.input_sets) == 1 else f"{k}@set{i}"
                stats.append(f"{label}: max_abs_err={max_abs:.3g} max_rel_err={max_rel:.3g}")
                if not ok:
                    failures.append(f"{tag} output {k!r}: "
                                    + (why or f"max_abs_err={max_abs:.3g} max_rel_err={max_rel:.3g} "
                                              f"exceeds rtol={rtol:g} atol={atol:g}"))
        for j, (inputs, expect) in enumerate(case.refused_sets):
            rdir = tdir / f"refused{j}"
            rdir.mkdir(exist_ok=True)
            cmd = [str(self.v4frun), str(artifact)]
            for k, v in inputs.items():
                np.save(rdir / f"{sanitize(k)}.npy", v)
                cmd += ["--input", f"{k}={rdir / (sanitize(k) + '.npy')}"]
            cmd += ["--output-dir", str(rdir / "out"), "--threads", str(V4F_RUN_THREADS)]
            rc, log, _ = self._exec(cmd, RUN_TIMEOUT_S)
            tag = f"[refused set {j}: " + ",".join(f"{k}{list(v.shape)}" for k, v in inputs.items()) + "]"
            if rc == 0:
                failures.append(f"{tag} v4f-run accepted inputs the artifact was not compiled for")
            elif rc < 0 or expect not in log:
                failures.append(f"{tag} expected a clear error naming {expect!r} (rc={rc}){self._tail(log)}")
            else:
                line = next((l for l in log.splitlines() if expect in l), "")
                stats.append(f"refused set {j}: {line.strip()}")
        if failures:
            results.insert(0, Result(name, False, "; ".join(failures)))
        else:
            results.insert(0, Result(name, True, "; ".join(stats) + f"; rtol={rtol:g} atol={atol:g}"))
        return results


# ---------------------------------------------------------------------------


def op_types(graph) -> set:
    """The op types of a graph's nodes and of their subgraphs' (If, Loop, Scan)."""
    ops = set()
    for n in graph.node:
        ops.add(n.op_type)
        for a in n.attribute:
            for g in ([a.g] if a.HasField("g") else []) + list(a.graphs):
                ops |= op_types(g)
    return ops


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default="build", help="build directory containing bin/v4fc and bin/v4f-run")
    ap.add_argument("--v4fc", help="path to v4fc (default <build>/bin/v4fc)")
    ap.add_argument("--v4f-run", help="path to v4f-run (default <build>/bin/v4f-run)")
    ap.add_argument("--only", action="append", default=[],
                    help="run only this test or group (e.g. mlp, opset_variants); repeatable")
    ap.add_argument("--skip", action="append", default=[], help="skip this test or group; repeatable")
    ap.add_argument("-k", "--filter", action="append", default=[], metavar="REGEX",
                    help="run only tests whose name matches this regex (re.search); repeatable")
    ap.add_argument("--op", action="append", default=[], metavar="OP_TYPE",
                    help="run only the models with a node of this ONNX op type (generates every model to "
                         "look); repeatable")
    ap.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--reference-only", action="store_true",
                    help="only run ONNX Runtime on the generated models (validates the generators)")
    ap.add_argument("--keep", action="store_true", help="keep the temp dir with models, inputs, artifacts")
    ap.add_argument("--workdir", help="use this dir instead of a fresh temp dir (implies --keep)")
    ap.add_argument("--list", action="store_true", help="list the tests and exit")
    args = ap.parse_args()

    gens = models.all_generators()

    def selected(n: str, pats: List[str]) -> bool:
        return any(n == p or n.startswith(p.rstrip("/") + "/") for p in pats)

    names = [n for n in gens if (not args.only or selected(n, args.only)) and not selected(n, args.skip)
             and (not args.filter or any(re.search(f, n) for f in args.filter))]
    if args.op:
        names = [n for n in names if op_types(gens[n]().model.graph) & set(args.op)]
    if args.list:
        print("\n".join(names))
        return 0
    if not names:
        print(f"no test matches --only {args.only} -k {args.filter} --op {args.op}", file=sys.stderr)
        return 2
    # Longest first so the pool stays busy.
    names.sort(key=lambda n: 0 if n == "resnet50" else 1)

    if args.workdir:
        workdir = Path(args.workdir).resolve()
        workdir.mkdir(parents=True, exist_ok=True)
        args.keep = True
    else:
        workdir = Path(tempfile.mkdtemp(prefix="v4f-e2e-"))
    mode = "reference-only (ONNX Runtime)" if args.reference_only else f"build={args.build}"
    print(f"e2e: {len(names)} tests, -j{args.jobs}, {mode}, workdir={workdir}", flush=True)

    t0 = time.perf_counter()
    runner = Runner(args, workdir)
    results: List[Result] = []

    with cf.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as ex:
        futs = {ex.submit(runner.run_one, n): n for n in names}
        for fut in cf.as_completed(futs):
            try:
                rs = fut.result()
            except Exception as e:
                rs = [Result(futs[fut], False, f"runner crashed: {type(e).__name__}: {e}")]
            for r in rs:
                report(r)
                results.append(r)

    # Coverage of the skeleton op list across all models (whole suite only).
    if not args.only and not args.skip and not args.filter and not args.op:
        missing = set(models.SKELETON_OPS) - runner.ops_seen
        r = Result("coverage/skeleton_ops", not missing,
                   f"all {len(models.SKELETON_OPS)} skeleton ops appear in the generated models"
                   if not missing else f"ops not exercised by any model: {sorted(missing)}")
        report(r)
        results.append(r)

    passed = sum(r.ok for r in results)
    failed = len(results) - passed
    dt = time.perf_counter() - t0
    if failed:
        print("failed tests:", ", ".join(r.name for r in results if not r.ok))
    if failed or args.keep:
        print(f"artifacts kept in {workdir}")
    else:
        shutil.rmtree(workdir, ignore_errors=True)
    print(f"e2e finished in {dt:.1f}s")
    print(f"e2e: {passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
