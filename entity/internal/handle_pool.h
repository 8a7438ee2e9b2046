// HandlePool: the stores' view of a GenerationTable (entity/generation_table.h), typed
// with StoreHandle and fixed in size.
//
// A store of `capacity` entries is a table with max_slots = capacity and
// min_free_indices = capacity: every slot is handed out once, in index order, before
// any is reused; then the slot free the longest comes back first (FIFO), so one slot's
// generation advances slowly even when entries churn. A slot released at
// max_generation is retired. Everything is allocated in the constructor; nothing grows
// later.
//
//   entity_internal::HandlePool pool(/*capacity=*/4, /*max_generation=*/0x7FFFFFFF);
//   StoreHandle h;
//   if (pool.Acquire(&h)) { ...; pool.Release(h.index()); }  // h is now stale
#ifndef STRATA_ENTITY_INTERNAL_HANDLE_POOL_H_
#define STRATA_ENTITY_INTERNAL_HANDLE_POOL_H_

#include <cstddef>
#include <cstdint>

#include "absl/base/optimization.h"
#include "absl/status/status.h"
#include "base/check.h"
#include "entity/generation_table.h"
#include "entity/store_handle.h"

namespace strata::entity_internal {

class HandlePool {
 public:
  // kMaxCapacity: slot indices stay below StoreHandle::kInvalidIndex.
  static constexpr uint32_t kMaxCapacity = StoreHandle::kInvalidIndex;
  static_assert(GenerationTable::kMaxSlots == kMaxCapacity - 1);
  // kMaxGeneration: the largest max_generation, 2^31 - 1.
  static constexpr uint32_t kMaxGeneration = GenerationTable::kMaxGeneration;

  // Validate: OK, or InvalidArgument naming `store` and the value the pool cannot
  // honour (capacity >= kMaxCapacity, max_generation > kMaxGeneration).
  static absl::Status Validate(const char* store, uint32_t capacity,
                               uint32_t max_generation) {
    return TableOptions(capacity, max_generation).Validate(store);
  }

  // HandlePool: `capacity` free slots at generation 0, handed out in index order first.
  // Aborts, in every build mode, unless Validate(capacity, max_generation) is OK.
  HandlePool(uint32_t capacity, uint32_t max_generation)
      : table_(CheckedOptions(capacity, max_generation)) {
    table_.Reserve(capacity);
  }

  HandlePool(const HandlePool&) = delete;
  HandlePool& operator=(const HandlePool&) = delete;

  // Acquire: takes a slot (see above); false when none is left (all in use or
  // retired). O(1), no allocation.
  bool Acquire(StoreHandle* out) {
    uint32_t index, generation;
    if (ABSL_PREDICT_FALSE(!table_.Acquire(&index, &generation))) return false;
    *out = StoreHandle(index, generation);
    return true;
  }

  // Contains: `h` is a slot currently in use at h's generation. O(1).
  bool Contains(StoreHandle h) const { return table_.Contains(h.index(), h.generation()); }

  // in_use: slot `index` (< capacity) is handed out.
  bool in_use(uint32_t index) const { return table_.in_use(index); }

  // HandleAt: the live handle of in-use slot `index`. Unchecked: the stores call it
  // per entry of a ForEach, with slots they hold.
  StoreHandle HandleAt(uint32_t index) const { return StoreHandle(index, table_.words()[index]); }

  // Release: frees in-use slot `index`: its handles go stale; it joins the back of the
  // free queue, or is retired for good if its generation reached max_generation.
  void Release(uint32_t index) {
    table_.Release(index);  // aborts unless in use
  }

  uint32_t capacity() const { return table_.options().max_slots; }
  // free_slots: slots Acquire() can still hand out.
  uint32_t free_slots() const { return static_cast<uint32_t>(table_.available()); }
  // retired_slots: slots that reached max_generation and are never handed out again.
  uint32_t retired_slots() const { return static_cast<uint32_t>(table_.retired_slots()); }
  // MemoryUsage: bytes of the table.
  size_t MemoryUsage() const { return table_.MemoryUsage(); }

 private:
  static GenerationTable::Options TableOptions(uint32_t capacity, uint32_t max_generation) {
    GenerationTable::Options options;
    options.max_slots = capacity;
    options.min_free_indices = capacity;
    options.max_generation = max_generation;
    return options;
  }
  // Runs before the table reserves anything, so an unusable capacity never allocates.
  static GenerationTable::Options CheckedOptions(uint32_t capacity, uint32_t max_generation) {
    STRATA_CHECK(capacity < kMaxCapacity,
                 "store capacity must be below 2^32 - 1 (use the store's Make for a Status)");
    STRATA_CHECK(max_generation <= kMaxGeneration,
                 "store Options::max_generation must be below 2^31 (use the store's Make "
                 "for a Status)");
    return TableOptions(capacity, max_generation);
  }

  GenerationTable table_;
};

}  // namespace strata::entity_internal

#endif  // STRATA_ENTITY_INTERNAL_HANDLE_POOL_H_
