#!/usr/bin/env bash
# Assembles the root filesystem of the v4f-serve container image: the server,
# the v4f runtime and exactly the shared libraries they load (found with ldd),
# the dynamic loader, libsodium (dlopen'ed by the runtime), CA certificates and a passwd entry for an unprivileged
# user. No base image from a registry is needed: the Containerfile is
# `FROM scratch` and copies this tree.
#
#   deploy/container/build-rootfs.sh BUILD_DIR OUT_DIR
#   podman build -f deploy/container/Containerfile -t v4f-serve OUT_DIR
#   (or: docker build -f deploy/container/Containerfile -t v4f-serve OUT_DIR)
set -euo pipefail
BUILD="${1:?usage: build-rootfs.sh BUILD_DIR OUT_DIR}"
OUT="${2:?usage: build-rootfs.sh BUILD_DIR OUT_DIR}"
SERVE="$BUILD/bin/v4f-serve"
[ -x "$SERVE" ] || { echo "build-rootfs: $SERVE is missing (build the tree first)" >&2; exit 1; }

rm -rf "$OUT"
mkdir -p "$OUT/usr/bin" "$OUT/etc/ssl/certs" "$OUT/models" "$OUT/tmp" "$OUT/proc"
chmod 1777 "$OUT/tmp"
cp "$SERVE" "$OUT/usr/bin/v4f-serve"
# Every library the server loads, at the path the loader looks for it.
# Libraries from outside the system directories (the v4f runtime, found
# through the build tree's RUNPATH) go to the loader's default directory.
ldd "$SERVE" | awk '/=> \// {print $3} /^\t\/lib/ {print $1}' | while read -r lib; do
  real=$(readlink -f "$lib")
  case "$lib" in
    /lib/*|/lib64/*|/usr/lib/*) dest="$lib" ;;
    *) dest="/usr/lib/$(gcc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)/$(basename "$lib")" ;;
  esac
  mkdir -p "$OUT$(dirname "$dest")"
  cp "$real" "$OUT$dest"
done
# libsodium is loaded with dlopen (so ldd does not list it): the runtime
# needs it to verify signatures, to decrypt, and to check the BLAKE2b digests
# of format 5.0-5.1 artifacts (5.2's BLAKE3 digests are linked into the
# runtime).
# awk reads all of ldconfig's output: exiting at the first match could kill
# ldconfig with SIGPIPE, which pipefail turns into a silent exit 141.
sodium=$(ldconfig -p | awk '/libsodium\.so\.23 .*x86-64/ && !found {print $NF; found = 1}')
[ -n "$sodium" ] || { echo "build-rootfs: libsodium.so.23 not found (apt-get install libsodium23)" >&2; exit 1; }
mkdir -p "$OUT$(dirname "$sodium")"
cp "$(readlink -f "$sodium")" "$OUT$sodium"
[ -f /etc/ssl/certs/ca-certificates.crt ] && cp /etc/ssl/certs/ca-certificates.crt "$OUT/etc/ssl/certs/"
echo "v4f:x:10001:10001:v4f-serve:/:/usr/bin/v4f-serve" > "$OUT/etc/passwd"
echo "v4f:x:10001:" > "$OUT/etc/group"
cp "$(dirname "${BASH_SOURCE[0]}")/Containerfile" "$OUT/Containerfile"
echo "build-rootfs: $(du -sh "$OUT" | cut -f1) in $OUT"
