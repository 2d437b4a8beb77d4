// internal.h - shared internals of the runtime: statuses, allocation, small arrays.
//
// The runtime is built without exceptions and RTTI and must not pull the C++
// standard library's out-of-line code (size goal, no libstdc++ dependency), so
// it uses these minimal helpers instead of std::vector/std::string.
#ifndef V4F_RUNTIME_SRC_INTERNAL_H_
#define V4F_RUNTIME_SRC_INTERNAL_H_

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <new>

#include "v4f/runtime.h"

#define V4F_INTERNAL __attribute__((visibility("hidden")))
#define V4F_PRINTF(fmt, args) __attribute__((format(printf, fmt, args)))

namespace v4f {
namespace rt {

// Creates a status; the message is formatted with vsnprintf. Never NULL for a
// non-OK code (falls back to a static out-of-memory status).
V4F_INTERNAL v4f_status_t makeStatus(v4f_status_code_t code, const char* fmt, ...) V4F_PRINTF(2, 3);
// Returns a new status "<prefix>: <message of s>" with s's code; frees s.
V4F_INTERNAL v4f_status_t prefixStatus(const char* prefix, v4f_status_t s);

// An allocator bound to a v4f_allocator_t (or the C library's).
class Allocator {
public:
  Allocator() = default;
  explicit Allocator(const v4f_allocator_t* a) {
    if (a && a->alloc && a->free) {
      impl_ = *a;
      custom_ = true;
    }
  }
  void* alloc(size_t size, size_t alignment = 64) const;
  // A large buffer that every run touches (the arena, scratch): with the
  // default allocator, 2 MiB-aligned and rounded up to whole 2 MiB pages
  // with transparent huge pages asked for, so it faults in 2 MiB at a time
  // and a run's activations need a few TLB entries, not thousands. Freed
  // with free(); a custom allocator gets a plain alloc(size, 64).
  void* allocLarge(size_t size) const;
  void free(void* p) const;

  template <typename T, typename... Args>
  T* create(Args&&... args) const {
    void* p = alloc(sizeof(T), alignof(T) < 16 ? 16 : alignof(T));
    return p ? new (p) T(static_cast<Args&&>(args)...) : nullptr;
  }
  template <typename T>
  void destroy(T* p) const {
    if (!p) return;
    p->~T();
    free(p);
  }

private:
  v4f_allocator_t impl_{};
  bool custom_ = false;
};

// A fixed-size array of trivially copyable T, zero-initialized.
template <typename T>
class Array {
public:
  Array() = default;
  Array(const Array&) = delete;
  Array& operator=(const Array&) = delete;
  ~Array() { reset(); }

  // Returns false when the allocation fails (or the byte size overflows).
  bool allocate(const Allocator& a, size_t n) {
    reset();
    if (n == 0) return true;
    if (n > SIZE_MAX / sizeof(T)) return false;
    void* p = a.alloc(n * sizeof(T), alignof(T) < 16 ? 16 : alignof(T));
    if (!p) return false;
    memset(p, 0, n * sizeof(T));
    data_ = static_cast<T*>(p);
    size_ = n;
    alloc_ = &a;
    return true;
  }
  void reset() {
    if (data_) alloc_->free(data_);
    data_ = nullptr;
    size_ = 0;
  }
  void swap(Array& o) {
    T* d = data_;
    data_ = o.data_;
    o.data_ = d;
    size_t n = size_;
    size_ = o.size_;
    o.size_ = n;
    const Allocator* a = alloc_;
    alloc_ = o.alloc_;
    o.alloc_ = a;
  }
  T& operator[](size_t i) { return data_[i]; }
  const T& operator[](size_t i) const { return data_[i]; }
  size_t size() const { return size_; }
  T* data() { return data_; }
  const T* data() const { return data_; }

private:
  T* data_ = nullptr;
  size_t size_ = 0;
  const Allocator* alloc_ = nullptr;
};

inline uint64_t alignUp64(uint64_t v) { return (v + 63) & ~uint64_t(63); }

// Little-endian fields of the artifact header and trailer, at any alignment.
inline uint64_t readU64(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}
inline uint32_t readU32(const uint8_t* p) {
  return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24;
}
inline uint16_t readU16(const uint8_t* p) { return uint16_t(p[0] | p[1] << 8); }

// Overflow-checked helpers; return false on overflow.
inline bool checkedAdd(uint64_t a, uint64_t b, uint64_t* out) { return !__builtin_add_overflow(a, b, out); }
inline bool checkedMul(uint64_t a, uint64_t b, uint64_t* out) { return !__builtin_mul_overflow(a, b, out); }

// Number of online cores (>= 1).
V4F_INTERNAL int onlineCoreCount();

} // namespace rt
} // namespace v4f

#endif // V4F_RUNTIME_SRC_INTERNAL_H_
