//===- TensorImport.cpp - initializers, typed fields and external data ----===//
#include "TensorImport.h"

#include "mlir/IR/BuiltinTypes.h"
#include "v4f/Dialect/V4F/IR/V4FOps.h"

#include <climits>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace mlir;

namespace v4f {

std::string onnxTypeName(int32_t t) {
  switch (t) {
  case onnx::TensorProto::FLOAT: return "float32";
  case onnx::TensorProto::UINT8: return "uint8";
  case onnx::TensorProto::INT8: return "int8";
  case onnx::TensorProto::UINT16: return "uint16";
  case onnx::TensorProto::INT16: return "int16";
  case onnx::TensorProto::INT32: return "int32";
  case onnx::TensorProto::INT64: return "int64";
  case onnx::TensorProto::STRING: return "string";
  case onnx::TensorProto::BOOL: return "bool";
  case onnx::TensorProto::FLOAT16: return "float16";
  case onnx::TensorProto::DOUBLE: return "float64";
  case onnx::TensorProto::BFLOAT16: return "bfloat16";
  case onnx::TensorProto::UINT32: return "uint32";
  case onnx::TensorProto::UINT64: return "uint64";
  case onnx::TensorProto::COMPLEX64: return "complex64";
  case onnx::TensorProto::COMPLEX128: return "complex128";
  case 17: return "float8e4m3fn";
  case 18: return "float8e4m3fnuz";
  case 19: return "float8e5m2";
  case 20: return "float8e5m2fnuz";
  case 21: return "uint4";
  case 22: return "int4";
  case 23: return "float4e2m1";
  case 24: return "float8e8m0";
  case 25: return "uint2";
  case 26: return "int2";
  default: return "dtype#" + std::to_string(t);
  }
}

Type importElementType(MLIRContext &ctx, int32_t t) {
  auto sint = [&](unsigned w) { return IntegerType::get(&ctx, w); };
  auto uint = [&](unsigned w) { return IntegerType::get(&ctx, w, IntegerType::Unsigned); };
  switch (t) {
  case onnx::TensorProto::FLOAT: return Float32Type::get(&ctx);
  case onnx::TensorProto::DOUBLE: return Float64Type::get(&ctx);
  case onnx::TensorProto::FLOAT16: return Float16Type::get(&ctx);
  case onnx::TensorProto::BOOL: return sint(1);
  case onnx::TensorProto::INT8: return sint(8);
  case onnx::TensorProto::INT16: return sint(16);
  case onnx::TensorProto::INT32: return sint(32);
  case onnx::TensorProto::INT64: return sint(64);
  case onnx::TensorProto::UINT8: return uint(8);
  case onnx::TensorProto::UINT16: return uint(16);
  case onnx::TensorProto::UINT32: return uint(32);
  case onnx::TensorProto::UINT64: return uint(64);
  case onnx::TensorProto::BFLOAT16: return BFloat16Type::get(&ctx);
  case 17: return Float8E4M3FNType::get(&ctx);
  case 18: return Float8E4M3FNUZType::get(&ctx);
  case 19: return Float8E5M2Type::get(&ctx);
  case 20: return Float8E5M2FNUZType::get(&ctx);
  case 21: return uint(4);
  case 22: return sint(4);
  case 23: return Float4E2M1Type::get(&ctx);
  case 24: return Float8E8M0Type::get(&ctx);
  case 25: return uint(2);
  case 26: return sint(2);
  default: return {};
  }
}

/// The largest tensor read from external data (the compiler holds it in
/// memory while it folds and packs constants).
constexpr uint64_t kMaxExternalTensorBytes = uint64_t(16) << 30;

namespace {
/// Reads [offset, offset+length) of an external data file after refusing
/// absolute paths, `..` components, symlinks, hard links and reads past EOF.
bool readExternalData(const onnx::TensorProto &tensor, const std::string &modelDir, uint64_t expectedBytes,
                      std::string &bytes, std::string &error) {
  std::string location;
  uint64_t offset = 0, length = UINT64_MAX;
  // Offsets and lengths are plain decimal numbers: no sign, no trailing text.
  auto parseNumber = [&](const std::string &key, const std::string &text, uint64_t &out) {
    out = 0;
    if (text.empty()) {
      error = "external data field '" + key + "' is empty, not a number";
      return false;
    }
    for (char ch : text) {
      if (ch < '0' || ch > '9') {
        error = "external data field '" + key + "' is not a number (decimal digits only): '" + text + "'";
        return false;
      }
      uint64_t digit = uint64_t(ch - '0');
      if (out > (UINT64_MAX - digit) / 10) {
        error = "external data field '" + key + "' is not a number that fits in 64 bits: '" + text + "'";
        return false;
      }
      out = out * 10 + digit;
    }
    return true;
  };
  bool haveLength = false;
  for (const auto &kv : tensor.external_data()) {
    if (kv.key() == "location")
      location = kv.value();
    else if (kv.key() == "offset") {
      if (!parseNumber(kv.key(), kv.value(), offset)) return false;
    } else if (kv.key() == "length") {
      if (!parseNumber(kv.key(), kv.value(), length)) return false;
      haveLength = true;
    }
  }
  if (location.empty()) {
    error = "external data without a location";
    return false;
  }
  if (location[0] == '/' || location.find('\\') != std::string::npos) {
    error = "external data location '" + location + "' is absolute; only paths inside the model's folder are allowed";
    return false;
  }
  size_t start = 0;
  while (start <= location.size()) {
    size_t end = location.find('/', start);
    if (end == std::string::npos) end = location.size();
    if (location.compare(start, end - start, "..") == 0) {
      error =
          "external data location '" + location + "' contains '..'; only paths inside the model's folder are allowed";
      return false;
    }
    start = end + 1;
  }
  std::string path = modelDir + "/" + location;
  // Every component under the model's folder must be a real directory/file.
  for (size_t pos = modelDir.size() + 1; pos <= path.size();) {
    size_t end = path.find('/', pos);
    if (end == std::string::npos) end = path.size();
    struct stat st;
    std::string prefix = path.substr(0, end);
    if (lstat(prefix.c_str(), &st) != 0) {
      error = "external data file '" + location + "' not found";
      return false;
    }
    if (S_ISLNK(st.st_mode)) {
      error = "external data location '" + location + "' goes through a symbolic link; refused";
      return false;
    }
    pos = end + 1;
  }
  // O_NONBLOCK: opening a FIFO must not wait for a writer (it is then
  // refused as not a regular file).
  int fd = open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    error = "cannot open external data file '" + location + "': " + strerror(errno);
    return false;
  }
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    error = "external data '" + location + "' is not a regular file";
    return false;
  }
  if (st.st_nlink > 1) {
    close(fd);
    error = "external data file '" + location + "' has other hard links; refused";
    return false;
  }
  uint64_t fileSize = st.st_size;
  if (!haveLength) length = offset <= fileSize ? fileSize - offset : 0;
  if (offset > fileSize || length > fileSize - offset) {
    close(fd);
    error = "external data for '" + location + "' (offset " + std::to_string(offset) + ", length " +
            std::to_string(length) + ") reads past the end of the file (" + std::to_string(fileSize) + " bytes)";
    return false;
  }
  if (length != expectedBytes) {
    close(fd);
    error = "external data length " + std::to_string(length) + " does not match the tensor's " +
            std::to_string(expectedBytes) + " bytes";
    return false;
  }
  if (expectedBytes > kMaxExternalTensorBytes) {
    close(fd);
    error = "external data tensor of " + std::to_string(expectedBytes) + " bytes exceeds the " +
            std::to_string(kMaxExternalTensorBytes >> 30) + " GiB limit per tensor";
    return false;
  }
  bytes.resize(length);
  size_t done = 0;
  while (done < length) {
    ssize_t n = pread(fd, bytes.data() + done, length - done, offset + done);
    if (n <= 0) {
      close(fd);
      error = "short read from external data '" + location + "'";
      return false;
    }
    done += n;
  }
  close(fd);
  return true;
}
} // namespace

DenseElementsAttr importTensor(MLIRContext &ctx, const onnx::TensorProto &tensor, const std::string &modelDir,
                               std::string &error) {
  Type elementType = importElementType(ctx, tensor.data_type());
  if (elementType && !elementType.isIntOrFloat()) {
    error = "tensor '" + tensor.name() + "' has element type " + onnxTypeName(tensor.data_type()) +
            ", which constants cannot have yet (graph inputs and outputs can)";
    return {};
  }
  if (!elementType) {
    error = "tensor '" + tensor.name() + "' has unsupported element type " + onnxTypeName(tensor.data_type());
    return {};
  }
  // A tensor of thousands of dims is no model's (and a type of millions
  // would take gigabytes to build): refused before its dims are read.
  constexpr int kMaxTensorRank = 64;
  if (tensor.dims_size() > kMaxTensorRank) {
    error = "tensor '" + tensor.name() + "' has " + std::to_string(tensor.dims_size()) + " dims; at most " +
            std::to_string(kMaxTensorRank) + " are supported";
    return {};
  }
  SmallVector<int64_t> shape;
  uint64_t count = 1;
  for (int64_t d : tensor.dims()) {
    if (d < 0) {
      error = "tensor '" + tensor.name() + "' has a negative dim " + std::to_string(d);
      return {};
    }
    if (d != 0 && count > (uint64_t(1) << 40) / uint64_t(d)) {
      error = "tensor '" + tensor.name() + "' claims more than 2^40 elements";
      return {};
    }
    count *= uint64_t(d);
    shape.push_back(d);
  }
  unsigned width = std::max(1u, elementType.getIntOrFloatBitWidth() / 8);
  // 4- and 2-bit integers are packed, the first element in the low bits.
  unsigned subBits = elementType.isInteger(1)
                         ? 0
                         : (elementType.getIntOrFloatBitWidth() < 8 ? elementType.getIntOrFloatBitWidth() : 0);
  uint64_t bytes = subBits ? (count * subBits + 7) / 8 : count * width;
  auto type = RankedTensorType::get(shape, elementType);
  auto unpack = [&](auto byteAt) {
    std::vector<APInt> values;
    values.reserve(count);
    for (uint64_t i = 0; i < count; ++i) {
      uint64_t bit = i * subBits;
      uint8_t byte = uint8_t(byteAt(bit / 8));
      values.emplace_back(subBits, (byte >> (bit % 8)) & ((1u << subBits) - 1));
    }
    return DenseElementsAttr::get(type, values);
  };
  std::string buffer;
  const std::string *raw = nullptr;
  if (tensor.data_location() == onnx::TensorProto::EXTERNAL) {
    if (!readExternalData(tensor, modelDir, bytes, buffer, error)) {
      error = "tensor '" + tensor.name() + "': " + error;
      return {};
    }
    raw = &buffer;
  } else if (tensor.has_raw_data()) {
    raw = &tensor.raw_data();
  }
  if (raw) {
    if (raw->size() != bytes) {
      error = "tensor '" + tensor.name() + "' raw_data has " + std::to_string(raw->size()) +
              " bytes but its dims need " + std::to_string(bytes);
      return {};
    }
    if (subBits) return unpack([&](uint64_t i) { return (*raw)[i]; });
    if (elementType.isInteger(1)) {
      SmallVector<bool> values(count);
      for (uint64_t i = 0; i < count; ++i) values[i] = (*raw)[i] != 0;
      return DenseElementsAttr::get(type, ArrayRef<bool>(values));
    }
    return DenseElementsAttr::getFromRawBuffer(type, ArrayRef<char>(raw->data(), raw->size()));
  }
  auto mismatch = [&](int64_t have) {
    error = "tensor '" + tensor.name() + "' has " + std::to_string(have) + " typed values but its dims need " +
            std::to_string(count);
    return DenseElementsAttr();
  };
  // Narrow types live in int32_data (float16 as its bit pattern), unsigned
  // 32/64-bit ones in uint64_data.
  auto fromInts = [&](auto field) -> DenseElementsAttr {
    if ((uint64_t)field.size() != count) return mismatch(field.size());
    std::vector<APInt> values;
    unsigned bits = elementType.getIntOrFloatBitWidth();
    for (auto v : field) values.emplace_back(64, uint64_t(int64_t(v))), values.back() = values.back().trunc(bits);
    if (auto ft = llvm::dyn_cast<FloatType>(elementType)) {
      std::vector<APFloat> floats;
      for (auto &v : values) floats.emplace_back(ft.getFloatSemantics(), v);
      return DenseElementsAttr::get(type, floats);
    }
    return DenseElementsAttr::get(type, values);
  };
  switch (tensor.data_type()) {
  case onnx::TensorProto::FLOAT:
    if ((uint64_t)tensor.float_data_size() != count) return mismatch(tensor.float_data_size());
    return DenseElementsAttr::get(type, ArrayRef<float>(tensor.float_data().data(), count));
  case onnx::TensorProto::DOUBLE:
    if ((uint64_t)tensor.double_data_size() != count) return mismatch(tensor.double_data_size());
    return DenseElementsAttr::get(type, ArrayRef<double>(tensor.double_data().data(), count));
  case onnx::TensorProto::INT64:
    if ((uint64_t)tensor.int64_data_size() != count) return mismatch(tensor.int64_data_size());
    return DenseElementsAttr::get(type, ArrayRef<int64_t>(tensor.int64_data().data(), count));
  case onnx::TensorProto::BOOL: {
    if ((uint64_t)tensor.int32_data_size() != count) return mismatch(tensor.int32_data_size());
    SmallVector<bool> values;
    for (int32_t v : tensor.int32_data()) values.push_back(v != 0);
    return DenseElementsAttr::get(type, ArrayRef<bool>(values));
  }
  case onnx::TensorProto::INT32:
  case onnx::TensorProto::INT16:
  case onnx::TensorProto::INT8:
  case onnx::TensorProto::UINT16:
  case onnx::TensorProto::UINT8:
  case onnx::TensorProto::FLOAT16:
  case onnx::TensorProto::BFLOAT16:
  case 17:
  case 18:
  case 19:
  case 20: return fromInts(tensor.int32_data());
  case 21:
  case 22:
  case 25:
  case 26: {
    // int32_data holds the packed bytes, one per entry.
    if ((uint64_t)tensor.int32_data_size() != bytes) return mismatch(tensor.int32_data_size() * (8 / subBits));
    return unpack([&](uint64_t i) { return tensor.int32_data(int(i)); });
  }
  case onnx::TensorProto::UINT32:
  case onnx::TensorProto::UINT64: return fromInts(tensor.uint64_data());
  default: error = "tensor '" + tensor.name() + "' has unsupported element type"; return {};
  }
}

} // namespace v4f
