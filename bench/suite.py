#!/usr/bin/env python3
"""The v4f benchmark suite: several models, v4f vs ONNX Runtime, in one invocation.

  .venv/bin/python bench/suite.py                        # all models, threads 1,2
  .venv/bin/python bench/suite.py --quick                # few runs (smoke test)
  .venv/bin/python bench/suite.py --models gemm1024,conv3x3_256 --threads 1,2 --runs 100

Every model is measured per thread count against an ORT session (intra_op = T, inter_op
1, ORT_ENABLE_ALL, sequential). Default (--method rounds, bench.measure): alternating
rounds v4f-run --benchmark n / ORT; medians over all timed runs and the ratio v4f/ORT as
the median of the per-round ratios. --method paired (bench.measure_paired): single runs
alternating with one `v4f-run --timed-stdin` process, --pairs times; medians of each
side and the ratio as the median of the per-pair ratios, so that a shared host's slow
periods hit both sides of a pair alike -- but each run then follows the other
runtime's run, which has evicted part of its weights from the caches.  Before timing, one run of each
side on the same inputs compares the first output (max abs difference, relative to
max |ORT output|; flagged when above 1e-3).  The FMA peak per thread count is measured
in the same invocation by v4f-run --profile (its "FMA peak ... GFLOP/s" line) and gives
the "% of peak" of the micro-benchmarks.

Models are generated into a work dir at run time (bench/bench_models.py, the
test/e2e/models.py generators, the exported test/models/mobilenet_v3_small.onnx).  A
model v4fc cannot compile is reported as "compile failed: <first line>" and the suite
goes on.  Writes bench/results/suite.md and suite.json (rewritten after every model).
Timings are never asserted anywhere.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Dict, List, Optional, Tuple

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
import bench  # noqa: E402
import bench_models  # noqa: E402


# ---------------------------------------------------------------------------
# the models


@dataclass
class Spec:
    name: str
    description: str
    # Writes the .onnx into the work dir (or names a committed one); returns
    # (path, benchmark inputs).
    build: Callable[[Path], Tuple[Path, Dict[str, np.ndarray]]]
    micro: bool = False          # report % of the FMA peak
    ops: Optional[int] = None    # ONNX ops in the model: report time per op
    compile_flags: List[str] = field(default_factory=list)


def _from_case(name: str, make) -> Callable[[Path], Tuple[Path, Dict[str, np.ndarray]]]:
    def build(work: Path):
        case = make()
        path = work / f"{name}.onnx"
        path.write_bytes(case.model.SerializeToString())
        return path, case.input_sets[0]
    return build


def _from_bench(spec: str, dims: Dict[str, int]) -> Callable[[Path], Tuple[Path, Dict[str, np.ndarray]]]:
    def build(work: Path):
        _, path, inputs = bench.load_model(spec, dims, work)
        return path, inputs
    return build


MNV3 = ROOT / "test" / "models" / "mobilenet_v3_small.onnx"

SPECS: Dict[str, Spec] = {s.name: s for s in [
    Spec("resnet50", "ResNet-50 v1, 224x224, batch 1, random weights (test/e2e/models.py)",
         _from_bench("resnet50", {})),
    Spec("mobilenet_v2", "MobileNetV2 1.0, 224x224, batch 1, BN after every conv, ReLU6 = Clip, "
         "random weights (bench/bench_models.py)", _from_case("mobilenet_v2", bench_models.mobilenet_v2)),
    # The exported torchvision model (width 0.5, 10 classes) has symbolic N, H, W: the
    # model stays dynamic for both sides, the inputs are [1,3,224,224].
    Spec("mobilenet_v3_small", "torchvision MobileNetV3-small (width 0.5, 10 classes) exported by "
         "torch.onnx (test/models/mobilenet_v3_small.onnx), symbolic N,H,W; input N=1, H=W=224",
         _from_bench(str(MNV3), {"N": 1, "H": 224, "W": 224})),
    Spec("bert_base_s128", "BERT-base encoder (12 layers, 768 hidden, 12 heads, FFN 3072), batch 1, "
         "sequence 128, exporter-style LayerNorm/GELU, random weights (bench/bench_models.py)",
         _from_case("bert_base_s128", lambda: bench_models.bert_base(128))),
    Spec("bert_base_s16", "BERT-base encoder as above, sequence 16",
         _from_case("bert_base_s16", lambda: bench_models.bert_base(16))),
    Spec("yolo_neck", "YOLOv5-style neck at stride 32 / 16: SPPF (three chained 5x5 max pools), nearest 2x "
         "Resize by constant scales, concats, 1x1 convs with SiLU; 512 x 20 x 20 and 256 x 40 x 40 inputs "
         "(bench/bench_models.py)", _from_case("yolo_neck", bench_models.yolo_neck)),
    Spec("tiny_chain100", "100 elementwise ops (Add/Mul/Relu/Sigmoid) in a chain on [1,64]: "
         "per-dispatch overhead", _from_case("tiny_chain100", lambda: bench_models.tiny_chain(100)), ops=100),
    Spec("gemm1024", "MatMul [1024,1024] x constant [1024,1024]",
         _from_case("gemm1024", lambda: bench_models.gemm(1024)), micro=True),
    Spec("conv3x3_256", "Conv 256->256, 3x3, pad 1, on [1,256,28,28], constant weights, no bias",
         _from_case("conv3x3_256", lambda: bench_models.conv3x3(256, 28)), micro=True),
]}


# ---------------------------------------------------------------------------
# FMA peak (measured by v4f-run --profile)

PEAK_RE = re.compile(r"FMA peak ([0-9.]+) GFLOP/s at (\d+) threads")


def measure_fma_peak(v4frun: Path, probe: Path, threads: int, work: Path, tries: int) -> List[float]:
    """`v4f-run probe.v4f --threads T --profile F --profile-runs 1` prints the FMA peak
    it measures at T threads; returns one value per try ([] when it prints none)."""
    out = []
    for i in range(tries):
        cmd = [str(v4frun), str(probe), "--threads", str(threads), "--profile", str(work / f"peak_{threads}_{i}.json"),
               "--profile-runs", "1"]
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace")
        m = PEAK_RE.search(p.stdout)
        if p.returncode != 0 or not m:
            print(f"  FMA peak at T={threads}: no 'FMA peak' line from {' '.join(cmd)} (rc={p.returncode})",
                  flush=True)
            return out
        out.append(float(m.group(1)))
    return out


PROFILE_RE = re.compile(r"profile: (\d+) runs, (\d+) dispatches, ([0-9.]+) ms per run \(([0-9.]+) ms in dispatches\)")


def profile_dispatches(v4frun: Path, artifact: Path, input_files: Dict[str, Path], threads: int,
                       work: Path) -> Optional[Dict]:
    """One `v4f-run --profile --profile-runs 1`: how many dispatches the artifact runs
    (and the time in them), to put the per-op time of a chain of tiny ops in context."""
    cmd = [str(v4frun), str(artifact)]
    for k, f in input_files.items():
        cmd += ["--input", f"{k}={f}"]
    cmd += ["--threads", str(threads), "--profile", str(work / "profile.json"), "--profile-runs", "1"]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace")
    m = PROFILE_RE.search(p.stdout)
    if p.returncode != 0 or not m:
        return None
    res = {"threads": threads, "dispatches": int(m.group(2)), "profiled_ms_per_run": float(m.group(3)),
           "ms_in_dispatches": float(m.group(4))}
    m = re.search(r"mean per dispatch: ([0-9.]+) us", p.stdout)
    if m:
        res["mean_us_per_dispatch"] = float(m.group(1))
    return res


# ---------------------------------------------------------------------------
# report


def _ms(x: Optional[float]) -> str:
    if x is None:
        return "-"
    return f"{x:.1f}" if x >= 100 else f"{x:.3g}" if x < 1 else f"{x:.2f}"


def _f(x: Optional[float], fmt: str = "{:.1f}") -> str:
    return "-" if x is None else fmt.format(x)


def _cell(text: str) -> str:
    """Text safe inside a markdown table cell."""
    return text.replace("|", "\\|").replace("\n", " ")


def render_md(doc: Dict) -> str:
    cpu = doc["cpu"]
    peaks = ", ".join(f"{t} thread{'s' if int(t) > 1 else ''}: {v:.1f} GFLOP/s"
                      for t, v in doc["fma_peak_gflops"].items() if v) or "n/a"
    lines = [f"# v4f benchmark suite{' (--quick run)' if doc['options']['quick'] else ''}", "",
             f"- date: {doc['date_utc']}; v4f commit {doc['v4f_commit'] or 'n/a'}"
             + (" + uncommitted changes" if doc.get("v4f_tree_dirty") else "")
             + f"; onnxruntime {doc['onnxruntime']}",
             f"- CPU: {cpu['model']} ({cpu.get('logical_cpus')} logical CPUs); "
             f"SIMD flags: {' '.join(cpu.get('simd_flags', [])) or 'n/a'}",
             f"- FMA peak (v4f-run --profile, this run): {peaks}",
             f"- method: {doc['method']}",
             "- GFLOP/s: 2 x Conv/Gemm/MatMul MACs (ONNX shape inference) / median; "
             "% peak: of the FMA peak at the same thread count (micro-benchmarks)",
             "- check: first output of one v4f run vs ORT, max abs diff / max |ORT|; "
             "**MISMATCH** when above 1e-3", "",
             "| model | threads | v4f (ms) | ORT (ms) | v4f / ORT | v4f GFLOP/s | ORT GFLOP/s "
             "| v4f % peak | ORT % peak | notes |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
    for m in doc["models"]:
        chk = m.get("check")
        note0 = ""
        if chk:
            if chk.get("rel_err") is None:
                note0 = f"**MISMATCH: {chk.get('error', 'no comparison')}**"
            elif not chk["ok"]:
                note0 = f"**MISMATCH vs ORT: rel err {chk['rel_err']:.1e}**"
            else:
                note0 = f"check ok (rel err {chk['rel_err']:.0e})"
        if m["status"] != "ok" and not m.get("results"):
            lines.append(f"| {m['name']} | - | {m['status']}: {_cell(m.get('error', ''))} | - | - | - | - | - | - "
                         f"| {note0} |")
            continue
        for i, r in enumerate(m["results"]):
            notes = [note0] if i == 0 and note0 else []
            if "ratio_quartiles" in r:
                notes.append("ratio quartiles {:.3f}-{:.3f}".format(*r["ratio_quartiles"]))
            if "v4f_us_per_op" in r:
                prof = m.get("v4f_profile")
                if i == 0 and prof:
                    notes.append(f"{m.get('ops')} ops in {prof['dispatches']} v4f dispatches")
                notes.append(f"v4f {r['v4f_us_per_op']:.2f} µs/op, ORT {r['ort_us_per_op']:.2f} µs/op")
            lines.append(
                f"| {m['name']} | {r['threads']} | {_ms(r['v4f_median_ms'])} | {_ms(r['ort_median_ms'])} "
                f"| {r['ratio_v4f_over_ort']:.3f} | {_f(r.get('v4f_gflops'))} | {_f(r.get('ort_gflops'))} "
                f"| {_f(r.get('v4f_pct_peak'), '{:.0f}%')} | {_f(r.get('ort_pct_peak'), '{:.0f}%')} "
                f"| {'; '.join(notes)} |")
        if m["status"] != "ok":  # failed after some thread counts
            lines.append(f"| {m['name']} | - | {m['status']}: {_cell(m.get('error', ''))} | - | - | - | - | - | - | |")
    return "\n".join(lines) + "\n"


def write_results(doc: Dict, out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    (out / "suite.md").write_text(render_md(doc))
    (out / "suite.json").write_text(json.dumps(doc, indent=2) + "\n")


# ---------------------------------------------------------------------------


def run_model(spec: Spec, args, tools: Tuple[Path, Path], threads_list: List[int], peaks: Dict[str, float],
              work: Path) -> Dict:
    v4fc, v4frun = tools
    entry: Dict = {"name": spec.name, "description": spec.description, "status": "ok", "results": []}
    mwork = work / spec.name
    mwork.mkdir(parents=True, exist_ok=True)
    stage = "build"
    try:
        t0 = time.perf_counter()
        model_path, inputs = spec.build(mwork)
        entry["build_s"] = time.perf_counter() - t0
        entry["onnx_file"] = (str(model_path.relative_to(ROOT)) if model_path.is_relative_to(ROOT)
                              else model_path.name)
        entry["onnx_bytes"] = model_path.stat().st_size
        entry["inputs"] = {k: {"shape": list(v.shape), "dtype": str(v.dtype)} for k, v in inputs.items()}
        input_files = bench.write_inputs(inputs, mwork)
        macs = bench.count_macs(model_path, inputs)
        entry["macs_per_inference"] = macs
        if spec.ops:
            entry["ops"] = spec.ops

        stage = "compile"
        artifact = mwork / f"{spec.name}.v4f"
        flags = spec.compile_flags + args.compile_flags.split()
        entry["compile_flags"] = flags
        entry["compile_s"] = bench.compile_model(v4fc, model_path, artifact, flags)
        entry["artifact_bytes"] = artifact.stat().st_size
        print(f"{spec.name}: compiled in {entry['compile_s']:.2f}s, artifact {entry['artifact_bytes'] / 1e6:.2f} MB"
              + (f", {macs / 1e9:.3f} GMAC/inference" if macs else ""), flush=True)

        stage = "check"
        chk = bench.check_outputs(v4frun, artifact, model_path, inputs, input_files, threads_list[0], mwork)
        entry["check"] = chk
        print(f"  check vs ORT ({chk['output']}): max abs diff {chk['max_abs_diff']}, rel {chk['rel_err']}"
              + ("" if chk["ok"] else "  <-- MISMATCH"), flush=True)

        entry["v4f_profile"] = profile_dispatches(v4frun, artifact, input_files, threads_list[0], mwork)

        stage = "run"
        for T in threads_list:
            if args.method == "paired":
                row = bench.measure_paired(v4frun, artifact, model_path, inputs, input_files, T, pairs=args.pairs,
                                           warmup=args.warmup, macs=macs)
            else:
                row = bench.measure(v4frun, artifact, model_path, inputs, input_files, T, runs=args.runs,
                                    rounds=args.rounds, warmup=args.warmup, v4f_warmup=args.warmup, macs=macs,
                                    workdir=mwork, tag=spec.name)
            peak = peaks.get(str(T))
            if spec.micro and peak and macs:
                row["fma_peak_gflops"] = peak
                row["v4f_pct_peak"] = 100 * row["v4f_gflops"] / peak
                row["ort_pct_peak"] = 100 * row["ort_gflops"] / peak
            if spec.ops:
                row["v4f_us_per_op"] = row["v4f_median_ms"] * 1e3 / spec.ops
                row["ort_us_per_op"] = row["ort_median_ms"] * 1e3 / spec.ops
            entry["results"].append(row)
            print(f"  T={T}: v4f {row['v4f_median_ms']:.4f} ms, ORT {row['ort_median_ms']:.4f} ms, "
                  f"v4f/ORT {row['ratio_v4f_over_ort']:.3f}"
                  + (" (pairs' quartiles {:.3f}-{:.3f})".format(*row["ratio_quartiles"]) if "ratio_quartiles" in row
                     else "")
                  + (f", v4f {row['v4f_gflops']:.1f} / ORT {row['ort_gflops']:.1f} GFLOP/s" if macs else ""),
                  flush=True)
    except bench.BenchError as e:
        entry["status"] = {"compile": "compile failed", "build": "build failed"}.get(stage, "run failed")
        entry["error"] = e.first_line()
        entry["error_output"] = e.message[-3000:]
        print(f"  {spec.name}: {entry['status']}: {entry['error']}", flush=True)
    except Exception as e:  # ORT, the generator, shape inference, ...: report and go on
        entry["status"] = f"{stage} failed"
        entry["error"] = (str(e).strip().splitlines() or [type(e).__name__])[0][:300]
        entry["error_output"] = traceback.format_exc()[-3000:]
        print(f"  {spec.name}: {entry['status']}: {entry['error']}", flush=True)
    finally:
        if not args.keep_work:
            shutil.rmtree(mwork, ignore_errors=True)
    return entry


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", default=",".join(SPECS), help=f"comma-separated, from: {', '.join(SPECS)}")
    ap.add_argument("--threads", default="1,2", help="comma-separated thread counts")
    ap.add_argument("--runs", type=int, default=None, help="timed runs per side and thread count (default 50; "
                    "--quick: 4)")
    ap.add_argument("--rounds", type=int, default=None, help="alternating v4f/ORT rounds (default 5; --quick: 2)")
    ap.add_argument("--warmup", type=int, default=None, help="warm-up runs per v4f-run invocation and per ORT "
                    "session (default 5, v4f-run's own default; --quick: 2)")
    ap.add_argument("--method", choices=("rounds", "paired"), default="rounds",
                    help="rounds (default, the issue's method): --rounds alternating blocks of runs per side, "
                    "ratio = median of per-round ratios (bench.measure); paired: single runs alternating v4f / "
                    "ORT, ratio = median of the per-pair ratios (bench.measure_paired)")
    ap.add_argument("--pairs", type=int, default=None, help="--method paired: alternating run pairs per thread "
                    "count (default 60; --quick: 6)")
    ap.add_argument("--quick", action="store_true", help="few runs, for smoke testing")
    ap.add_argument("--peak-tries", type=int, default=3, help="FMA peak measurements per thread count (max taken)")
    ap.add_argument("--compile-flags", default="", help="extra flags for every v4fc compile")
    ap.add_argument("--build", default=str(ROOT / "build"))
    ap.add_argument("--out-dir", default=str(ROOT / "bench" / "results"))
    ap.add_argument("--work-dir", default=None, help="where models and artifacts are generated "
                    "(default: a temporary dir, removed at the end)")
    ap.add_argument("--keep-work", action="store_true", help="keep each model's .onnx/.v4f in the work dir")
    args = ap.parse_args()
    if args.runs is None:
        args.runs = 4 if args.quick else 50
    if args.rounds is None:
        args.rounds = 2 if args.quick else 5
    if args.warmup is None:
        args.warmup = 2 if args.quick else 5
    if args.pairs is None:
        args.pairs = 6 if args.quick else 60

    names = [m.strip() for m in args.models.split(",") if m.strip()]
    unknown = [m for m in names if m not in SPECS]
    if unknown:
        raise SystemExit(f"unknown model(s) {', '.join(unknown)}; choose from {', '.join(SPECS)}")
    threads_list = [int(t) for t in args.threads.split(",") if t.strip()]
    if not threads_list:
        raise SystemExit("--threads: no thread counts")
    build = Path(args.build)
    v4fc, v4frun = build / "bin" / "v4fc", build / "bin" / "v4f-run"
    for tool in (v4fc, v4frun):
        if not tool.exists():
            raise SystemExit(f"{tool} not found: build first (scripts/setup.sh)")
    import onnxruntime as ort

    cpu = bench.cpu_info()
    dirty = subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain", "--untracked-files=no"],
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True).stdout.strip()
    per_round = max(1, -(-args.runs // args.rounds))
    doc: Dict = {
        "date_utc": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "v4f_commit": bench.git_commit(),
        "v4f_tree_dirty": bool(dirty),
        "onnxruntime": ort.__version__,
        "cpu": {k: cpu.get(k) for k in ("model", "logical_cpus", "nominal_mhz", "simd_flags", "flags")},
        "options": {"models": names, "threads": threads_list, "method": args.method, "pairs": args.pairs,
                    "runs": args.runs, "rounds": args.rounds, "warmup": args.warmup, "quick": args.quick,
                    "compile_flags": args.compile_flags},
        "method": (f"per model and thread count: {args.pairs} pairs of single runs alternating v4f (one "
                   f"v4f-run --timed-stdin process) and ORT (v4f, ORT then ORT, v4f; 20 ms between runs), "
                   f"warm-up {args.warmup} runs per side; medians of each side's runs; ratio = median of the "
                   "per-pair ratios v4f_i / ORT_i (quartiles in the notes)") if args.method == "paired" else
                  (f"per model and thread count: {args.rounds} alternating rounds (v4f-run --benchmark "
                   f"{per_round}, then {per_round} ORT runs), warm-up {args.warmup} runs per side; medians; "
                   "ratio = median of per-round (v4f median / ORT median)"),
        "fma_peak_gflops": {},
        "fma_peak_samples_gflops": {},
        "models": [],
    }
    out = Path(args.out_dir)

    work_ctx = tempfile.TemporaryDirectory(prefix="v4f-suite-") if args.work_dir is None else None
    work = Path(work_ctx.name if work_ctx else args.work_dir)
    work.mkdir(parents=True, exist_ok=True)
    t_start = time.perf_counter()
    try:
        # The FMA peak per thread count, from v4f-run --profile on a one-op probe.
        probe_onnx, _ = _from_case("fma_probe", lambda: bench_models.tiny_chain(1, 16))(work)
        probe = work / "fma_probe.v4f"
        try:
            bench.compile_model(v4fc, probe_onnx, probe)
        except bench.BenchError as e:
            print(f"FMA peak probe: compile failed: {e.first_line()}", flush=True)
            probe = None

        def peak_pass():
            for T in threads_list:
                s = measure_fma_peak(v4frun, probe, T, work, args.peak_tries) if probe else []
                doc["fma_peak_samples_gflops"].setdefault(str(T), []).extend(s)
                allv = doc["fma_peak_samples_gflops"][str(T)]
                doc["fma_peak_gflops"][str(T)] = max(allv) if allv else None

        peak_pass()
        print("FMA peak: " + ", ".join(f"T={t}: {v} GFLOP/s" for t, v in doc["fma_peak_gflops"].items()),
              flush=True)

        for name in names:
            entry = run_model(SPECS[name], args, (v4fc, v4frun), threads_list, doc["fma_peak_gflops"], work)
            doc["models"].append(entry)
            write_results(doc, out)

        # Once more at the end: the peak is the best of both passes.
        peak_pass()
        for entry in doc["models"]:
            for r in entry.get("results", []):
                peak = doc["fma_peak_gflops"].get(str(r["threads"]))
                if "fma_peak_gflops" in r and peak:
                    r["fma_peak_gflops"] = peak
                    r["v4f_pct_peak"] = 100 * r["v4f_gflops"] / peak
                    r["ort_pct_peak"] = 100 * r["ort_gflops"] / peak
    finally:
        if work_ctx:
            work_ctx.cleanup()
    doc["suite_wall_s"] = time.perf_counter() - t_start
    write_results(doc, out)
    print()
    print(render_md(doc))
    print(f"wrote {out / 'suite.md'} and {out / 'suite.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
