#!/usr/bin/env bash
# Formats the project's C and C++ sources with .clang-format (clang-format 14,
# Debian's, present on every machine the project builds on).
#   scripts/format.sh           rewrite the files in place
#   scripts/format.sh --check   list the files that differ; exit 1 if any
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
CF="${CLANG_FORMAT:-$(command -v clang-format-14 || command -v clang-format)}"
mapfile -t files < <(git ls-files 'lib/**.cpp' 'lib/**.h' 'include/**.h' 'tools/**.cpp' 'tools/**.h' \
  'runtime/**.cpp' 'runtime/**.h' 'runtime/**.c' 'unittests/**.cpp' 'unittests/**.h' 'fuzz/**.cpp' 'fuzz/**.h' \
  'examples/**.cpp' 'examples/**.c' 'examples/**.h' 'python/**.cpp' 'python/**.h' \
  'test/gpu/emulator/**.h' 'test/gpu/emulator/**.cpp')
if [ "${1:-}" = "--check" ]; then
  bad=0
  for f in "${files[@]}"; do
    if ! "$CF" --dry-run --Werror "$f" >/dev/null 2>&1; then echo "$f"; bad=1; fi
  done
  exit $bad
fi
"$CF" -i "${files[@]}"
