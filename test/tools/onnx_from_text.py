#!/usr/bin/env python3
"""Turn a textual ONNX model (onnx.parser syntax) into a .onnx file.

Usage: onnx_from_text.py INPUT.onnxtxt OUTPUT.onnx

Lines of INPUT starting with '//' (lit RUN/CHECK lines) are dropped first.
"""
import sys

import onnx
import onnx.parser


def main() -> int:
    src, dst = sys.argv[1], sys.argv[2]
    with open(src, encoding="utf-8") as f:
        text = "".join(line for line in f if not line.lstrip().startswith("//"))
    model = onnx.parser.parse_model(text)
    onnx.save(model, dst)
    return 0


if __name__ == "__main__":
    sys.exit(main())
