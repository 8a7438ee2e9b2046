// Bytes allocated by Abseil's Swiss tables, for the indexes' MemoryUsage().
#ifndef STRATA_INDEX_INTERNAL_CONTAINER_MEMORY_H_
#define STRATA_INDEX_INTERNAL_CONTAINER_MEMORY_H_

#include <cstddef>

namespace strata::index_internal {

// SwissTableBytes: the size of the single allocation of an absl::flat_hash_{set,map}
// with `capacity` slots: control bytes (capacity + 1 sentinel + 15 cloned bytes for
// the SSE2 group), padded to the slot alignment, then the slots.
// NOTE: mirrors absl/container/internal/raw_hash_set.h (20220623), AllocSize().
constexpr size_t SwissTableBytes(size_t capacity, size_t slot_size, size_t slot_align) {
  if (capacity == 0) return 0;
  const size_t control = (capacity + 1 + 15 + slot_align - 1) & ~(slot_align - 1);
  return control + capacity * slot_size;
}

}  // namespace strata::index_internal

#endif  // STRATA_INDEX_INTERNAL_CONTAINER_MEMORY_H_
