"""Runtime element types (ONNX numbering) <-> NumPy dtypes."""

import numpy as np

# code: NumPy type
_CODES = {
    1: np.float32,
    2: np.uint8,
    3: np.int8,
    4: np.uint16,
    5: np.int16,
    6: np.int32,
    7: np.int64,
    9: np.bool_,
    10: np.float16,
    11: np.float64,
    12: np.uint32,
    13: np.uint64,
}

# Storage-only types: one element per byte (bfloat16: two), as ml_dtypes
# stores them; the runtime sees their bytes through a same-size raw view.
_ML_DTYPES = {
    16: ("bfloat16", np.uint16),
    17: ("float8_e4m3fn", np.uint8),
    18: ("float8_e4m3fnuz", np.uint8),
    19: ("float8_e5m2", np.uint8),
    20: ("float8_e5m2fnuz", np.uint8),
    21: ("uint4", np.uint8),
    22: ("int4", np.uint8),
    23: ("float4_e2m1fn", np.uint8),
    24: ("float8_e8m0fnu", np.uint8),
    25: ("uint2", np.uint8),
    26: ("int2", np.uint8),
}


def numpy_dtypes():
    """{code: (numpy dtype, raw view dtype or None)} for every type this
    installation can represent (the ml_dtypes ones only when it is there)."""
    table = {code: (np.dtype(t), None) for code, t in _CODES.items()}
    try:
        import ml_dtypes
    except ImportError:  # pragma: no cover - ml_dtypes is a dependency
        return table
    for code, (name, raw) in _ML_DTYPES.items():
        t = getattr(ml_dtypes, name, None)
        if t is not None:
            table[code] = (np.dtype(t), np.dtype(raw))
    return table
