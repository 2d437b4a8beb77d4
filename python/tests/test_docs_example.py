"""The complete example of docs/python.md, run as written (it exports from
PyTorch, so it needs torch: skipped where torch is not installed, as in the
README test command, whose venv leaves torch out for its size)."""

import re
import subprocess
import sys
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[2] / "docs" / "python.md"


def example_code():
    text = DOC.read_text()
    section = text[text.index("## A complete example"):]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)


def test_example_is_there():
    code = example_code()
    assert "torch.onnx.export" in code and "v4f.compile" in code and "sess.run" in code


def test_docs_example_runs_as_written(tmp_path):
    pytest.importorskip("torch", reason="torch is not installed (large; only the docs check installs it)")
    script = tmp_path / "example.py"
    script.write_text(example_code())
    proc = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "max |v4f - torch|" in proc.stdout
