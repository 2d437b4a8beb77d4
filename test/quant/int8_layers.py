"""Quantization tests of int8 between layers and integer inputs: int8 carried
from one integer conv to the next (v4f-carry-int8: through MaxPool, skip
connections, Concat, Transpose, Reshape) and MatMulInteger on the integer
GEMM, each against the emulated arithmetic (quant_common.py). Run by
run_quant_tests.py."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from quant_common import compile_and_run, host_has_avx_vnni, max_pool, quantized_conv, run


def save_model(work: Path, name: str, nodes, inits, x: np.ndarray, out_name: str = "y") -> Path:
    """The graph of `nodes` with one float input "x" shaped like `x` and one
    float output, saved as work/<name>.onnx."""
    m = helper.make_model(helper.make_graph(nodes, name, [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                                                                       list(x.shape))],
                                            [helper.make_tensor_value_info(out_name, TensorProto.FLOAT, None)], inits),
                          opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    model = work / f"{name}.onnx"
    onnx.save(m, str(model))
    return model


def run_int8(build: Path, model: Path, x: np.ndarray, cal: Path, out: Path, flags=(), out_name: str = "y"):
    """Compiles `model` with --quantize=int8 on calibration `cal` (plus
    `flags`), runs it on `x`; returns the output, the artifact, the quant
    report's layers by first node and their static (scale, zero point)."""
    out.mkdir(parents=True, exist_ok=True)
    got, art = compile_and_run(build, model, x, out, ["--quantize=int8", "--calibration-data", cal,
                                                      "--quant-report", out / "report.json", *flags],
                               out_name=out_name)
    layer = {l["nodes"][0]: l for l in json.loads((out / "report.json").read_text())["layers"]}
    static = {n: (np.float32(l["activation"]["scale"]), l["activation"]["zero_point"]) for n, l in layer.items()}
    return got, art, layer, static


def chain_exactness(build: Path, work: Path) -> list[str]:
    """int8 carried between integer convs (v4f-carry-int8): conv -> ReLU ->
    MaxPool -> two convs reading the pooled int8 values -> ... A conv whose
    users are all int8 convs of one scale stores requantized int8 and they
    read it without quantizing; one that also feeds a conv's residual hands
    it on in int8 too (added back as (q - zp) * s); one that reaches a conv
    only as its residual stays float. The output must equal the float chain of the
    int8 conv arithmetic (each conv quantizing its float input), with the
    scales v4fc reports; the report and the plan must show the int8 hand-offs."""
    rng = np.random.default_rng(23)
    # name, input, O, k, stride, pad
    specs = [("c1", "x", 16, 3, 1, 1), ("c2", "p", 24, 1, 1, 0), ("c3", "p", 24, 3, 2, 1),
             ("c4", "a2", 24, 3, 2, 1), ("c5", "a4", 32, 1, 1, 0), ("c6", "a5", 24, 3, 1, 1)]
    C0 = 8
    # Wide rows: both the contiguous (stride 1 and 2) and the gathered int8 loads.
    x = (rng.standard_normal((2, C0, 17, 70)) * 1.5 + 0.3).astype(np.float32)
    chans = {"x": C0}
    weights, biases, inits, nodes = {}, {}, [], []
    for name, src, O, k, st, pd in specs:
        w = (rng.standard_normal((O, chans[src], k, k)) * (1.0 / np.sqrt(chans[src] * k * k))).astype(np.float32)
        b = (rng.standard_normal(O) * 0.1).astype(np.float32)
        weights[name], biases[name] = w, b
        inits += [numpy_helper.from_array(w, f"W{name}"), numpy_helper.from_array(b, f"B{name}")]
        nodes.append(helper.make_node("Conv", [src, f"W{name}", f"B{name}"], [f"o{name}"], name=name,
                                      strides=[st, st], pads=[pd] * 4))
        if name == "c1":
            nodes += [helper.make_node("Relu", ["oc1"], ["a1"], name="r1"),
                      helper.make_node("MaxPool", ["a1"], ["p"], name="pool", kernel_shape=[3, 3],
                                       strides=[2, 2], pads=[1, 1, 1, 1])]
            chans["p"] = O
        elif name == "c2":
            nodes.append(helper.make_node("Relu", ["oc2"], ["a2"], name="r2"))
            chans["a2"] = O
        elif name == "c4":
            # c3 + c4 -> ReLU: c3 reaches c4 only as its residual (stays float).
            nodes += [helper.make_node("Add", ["oc4", "oc3"], ["s4"], name="add4"),
                      helper.make_node("Relu", ["s4"], ["a4"], name="r4")]
            chans["a4"] = O
        elif name == "c5":
            nodes.append(helper.make_node("Relu", ["oc5"], ["a5"], name="r5"))
            chans["a5"] = O
    # a4 feeds c5 (input, int8) and c6's residual: carried in int8 as both.
    nodes += [helper.make_node("Add", ["oc6", "a4"], ["s6"], name="add6"),
              helper.make_node("Relu", ["s6"], ["y"], name="out")]
    model = save_model(work, "chain", nodes, inits, x)
    np.savez(work / "chain_cal.npz", x=(rng.standard_normal((4,) + x.shape) * 1.5 + 0.3).astype(np.float32))
    failures = []
    for label, extra in [("host", []), ("v3", ["--target-cpu", "x86-64-v3"])]:
        got, art, layer, static = run_int8(build, model, x, work / "chain_cal.npz", work / f"chain_{label}",
                                           ["--per-channel", *extra])
        conv = lambda n, v, res=None, relu=False: quantized_conv(  # noqa: E731
            v, weights[n], biases[n], res, relu, (specs_d[n][4],) * 2, (specs_d[n][5],) * 4, (1, 1), True, static[n])
        specs_d = {s[0]: s for s in specs}
        a1 = conv("c1", x, relu=True)
        p = max_pool(a1, 3, 2, 1)
        a2 = conv("c2", p, relu=True)
        o3 = conv("c3", p)
        a4 = conv("c4", a2, res=o3, relu=True)
        a5 = conv("c5", a4, relu=True)
        # The skip connection carried in int8 on c5's input grid.
        s5, z5 = static["c5"]
        inv5 = np.float32(1) / s5
        q4 = np.clip(np.round(a4 * inv5) + np.float32(z5), -128, 127)
        want = conv("c6", a5, res=((q4 - np.float32(z5)).astype(np.float32) * s5).astype(np.float32), relu=True)
        err = float(np.abs(got - want).max() / np.abs(want).max())
        carried_out = sorted(n for n, l in layer.items() if l.get("output", {}).get("precision") == "int8")
        int8_in = sorted(n for n, l in layer.items() if l["activation"].get("input") == "int8")
        int8_res = sorted(n for n, l in layer.items() if l.get("residual") == "int8")
        plan = run([build / "bin" / "v4fc", "inspect", "--plan", art])
        ok = (err <= 1e-5 and carried_out == ["c1", "c2", "c4", "c5"] and int8_in == ["c2", "c3", "c4", "c5", "c6"]
              and int8_res == ["c6"] and plan.count("int8 im2col") == 5)
        print(f"  int8 carried {label:5s} conv->pool->conv chain: rel err {err:.2e}, int8 out {carried_out}, "
              f"int8 in {int8_in}, int8 residual {int8_res}  {'ok' if ok else 'FAIL'}")
        if not ok:
            failures.append(f"int8 chain {label}: rel err {err:.3e}, int8 outputs {carried_out} (want c1 c2 c4 c5), "
                            f"int8 inputs {int8_in} (want c2..c6), int8 residuals {int8_res} (want c6), "
                            f"'int8 im2col' dispatches {plan.count('int8 im2col')} (want 5)")
    return failures


def concat_exactness(build: Path, work: Path) -> list[str]:
    """int8 through a Concat (v4f-carry-int8): two convs feeding only a
    channel Concat read by one conv requantize to that conv's scale and the
    Concat moves int8; the output equals the emulated float chain."""
    rng = np.random.default_rng(29)
    x = (rng.standard_normal((1, 6, 12, 37)) * 1.2).astype(np.float32)
    specs = {"a": ("x", 5, 1, 0), "b": ("x", 7, 3, 1), "c": ("cat", 9, 3, 1)}
    chans = {"x": 6, "cat": 12}
    weights, biases, inits, nodes = {}, {}, [], []
    for name, (src, O, k, pd) in specs.items():
        w = (rng.standard_normal((O, chans[src], k, k)) / np.sqrt(chans[src] * k * k)).astype(np.float32)
        b = (rng.standard_normal(O) * 0.1).astype(np.float32)
        weights[name], biases[name] = w, b
        inits += [numpy_helper.from_array(w, f"W{name}"), numpy_helper.from_array(b, f"B{name}")]
        nodes.append(helper.make_node("Conv", [src, f"W{name}", f"B{name}"], [f"o{name}"], name=name, pads=[pd] * 4))
        if name == "b":
            nodes.append(helper.make_node("Concat", ["oa", "ob"], ["cat"], name="cat", axis=1))
    model = save_model(work, "cat", nodes, inits, x, out_name="oc")
    np.savez(work / "cat_cal.npz", x=(rng.standard_normal((4,) + x.shape) * 1.2).astype(np.float32))
    got, art, layer, static = run_int8(build, model, x, work / "cat_cal.npz", work / "cat", out_name="oc")
    conv = lambda n, v: quantized_conv(v, weights[n], biases[n], None, False, (1, 1),  # noqa: E731
                                       (specs[n][3],) * 4, (1, 1), False, static[n])
    want = conv("c", np.concatenate([conv("a", x), conv("b", x)], axis=1))
    err = float(np.abs(got - want).max() / np.abs(want).max())
    outs = sorted(n for n, l in layer.items() if l.get("output", {}).get("precision") == "int8")
    ok = err <= 1e-5 and outs == ["a", "b"] and layer["c"]["activation"].get("input") == "int8"
    print(f"  int8 through Concat: rel err {err:.2e}, int8 outputs {outs}, c reads "
          f"{layer['c']['activation'].get('input')}  {'ok' if ok else 'FAIL'}")
    return [] if ok else [f"int8 Concat: rel err {err:.3e}, int8 outputs {outs} (want a, b), "
                          f"c input {layer['c']['activation'].get('input')} (want int8)"]


def movement_exactness(build: Path, work: Path) -> list[str]:
    """int8 through Transpose and Reshape (v4f-carry-int8): conv ->
    Transpose(H, W) -> conv -> Reshape -> conv; each producer requantizes
    for its consumer and the data movement ops move bytes; the output equals
    the emulated float chain."""
    rng = np.random.default_rng(31)
    x = (rng.standard_normal((1, 4, 10, 16)) * 1.1).astype(np.float32)
    weights, biases, inits = {}, {}, []
    for name, (O, C, k) in {"p": (8, 4, 3), "q": (6, 8, 3), "r": (5, 3, 1)}.items():
        weights[name] = (rng.standard_normal((O, C, k, k)) / np.sqrt(C * k * k)).astype(np.float32)
        biases[name] = (rng.standard_normal(O) * 0.1).astype(np.float32)
        inits += [numpy_helper.from_array(weights[name], f"W{name}"), numpy_helper.from_array(biases[name], f"B{name}")]
    inits.append(numpy_helper.from_array(np.array([1, 3, 32, 10], np.int64), "shape"))
    nodes = [helper.make_node("Conv", ["x", "Wp", "Bp"], ["op"], name="p", pads=[1] * 4),
             helper.make_node("Transpose", ["op"], ["tp"], name="tr", perm=[0, 1, 3, 2]),
             helper.make_node("Conv", ["tp", "Wq", "Bq"], ["oq"], name="q", pads=[1] * 4),
             helper.make_node("Reshape", ["oq", "shape"], ["rq"], name="rs"),
             helper.make_node("Conv", ["rq", "Wr", "Br"], ["y"], name="r")]
    model = save_model(work, "movement", nodes, inits, x)
    np.savez(work / "movement_cal.npz", x=(rng.standard_normal((4,) + x.shape) * 1.1).astype(np.float32))
    got, art, layer, static = run_int8(build, model, x, work / "movement_cal.npz", work / "movement",
                                       ["--per-channel"])
    conv = lambda n, v, pad: quantized_conv(v, weights[n], biases[n], None, False, (1, 1), (pad,) * 4,  # noqa: E731
                                            (1, 1), True, static[n])
    a = conv("p", x, 1).transpose(0, 1, 3, 2)
    want = conv("r", conv("q", a, 1).reshape(1, 3, 32, 10), 0)
    err = float(np.abs(got - want).max() / np.abs(want).max())
    outs = sorted(n for n, l in layer.items() if l.get("output", {}).get("precision") == "int8")
    ins = sorted(n for n, l in layer.items() if l["activation"].get("input") == "int8")
    ok = err <= 1e-5 and outs == ["p", "q"] and ins == ["q", "r"]
    print(f"  int8 through Transpose and Reshape: rel err {err:.2e}, int8 outputs {outs}, int8 inputs {ins}  "
          f"{'ok' if ok else 'FAIL'}")
    return [] if ok else [f"int8 Transpose/Reshape: rel err {err:.3e}, int8 outputs {outs} (want p, q), "
                          f"int8 inputs {ins} (want q, r)"]


def integer_matmul_exactness(build: Path, work: Path) -> list[str]:
    """MatMulInteger with a constant weight (v4f-fold-qdq -> v4f.integer_matmul,
    the integer GEMM with an int32 result) against numpy's exact int64 sums:
    uint8 / int8 activations with a run-time, a constant or no zero point,
    int8 / uint8 weights with none, one or per-column zero points, batch
    dims, odd K and N; the host's kernels, AVX2's and (where the CPU has it)
    AVX-VNNI's."""
    rng = np.random.default_rng(5)
    cases = [
        # name, A shape, A dtype, A zp (None / "input" / value), B dtype, B zp (None / scalar / "cols")
        ("u8_zp_input", (5, 37), np.uint8, "input", np.int8, None),
        ("s8_batched_u8w", (2, 3, 70), np.int8, -7, np.uint8, "cols"),
        ("u8_nozp_wzp", (1, 300), np.uint8, None, np.int8, 3),
        ("s8_rows", (33, 129), np.int8, "input", np.int8, "cols"),
    ]
    onnx_type = {np.uint8: TensorProto.UINT8, np.int8: TensorProto.INT8}
    failures = []
    for name, a_shape, a_dt, a_zp, b_dt, b_zp in cases:
        K, N = a_shape[-1], int(rng.integers(17, 41))
        info = np.iinfo(a_dt)
        a = rng.integers(info.min, info.max + 1, a_shape).astype(a_dt)
        binfo = np.iinfo(b_dt)
        b = rng.integers(binfo.min, binfo.max + 1, (K, N)).astype(b_dt)
        ins = [helper.make_tensor_value_info("a", onnx_type[a_dt], list(a_shape))]
        inits = [numpy_helper.from_array(b, "B")]
        inputs = {"a": a}
        node_in = ["a", "B", "", ""]
        za = np.zeros((), a_dt)
        if a_zp == "input":
            za = np.array(int(rng.integers(info.min, info.max + 1)), a_dt)
            ins.append(helper.make_tensor_value_info("za", onnx_type[a_dt], []))
            inputs["za"] = za
            node_in[2] = "za"
        elif a_zp is not None:
            za = np.array(a_zp, a_dt)
            inits.append(numpy_helper.from_array(za, "ZA"))
            node_in[2] = "ZA"
        zb = np.zeros((), b_dt)
        if b_zp == "cols":
            zb = rng.integers(binfo.min, binfo.max + 1, (N,)).astype(b_dt)
        elif b_zp is not None:
            zb = np.array(b_zp, b_dt)
        if b_zp is not None:
            inits.append(numpy_helper.from_array(zb, "ZB"))
            node_in[3] = "ZB"
        while node_in and node_in[-1] == "":
            node_in.pop()
        nodes = [helper.make_node("MatMulInteger", node_in, ["y"], name="mmi")]
        m = helper.make_model(helper.make_graph(nodes, "mmi", ins, [helper.make_tensor_value_info(
            "y", TensorProto.INT32, None)], inits), opset_imports=[helper.make_opsetid("", 17)])
        m.ir_version = 8
        model = work / f"mmi_{name}.onnx"
        onnx.save(m, str(model))
        want = np.matmul(a.astype(np.int64) - za.astype(np.int64), b.astype(np.int64) - zb.astype(np.int64))
        variants = [("host", []), ("v3", ["--target-cpu", "x86-64-v3"])]
        if host_has_avx_vnni():
            variants.append(("avxvnni", ["--target-cpu", "alderlake"]))
        for label, flags in variants:
            out = work / f"mmi_{name}_{label}"
            out.mkdir(parents=True, exist_ok=True)
            art = out / "model.v4f"
            run([build / "bin" / "v4fc", "compile", model, "-o", art, *flags])
            plan = run([build / "bin" / "v4fc", "inspect", "--plan", art])
            args = []
            for k, v in inputs.items():
                np.save(out / f"{k}.npy", v)
                args += ["--input", f"{k}={out / (k + '.npy')}"]
            run([build / "bin" / "v4f-run", art, *args, "--output-dir", out / "o", "--print", "0", "--threads", "2"])
            got = np.load(out / "o" / "y.npy")
            int8 = sum(1 for line in plan.splitlines() if "integer_matmul" in line and " int8 " in line)
            ok = got.dtype == np.int32 and got.shape == want.shape and np.array_equal(got, want) and int8 == 2
            print(f"  exact MatMulInteger {label:8s} {name:15s} A{list(a_shape)} K{K} N{N}  "
                  f"{'equal' if ok else 'DIFFERS'}  int8 dispatches {int8}  {'ok' if ok else 'FAIL'}")
            if not ok:
                failures.append(f"MatMulInteger {label} {name}: dtype {got.dtype}, shape {got.shape} vs {want.shape}, "
                                f"max diff {np.abs(got.astype(np.int64) - want).max() if got.shape == want.shape else '-'}"
                                f", int8 dispatches {int8} (want 2)")
    return failures
