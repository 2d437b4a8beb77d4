#!/usr/bin/env python3
"""Two v4f builds on one model, same machine, alternating rounds.

A structural change must not make the generated code slower; this compares
the artifact and runtime of a baseline build (e.g. a worktree of an older
commit) with the current one, each compiled by its own v4fc:

  bench/compare_builds.py --baseline /work/wt-old/build --build build \
      --model resnet50 --threads 1,2 --runs 50 --rounds 5

For each thread count: R rounds of (baseline v4f-run --benchmark n, current
v4f-run --benchmark n), medians over all timed runs and the ratio
current/baseline as the median of per-round ratios. Nothing is asserted.
Writes bench/results/<model>-builds.md and .json.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import math
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import bench  # noqa: E402


def compile_with(build: Path, model: Path, out: Path) -> float:
    t0 = time.perf_counter()
    subprocess.run([str(build / "bin" / "v4fc"), "compile", str(model), "-o", str(out)], check=True)
    return time.perf_counter() - t0


def git_commit(build: Path) -> str:
    src = build.resolve().parent
    r = subprocess.run(["git", "-C", str(src), "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    return r.stdout.strip() or "?"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--baseline", required=True, help="baseline build directory (bin/v4fc, bin/v4f-run)")
    ap.add_argument("--build", default="build", help="current build directory")
    ap.add_argument("--model", default="resnet50")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--runs", type=int, default=50)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--dim", action="append", default=[])
    ap.add_argument("--out-dir", default=str(HERE / "results"))
    args = ap.parse_args()
    builds = {"baseline": Path(args.baseline), "current": Path(args.build)}
    dims = {k: int(v) for k, v in (d.split("=", 1) for d in args.dim)}
    work = Path(tempfile.mkdtemp(prefix="v4f-compare-"))
    name, model_path, inputs = bench.load_model(args.model, dims, work)
    input_files = {}
    for k, v in inputs.items():
        f = work / f"input{len(input_files)}.npy"
        np.save(f, v)
        input_files[k] = f
    artifacts, compile_s = {}, {}
    for side, build in builds.items():
        artifacts[side] = work / f"{side}.v4f"
        compile_s[side] = compile_with(build, model_path, artifacts[side])
    per_round = math.ceil(args.runs / args.rounds)
    rows = []
    for threads in [int(t) for t in args.threads.split(",")]:
        samples = {side: [] for side in builds}
        ratios = []
        for _ in range(args.rounds):
            med = {}
            for side, build in builds.items():
                ms, p50 = bench.run_v4f(build / "bin" / "v4f-run", artifacts[side], input_files, per_round, threads,
                                        work / f"{side}.json")
                # An older v4f-run reports only its p50: one sample per round.
                samples[side] += ms or [p50]
                med[side] = p50
            ratios.append(med["current"] / med["baseline"])
        rows.append({"threads": threads,
                     "baseline_median_ms": statistics.median(samples["baseline"]),
                     "current_median_ms": statistics.median(samples["current"]),
                     "ratio": statistics.median(ratios), "samples": samples})
    cpu = bench.cpu_info()
    commits = {side: git_commit(b) for side, b in builds.items()}
    md = [f"# v4f build vs build: {name}", "",
          f"- CPU: {cpu.get('model', '?')} ({cpu.get('logical_cpus', '?')} logical CPUs)",
          f"- baseline {commits['baseline']} (compile {compile_s['baseline']:.2f} s), "
          f"current {commits['current']} (compile {compile_s['current']:.2f} s); "
          f"{dt.datetime.now(dt.timezone.utc).isoformat(timespec='seconds')}",
          f"- method: {args.rounds} alternating rounds x {per_round} timed runs per side; "
          "ratio = median of per-round (current median / baseline median)", "",
          "| model | threads | baseline median (ms) | current median (ms) | current / baseline |",
          "|---|---:|---:|---:|---:|"]
    for r in rows:
        md.append(f"| {name} | {r['threads']} | {r['baseline_median_ms']:.3f} | {r['current_median_ms']:.3f} "
                  f"| {r['ratio']:.3f} |")
    out = Path(args.out_dir)
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{name}-builds.md").write_text("\n".join(md) + "\n")
    (out / f"{name}-builds.json").write_text(json.dumps(
        {"model": name, "cpu": cpu, "commits": commits, "compile_s": compile_s, "rows": rows}, indent=1))
    print("\n".join(md))
    return 0


if __name__ == "__main__":
    sys.exit(main())
