//===- Npz.h - .npz (zip of .npy) reader ------------------------*- C++ -*-===//
//
// Reads the archives np.savez (stored) and np.savez_compressed (deflate)
// write: every member must be NAME.npy, checked against its CRC-32, with
// ZIP64 sizes understood. Used by v4fc for calibration and validation data
// (--calibration-data, --validation-data); the runtime does not use it.
//
//===----------------------------------------------------------------------===//
#ifndef V4F_TOOLS_V4F_RUN_NPZ_H
#define V4F_TOOLS_V4F_RUN_NPZ_H

#include "v4f/Support/Npy.h"

#include <string>
#include <utility>
#include <vector>

namespace v4frun {

/// The arrays of the .npz at `path` in archive order, named without ".npy".
/// On failure returns false with `error` naming the file, member and reason.
/// A member larger than `maxMemberBytes` uncompressed is refused.
bool readNpz(const std::string &path, std::vector<std::pair<std::string, NpyArray>> &out, std::string &error,
             uint64_t maxMemberBytes = uint64_t(16) << 30);
bool parseNpz(const std::vector<uint8_t> &bytes, const std::string &path,
              std::vector<std::pair<std::string, NpyArray>> &out, std::string &error,
              uint64_t maxMemberBytes = uint64_t(16) << 30);

} // namespace v4frun

#endif // V4F_TOOLS_V4F_RUN_NPZ_H
