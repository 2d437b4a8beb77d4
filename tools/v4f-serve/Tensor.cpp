// Tensor.cpp - decoding and encoding KServe v2 tensors.
#include "Tensor.h"

#include "v4f/artifact_format.h"
#include "v4f/runtime.h"

#include <cmath>
#include <cstring>
#include <limits>

namespace v4f::serve {

using nlohmann::json;

namespace {
struct DtypeName {
  int32_t dtype;
  const char* name;
};
constexpr DtypeName kNames[] = {
    {V4F_DTYPE_BOOL, "BOOL"},     {V4F_DTYPE_UINT8, "UINT8"},   {V4F_DTYPE_UINT16, "UINT16"},
    {V4F_DTYPE_UINT32, "UINT32"}, {V4F_DTYPE_UINT64, "UINT64"}, {V4F_DTYPE_INT8, "INT8"},
    {V4F_DTYPE_INT16, "INT16"},   {V4F_DTYPE_INT32, "INT32"},   {V4F_DTYPE_INT64, "INT64"},
    {V4F_DTYPE_FLOAT16, "FP16"},  {V4F_DTYPE_FLOAT32, "FP32"},  {V4F_DTYPE_FLOAT64, "FP64"},
    {V4F_DTYPE_BFLOAT16, "BF16"},
};

uint16_t floatToHalf(float f) {
  uint32_t x;
  memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000u;
  int32_t exp = static_cast<int32_t>((x >> 23) & 0xff) - 127 + 15;
  uint32_t mant = x & 0x7fffffu;
  if (((x >> 23) & 0xff) == 0xff) return static_cast<uint16_t>(sign | 0x7c00u | (mant ? 0x200u : 0));
  if (exp >= 31) return static_cast<uint16_t>(sign | 0x7c00u);
  if (exp <= 0) {
    if (exp < -10) return static_cast<uint16_t>(sign);
    mant |= 0x800000u;
    uint32_t shift = static_cast<uint32_t>(14 - exp);
    uint32_t half = mant >> shift, rem = mant & ((1u << shift) - 1), mid = 1u << (shift - 1);
    if (rem > mid || (rem == mid && (half & 1))) ++half;
    return static_cast<uint16_t>(sign | half);
  }
  uint32_t half = sign | (static_cast<uint32_t>(exp) << 10) | (mant >> 13);
  uint32_t rem = mant & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (half & 1))) ++half; // may carry into the exponent: right
  return static_cast<uint16_t>(half);
}

float halfToFloat(uint16_t h) {
  uint32_t sign = (h & 0x8000u) << 16, exp = (h >> 10) & 0x1f, mant = h & 0x3ffu, x;
  if (exp == 0) {
    if (mant == 0) {
      x = sign;
    } else {
      int e = -1;
      do {
        ++e;
        mant <<= 1;
      } while (!(mant & 0x400u));
      x = sign | (static_cast<uint32_t>(127 - 15 - e) << 23) | ((mant & 0x3ffu) << 13);
    }
  } else if (exp == 31) {
    x = sign | 0x7f800000u | (mant << 13);
  } else {
    x = sign | ((exp + 127 - 15) << 23) | (mant << 13);
  }
  float f;
  memcpy(&f, &x, 4);
  return f;
}

uint16_t floatToBf16(float f) {
  uint32_t x;
  memcpy(&x, &f, 4);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40);
  x += 0x7fffu + ((x >> 16) & 1);
  return static_cast<uint16_t>(x >> 16);
}

float bf16ToFloat(uint16_t b) {
  uint32_t x = static_cast<uint32_t>(b) << 16;
  float f;
  memcpy(&f, &x, 4);
  return f;
}

template <typename T>
void put(uint8_t* dst, T v) {
  memcpy(dst, &v, sizeof v);
}

template <typename T>
bool integerFits(const json& v, T* out) {
  if (v.is_number_unsigned()) {
    uint64_t u = v.get<uint64_t>();
    if (u > static_cast<uint64_t>(std::numeric_limits<T>::max())) return false;
    *out = static_cast<T>(u);
    return true;
  }
  if (v.is_number_integer()) {
    int64_t i = v.get<int64_t>();
    if (std::numeric_limits<T>::is_signed
            ? (i < static_cast<int64_t>(std::numeric_limits<T>::min()) ||
               (i > 0 && static_cast<uint64_t>(i) > static_cast<uint64_t>(std::numeric_limits<T>::max())))
            : (i < 0 || static_cast<uint64_t>(i) > static_cast<uint64_t>(std::numeric_limits<T>::max())))
      return false;
    *out = static_cast<T>(i);
    return true;
  }
  return false;
}

// Writes one JSON element as `dtype` at dst; false when it does not fit.
bool storeElement(const json& v, int32_t dtype, uint8_t* dst) {
  switch (dtype) {
  case V4F_DTYPE_BOOL:
    if (v.is_boolean()) return put<uint8_t>(dst, v.get<bool>() ? 1 : 0), true;
    if (v.is_number_integer() && (v.get<int64_t>() == 0 || v.get<int64_t>() == 1))
      return put<uint8_t>(dst, static_cast<uint8_t>(v.get<int64_t>())), true;
    return false;
#define V4F_INT_CASE(code, T)                                                                                          \
  case code: {                                                                                                         \
    T x;                                                                                                               \
    if (!integerFits<T>(v, &x)) return false;                                                                          \
    put<T>(dst, x);                                                                                                    \
    return true;                                                                                                       \
  }
    V4F_INT_CASE(V4F_DTYPE_UINT8, uint8_t)
    V4F_INT_CASE(V4F_DTYPE_UINT16, uint16_t)
    V4F_INT_CASE(V4F_DTYPE_UINT32, uint32_t)
    V4F_INT_CASE(V4F_DTYPE_UINT64, uint64_t)
    V4F_INT_CASE(V4F_DTYPE_INT8, int8_t)
    V4F_INT_CASE(V4F_DTYPE_INT16, int16_t)
    V4F_INT_CASE(V4F_DTYPE_INT32, int32_t)
    V4F_INT_CASE(V4F_DTYPE_INT64, int64_t)
#undef V4F_INT_CASE
  case V4F_DTYPE_FLOAT16:
  case V4F_DTYPE_BFLOAT16:
  case V4F_DTYPE_FLOAT32:
  case V4F_DTYPE_FLOAT64: {
    if (!v.is_number()) return false;
    double d = v.get<double>();
    if (dtype == V4F_DTYPE_FLOAT64)
      put<double>(dst, d);
    else if (dtype == V4F_DTYPE_FLOAT32)
      put<float>(dst, static_cast<float>(d));
    else if (dtype == V4F_DTYPE_FLOAT16)
      put<uint16_t>(dst, floatToHalf(static_cast<float>(d)));
    else
      put<uint16_t>(dst, floatToBf16(static_cast<float>(d)));
    return true;
  }
  default: return false;
  }
}

json loadElement(const uint8_t* src, int32_t dtype) {
  auto get = [&](auto v) {
    memcpy(&v, src, sizeof v);
    return v;
  };
  switch (dtype) {
  case V4F_DTYPE_BOOL: return get(uint8_t()) != 0;
  case V4F_DTYPE_UINT8: return get(uint8_t());
  case V4F_DTYPE_UINT16: return get(uint16_t());
  case V4F_DTYPE_UINT32: return get(uint32_t());
  case V4F_DTYPE_UINT64: return get(uint64_t());
  case V4F_DTYPE_INT8: return get(int8_t());
  case V4F_DTYPE_INT16: return get(int16_t());
  case V4F_DTYPE_INT32: return get(int32_t());
  case V4F_DTYPE_INT64: return get(int64_t());
  case V4F_DTYPE_FLOAT16: return halfToFloat(get(uint16_t()));
  case V4F_DTYPE_BFLOAT16: return bf16ToFloat(get(uint16_t()));
  case V4F_DTYPE_FLOAT32: {
    float f = get(float());
    return std::isfinite(f) ? json(f) : json(nullptr);
  }
  case V4F_DTYPE_FLOAT64: {
    double d = get(double());
    return std::isfinite(d) ? json(d) : json(nullptr);
  }
  }
  return nullptr;
}

// Flattens nested JSON arrays into dst (row-major); counts elements seen.
void flatten(const json& data, const HostTensor& t, uint8_t* dst, size_t elemSize, int64_t* index, int depth) {
  if (depth > 64) throw HttpError(400, "input '" + t.name + "': data is nested too deeply");
  if (data.is_array()) {
    for (const json& v : data) flatten(v, t, dst, elemSize, index, depth + 1);
    return;
  }
  if (*index >= t.elementCount())
    throw HttpError(400, "input '" + t.name + "': data has more elements than shape " + json(t.shape).dump() +
                             " holds (" + std::to_string(t.elementCount()) + ")");
  if (!storeElement(data, t.dtype, dst + static_cast<size_t>(*index) * elemSize))
    throw HttpError(400, "input '" + t.name + "': element " + std::to_string(*index) + " (" +
                             data.dump().substr(0, 40) + ") is not a valid " + kserveDatatype(t.dtype));
  ++*index;
}
} // namespace

std::string kserveDatatype(int32_t dtype) {
  for (const auto& n : kNames)
    if (n.dtype == dtype) return n.name;
  return "";
}

int32_t dtypeFromKserve(const std::string& datatype) {
  for (const auto& n : kNames)
    if (datatype == n.name) return n.dtype;
  return 0;
}

int64_t checkedElementCount(const std::vector<int64_t>& shape, const std::string& what) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0) throw HttpError(400, what + ": shape " + json(shape).dump() + " has a negative dim");
    if (d != 0 && n > std::numeric_limits<int64_t>::max() / d)
      throw HttpError(400, what + ": shape " + json(shape).dump() + " is too large");
    n *= d;
  }
  return n;
}

int64_t HostTensor::elementCount() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

std::vector<HostTensor> decodeInputs(const json& request, const uint8_t* binary, size_t binarySize) {
  if (!request.is_object()) throw HttpError(400, "the request body is not a JSON object");
  auto inputs = request.find("inputs");
  if (inputs == request.end() || !inputs->is_array() || inputs->empty())
    throw HttpError(400, "the request has no \"inputs\" array");
  std::vector<HostTensor> out;
  size_t offset = 0;
  for (const json& in : *inputs) {
    if (!in.is_object()) throw HttpError(400, "an entry of \"inputs\" is not an object");
    HostTensor t;
    auto name = in.find("name");
    if (name == in.end() || !name->is_string()) throw HttpError(400, "an input has no \"name\" string");
    t.name = name->get<std::string>();
    const std::string what = "input '" + t.name + "'";
    auto dt = in.find("datatype");
    if (dt == in.end() || !dt->is_string()) throw HttpError(400, what + ": no \"datatype\" string");
    std::string datatype = dt->get<std::string>();
    if (datatype == "BYTES")
      throw HttpError(400, what + ": datatype BYTES is not supported (v4f models take numeric tensors only)");
    t.dtype = dtypeFromKserve(datatype);
    if (!t.dtype) throw HttpError(400, what + ": unknown datatype '" + datatype.substr(0, 40) + "'");
    auto shape = in.find("shape");
    if (shape == in.end() || !shape->is_array() || shape->size() > V4F_MAX_RANK)
      throw HttpError(400, what + ": \"shape\" must be an array of at most " + std::to_string(V4F_MAX_RANK) + " dims");
    for (const json& d : *shape) {
      if (!d.is_number_integer()) throw HttpError(400, what + ": \"shape\" holds a non-integer");
      t.shape.push_back(d.get<int64_t>());
    }
    int64_t count = checkedElementCount(t.shape, what);
    size_t elemSize = v4f_dtype_size(t.dtype);
    if (static_cast<uint64_t>(count) > (uint64_t(1) << 40) / elemSize)
      throw HttpError(400, what + ": shape " + shape->dump() + " is too large");
    size_t bytes = static_cast<size_t>(count) * elemSize;
    const json* params = nullptr;
    if (auto p = in.find("parameters"); p != in.end() && p->is_object()) params = &*p;
    const json* binSize = nullptr;
    if (params)
      if (auto b = params->find("binary_data_size"); b != params->end()) binSize = &*b;
    if (binSize) {
      if (!binSize->is_number_unsigned() && !(binSize->is_number_integer() && binSize->get<int64_t>() >= 0))
        throw HttpError(400, what + ": binary_data_size is not a non-negative integer");
      uint64_t n = binSize->get<uint64_t>();
      if (n != bytes)
        throw HttpError(400, what + ": binary_data_size " + std::to_string(n) + " != " + std::to_string(bytes) +
                                 " bytes for shape " + shape->dump() + " of " + datatype);
      if (n > binarySize - offset)
        throw HttpError(400, what + ": binary_data_size " + std::to_string(n) + " runs past the end of the body (" +
                                 std::to_string(binarySize - offset) + " bytes left)");
      t.data.assign(binary + offset, binary + offset + n);
      offset += n;
    } else {
      auto data = in.find("data");
      if (data == in.end()) throw HttpError(400, what + ": neither \"data\" nor binary_data_size");
      t.data.assign(bytes, 0);
      int64_t index = 0;
      flatten(*data, t, t.data.data(), elemSize, &index, 0);
      if (index != count)
        throw HttpError(400, what + ": data has " + std::to_string(index) + " elements, shape " + shape->dump() +
                                 " needs " + std::to_string(count));
    }
    out.push_back(std::move(t));
  }
  if (offset != binarySize)
    throw HttpError(400, std::to_string(binarySize - offset) +
                             " bytes of binary data after the inputs that no input claims");
  return out;
}

json encodeOutput(const HostTensor& t, bool binary, std::string* blob) {
  json o = {{"name", t.name}, {"datatype", kserveDatatype(t.dtype)}, {"shape", t.shape}};
  if (binary) {
    o["parameters"] = {{"binary_data_size", t.data.size()}};
    blob->append(reinterpret_cast<const char*>(t.data.data()), t.data.size());
    return o;
  }
  size_t elemSize = v4f_dtype_size(t.dtype);
  json data = json::array();
  int64_t n = t.elementCount();
  data.get_ref<json::array_t&>().reserve(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i)
    data.push_back(loadElement(t.data.data() + static_cast<size_t>(i) * elemSize, t.dtype));
  o["data"] = std::move(data);
  return o;
}

} // namespace v4f::serve
