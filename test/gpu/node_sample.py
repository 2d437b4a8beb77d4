"""Deterministic samples of the ONNX node suite for the GPU checks
(run_gpu_codegen_tests.py, run_gpu_emulation_tests.py).

A sample is a greedy cover: the tests the CPU passes, shuffled with a fixed
seed, are walked once, and a test is taken when its model has a family not
taken yet (the code generation check adds every 8th of the other all-float32
tests in that shuffled order). A family is (op type, dtype): every op type of the model's nodes
with every tensor dtype of its graph inputs and outputs (`FAMILIES_OP_DTYPE`,
the GPU code generation check), or (op type, whether every input and output
is float32: the tensors the GPU kernels take) for the emulator
(`FAMILIES_OP_F32`). So every op of the suite, with each of its dtypes, is
compiled for the GPU in every run, and each op's float32 kernel runs under the
emulator in every run; the rest of the suite runs with --all (or another
--seed gives another cover). Same suite, expected-failure list and seed: same
sample, in the suite's order.

  .venv/bin/python test/gpu/node_sample.py [--families op-f32] [--seed N] [--float32-extra 8]   # print a sample
"""

from __future__ import annotations

import random
import sys
from pathlib import Path
from typing import Callable, Dict, FrozenSet, List, Optional, Tuple

import onnx

SEED = 0  # the sample scripts/test.sh runs

Family = Tuple[str, str]


def _tensor_dtypes(model: onnx.ModelProto) -> Tuple[List[str], bool]:
    dtypes, all_f32 = [], True
    for v in list(model.graph.input) + list(model.graph.output):
        if v.type.HasField("tensor_type"):
            et = v.type.tensor_type.elem_type
            dtypes.append(onnx.TensorProto.DataType.Name(et).lower())
            all_f32 &= et == onnx.TensorProto.FLOAT
        else:
            dtypes.append(v.type.WhichOneof("value") or "?")
            all_f32 = False
    return dtypes, all_f32


def families_op_dtype(model: onnx.ModelProto) -> FrozenSet[Family]:
    dtypes, _ = _tensor_dtypes(model)
    return frozenset((n.op_type, d) for n in model.graph.node for d in dtypes or ["none"])


def families_op_f32(model: onnx.ModelProto) -> FrozenSet[Family]:
    _, all_f32 = _tensor_dtypes(model)
    return frozenset((n.op_type, "float32" if all_f32 else "other") for n in model.graph.node)


FAMILIES = {"op-dtype": families_op_dtype, "op-f32": families_op_f32}


def op_types(graph: onnx.GraphProto) -> FrozenSet[str]:
    """The op types of a graph's nodes and of their subgraphs' (If, Loop, Scan)."""
    ops = set()
    for n in graph.node:
        ops.add(n.op_type)
        for a in n.attribute:
            for g in ([a.g] if a.HasField("g") else []) + list(a.graphs):
                ops |= op_types(g)
    return frozenset(ops)


def tests_with_ops(suite: Path, tests: List[str], ops) -> List[str]:
    """The tests whose model has a node of one of these op types (--op)."""
    out = []
    for t in tests:
        try:
            if op_types(onnx.load(str(suite / t / "model.onnx"), load_external_data=False).graph) & set(ops):
                out.append(t)
        except Exception:  # noqa: BLE001
            pass
    return out


def families(suite: Path, tests: List[str], key: Callable[[onnx.ModelProto], FrozenSet[Family]]
             ) -> Dict[str, FrozenSet[Family]]:
    out = {}
    for t in tests:
        try:
            out[t] = key(onnx.load(str(suite / t / "model.onnx"), load_external_data=False))
        except Exception:  # noqa: BLE001  (an unreadable model: its own family, always taken)
            out[t] = frozenset({("unreadable", t)})
    return out


def cover(fams: Dict[str, FrozenSet[Family]], seed: int = SEED) -> List[str]:
    """The greedy cover of every family of `fams`, in the order of `fams`."""
    order = list(fams)
    random.Random(seed).shuffle(order)
    need = set().union(*fams.values()) if fams else set()
    taken = set()
    for t in order:
        if fams[t] & need:
            taken.add(t)
            need -= fams[t]
    return [t for t in fams if t in taken]


def all_float32(suite: Path, test: str) -> bool:
    try:
        return _tensor_dtypes(onnx.load(str(suite / test / "model.onnx"), load_external_data=False))[1]
    except Exception:  # noqa: BLE001
        return False


def sample(suite: Path, tests: List[str], kind: str = "op-dtype", seed: int = SEED,
           eligible: Optional[Callable[[str], bool]] = None, float32_extra: int = 0) -> List[str]:
    """The cover of `kind` families; with float32_extra N, also every N-th (in
    the seeded order) of the other tests whose inputs and outputs are all
    float32: the GPU kernels' type, so more shapes and attributes of them."""
    tests = [t for t in tests if eligible is None or eligible(t)]
    taken = set(cover(families(suite, tests, FAMILIES[kind]), seed))
    if float32_extra:
        rest = [t for t in tests if t not in taken and all_float32(suite, t)]
        random.Random(seed).shuffle(rest)
        taken |= set(rest[::float32_extra])
    return [t for t in tests if t in taken]


def main() -> int:
    import argparse
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--families", choices=sorted(FAMILIES), default="op-dtype")
    ap.add_argument("--seed", type=int, default=SEED)
    ap.add_argument("--float32-extra", type=int, default=0, metavar="N",
                    help="also every N-th other all-float32 test (run_gpu_codegen_tests.py: 8)")
    args = ap.parse_args()
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "onnx-backend"))
    import run_node_tests as rnt
    suite, tests = rnt.passing_tests()
    fams = families(suite, tests, FAMILIES[args.families])
    picked = sample(suite, tests, args.families, args.seed, float32_extra=args.float32_extra)
    print("\n".join(picked))
    print(f"{len(picked)} of {len(tests)} passing node tests cover all "
          f"{len(set().union(*fams.values()))} {args.families} families (seed {args.seed}"
          + (f", every {args.float32_extra}th other float32 test" if args.float32_extra else "") + ")",
          file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
