//===- Npy.h - .npy reader/writer for the tools and the compiler -*- C++ -*-===//
//
// NumPy format versions 1-3, little-endian (or byte-sized) C-order arrays of
// the dtypes the runtime knows. Fortran order and big-endian data are refused.
//
//===----------------------------------------------------------------------===//
#ifndef V4F_TOOLS_V4F_RUN_NPY_H
#define V4F_TOOLS_V4F_RUN_NPY_H

#include <cstdint>
#include <string>
#include <vector>

namespace v4frun {

struct NpyArray {
  int32_t dtype = 0; // V4F_DTYPE_*
  std::vector<int64_t> shape;
  std::vector<uint8_t> data;
};

/// Reads `path`; on failure returns false with `error` naming the problem.
bool readNpy(const std::string &path, NpyArray &out, std::string &error);
// Parses .npy bytes (`path` only names them in errors).
bool parseNpy(const std::vector<uint8_t> &bytes, const std::string &path, NpyArray &out, std::string &error);
/// Writes a version 1.0 .npy file.
bool writeNpy(const std::string &path, int32_t dtype, const int64_t *shape, int rank, const void *data, size_t bytes,
              std::string &error);
/// NumPy descr ("<f4") for a V4F dtype, or "" when there is none.
std::string npyDescr(int32_t dtype);
/// The .npy dtype that carries `dtype`: storage-only types (bfloat16, float8,
/// [u]int4, [u]int2) travel as their storage integers (uint16 / uint8 / int8).
int32_t npyStorageDtype(int32_t dtype);

} // namespace v4frun

#endif // V4F_TOOLS_V4F_RUN_NPY_H
