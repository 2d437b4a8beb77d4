#!/usr/bin/env python3
"""Rewrites a Const instruction of a .v4f artifact's shape program and
re-digests the manifest, making a self-consistent but wrong plan: what a
corrupted (or hand-edited) manifest with digests recomputed looks like.

    patch_shape_const.py IN.v4f OUT.v4f OLD NEW

Every ShapeInstr {op = Const, a = 0, b = 0, imm = OLD} (24-byte FlatBuffers
struct) in the manifest becomes imm = NEW; exactly one must exist. The
header's manifest digest (format 5: a hash tree over 1 MiB leaves, BLAKE3
from format 5.2 on and BLAKE2b-256 before, as the header's digest_algorithm
says; runtime/include/v4f/artifact_format.h) is recomputed.
"""
import hashlib
import struct
import sys

import blake3

LEAF = 1 << 20
HASHES = {
    1: lambda d: hashlib.blake2b(d, digest_size=32).digest(),  # formats 5.0-5.1
    2: lambda d: blake3.blake3(d).digest(),                    # format 5.2 on
}


def v4f_digest(data: bytes, algorithm: int) -> bytes:
    h = HASHES[algorithm]
    leaves = b"".join(h(data[off:off + LEAF]) for off in range(0, len(data), LEAF))
    return h(struct.pack("<Q", len(data)) + leaves)


def main() -> int:
    src, dst, old, new = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    b = bytearray(open(src, "rb").read())
    moff, msize = struct.unpack_from("<QQ", b, 24)
    pattern = bytes(16) + struct.pack("<q", old)  # op 0, padding, a 0, b 0, padding, imm
    manifest = bytes(b[moff:moff + msize])
    hits = [i for i in range(0, len(manifest) - 23, 8) if manifest[i:i + 24] == pattern]
    if len(hits) != 1:
        print(f"expected one Const {old} in the shape program, found {len(hits)}", file=sys.stderr)
        return 1
    struct.pack_into("<q", b, moff + hits[0] + 16, new)
    (algorithm,) = struct.unpack_from("<I", b, 40)
    b[56:88] = v4f_digest(bytes(b[moff:moff + msize]), algorithm)
    open(dst, "wb").write(b)
    return 0


if __name__ == "__main__":
    sys.exit(main())
