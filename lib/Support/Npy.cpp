//===- Npy.cpp - Minimal .npy reader/writer for v4f-run -------------------===//
#include "v4f/Support/Npy.h"

#include <cstdio>
#include <cstring>
#include <fstream>
#include <sys/stat.h>
#include <iterator>

#include "v4f/artifact_format.h"

namespace v4frun {

namespace {

struct DescrMap {
  const char *code; // without the byte-order character
  int32_t dtype;
};
const DescrMap kDescrs[] = {
    {"f4", V4F_DTYPE_FLOAT32}, {"f8", V4F_DTYPE_FLOAT64}, {"f2", V4F_DTYPE_FLOAT16}, {"i1", V4F_DTYPE_INT8},
    {"u1", V4F_DTYPE_UINT8},   {"i2", V4F_DTYPE_INT16},   {"u2", V4F_DTYPE_UINT16},  {"i4", V4F_DTYPE_INT32},
    {"i8", V4F_DTYPE_INT64},   {"b1", V4F_DTYPE_BOOL},
#ifdef V4F_DTYPE_UINT32
    {"u4", V4F_DTYPE_UINT32},  {"u8", V4F_DTYPE_UINT64},
#endif
};

size_t itemSize(int32_t dtype) {
  switch (dtype) {
  case V4F_DTYPE_FLOAT64:
  case V4F_DTYPE_INT64: return 8;
  case V4F_DTYPE_FLOAT32:
  case V4F_DTYPE_INT32: return 4;
#ifdef V4F_DTYPE_UINT32
  case V4F_DTYPE_UINT64: return 8;
  case V4F_DTYPE_UINT32: return 4;
#endif
  case V4F_DTYPE_FLOAT16:
  case V4F_DTYPE_INT16:
  case V4F_DTYPE_UINT16: return 2;
  default: return 1;
  }
}

// Value of `key` in the header dict: the text after "'key':" up to the
// matching end (a quoted string, a parenthesized tuple or a bare word).
bool dictValue(const std::string &header, const std::string &key, std::string &value) {
  size_t k = header.find("'" + key + "'");
  if (k == std::string::npos) return false;
  size_t colon = header.find(':', k);
  if (colon == std::string::npos) return false;
  size_t p = header.find_first_not_of(" ", colon + 1);
  if (p == std::string::npos) return false;
  size_t end;
  if (header[p] == '\'' || header[p] == '"') {
    end = header.find(header[p], p + 1);
    if (end == std::string::npos) return false;
    value = header.substr(p + 1, end - p - 1);
  } else if (header[p] == '(') {
    end = header.find(')', p);
    if (end == std::string::npos) return false;
    value = header.substr(p + 1, end - p - 1);
  } else {
    end = header.find_first_of(",}", p);
    value = header.substr(p, end == std::string::npos ? std::string::npos : end - p);
    while (!value.empty() && value.back() == ' ') value.pop_back();
  }
  return true;
}

} // namespace

int32_t npyStorageDtype(int32_t dtype) {
  switch (dtype) {
  case V4F_DTYPE_BFLOAT16: return V4F_DTYPE_UINT16;
  case V4F_DTYPE_FLOAT8E4M3FN:
  case V4F_DTYPE_FLOAT8E4M3FNUZ:
  case V4F_DTYPE_FLOAT8E5M2:
  case V4F_DTYPE_FLOAT8E5M2FNUZ:
  case V4F_DTYPE_UINT4:
  case V4F_DTYPE_UINT2:
  case V4F_DTYPE_FLOAT4E2M1:
  case V4F_DTYPE_FLOAT8E8M0: return V4F_DTYPE_UINT8;
  case V4F_DTYPE_INT4:
  case V4F_DTYPE_INT2: return V4F_DTYPE_INT8;
  default: return dtype;
  }
}

std::string npyDescr(int32_t dtype) {
  dtype = npyStorageDtype(dtype);
  for (const DescrMap &d : kDescrs)
    if (d.dtype == dtype) return (itemSize(dtype) == 1 ? "|" : "<") + std::string(d.code);
  return "";
}

bool readNpy(const std::string &path, NpyArray &out, std::string &error) {
  // A directory, FIFO or device (/dev/zero) is no .npy file and could block
  // or never end.
  struct stat st;
  if (stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
    error = path + ": not a regular file";
    return false;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    error = path + ": cannot open: " + std::strerror(errno);
    return false;
  }
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), {});
  return parseNpy(bytes, path, out, error);
}

bool parseNpy(const std::vector<uint8_t> &bytes, const std::string &path, NpyArray &out, std::string &error) {
  if (bytes.size() < 10 || std::memcmp(bytes.data(), "\x93NUMPY", 6) != 0) {
    error = path + ": not a .npy file (bad magic)";
    return false;
  }
  uint8_t major = bytes[6];
  size_t headerLen, headerStart;
  if (major == 1) {
    headerLen = bytes[8] | size_t(bytes[9]) << 8;
    headerStart = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) {
      error = path + ": truncated .npy header";
      return false;
    }
    headerLen = bytes[8] | size_t(bytes[9]) << 8 | size_t(bytes[10]) << 16 | size_t(bytes[11]) << 24;
    headerStart = 12;
  } else {
    error = path + ": unsupported .npy version " + std::to_string(major);
    return false;
  }
  if (headerLen > bytes.size() - headerStart) {
    error = path + ": truncated .npy header";
    return false;
  }
  std::string header(bytes.begin() + long(headerStart), bytes.begin() + long(headerStart + headerLen));
  std::string descr, fortran, shape;
  if (!dictValue(header, "descr", descr) || !dictValue(header, "fortran_order", fortran) ||
      !dictValue(header, "shape", shape)) {
    error = path + ": malformed .npy header: " + header;
    return false;
  }
  if (fortran != "False") {
    error = path + ": Fortran-order arrays are not supported (save with np.ascontiguousarray)";
    return false;
  }
  if (descr.size() != 3 || (descr[0] != '<' && descr[0] != '|' && descr[0] != '=')) {
    error = path + ": unsupported dtype '" + descr + "' (need little-endian f2/f4/f8/i1/u1/i2/u2/i4/u4/i8/u8/b1)";
    return false;
  }
  out.dtype = 0;
  for (const DescrMap &d : kDescrs)
    if (descr.compare(1, 2, d.code) == 0) out.dtype = d.dtype;
  if (!out.dtype) {
    error = path + ": unsupported dtype '" + descr + "'";
    return false;
  }
  out.shape.clear();
  uint64_t count = 1;
  size_t p = 0;
  while (p < shape.size()) {
    size_t comma = shape.find(',', p);
    std::string item = shape.substr(p, comma == std::string::npos ? std::string::npos : comma - p);
    p = comma == std::string::npos ? shape.size() : comma + 1;
    size_t b = item.find_first_not_of(' '), e = item.find_last_not_of(' ');
    if (b == std::string::npos) continue;
    item = item.substr(b, e - b + 1);
    char *end = nullptr;
    long long v = std::strtoll(item.c_str(), &end, 10);
    if (*end || v < 0 || __builtin_mul_overflow(count, uint64_t(v), &count)) {
      error = path + ": bad shape (" + shape + ")";
      return false;
    }
    out.shape.push_back(v);
  }
  uint64_t dataBytes;
  if (__builtin_mul_overflow(count, uint64_t(itemSize(out.dtype)), &dataBytes) ||
      dataBytes > bytes.size() - headerStart - headerLen) {
    error = path + ": data is shorter than the shape (" + shape + ") needs";
    return false;
  }
  auto begin = bytes.begin() + long(headerStart + headerLen);
  out.data.assign(begin, begin + long(dataBytes));
  return true;
}

bool writeNpy(const std::string &path, int32_t dtype, const int64_t *shape, int rank, const void *data, size_t bytes,
              std::string &error) {
  std::string descr = npyDescr(dtype);
  if (descr.empty()) {
    error = path + ": no .npy dtype for V4F dtype " + std::to_string(dtype);
    return false;
  }
  std::string dims;
  for (int i = 0; i < rank; ++i) dims += std::to_string(shape[i]) + (rank == 1 || i + 1 < rank ? "," : "");
  std::string header = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': (" + dims + "), }";
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) {
    error = path + ": cannot create: " + std::strerror(errno);
    return false;
  }
  char prefix[10] = {'\x93', 'N', 'U', 'M', 'P', 'Y', 1, 0, char(header.size() & 0xff), char(header.size() >> 8)};
  out.write(prefix, 10);
  out.write(header.data(), long(header.size()));
  out.write(static_cast<const char *>(data), long(bytes));
  if (!out) {
    error = path + ": write failed";
    return false;
  }
  return true;
}

} // namespace v4frun
