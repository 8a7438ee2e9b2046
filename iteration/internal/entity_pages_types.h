// The types of EntityPages' private state (iteration/entity_pages.h): an entity page's
// records, a registered type's tables, the hot per-type entry of Add, Remove and
// TryGet, and the batch loops' index tables (a compaction pass's moves and trades are
// the Compactor's, iteration/internal/compactor.h). Kept out of the class so that
// entity_pages.h reads as its API; the class names them through private aliases, and
// the members the comments name (count_, Hot(c), AddWith, ...) are EntityPages'.
// Included by entity_pages.h only; include that instead.
#ifndef STRATA_ITERATION_INTERNAL_ENTITY_PAGES_TYPES_H_
#define STRATA_ITERATION_INTERNAL_ENTITY_PAGES_TYPES_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/attributes.h"
#include "entity/entity.h"
#include "iteration/components.h"
#include "iteration/internal/change_ticks.h"
#include "iteration/internal/page_pool.h"
#include "iteration/internal/page_range.h"

namespace strata::iteration_internal {

// What a walk handing out Entity handles and a compaction need per slot, written
// when an entity takes the slot (read by the walks only after a compaction). The hot
// per-slot state of Add/Remove (component counts, dirty flags) is in flat arrays
// instead (count_, dirty_), so those paths do not chase the page pointer. A slot's
// index and generation are one word (Entity::bits()), so moving or swapping a
// record touches one cache line per side, not one for each (see
// docs/notes/iteration.md, "Compaction").
struct EntityPage {
  uint64_t entity[kEntityPageSize];  // Entity::bits() of the entity per slot
};

struct ComponentType {
  std::string name;
  uint32_t size;
  uint32_t alignment;
  std::vector<uint32_t> masks;   // page_capacity_ long
  std::vector<std::byte*> data;  // page_capacity_ long; null = not allocated
  // The data pages' pool: blocks of 32 * size bytes (tags, size 0, use none).
  PagePool pool;
  // Pages [first_page, end_page) hold every allocated data page (data_page_range).
  uint32_t first_page = 0;
  uint32_t end_page = 0;
  bool range_stale = false;  // a boundary page was freed: shrink in ReleaseEmptyPages
  // The data pages below hot_[c].direct_pages (see HotType), reserved when the
  // first data page is allocated.
  PageRange range{kEntityPageSize};
  // The write history, once TrackChanges started it (EntityPages::tracked_ points at
  // it for the hot paths).
  std::unique_ptr<ChangeTicks> ticks = nullptr;
};

using ::strata::kNoComponent;

// HotType: what Add, Remove and TryGet read of a type, in a table with an entry for
// every id below kMaxComponentTypes and one more that every larger id reads
// (Hot(c)), so that they can read it before checking the id: a loop of TryGet then
// loads it once, not per call (loads after the checks are conditional, and the
// compiler does not hoist those). TryGet needs no id check of its own: an entry that
// is not a registered type's has direct_pages 0, so every page is past it and the
// call goes to the branch that checks the id. Add and Remove, which reload the
// entry on every call anyway (see AddWith), read entry id % kMaxComponentTypes and
// compare its id field (HotById), an instruction fewer than clamping the id.
// Direct addressing: the data of slot s of a page below direct_pages is at
// base + s * size (data[page] holds the same address); pages past it come from the
// type's pool and are found through data[page]. Tags: the shared storage, every page.
// direct_pages is 0 until the type's first data page reserves its range.
struct alignas(32) HotType {
  uint32_t* masks = nullptr;  // types_[c].masks.data()
  std::byte* base = nullptr;
  uint32_t size = 0;
  // The registered id of the entry (kNoComponent if none): Add and Remove read the
  // entry of id % kMaxComponentTypes and compare, one instruction fewer per call
  // than clamping the id when it is not already in a register.
  ComponentId id = kNoComponent;
  size_t direct_pages = 0;
};

// SlotEntry: a compacted store's slot-table entry for one entity index: the slot of
// the entity of that index, and a copy of its generation (gen_of_[index],
// Entity::kInvalidGeneration if none), so that a lookup through a handle finds both
// in one cache line. Apart, a compacted lookup missed three lines (generation, slot,
// element) where a never-compacted one misses two; beside each other it misses two,
// as before the compaction. Only a compacted store has the table, so the sequential
// passes of a never-compacted one stream only the 4-byte generations.
struct alignas(8) SlotEntry {
  uint32_t slot;
  uint32_t generation;
};
static_assert(sizeof(SlotEntry) == 8, "one entry, one aligned 8-byte word");

// The generation and slot tables copied into a batch loop's local, which its stores
// cannot change (see AddBatchWith): InStore and SlotOfIndex on the copies.
struct IndexTables {
  const uint32_t* gen;
  size_t gen_size;
  const SlotEntry* slot_of;
  bool indirect;
  ABSL_ATTRIBUTE_ALWAYS_INLINE bool InStore(uint32_t index, uint32_t generation) const {
    return index < gen_size && gen[index] == generation && generation != Entity::kInvalidGeneration;
  }
  ABSL_ATTRIBUTE_ALWAYS_INLINE uint32_t Slot(uint32_t index) const {
    return indirect ? slot_of[index].slot : index;
  }
};

}  // namespace strata::iteration_internal

#endif  // STRATA_ITERATION_INTERNAL_ENTITY_PAGES_TYPES_H_
