// memory_planner.h - places transient buffers in one arena from their static lifetimes.
#ifndef V4F_RUNTIME_SRC_MEMORY_PLANNER_H_
#define V4F_RUNTIME_SRC_MEMORY_PLANNER_H_

#include "internal.h"

namespace v4f {
namespace rt {

struct TransientBuffer {
  uint32_t buffer;   // index in Manifest.buffers (tie-breaker, keeps it deterministic)
  uint64_t size;     // bytes
  uint32_t firstUse; // dispatch interval [firstUse, lastUse], inclusive
  uint32_t lastUse;
  uint64_t offset; // output: 64-aligned offset in the arena
};

// Greedy first-fit by decreasing size: each buffer goes to the lowest
// 64-aligned offset that does not intersect any already placed buffer whose
// lifetime overlaps its own. Sets *arenaSize to the highest end offset
// (64-aligned). `scratch` needs room for 3*count indices. Fails only when
// sizes overflow.
V4F_INTERNAL v4f_status_t planArena(TransientBuffer* items, size_t count, uint32_t* scratch, uint64_t* arenaSize);

} // namespace rt
} // namespace v4f

#endif // V4F_RUNTIME_SRC_MEMORY_PLANNER_H_
