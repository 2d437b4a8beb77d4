#!/usr/bin/env python3
"""Trained test models for the quantization tests: an MLP and a small CNN on
scikit-learn's bundled digits data set (8x8 grey images, 10 classes; no
download).

Everything is deterministic and numpy-only (hand-written forward/backward,
Adam, fixed seeds), takes seconds on one core, and is exported to ONNX
(opset 17, IR version 8, float32 initializers):

  digits_models.py --out DIR [--check]

writes into DIR

  mlp.onnx       x f32[N,64]      -> Gemm(transB=1) 64->64, Relu,
                                     MatMul+Add 64->32, Relu,
                                     MatMul+Add 32->10        -> logits f32[N,10]
  cnn.onnx       x f32[N,1,8,8]   -> Conv 1->8 3x3 p1, Relu,
                                     Conv 8->16 3x3 p1, Relu,
                                     MaxPool 2x2 s2, Flatten,
                                     Gemm(transB=1) 256->10   -> logits f32[N,10]
  cal_mlp.npz / cal_cnn.npz   key "x": the first 256 training samples
  val_mlp.npz / val_cnn.npz   key "x": the 360 held-out samples
  labels.npy                  int64[360]: labels of the held-out samples

Pixels are scaled to [0, 1] (digits pixels are 0..16, divided by 16).
Split: load_digits(), permutation from np.random.default_rng(0), the last
360 samples are held out, the rest is the training set.

--check runs both models with ONNX Runtime on the held-out set, prints the
float top-1 and verifies ORT's predictions equal the numpy forward pass.

Output bytes are deterministic for the same package versions (the .npz
files are written with a fixed zip timestamp).  BLAS is limited to one
thread when this file is run as a script, so sums are done in the same
order on every run.
"""

from __future__ import annotations

import os

# One BLAS thread: reproducible summation order and the "one core" budget.
# Only effective when numpy has not been imported yet (i.e. for the CLI).
for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import argparse
import io
import sys
import time
import zipfile
from pathlib import Path

import numpy as np

N_VAL = 360
N_CAL = 256
OPSET = 17
IR_VERSION = 8


# --------------------------------------------------------------------------
# data

def load_split():
    """Return (x_train, y_train, x_val, y_val); x as float64 [n, 64] in [0,1]."""
    from sklearn.datasets import load_digits

    d = load_digits()
    x = d.data.astype(np.float64) / 16.0
    y = d.target.astype(np.int64)
    perm = np.random.default_rng(0).permutation(len(x))
    x, y = x[perm], y[perm]
    return x[:-N_VAL], y[:-N_VAL], x[-N_VAL:], y[-N_VAL:]


# --------------------------------------------------------------------------
# shared training pieces

def softmax_xent(logits, y):
    """Mean cross-entropy and its gradient w.r.t. the logits."""
    z = logits - logits.max(axis=1, keepdims=True)
    e = np.exp(z)
    p = e / e.sum(axis=1, keepdims=True)
    n = len(y)
    loss = -np.log(p[np.arange(n), y] + 1e-12).mean()
    g = p
    g[np.arange(n), y] -= 1.0
    return loss, g / n


class Adam:
    def __init__(self, params, lr, b1=0.9, b2=0.999, eps=1e-8, wd=0.0):
        self.p = params
        self.lr, self.b1, self.b2, self.eps, self.wd = lr, b1, b2, eps, wd
        self.m = {k: np.zeros_like(v) for k, v in params.items()}
        self.v = {k: np.zeros_like(v) for k, v in params.items()}
        self.t = 0

    def step(self, grads, lr=None):
        lr = self.lr if lr is None else lr
        self.t += 1
        c1 = 1.0 - self.b1 ** self.t
        c2 = 1.0 - self.b2 ** self.t
        for k, g in grads.items():
            if self.wd and self.p[k].ndim > 1:  # decoupled decay, weights only
                self.p[k] -= lr * self.wd * self.p[k]
            self.m[k] = self.b1 * self.m[k] + (1 - self.b1) * g
            self.v[k] = self.b2 * self.v[k] + (1 - self.b2) * g * g
            self.p[k] -= lr * (self.m[k] / c1) / (np.sqrt(self.v[k] / c2) + self.eps)


def he(rng, shape, fan_in):
    return rng.standard_normal(shape) * np.sqrt(2.0 / fan_in)


def train_loop(params, grad_fn, x, y, *, epochs, batch, lr, wd, seed):
    """Mini-batch Adam with a cosine learning-rate decay."""
    rng = np.random.default_rng(seed)
    opt = Adam(params, lr, wd=wd)
    n = len(x)
    steps = epochs * ((n + batch - 1) // batch)
    step = 0
    for _ in range(epochs):
        order = rng.permutation(n)
        for i in range(0, n, batch):
            idx = order[i:i + batch]
            _, grads = grad_fn(params, x[idx], y[idx])
            cur = lr * 0.5 * (1.0 + np.cos(np.pi * step / steps))
            opt.step(grads, cur)
            step += 1
    return params


# --------------------------------------------------------------------------
# MLP  (weights stored in the ONNX layout: W1 [64out, 64in] for Gemm
# transB=1, W2 [64, 32] and W3 [32, 10] for MatMul)

def mlp_init(seed=1):
    rng = np.random.default_rng(seed)
    return {
        "W1": he(rng, (64, 64), 64), "b1": np.zeros(64),
        "W2": he(rng, (64, 32), 64), "b2": np.zeros(32),
        "W3": he(rng, (32, 10), 32), "b3": np.zeros(10),
    }


def mlp_forward(p, x):
    h1 = np.maximum(x @ p["W1"].T + p["b1"], 0)
    h2 = np.maximum(h1 @ p["W2"] + p["b2"], 0)
    return h2 @ p["W3"] + p["b3"]


def mlp_grad(p, x, y):
    a1 = x @ p["W1"].T + p["b1"]
    h1 = np.maximum(a1, 0)
    a2 = h1 @ p["W2"] + p["b2"]
    h2 = np.maximum(a2, 0)
    logits = h2 @ p["W3"] + p["b3"]
    loss, g = softmax_xent(logits, y)
    gr = {"W3": h2.T @ g, "b3": g.sum(0)}
    g = (g @ p["W3"].T) * (a2 > 0)
    gr["W2"], gr["b2"] = h1.T @ g, g.sum(0)
    g = (g @ p["W2"].T) * (a1 > 0)
    gr["W1"], gr["b1"] = g.T @ x, g.sum(0)
    return loss, gr


def train_mlp(x, y):
    p = train_loop(mlp_init(1), mlp_grad, x, y, epochs=60, batch=32, lr=3e-3, wd=1e-4, seed=2)
    return {k: v.astype(np.float32) for k, v in p.items()}


# --------------------------------------------------------------------------
# CNN  (NCHW; conv weights [out, in, 3, 3]; fc weight [10, 256] for Gemm
# transB=1; flatten order is (c, h, w) like ONNX Flatten)

def im2col3(x):
    """x [N,C,H,W] -> cols [N*H*W, C*9] for a 3x3, pad 1, stride 1 conv;
    column order (c, kh, kw) matches W.reshape(out, C*9)."""
    n, c, h, w = x.shape
    xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    cols = np.empty((n, h, w, c, 3, 3), dtype=x.dtype)
    for kh in range(3):
        for kw in range(3):
            cols[:, :, :, :, kh, kw] = xp[:, :, kh:kh + h, kw:kw + w].transpose(0, 2, 3, 1)
    return cols.reshape(n * h * w, c * 9)


def col2im3(dcols, shape):
    """Adjoint of im2col3: dcols [N*H*W, C*9] -> dx [N,C,H,W]."""
    n, c, h, w = shape
    d = dcols.reshape(n, h, w, c, 3, 3)
    dxp = np.zeros((n, c, h + 2, w + 2), dtype=dcols.dtype)
    for kh in range(3):
        for kw in range(3):
            dxp[:, :, kh:kh + h, kw:kw + w] += d[:, :, :, :, kh, kw].transpose(0, 3, 1, 2)
    return dxp[:, :, 1:-1, 1:-1]


def conv3(x, W, b):
    """3x3 pad-1 conv: returns (y [N,O,H,W], cols)."""
    n, _, h, w = x.shape
    cols = im2col3(x)
    o = W.shape[0]
    y = cols @ W.reshape(o, -1).T + b
    return y.reshape(n, h, w, o).transpose(0, 3, 1, 2), cols


def maxpool2(x):
    """2x2 stride 2 max pool: returns (y, argmax index in each window)."""
    n, c, h, w = x.shape
    win = x.reshape(n, c, h // 2, 2, w // 2, 2).transpose(0, 1, 2, 4, 3, 5).reshape(n, c, h // 2, w // 2, 4)
    idx = win.argmax(axis=-1)
    return np.take_along_axis(win, idx[..., None], axis=-1)[..., 0], idx


def maxpool2_back(g, idx, shape):
    n, c, h, w = shape
    win = np.zeros((n, c, h // 2, w // 2, 4), dtype=g.dtype)
    np.put_along_axis(win, idx[..., None], g[..., None], axis=-1)
    return win.reshape(n, c, h // 2, w // 2, 2, 2).transpose(0, 1, 2, 4, 3, 5).reshape(shape)


def cnn_init(seed=3):
    rng = np.random.default_rng(seed)
    return {
        "conv1_w": he(rng, (8, 1, 3, 3), 9), "conv1_b": np.zeros(8),
        "conv2_w": he(rng, (16, 8, 3, 3), 72), "conv2_b": np.zeros(16),
        "fc_w": he(rng, (10, 256), 256) * 0.5, "fc_b": np.zeros(10),
    }


def cnn_forward(p, x):
    h1 = np.maximum(conv3(x, p["conv1_w"], p["conv1_b"])[0], 0)
    h2 = np.maximum(conv3(h1, p["conv2_w"], p["conv2_b"])[0], 0)
    pooled, _ = maxpool2(h2)
    return pooled.reshape(len(x), -1) @ p["fc_w"].T + p["fc_b"]


def cnn_grad(p, x, y):
    n = len(x)
    a1, cols1 = conv3(x, p["conv1_w"], p["conv1_b"])
    h1 = np.maximum(a1, 0)
    a2, cols2 = conv3(h1, p["conv2_w"], p["conv2_b"])
    h2 = np.maximum(a2, 0)
    pooled, idx = maxpool2(h2)
    flat = pooled.reshape(n, -1)
    logits = flat @ p["fc_w"].T + p["fc_b"]
    loss, g = softmax_xent(logits, y)
    gr = {"fc_w": g.T @ flat, "fc_b": g.sum(0)}
    g = (g @ p["fc_w"]).reshape(pooled.shape)
    g = maxpool2_back(g, idx, h2.shape) * (a2 > 0)
    g2 = g.transpose(0, 2, 3, 1).reshape(-1, 16)           # [N*H*W, 16]
    gr["conv2_w"] = (g2.T @ cols2).reshape(p["conv2_w"].shape)
    gr["conv2_b"] = g2.sum(0)
    g = col2im3(g2 @ p["conv2_w"].reshape(16, -1), h1.shape) * (a1 > 0)
    g1 = g.transpose(0, 2, 3, 1).reshape(-1, 8)
    gr["conv1_w"] = (g1.T @ cols1).reshape(p["conv1_w"].shape)
    gr["conv1_b"] = g1.sum(0)
    return loss, gr


def train_cnn(x, y):
    x = x.reshape(-1, 1, 8, 8)
    p = train_loop(cnn_init(3), cnn_grad, x, y, epochs=25, batch=32, lr=3e-3, wd=1e-4, seed=4)
    return {k: v.astype(np.float32) for k, v in p.items()}


# --------------------------------------------------------------------------
# ONNX export

def _finish(graph, name):
    import onnx
    from onnx import helper

    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)],
                          producer_name="v4f-test-digits", producer_version="1")
    m.ir_version = IR_VERSION
    m.doc_string = f"{name} trained on sklearn digits by test/quant/digits_models.py"
    onnx.checker.check_model(m, full_check=True)
    return m


def export_mlp(p):
    from onnx import TensorProto, helper, numpy_helper

    inits = [numpy_helper.from_array(np.ascontiguousarray(p[k], dtype=np.float32), k)
             for k in ("W1", "b1", "W2", "b2", "W3", "b3")]
    nodes = [
        helper.make_node("Gemm", ["x", "W1", "b1"], ["fc1"], name="fc1", transB=1),
        helper.make_node("Relu", ["fc1"], ["relu1"], name="relu1"),
        helper.make_node("MatMul", ["relu1", "W2"], ["mm2"], name="mm2"),
        helper.make_node("Add", ["mm2", "b2"], ["fc2"], name="add2"),
        helper.make_node("Relu", ["fc2"], ["relu2"], name="relu2"),
        helper.make_node("MatMul", ["relu2", "W3"], ["mm3"], name="mm3"),
        helper.make_node("Add", ["mm3", "b3"], ["logits"], name="add3"),
    ]
    g = helper.make_graph(
        nodes, "digits_mlp",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 64])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["N", 10])],
        inits)
    return _finish(g, "digits MLP")


def export_cnn(p):
    from onnx import TensorProto, helper, numpy_helper

    inits = [numpy_helper.from_array(np.ascontiguousarray(p[k], dtype=np.float32), k)
             for k in ("conv1_w", "conv1_b", "conv2_w", "conv2_b", "fc_w", "fc_b")]
    conv = dict(kernel_shape=[3, 3], pads=[1, 1, 1, 1], strides=[1, 1])
    nodes = [
        helper.make_node("Conv", ["x", "conv1_w", "conv1_b"], ["c1"], name="conv1", **conv),
        helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
        helper.make_node("Conv", ["r1", "conv2_w", "conv2_b"], ["c2"], name="conv2", **conv),
        helper.make_node("Relu", ["c2"], ["r2"], name="relu2"),
        helper.make_node("MaxPool", ["r2"], ["pool"], name="pool", kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Flatten", ["pool"], ["flat"], name="flatten", axis=1),
        helper.make_node("Gemm", ["flat", "fc_w", "fc_b"], ["logits"], name="fc", transB=1),
    ]
    g = helper.make_graph(
        nodes, "digits_cnn",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 1, 8, 8])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["N", 10])],
        inits)
    return _finish(g, "digits CNN")


# --------------------------------------------------------------------------
# output

def save_npz(path, **arrays):
    """Like np.savez, but byte-deterministic (fixed zip timestamps)."""
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_STORED) as zf:
        for k, a in arrays.items():
            buf = io.BytesIO()
            np.lib.format.write_array(buf, np.ascontiguousarray(a), allow_pickle=False)
            info = zipfile.ZipInfo(k + ".npy", date_time=(1980, 1, 1, 0, 0, 0))
            info.external_attr = 0o644 << 16
            zf.writestr(info, buf.getvalue())


def top1(logits, y):
    return float((np.argmax(logits, axis=1) == y).mean())


def build(out: Path, log=print):
    """Train both models and write every output file into `out`.
    Returns a dict with the numpy-measured accuracies and training times."""
    import onnx

    out.mkdir(parents=True, exist_ok=True)
    xtr, ytr, xva, yva = load_split()
    info = {}

    t = time.perf_counter()
    mlp = train_mlp(xtr, ytr)
    info["mlp_train_s"] = time.perf_counter() - t
    t = time.perf_counter()
    cnn = train_cnn(xtr, ytr)
    info["cnn_train_s"] = time.perf_counter() - t

    xva32 = xva.astype(np.float32)
    info["mlp_top1_np"] = top1(mlp_forward(mlp, xva32), yva)
    info["cnn_top1_np"] = top1(cnn_forward(cnn, xva32.reshape(-1, 1, 8, 8)), yva)
    info["mlp_train_top1_np"] = top1(mlp_forward(mlp, xtr.astype(np.float32)), ytr)
    info["cnn_train_top1_np"] = top1(cnn_forward(cnn, xtr.astype(np.float32).reshape(-1, 1, 8, 8)), ytr)

    onnx.save(export_mlp(mlp), str(out / "mlp.onnx"))
    onnx.save(export_cnn(cnn), str(out / "cnn.onnx"))
    cal = xtr[:N_CAL].astype(np.float32)
    save_npz(out / "cal_mlp.npz", x=cal)
    save_npz(out / "cal_cnn.npz", x=cal.reshape(-1, 1, 8, 8))
    save_npz(out / "val_mlp.npz", x=xva32)
    save_npz(out / "val_cnn.npz", x=xva32.reshape(-1, 1, 8, 8))
    np.save(out / "labels.npy", yva.astype(np.int64))

    log(f"mlp: trained in {info['mlp_train_s']:.1f} s, top-1 train {info['mlp_train_top1_np']:.4f}, "
        f"held-out (numpy) {info['mlp_top1_np']:.4f}")
    log(f"cnn: trained in {info['cnn_train_s']:.1f} s, top-1 train {info['cnn_train_top1_np']:.4f}, "
        f"held-out (numpy) {info['cnn_top1_np']:.4f}")
    return info


def load_params(model_path):
    import onnx
    from onnx import numpy_helper

    m = onnx.load(str(model_path))
    return {t.name: numpy_helper.to_array(t) for t in m.graph.initializer}


def check(out: Path, log=print):
    """Run both exported models with ONNX Runtime on the held-out set, compare
    with the numpy forward pass of the same (float32) weights. Returns the
    ORT top-1 per model; raises on a mismatch."""
    import onnxruntime as ort

    labels = np.load(out / "labels.npy")
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    res = {}
    for name, fwd in (("mlp", mlp_forward), ("cnn", cnn_forward)):
        x = np.load(out / f"val_{name}.npz")["x"]
        sess = ort.InferenceSession(str(out / f"{name}.onnx"), so, providers=["CPUExecutionProvider"])
        got = sess.run(["logits"], {"x": x})[0]
        ref = fwd(load_params(out / f"{name}.onnx"), x)
        diff = float(np.abs(got - ref).max())
        same = np.array_equal(got.argmax(1), ref.argmax(1))
        acc = top1(got, labels)
        res[name] = acc
        log(f"{name}: ORT held-out top-1 {acc:.4f} ({int(round(acc * len(labels)))}/{len(labels)}), "
            f"numpy top-1 {top1(ref, labels):.4f}, max|ORT-numpy| {diff:.2e}, "
            f"predictions {'equal' if same else 'DIFFER'}")
        if not same:
            raise SystemExit(f"{name}: ORT and numpy predictions differ")
    return res


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True, type=Path, help="output directory")
    ap.add_argument("--check", action="store_true", help="verify with ONNX Runtime")
    args = ap.parse_args(argv)
    build(args.out)
    if args.check:
        check(args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
