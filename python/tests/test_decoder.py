"""Greedy decoding from Python with the KV cache fed back by the runtime
(Session.bind_feedback) on the exported GPT-style decoder of test/models,
token for token equal to ONNX Runtime's loop that feeds the cache by hand."""

from pathlib import Path

import numpy as np
import onnxruntime as ort
import pytest

import v4f

MODEL = Path(__file__).resolve().parents[2] / "test" / "models" / "gpt_tiny_kv.onnx"
PROMPT = [3, 14, 15, 92]
STEPS = 12


def ort_tokens():
    sess = ort.InferenceSession(str(MODEL), providers=["CPUExecutionProvider"])
    shape = [d if isinstance(d, int) else 1 for d in sess.get_inputs()[1].shape]  # [L, B, H, P, D]
    shape[3] = 0
    past_k = past_v = np.zeros(shape, np.float32)
    ids, tokens = np.array([PROMPT], np.int64), []
    for _ in range(STEPS):
        logits, past_k, past_v = sess.run(None, {"input_ids": ids, "past_key": past_k, "past_value": past_v})
        tokens.append(int(np.argmax(logits[0, -1])))
        ids = np.array([[tokens[-1]]], np.int64)
    return tokens


@pytest.fixture(scope="module")
def decoder(tmp_path_factory):
    path = tmp_path_factory.mktemp("gpt") / "gpt.v4f"
    v4f.compile(MODEL, path)
    return path


def test_greedy_decode_with_bound_cache(decoder):
    with v4f.Session(decoder, threads=2) as s:
        names = [t.name for t in s.inputs]
        assert names == ["input_ids", "past_key", "past_value"]
        s.bind_feedback("present_key", "past_key")
        s.bind_feedback("present_value", "past_value")
        shape = [d if isinstance(d, int) else 1 for d in s.inputs[1].shape]
        shape[3] = 0
        empty = np.zeros(shape, np.float32)
        ids = np.array([PROMPT], np.int64)
        feed = {"input_ids": ids, "past_key": empty, "past_value": empty}
        tokens = []
        for step in range(STEPS):
            (logits,) = s.run(["logits"], feed)
            tokens.append(int(np.argmax(logits[0, -1])))
            # Later steps: only the new token; the session holds the cache.
            feed = {"input_ids": np.array([[tokens[-1]]], np.int64)}
        assert tokens == ort_tokens()
        # A new sequence after reset_feedback starts from the caller's (empty) cache again.
        s.reset_feedback()
        (logits,) = s.run(["logits"], {"input_ids": ids, "past_key": empty, "past_value": empty})
        assert int(np.argmax(logits[0, -1])) == tokens[0]
