#!/usr/bin/env python3
"""Quantized vs float, v4f vs ONNX Runtime, on one machine in one invocation.

For each model: v4f float32, v4f quantized (BERT: `--quantize=dynamic-int8
--per-channel`; ResNet-50: static `--quantize=int8 --per-channel` calibrated on
8 random images; the 4096x4096 batch-1 MatMul `gemv4096`:
`--quantize=int4-weight`, group 128, and `gemv4096_w4a8`: `--quantize=w4a8`), ORT float32 and ORT's own quantization of
the same ONNX file (BERT: `quantize_dynamic`, per-channel int8 weights;
ResNet-50: `quantize_static` to a QDQ model from the same calibration images,
per-channel int8 weights, with uint8 and with int8 activations: the faster of
the two is the comparison), timed in alternating rounds at each thread count
(medians); output error of each quantized side against ORT float32 (max |diff|
/ max |ref|) and output SQNR against its own float32; artifact / model sizes.

  .venv/bin/python bench/quant_bench.py [--models bert_base_s16,bert_base_s128,resnet50,gemv4096]
      [--threads 1,2] [--runs 20] [--rounds 3] [--work-dir DIR]

Writes bench/results/quant.md and quant.json. Timings are never asserted.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
import bench  # noqa: E402
import bench_models  # noqa: E402

sys.path.insert(0, str(ROOT / "test" / "e2e"))
import models as e2e_models  # noqa: E402

# name -> (builder, v4f quantization flags (CAL: the calibration set), ORT's
# quantization compared: "dynamic", "static" or None)
MODELS = {
    "bert_base_s16": (lambda: bench_models.bert_base(16), ["--quantize=dynamic-int8", "--per-channel"], "dynamic"),
    "bert_base_s128": (lambda: bench_models.bert_base(128), ["--quantize=dynamic-int8", "--per-channel"], "dynamic"),
    "resnet50": (e2e_models.make_resnet50, ["--quantize=int8", "--calibration-data", "CAL", "--per-channel"],
                 "static"),
    "gemv4096": (lambda: bench_models.gemv(4096, 4096), ["--quantize=int4-weight"], None),
    "gemv4096_w4a8": (lambda: bench_models.gemv(4096, 4096), ["--quantize=w4a8"], None),
}
CALIBRATION_SAMPLES = 8


def sqnr_db(ref: np.ndarray, got: np.ndarray) -> float:
    noise = float(((ref.astype(np.float64) - got) ** 2).sum())
    return float("inf") if noise == 0 else 10 * float(np.log10(float((ref.astype(np.float64) ** 2).sum()) / noise))


def cpu_name() -> str:
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", default="bert_base_s16,bert_base_s128,resnet50,gemv4096")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--runs", type=int, default=20, help="timed runs per side and round")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--build", default=str(ROOT / "build"))
    ap.add_argument("--work-dir")
    ap.add_argument("--out-dir", default=str(ROOT / "bench" / "results"))
    args = ap.parse_args()
    from onnxruntime.quantization import (CalibrationDataReader, QuantFormat, QuantType, quantize_dynamic,
                                          quantize_static)

    build = Path(args.build)
    v4fc, v4frun = build / "bin" / "v4fc", build / "bin" / "v4f-run"
    threads_list = [int(t) for t in args.threads.split(",")]
    tmp = tempfile.TemporaryDirectory(prefix="v4f-quant-bench-")
    work = Path(args.work_dir) if args.work_dir else Path(tmp.name)
    work.mkdir(parents=True, exist_ok=True)
    results = {"cpu": cpu_name(), "models": {}}
    for name in args.models.split(","):
        builder, qflags, ort_quant = MODELS[name]
        case = builder()
        qtag = qflags[0].split("=", 1)[1]
        model = work / f"{name}.onnx"
        model.write_bytes(case.model.SerializeToString())
        inputs = case.input_sets[0]
        input_files = {}
        for k, v in inputs.items():
            input_files[k] = work / f"{name}_{k}.npy"
            np.save(input_files[k], v)
        # Calibration set: random samples of every input (not the timed one).
        if "CAL" in qflags:
            rng = np.random.default_rng(7)
            cal = {k: rng.standard_normal((CALIBRATION_SAMPLES,) + v.shape).astype(v.dtype) for k, v in inputs.items()}
            cal_file = work / f"{name}_cal.npz"
            np.savez(cal_file, **cal)
            qflags = [str(cal_file) if f == "CAL" else f for f in qflags]
        ort_qmodels = {}
        if ort_quant == "dynamic":
            ort_qmodels["ORT int8"] = work / f"{name}_ort_int8.onnx"
            quantize_dynamic(str(model), str(ort_qmodels["ORT int8"]), weight_type=QuantType.QInt8, per_channel=True)
        elif ort_quant == "static":
            class Reader(CalibrationDataReader):
                def __init__(self):
                    self.it = iter([{k: v[i] for k, v in cal.items()} for i in range(CALIBRATION_SAMPLES)])

                def get_next(self):
                    return next(self.it, None)

            for act in (QuantType.QUInt8, QuantType.QInt8):
                path = work / f"{name}_ort_qdq_{act.name}.onnx"
                quantize_static(str(model), str(path), Reader(), quant_format=QuantFormat.QDQ, per_channel=True,
                                activation_type=act, weight_type=QuantType.QInt8)
                ort_qmodels[f"ORT int8 ({'u8' if act == QuantType.QUInt8 else 's8'} act)"] = path
        arts = {}
        for tag, flags in [("float32", []), ("quantized", qflags)]:
            arts[tag] = work / f"{name}_{tag}.v4f"
            subprocess.run([str(v4fc), "compile", str(model), "-o", str(arts[tag]), *flags], check=True)
        # ORT's quantized files compiled by v4fc as they are (QDQ / QOperator
        # import: v4f-fold-qdq), timed against ORT running the same file.
        for tag, path in ort_qmodels.items():
            art = work / f"{path.stem}.v4f"
            if subprocess.run([str(v4fc), "compile", str(path), "-o", str(art)]).returncode == 0:
                arts[f"on {tag}"] = art
        # Accuracy against ORT float32, SQNR against each side's own float32.
        ref_sess = bench.make_ort_session(model, 2)[0]
        ref = ref_sess.run(None, inputs)[0]
        errs, sqnr, outs = {}, {}, {}
        for tag, art in arts.items():
            out = work / f"{name}_{tag}_out"
            cmd = [str(v4frun), str(art), "--output-dir", str(out), "--print", "0"]
            for k, f in input_files.items():
                cmd += ["--input", f"{k}={f}"]
            subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
            outs[tag] = np.load(next(out.glob("*.npy")))
            errs[f"v4f {tag}"] = float(np.abs(outs[tag] - ref).max() / np.abs(ref).max())
        sqnr["v4f quantized"] = sqnr_db(outs["float32"], outs["quantized"])
        sizes = {"v4f float32": arts["float32"].stat().st_size, "v4f quantized": arts["quantized"].stat().st_size,
                 "ORT float32": model.stat().st_size}
        for tag, path in ort_qmodels.items():
            got = bench.make_ort_session(path, 2)[0].run(None, inputs)[0]
            errs[tag] = float(np.abs(got - ref).max() / np.abs(ref).max())
            sqnr[tag] = sqnr_db(ref, got)
            sizes[tag] = path.stat().st_size
        per = {}
        for threads in threads_list:
            sessions = {"ORT float32": bench.make_ort_session(model, threads)[0]}
            for tag, path in ort_qmodels.items():
                sessions[tag] = bench.make_ort_session(path, threads)[0]
            samples = {k: [] for k in [*(f"v4f {t}" for t in arts), *sessions]}
            for r in range(args.rounds):
                for tag in arts:
                    _, med = bench.run_v4f(v4frun, arts[tag], input_files, args.runs, threads,
                                           work / f"{name}_{tag.replace(' ', '_')}_{threads}_{r}.json")
                    samples[f"v4f {tag}"].append(med)
                for tag, sess in sessions.items():
                    samples[tag].append(statistics.median(bench.run_ort(sess, inputs, args.runs)))
            per[threads] = {k: statistics.median(v) for k, v in samples.items()}
            print(f"{name} threads={threads}: " + ", ".join(f"{k} {v:.2f} ms" for k, v in per[threads].items()),
                  flush=True)
        results["models"][name] = {"mode": qtag, "ms": per, "rel_err_vs_ort_float32": errs,
                                   "sqnr_db_vs_own_float32": sqnr, "bytes": sizes}
        print(f"{name}: errors {errs}; SQNR {sqnr}; sizes {sizes}", flush=True)
    out = Path(args.out_dir)
    out.mkdir(parents=True, exist_ok=True)
    (out / "quant.json").write_text(json.dumps(results, indent=2) + "\n")
    na = "-"
    lines = [f"CPU: {results['cpu']}", "",
             "| model | v4f mode | threads | v4f fp32 ms | v4f quant ms | ORT fp32 ms | ORT int8 ms | "
             "v4f quant / ORT int8 | v4f quant / v4f fp32 |", "|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    for name, m in results["models"].items():
        for t, ms in m["ms"].items():
            ort_qs = {k: v for k, v in ms.items() if k.startswith("ORT int8")}
            ort_q = min(ort_qs.values()) if ort_qs else None
            q = ms["v4f quantized"]
            ort_ms = " / ".join(f"{v:.2f}" for v in ort_qs.values()) if ort_qs else na
            vs_ort = f"{q / ort_q:.2f}" if ort_q else na
            lines.append(f"| {name} | {m['mode']} | {t} | {ms['v4f float32']:.2f} | {q:.2f} | "
                         f"{ms['ORT float32']:.2f} | {ort_ms} | {vs_ort} | {q / ms['v4f float32']:.2f} |")
    lines += ["", "ORT int8: `quantize_dynamic` (BERT) or `quantize_static` QDQ with uint8 / int8 activations "
              "(ResNet-50); the ratio is against the fastest.", "",
              "| model | v4f quant error | ORT int8 error | v4f quant SQNR dB | ORT int8 SQNR dB | v4f fp32 MB | "
              "v4f quant MB | ORT int8 MB |", "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for name, m in results["models"].items():
        e, s, q = m["rel_err_vs_ort_float32"], m["bytes"], m["sqnr_db_vs_own_float32"]
        ort_keys = [k for k in e if k.startswith("ORT int8")]
        ort_e = " / ".join(f"{e[k]:.2e}" for k in ort_keys) or na
        ort_q = " / ".join(f"{q[k]:.1f}" for k in ort_keys) or na
        ort_s = " / ".join(f"{s[k] / 1e6:.1f}" for k in ort_keys) or na
        lines.append(f"| {name} | {e['v4f quantized']:.2e} | {ort_e} | {q['v4f quantized']:.1f} | {ort_q} | "
                     f"{s['v4f float32'] / 1e6:.1f} | {s['v4f quantized'] / 1e6:.1f} | {ort_s} |")
    lines += ["", "ORT's quantized file compiled by v4fc as it is (no --quantize), against ORT running the same file:",
              "", "| model | ORT file | threads | v4f ms | ORT ms | v4f / ORT | v4f error |", "|---|---|---:|---:|---:|---:|---:|"]
    for name, m in results["models"].items():
        for t, ms in m["ms"].items():
            for k, v in ms.items():
                if not k.startswith("v4f on "):
                    continue
                ort_tag = k[len("v4f on "):]
                lines.append(f"| {name} | {ort_tag} | {t} | {v:.2f} | {ms[ort_tag]:.2f} | {v / ms[ort_tag]:.2f} | "
                             f"{m['rel_err_vs_ort_float32'][k]:.2e} |")
    (out / "quant.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
