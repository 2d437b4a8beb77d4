// status.cpp - statuses, the default allocator, dtype helpers and small utilities.
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "internal.h"
#include "v4f/artifact_format.h"

struct v4f_status_s {
  v4f_status_code_t code;
  char message[1]; // NUL-terminated, allocated to its length
};

namespace {
// Returned when even the status allocation fails; never freed.
v4f_status_s outOfMemoryStatus = {V4F_STATUS_RESOURCE_EXHAUSTED, {0}};

v4f_status_t allocStatus(v4f_status_code_t code, const char* text, size_t len) {
  auto* s = static_cast<v4f_status_s*>(malloc(sizeof(v4f_status_s) + len));
  if (!s) return &outOfMemoryStatus;
  s->code = code;
  memcpy(s->message, text, len);
  s->message[len] = 0;
  return s;
}
} // namespace

namespace v4f {
namespace rt {

v4f_status_t makeStatus(v4f_status_code_t code, const char* fmt, ...) {
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(buf, sizeof(buf), fmt, ap);
  va_end(ap);
  if (n < 0) n = 0;
  size_t len = static_cast<size_t>(n) < sizeof(buf) ? static_cast<size_t>(n) : sizeof(buf) - 1;
  return allocStatus(code, buf, len);
}

v4f_status_t prefixStatus(const char* prefix, v4f_status_t s) {
  if (!s || s == &outOfMemoryStatus) return s;
  v4f_status_t out = makeStatus(s->code, "%s: %s", prefix, s->message);
  v4f_status_free(s);
  return out;
}

void* Allocator::alloc(size_t size, size_t alignment) const {
  if (size == 0) size = 1;
  if (custom_) return impl_.alloc(impl_.user_data, size, alignment);
  void* p = nullptr;
  if (alignment < sizeof(void*)) alignment = sizeof(void*);
  if (posix_memalign(&p, alignment, size) != 0) return nullptr;
  return p;
}

void* Allocator::allocLarge(size_t size) const {
  constexpr size_t kHuge = size_t(2) << 20;
  if (custom_ || size < kHuge) return alloc(size, 64);
  if (size > SIZE_MAX - kHuge) return nullptr;
  size_t rounded = (size + kHuge - 1) / kHuge * kHuge;
  void* p = nullptr;
  if (posix_memalign(&p, kHuge, rounded) != 0) return nullptr;
  madvise(p, rounded, MADV_HUGEPAGE); // advice only: its failure changes nothing
  return p;
}

void Allocator::free(void* p) const {
  if (!p) return;
  if (custom_)
    impl_.free(impl_.user_data, p);
  else
    ::free(p);
}

int onlineCoreCount() {
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n < 1 ? 1 : (n > 1024 ? 1024 : static_cast<int>(n));
}

} // namespace rt
} // namespace v4f

extern "C" {

V4F_API v4f_status_code_t v4f_status_code(v4f_status_t status) { return status ? status->code : V4F_STATUS_OK; }

V4F_API const char* v4f_status_message(v4f_status_t status) {
  if (!status) return "";
  if (status == &outOfMemoryStatus) return "out of memory";
  return status->message;
}

V4F_API void v4f_status_free(v4f_status_t status) {
  if (status && status != &outOfMemoryStatus) free(status);
}

V4F_API const char* v4f_runtime_version(void) { return "1.0"; }

V4F_API size_t v4f_dtype_size(int32_t dtype) {
  switch (dtype) {
  case V4F_DTYPE_FLOAT32:
  case V4F_DTYPE_INT32:
  case V4F_DTYPE_UINT32: return 4;
  case V4F_DTYPE_UINT8:
  case V4F_DTYPE_INT8:
  case V4F_DTYPE_BOOL: return 1;
  case V4F_DTYPE_FLOAT8E4M3FN:
  case V4F_DTYPE_FLOAT8E4M3FNUZ:
  case V4F_DTYPE_FLOAT8E5M2:
  case V4F_DTYPE_FLOAT8E5M2FNUZ:
  case V4F_DTYPE_UINT4:
  case V4F_DTYPE_INT4:
  case V4F_DTYPE_UINT2:
  case V4F_DTYPE_INT2:
  case V4F_DTYPE_FLOAT4E2M1:
  case V4F_DTYPE_FLOAT8E8M0: return 1;
  case V4F_DTYPE_UINT16:
  case V4F_DTYPE_INT16:
  case V4F_DTYPE_FLOAT16:
  case V4F_DTYPE_BFLOAT16: return 2;
  case V4F_DTYPE_INT64:
  case V4F_DTYPE_FLOAT64:
  case V4F_DTYPE_UINT64: return 8;
  default: return 0;
  }
}

V4F_API const char* v4f_dtype_name(int32_t dtype) { return v4f_dtype_format_name(dtype); }

} // extern "C"
