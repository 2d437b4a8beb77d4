// Tensor.h - KServe v2 tensors: datatype names, and the JSON and binary
// (binary tensor data extension) encodings of inference inputs and outputs.
#ifndef V4F_SERVE_TENSOR_H_
#define V4F_SERVE_TENSOR_H_

#include <nlohmann/json.hpp>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace v4f::serve {

// A request failure with the HTTP status to answer (the message goes into
// the JSON error body).
struct HttpError : std::runtime_error {
  HttpError(int status, const std::string& message) : std::runtime_error(message), status(status) {}
  int status;
};

// The KServe datatype of a V4F_DTYPE_* ("FP32"), or "" when the protocol has
// none (the float8/int4 types).
std::string kserveDatatype(int32_t dtype);
// The V4F_DTYPE_* of a KServe datatype; 0 when unknown. BYTES is refused by
// the caller (the runtime has no string tensors).
int32_t dtypeFromKserve(const std::string& datatype);

struct HostTensor {
  std::string name;
  int32_t dtype = 0;
  std::vector<int64_t> shape;
  std::vector<uint8_t> data;
  int64_t elementCount() const;
};

// Checked product of dims (throws HttpError 400 on negative dims or overflow).
int64_t checkedElementCount(const std::vector<int64_t>& shape, const std::string& what);

// Parses the request's "inputs": JSON "data" (flat or nested, in row-major
// order) or binary data taken in order from `binary` (the bytes after the
// JSON header). Every input must use all of its bytes; leftover binary bytes
// are an error.
std::vector<HostTensor> decodeInputs(const nlohmann::json& request, const uint8_t* binary, size_t binarySize);

// The "outputs" entry for `t`; with `binary`, appends its bytes to `blob`
// and sets parameters.binary_data_size instead of "data".
nlohmann::json encodeOutput(const HostTensor& t, bool binary, std::string* blob);

} // namespace v4f::serve

#endif // V4F_SERVE_TENSOR_H_
