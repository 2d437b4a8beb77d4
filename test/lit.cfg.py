# lit configuration for v4f: dialect, importer, pass and codegen tests.
import os

import lit.formats
from lit.llvm import llvm_config

config.name = "v4f"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".onnxtxt"]
config.excludes = ["CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py", "e2e", "onnx-backend", "hostile", "Inputs"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.v4f_obj_root, "test")

llvm_config.with_system_environment(["HOME", "TMPDIR"])
llvm_config.use_default_substitutions()
llvm_config.with_environment("PATH", config.v4f_tools_dir, append_path=True)
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)

# Textual ONNX (onnx.parser syntax) -> .onnx, so importer tests stay readable.
config.substitutions.append(("%v4f-python", config.python_executable))
config.substitutions.append(
    ("%onnx-from-text", f"{config.python_executable} {config.test_source_root}/tools/onnx_from_text.py"))
llvm_config.add_tool_substitutions(["v4f-opt", "v4fc", "v4f-run", "FileCheck", "not"],
                                   [config.v4f_tools_dir, config.llvm_tools_dir])

# GPU codegen tests need NVRTC (the CUDA toolkit); no GPU is needed. Without
# it they report UNSUPPORTED ("REQUIRES: nvrtc").
import glob
if os.environ.get("V4F_NVRTC") or glob.glob("/usr/local/cuda*/lib64/libnvrtc.so*") or \
        glob.glob("/usr/local/cuda*/targets/x86_64-linux/lib/libnvrtc.so*"):
    config.available_features.add("nvrtc")
if glob.glob("/usr/local/cuda*/bin/cuobjdump"):
    config.available_features.add("cuobjdump")
    config.substitutions.append(("%cuobjdump", sorted(glob.glob("/usr/local/cuda*/bin/cuobjdump"))[-1]))
