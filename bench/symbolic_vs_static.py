#!/usr/bin/env python3
"""What run-time dims cost: one model compiled with static input dims and
with its batch / sequence / spatial dims symbolic, both run at the same
input shape.

  .venv/bin/python bench/symbolic_vs_static.py [--threads 1,2] [--rounds 8] [--runs 40]

Models: ResNet-50 (N, H, W symbolic), MobileNetV2 (N, H, W symbolic) and
BERT-base at sequence 128 (batch and sequence symbolic), the suite's
generators (bench/suite.py). Per model and thread count: alternating rounds
of `v4f-run --benchmark` on the static and the symbolic artifact; the ratio
is the median of the per-round ratios symbolic / static. Writes
bench/results/symbolic_vs_static.md and .json. Timings are never asserted.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import platform
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import onnx

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
import bench  # noqa: E402
import suite  # noqa: E402

# Which input dims become symbols: (input index, dim index) -> name.
SYMBOLS = {
    "resnet50": {0: {0: "N", 2: "H", 3: "W"}},
    "mobilenet_v2": {0: {0: "N", 2: "H", 3: "W"}},
    # hidden_states [batch, sequence, 768], attention_mask [batch, 1, 1, sequence].
    "bert_base_s128": {0: {0: "batch", 1: "sequence"}, 1: {0: "batch", 3: "sequence"}},
}


def symbolic(model: onnx.ModelProto, spec) -> onnx.ModelProto:
    m = onnx.ModelProto()
    m.CopyFrom(model)
    inits = {i.name for i in m.graph.initializer}
    inputs = [vi for vi in m.graph.input if vi.name not in inits]
    for k, vi in enumerate(inputs):
        dims = vi.type.tensor_type.shape.dim
        names = spec.get(k, {})
        for i, name in names.items():
            dims[i].ClearField("dim_value")
            dims[i].dim_param = name
    # Outputs and value_info: no static claims left over.
    for vi in list(m.graph.output):
        for d in vi.type.tensor_type.shape.dim:
            d.ClearField("dim_value")
            d.dim_param = ""
    del m.graph.value_info[:]
    return m


def cpu_name() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default="build")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--rounds", type=int, default=8)
    ap.add_argument("--runs", type=int, default=40, help="timed runs per side and thread count")
    ap.add_argument("--models", default=",".join(SYMBOLS))
    ap.add_argument("--out", default=str(HERE / "results" / "symbolic_vs_static"))
    args = ap.parse_args()
    build = Path(args.build).resolve()
    v4fc, v4frun = build / "bin" / "v4fc", build / "bin" / "v4f-run"
    threads = [int(t) for t in args.threads.split(",")]
    rows = []
    with tempfile.TemporaryDirectory(prefix="v4f-symbolic-bench-") as tmp:
        work = Path(tmp)
        for name in args.models.split(","):
            path, inputs = suite.SPECS[name].build(work)
            static = onnx.load(str(path))
            sym = symbolic(static, SYMBOLS[name])
            sym_path = work / f"{name}.symbolic.onnx"
            onnx.save(sym, str(sym_path))
            arts = {}
            for tag, p in (("static", path), ("symbolic", sym_path)):
                arts[tag] = work / f"{name}.{tag}.v4f"
                subprocess.run([str(v4fc), "compile", str(p), "-o", str(arts[tag])], check=True)
            files = {}
            for k, v in inputs.items():
                f = work / f"{name}.{k}.npy"
                np.save(f, v)
                files[k] = f
            per_round = max(1, args.runs // args.rounds)
            for t in threads:
                samples = {"static": [], "symbolic": []}
                ratios = []
                for r in range(args.rounds):
                    med = {}
                    for tag in ("static", "symbolic") if r % 2 == 0 else ("symbolic", "static"):
                        _, m = bench.run_v4f(v4frun, arts[tag], files, per_round, t, work / f"{name}.{tag}.json")
                        med[tag] = m
                        samples[tag].append(m)
                    ratios.append(med["symbolic"] / med["static"])
                row = {"model": name, "threads": t, "static_ms": statistics.median(samples["static"]),
                       "symbolic_ms": statistics.median(samples["symbolic"]),
                       "ratio_symbolic_over_static": statistics.median(ratios), "ratio_per_round": ratios,
                       "input_shapes": {k: list(v.shape) for k, v in inputs.items()}}
                rows.append(row)
                print(f"{name} T={t}: static {row['static_ms']:.3f} ms, symbolic {row['symbolic_ms']:.3f} ms, "
                      f"ratio {row['ratio_symbolic_over_static']:.3f}", flush=True)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                            text=True).stdout.strip()
    meta = {"date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"), "commit": commit,
            "cpu": cpu_name(), "rounds": args.rounds, "runs_per_side": args.runs}
    out = Path(args.out)
    out.with_suffix(".json").write_text(json.dumps({"meta": meta, "rows": rows}, indent=1) + "\n")
    lines = ["# Symbolic vs static dims: the same model and input shape", "",
             f"- date {meta['date']}; v4f commit {commit}; CPU: {meta['cpu']}",
             f"- method: per model and thread count, {args.rounds} alternating rounds of "
             f"`v4f-run --benchmark {max(1, args.runs // args.rounds)}` on each artifact; medians; "
             "ratio = median of the per-round ratios (symbolic / static)", "",
             "| model | symbolic dims | threads | static (ms) | symbolic (ms) | symbolic / static |",
             "|---|---|---:|---:|---:|---:|"]
    for r in rows:
        dims = ", ".join(dict.fromkeys(n for d in SYMBOLS[r["model"]].values() for n in d.values()))
        lines.append(f"| {r['model']} | {dims} | {r['threads']} | {r['static_ms']:.3f} | {r['symbolic_ms']:.3f} | "
                     f"{r['ratio_symbolic_over_static']:.3f} |")
    out.with_suffix(".md").write_text("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
