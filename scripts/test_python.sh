#!/usr/bin/env bash
# The Python package's phase of the README test command (scripts/test.sh):
#   1. a fresh venv at $V4F_BUILD_DIR/python-venv with the pinned test packages,
#   2. the package installed the documented way, `pip install .` (PEP 517:
#      scikit-build-core builds the CMake tree in build-wheel/, incremental, and
#      served by ccache from build/),
#   3. its pytest suite (python/tests) against the installed package.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
BUILD_DIR="${V4F_BUILD_DIR:-build}"
case "$BUILD_DIR" in /*) ;; *) BUILD_DIR="$ROOT/$BUILD_DIR" ;; esac
VENV="$BUILD_DIR/python-venv"

echo "[python] fresh venv at $VENV"
python3 -m venv --clear "$VENV"
"$VENV/bin/python" -m pip install -q --disable-pip-version-check \
  -r scripts/requirements.txt -r python/requirements-test.txt
echo "[python] pip install . (the documented install command)"
"$VENV/bin/python" -m pip install -q --disable-pip-version-check .
echo "[python] pytest python/tests"
exec "$VENV/bin/python" -m pytest -q -p no:cacheprovider python/tests "$@"
