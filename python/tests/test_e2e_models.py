"""Round trip of every e2e model (test/e2e): v4f.compile -> v4f.Session.run,
compared with ONNX Runtime at the e2e suite's tolerances; the input sets an
artifact must refuse raise a v4f.Error with the runtime's message."""

import numpy as np
import pytest

import models  # test/e2e/models.py (conftest puts it on sys.path)
import run_e2e  # its tolerance table
import v4f
from conftest import reference

GENERATORS = models.all_generators()


def _compile_options(flags):
    """`v4fc compile` flags of an e2e case -> v4f.compile keyword options."""
    opts = {}
    it = iter(flags)
    for flag in it:
        key, _, value = flag.partition("=")
        if not value:
            value = next(it)
        name, _, rest = value.partition("=")
        if key == "--dim":
            lo, dots, hi = rest.partition("..")
            opts.setdefault("dims", {})[name] = (int(lo) if lo else None, int(hi)) if dots else int(rest)
        elif key == "--input-shape":
            opts.setdefault("input_shapes", {})[name] = [int(d) for d in rest.split(",")]
        elif key == "--target-cpu":
            opts["target_cpu"] = value.split(",")
        elif key == "--max-loop-iterations":
            opts["max_loop_iterations"] = int(value)
        else:
            raise AssertionError(f"no v4f.compile option for the e2e flag {flag!r}")
    return opts


@pytest.mark.parametrize("name", sorted(GENERATORS))
def test_e2e_model(name, tmp_path):
    case = GENERATORS[name]()
    artifact = tmp_path / "model.v4f"
    v4f.compile(case.model, artifact, **_compile_options(case.compile_flags))
    rtol, atol = run_e2e.tolerance_for(name)
    with v4f.Session(artifact, threads=2) as sess:
        names = [o.name for o in sess.outputs]
        assert names == [o.name for o in case.model.graph.output]
        for inputs in case.input_sets:
            actual = sess.run(None, inputs)
            expect = reference(case.model, inputs)
            for n, a, e in zip(names, actual, expect):
                assert a.shape == e.shape, f"{name}: output {n}: shape {a.shape} != {e.shape}"
                if e.dtype.kind == "f":
                    np.testing.assert_allclose(a, e, rtol=rtol, atol=atol, err_msg=f"{name}: output {n}")
                else:
                    np.testing.assert_array_equal(a, e, err_msg=f"{name}: output {n}")
        # Inputs the artifact must refuse: the runtime's message (a kernel's
        # check or the signature check) is the expected text of the e2e
        # suite, except where v4f-run words the signature check itself; then
        # it must name the input.
        for inputs, expect in case.refused_sets:
            with pytest.raises(v4f.Error) as e:
                sess.run(None, inputs)
            message = str(e.value)
            assert expect in message or (isinstance(e.value, v4f.InvalidArgumentError) and
                                         any(f"'{k}'" in message for k in inputs)), message
