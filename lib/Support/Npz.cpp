//===- Npz.cpp - .npz (zip of .npy) reader ---------------------------------===//
#include "v4f/Support/Npz.h"

#include <zlib.h>

#include <cstring>
#include <fstream>
#include <iterator>
#include <set>

namespace v4frun {

namespace {

uint64_t le(const uint8_t *p, int n) {
  uint64_t v = 0;
  for (int i = n - 1; i >= 0; --i) v = v << 8 | p[i];
  return v;
}

bool inflateRaw(const uint8_t *src, size_t srcSize, std::vector<uint8_t> &dst, std::string &why) {
  z_stream zs;
  std::memset(&zs, 0, sizeof(zs));
  if (inflateInit2(&zs, -MAX_WBITS) != Z_OK) {
    why = "cannot start inflate";
    return false;
  }
  // Feed and drain in chunks: zlib's counters are 32-bit.
  size_t in = 0, out = 0;
  int rc = Z_OK;
  while (rc == Z_OK) {
    if (zs.avail_in == 0 && in < srcSize) {
      size_t n = std::min<size_t>(srcSize - in, 1u << 30);
      zs.next_in = const_cast<Bytef *>(src + in);
      zs.avail_in = uInt(n);
      in += n;
    }
    if (out == dst.size()) {
      // More output than the header declared.
      uint8_t extra;
      zs.next_out = &extra;
      zs.avail_out = 1;
      rc = inflate(&zs, Z_NO_FLUSH);
      if (zs.avail_out == 0) {
        inflateEnd(&zs);
        why = "inflates to more bytes than its header declares";
        return false;
      }
      break;
    }
    size_t n = std::min<size_t>(dst.size() - out, 1u << 30);
    zs.next_out = dst.data() + out;
    zs.avail_out = uInt(n);
    rc = inflate(&zs, Z_NO_FLUSH);
    out += n - zs.avail_out;
    if (rc == Z_BUF_ERROR && zs.avail_in == 0 && in == srcSize) break;
    if (rc == Z_BUF_ERROR) rc = Z_OK;
  }
  inflateEnd(&zs);
  if (rc != Z_STREAM_END && !(rc == Z_OK && out == dst.size())) {
    why = "corrupt deflate data";
    return false;
  }
  if (out != dst.size()) {
    why = "inflates to fewer bytes than its header declares";
    return false;
  }
  return true;
}

} // namespace

bool parseNpz(const std::vector<uint8_t> &bytes, const std::string &path,
              std::vector<std::pair<std::string, NpyArray>> &out, std::string &error, uint64_t maxMemberBytes) {
  out.clear();
  const uint8_t *b = bytes.data();
  size_t size = bytes.size();
  auto fail = [&](const std::string &why) {
    error = path + ": " + why;
    out.clear();
    return false;
  };
  if (size < 22) return fail("not a .npz file (too short for a zip archive)");
  // The end-of-central-directory record: the last signature in the final
  // 64 KiB + 22 bytes (a trailing comment may follow it).
  size_t eocd = std::string::npos;
  for (size_t p = size - 22 + 1; p-- > 0 && size - p <= 65535 + 22;)
    if (le(b + p, 4) == 0x06054b50) {
      eocd = p;
      break;
    }
  if (eocd == std::string::npos) return fail("not a .npz file (no zip end-of-central-directory record)");
  uint64_t entries = le(b + eocd + 10, 2), cdSize = le(b + eocd + 12, 4), cdOffset = le(b + eocd + 16, 4);
  if (le(b + eocd + 4, 2) != 0 || le(b + eocd + 6, 2) != 0) return fail("multi-volume zip archives are not supported");
  if (entries == 0xFFFF || cdSize == 0xFFFFFFFF || cdOffset == 0xFFFFFFFF) {
    // ZIP64: the locator sits right before the record.
    if (eocd < 20 || le(b + eocd - 20, 4) != 0x07064b50) return fail("ZIP64 archive without its locator");
    uint64_t z = le(b + eocd - 20 + 8, 8);
    if (z > size || size - z < 56 || le(b + z, 4) != 0x06064b50) return fail("corrupt ZIP64 end record");
    entries = le(b + z + 32, 8);
    cdSize = le(b + z + 40, 8);
    cdOffset = le(b + z + 48, 8);
  }
  if (cdOffset > size || cdSize > size - cdOffset)
    return fail("corrupt zip central directory (past the end of the file)");
  if (entries == 0) return fail("the archive holds no arrays");
  std::set<std::string> seen;
  size_t p = cdOffset, end = cdOffset + cdSize;
  for (uint64_t i = 0; i < entries; ++i) {
    if (end - p < 46 || le(b + p, 4) != 0x02014b50)
      return fail("corrupt zip central directory entry " + std::to_string(i));
    uint64_t flags = le(b + p + 8, 2), method = le(b + p + 10, 2), crc = le(b + p + 16, 4);
    uint64_t csize = le(b + p + 20, 4), usize = le(b + p + 24, 4);
    uint64_t nameLen = le(b + p + 28, 2), extraLen = le(b + p + 30, 2), commentLen = le(b + p + 32, 2);
    uint64_t local = le(b + p + 42, 4);
    if (end - p - 46 < nameLen + extraLen + commentLen)
      return fail("corrupt zip central directory entry " + std::to_string(i));
    std::string name(reinterpret_cast<const char *>(b + p + 46), nameLen);
    const uint8_t *extra = b + p + 46 + nameLen;
    for (size_t e = 0; e + 4 <= extraLen;) {
      uint64_t id = le(extra + e, 2), len = le(extra + e + 2, 2);
      if (e + 4 + len > extraLen) break;
      if (id == 0x0001) {
        const uint8_t *f = extra + e + 4;
        size_t left = len;
        auto take = [&](uint64_t &v) {
          if (v != 0xFFFFFFFF) return true;
          if (left < 8) return false;
          v = le(f, 8);
          f += 8;
          left -= 8;
          return true;
        };
        if (!take(usize) || !take(csize) || !take(local)) return fail("member '" + name + "': corrupt ZIP64 sizes");
      }
      e += 4 + len;
    }
    p += 46 + nameLen + extraLen + commentLen;

    std::string who = "member '" + name + "'";
    if (name.size() < 5 || name.compare(name.size() - 4, 4, ".npy") != 0)
      return fail(who + " is not a .npy array (an .npz holds only NAME.npy members)");
    std::string array = name.substr(0, name.size() - 4);
    if (!seen.insert(array).second) return fail(who + " appears twice");
    if (flags & 1) return fail(who + " is encrypted");
    if (method != 0 && method != 8)
      return fail(who + ": compression method " + std::to_string(method) + " is not supported (stored or deflate)");
    if (usize > maxMemberBytes)
      return fail(who + " is " + std::to_string(usize) + " bytes uncompressed, over the limit of " +
                  std::to_string(maxMemberBytes));
    if (local > size || size - local < 30 || le(b + local, 4) != 0x04034b50)
      return fail(who + ": corrupt local header");
    uint64_t dataStart = local + 30 + le(b + local + 26, 2) + le(b + local + 28, 2);
    if (dataStart > size || csize > size - dataStart) return fail(who + ": data runs past the end of the file");
    if (method == 0 && csize != usize) return fail(who + ": stored member with different sizes");
    std::vector<uint8_t> data;
    if (method == 0) {
      data.assign(b + dataStart, b + dataStart + csize);
    } else {
      data.resize(size_t(usize));
      std::string why;
      if (!inflateRaw(b + dataStart, size_t(csize), data, why)) return fail(who + ": " + why);
    }
    uLong c = crc32(0L, Z_NULL, 0);
    for (size_t off = 0; off < data.size(); off += 1u << 30)
      c = crc32(c, data.data() + off, uInt(std::min<size_t>(data.size() - off, 1u << 30)));
    if (c != crc) return fail(who + ": CRC-32 mismatch (the file is corrupt)");
    NpyArray a;
    if (!parseNpy(data, path + ":" + name, a, error)) {
      out.clear();
      return false;
    }
    out.emplace_back(array, std::move(a));
  }
  return true;
}

bool readNpz(const std::string &path, std::vector<std::pair<std::string, NpyArray>> &out, std::string &error,
             uint64_t maxMemberBytes) {
  std::ifstream f(path, std::ios::binary);
  if (!f) {
    error = path + ": cannot open";
    return false;
  }
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  if (f.bad()) {
    error = path + ": read error";
    return false;
  }
  return parseNpz(bytes, path, out, error, maxMemberBytes);
}

} // namespace v4frun
