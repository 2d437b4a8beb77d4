#!/usr/bin/env python3
"""Quantization tests: integer kernels exact against their arithmetic, accuracy on trained models.

1. Exactness (synthetic matmul and conv models with awkward shapes: odd K, column and
   row edges, batch dims, a Gemm with transB, a zero row): `v4fc --quantize=MODE`
   output must equal a numpy emulation of the documented arithmetic
   (docs/quantization.md) up to float rounding of the dequantization — an
   error in packing, pairing, edges, scales or zero points shows up as a large
   difference. Dynamic int8 with per-tensor weights, static int8 (minmax
   calibration on other data, so the run clips) with per-channel weights, on
   the host's kernels (vpdpbusd where it has AVX-512 VNNI), on AVX2's
   (pmaddwd) and, where the CPU has AVX-VNNI, on AVX2 + AVX-VNNI's (256-bit
   vpdpbusd, --target-cpu alderlake); int4-weight at groups of 32 and 128,
   with zero points; w4a8 (int4 weights, int8 activations).
2. Accuracy on the trained digits models (test/quant/digits_models.py, trained
   at test time with numpy): float vs quantized top-1 on the 360 held-out
   digits, for every mode and calibration method, against the issue's budgets
   (int8 modes lose at most 1 point); --quant-report's JSON checked.
3. Sizes: the quantized artifact of the MLP is smaller than the float one.
4. --accuracy-budget: the shipped artifact's loss on the validation half of
   the held-out digits is within the budget (measured, not read from the report).
5. QDQ models from ORT's quantize_static (digits MLP and CNN) compile to
   integer matmul and conv dispatches and match ORT within one output
   quantization step; so do QLinearMatMul / QLinearConv (QOperator) models.
   MatMulInteger models (ORT's quantize_dynamic) run on the integer GEMM and
   match ORT; int8 between layers and MatMulInteger exactness live in
   int8_layers.py, the emulation and run helpers in quant_common.py.
6. Bad input: calibration data with wrong names, shapes, dtypes, no samples,
   NaN, a corrupt file; an --exclude naming no node; int8 without data — each
   a non-zero exit with a message naming the problem and no artifact written.

  run_quant_tests.py --build build [--keep DIR]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import digits_models  # noqa: E402
import int8_layers  # noqa: E402
from quant_common import (activation_quant, compile_and_run, host_has_avx_vnni, int4_matmul,  # noqa: E402
                          quantized_conv, quantized_matmul, run, w4a8_matmul)

# name -> (v4fc flags, allowed top-1 loss as a fraction of the held-out set);
# CAL is replaced by the model's calibration set.
MODES = {
    "dynamic-int8": (["--quantize=dynamic-int8"], 0.01),
    "dynamic-int8/pc": (["--quantize=dynamic-int8", "--per-channel"], 0.01),
    "int8 minmax": (["--quantize=int8", "--calibration-data", "CAL"], 0.01),
    "int8 minmax/pc": (["--quantize=int8", "--calibration-data", "CAL", "--per-channel"], 0.01),
    "int8 entropy": (["--quantize=int8", "--calibration-data", "CAL", "--calibration-method=entropy"], 0.01),
    "int8 pct99.99": (["--quantize=int8", "--calibration-data", "CAL", "--calibration-method=percentile:99.99"],
                      0.01),
    "int4-weight": (["--quantize=int4-weight"], 0.02),
    "int4-weight:32": (["--quantize=int4-weight:32"], 0.02),
    "int4-weight zp": (["--quantize=int4-weight", "--int4-zero-points"], 0.02),
    "w4a8": (["--quantize=w4a8"], 0.02),
}


# ---------------------------------------------------------------- models
def matmul_model(path: Path, in_shape, w: np.ndarray, bias, relu: bool, gemm_trans_b: bool = False):
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, list(in_shape))
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    inits = []
    nodes = []
    if gemm_trans_b:
        inits.append(numpy_helper.from_array(np.ascontiguousarray(w.T), "W"))
        ins = ["x", "W"] + (["B"] if bias is not None else [])
        nodes.append(helper.make_node("Gemm", ins, ["h"], name="gemm", transB=1))
    else:
        inits.append(numpy_helper.from_array(w, "W"))
        nodes.append(helper.make_node("MatMul", ["x", "W"], ["m"], name="matmul"))
        if bias is not None:
            nodes.append(helper.make_node("Add", ["m", "B"], ["h"], name="bias"))
        else:
            nodes.append(helper.make_node("Identity", ["m"], ["h"], name="id"))
    if bias is not None:
        inits.append(numpy_helper.from_array(bias, "B"))
    nodes.append(helper.make_node("Relu" if relu else "Identity", ["h"], ["y"], name="out"))
    g = helper.make_graph(nodes, "qmm", [x], [y], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    onnx.save(m, str(path))


def exactness(build: Path, work: Path) -> list[str]:
    rng = np.random.default_rng(7)
    cases = [
        # name, input shape, K, N, bias, relu, gemm
        ("odd_k_edges", (13, 33), 33, 47, True, True, False),
        ("batch_dims", (2, 5, 16), 16, 20, False, False, False),
        ("k1_n1", (3, 1), 1, 1, True, False, False),
        ("wide", (7, 300), 300, 130, True, True, False),
        ("gemm_transb", (9, 64), 64, 10, True, False, True),
    ]
    failures = []
    if not host_has_avx_vnni():
        print("  (AVX-VNNI kernels not run: this CPU has no avx_vnni; they run where it has)")
    for name, shape, K, N, has_bias, relu, gemm in cases:
        w = rng.standard_normal((K, N)).astype(np.float32)
        w[:, 0] = 0  # a zero column: scale 1
        w[:, -1] *= 8  # one large column: per-tensor and per-channel scales differ
        bias = rng.standard_normal(N).astype(np.float32) if has_bias else None
        x = rng.standard_normal(shape).astype(np.float32) * 3
        x.reshape(-1, K)[0] = 0  # a zero row: scale 1
        # Calibration data: other samples, a narrower and shifted range, so
        # the run's values fall outside it and clip.
        cal = (rng.standard_normal((3,) + shape) * 2 + 0.5).astype(np.float32)
        np.savez(work / f"{name}_cal.npz", x=cal)
        model = work / f"{name}.onnx"
        matmul_model(model, shape, w, bias, relu, gemm)
        static = activation_quant(float(cal.min()), float(cal.max()))
        for label, flags, want in [
            ("dynamic", ["--quantize=dynamic-int8"], quantized_matmul(x, w, bias, relu, False)),
            ("static/pc", ["--quantize=int8", "--calibration-data", work / f"{name}_cal.npz", "--per-channel"],
             quantized_matmul(x, w, bias, relu, True, static)),
            # The host's kernels (AVX-512 VNNI vpdpbusd where the CPU has it)
            # above; the int16-pair pmaddwd kernels of AVX2 on every host here.
            ("dyn/v3", ["--quantize=dynamic-int8", "--target-cpu", "x86-64-v3"],
             quantized_matmul(x, w, bias, relu, False)),
            ("static/v3", ["--quantize=int8", "--calibration-data", work / f"{name}_cal.npz", "--target-cpu",
                           "x86-64-v3"], quantized_matmul(x, w, bias, relu, False, static)),
            ("int4/g32", ["--quantize=int4-weight:32"], int4_matmul(x, w, bias, relu, 32)),
            ("int4/g128", ["--quantize=int4-weight"], int4_matmul(x, w, bias, relu, 128)),
            ("int4z/g32", ["--quantize=int4-weight:32", "--int4-zero-points"], int4_matmul(x, w, bias, relu, 32, True)),
            ("w4a8/g32", ["--quantize=w4a8:32"], w4a8_matmul(x, w, bias, relu, 32)),
            ("w4a8/g128", ["--quantize=w4a8"], w4a8_matmul(x, w, bias, relu, 128)),
            ("w4a8/v3", ["--quantize=w4a8:32", "--target-cpu", "x86-64-v3"], w4a8_matmul(x, w, bias, relu, 32)),
        ] + ([("dyn/avxvnni", ["--quantize=dynamic-int8", "--target-cpu", "alderlake"],
               quantized_matmul(x, w, bias, relu, False)),
              ("static/avxvnni", ["--quantize=int8", "--calibration-data", work / f"{name}_cal.npz", "--target-cpu",
                                  "alderlake"], quantized_matmul(x, w, bias, relu, False, static)),
              ("w4a8/avxvnni", ["--quantize=w4a8:32", "--target-cpu", "alderlake"], w4a8_matmul(x, w, bias, relu, 32))]
             if host_has_avx_vnni() else []):
            got, _ = compile_and_run(build, model, x, work / f"{name}_{label.replace('/', '_')}", flags)
            err = float(np.abs(got - want).max() / max(np.abs(want).max(), 1e-30))
            ok = got.shape == want.shape and err <= 1e-5
            print(f"  exact {label:9s} {name:14s} {str(shape):12s} K={K:<4d} N={N:<4d} rel err {err:.2e}  "
                  f"{'ok' if ok else 'FAIL'}")
            if not ok:
                failures.append(f"exactness {label} {name}: shape {got.shape} vs {want.shape}, rel err {err:.3e}")
    return failures


def conv_model(path: Path, x_shape, w, bias, residual_shape, relu, strides, pads, dil):
    ins = [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(x_shape))]
    inits = [numpy_helper.from_array(w, "W")]
    conv_in = ["x", "W"]
    if bias is not None:
        inits.append(numpy_helper.from_array(bias, "B"))
        conv_in.append("B")
    nodes = [helper.make_node("Conv", conv_in, ["c"], name="conv", strides=list(strides), pads=list(pads),
                              dilations=list(dil))]
    last = "c"
    if residual_shape is not None:
        ins.append(helper.make_tensor_value_info("r", TensorProto.FLOAT, list(residual_shape)))
        nodes.append(helper.make_node("Add", [last, "r"], ["s"], name="residual"))
        last = "s"
    nodes.append(helper.make_node("Relu" if relu else "Identity", [last], ["y"], name="out"))
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    m = helper.make_model(helper.make_graph(nodes, "qconv", ins, [y], inits),
                          opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    onnx.save(m, str(path))


def conv_exactness(build: Path, work: Path) -> list[str]:
    """Static int8 convolutions (v4f.quantized_conv) against quantized_conv():
    3x3, strided, 1x1 (the contiguous path), 1x1 strided, a 7x7 stem, dilation,
    odd K and channel counts (row and column edges), bias, residual, ReLU,
    batch 2; per-channel and per-tensor weights; the host's kernels, AVX2's and
    (where the CPU has AVX-VNNI) AVX2 + AVX-VNNI's."""
    rng = np.random.default_rng(11)
    cases = [
        # name, N, C, H, W, O, KH, KW, strides, pads, dil, bias, residual, relu
        ("3x3", 2, 5, 9, 9, 7, 3, 3, (1, 1), (1, 1, 1, 1), (1, 1), True, False, True),
        ("1x1_res", 1, 33, 7, 6, 20, 1, 1, (1, 1), (0, 0, 0, 0), (1, 1), False, True, True),
        ("3x3_s2", 1, 16, 15, 15, 24, 3, 3, (2, 2), (1, 1, 1, 1), (1, 1), True, False, False),
        ("stem7x7", 1, 3, 20, 22, 8, 7, 7, (2, 2), (3, 3, 3, 3), (1, 1), True, False, True),
        ("dil2", 1, 4, 10, 10, 3, 3, 3, (1, 1), (2, 1, 2, 3), (2, 2), False, True, False),
        ("1x1_s2", 2, 8, 10, 10, 16, 1, 1, (2, 2), (0, 0, 0, 0), (1, 1), True, False, False),
        ("wide", 1, 64, 12, 12, 40, 3, 3, (1, 1), (1, 1, 1, 1), (1, 1), True, True, True),
        # Stride 2 with output rows wider than a vector (the contiguous path).
        ("s2_rows", 1, 8, 9, 75, 12, 3, 3, (2, 2), (1, 1, 1, 1), (1, 1), True, False, True),
        ("stem_rows", 1, 3, 12, 80, 8, 7, 7, (2, 2), (3, 3, 3, 3), (1, 1), True, False, False),
    ]
    failures = []
    for name, N, C, H, W, O, KH, KW, strides, pads, dil, has_bias, has_res, relu in cases:
        w = (rng.standard_normal((O, C, KH, KW)) * 0.3).astype(np.float32)
        w[0] = 0  # a zero channel: scale 1
        w[-1] *= 8  # one large channel: per-tensor and per-channel scales differ
        bias = rng.standard_normal(O).astype(np.float32) if has_bias else None
        x = (rng.standard_normal((N, C, H, W)) * 2 + 0.7).astype(np.float32)
        OH = (H + pads[0] + pads[2] - dil[0] * (KH - 1) - 1) // strides[0] + 1
        OW = (W + pads[1] + pads[3] - dil[1] * (KW - 1) - 1) // strides[1] + 1
        r = rng.standard_normal((N, O, OH, OW)).astype(np.float32) if has_res else None
        model = work / f"conv_{name}.onnx"
        conv_model(model, x.shape, w, bias, r.shape if has_res else None, relu, strides, pads, dil)
        cal = {"x": (rng.standard_normal((3,) + x.shape) * 1.5 + 0.5).astype(np.float32)}
        if has_res:
            cal["r"] = rng.standard_normal((3,) + r.shape).astype(np.float32)
        np.savez(work / f"conv_{name}_cal.npz", **cal)
        static = activation_quant(float(cal["x"].min()), float(cal["x"].max()))
        calflags = ["--quantize=int8", "--calibration-data", work / f"conv_{name}_cal.npz"]
        variants = [("host/pc", calflags + ["--per-channel"], True), ("host/pt", calflags, False),
                    ("v3/pc", calflags + ["--per-channel", "--target-cpu", "x86-64-v3"], True)]
        if host_has_avx_vnni():
            variants.append(("avxvnni", calflags + ["--per-channel", "--target-cpu", "alderlake"], True))
        for label, flags, per_channel in variants:
            want = quantized_conv(x, w, bias, r, relu, strides, pads, dil, per_channel, static)
            out = work / f"conv_{name}_{label.replace('/', '_')}"
            out.mkdir(parents=True, exist_ok=True)
            art = out / "model.v4f"
            run([build / "bin" / "v4fc", "compile", model, "-o", art, *flags])
            plan = run([build / "bin" / "v4fc", "inspect", "--plan", art])
            np.save(out / "x.npy", x)
            inputs = ["--input", f"x={out / 'x.npy'}"]
            if has_res:
                np.save(out / "r.npy", r)
                inputs += ["--input", f"r={out / 'r.npy'}"]
            run([build / "bin" / "v4f-run", art, *inputs, "--output-dir", out / "o", "--print", "0",
                 "--threads", "2"])
            got = np.load(out / "o" / "y.npy")
            err = float(np.abs(got - want).max() / max(np.abs(want).max(), 1e-30))
            int8 = plan.count("int8")
            ok = got.shape == want.shape and err <= 1e-5 and int8 >= 2
            print(f"  exact conv {label:8s} {name:8s} N{N} C{C} {H}x{W} O{O} {KH}x{KW} s{strides[0]}  rel err "
                  f"{err:.2e}  int8 dispatches {int8}  {'ok' if ok else 'FAIL'}")
            if not ok:
                failures.append(f"conv exactness {label} {name}: shape {got.shape} vs {want.shape}, rel err "
                                f"{err:.3e}, int8 dispatches {int8}")
    return failures


def accuracy(build: Path, work: Path) -> list[str]:
    data = work / "digits"
    digits_models.build(data)
    labels = np.load(data / "labels.npy")
    failures = []
    for model in ["mlp", "cnn"]:
        x = np.load(data / f"val_{model}.npz")["x"]
        f_out, f_art = compile_and_run(build, data / f"{model}.onnx", x, work / f"{model}_float", [],
                                       out_name="logits")
        f_top1 = float((f_out.argmax(1) == labels).mean())
        print(f"  {model} float32      top-1 {f_top1:.4f}  artifact {f_art.stat().st_size} bytes")
        for mode, (flags, budget) in MODES.items():
            flags = [str(data / f"cal_{model}.npz") if f == "CAL" else f for f in flags]
            tag = mode.replace(" ", "_").replace("/", "_")
            q_out, q_art = compile_and_run(build, data / f"{model}.onnx", x, work / f"{model}_{tag}", flags,
                                           out_name="logits")
            q_top1 = float((q_out.argmax(1) == labels).mean())
            loss = f_top1 - q_top1
            ok = loss <= budget + 1e-9
            print(f"  {model} {mode:16s} top-1 {q_top1:.4f}  loss {100 * loss:+.2f} points (budget "
                  f"{100 * budget:.0f})  artifact {q_art.stat().st_size} bytes  {'ok' if ok else 'FAIL'}")
            if not ok:
                failures.append(f"{model} {mode}: top-1 {q_top1:.4f} vs float {f_top1:.4f}")
            if mode == "int8 entropy":
                failures += check_report(build, data / f"{model}.onnx", flags, work / f"{model}_report")
            if model == "mlp" and q_art.stat().st_size >= f_art.stat().st_size:
                failures.append(f"mlp {mode}: artifact not smaller than float ({q_art.stat().st_size} bytes)")
    return failures


def check_report(build: Path, model: Path, flags, out: Path) -> list[str]:
    """--quant-report: every matmul and conv listed with its precision and static
    scales, matmuls with a finite SQNR; an excluded node stays float with the
    reason."""
    import json
    out.mkdir(parents=True, exist_ok=True)
    failures = []
    exclude = "mm2" if model.stem == "mlp" else None
    extra = ["--exclude", exclude] if exclude else []
    run([build / "bin" / "v4fc", "compile", model, "-o", out / "m.v4f", *flags, *extra,
         "--quant-report", out / "report.json"])
    report = json.loads((out / "report.json").read_text())
    layers = report["layers"]
    want_layers = 3  # mlp: 3 matmuls; cnn: 2 convs and the Gemm
    if len(layers) != want_layers or report["mode"] != "int8" or report["calibration"]["samples"] != 256:
        failures.append(f"{model.stem} report: {len(layers)} layers (want {want_layers}), header {report}")
    if exclude and sum(exclude in layer["nodes"] for layer in layers) != 1:
        failures.append(f"{model.stem} report: no single layer from node {exclude}: {layers}")
    for layer in layers:
        if exclude in layer["nodes"]:
            if layer["precision"] != "float32" or "exclude" not in layer.get("reason", ""):
                failures.append(f"{model.stem} report: excluded {exclude} is {layer}")
            continue
        act = layer.get("activation", {})
        conv = layer.get("op") == "conv"
        if (layer["precision"] != "int8" or act.get("quantization") != "static" or not act.get("scale", 0) > 0
                or (not conv and (layer.get("sqnr_db") is None or not layer["sqnr_db"] > 20))):
            failures.append(f"{model.stem} report: layer {layer}")
    summary = report["summary"]
    if summary["int8"] + summary["float32"] != want_layers:
        failures.append(f"{model.stem} report: summary {summary}")
    sqnr = ", ".join(f"{'+'.join(l['nodes'])} {l['sqnr_db']:.1f} dB" for l in layers if l.get("sqnr_db") is not None)
    print(f"  {model.stem} --quant-report: {summary['int8']} int8, {summary['float32']} float32; SQNR {sqnr}  "
          f"{'ok' if not failures else 'FAIL'}")
    return failures


def exclude_several(build: Path, work: Path) -> list[str]:
    """--exclude with several names keeps exactly those float (the pass's
    option once held a dangling reference to the name list)."""
    import json
    out = work / "exclude"
    out.mkdir(parents=True, exist_ok=True)
    failures = []
    for names in ["fc1,mm2", "fc1,mm2,mm3"]:
        run([build / "bin" / "v4fc", "compile", work / "digits" / "mlp.onnx", "-o", out / "m.v4f",
             "--quantize=dynamic-int8", "--exclude", names, "--quant-report", out / "r.json"])
        layers = json.loads((out / "r.json").read_text())["layers"]
        kept = sorted(layer["nodes"][0] for layer in layers if layer["precision"] == "float32")
        ok = kept == sorted(names.split(","))
        print(f"  --exclude {names:12s} float32 layers {kept}  {'ok' if ok else 'FAIL'}")
        if not ok:
            failures.append(f"--exclude {names}: float32 layers {kept}")
    return failures


def qdq_models(build: Path, work: Path) -> list[str]:
    """QDQ models made by ONNX Runtime's quantize_static from the digits MLP
    and CNN (uint8 and int8 activations, per-tensor and per-channel weights)
    compile, without --quantize, to integer dispatches (v4fc inspect --plan
    shows them; v4f-fold-qdq: matmuls and convs) and match ORT running the same
    QDQ model within one quantization step of the output."""
    from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static
    import onnxruntime as ort
    data = work / "digits"
    out = work / "qdq"
    out.mkdir(parents=True, exist_ok=True)
    failures = []
    cases = [("mlp", pc, act) for pc, act in [(False, QuantType.QUInt8), (True, QuantType.QUInt8),
                                              (True, QuantType.QInt8)]]
    cases += [("cnn", pc, act) for pc, act in [(False, QuantType.QUInt8), (True, QuantType.QInt8)]]
    for model, per_channel, act in cases:
        tag = f"{model}_{'pc' if per_channel else 'pt'}_{act.name}"
        cal_m = np.load(data / f"cal_{model}.npz")["x"]
        x_m = np.load(data / f"val_{model}.npz")["x"]

        class ModelReader(CalibrationDataReader):
            def __init__(self):
                self.it = iter([{"x": cal_m[i:i + 1]} for i in range(64)])

            def get_next(self):
                return next(self.it, None)

        qmodel = out / f"{tag}.onnx"
        quantize_static(str(data / f"{model}.onnx"), str(qmodel), ModelReader(), quant_format=QuantFormat.QDQ,
                        per_channel=per_channel, activation_type=act, weight_type=QuantType.QInt8)
        got, art = compile_and_run(build, qmodel, x_m, out / tag, [], out_name="logits")
        plan = run([build / "bin" / "v4fc", "inspect", art, "--plan"])
        integer = [line for line in plan.splitlines() if " int8 " in line and line.rstrip().endswith("'")]
        gemms = sum(1 for line in integer if "quantized_matmul" in line)
        convs = sum(1 for line in integer if "quantized_conv" in line)
        want = (3, 0) if model == "mlp" else (1, 2)  # cnn: the Gemm and both convs
        ref = ort.InferenceSession(str(qmodel), providers=["CPUExecutionProvider"]).run(None, {"x": x_m})[0]
        step = float(numpy_helper.to_array(next(i for i in onnx.load(str(qmodel)).graph.initializer
                                                if i.name == "logits_scale")))
        steps = float(np.abs(got - ref).max() / step)
        ok = (gemms, convs) == want and steps <= 1 + 1e-4
        print(f"  QDQ {tag:18s} {gemms} integer GEMMs, {convs} integer convs, max |v4f - ORT| = {steps:.2f} "
              f"output steps  {'ok' if ok else 'FAIL'}")
        if not ok:
            failures.append(f"QDQ {tag}: {gemms} integer GEMMs, {convs} integer convs (want {want}), "
                            f"{steps:.2f} steps from ORT")
    return failures


def dynamic_models(build: Path, work: Path) -> list[str]:
    """Models made by ONNX Runtime's quantize_dynamic from the digits MLP
    (DynamicQuantizeLinear -> MatMulInteger -> Cast -> Mul; int8 and uint8
    weights, per tensor and per channel) compile without --quantize to
    integer GEMMs (v4f.integer_matmul: `v4fc inspect --plan` shows them) and
    match ORT running the same model. The integer sums are exact; the
    activation quantization (DynamicQuantizeLinear, float32) can put a value
    at a rounding tie one step apart from ORT's, hence the 1e-4 relative
    tolerance rather than equality."""
    from onnxruntime.quantization import QuantType, quantize_dynamic
    import onnxruntime as ort
    data = work / "digits"
    out = work / "dynamic"
    out.mkdir(parents=True, exist_ok=True)
    x_m = np.load(data / "val_mlp.npz")["x"]
    failures = []
    for per_channel, wt in [(False, QuantType.QInt8), (True, QuantType.QInt8), (False, QuantType.QUInt8)]:
        tag = f"mlp_{'pc' if per_channel else 'pt'}_{wt.name}"
        qmodel = out / f"{tag}.onnx"
        quantize_dynamic(str(data / "mlp.onnx"), str(qmodel), per_channel=per_channel, weight_type=wt)
        n_mmi = sum(1 for n in onnx.load(str(qmodel)).graph.node if n.op_type == "MatMulInteger")
        got, art = compile_and_run(build, qmodel, x_m, out / tag, [], out_name="logits")
        plan = run([build / "bin" / "v4fc", "inspect", art, "--plan"])
        gemms = sum(1 for line in plan.splitlines()
                    if "integer_matmul" in line and " int8 " in line and line.rstrip().endswith("'"))
        ref = ort.InferenceSession(str(qmodel), providers=["CPUExecutionProvider"]).run(None, {"x": x_m})[0]
        err = float(np.abs(got - ref).max() / np.abs(ref).max())
        agree = float((got.argmax(1) == ref.argmax(1)).mean())
        ok = n_mmi == 3 and gemms == n_mmi and err <= 1e-4 and agree == 1.0
        print(f"  dynamic {tag:16s} {gemms}/{n_mmi} MatMulInteger as integer GEMMs, rel diff from ORT {err:.1e}, "
              f"top-1 agreement {agree:.4f}  {'ok' if ok else 'FAIL'}")
        if not ok:
            failures.append(f"quantize_dynamic {tag}: {gemms} integer GEMMs of {n_mmi} MatMulInteger (want 3), "
                            f"rel diff {err:.2e}, top-1 agreement {agree}")
    return failures


def qlinear_models(build: Path, work: Path) -> list[str]:
    """QOperator models (QLinearMatMul, QLinearConv with uint8 activations and
    int8 weights of zero point 0, per-tensor and per-channel, an int32 bias)
    compile to integer dispatches (v4f-fold-qdq) and equal ONNX Runtime's
    outputs within one step."""
    import onnxruntime as ort
    out = work / "qlinear"
    out.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(21)
    f32 = lambda v: numpy_helper.from_array(np.asarray(v, np.float32))  # noqa: E731

    def init(name, v):
        t = numpy_helper.from_array(v)
        t.name = name
        return t

    cases = []
    # QLinearMatMul: a uint8 [5, 64] x b int8 [64, 24] (per tensor) -> uint8.
    inits = [init("sa", np.array(0.05, np.float32)), init("za", np.array(120, np.uint8)),
             init("b", rng.integers(-127, 128, (64, 24)).astype(np.int8)), init("sb", np.array(0.02, np.float32)),
             init("zb", np.array(0, np.int8)), init("sy", np.array(0.3, np.float32)),
             init("zy", np.array(128, np.uint8))]
    node = helper.make_node("QLinearMatMul", ["a", "sa", "za", "b", "sb", "zb", "sy", "zy"], ["y"], name="qmm")
    cases.append(("qlinear_matmul", node, inits, "a", [5, 64], "quantized_matmul"))
    # QLinearConv: x uint8 [1, 8, 10, 10], w int8 [16, 8, 3, 3] per channel,
    # int32 bias, pads 1, stride 2 -> uint8.
    inits = [init("sx", np.array(0.04, np.float32)), init("zx", np.array(100, np.uint8)),
             init("w", rng.integers(-127, 128, (16, 8, 3, 3)).astype(np.int8)),
             init("sw", (rng.random(16) * 0.02 + 0.005).astype(np.float32)), init("zw", np.zeros(16, np.int8)),
             init("sy", np.array(0.5, np.float32)), init("zy", np.array(120, np.uint8)),
             init("bias", rng.integers(-2000, 2000, 16).astype(np.int32))]
    node = helper.make_node("QLinearConv", ["x", "sx", "zx", "w", "sw", "zw", "sy", "zy", "bias"], ["y"], name="qconv",
                            pads=[1, 1, 1, 1], strides=[2, 2], kernel_shape=[3, 3])
    cases.append(("qlinear_conv", node, inits, "x", [1, 8, 10, 10], "quantized_conv"))
    failures = []
    for name, node, inits, in_name, shape, kernel in cases:
        g = helper.make_graph([node], name, [helper.make_tensor_value_info(in_name, TensorProto.UINT8, shape)],
                              [helper.make_tensor_value_info("y", TensorProto.UINT8, None)], inits)
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
        m.ir_version = 8
        model = out / f"{name}.onnx"
        onnx.save(m, str(model))
        x = rng.integers(0, 256, shape).astype(np.uint8)
        got, art = compile_and_run(build, model, x, out / name, [], in_name=in_name)
        plan = run([build / "bin" / "v4fc", "inspect", art, "--plan"])
        integer = sum(1 for line in plan.splitlines() if " int8 " in line and kernel in line)
        ref = ort.InferenceSession(str(model), providers=["CPUExecutionProvider"]).run(None, {in_name: x})[0]
        steps = int(np.abs(got.astype(np.int64) - ref.astype(np.int64)).max())
        ok = integer >= 2 and steps <= 1 and got.dtype == ref.dtype
        print(f"  {name:15s} {integer} integer dispatches, max |v4f - ORT| = {steps} steps "
              f"({int((got != ref).sum())} of {ref.size} differ)  {'ok' if ok else 'FAIL'}")
        if not ok:
            failures.append(f"{name}: {integer} integer dispatches, {steps} steps from ORT, dtype {got.dtype}")
    return failures


def accuracy_budget(build: Path, work: Path) -> list[str]:
    """--accuracy-budget on the held-out digits split in two: the even half is
    the validation set v4fc searches on, the odd half is only measured. The
    artifact v4fc ships must lose at most the budget on the validation half
    (measured here with v4f-run, not taken from the report), and the report's
    search must be consistent: all-quantized first, float layers only when
    that missed the budget."""
    import json
    data = work / "digits"
    out = work / "budget"
    out.mkdir(parents=True, exist_ok=True)
    labels = np.load(data / "labels.npy")
    failures = []
    for model, mode, budget in [("mlp", "int4-weight", 0.5), ("mlp", "int4-weight:32", 0.5),
                                ("cnn", "int4-weight", 0.5), ("mlp", "dynamic-int8", 0.5)]:
        x = np.load(data / f"val_{model}.npz")["x"]
        np.savez(out / f"v_{model}.npz", x=x[0::2])
        np.save(out / "v_labels.npy", labels[0::2])
        tag = f"{model}_{mode.replace(':', '_')}"
        run([build / "bin" / "v4fc", "compile", data / f"{model}.onnx", "-o", out / f"{tag}.v4f", f"--quantize={mode}",
             "--accuracy-budget", str(budget), "--validation-data", out / f"v_{model}.npz", "--labels",
             out / "v_labels.npy", "--quant-report", out / f"{tag}.json"])
        report = json.loads((out / f"{tag}.json").read_text())["accuracy_budget"]
        f_out, _ = compile_and_run(build, data / f"{model}.onnx", x, out / f"{tag}_f", [], out_name="logits")
        q_out = np.load(out / f"{tag}_f" / "o" / "logits.npy")
        np.save(out / "x.npy", x)
        run([build / "bin" / "v4f-run", out / f"{tag}.v4f", "--input", f"x={out / 'x.npy'}", "--output-dir",
             out / f"{tag}_q", "--print", "0"])
        q_out = np.load(out / f"{tag}_q" / "logits.npy")
        f_pred, q_pred = f_out.argmax(1), q_out.argmax(1)
        val_loss = 100 * float((f_pred[0::2] == labels[0::2]).mean() - (q_pred[0::2] == labels[0::2]).mean())
        test_loss = 100 * float((f_pred[1::2] == labels[1::2]).mean() - (q_pred[1::2] == labels[1::2]).mean())
        first = report["trials"][0]
        ok = (val_loss <= budget + 1e-9 and abs(val_loss - report["loss_points"]) < 1e-3
              and first["float32_layers"] == 0
              and (report["float32_layers"] == 0) == (first["loss_points"] <= budget + 1e-9))
        print(f"  budget {model} {mode:15s} {budget} points: all quantized loses {first['loss_points']:.2f}, "
              f"kept {report['float32_layers']} layer(s) float -> validation loss {val_loss:.2f} "
              f"(other half {test_loss:+.2f}), {len(report['trials'])} trial(s)  {'ok' if ok else 'FAIL'}")
        if not ok:
            failures.append(f"accuracy budget {model} {mode}: validation loss {val_loss:.2f}, report {report}")
    return failures


def bad_input(build: Path, work: Path) -> list[str]:
    """Each refusal: non-zero exit, a message naming the problem, no artifact."""
    data = work / "digits"
    model = data / "mlp.onnx"
    bad = work / "bad"
    bad.mkdir(parents=True, exist_ok=True)
    good = np.load(data / "cal_mlp.npz")["x"]
    nan = good.copy()
    nan[5, 3] = np.nan
    np.savez(bad / "wrong_name.npz", y=good)
    np.savez(bad / "wrong_shape.npz", x=good[:, :63])
    np.savez(bad / "wrong_dtype.npz", x=good.astype(np.float64))
    np.savez(bad / "empty.npz", x=good[:0])
    np.savez(bad / "nan.npz", x=nan)
    np.savez(bad / "extra.npz", x=good, mask=good)
    (bad / "corrupt.npz").write_bytes(b"PK\x03\x04 this is not a zip archive" * 3)
    np.savez_compressed(bad / "compressed.npz", x=good)
    np.save(bad / "labels.npy", np.zeros(len(good), np.int64))
    np.save(bad / "labels_short.npy", np.zeros(len(good) - 1, np.int64))
    np.save(bad / "labels_float.npy", np.zeros(len(good), np.float32))
    cases = [
        ("wrong name", ["--quantize=int8", "--calibration-data", bad / "wrong_name.npz"], "names no input"),
        ("extra array", ["--quantize=int8", "--calibration-data", bad / "extra.npz"], "'mask' names no input"),
        ("wrong shape", ["--quantize=int8", "--calibration-data", bad / "wrong_shape.npz"], "dim 1 differs"),
        ("wrong dtype", ["--quantize=int8", "--calibration-data", bad / "wrong_dtype.npz"], "is float64"),
        ("empty set", ["--quantize=int8", "--calibration-data", bad / "empty.npz"], "is empty"),
        ("NaN", ["--quantize=int8", "--calibration-data", bad / "nan.npz"], "NaN or infinity (sample 5)"),
        ("corrupt file", ["--quantize=int8", "--calibration-data", bad / "corrupt.npz"], "not a .npz"),
        ("missing file", ["--quantize=int8", "--calibration-data", bad / "nope.npz"], "nope.npz"),
        ("no data", ["--quantize=int8"], "needs --calibration-data"),
        ("bad method", ["--quantize=int8", "--calibration-data", bad / "compressed.npz",
                        "--calibration-method=percentile:150"], "percentile must be"),
        ("exclude no node", ["--quantize=dynamic-int8", "--exclude", "fc1,no_such_node"],
         "'no_such_node' names no node"),
        ("bad int4 group", ["--quantize=int4-weight:12"], "bad int4-weight group ':12'"),
        ("int4 per-channel", ["--quantize=int4-weight", "--per-channel"], "--per-channel applies to the int8"),
        ("zero points, int8", ["--quantize=dynamic-int8", "--int4-zero-points"],
         "--int4-zero-points applies to --quantize=int4-weight only"),
        ("zero points, w4a8", ["--quantize=w4a8", "--int4-zero-points"],
         "--int4-zero-points applies to --quantize=int4-weight only"),
        ("bad w4a8 group", ["--quantize=w4a8:20"], "bad w4a8 group ':20'"),
        ("unknown mode", ["--quantize=int3"], "unknown mode 'int3'"),
        ("budget, no data", ["--quantize=int4-weight", "--accuracy-budget", "0.5"], "needs --quantize and "
         "--validation-data"),
        ("labels, no budget", ["--quantize=int4-weight", "--labels", bad / "labels.npy"], "--accuracy-budget only"),
        ("labels count", ["--quantize=int4-weight", "--accuracy-budget", "0.5", "--validation-data",
                          bad / "compressed.npz", "--labels", bad / "labels_short.npy"], "one class index per"),
        ("labels dtype", ["--quantize=int4-weight", "--accuracy-budget", "0.5", "--validation-data",
                          bad / "compressed.npz", "--labels", bad / "labels_float.npy"], "want int64 or int32"),
        ("validation name", ["--quantize=int4-weight", "--accuracy-budget", "0.5", "--validation-data",
                             bad / "wrong_name.npz"], "(validation data): array 'y' names no input"),
    ]
    failures = []
    for name, flags, expect in cases:
        art = bad / "out.v4f"
        p = subprocess.run([build / "bin" / "v4fc", "compile", model, "-o", art, *flags], capture_output=True,
                           text=True)
        msg = (p.stderr + p.stdout).strip().splitlines()
        ok = p.returncode != 0 and expect in p.stderr and not art.exists() and \
            not [f for f in bad.iterdir() if f.name.startswith("out.v4f")]
        print(f"  refuse {name:16s} exit {p.returncode}  {msg[0] if msg else '(no message)'}  {'ok' if ok else 'FAIL'}")
        if not ok:
            failures.append(f"bad input {name}: exit {p.returncode}, stderr {p.stderr!r} (want {expect!r})")
    # The same data compressed (np.savez_compressed) is accepted.
    p = subprocess.run([build / "bin" / "v4fc", "compile", model, "-o", bad / "ok.v4f", "--quantize=int8",
                        "--calibration-data", bad / "compressed.npz"], capture_output=True, text=True)
    ok = p.returncode == 0 and (bad / "ok.v4f").exists()
    print(f"  accept np.savez_compressed calibration data  {'ok' if ok else 'FAIL'}")
    if not ok:
        failures.append(f"compressed calibration data refused: {p.stderr}")
    return failures


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default="build", type=Path)
    ap.add_argument("--keep", type=Path, help="work directory to keep (default: a temporary one)")
    args = ap.parse_args()
    build = args.build.resolve()
    with tempfile.TemporaryDirectory(prefix="v4f-quant-") as tmp:
        work = args.keep.resolve() if args.keep else Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        print("quantization: integer kernels vs their arithmetic")
        failures = exactness(build, work)
        failures += conv_exactness(build, work)
        failures += int8_layers.chain_exactness(build, work)
        failures += int8_layers.concat_exactness(build, work)
        failures += int8_layers.movement_exactness(build, work)
        failures += int8_layers.integer_matmul_exactness(build, work)
        print("quantization: accuracy on the trained digits models (360 held-out samples)")
        failures += accuracy(build, work)
        print("quantization: --accuracy-budget")
        failures += accuracy_budget(build, work)
        failures += exclude_several(build, work)
        print("quantization: QDQ models from ONNX Runtime's quantizer")
        failures += qdq_models(build, work)
        print("quantization: dynamic models from ONNX Runtime's quantize_dynamic (MatMulInteger)")
        failures += dynamic_models(build, work)
        print("quantization: QOperator models (QLinearMatMul, QLinearConv)")
        failures += qlinear_models(build, work)
        print("quantization: bad input is refused")
        failures += bad_input(build, work)
    if failures:
        print("FAILED:\n  " + "\n  ".join(failures))
        return 1
    print("quantization: all passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
