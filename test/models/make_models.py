#!/usr/bin/env python3
"""Export the real-model test set (test/models/*.onnx) with real exporters.

Needs torch, torchvision and transformers (NOT needed by the tests, which
only read the committed .onnx files and models.json):

  python3 -m venv /tmp/torchenv && /tmp/torchenv/bin/pip install torch torchvision transformers onnxscript
  /tmp/torchenv/bin/python test/models/make_models.py          # rewrites test/models/*.onnx

Every model is a small configuration of a real model class, randomly
initialized (seed 0), exported with dynamic axes, weights embedded,
at most 5 MB. models.json records, per model, the exporter, the dynamic
axes and the input shapes the test runs it at (at least two).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision
from torchvision.models.resnet import BasicBlock

HERE = Path(__file__).resolve().parent
OPSET = 17


class TinyResNet(nn.Module):
    """A ResNet (torchvision's BasicBlock) with widths 16..128."""

    def __init__(self, num_classes=10):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 16, 7, 2, 3, bias=False), nn.BatchNorm2d(16), nn.ReLU(inplace=True),
                                  nn.MaxPool2d(3, 2, 1))
        layers, cin = [], 16
        for i, w in enumerate([16, 32, 64, 128]):
            stride = 1 if i == 0 else 2
            down = None
            if stride != 1 or cin != w:
                down = nn.Sequential(nn.Conv2d(cin, w, 1, stride, bias=False), nn.BatchNorm2d(w))
            layers += [BasicBlock(cin, w, stride, down), BasicBlock(w, w)]
            cin = w
        self.layers = nn.Sequential(*layers)
        self.fc = nn.Linear(128, num_classes)

    def forward(self, x):
        x = self.layers(self.stem(x))
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1))


class TinyUNet(nn.Module):
    """Encoder-decoder with ConvTranspose and bilinear Resize at dynamic H/W."""

    def __init__(self):
        super().__init__()
        self.e1 = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU())
        self.e2 = nn.Sequential(nn.Conv2d(8, 16, 3, stride=2, padding=1), nn.ReLU())
        self.e3 = nn.Sequential(nn.Conv2d(16, 32, 3, stride=2, padding=1), nn.ReLU())
        self.up3 = nn.ConvTranspose2d(32, 16, 2, stride=2)
        self.d2 = nn.Sequential(nn.Conv2d(32, 16, 3, padding=1), nn.ReLU())
        self.d1 = nn.Sequential(nn.Conv2d(24, 8, 3, padding=1), nn.ReLU())
        self.head = nn.Conv2d(8, 2, 1)

    def forward(self, x):
        a = self.e1(x)
        b = self.e2(a)
        c = self.e3(b)
        u = self.up3(c)
        u = F.interpolate(u, size=b.shape[-2:], mode="bilinear", align_corners=False)
        d = self.d2(torch.cat([u, b], 1))
        d = F.interpolate(d, size=a.shape[-2:], mode="bilinear", align_corners=False)
        return self.head(self.d1(torch.cat([d, a], 1)))


class SeqLSTM(nn.Module):
    """A 2-layer LSTM (one bidirectional) + GRU over a dynamic sequence, initial states as inputs."""

    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(8, 16, num_layers=1, bidirectional=True)
        self.gru = nn.GRU(32, 16)
        self.fc = nn.Linear(16, 4)

    def forward(self, x, h0, c0):
        y, (h, c) = self.lstm(x, (h0, c0))
        z, hz = self.gru(y)
        return self.fc(z), h, c


class TinyGPT(nn.Module):
    """A GPT-2-style decoder (pre-LN blocks, causal self-attention, GELU MLP,
    tied embeddings) with a KV cache: past_key/past_value [layers, B, heads,
    P, head] in, present out, so a token loop feeds them back."""

    def __init__(self, vocab=500, d=64, heads=2, layers=2, positions=128):
        super().__init__()
        self.heads, self.d = heads, d
        self.wte, self.wpe = nn.Embedding(vocab, d), nn.Embedding(positions, d)
        self.ln1 = nn.ModuleList([nn.LayerNorm(d) for _ in range(layers)])
        self.qkv = nn.ModuleList([nn.Linear(d, 3 * d) for _ in range(layers)])
        self.proj = nn.ModuleList([nn.Linear(d, d) for _ in range(layers)])
        self.ln2 = nn.ModuleList([nn.LayerNorm(d) for _ in range(layers)])
        self.mlp = nn.ModuleList([nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))
                                  for _ in range(layers)])
        self.lnf = nn.LayerNorm(d)

    def forward(self, input_ids, past_key, past_value):
        B, S = input_ids.shape
        P = past_key.shape[3]
        pos = torch.arange(P, P + S, device=input_ids.device).unsqueeze(0)
        h = self.wte(input_ids) + self.wpe(pos)
        keys, values = [], []
        hd = self.d // self.heads
        for i in range(len(self.qkv)):
            q, k, v = self.qkv[i](self.ln1[i](h)).split(self.d, dim=2)
            q, k, v = (t.view(B, S, self.heads, hd).transpose(1, 2) for t in (q, k, v))
            k = torch.cat([past_key[i], k], 2)
            v = torch.cat([past_value[i], v], 2)
            keys.append(k)
            values.append(v)
            att = (q @ k.transpose(-1, -2)) / hd ** 0.5
            L = k.shape[2]
            causal = torch.ones(S, L, dtype=torch.bool, device=h.device).tril(L - S)
            att = att.masked_fill(~causal, float("-inf")).softmax(-1)
            y = (att @ v).transpose(1, 2).reshape(B, S, self.d)
            h = h + self.proj[i](y)
            h = h + self.mlp[i](self.ln2[i](h))
        logits = self.lnf(h) @ self.wte.weight.t()
        return logits, torch.stack(keys), torch.stack(values)


class FlagBranch(nn.Module):
    """`If` on a run-time input flag whose branches give different shapes."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)

    def forward(self, x, flag):
        y = self.conv(x)
        if bool(flag.sum() > 0):
            return torch.cat([y, y], 1)
        return F.max_pool2d(y, 2)


class DetectionHead(nn.Module):
    """Box and score convs, then TopK over scores and NonMaxSuppression."""

    def __init__(self):
        super().__init__()
        self.box = nn.Conv2d(8, 4, 1)
        self.score = nn.Conv2d(8, 1, 1)

    def forward(self, feat):
        B = feat.shape[0]
        boxes = self.box(feat).flatten(2).transpose(1, 2)[0]          # [HW, 4]
        xy = boxes[:, :2] * 10
        wh = boxes[:, 2:].exp() * 2
        boxes = torch.cat([xy - wh, xy + wh], 1)
        scores = self.score(feat).flatten(1)[0].sigmoid()             # [HW]
        k = min(16, scores.shape[0])
        top, idx = scores.topk(k)
        keep = torchvision.ops.nms(boxes[idx], top, 0.5)
        return boxes[idx][keep], top[keep]


class BertEncoder(nn.Module):
    """transformers' BertModel called by keyword (its positional order changes between versions)."""

    def __init__(self, bert):
        super().__init__()
        self.bert = bert

    def forward(self, input_ids, attention_mask):
        out = self.bert(input_ids=input_ids, attention_mask=attention_mask)
        return out.last_hidden_state, out.pooler_output


def rescale(model: nn.Module) -> nn.Module:
    """Random weights that keep activations O(1) through the whole net (the
    classes' own inits zero the heads or shrink them to ~1e-2 per layer, so
    the outputs would be ~0 and a comparison could not fail)."""
    g = torch.Generator().manual_seed(1)
    for m in model.modules():
        if isinstance(m, (nn.Linear, nn.Conv2d, nn.ConvTranspose2d)):
            fan_in = m.weight[0].numel() if isinstance(m, (nn.Linear, nn.Conv2d)) else m.weight.shape[0]
            with torch.no_grad():
                m.weight.copy_(torch.randn(m.weight.shape, generator=g) * (2.0 / fan_in) ** 0.5)
                if m.bias is not None:
                    m.bias.copy_(torch.randn(m.bias.shape, generator=g) * 0.1)
        elif isinstance(m, nn.BatchNorm2d):
            with torch.no_grad():
                m.running_mean.copy_(torch.randn(m.running_mean.shape, generator=g) * 0.1)
                m.running_var.copy_(torch.rand(m.running_var.shape, generator=g) + 0.5)
                m.weight.copy_(torch.rand(m.weight.shape, generator=g) + 0.5)
                m.bias.copy_(torch.randn(m.bias.shape, generator=g) * 0.1)
    return model


def export(name, model, args, input_names, output_names, dynamic_axes, shapes, exporter="torchscript", values=None):
    if not isinstance(model, torch.jit.ScriptModule):
        rescale(model)
    model.eval()
    path = HERE / f"{name}.onnx"
    with torch.no_grad():
        if exporter == "torchscript":
            torch.onnx.export(model, args, str(path), input_names=input_names, output_names=output_names,
                              dynamic_axes=dynamic_axes, opset_version=OPSET, dynamo=False)
        elif exporter == "dynamo":
            torch.onnx.export(model, args, str(path), input_names=input_names, output_names=output_names,
                              dynamic_axes=dynamic_axes, opset_version=18, dynamo=True, external_data=False)
        else:
            raise ValueError(exporter)
    size = path.stat().st_size
    assert size <= 5 * 2**20, f"{name}: {size} bytes > 5 MB"
    print(f"{name}: {size / 2**20:.2f} MB ({exporter})", file=sys.stderr)
    entry = {"file": path.name, "exporter": f"torch.onnx.export {exporter} (torch {torch.__version__})",
             "dynamic_axes": dynamic_axes, "shapes": shapes}
    if values:
        entry["values"] = values  # input name -> one value list per shape set
    return entry


def main() -> int:
    torch.manual_seed(0)
    # nn.MultiheadAttention's inference fast path has no ONNX export.
    torch.backends.mha.set_fastpath_enabled(False)
    manifest = {}
    img_axes = {"x": {0: "N", 2: "H", 3: "W"}, "y": {0: "N"}}
    manifest["resnet_tiny"] = export(
        "resnet_tiny", TinyResNet(), (torch.randn(1, 3, 64, 64),), ["x"], ["y"], img_axes,
        [{"x": [1, 3, 64, 64]}, {"x": [2, 3, 96, 80]}])
    manifest["resnet_tiny_dynamo"] = export(
        "resnet_tiny_dynamo", TinyResNet(), (torch.randn(1, 3, 64, 64),), ["x"], ["y"], img_axes,
        [{"x": [1, 3, 64, 64]}, {"x": [2, 3, 96, 80]}], exporter="dynamo")
    mnv3 = torchvision.models.mobilenet_v3_small(width_mult=0.5, num_classes=10)
    manifest["mobilenet_v3_small"] = export(
        "mobilenet_v3_small", mnv3, (torch.randn(1, 3, 96, 96),), ["x"], ["y"], img_axes,
        [{"x": [1, 3, 96, 96]}, {"x": [2, 3, 128, 112]}])
    from torchvision.models.efficientnet import _efficientnet_conf, EfficientNet
    setting, last = _efficientnet_conf("efficientnet_b0", width_mult=0.25, depth_mult=0.25)
    manifest["efficientnet_tiny"] = export(
        "efficientnet_tiny", EfficientNet(setting, 0.2, num_classes=10, last_channel=last),
        (torch.randn(1, 3, 64, 64),), ["x"], ["y"], img_axes, [{"x": [1, 3, 64, 64]}, {"x": [3, 3, 80, 96]}])
    vit = torchvision.models.VisionTransformer(image_size=32, patch_size=8, num_layers=2, num_heads=2,
                                               hidden_dim=64, mlp_dim=128, num_classes=10)
    manifest["vit_tiny"] = export("vit_tiny", vit, (torch.randn(1, 3, 32, 32),), ["x"], ["y"],
                                  {"x": {0: "N"}, "y": {0: "N"}}, [{"x": [1, 3, 32, 32]}, {"x": [4, 3, 32, 32]}])
    manifest["unet_tiny"] = export("unet_tiny", TinyUNet(), (torch.randn(1, 3, 32, 32),), ["x"], ["y"],
                                   {"x": {0: "N", 2: "H", 3: "W"}, "y": {0: "N", 2: "H", 3: "W"}},
                                   [{"x": [1, 3, 32, 32]}, {"x": [2, 3, 48, 40]}])
    manifest["lstm_gru"] = export(
        "lstm_gru", SeqLSTM(), (torch.randn(5, 2, 8), torch.zeros(2, 2, 16), torch.zeros(2, 2, 16)),
        ["x", "h0", "c0"], ["y", "h", "c"],
        {"x": {0: "T", 1: "B"}, "h0": {1: "B"}, "c0": {1: "B"}, "y": {0: "T", 1: "B"}, "h": {1: "B"}, "c": {1: "B"}},
        [{"x": [5, 2, 8], "h0": [2, 2, 16], "c0": [2, 2, 16]}, {"x": [9, 3, 8], "h0": [2, 3, 16], "c0": [2, 3, 16]}])
    from transformers import BertConfig, BertModel
    bert = BertModel(BertConfig(vocab_size=500, hidden_size=64, num_hidden_layers=2, num_attention_heads=2,
                                intermediate_size=128, max_position_embeddings=64))
    ids = torch.randint(0, 500, (1, 8))
    manifest["bert_tiny"] = export(
        "bert_tiny", BertEncoder(bert), (ids, torch.ones_like(ids)), ["input_ids", "attention_mask"],
        ["last_hidden_state", "pooler_output"],
        {"input_ids": {0: "B", 1: "S"}, "attention_mask": {0: "B", 1: "S"}, "last_hidden_state": {0: "B", 1: "S"},
         "pooler_output": {0: "B"}},
        [{"input_ids": [1, 8], "attention_mask": [1, 8]}, {"input_ids": [2, 13], "attention_mask": [2, 13]}])
    gpt = TinyGPT()
    manifest["gpt_tiny_kv"] = export(
        "gpt_tiny_kv", gpt, (torch.randint(0, 500, (1, 4)), torch.zeros(2, 1, 2, 3, 32), torch.zeros(2, 1, 2, 3, 32)),
        ["input_ids", "past_key", "past_value"], ["logits", "present_key", "present_value"],
        {"input_ids": {0: "B", 1: "S"}, "past_key": {1: "B", 3: "P"}, "past_value": {1: "B", 3: "P"},
         "logits": {0: "B", 1: "S"}, "present_key": {1: "B", 3: "L"}, "present_value": {1: "B", 3: "L"}},
        [{"input_ids": [1, 4], "past_key": [2, 1, 2, 0, 32], "past_value": [2, 1, 2, 0, 32]},
         {"input_ids": [1, 1], "past_key": [2, 1, 2, 4, 32], "past_value": [2, 1, 2, 4, 32]},
         {"input_ids": [2, 3], "past_key": [2, 2, 2, 5, 32], "past_value": [2, 2, 2, 5, 32]}])
    manifest["if_flag_shapes"] = export(
        "if_flag_shapes", torch.jit.script(rescale(FlagBranch())), (torch.randn(1, 3, 8, 8), torch.ones(1)),
        ["x", "flag"], ["y"], {"x": {0: "N"}, "y": {0: "N", 1: "C", 2: "H", 3: "W"}},
        [{"x": [1, 3, 8, 8], "flag": [1]}, {"x": [2, 3, 8, 8], "flag": [1]}], values={"flag": [[1.0], [0.0]]})
    # The same If model with the flag folded at compile time (--input-value):
    # only the taken branch is compiled.
    for flag in (1.0, 0.0):
        entry = dict(manifest["if_flag_shapes"])
        entry.pop("values")
        entry["fold"] = {"flag": [flag]}
        entry["shapes"] = [{"x": [1, 3, 8, 8], "flag": [1]}, {"x": [3, 3, 8, 8], "flag": [1]}]
        manifest[f"if_flag_folded_{int(flag)}"] = entry
    manifest["detection_head"] = export(
        "detection_head", DetectionHead(), (torch.randn(1, 8, 6, 6),), ["feat"], ["boxes", "scores"],
        {"feat": {2: "H", 3: "W"}, "boxes": {0: "K"}, "scores": {0: "K"}},
        [{"feat": [1, 8, 6, 6]}, {"feat": [1, 8, 4, 5]}])
    (HERE / "models.json").write_text(json.dumps(manifest, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
