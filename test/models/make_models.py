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


def export(name, model, args, input_names, output_names, dynamic_axes, shapes, exporter="torchscript"):
    rescale(model).eval()
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
    return {"file": path.name, "exporter": f"torch.onnx.export {exporter} (torch {torch.__version__})",
            "dynamic_axes": dynamic_axes, "shapes": shapes}


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
    (HERE / "models.json").write_text(json.dumps(manifest, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
