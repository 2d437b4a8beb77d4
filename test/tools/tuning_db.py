#!/usr/bin/env python3
"""Helpers for the tuning lit tests (test/Codegen/tuning.onnxtxt).

  tuning_db.py set DB OUT FIELD=VALUE...   copy DB with every entry's config
                                           fields set (ints or strings)
  tuning_db.py same-npy A.npy B.npy TOL    exit 1 unless max |A - B| <= TOL
"""
import json
import sys

import numpy as np


def main() -> int:
    if sys.argv[1] == "set":
        db = json.load(open(sys.argv[2]))
        for entry in db["entries"]:
            for assignment in sys.argv[4:]:
                field, value = assignment.split("=", 1)
                entry["config"][field] = int(value) if value.lstrip("-").isdigit() else value
        json.dump(db, open(sys.argv[3], "w"), indent=2)
        return 0
    if sys.argv[1] == "same-npy":
        a, b, tol = np.load(sys.argv[2]), np.load(sys.argv[3]), float(sys.argv[4])
        diff = float(np.max(np.abs(a - b))) if a.size else 0.0
        print(f"max abs diff {diff:.3g} (shapes {a.shape} {b.shape})")
        return 0 if a.shape == b.shape and diff <= tol else 1
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main())
