#!/usr/bin/env python3
"""Hostile and broken ONNX model files fed to `v4fc` (design/HOSTILE-INPUT.md, "Model files").

For every case this script writes one hostile model (plus any external-data files,
symlinks or hard links it needs) into its own temp folder:

    <tmp>/<case>/model/model.onnx      the model (and its external data)
    <tmp>/<case>/outside/...           files "outside the model's folder"
    <tmp>/<case>/out/                  the output folder, must stay empty

then runs `v4fc compile model.onnx -o out/out.v4f` (and `v4fc check model.onnx`
where the check is meaningful) with a 10 s timeout and asserts:

  * exit code 1: not 0, not a signal (crash), not a timeout (hang), not another code,
  * stderr contains `error:` and every expected substring naming the problem,
  * `out/out.v4f` does not exist and `out/` holds no leftovers (`out.v4f.tmp*`, ...),
  * for the "huge claimed tensor" cases: the compiler runs under RLIMIT_AS = 4 GiB
    (a huge allocation fails loudly) and its peak RSS stays under 512 MiB.

Prints `PASS <case>` / `FAIL <case>: <why>` per case and a summary; exits non-zero
when any case fails. A failing case is a compiler bug to fix, not a test to weaken.

  .venv/bin/python test/hostile/run_hostile_models.py --build build
  .venv/bin/python test/hostile/run_hostile_models.py --build build --only ext_ --keep
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, List, Optional, Sequence, Union

import onnx
from onnx import TensorProto, helper

sys.path.insert(0, str(Path(__file__).resolve().parent))
import contrib_models  # noqa: E402
import limit_models  # noqa: E402
import tree_models  # noqa: E402

TIMEOUT_S = 10.0
MEM_LIMIT_BYTES = 4 << 30  # RLIMIT_AS for the huge-claim cases
MAX_RSS_BYTES = 512 << 20  # peak RSS allowed for the huge-claim cases
OPSET = 17
IR_VERSION = 8

# An expectation is a substring, or a tuple of alternatives (any one must appear).
Expect = Union[str, tuple]


@dataclass
class Case:
    name: str
    build: Callable[["Ctx"], Optional[Path]]  # returns the model path (None: default)
    expect: List[Expect]
    check_too: bool = False  # also run `v4fc check` and expect the same error
    huge: bool = False  # run under RLIMIT_AS and bound the peak RSS
    may_succeed: bool = False  # resource cases: exit 0 is fine if fast (< TIMEOUT_S)
    single_error: bool = False  # exactly one `error:` line
    path_arg: Optional[str] = None  # override the model argument (non-existent path)


@dataclass
class Ctx:
    root: Path  # <tmp>/<case>
    model_dir: Path = field(init=False)
    outside: Path = field(init=False)
    out_dir: Path = field(init=False)

    def __post_init__(self):
        self.model_dir = self.root / "model"
        self.outside = self.root / "outside"
        self.out_dir = self.root / "out"
        for d in (self.model_dir, self.outside, self.out_dir):
            d.mkdir(parents=True)

    @property
    def model(self) -> Path:
        return self.model_dir / "model.onnx"

    def write(self, model: Union[onnx.ModelProto, bytes]) -> Path:
        data = model if isinstance(model, bytes) else model.SerializeToString()
        self.model.write_bytes(data)
        return self.model


# ---------------------------------------------------------------------------
# Model builders. Tensors are built as raw TensorProto messages so that nothing
# validates or "fixes" the hostile fields on the way out.

def f32(name: str, shape: Optional[Sequence[Optional[int]]]) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, None if shape is None else list(shape))


def make_model(nodes, inputs, outputs, initializers=(), opset=OPSET) -> onnx.ModelProto:
    graph = helper.make_graph(list(nodes), "hostile", list(inputs), list(outputs), list(initializers))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                              producer_name="hostile")
    model.ir_version = IR_VERSION
    return model


def raw_tensor(name: str, dims, raw: bytes = b"", data_type=TensorProto.FLOAT) -> TensorProto:
    t = TensorProto()
    t.name = name
    t.data_type = data_type
    t.dims.extend(dims)
    t.raw_data = raw
    return t


def add_model(init: TensorProto, n: int = 4) -> onnx.ModelProto:
    """y = x + W, with W the (hostile) initializer."""
    return make_model([helper.make_node("Add", ["x", init.name], ["y"], name="add0")],
                      [f32("x", [n])], [f32("y", [n])], [init])


def ext_tensor(name: str, dims, fields: dict) -> TensorProto:
    t = TensorProto()
    t.name = name
    t.data_type = TensorProto.FLOAT
    t.dims.extend(dims)
    t.data_location = TensorProto.EXTERNAL
    for k, v in fields.items():
        e = t.external_data.add()
        e.key = k
        e.value = str(v)
    return t


DATA16 = bytes(range(16))  # 4 float32 values


def ext_case(location_fn: Callable[[Ctx], str], extra: Optional[dict] = None,
             setup: Optional[Callable[[Ctx], None]] = None, dims=(4,)):
    def build(c: Ctx) -> Path:
        if setup:
            setup(c)
        fields = {}
        loc = location_fn(c)
        if loc is not None:
            fields["location"] = loc
        fields.update(extra or {})
        return c.write(add_model(ext_tensor("W", list(dims), fields), n=dims[0] if len(dims) == 1 else 4))
    return build


def write_outside(c: Ctx, name="x.bin", data=DATA16) -> Path:
    p = c.outside / name
    p.write_bytes(data)
    return p


def write_inside(c: Ctx, name="w.bin", data=DATA16) -> Path:
    p = c.model_dir / name
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_bytes(data)
    return p


def setup_hardlink(c: Ctx) -> None:
    src = write_outside(c)
    try:
        os.link(src, c.model_dir / "w.bin")
    except OSError:
        # Cross-device (or no hard links): a hard link inside the folder is refused too.
        src.unlink()
        inside = write_inside(c, "w.bin")
        os.link(inside, c.model_dir / "w2.bin")


def conv_model(in_hw=(8, 8), k=(3, 3), attrs=None, name="conv0") -> onnx.ModelProto:
    wshape = [1, 1, max(k[0], 1), max(k[1], 1)]
    n = wshape[2] * wshape[3]
    w = raw_tensor("W", wshape, b"\0\0\x80\x3f" * n)
    node = helper.make_node("Conv", ["x", "W"], ["y"], name=name, **(attrs or {}))
    return make_model([node], [f32("x", [1, 1, *in_hw])], [f32("y", None)], [w])


def single_node(op, inputs, in_shapes, attrs=None, inits=(), name="n0", outputs=("y",)):
    node = helper.make_node(op, list(inputs), list(outputs), name=name, **(attrs or {}))
    ins = [f32(n, s) for n, s in in_shapes]
    return make_model([node], ins, [f32(o, None) for o in outputs], list(inits))


def int64_tensor(name, values):
    return helper.make_tensor(name, TensorProto.INT64, [len(values)], values)


def relu_chain(n: int) -> onnx.ModelProto:
    nodes = [helper.make_node("Relu", ["x" if i == 0 else f"t{i - 1}"],
                              ["y" if i == n - 1 else f"t{i}"], name=f"r{i}") for i in range(n)]
    return make_model(nodes, [f32("x", [4])], [f32("y", [4])])


def pb_varint(v: int) -> bytes:
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        out.append(b | (0x80 if v else 0))
        if not v:
            return bytes(out)


def pb_field(number: int, payload: bytes) -> bytes:
    """A length-delimited protobuf field, appended to a serialized message."""
    return pb_varint(number << 3 | 2) + pb_varint(len(payload)) + payload


def nested_if(depth: int) -> bytes:
    """If nodes nested `depth` deep through then_branch, serialized by hand: the Python
    protobuf runtime refuses to build messages this deep (upb max depth)."""
    def leaf(tag) -> bytes:
        return helper.make_graph([helper.make_node("Identity", ["x"], [f"o_{tag}"], name=f"id_{tag}")],
                                 f"g_{tag}", [], [f32(f"o_{tag}", [4])]).SerializeToString()

    def if_node(level: int, then_graph: bytes, out: str) -> bytes:
        node = helper.make_node("If", ["cond"], [out], name=f"if_{level}").SerializeToString()
        for attr_name, g in (("then_branch", then_graph), ("else_branch", leaf(f"else_{level}"))):
            attr = onnx.AttributeProto(name=attr_name, type=onnx.AttributeProto.GRAPH).SerializeToString()
            node += pb_field(5, attr + pb_field(6, g))  # NodeProto.attribute, AttributeProto.g
        return node

    g = leaf("inner")
    for level in range(depth - 1):
        shell = helper.make_graph([], f"g_{level}", [], [f32(f"o_{level}", [4])]).SerializeToString()
        g = shell + pb_field(1, if_node(level, g, f"o_{level}"))  # GraphProto.node
    top = make_model([], [helper.make_tensor_value_info("cond", TensorProto.BOOL, []), f32("x", [4])],
                     [f32("y", [4])])
    graph = top.graph.SerializeToString() + pb_field(1, if_node(depth - 1, g, "y"))
    top.ClearField("graph")
    return top.SerializeToString() + pb_field(7, graph)  # ModelProto.graph


def simple_relu(inputs=None, name="relu0") -> onnx.ModelProto:
    return make_model([helper.make_node("Relu", ["x"], ["y"], name=name)],
                      inputs if inputs is not None else [f32("x", [4])], [f32("y", [4])])


def input_without_type(c: Ctx) -> Path:
    m = simple_relu()
    m.graph.input[0].ClearField("type")
    return c.write(m)


def input_elem_undefined(c: Ctx) -> Path:
    m = simple_relu([helper.make_tensor_value_info("x", TensorProto.UNDEFINED, [4])])
    return c.write(m)


def input_without_shape(c: Ctx) -> Path:
    m = simple_relu()
    m.graph.input[0].type.tensor_type.ClearField("shape")
    return c.write(m)


def truncated_model(c: Ctx) -> Path:
    w = raw_tensor("W", [256], bytes(1024))
    data = add_model(w, 256).SerializeToString()
    return c.write(data[: len(data) // 2])


def random_bytes(c: Ctx) -> Path:
    rng = random.Random(1234)
    # 0xff 0xff ... starts with an invalid wire type (7): never a valid protobuf.
    return c.write(b"\xff\xff" + bytes(rng.getrandbits(8) for _ in range(4096)))


def no_graph(c: Ctx) -> Path:
    m = onnx.ModelProto()
    m.ir_version = IR_VERSION
    op = m.opset_import.add()
    op.domain = ""
    op.version = OPSET
    return c.write(m)


def unsupported_ops(c: Ctx) -> Path:
    nodes = [
        helper.make_node("Relu", ["x"], ["r"], name="ok_relu"),
        helper.make_node("Foo", ["r"], ["f"], name="n_foo"),
        helper.make_node("Det", ["boxes"], ["sel"], name="n_det"),
        helper.make_node("MaxUnpool", ["r", "r"], ["u"], name="n_unpool"),
    ]
    m = make_model(nodes, [f32("x", [4]), f32("boxes", [1, 4, 4])],
                   [f32("f", None), f32("sel", None), f32("u", None)])
    return c.write(m)


# ---------------------------------------------------------------------------
# The cases.

def W(s: str) -> str:
    return f"'{s}'"


CASES: List[Case] = []


def case(name, build, expect, **kw):
    CASES.append(Case(name, build, list(expect), **kw))


# 1. External data: path traversal, links, out-of-file ranges.
case("ext_absolute_path",
     ext_case(lambda c: str(write_outside(c))), ["'W'", "absolute"])
case("ext_dotdot",
     ext_case(lambda c: "../x.bin", setup=lambda c: (c.root / "x.bin").write_bytes(DATA16)),
     ["'W'", "'../x.bin'", "'..'"])
case("ext_nested_dotdot",
     ext_case(lambda c: "a/../../outside/x.bin",
              setup=lambda c: (write_outside(c), (c.model_dir / "a").mkdir())),
     ["'W'", "'a/../../outside/x.bin'", "'..'"])
case("ext_symlink_file",
     ext_case(lambda c: "w.bin", setup=lambda c: os.symlink(write_outside(c), c.model_dir / "w.bin")),
     ["'W'", "'w.bin'", "symbolic link"])
case("ext_symlink_dir_component",
     ext_case(lambda c: "d/x.bin", setup=lambda c: (write_outside(c), os.symlink(c.outside, c.model_dir / "d"))),
     ["'W'", "'d/x.bin'", "symbolic link"])
case("ext_hardlink",
     ext_case(lambda c: "w.bin", setup=setup_hardlink), ["'W'", "'w.bin'", "hard link"])
case("ext_offset_past_eof",
     ext_case(lambda c: "w.bin", {"offset": 100, "length": 16}, setup=lambda c: write_inside(c)),
     ["'W'", "'w.bin'", "past the end"])
case("ext_offset_plus_length_past_eof",
     ext_case(lambda c: "w.bin", {"offset": 8, "length": 16}, setup=lambda c: write_inside(c)),
     ["'W'", "'w.bin'", "past the end"])
case("ext_offset_length_wrap",
     ext_case(lambda c: "w.bin", {"offset": 2**64 - 8, "length": 16}, setup=lambda c: write_inside(c)),
     ["'W'", "past the end"])
case("ext_length_mismatch",
     ext_case(lambda c: "w.bin", {"length": 32}, setup=lambda c: write_inside(c, data=bytes(32))),
     ["'W'", "length 32", "16 bytes"])
case("ext_file_size_mismatch_no_length",
     ext_case(lambda c: "w.bin", setup=lambda c: write_inside(c, data=bytes(20))),
     ["'W'", "20", "16 bytes"])
case("ext_offset_not_a_number",
     ext_case(lambda c: "w.bin", {"offset": "abc"}, setup=lambda c: write_inside(c)),
     ["'W'", "'offset'", "not a number"])
case("ext_offset_trailing_garbage",  # "12abc" must not be read as 12 (the file fits offset 12)
     ext_case(lambda c: "w.bin", {"offset": "12abc"}, setup=lambda c: write_inside(c, data=bytes(28))),
     ["'W'", "'offset'", "not a number"])
case("ext_offset_negative",  # "-1" must not wrap to 2^64-1
     ext_case(lambda c: "w.bin", {"offset": "-1"}, setup=lambda c: write_inside(c)),
     ["'W'", ("not a number", "negative", "past the end")])
case("ext_offset_out_of_range",
     ext_case(lambda c: "w.bin", {"offset": "9" * 30}, setup=lambda c: write_inside(c)),
     ["'W'", "'offset'", "not a number"])
case("ext_missing_location",
     ext_case(lambda c: None, {"length": 16}), ["'W'", "without a location"])
case("ext_file_not_found",
     ext_case(lambda c: "nothere.bin"), ["'W'", "'nothere.bin'", "not found"])
case("ext_huge_claim_tiny_file",
     ext_case(lambda c: "w.bin", setup=lambda c: write_inside(c), dims=(2**20, 2**20)),
     ["'W'", "length 16", "4398046511104 bytes"], huge=True)
def sparse_inside(c: Ctx, size: int) -> None:
    # A sparse file: the claim is true, but far too large to load.
    with open(c.model_dir / "big.bin", "wb") as f:
        f.truncate(size)


case("ext_huge_sparse_file",
     ext_case(lambda c: "big.bin", setup=lambda c: sparse_inside(c, 3 * 2**33), dims=(2**31, 3)),
     ["'W'", "25769803776 bytes", "16 GiB limit"], huge=True)
case("ext_directory_not_file",
     ext_case(lambda c: "d", setup=lambda c: (c.model_dir / "d").mkdir()),
     ["'W'", "'d'", "not a regular file"])

def _float_data_mismatch() -> onnx.ModelProto:
    t = TensorProto()
    t.name = "W"
    t.data_type = TensorProto.FLOAT
    t.dims.extend([4])
    t.float_data.extend([1.0, 2.0, 3.0])
    return add_model(t)


def _typed_huge() -> TensorProto:
    t = TensorProto()
    t.name = "W"
    t.data_type = TensorProto.FLOAT
    t.dims.extend([2**40])
    t.float_data.append(1.0)
    return t


# 2. Tensor metadata that disagrees with its data.
case("raw_data_short",
     lambda c: c.write(add_model(raw_tensor("W", [4], bytes(12)))), ["'W'", "12 bytes", "need 16"])
case("raw_data_long",
     lambda c: c.write(add_model(raw_tensor("W", [4], bytes(20)))), ["'W'", "20 bytes", "need 16"])
case("float_data_count_mismatch",
     lambda c: c.write(_float_data_mismatch()),
     ["'W'", "3 typed values", "need 4"])
case("negative_dim",
     lambda c: c.write(add_model(raw_tensor("W", [-4], bytes(16)))), ["'W'", "negative dim"])
case("dims_product_overflows_int64",
     lambda c: c.write(add_model(raw_tensor("W", [2**40, 2**40], bytes(16)))), ["'W'", "2^40"],
     huge=True)
case("dims_product_wraps_to_small",
     lambda c: c.write(add_model(raw_tensor("W", [2**62, 4, 4], bytes(16)))), ["'W'", "2^40"],
     huge=True)
case("tiny_file_claims_2pow40_elements",
     lambda c: c.write(add_model(raw_tensor("W", [2**40], bytes(4)))), ["'W'", "4 bytes"], huge=True)
case("tiny_file_claims_2pow40_typed",
     lambda c: c.write(add_model(_typed_huge())), ["'W'", "1 typed values"], huge=True)


# 2b. Packed and storage-only element types.
def _cast_add_model(init: TensorProto, n: int = 4) -> onnx.ModelProto:
    """y = x + Cast(W, float): W of a packed / storage-only type."""
    return make_model([helper.make_node("Cast", [init.name], ["wf"], to=TensorProto.FLOAT, name="cast0"),
                       helper.make_node("Add", ["x", "wf"], ["y"], name="add0")],
                      [f32("x", [n])], [f32("y", [n])], [init])


def _int4_typed(count: int) -> TensorProto:
    t = TensorProto()
    t.name = "W"
    t.data_type = TensorProto.INT4
    t.dims.extend([5])
    t.int32_data.extend([0x21] * count)
    return t


case("int4_raw_data_unpacked_length",  # 5 int4 values pack into 3 bytes, not 5
     lambda c: c.write(_cast_add_model(raw_tensor("W", [5], bytes(5), data_type=TensorProto.INT4), 5)),
     ["'W'", "5 bytes", "need 3"])
case("int4_int32_data_count_mismatch",
     lambda c: c.write(_cast_add_model(_int4_typed(2), 5)), ["'W'", "typed values", "need 5"])
case("float4_constant_not_supported",
     lambda c: c.write(_cast_add_model(raw_tensor("W", [4], bytes(2), data_type=TensorProto.FLOAT4E2M1))),
     ["'W'", "float4e2m1", "constants cannot"])
case("bfloat16_into_arithmetic",
     lambda c: c.write(make_model([helper.make_node("Add", ["x", "x"], ["y"], name="add_bf16")],
                                  [helper.make_tensor_value_info("x", TensorProto.BFLOAT16, [4])],
                                  [helper.make_tensor_value_info("y", TensorProto.BFLOAT16, [4])])),
     ["'add_bf16'", "bf16", "only conversions"])
case("cast_to_unknown_dtype",
     lambda c: c.write(make_model([helper.make_node("Cast", ["x"], ["y"], to=1000, name="cast_bad")],
                                  [f32("x", [4])], [f32("y", [4])])),
     ["'cast_bad'", "unsupported element type", "1000"])


# 3. Missing or undefined type fields.
case("input_without_type", input_without_type, ["'x'", ("no type", "not a tensor")])
case("input_elem_type_undefined", input_elem_undefined, ["'x'", "unsupported element type"])
case("initializer_dtype_999",
     lambda c: c.write(add_model(raw_tensor("W", [4], bytes(16), data_type=999))),
     ["'W'", "unsupported element type", "999"])
case("input_without_shape", input_without_shape, ["'x'", "no shape"])

# 4. Resource exhaustion.
case("relu_chain_100k_nodes", lambda c: c.write(relu_chain(100_000)), [], may_succeed=True)
case("nested_if_50_deep", lambda c: c.write(nested_if(50)),
     [("not supported", "nested", "too deep", "depth")], check_too=True)
# If is inlined at import (both branches for a run-time condition): 10 levels
# compile; what matters is no crash and no runaway growth.
case("nested_if_10_deep", lambda c: c.write(nested_if(10)), [], may_succeed=True)
case("graph_input_dims_overflow",
     lambda c: c.write(simple_relu([f32("x", [2**62, 4])])),
     ["'x'", ("overflow", "too large", "too many", "2^", "exceeds")], huge=True)

# 5. Graph structure.
case("cycle",
     lambda c: c.write(make_model([helper.make_node("Relu", ["b_out"], ["a_out"], name="A"),
                                   helper.make_node("Relu", ["a_out"], ["b_out"], name="B")],
                                  [f32("x", [4])], [f32("b_out", [4])])),
     ["'A'", "'b_out'", "cycle"], check_too=True)
case("undefined_value",
     lambda c: c.write(make_model([helper.make_node("Add", ["x", "ghost"], ["y"], name="add0")],
                                  [f32("x", [4])], [f32("y", [4])])),
     ["'add0'", "'ghost'", "defines"], check_too=True)
case("duplicate_output_names",
     lambda c: c.write(make_model([helper.make_node("Relu", ["x"], ["y"], name="first"),
                                   helper.make_node("Sigmoid", ["x"], ["y"], name="second")],
                                  [f32("x", [4])], [f32("y", [4])])),
     ["'second'", "'y'", "more than once"], check_too=True)
case("duplicate_input_names",
     lambda c: c.write(make_model([helper.make_node("Add", ["x", "x"], ["y"], name="add0")],
                                  [f32("x", [4]), f32("x", [4])], [f32("y", [4])])),
     ["'x'", "declared twice"], check_too=True)


def fifo_model(c: Ctx) -> Path:
    # A FIFO with no writer: opening it must not block the compiler.
    os.mkfifo(c.model)
    return c.model


case("model_is_a_fifo", fifo_model, ["model.onnx", "not a regular file"], check_too=True)
case("model_is_a_directory", lambda c: (c.model.mkdir(), c.model)[1], ["model.onnx", ("not a regular file", "directory")],
     check_too=True)
case("ext_data_is_a_fifo",
     ext_case(lambda c: "w.bin", setup=lambda c: os.mkfifo(c.model_dir / "w.bin")),
     ["'W'", "'w.bin'", "not a regular file"])
case("sum_of_20000_inputs",
     lambda c: c.write(make_model([helper.make_node("Sum", ["x"] * 20000, ["y"], name="wide")],
                                  [f32("x", [4])], [f32("y", [4])])),
     [], may_succeed=True)
case("output_shadows_input",
     lambda c: c.write(make_model([helper.make_node("Relu", ["x"], ["x"], name="shadow")],
                                  [f32("x", [4])], [f32("x", [4])])),
     ["'shadow'", "'x'", "more than once"], check_too=True)
case("graph_output_never_produced",
     lambda c: c.write(make_model([helper.make_node("Relu", ["x"], ["y"], name="relu0")],
                                  [f32("x", [4])], [f32("y", [4]), f32("z", [4])])),
     ["'z'", "never produced"], check_too=True)
case("three_unsupported_ops", unsupported_ops,
     ["3 node(s)", "'n_foo'", "(Foo, opset 17)", "'n_det'", "(Det, opset 17)",
      "'n_unpool'", "(MaxUnpool, opset 17)"], check_too=True, single_error=True)

# 5b. TreeEnsemble tables that point outside themselves, cycle or nest too deep (tree_models.py).
tree_models.register(case)
# 5c. Depth and rank limits past what any model uses (limit_models.py).
limit_models.register(case, sys.modules[__name__])
# 5d. Legacy tree tables, ML pre-processing and DynamicQuantizeLSTM attributes (contrib_models.py).
contrib_models.register(case)

# 6. Attributes out of range.
case("conv_kernel_shape_0",
     lambda c: c.write(conv_model(k=(0, 0), attrs={"kernel_shape": [0, 0]})),
     ["'conv0'", "kernel_shape must be positive"], check_too=True)
case("conv_stride_0",
     lambda c: c.write(conv_model(attrs={"strides": [0, 1]})), ["'conv0'", "strides must be positive"],
     check_too=True)
case("conv_negative_dilation",
     lambda c: c.write(conv_model(attrs={"dilations": [1, -2]})), ["'conv0'", "dilations must be positive"],
     check_too=True)
case("conv_kernel_larger_than_input",
     lambda c: c.write(conv_model(in_hw=(3, 3), k=(5, 5))), ["'conv0'", "empty output"])
case("conv_negative_pads",
     lambda c: c.write(conv_model(attrs={"pads": [-1, 0, 0, 0]})), ["'conv0'", "non-negative"])
case("conv_pads_huge_negative",
     lambda c: c.write(conv_model(attrs={"pads": [-(2**62), 0, -(2**62), 0]})), ["'conv0'", "non-negative"])
case("transpose_perm_duplicate",
     lambda c: c.write(single_node("Transpose", ["x"], [("x", [2, 3, 4])], {"perm": [0, 0, 1]})),
     ["'n0'", "perm is not a permutation"])
case("transpose_perm_out_of_range",
     lambda c: c.write(single_node("Transpose", ["x"], [("x", [2, 3, 4])], {"perm": [0, 1, 5]})),
     ["'n0'", "perm is not a permutation"])
case("transpose_perm_negative",
     lambda c: c.write(single_node("Transpose", ["x"], [("x", [2, 3, 4])], {"perm": [0, 1, -1]})),
     ["'n0'", "perm is not a permutation"])
# Found by the onnx fuzz target (fuzz/fuzz_onnx.cpp): input and output counts
# are checked against the operator's schema before any importer indexes them.
case("reshape_no_inputs",
     lambda c: c.write(single_node("Reshape", [], [("x", [2, 3])])),
     ["'n0'", "has 0 inputs; the operator takes 2"], check_too=True)
case("reshape_required_input_empty",
     lambda c: c.write(single_node("Reshape", ["x", ""], [("x", [2, 3])])),
     ["'n0'", "required input 1 is empty"], check_too=True)
case("relu_too_many_inputs",
     lambda c: c.write(single_node("Relu", ["x", "x"], [("x", [2, 3])])),
     ["'n0'", "has 2 inputs; the operator takes 1"], check_too=True)
case("relu_two_outputs",
     lambda c: c.write(single_node("Relu", ["x"], [("x", [2, 3])], outputs=("y", "z"))),
     ["'n0'", "has 2 outputs; the operator has 1"], check_too=True)
case("slice_axes_shorter_than_starts",
     lambda c: c.write(single_node("Slice", ["x", "s", "e", "a"], [("x", [4, 4])],
                                   inits=[int64_tensor("s", [0, 0]), int64_tensor("e", [2, 2]),
                                          int64_tensor("a", [0])])),
     ["'n0'", "starts, ends, axes and steps must have the same length"])
# Found by the onnx fuzz smoke: a run-time axes input longer than the rank,
# with keepdims = 0, made a negative result rank (an LLVM fatal error).
case("reduce_runtime_axes_longer_than_rank",
     lambda c: c.write(make_model([helper.make_node("ReduceProd", ["x", "axes"], ["y"], name="n0", keepdims=0)],
                                  [f32("x", [3, 2, 2]), helper.make_tensor_value_info("axes", TensorProto.INT64, [34])],
                                  [f32("y", None)], opset=18)),
     ["'n0'", "axes has 34 entries but the input has rank 3"])
case("softmax_axis_out_of_range",
     lambda c: c.write(single_node("Softmax", ["x"], [("x", [2, 3])], {"axis": 5})),
     ["'n0'", "axis out of range"])
case("concat_axis_out_of_range",
     lambda c: c.write(single_node("Concat", ["x", "z"], [("x", [2, 3]), ("z", [2, 3])], {"axis": 3})),
     ["'n0'", "axis out of range"])
case("concat_axis_int64_min",
     lambda c: c.write(single_node("Concat", ["x", "z"], [("x", [2, 3]), ("z", [2, 3])], {"axis": -(2**63)})),
     ["'n0'", "axis out of range"])
case("gather_axis_out_of_range",
     lambda c: c.write(make_model([helper.make_node("Gather", ["x", "idx"], ["y"], name="n0", axis=-5)],
                                  [f32("x", [2, 3])], [f32("y", None)], [int64_tensor("idx", [0, 1])])),
     ["'n0'", "axis out of range"])
case("reshape_two_minus_one",
     lambda c: c.write(make_model([helper.make_node("Reshape", ["x", "s"], ["y"], name="n0")],
                                  [f32("x", [2, 3, 4])], [f32("y", None)], [int64_tensor("s", [-1, -1])])),
     ["'n0'", "more than one -1"])
case("reshape_count_mismatch",
     lambda c: c.write(make_model([helper.make_node("Reshape", ["x", "s"], ["y"], name="n0")],
                                  [f32("x", [2, 3, 4])], [f32("y", None)], [int64_tensor("s", [5, 5])])),
     ["'n0'", "element count", "24"])
case("reshape_infer_indivisible",
     lambda c: c.write(make_model([helper.make_node("Reshape", ["x", "s"], ["y"], name="n0")],
                                  [f32("x", [2, 3, 4])], [f32("y", None)], [int64_tensor("s", [-1, 5])])),
     ["'n0'", "cannot reshape 24"])
case("reshape_product_overflow",
     lambda c: c.write(make_model([helper.make_node("Reshape", ["x", "s"], ["y"], name="n0")],
                                  [f32("x", [2, 3, 4])], [f32("y", None)],
                                  [int64_tensor("s", [2**62, 2**62, 0])])),
     ["'n0'", ("element count", "overflow", "cannot reshape")])
case("tile_repeats_overflow",
     lambda c: c.write(make_model([helper.make_node("Tile", ["x", "r"], ["y"], name="n0")],
                                  [f32("x", [4, 6])], [f32("y", None)], [int64_tensor("r", [2**62, 1])])),
     ["'n0'", "output dim 0 = 4 x 4611686018427387904 repeats is larger than 2^40"])
case("tile_repeats_negative",
     lambda c: c.write(make_model([helper.make_node("Tile", ["x", "r"], ["y"], name="n0")],
                                  [f32("x", [4, 6])], [f32("y", None)], [int64_tensor("r", [1, -2])])),
     ["'n0'", "repeats[1] is negative"])
case("maxpool_pads_ge_kernel",
     lambda c: c.write(single_node("MaxPool", ["x"], [("x", [1, 1, 8, 8])],
                                   {"kernel_shape": [2, 2], "pads": [2, 2, 2, 2]})),
     ["'n0'", "pads must be smaller than the kernel"])

# 7. Not a model at all.
case("random_bytes", random_bytes, ["not a valid ONNX model"], check_too=True)
case("empty_file", lambda c: c.write(b""), [("no graph", "empty")], check_too=True)
case("truncated_model", truncated_model, ["not a valid ONNX model"], check_too=True)
case("nonexistent_path", lambda c: c.model_dir / "does_not_exist.onnx", ["does_not_exist.onnx"],
     check_too=True)
case("no_graph", no_graph, ["no graph"], check_too=True)


# ---------------------------------------------------------------------------
# Running.

@dataclass
class Result:
    rc: Optional[int]  # None: killed by a signal or timed out
    signal: Optional[int]
    timed_out: bool
    stderr: str
    elapsed: float
    max_rss: int  # bytes


# Set by --sanitized: ASan reserves terabytes of virtual shadow memory, so an
# address-space limit can't be used; the peak-RSS bound still applies.
ADDRESS_SPACE_LIMIT = True


def run(cmd: List[str], cwd: Path, huge: bool) -> Result:
    def limit():
        if huge and ADDRESS_SPACE_LIMIT:
            resource.setrlimit(resource.RLIMIT_AS, (MEM_LIMIT_BYTES, MEM_LIMIT_BYTES))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))

    with tempfile.TemporaryFile() as err, tempfile.TemporaryFile() as out:
        start = time.monotonic()
        p = subprocess.Popen(cmd, cwd=cwd, stdout=out, stderr=err, stdin=subprocess.DEVNULL,
                             preexec_fn=limit, start_new_session=True)
        status, usage, timed_out = None, None, False
        while True:
            pid, st, ru = os.wait4(p.pid, os.WNOHANG)
            if pid:
                status, usage = st, ru
                break
            if time.monotonic() - start > TIMEOUT_S:
                timed_out = True
                os.killpg(p.pid, signal.SIGKILL)
                _, status, usage = os.wait4(p.pid, 0)
                break
            time.sleep(0.01)
        p.returncode = -1  # reaped above; keep Popen from waiting again
        elapsed = time.monotonic() - start
        err.seek(0)
        text = err.read().decode("utf-8", "replace")
    # Match expectations against stderr without the temp path (it holds the case name).
    text = text.replace(str(cwd), "<case>")
    sig = os.WTERMSIG(status) if os.WIFSIGNALED(status) else None
    rc = None if timed_out else (os.WEXITSTATUS(status) if os.WIFEXITED(status) else None)
    return Result(rc, sig, timed_out, text, elapsed, usage.ru_maxrss * 1024)


def describe(r: Result) -> str:
    if r.timed_out:
        return f"timed out after {TIMEOUT_S:.0f} s (hang)"
    if r.signal is not None:
        return f"killed by signal {r.signal} ({signal.Signals(r.signal).name}) (crash)"
    return f"exit code {r.rc}"


def short(text: str, n: int = 600) -> str:
    text = text.strip()
    return text if len(text) <= n else text[:n] + f"... [{len(text) - n} more chars]"


def has(text: str, e: Expect) -> bool:
    return any(a in text for a in e) if isinstance(e, tuple) else e in text


def check_result(c: Case, what: str, r: Result, problems: List[str]) -> None:
    if c.may_succeed and r.rc == 0:
        if r.elapsed >= TIMEOUT_S:
            problems.append(f"{what}: succeeded but took {r.elapsed:.1f} s")
        return
    if r.rc != 1:
        problems.append(f"{what}: expected exit code 1, got {describe(r)}; stderr: {short(r.stderr)!r}")
        return
    if "error:" not in r.stderr:
        problems.append(f"{what}: stderr has no 'error:'; stderr: {short(r.stderr)!r}")
    elif c.single_error and r.stderr.count("error:") != 1:
        problems.append(f"{what}: expected exactly one 'error:', got {r.stderr.count('error:')}")
    missing = [e for e in c.expect if not has(r.stderr, e)]
    if missing:
        problems.append(f"{what}: stderr lacks {missing}; stderr: {short(r.stderr)!r}")
    if c.huge and r.max_rss > MAX_RSS_BYTES:
        problems.append(f"{what}: peak RSS {r.max_rss >> 20} MiB > {MAX_RSS_BYTES >> 20} MiB")


def run_case(c: Case, v4fc: Path, tmp: Path) -> List[str]:
    ctx = Ctx(tmp / c.name)
    model = c.build(ctx) or ctx.model
    out = ctx.out_dir / "out.v4f"
    problems: List[str] = []
    r = run([str(v4fc), "compile", str(model), "-o", str(out)], ctx.root, c.huge)
    check_result(c, "compile", r, problems)
    if not (c.may_succeed and r.rc == 0):
        leftovers = sorted(p.name for p in ctx.out_dir.iterdir())
        if leftovers:
            problems.append(f"compile: left files in the output folder: {leftovers}")
    tmp_files = sorted(str(p.relative_to(ctx.root)) for p in ctx.root.rglob("*.tmp*"))
    if tmp_files:
        problems.append(f"compile: left temporary files: {tmp_files}")
    if c.check_too:
        r = run([str(v4fc), "check", str(model)], ctx.root, c.huge)
        check_result(c, "check", r, problems)
    return problems


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default="build", help="build folder holding bin/v4fc")
    ap.add_argument("--only", action="append", default=[], help="run cases whose name contains this")
    ap.add_argument("--keep", action="store_true", help="keep the temp folder")
    ap.add_argument("--list", action="store_true", help="list the cases and exit")
    ap.add_argument("--sanitized", action="store_true",
                    help="the binaries are built with ASan: no RLIMIT_AS (the RSS bound stays), 6x timeout")
    args = ap.parse_args()
    global ADDRESS_SPACE_LIMIT, TIMEOUT_S
    ADDRESS_SPACE_LIMIT = not args.sanitized
    if args.sanitized:
        TIMEOUT_S *= 6  # ASan/UBSan binaries run several times slower

    if args.list:
        for c in CASES:
            print(c.name)
        return 0
    v4fc = Path(args.build).resolve() / "bin" / "v4fc"
    for _ in range(30):  # another engineer may be relinking it
        if v4fc.exists():
            break
        time.sleep(2)
    if not v4fc.exists():
        print(f"error: {v4fc} not found", file=sys.stderr)
        return 2

    cases = [c for c in CASES if not args.only or any(o in c.name for o in args.only)]
    tmp = Path(tempfile.mkdtemp(prefix="v4f-hostile-"))
    failed = []
    try:
        for c in cases:
            try:
                problems = run_case(c, v4fc, tmp)
            except Exception as e:  # a broken generator is a failure too
                problems = [f"test harness error: {type(e).__name__}: {e}"]
            if problems:
                failed.append(c.name)
                print(f"FAIL {c.name}: " + "\n    ".join(problems), flush=True)
            else:
                print(f"PASS {c.name}", flush=True)
    finally:
        if args.keep:
            print(f"kept {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    print(f"\n{len(cases) - len(failed)} passed, {len(failed)} failed of {len(cases)}")
    for name in failed:
        print(f"  failed: {name}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
