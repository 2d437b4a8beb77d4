#!/usr/bin/env bash
# v4f-serve's phase of the README test command (scripts/test.sh): a venv at
# $V4F_BUILD_DIR/serve-venv with the pinned packages of test/serve
# (tritonclient, kubernetes-validate, ...; reinstalled only when the
# requirements change), then the pytest suite. Loopback only; bounded by
# per-test timeouts inside the tests and this phase's `timeout`.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
BUILD_DIR="${V4F_BUILD_DIR:-build}"
case "$BUILD_DIR" in /*) ;; *) BUILD_DIR="$ROOT/$BUILD_DIR" ;; esac
VENV="$BUILD_DIR/serve-venv"
REQS="$ROOT/test/serve/requirements.txt"
STAMP="$VENV/.requirements.sha256"
want=$( (sha256sum "$REQS"; python3 --version) | sha256sum | cut -d' ' -f1)
if [ ! -x "$VENV/bin/python" ] || [ "$(cat "$STAMP" 2>/dev/null)" != "$want" ]; then
  echo "[serve] venv at $VENV"
  python3 -m venv --clear "$VENV"
  "$VENV/bin/python" -m pip install -q --disable-pip-version-check -r "$REQS"
  echo "$want" > "$STAMP"
fi
export V4F_BUILD_DIR="$BUILD_DIR"
echo "[serve] pytest test/serve"
exec timeout 900 "$VENV/bin/python" -m pytest -q -p no:cacheprovider test/serve "$@"
