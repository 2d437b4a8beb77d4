"""End-to-end generators for run-time control flow and shapes: If on
run-time conditions, RNN/GRU/LSTM over run-time lengths, Loop/Scan run as
loops in the plan, and run-time broadcasting checks. Part of models.py's
all_generators(); same conventions (deterministic, helper-built)."""

from __future__ import annotations

from typing import Callable, Dict

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from models import F32, I64, Case, _randn, _vi


def make_if_runtime_branches() -> Case:
    """If on run-time conditions whose branches differ in shape: one
    condition computed from the data (ReduceSum(x) > 0), one from an int64
    input flag; a nested If inside a branch. Only the taken side runs."""
    then_g = helper.make_graph(
        [helper.make_node("Concat", ["x", "x"], ["t_out"], axis=1)], "then_g", [],
        [_vi("t_out", F32, ["N", 8])])
    inner_then = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["it_out"])], "inner_then", [], [_vi("it_out", F32, ["N", 4])])
    inner_else = helper.make_graph(
        [helper.make_node("Slice", ["x", "s0", "s3", "s1"], ["ie_out"])], "inner_else", [],
        [_vi("ie_out", F32, ["N", 3])])
    else_g = helper.make_graph(
        [helper.make_node("Greater", ["flag", "zero_i"], ["inner_c"]),
         helper.make_node("If", ["inner_c"], ["e_out"], then_branch=inner_then, else_branch=inner_else)],
        "else_g", [], [_vi("e_out", F32, ["N", "K"])])
    nodes = [
        helper.make_node("ReduceSum", ["x"], ["total"], keepdims=0),
        helper.make_node("Greater", ["total", "zero"], ["c"]),
        helper.make_node("If", ["c"], ["y"], then_branch=then_g, else_branch=else_g),
        helper.make_node("Mul", ["y", "two"], ["z"]),
    ]
    inits = [numpy_helper.from_array(np.array(0.0, np.float32), "zero"),
             numpy_helper.from_array(np.array(2.0, np.float32), "two"),
             numpy_helper.from_array(np.array([0], np.int64), "zero_i"),
             numpy_helper.from_array(np.array([0], np.int64), "s0"),
             numpy_helper.from_array(np.array([3], np.int64), "s3"),
             numpy_helper.from_array(np.array([1], np.int64), "s1")]
    graph = helper.make_graph(nodes, "if_runtime_branches",
                              [_vi("x", F32, ["N", 4]), _vi("flag", I64, [1])],
                              [_vi("z", F32, ["N", "W"])], inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    rng = np.random.default_rng(107)
    pos = np.abs(_randn(rng, [2, 4])) + 0.1
    neg = -np.abs(_randn(rng, [3, 4])) - 0.1
    return Case(m, [{"x": pos, "flag": np.array([0], np.int64)},
                    {"x": neg, "flag": np.array([1], np.int64)},
                    {"x": neg[:1], "flag": np.array([0], np.int64)}],
                note="then [N,8]; else-then [N,4]; else-else [N,3]")


def make_recurrent_dynamic() -> Case:
    """RNN, GRU and LSTM over a run-time sequence length and batch (one
    time-loop kernel each, not unrolled): a reverse RNN with clip; a
    bidirectional GRU (linear_before_reset 0) with initial_h and run-time
    sequence_lens; an LSTM with peepholes, biases and input_forget whose
    hidden size 16 uses the 8-lane dot products. Refused at run time: an
    initial_h whose batch (its own symbol G) disagrees with X's, a sequence
    length > seq."""
    rng = np.random.default_rng(211)
    I, H1, H2, H3 = 5, 3, 4, 16

    def w(shape, scale=0.4):
        return _randn(rng, shape, scale)

    inits = [
        numpy_helper.from_array(w([1, H1, I]), "rw"), numpy_helper.from_array(w([1, H1, H1]), "rr"),
        numpy_helper.from_array(w([1, 2 * H1]), "rb"),
        numpy_helper.from_array(w([2, 3 * H2, I]), "gw"), numpy_helper.from_array(w([2, 3 * H2, H2]), "gr"),
        numpy_helper.from_array(w([2, 6 * H2]), "gb"),
        numpy_helper.from_array(w([1, 4 * H3, I]), "lw"), numpy_helper.from_array(w([1, 4 * H3, H3]), "lr"),
        numpy_helper.from_array(w([1, 8 * H3]), "lb"), numpy_helper.from_array(w([1, 3 * H3]), "lp"),
    ]
    nodes = [
        helper.make_node("RNN", ["x", "rw", "rr", "rb"], ["ry", "rh"], hidden_size=H1, direction="reverse",
                         clip=1.5),
        helper.make_node("GRU", ["x", "gw", "gr", "gb", "lens", "gh0"], ["gy", "gh"], hidden_size=H2,
                         direction="bidirectional"),
        helper.make_node("LSTM", ["x", "lw", "lr", "lb", "lens", "", "", "lp"], ["ly", "lh", "lc"],
                         hidden_size=H3, input_forget=1),
    ]
    graph = helper.make_graph(
        nodes, "recurrent_dynamic",
        # gh0's direction and hidden dims are symbols too (as when an exporter
        # builds the state at run time): the GRU's definition fixes them,
        # checked at run time.
        [_vi("x", F32, ["T", "B", I]), _vi("lens", TensorProto.INT32, ["B"]), _vi("gh0", F32, ["D", "G", "HS"])],
        [_vi("ry", F32, ["T", 1, "B", H1]), _vi("rh", F32, [1, "B", H1]), _vi("gy", F32, ["T", 2, "B", H2]),
         _vi("gh", F32, [2, "B", H2]), _vi("ly", F32, ["T", 1, "B", H3]), _vi("lc", F32, [1, "B", H3])], inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])

    def inputs(T, B, lens):
        return {"x": _randn(rng, [T, B, I]), "lens": np.array(lens, np.int32), "gh0": _randn(rng, [2, B, H2], 0.5)}

    bad_batch = inputs(3, 2, [3, 1])
    bad_batch["gh0"] = _randn(rng, [2, 3, H2])
    return Case(m, [inputs(4, 2, [4, 2]), inputs(7, 3, [7, 1, 5]), inputs(1, 1, [1])],
                note="T,B = 4,2 / 7,3 / 1,1 with sequence_lens",
                refused_sets=[(bad_batch, "operand dims disagree"), (inputs(3, 2, [4, 1]), "index out of range")])


def make_loop_runtime(with_scan: bool = True) -> Case:
    """Loop with a run-time trip count M and initial condition, run as a loop
    in the plan (not unrolled): a carried [N, 3] state with a dynamic N, an
    If inside the body on a condition computed from the data of each
    iteration (ReduceSum(a) > 0: re-read every iteration), the iteration
    number used as data, and a scan output of run-time length. Refused at
    run time: a trip count above the 4096-iteration bound."""
    then_g = helper.make_graph([helper.make_node("Sub", ["a", "fi"], ["t_out"])], "then_g", [],
                               [_vi("t_out", F32, ["N", 3])])
    else_g = helper.make_graph([helper.make_node("Add", ["a", "half"], ["e_out"])], "else_g", [],
                               [_vi("e_out", F32, ["N", 3])])
    body = helper.make_graph(
        [helper.make_node("Identity", ["ci"], ["co"]),
         helper.make_node("Cast", ["i"], ["fi"], to=TensorProto.FLOAT),
         helper.make_node("ReduceSum", ["a"], ["s"], keepdims=0),
         helper.make_node("Greater", ["s", "zero"], ["pos"]),
         helper.make_node("If", ["pos"], ["an"], then_branch=then_g, else_branch=else_g),
         helper.make_node("Mul", ["an", "two"], ["sn"])],
        "body", [_vi("i", I64, []), _vi("ci", TensorProto.BOOL, []), _vi("a", F32, ["N", 3])],
        [_vi("co", TensorProto.BOOL, []), _vi("an", F32, ["N", 3])] + ([_vi("sn", F32, ["N", 3])] if with_scan else []))
    inits = [numpy_helper.from_array(np.array(0.0, np.float32), "zero"),
             numpy_helper.from_array(np.array(0.5, np.float32), "half"),
             numpy_helper.from_array(np.array(2.0, np.float32), "two")]
    outs = [_vi("acc", F32, ["N", 3])] + ([_vi("steps", F32, ["K", "N", 3])] if with_scan else [])
    graph = helper.make_graph(
        [helper.make_node("Loop", ["m", "go", "x"], ["acc", "steps"] if with_scan else ["acc"], body=body)],
        "loop_runtime", [_vi("m", I64, []), _vi("go", TensorProto.BOOL, []), _vi("x", F32, ["N", 3])], outs, inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 16)])
    rng = np.random.default_rng(313)

    def inputs(trips, go, n):
        return {"m": np.array(trips, np.int64), "go": np.array(go, np.bool_), "x": _randn(rng, [n, 3])}

    if not with_scan:
        return Case(m, [inputs(3, False, 1), inputs(0, True, 3), inputs(2, True, 2)], note="M,go,N = 3,0,1 / 0,1,3 / 2,1,2")
    return Case(m, [inputs(5, True, 2), inputs(9, True, 4), inputs(1, True, 3)],
                note="M,go,N = 5,1,2 / 9,1,4 / 1,1,3",
                refused_sets=[(inputs(5000, True, 1), "above the bound of 4096 iterations")])


def make_scan_runtime() -> Case:
    """Scan-16 over a run-time sequence length (run as a loop in the plan):
    two scan inputs on different axes, the second read backwards, a carried
    state, one scan output along axis 0 and one along axis 1 in reverse."""
    body = helper.make_graph(
        [helper.make_node("Mul", ["x", "w"], ["xw"]),
         helper.make_node("Add", ["s", "xw"], ["s_next"]),
         helper.make_node("Identity", ["s_next"], ["y"]),
         helper.make_node("Sub", ["x", "w"], ["z"])],
        "body", [_vi("s", F32, [3]), _vi("x", F32, [3]), _vi("w", F32, [3])],
        [_vi("s_next", F32, [3]), _vi("y", F32, [3]), _vi("z", F32, [3])])
    graph = helper.make_graph(
        [helper.make_node("Scan", ["s0", "X", "W"], ["s", "Y", "Z"], body=body, num_scan_inputs=2,
                          scan_input_axes=[0, 1], scan_input_directions=[0, 1], scan_output_axes=[0, 1],
                          scan_output_directions=[0, 1])],
        "scan_runtime", [_vi("s0", F32, [3]), _vi("X", F32, ["T", 3]), _vi("W", F32, [3, "T"])],
        [_vi("s", F32, [3]), _vi("Y", F32, ["T", 3]), _vi("Z", F32, [3, "T"])])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 16)])
    rng = np.random.default_rng(419)

    def inputs(t):
        return {"s0": _randn(rng, [3]), "X": _randn(rng, [t, 3]), "W": _randn(rng, [3, t])}

    return Case(m, [inputs(4), inputs(9), inputs(1)], note="T = 4 / 9 / 1")


def _while_body() -> onnx.GraphProto:
    """a <- a * k + 1, stacked each iteration, while ReduceSum(a) < limit."""
    return helper.make_graph(
        [helper.make_node("Mul", ["a", "k"], ["a2"]),
         helper.make_node("Add", ["a2", "one"], ["an"]),
         helper.make_node("ReduceSum", ["an"], ["s"], keepdims=0),
         helper.make_node("Less", ["s", "limit"], ["co"]),
         helper.make_node("Identity", ["an"], ["sn"])],
        "body", [_vi("i", I64, []), _vi("ci", TensorProto.BOOL, []), _vi("a", F32, [2])],
        [_vi("co", TensorProto.BOOL, []), _vi("an", F32, [2]), _vi("sn", F32, [2])])


def make_loop_while() -> Case:
    """A Loop whose body computes its condition from data (a while loop with
    a trip-count bound M): it ends early once ReduceSum(state) >= limit; the
    scan output has as many slices as iterations ran (known after the run)."""
    body = _while_body()
    inits = [numpy_helper.from_array(np.array(1.5, np.float32), "k"),
             numpy_helper.from_array(np.array(1.0, np.float32), "one"),
             numpy_helper.from_array(np.array(True), "go")]
    graph = helper.make_graph(
        [helper.make_node("Loop", ["m", "go", "x"], ["acc", "steps"], body=body)], "loop_while",
        [_vi("m", I64, []), _vi("x", F32, [2]), _vi("limit", F32, [])],
        [_vi("acc", F32, [2]), _vi("steps", F32, ["K", 2])], inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 16)])

    def inputs(trips, x, limit):
        return {"m": np.array(trips, np.int64), "x": np.array(x, np.float32), "limit": np.array(limit, np.float32)}

    return Case(m, [inputs(20, [0.5, 1.0], 40.0), inputs(20, [0.1, 0.2], 1000.0), inputs(3, [0.5, 1.0], 1e9),
                    inputs(10, [50.0, 50.0], 10.0)],
                note="stops after 4 / 10 / 3 (M) / 1 iterations")


def make_loop_while_unbounded() -> Case:
    """While loops as exporters write them: one Loop without a trip count M
    and one with M = INT64_MAX (tf2onnx), both ended only by the condition
    the body computes from data. They run under --max-loop-iterations (here
    64): a condition that still holds after 64 iterations is a run-time
    error naming the loop, never a silent stop. The sum of both loops' scan
    outputs is checked (broadcast) only once the second loop has run: until
    then its length is the bound."""
    body = _while_body()
    inits = [numpy_helper.from_array(np.array(1.5, np.float32), "k"),
             numpy_helper.from_array(np.array(1.0, np.float32), "one"),
             numpy_helper.from_array(np.array(2**63 - 1, np.int64), "big"),
             numpy_helper.from_array(np.array([1, 0], np.int64), "flip")]
    graph = helper.make_graph(
        [helper.make_node("Less", ["zero_sum", "limit"], ["go"]),
         helper.make_node("Loop", ["", "go", "x"], ["acc", "steps"], body=body),
         # The second loop runs over x reversed: the same iterations, but not
         # the same loop (which CSE would merge into the first).
         helper.make_node("Gather", ["x", "flip"], ["xr"], axis=0),
         helper.make_node("Loop", ["big", "go", "xr"], ["acc2", "steps2"], body=body),
         helper.make_node("Add", ["steps", "steps2"], ["both"])], "loop_while_unbounded",
        [_vi("x", F32, [2]), _vi("limit", F32, []), _vi("zero_sum", F32, [])],
        [_vi("acc", F32, [2]), _vi("steps", F32, ["K", 2]), _vi("acc2", F32, [2]), _vi("steps2", F32, ["L", 2]),
         _vi("both", F32, ["M", 2])],
        inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 16)])

    def inputs(x, limit):
        return {"x": np.array(x, np.float32), "limit": np.array(limit, np.float32),
                "zero_sum": np.array(0.0, np.float32)}

    return Case(m, [inputs([0.5, 1.0], 40.0), inputs([0.1, 0.2], 1000.0), inputs([50.0, 50.0], 10.0),
                    inputs([1.0, 1.0], -1.0)],
                note="no M / M = INT64_MAX: stops after 4 / 10 / 1 / 0 iterations",
                compile_flags=["--max-loop-iterations", "64"],
                refused_sets=[(inputs([0.0, 0.0], 1e30), "its condition still holds after 64 iterations")])


def make_broadcast_runtime() -> Case:
    """Elementwise ops and a MatMul whose operands' dims are separate symbols:
    broadcasting is checked at run time (equal, or one of them 1); a pair
    that cannot broadcast is refused with the op and both dims named."""
    nodes = [helper.make_node("Add", ["x", "y"], ["s"]),
             helper.make_node("MatMul", ["a", "b"], ["p"]),
             helper.make_node("MatMul", ["c", "d"], ["q"])]
    graph = helper.make_graph(
        nodes, "broadcast_runtime",
        [_vi("x", F32, ["N", 3]), _vi("y", F32, ["M", 3]), _vi("a", F32, ["P", 2, 4]), _vi("b", F32, ["Q", 4, 5]),
         _vi("c", F32, [2, "K1"]), _vi("d", F32, ["K2", 3])],
        [_vi("s", F32, ["K", 3]), _vi("p", F32, ["R", 2, 5]), _vi("q", F32, [2, 3])])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    rng = np.random.default_rng(523)

    def inputs(n, mm, pp, q, k1=4, k2=4):
        return {"x": _randn(rng, [n, 3]), "y": _randn(rng, [mm, 3]), "a": _randn(rng, [pp, 2, 4]),
                "b": _randn(rng, [q, 4, 5]), "c": _randn(rng, [2, k1]), "d": _randn(rng, [k2, 3])}

    return Case(m, [inputs(4, 4, 2, 2), inputs(5, 1, 1, 3, 7, 7), inputs(1, 6, 3, 1, 1, 1)],
                note="N,M,P,Q,K = 4,4,2,2,4 / 5,1,1,3,7 / 1,6,3,1,1",
                refused_sets=[(inputs(3, 4, 1, 1), "add 'Add#0': dims 3 and 4 cannot be broadcast together"),
                              (inputs(2, 2, 2, 3), "matmul 'MatMul#1': dims 2 and 3 cannot be broadcast together"),
                              (inputs(2, 2, 1, 1, 4, 5), "inner dim check")])


def make_loop_in_if() -> Case:
    """A Loop with a trip count computed from data inside one branch of a
    run-time If: when the branch is not taken, neither the trip count nor
    the loop runs (the untaken side's bound must not be read as its count)."""
    body = helper.make_graph(
        [helper.make_node("Identity", ["ci"], ["co"]),
         helper.make_node("Add", ["a", "one"], ["an"])],
        "body", [_vi("i", I64, []), _vi("ci", TensorProto.BOOL, []), _vi("a", F32, [2])],
        [_vi("co", TensorProto.BOOL, []), _vi("an", F32, [2])])
    then_g = helper.make_graph(
        [helper.make_node("ReduceSum", ["x"], ["s"], keepdims=0),
         helper.make_node("Cast", ["s"], ["n"], to=TensorProto.INT64),
         helper.make_node("Loop", ["n", "", "x"], ["t_out"], body=body)],
        "then_g", [], [_vi("t_out", F32, [2])])
    else_g = helper.make_graph([helper.make_node("Neg", ["x"], ["e_out"])], "else_g", [], [_vi("e_out", F32, [2])])
    inits = [numpy_helper.from_array(np.array(1.0, np.float32), "one"),
             numpy_helper.from_array(np.array(0.0, np.float32), "zero")]
    graph = helper.make_graph(
        [helper.make_node("ReduceSum", ["flag"], ["f"], keepdims=0),
         helper.make_node("Greater", ["f", "zero"], ["c"]),
         helper.make_node("If", ["c"], ["y"], then_branch=then_g, else_branch=else_g)],
        "loop_in_if", [_vi("x", F32, [2]), _vi("flag", F32, [1])], [_vi("y", F32, [2])], inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 16)])

    def inputs(x, flag):
        return {"x": np.array(x, np.float32), "flag": np.array([flag], np.float32)}

    return Case(m, [inputs([2.0, 3.0], 1.0), inputs([2.0, 3.0], 0.0), inputs([1e6, 1e6], 0.0)],
                note="taken (5 iterations) / not taken / not taken with a count far above the bound")


def _squeeze_if(x: str, out: str, name: str) -> onnx.NodeProto:
    """torch's x.squeeze(1) of a run-time dim as exporters write it: an If on
    Shape(x)[1] == 1 whose branches differ in rank."""
    then_g = helper.make_graph([helper.make_node("Squeeze", [x, "axis1"], ["sq_" + name])], "then_" + name, [],
                               [helper.make_tensor_value_info("sq_" + name, TensorProto.FLOAT, None)])
    else_g = helper.make_graph([helper.make_node("Identity", [x], ["id_" + name])], "else_" + name, [],
                               [helper.make_tensor_value_info("id_" + name, TensorProto.FLOAT, None)])
    return helper.make_node("If", ["is1_" + name], [out], then_branch=then_g, else_branch=else_g, name=name)


def _dim_is_one(x: str, name: str) -> list:
    return [helper.make_node("Shape", [x], ["shape_" + name]),
            helper.make_node("Gather", ["shape_" + name, "one"], ["dim_" + name], axis=0),
            helper.make_node("Equal", ["dim_" + name, "one"], ["is1_" + name])]


def _rank_if_inits() -> list:
    return [numpy_helper.from_array(np.array(1, np.int64), "one"),
            numpy_helper.from_array(np.array([1], np.int64), "axis1"),
            numpy_helper.from_array(np.array(2.0, np.float32), "two")]


def make_if_rank_specialized() -> Case:
    """An If whose branches differ in rank (squeeze of a run-time dim when it
    is 1), read further on by a rank test (Size(Shape(y)) == 1) that
    unsqueezes back: the consumers are specialized into each branch, where
    the rank is known and the rank test folds. An output that does not read
    the If (-x) is computed once, outside."""
    unsq_then = helper.make_graph([helper.make_node("Unsqueeze", ["y", "axis1"], ["u"])], "unsq_then", [],
                                  [helper.make_tensor_value_info("u", TensorProto.FLOAT, None)])
    unsq_else = helper.make_graph([helper.make_node("Identity", ["y"], ["v"])], "unsq_else", [],
                                  [helper.make_tensor_value_info("v", TensorProto.FLOAT, None)])
    nodes = _dim_is_one("x", "squeeze_if") + [
        _squeeze_if("x", "y", "squeeze_if"),
        helper.make_node("Shape", ["y"], ["y_shape"]),
        helper.make_node("Size", ["y_shape"], ["y_rank"]),
        helper.make_node("Neg", ["x"], ["negx"]),
        helper.make_node("Equal", ["y_rank", "one"], ["rank1"]),
        helper.make_node("If", ["rank1"], ["z"], then_branch=unsq_then, else_branch=unsq_else, name="unsqueeze_if"),
        helper.make_node("Mul", ["z", "two"], ["out"]),
    ]
    graph = helper.make_graph(nodes, "if_rank_specialized", [_vi("x", F32, ["N", "T"])],
                              [_vi("out", F32, ["N", "T"]), _vi("negx", F32, ["N", "T"])], _rank_if_inits())
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    rng = np.random.default_rng(211)
    return Case(m, [{"x": _randn(rng, [3, 1])}, {"x": _randn(rng, [2, 5])}, {"x": _randn(rng, [1, 1])}],
                note="T = 1 (squeezed, then unsqueezed back) / T = 5 (as is)")


def make_if_rank_refused() -> Case:
    """A specialized branch that gives an output of a rank other than the
    model declares: the model runs where the condition selects the other
    branch and is refused, naming the If, where it selects that one."""
    nodes = _dim_is_one("x", "squeeze_if") + [_squeeze_if("x", "y", "squeeze_if"),
                                               helper.make_node("Relu", ["y"], ["out"])]
    graph = helper.make_graph(nodes, "if_rank_refused", [_vi("x", F32, ["N", "T"])], [_vi("out", F32, ["N"])],
                              _rank_if_inits())
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    rng = np.random.default_rng(212)
    return Case(m, [{"x": _randn(rng, [3, 1])}, {"x": _randn(rng, [5, 1])}],
                note="T = 1 runs; T = 4 is refused",
                refused_sets=[({"x": _randn(rng, [3, 4])},
                               "If 'squeeze_if' selects its else branch, where 'out' has rank 2 but the model declares "
                               "rank 1")])


def make_squeeze_runtime_dims() -> Case:
    """Squeeze without axes over a dim known only at run time: the output
    rank depends on whether it is 1. Rewritten into an If on "N == 1" whose
    consumers (a Reshape back to rank 2) are specialized per branch; at
    opset 13 (axes as an input when explicit) and 11 (attribute)."""
    def model(opset: int) -> onnx.ModelProto:
        nodes = [helper.make_node("Squeeze", ["x"], ["y"]),
                 helper.make_node("Reshape", ["y", "shape"], ["out"])]
        graph = helper.make_graph(nodes, f"squeeze_runtime_{opset}", [_vi("x", F32, ["N", 1, 3])],
                                  [_vi("out", F32, ["M", 3])],
                                  [numpy_helper.from_array(np.array([-1, 3], np.int64), "shape")])
        return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])

    rng = np.random.default_rng(213)
    sets = [{"x": _randn(rng, [4, 1, 3])}, {"x": _randn(rng, [1, 1, 3])}]
    return Case(model(13), sets, note="N = 4 (kept) / N = 1 (dropped, reshaped back)")


def make_squeeze_runtime_dims_refused() -> Case:
    """The same Squeeze feeding the output directly, declared rank 2 ([N,
    3]): runs where N != 1 and is refused, naming the Squeeze, where N = 1
    would give rank 1 (opset 11: axes as an attribute)."""
    graph = helper.make_graph([helper.make_node("Squeeze", ["x"], ["y"]), helper.make_node("Relu", ["y"], ["out"])],
                              "squeeze_runtime_refused", [_vi("x", F32, ["N", 1, 3])], [_vi("out", F32, ["N", 3])])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 11)])
    rng = np.random.default_rng(214)
    return Case(m, [{"x": _randn(rng, [2, 1, 3])}, {"x": _randn(rng, [5, 1, 3])}], note="N = 2 / 5; N = 1 refused",
                refused_sets=[({"x": _randn(rng, [1, 1, 3])},
                               "If 'Squeeze#0' selects its then branch, where 'out' has rank 1 but the model declares "
                               "rank 2")])


def make_loop_counter_slice() -> Case:
    """A Loop over a run-time trip count whose body slices a table at a
    counter it carries (paddle2onnx decoders: step = Cast(Cast(step) + 1.0),
    through Unsqueeze / Add 0 / Squeeze): the counter is an induction
    variable, init + t, which the plan follows; the slice ends go through a
    float Add of 1.0 and a Min with the table's length."""
    body = helper.make_graph(
        [helper.make_node("Identity", ["ci"], ["co"]),
         helper.make_node("Cast", ["step"], ["fstep"], to=TensorProto.FLOAT),
         helper.make_node("Add", ["fstep", "one_f"], ["fnext"]),
         helper.make_node("Cast", ["fnext"], ["next_raw"], to=TensorProto.INT64),
         helper.make_node("Unsqueeze", ["next_raw", "axis0"], ["next_u"]),
         helper.make_node("Add", ["next_u", "zero_i"], ["next_a"]),
         helper.make_node("Squeeze", ["next_a", "axis0"], ["next"]),
         helper.make_node("Shape", ["table"], ["tshape"]),
         helper.make_node("Gather", ["tshape", "zero_s"], ["rows"], axis=0),
         helper.make_node("Min", ["rows", "next_raw"], ["end"]),
         helper.make_node("Unsqueeze", ["step", "axis0"], ["start1"]),
         helper.make_node("Unsqueeze", ["end", "axis0"], ["end1"]),
         helper.make_node("Slice", ["table", "start1", "end1", "axis0"], ["row"]),
         helper.make_node("Add", ["acc", "row"], ["acc_next"])],
        "body", [_vi("t", I64, []), _vi("ci", TensorProto.BOOL, []), _vi("step", I64, []), _vi("acc", F32, [1, 4])],
        [_vi("co", TensorProto.BOOL, []), _vi("next", I64, []), _vi("acc_next", F32, [1, 4])])
    inits = [numpy_helper.from_array(np.array(1.0, np.float32), "one_f"),
             numpy_helper.from_array(np.array([0], np.int64), "axis0"),
             numpy_helper.from_array(np.array([0], np.int64), "zero_i"),
             numpy_helper.from_array(np.array(0, np.int64), "zero_s"),
             numpy_helper.from_array(np.array(2, np.int64), "start"),
             numpy_helper.from_array(np.zeros((1, 4), np.float32), "acc0")]
    graph = helper.make_graph(
        [helper.make_node("Loop", ["m", "", "start", "acc0"], ["last_step", "acc"], body=body)],
        "loop_counter_slice", [_vi("m", I64, []), _vi("table", F32, ["R", 4])],
        [_vi("last_step", I64, []), _vi("acc", F32, [1, 4])], inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    rng = np.random.default_rng(215)

    def inputs(trips, rows):
        return {"m": np.array(trips, np.int64), "table": _randn(rng, [rows, 4])}

    return Case(m, [inputs(3, 8), inputs(5, 7), inputs(1, 3)], note="rows 2..4 / 2..6 / 2 summed")


def generators() -> Dict[str, Callable[[], Case]]:
    return {
        "if_runtime_branches": make_if_runtime_branches,
        "recurrent_dynamic": make_recurrent_dynamic,
        "loop_runtime": make_loop_runtime,
        "loop_runtime_zero_trips": lambda: make_loop_runtime(with_scan=False),
        "scan_runtime": make_scan_runtime,
        "loop_while": make_loop_while,
        "loop_while_unbounded": make_loop_while_unbounded,
        "broadcast_runtime": make_broadcast_runtime,
        "loop_in_if": make_loop_in_if,
        "if_rank_specialized": make_if_rank_specialized,
        "if_rank_refused": make_if_rank_refused,
        "squeeze_runtime_dims": make_squeeze_runtime_dims,
        "squeeze_runtime_dims_refused": make_squeeze_runtime_dims_refused,
        "loop_counter_slice": make_loop_counter_slice,
    }
