// EntityPages::CreateFromBundle and ComponentBundle (see iteration/entity_pages.h): the
// batch path, cut into runs of entities that share a page, each run validated, claimed
// and written in one pass. The figures are in docs/notes/iteration.md.
#include <cstdint>
#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "entity/entity.h"
#include "iteration/entity_pages.h"

namespace strata {
namespace {

// FillAt: writes the `kSize`-byte `value` into the elements at(0) .. at(n - 1) of the
// page `data`. `at` gives an element's position in its page; the callers' positions are
// a list of bits, the entities' own slots, or 0 .. 31 for a whole page (a straight loop
// the compiler unrolls).
template <size_t kSize, typename At>
void FillAt(std::byte* data, const std::byte* value, size_t n, At at) {
  // The value in two integers first: a byte store may alias `value` (or a local array),
  // so GCC reloaded it for every element; scalars stay in registers.
  static_assert(kSize > 0 && kSize <= 16);
  constexpr size_t kLow = kSize < 8 ? kSize : 8;
  constexpr size_t kHigh = kSize - kLow;
  uint64_t low = 0;
  uint64_t high = 0;
  std::memcpy(&low, value, kLow);
  if constexpr (kHigh > 0) std::memcpy(&high, value + kLow, kHigh);
  for (size_t k = 0; k < n; ++k) {
    std::byte* const element = data + size_t{at(k)} * kSize;
    std::memcpy(element, &low, kLow);
    if constexpr (kHigh > 0) std::memcpy(element + kLow, &high, kHigh);
  }
}

// FillAt for a size known at run time: fixed-size copies for the common sizes.
template <typename At>
void FillAt(size_t size, std::byte* data, const std::byte* value, size_t n, At at) {
  switch (size) {
    case 0: break;
    case 4:
      FillAt<4>(data, value, n, at);
      break;
    case 8:
      FillAt<8>(data, value, n, at);
      break;
    case 12:
      FillAt<12>(data, value, n, at);
      break;
    case 16:
      FillAt<16>(data, value, n, at);
      break;
    default:
      for (size_t k = 0; k < n; ++k) std::memcpy(data + size_t{at(k)} * size, value, size);
  }
}

}  // namespace

ComponentBundle& ComponentBundle::SetRaw(ComponentId component, absl::Span<const std::byte> bytes) {
  for (Entry& entry : entries_) {
    if (entry.id == component) {
      // Replace: append the new bytes (old ones are left unused; bundles are small).
      entry.offset = static_cast<uint32_t>(bytes_.size());
      entry.size = static_cast<uint32_t>(bytes.size());
      bytes_.insert(bytes_.end(), bytes.begin(), bytes.end());
      return *this;
    }
  }
  entries_.push_back({component, static_cast<uint32_t>(bytes_.size()),
                      static_cast<uint32_t>(bytes.size())});
  bytes_.insert(bytes_.end(), bytes.begin(), bytes.end());
  return *this;
}

absl::Status EntityPages::CreateFromBundle(absl::Span<const Entity> entities,
                                              const ComponentBundle& bundle) {
  CheckNotWalking("CreateFromBundle");
  absl::Status status = CreateFromBundleChecked(entities, bundle);
  if (status.ok()) {
    for (const ComponentBundle::Entry& entry : bundle.entries_) {
      if (tracked_[entry.id] != nullptr) MarkAddedEntities(entities, entry.id);
    }
  }
  // All or nothing: the listener hears of a success only.
  if (listener_ != nullptr && status.ok() && !entities.empty()) {
    for (const ComponentBundle::Entry& entry : bundle.entries_) listener_->OnAdded(entry.id, entities);
  }
  return status;
}

absl::Status EntityPages::CreateFromBundleChecked(absl::Span<const Entity> entities,
                                                     const ComponentBundle& bundle) {
  for (const ComponentBundle::Entry& entry : bundle.entries_) {
    if (entry.id >= types_.size()) {
      return absl::InvalidArgumentError(
          absl::StrCat("bundle names unregistered component id ", entry.id));
    }
    if (entry.size != types_[entry.id].size) {
      return absl::InvalidArgumentError(absl::StrCat(
          "bundle value for '", types_[entry.id].name, "' has ", entry.size,
          " bytes, the component has ", types_[entry.id].size));
    }
  }
  if (bundle.empty() || entities.empty()) return absl::OkStatus();
  if (!indirect_) return CreateFromBundleIdentity(entities, bundle);
  const uint16_t num_components = static_cast<uint16_t>(bundle.entries_.size());

  // Validate and take slots first, so that nothing after can fail: a failure gives
  // back the slots taken and leaves the store as it was (no page allocated yet).
  // A duplicate in the batch finds its own slot already taken. The same pass cuts
  // the batch into runs of entities whose slots share a page (a batch of consecutive
  // indices in a never-compacted store has runs of 32): the passes below walk runs.
  struct Run {
    uint32_t page;
    size_t begin, end;  // entities[begin, end)
    bool own_slots;     // every entity of the run is at its own index's slot
  };
  std::vector<Run> runs;
  runs.reserve(entities.size() / kEntityPageSize + 1);
  GrowSlotTable(manager_->slots_used());
  for (size_t k = 0; k < entities.size(); ++k) {
    const Entity e = entities[k];
    absl::Status error;
    if (ABSL_PREDICT_FALSE(!manager_->Alive(e))) {
      error = absl::NotFoundError(absl::StrCat(e.DebugString(), " is not alive"));
    } else if (ABSL_PREDICT_FALSE(gen_of_[e.index()] != Entity::kInvalidGeneration)) {
      error = absl::AlreadyExistsError(absl::StrCat(
          e.DebugString(), " already has components or appears twice in the batch"));
    }
    if (ABSL_PREDICT_FALSE(!error.ok())) {
      for (size_t j = 0; j < k; ++j) {
        FreeSlot(entities[j].index(), SlotOfIndex(entities[j].index()));
      }
      return error;
    }
    // Alive implies index < slots_used(), so the table covers it. The entity's own
    // slot is free unless a compaction moved someone there: take it inline.
    const uint32_t own_page = e.index() >> kEntityPageShift;
    const uint32_t own_flag = uint32_t{1} << (e.index() & (kEntityPageSize - 1));
    uint32_t slot;
    if (ABSL_PREDICT_TRUE(own_page < page_capacity_ &&
                          (occupied_[own_page] & own_flag) == 0)) {
      occupied_[own_page] |= own_flag;
      ++num_entities_;
      slot = e.index();
    } else {
      slot = AllocateSlot(e.index());
    }
    SetIndexEntry(e.index(), e.generation(), slot);
    const uint32_t page = slot >> kEntityPageShift;
    const bool own = slot == e.index();
    if (!runs.empty() && runs.back().page == page) {
      runs.back().end = k + 1;
      runs.back().own_slots &= own;
    } else {
      runs.push_back({page, k, k + 1, own});
    }
  }
  layout_changed_ = true;

  // Allocate first, one kind of page at a time, so that each component's pages of the
  // batch are allocated one after the other and sit together in memory. (Allocating
  // a page's Position, Velocity and entity pages together interleaves them, and a later
  // full walk of Position + Velocity ran about 1.4x slower at 1M entities.)
  for (const Run& run : runs) EnsureEntityPage(run.page);
  for (const ComponentBundle::Entry& entry : bundle.entries_) {
    ComponentType& type = types_[entry.id];
    for (const Run& run : runs) EnsureDataPage(type, run.page);
  }
  // Then one pass over the batch, a run at a time: the slots' entity records are
  // written, then each component's mask word is set once and its values are written
  // while the page's lines are in cache. (Three whole-batch passes measured 12-16 ns
  // per entity at 1M: each pass streamed the batch's pages from L3 again.)
  uint8_t bits[kEntityPageSize];
  for (const Run& run : runs) {
    const uint32_t page = run.page;
    EntityPage* const entity_page = entity_pages_[page];
    uint32_t run_flags = 0;
    const size_t n = run.end - run.begin;  // <= 32: the run's slots are distinct
    for (size_t k = 0; k < n; ++k) {
      const Entity e = entities[run.begin + k];
      // The slot table is read again only for runs not at their own slots.
      const uint32_t bit =
          (run.own_slots ? e.index() : SlotOfIndex(e.index())) & (kEntityPageSize - 1);
      entity_page->entity[bit] = e.bits();
      count_[size_t{page} * kEntityPageSize + bit] = num_components;
      bits[k] = static_cast<uint8_t>(bit);
      run_flags |= uint32_t{1} << bit;
    }
    WriteBundleRun(page, bundle, run_flags, bits, n);
  }
  return absl::OkStatus();
}

void EntityPages::WriteBundleRun(uint32_t page, const ComponentBundle& bundle, uint32_t run_flags,
                                    const uint8_t* bits, size_t n) {
  for (const ComponentBundle::Entry& entry : bundle.entries_) {
    ComponentType& type = types_[entry.id];
    type.masks[page] |= run_flags;
    FillAt(type.size, type.data[page], bundle.bytes_.data() + entry.offset, n,
           [bits](size_t k) { return bits[k]; });
  }
}

absl::Status EntityPages::CreateFromBundleIdentity(absl::Span<const Entity> entities,
                                                      const ComponentBundle& bundle) {
  const uint16_t num_components = static_cast<uint16_t>(bundle.entries_.size());
  // The batch as runs of entities that share a page (a batch of consecutive indices
  // has runs of 32), found once: the passes below walk runs, not entities.
  struct Run {
    uint32_t page;
    size_t begin, end;  // entities[begin, end)
  };
  std::vector<Run> runs;
  runs.reserve(entities.size() / kEntityPageSize + 1);
  for (size_t i = 0; i < entities.size();) {
    const uint32_t page = entities[i].index() >> kEntityPageShift;
    size_t end = i + 1;
    while (end < entities.size() && (entities[end].index() >> kEntityPageShift) == page) {
      ++end;
    }
    runs.push_back({page, i, end});
    i = end;
  }
  // Allocate first, one kind of page at a time, so that each component's pages of the
  // batch are allocated one after the other and sit together in memory. (Allocating
  // a page's Position, Velocity and entity pages together interleaves them, and a later
  // full walk of Position + Velocity ran about 1.4x slower at 1M entities.) Pages past
  // the manager's last slot hold no live entity: a bad handle there must not grow the
  // tables; the claim pass rejects it.
  const size_t slots_used = manager_->slots_used();
  const size_t page_limit = (slots_used + kEntityPageSize - 1) >> kEntityPageShift;
  GrowSlotTable(slots_used);
  // The tables grow once, to the capacity that growing page by page would reach:
  // each doubling reallocated and copied every per-page table (and faulted in a fresh
  // buffer for it), which a new store's first batch paid about log2(pages) times.
  size_t capacity = page_capacity_;
  for (const Run& run : runs) {
    if (run.page < page_limit && run.page >= capacity) {
      capacity = NextCapacity(capacity, run.page);
    }
  }
  GrowToCapacity(capacity);
  for (const Run& run : runs) {
    if (run.page < page_limit) EnsureEntityPage(run.page);
  }
  for (const ComponentBundle::Entry& entry : bundle.entries_) {
    ComponentType& type = types_[entry.id];
    for (const Run& run : runs) {
      if (run.page < page_limit) EnsureDataPage(type, run.page);
    }
  }
  // Then one pass over the batch, a run at a time: its entities are validated and
  // claimed, then each component's mask word is set once and its values are written
  // while the page's lines are in cache. (Three whole-batch passes measured 12-16 ns
  // per entity at 1M: each pass streamed the batch's pages from L3 again.) In the
  // identity layout an occupied bit at an entity's own slot means it is in the store.
  // The tables are read into locals once: a store through a member would make the
  // compiler reload every pointer of the loop after it.
  absl::Status error;
  size_t failed_at = 0;
  const EntityManager& manager = manager_.manager();
  uint16_t* const count = count_.data();
  uint32_t* const gen_of = gen_of_.data();
  for (const Run& run : runs) {
    const uint32_t page = run.page;
    const bool page_exists = page < page_limit;
    const uint32_t occupied = page_exists ? occupied_[page] : 0;
    uint32_t run_flags = 0;
    size_t n = 0;
    // First a check of the whole run in a loop that only loads (so the compiler keeps
    // the manager's table and the run's flags in registers, where stores between
    // the checks made it reload and spill them), then the writes. A run that fails
    // takes the loop below, which finds the first bad entity.
    bool valid = true;
    for (size_t k = run.begin; k < run.end; ++k) {
      const Entity e = entities[k];
      const uint32_t flag = uint32_t{1} << (e.index() & (kEntityPageSize - 1));
      valid &= manager.Alive(e) & (((occupied | run_flags) & flag) == 0);
      run_flags |= flag;
    }
    // Valid entities' pages exist (alive implies below the limit).
    EntityPage* const entity_page = page_exists ? entity_pages_[page] : nullptr;
    if (ABSL_PREDICT_TRUE(valid)) {
      for (size_t k = run.begin; k < run.end; ++k) {
        const Entity e = entities[k];
        count[e.index()] = num_components;
        gen_of[e.index()] = e.generation();
        entity_page->entity[e.index() & (kEntityPageSize - 1)] = e.bits();
      }
      n = run.end - run.begin;
    } else {
      run_flags = 0;
    }
    for (size_t k = run.begin + n; k < run.end; ++k, ++n) {
      const Entity e = entities[k];
      const uint32_t bit = e.index() & (kEntityPageSize - 1);
      const uint32_t flag = uint32_t{1} << bit;
      if (ABSL_PREDICT_FALSE(!manager.Alive(e))) {
        error = absl::NotFoundError(absl::StrCat(e.DebugString(), " is not alive"));
      } else if (ABSL_PREDICT_FALSE(((occupied | run_flags) & flag) != 0)) {
        error = absl::AlreadyExistsError(absl::StrCat(
            e.DebugString(), " already has components or appears twice in the batch"));
      }
      if (ABSL_PREDICT_FALSE(!error.ok())) {
        failed_at = k;
        break;
      }
      count[e.index()] = num_components;
      gen_of[e.index()] = e.generation();
      entity_page->entity[bit] = e.bits();
      run_flags |= flag;
    }
    if (run_flags != 0) {
      occupied_[page] = occupied | run_flags;
      num_entities_ += n;
    }
    if (!error.ok()) break;
    // The run's slots are distinct (checked above), so 32 of them are the whole page,
    // filled in order.
    const bool full = run_flags == ~uint32_t{0};
    const Entity* const run_entities = entities.data() + run.begin;
    for (const ComponentBundle::Entry& entry : bundle.entries_) {
      ComponentType& type = types_[entry.id];
      type.masks[page] |= run_flags;
      const std::byte* const value = bundle.bytes_.data() + entry.offset;
      if (full) {
        FillAt(type.size, type.data[page], value, kEntityPageSize, [](size_t k) { return k; });
      } else {
        FillAt(type.size, type.data[page], value, n, [run_entities](size_t k) {
          return run_entities[k].index() & (kEntityPageSize - 1);
        });
      }
    }
  }
  layout_changed_ = true;
  if (error.ok()) return absl::OkStatus();
  // Roll back: entities [0, failed_at) were claimed, and those of the failing run
  // before it have their occupied bits but no mask bits yet; clearing both is right
  // for all of them, since their slots were empty before this call. The pages
  // allocated for the batch are released by the next ReleaseEmptyPages.
  for (size_t j = 0; j < failed_at; ++j) {
    const uint32_t index = entities[j].index();
    const uint32_t page = index >> kEntityPageShift;
    const uint32_t flag = uint32_t{1} << (index & (kEntityPageSize - 1));
    for (const ComponentBundle::Entry& entry : bundle.entries_) {
      types_[entry.id].masks[page] &= ~flag;
    }
    count_[index] = 0;
    FreeSlot(index, index);
  }
  for (const Run& run : runs) {
    if (run.page < page_limit) MarkDirty(run.page);
  }
  return error;
}

}  // namespace strata
