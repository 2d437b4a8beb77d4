// memory_planner.cpp - deterministic greedy offset planner for the session arena.
#include "memory_planner.h"

namespace v4f {
namespace rt {

namespace {

// Placement order: bigger first, then earlier first use, then buffer index.
bool placeBefore(const TransientBuffer& x, const TransientBuffer& y) {
  if (x.size != y.size) return x.size > y.size;
  if (x.firstUse != y.firstUse) return x.firstUse < y.firstUse;
  return x.buffer < y.buffer;
}

// Bottom-up merge sort of indices by `before(items[a], items[b])` (stable,
// O(n log n), no recursion, no allocation: tmp holds n indices).
template <typename Before>
void sortIndices(const TransientBuffer* items, uint32_t* idx, uint32_t* tmp, size_t n, Before before) {
  for (size_t width = 1; width < n; width *= 2) {
    for (size_t lo = 0; lo < n; lo += 2 * width) {
      size_t mid = lo + width < n ? lo + width : n;
      size_t hi = lo + 2 * width < n ? lo + 2 * width : n;
      size_t i = lo, j = mid, k = lo;
      while (i < mid && j < hi) tmp[k++] = before(items[idx[j]], items[idx[i]]) ? idx[j++] : idx[i++];
      while (i < mid) tmp[k++] = idx[i++];
      while (j < hi) tmp[k++] = idx[j++];
    }
    memcpy(idx, tmp, n * sizeof(uint32_t));
  }
}

bool lowerOffset(const TransientBuffer& x, const TransientBuffer& y) { return x.offset < y.offset; }

} // namespace

v4f_status_t planArena(TransientBuffer* items, size_t count, uint32_t* scratch, uint64_t* arenaSize) {
  uint32_t* order = scratch;
  uint32_t* conflicts = scratch + count;
  uint32_t* tmp = scratch + 2 * count;
  for (size_t i = 0; i < count; ++i) order[i] = static_cast<uint32_t>(i);
  sortIndices(items, order, tmp, count, placeBefore);

  uint64_t peak = 0;
  for (size_t p = 0; p < count; ++p) {
    TransientBuffer& cur = items[order[p]];
    cur.offset = 0;
    if (cur.size == 0) continue;
    // Placed buffers alive at the same time as `cur`, by increasing offset;
    // the first gap that fits is the first-fit offset.
    size_t n = 0;
    for (size_t q = 0; q < p; ++q) {
      const TransientBuffer& o = items[order[q]];
      if (o.size == 0 || o.lastUse < cur.firstUse || cur.lastUse < o.firstUse) continue;
      conflicts[n++] = order[q];
    }
    sortIndices(items, conflicts, tmp, n, lowerOffset);
    uint64_t candidate = 0;
    for (size_t k = 0; k < n; ++k) {
      const TransientBuffer& o = items[conflicts[k]];
      uint64_t curEnd;
      if (!checkedAdd(candidate, cur.size, &curEnd))
        return makeStatus(V4F_STATUS_RESOURCE_EXHAUSTED, "arena size overflows");
      if (curEnd <= o.offset) break;                // fits in the gap before o
      uint64_t oEnd = alignUp64(o.offset + o.size); // placed: no overflow below 2^64-64
      if (oEnd > candidate) candidate = oEnd;
    }
    uint64_t end;
    if (!checkedAdd(candidate, cur.size, &end) || alignUp64(end) < end)
      return makeStatus(V4F_STATUS_RESOURCE_EXHAUSTED, "arena size overflows");
    cur.offset = candidate;
    if (alignUp64(end) > peak) peak = alignUp64(end);
  }
  *arenaSize = peak;
  return nullptr;
}

} // namespace rt
} // namespace v4f
