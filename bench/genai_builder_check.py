#!/usr/bin/env python3
"""Decoders written by ONNX Runtime GenAI's model builder, compiled by v4fc and
compared with ONNX Runtime: a small Qwen2-shaped model with random weights
(transformers config, nothing downloaded), exported by the builder as fp32 and
int4 (MatMulNBits), run as a 5-token prefill with an empty past and one
decode step on its present, then 64 greedy tokens from three prompts against
onnxruntime-genai's own Generator on the builder's folder (the artifact driven step by
step through v4f-run, present fed back as past).

Needs a Python with torch, transformers, onnx_ir and onnxruntime-genai (not
the project's pinned venv):

  python bench/genai_builder_check.py --build build [--work /tmp/genai]

Prints max |v4f - ORT| of the logits and caches; writes nothing else.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

import numpy as np


def sanitize(name: str) -> str:
    return "".join(c if c.isalnum() or c in "._-" else "_" for c in name)


def compare(model: Path, art: Path, work: Path, accuracy_note: str) -> None:
    import onnxruntime as ort
    s = ort.InferenceSession(str(model))
    names = [i.name for i in s.get_inputs()]
    outs = [o.name for o in s.get_outputs()]
    layers = sum(1 for n in names if n.startswith("past_key_values") and n.endswith(".key"))
    past_shape = next(i.shape for i in s.get_inputs() if i.name.startswith("past_key_values"))
    nkv = past_shape[1]
    rng = np.random.default_rng(0)

    def run(ids, past, total):
        feeds = {"input_ids": ids, "attention_mask": np.ones((1, total), np.int64)}
        for layer, (k, v) in enumerate(past):
            feeds[f"past_key_values.{layer}.key"], feeds[f"past_key_values.{layer}.value"] = k, v
        ref = s.run(None, feeds)
        args = []
        for k, v in feeds.items():
            f = work / f"in_{sanitize(k)}.npy"
            np.save(f, v)
            args += ["--input", f"{k}={f}"]
        out_dir = work / "out"
        subprocess.run([str(BUILD / "bin" / "v4f-run"), str(art), "--output-dir", str(out_dir)] + args, check=True,
                       capture_output=True)
        errs = {o: float(np.abs(np.load(out_dir / f"{sanitize(o)}.npy") - r).max()) for o, r in zip(outs, ref)}
        return ref, errs

    head = s.get_outputs()[outs.index("present.0.key")].shape[3]
    head = head if isinstance(head, int) else 16
    empty = [(np.zeros((1, nkv, 0, head), np.float32), np.zeros((1, nkv, 0, head), np.float32))] * layers
    ids = rng.integers(0, 500, size=(1, 5)).astype(np.int64)
    ref, errs = run(ids, empty, 5)
    print(f"  prefill 5 tokens: logits {errs['logits']:.3g}, caches "
          f"{max(v for k, v in errs.items() if k != 'logits'):.3g} {accuracy_note}")
    past = [(ref[outs.index(f"present.{l}.key")], ref[outs.index(f"present.{l}.value")]) for l in range(layers)]
    nxt = np.array([[int(ref[0][0, -1].argmax())]], np.int64)
    ref, errs = run(nxt, past, 6)
    print(f"  decode 1 token after 5: logits {errs['logits']:.3g}, caches "
          f"{max(v for k, v in errs.items() if k != 'logits'):.3g} {accuracy_note}")


def greedy_tokens(model: Path, art: Path, work: Path, prompt: list, new_tokens: int) -> tuple:
    """Greedy generation with onnxruntime-genai (its own Generator on the
    builder's folder) and with the v4f artifact (v4f-run per step, present
    fed back as past); returns both token lists."""
    import onnxruntime_genai as og
    m = og.Model(str(model.parent))
    params = og.GeneratorParams(m)
    params.set_search_options(max_length=len(prompt) + new_tokens, do_sample=False)
    gen = og.Generator(m, params)
    gen.append_tokens(np.array(prompt, np.int32))
    while not gen.is_done():
        gen.generate_next_token()
    ref = [int(t) for t in gen.get_sequence(0)][len(prompt):]

    import onnxruntime as ort
    s = ort.InferenceSession(str(model))
    ins = {i.name: i for i in s.get_inputs()}
    outs = [o.name for o in s.get_outputs()]
    layers = sum(1 for n in ins if n.startswith("past_key_values") and n.endswith(".key"))
    nkv = next(i.shape for n, i in ins.items() if n.startswith("past_key_values"))[1]
    head = 16
    past = [(np.zeros((1, nkv, 0, head), np.float32), np.zeros((1, nkv, 0, head), np.float32))] * layers
    ids, total, got, margins = np.array([prompt], np.int64), len(prompt), [], []
    out_dir = work / "gen_out"
    for _ in range(new_tokens):
        feeds = {"input_ids": ids, "attention_mask": np.ones((1, total), np.int64)}
        for layer, (k, v) in enumerate(past):
            feeds[f"past_key_values.{layer}.key"], feeds[f"past_key_values.{layer}.value"] = k, v
        args = []
        for k, v in feeds.items():
            f = work / f"gen_{sanitize(k)}.npy"
            np.save(f, v)
            args += ["--input", f"{k}={f}"]
        subprocess.run([str(BUILD / "bin" / "v4f-run"), str(art), "--output-dir", str(out_dir)] + args, check=True,
                       capture_output=True)
        logits = np.load(out_dir / "logits.npy")
        nxt = int(logits[0, -1].argmax())
        top2 = np.sort(logits[0, -1])[-2:]
        margins.append(float(top2[1] - top2[0]))
        got.append(nxt)
        past = [(np.load(out_dir / f"{sanitize(f'present.{l}.key')}.npy"),
                 np.load(out_dir / f"{sanitize(f'present.{l}.value')}.npy")) for l in range(layers)]
        ids, total = np.array([[nxt]], np.int64), total + 1
    return ref, got, margins


def main() -> int:
    global BUILD
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default="build")
    ap.add_argument("--work", default="/tmp/genai-builder-check")
    a = ap.parse_args()
    BUILD = Path(a.build).resolve()
    work = Path(a.work)
    work.mkdir(parents=True, exist_ok=True)
    import onnx
    import torch
    from transformers import Qwen2Config, Qwen2ForCausalLM
    torch.manual_seed(0)
    cfg = Qwen2Config(vocab_size=512, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                      num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=256,
                      tie_word_embeddings=False)
    Qwen2ForCausalLM(cfg).eval().save_pretrained(work / "hf")
    for precision in ("fp32", "int4"):
        out = work / precision
        subprocess.run([sys.executable, "-m", "onnxruntime_genai.models.builder", "-m", "Qwen/Qwen2-0.5B", "-i",
                        str(work / "hf"), "-o", str(out), "-p", precision, "-e", "cpu", "-c", str(work / "cache")],
                       check=True, capture_output=True)
        variants = [(out / "model.onnx", "")]
        if precision == "int4":
            # ONNX Runtime's MatMulNBits at accuracy_level 4 quantizes the
            # activations to int8; v4f keeps them float. At level 0 both are float.
            m = onnx.load(str(out / "model.onnx"))
            for n in m.graph.node:
                for attr in n.attribute:
                    if attr.name == "accuracy_level":
                        attr.i = 0
            onnx.save(m, str(out / "model_acc0.onnx"))
            variants = [(out / "model.onnx", "(ORT: int8 activations, accuracy_level 4)"),
                        (out / "model_acc0.onnx", "(accuracy_level 0: float activations on both)")]
        for model, note in variants:
            art = work / f"{model.stem}_{precision}.v4f"
            r = subprocess.run([str(BUILD / "bin" / "v4fc"), "compile", str(model), "-o", str(art)], capture_output=True,
                               text=True)
            print(f"{precision} {model.name}: compile {'ok' if r.returncode == 0 else 'FAILED: ' + r.stderr.strip()}")
            if r.returncode == 0:
                compare(model, art, work, note)
                if model.name == "model.onnx":
                    rng = np.random.default_rng(7)
                    for p in range(3):
                        prompt = [int(t) for t in rng.integers(0, 500, size=4 + 3 * p)]
                        ref, got, margins = greedy_tokens(model, art, work, prompt, 64)
                        first = next((i for i, (a, b) in enumerate(zip(ref, got)) if a != b), None)
                        where = "" if first is None else (
                            f"; first differs at token {first}, where v4f's top two logits are "
                            f"{margins[first]:.2g} apart")
                        print(f"  greedy, prompt of {len(prompt)}: {len(ref)} tokens from onnxruntime-genai, "
                              f"{sum(a == b for a, b in zip(ref, got))} equal at the same step{where}")
    return 0


BUILD = Path("build")
if __name__ == "__main__":
    sys.exit(main())
