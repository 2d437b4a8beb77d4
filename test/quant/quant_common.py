"""What the quantization tests share: the numpy emulation of v4f's integer
arithmetic (docs/quantization.md) and running v4fc / v4f-run."""

from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np

def host_has_avx_vnni() -> bool:
    """AVX-VNNI (vpdpbusd at 256 bits, VEX) on this CPU: then the AVX2 + AVX-VNNI
    kernels (`--target-cpu alderlake`) run here too."""
    try:
        return any(line.startswith("flags") and " avx_vnni" in line
                   for line in Path("/proc/cpuinfo").read_text().splitlines())
    except OSError:
        return False


# ---------------------------------------------------------------- emulation
def quantize_weight(w: np.ndarray, per_channel: bool):
    """Symmetric, [-127, 127], per output column or per tensor (v4f-quantize)."""
    s = np.abs(w).max(axis=0).astype(np.float32)
    if not per_channel:
        s[:] = s.max(initial=0)
    s = (s / np.float32(127)).astype(np.float32)
    s[~(s > 0)] = 1
    q = np.clip(np.round(w / s), -127, 127).astype(np.int64)
    return q, s


def activation_quant(lo: float, hi: float):
    """Static range -> (scale, zero point), widened to contain 0 (float32 arithmetic)."""
    lo, hi = np.float32(min(lo, 0)), np.float32(max(hi, 0))
    if not hi > lo:
        return np.float32(1), 0
    scale = np.float32((hi - lo) / np.float32(255))
    zp = int(np.clip(np.round(np.float32(-128) - lo / scale), -128, 127))
    return scale, zp


def quantized_matmul(a: np.ndarray, w: np.ndarray, bias, relu: bool, per_channel: bool,
                     static=None) -> np.ndarray:
    """The kernel's arithmetic: rows quantized (dynamic: symmetric per row at
    run time; static: one scale and zero point), int sums, float dequantization."""
    a2 = a.reshape(-1, a.shape[-1]).astype(np.float32)
    if static is None:
        m = np.abs(a2).max(axis=1) if a2.shape[1] else np.zeros(len(a2), np.float32)
        s = np.where(m > 0, m / np.float32(127), np.float32(1)).astype(np.float32)
        zp, qmin = 0, -127
    else:
        scale, zp = static
        s = np.full(len(a2), scale, np.float32)
        qmin = -128
    inv = (np.float32(1) / s).astype(np.float32)
    q = np.clip(np.round(a2 * inv[:, None]) + np.float32(zp), qmin, 127).astype(np.int64) - zp
    wq, ws = quantize_weight(w, per_channel)
    y = (q @ wq).astype(np.float32) * (s[:, None] * ws[None, :])
    if bias is not None:
        y = y + bias
    if relu:
        y = np.maximum(y, 0)
    return y.reshape(a.shape[:-1] + (w.shape[1],)).astype(np.float32)


def quantize_int4(w: np.ndarray, group: int, zero_points: bool = False):
    """Block-wise int4 (v4f-quantize int4-weight): per column, groups of `group`
    rows; the group's value of largest magnitude m maps to -8 (scale m / -8).
    With zero points (--int4-zero-points): the group's [min, max] (widened to
    contain 0) over the 16 levels, scale (max - min) / 15, zero point round(-min / scale); returns
    q - zero point."""
    K, N = w.shape
    q = np.zeros((K, N), np.int64)
    scales = np.ones(((K + group - 1) // group, N), np.float32)
    for g in range(scales.shape[0]):
        blk = w[g * group:(g + 1) * group]
        if zero_points:
            lo = np.minimum(blk.min(axis=0), 0).astype(np.float32)
            hi = np.maximum(blk.max(axis=0), 0).astype(np.float32)
            s = ((hi - lo) / np.float32(15)).astype(np.float32)
            s[~(s > 0)] = 1
            z = np.clip(np.round(-lo / s), 0, 15).astype(np.float32)
            scales[g] = s
            q[g * group:(g + 1) * group] = np.clip(np.round(blk / s) + z, 0, 15).astype(np.int64) - z.astype(np.int64)
            continue
        extreme = blk[np.abs(blk).argmax(axis=0), np.arange(N)].astype(np.float32)
        s = np.where(extreme != 0, extreme / np.float32(-8), np.float32(1)).astype(np.float32)
        scales[g] = s
        q[g * group:(g + 1) * group] = np.clip(np.round(blk / s), -8, 7)
    return q, scales


def int4_matmul(a: np.ndarray, w: np.ndarray, bias, relu: bool, group: int, zero_points: bool = False) -> np.ndarray:
    """Weight-only int4: float activations times the dequantized weight."""
    q, s = quantize_int4(w, group, zero_points)
    wd = (q * np.repeat(s, group, axis=0)[:len(q)]).astype(np.float64)
    y = a.reshape(-1, a.shape[-1]).astype(np.float64) @ wd
    if bias is not None:
        y = y + bias
    if relu:
        y = np.maximum(y, 0)
    return y.reshape(a.shape[:-1] + (w.shape[1],)).astype(np.float32)


def w4a8_matmul(a: np.ndarray, w: np.ndarray, bias, relu: bool, group: int) -> np.ndarray:
    """w4a8: rows quantized to int8 at run time (symmetric, per row), symmetric
    int4 weight groups, integer products summed per group and scaled by the
    group's scale, then by the row's scale."""
    a2 = a.reshape(-1, a.shape[-1]).astype(np.float32)
    m = np.abs(a2).max(axis=1) if a2.shape[1] else np.zeros(len(a2), np.float32)
    s = np.where(m > 0, m / np.float32(127), np.float32(1)).astype(np.float32)
    inv = (np.float32(1) / s).astype(np.float32)
    q = np.clip(np.round(a2 * inv[:, None]), -127, 127).astype(np.int64)
    qw, sw = quantize_int4(w, group)
    y = np.zeros((len(a2), w.shape[1]), np.float64)
    for g in range(sw.shape[0]):
        y += (q[:, g * group:(g + 1) * group] @ qw[g * group:(g + 1) * group]) * sw[g].astype(np.float64)
    y *= s[:, None]
    if bias is not None:
        y = y + bias
    if relu:
        y = np.maximum(y, 0)
    return y.reshape(a.shape[:-1] + (w.shape[1],)).astype(np.float32)


def run(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(map(str, cmd))} failed ({p.returncode}):\n{p.stdout}{p.stderr}")
    return p.stdout


def compile_and_run(build: Path, model: Path, x: np.ndarray, out: Path, flags, in_name="x", out_name="y"):
    out.mkdir(parents=True, exist_ok=True)
    art = out / "model.v4f"
    run([build / "bin" / "v4fc", "compile", model, "-o", art, *flags])
    np.save(out / "in.npy", x)
    run([build / "bin" / "v4f-run", art, "--input", f"{in_name}={out / 'in.npy'}", "--output-dir", out / "o",
         "--print", "0", "--threads", "2"])
    return np.load(out / "o" / f"{out_name}.npy"), art


def quantized_conv(x, w, bias, residual, relu, strides, pads, dil, per_channel, static) -> np.ndarray:
    """The int8 conv's arithmetic (v4f.quantized_conv): the input quantized with
    the static scale and zero point (the padding a real 0), weights per output
    channel or per tensor, int sums, float dequantization by act_scale *
    weight_scale[o], then bias, residual, ReLU."""
    scale, zp = static
    inv = np.float32(1) / np.float32(scale)
    q = np.clip(np.round(x.astype(np.float32) * inv) + np.float32(zp), -128, 127).astype(np.int64) - zp
    N, C, H, W = x.shape
    O, _, KH, KW = w.shape
    wq, ws = quantize_weight(w.reshape(O, -1).T, per_channel)  # [K, O]
    qp = np.pad(q, ((0, 0), (0, 0), (pads[0], pads[2]), (pads[1], pads[3])))
    OH = (H + pads[0] + pads[2] - dil[0] * (KH - 1) - 1) // strides[0] + 1
    OW = (W + pads[1] + pads[3] - dil[1] * (KW - 1) - 1) // strides[1] + 1
    cols = np.zeros((N, C, KH, KW, OH, OW), np.int64)
    for kh in range(KH):
        for kw in range(KW):
            h0, w0 = kh * dil[0], kw * dil[1]
            cols[:, :, kh, kw] = qp[:, :, h0:h0 + strides[0] * (OH - 1) + 1:strides[0],
                                    w0:w0 + strides[1] * (OW - 1) + 1:strides[1]]
    acc = np.einsum("ko,nkp->nop", wq, cols.reshape(N, C * KH * KW, OH * OW))
    y = acc.astype(np.float32) * (np.float32(scale) * ws)[None, :, None]
    y = y.reshape(N, O, OH, OW)
    if bias is not None:
        y = y + bias[None, :, None, None]
    if residual is not None:
        y = y + residual
    if relu:
        y = np.maximum(y, 0)
    return y.astype(np.float32)


def max_pool(x, k, s, p):
    """MaxPool (NCHW), the padding never chosen."""
    N, C, H, W = x.shape
    xp = np.pad(x, ((0, 0), (0, 0), (p, p), (p, p)), constant_values=-np.inf)
    OH, OW = (H + 2 * p - k) // s + 1, (W + 2 * p - k) // s + 1
    out = np.full((N, C, OH, OW), -np.inf, np.float32)
    for i in range(k):
        for j in range(k):
            out = np.maximum(out, xp[:, :, i:i + s * (OH - 1) + 1:s, j:j + s * (OW - 1) + 1:s])
    return out
