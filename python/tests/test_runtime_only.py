"""`import v4f` and running a session load only the C runtime: no LLVM, MLIR,
protobuf or onnx library in the process (the compiler runs as a child)."""

import subprocess
import sys
import textwrap

FORBIDDEN = ("libLLVM", "libMLIR", "libprotobuf", "libonnx", "liblld")


def test_import_and_run_load_no_compiler_library(mlp):
    script = textwrap.dedent(f"""
        import numpy as np
        import v4f
        s = v4f.Session({mlp[1]!r}, threads=1)
        s.run(None, {{"x": np.ones((2, 8), np.float32)}})
        maps = open("/proc/self/maps").read()
        libs = sorted({{line.split()[-1] for line in maps.splitlines() if ".so" in line}})
        print("\\n".join(libs))
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout
    loaded = out.splitlines()
    assert any("_runtime" in lib for lib in loaded)  # the check sees the extension itself
    bad = [lib for lib in loaded if any(f in lib for f in FORBIDDEN)]
    assert not bad, bad


def test_compiling_from_python_keeps_the_process_clean(tmp_path):
    from conftest import mlp_model

    onnx_path = tmp_path / "m.onnx"
    onnx_path.write_bytes(mlp_model().SerializeToString())
    script = textwrap.dedent(f"""
        import v4f
        v4f.compile({str(onnx_path)!r}, {str(tmp_path / 'm.v4f')!r})
        v4f.check({str(onnx_path)!r})
        v4f.inspect({str(tmp_path / 'm.v4f')!r})
        print(open("/proc/self/maps").read())
    """)
    maps = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout
    assert not [f for f in FORBIDDEN if f in maps]
