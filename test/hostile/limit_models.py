"""Hostile cases past the importer's limits: subgraphs nested deeper than the
protobuf parser accepts, an initializer of 100,000 dims, a graph input of
rank 1,000 (run_hostile_models.py)."""

from __future__ import annotations

from onnx import helper


def register(case, h) -> None:
    """`case` as in run_hostile_models.py; `h` that module (its builders)."""
    # Past the 1000 protobuf levels the parser accepts: the error says why.
    case("nested_if_2000_deep", lambda c: c.write(h.nested_if(2000)),
         ["not a valid ONNX model", "nest more than 1000 protobuf levels deep"], check_too=True)
    # Ranks past what anything uses: refused before the dims are read.
    case("initializer_100k_dims",
         lambda c: c.write(h.add_model(h.raw_tensor("W", [1] * 100_000, bytes(4)))),
         ["'W'", "has 100000 dims; at most 64"])
    case("input_rank_1000",
         lambda c: c.write(h.make_model([helper.make_node("Relu", ["x"], ["y"], name="relu0")],
                                        [h.f32("x", [1] * 1000)], [h.f32("y", [1] * 1000)])),
         ["'x'", "rank 1000", "at most 8"], check_too=True)
