// libFuzzer target: the .npy reader of v4f-run and v4fc --input-value
// (lib/Support/Npy.cpp). Any bytes: a parsed array or an error, never a
// crash, an overflow or an allocation beyond the input's own size.
#include "v4f/Support/Npy.h"

#include <cstddef>
#include <cstdint>
#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::vector<uint8_t> bytes(data, data + size);
  v4frun::NpyArray array;
  std::string error;
  if (v4frun::parseNpy(bytes, "fuzz.npy", array, error)) {
    size_t count = 1;
    for (int64_t d : array.shape) {
      if (d < 0) abort();
      count *= static_cast<size_t>(d);
    }
    if (array.data.size() > size) abort(); // the data comes from the input
  } else if (error.empty()) {
    abort(); // a refusal always says why
  }
  return 0;
}
