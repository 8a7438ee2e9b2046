#include "iteration/entity_pages.h"

#include <algorithm>
#include <cassert>
#include <cstring>
#include <limits>
#include <new>
#include <type_traits>
#include <utility>

#include "absl/numeric/bits.h"
#include "absl/strings/str_cat.h"

namespace strata {
namespace {

// Tags (size 0) share this: their "data page" pointer is never dereferenced for
// state, but typed callers index it with sizeof(T) == 1 for up to 32 elements.
alignas(4096) std::byte g_tag_storage[4096];

bool IsPowerOfTwo(size_t x) { return x != 0 && (x & (x - 1)) == 0; }

// Writes the `kSize`-byte `value` into the elements `bits[0, n)` of the page `data`.
template <size_t kSize>
void FillRun(std::byte* data, const std::byte* value, const uint8_t* bits, size_t n) {
  for (size_t k = 0; k < n; ++k) {
    std::memcpy(data + size_t{bits[k]} * kSize, value, kSize);
  }
}

// FillRun for a size known at run time: fixed-size copies for the common sizes.
void FillRun(size_t size, std::byte* data, const std::byte* value, const uint8_t* bits, size_t n) {
  switch (size) {
    case 0: break;
    case 4: FillRun<4>(data, value, bits, n); break;
    case 8: FillRun<8>(data, value, bits, n); break;
    case 12: FillRun<12>(data, value, bits, n); break;
    case 16: FillRun<16>(data, value, bits, n); break;
    default:
      for (size_t k = 0; k < n; ++k) {
        std::memcpy(data + size_t{bits[k]} * size, value, size);
      }
  }
}

}  // namespace

Archetype& Archetype::SetRaw(ComponentId component, absl::Span<const std::byte> bytes) {
  for (Entry& entry : entries_) {
    if (entry.id == component) {
      // Replace: append the new bytes (old ones are left unused; archetypes are small).
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

void EntityPages::WriteValue(std::byte* dst, const void* value, uint32_t size) {
  if (value == nullptr) {
    std::memset(dst, 0, size);
    return;
  }
  switch (size) {  // common small sizes become plain moves instead of a memcpy call
    case 0: return;
    case 4: std::memcpy(dst, value, 4); return;
    case 8: std::memcpy(dst, value, 8); return;
    case 12: std::memcpy(dst, value, 12); return;
    case 16: std::memcpy(dst, value, 16); return;
    default: std::memcpy(dst, value, size); return;
  }
}

EntityPages::EntityPages(EntityManager& manager)
    : manager_(manager.AddDestroyListener(
          [this](absl::Span<const Entity> dead) { DeleteEntities(dead); })) {}

EntityPages::~EntityPages() {
  // The pools free their slabs, and with them every page: EntityPage and component
  // data are trivially destructible.
  static_assert(std::is_trivially_destructible_v<EntityPage>);
}

absl::StatusOr<ComponentId> EntityPages::RegisterComponent(absl::string_view name,
                                                           size_t size,
                                                           size_t alignment) {
  if (name.empty()) return absl::InvalidArgumentError("component name is empty");
  if (!IsPowerOfTwo(alignment) || alignment > kMaxComponentAlignment) {
    return absl::InvalidArgumentError(
        absl::StrCat("component '", name, "': alignment ", alignment,
                     " is not a power of two <= 4096"));
  }
  if (size % alignment != 0 || size > (uint32_t{1} << 24)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "component '", name, "': size ", size, " is not a multiple of alignment ",
        alignment, " or exceeds 16 MiB"));
  }
  if (types_.size() >= kMaxComponentTypes) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "component '", name, "': already ", kMaxComponentTypes, " component types"));
  }
  const ComponentId id = static_cast<ComponentId>(types_.size());
  if (!type_by_name_.emplace(std::string(name), id).second) {
    return absl::AlreadyExistsError(
        absl::StrCat("component '", name, "' is already registered"));
  }
  types_.push_back(ComponentType{
      std::string(name), static_cast<uint32_t>(size), static_cast<uint32_t>(alignment),
      std::vector<uint32_t>(page_capacity_, 0),
      std::vector<std::byte*>(page_capacity_, nullptr),
      // A tag's pool never allocates; its block size just has to be nonzero.
      iteration_internal::PagePool(std::max<size_t>(size, 1) * kEntityPageSize,
                                   alignment, &chunk_pool_)});
  num_types_ = static_cast<uint32_t>(types_.size());
  return id;
}

absl::StatusOr<ComponentId> EntityPages::FindComponent(absl::string_view name) const {
  auto it = type_by_name_.find(name);
  if (it == type_by_name_.end()) {
    return absl::NotFoundError(absl::StrCat("no component named '", name, "'"));
  }
  return it->second;
}

void EntityPages::GrowTo(size_t page) {
  if (page < page_capacity_) return;
  size_t capacity = std::max(page_capacity_ * 2, page + 1);
  capacity = (capacity + kPageCapacityQuantum - 1) / kPageCapacityQuantum *
             kPageCapacityQuantum;
  for (ComponentType& type : types_) {
    type.masks.resize(capacity, 0);
    type.data.resize(capacity, nullptr);
  }
  occupied_.resize(capacity, 0);
  entity_pages_.resize(capacity, nullptr);
  count_.resize(capacity * kEntityPageSize, 0);
  dirty_.resize(capacity, 0);
  page_capacity_ = capacity;
  ++epoch_;  // the mask arrays moved
}

void EntityPages::GrowSlotTable(size_t entities) {
  if (entities <= gen_of_.size()) return;
  const size_t size = std::max(entities, manager_->slots_used());
  gen_of_.resize(size, Entity::kInvalidGeneration);
  if (indirect_) slot_of_.resize(size, kNoSlot);
}

void EntityPages::MakeIndirect() {
  if (indirect_) return;
  slot_of_.clear();
  slot_of_.reserve(gen_of_.size());
  for (size_t i = 0; i < gen_of_.size(); ++i) {
    slot_of_.push_back(gen_of_[i] != Entity::kInvalidGeneration ? static_cast<uint32_t>(i)
                                                                : kNoSlot);
  }
  for (size_t page = 0; page < page_capacity_; ++page) {
    for (uint32_t bits = occupied_[page]; bits != 0; bits &= bits - 1) {
      const uint32_t bit = static_cast<uint32_t>(absl::countr_zero(bits));
      const uint32_t index = static_cast<uint32_t>(page * kEntityPageSize + bit);
      entity_pages_[page]->index[bit] = index;
      entity_pages_[page]->generation[bit] = gen_of_[index];
    }
  }
  indirect_ = true;
}

EntityPages::EntityPage* EntityPages::EnsureEntityPage(uint32_t page) {
  GrowTo(page);
  EntityPage*& slot = entity_pages_[page];
  if (slot == nullptr) {
    slot = new (entity_page_pool_.Allocate()) EntityPage();
    ++allocated_entity_pages_;
    page_bytes_ += sizeof(EntityPage);
  }
  return slot;
}

std::byte* EntityPages::EnsureDataPage(ComponentType& type, uint32_t page) {
  std::byte*& data = type.data[page];
  if (ABSL_PREDICT_TRUE(data != nullptr)) return data;
  if (type.size == 0) {
    data = g_tag_storage;
  } else {
    data = static_cast<std::byte*>(type.pool.Allocate());
    ++allocated_data_pages_;
    page_bytes_ += size_t{type.size} * kEntityPageSize;
  }
  if (type.first_page == type.end_page) {
    type.first_page = page;
    type.end_page = page + 1;
  } else {
    type.first_page = std::min(type.first_page, page);
    type.end_page = std::max(type.end_page, page + 1);
  }
  return data;
}

void EntityPages::FreeDataPage(ComponentType& type, uint32_t page) {
  std::byte*& data = type.data[page];
  if (type.size != 0) {
    type.pool.Free(data);
    --allocated_data_pages_;
    page_bytes_ -= size_t{type.size} * kEntityPageSize;
  }
  data = nullptr;
  if (page == type.first_page || page + 1 == type.end_page) type.range_stale = true;
}

void EntityPages::ShrinkDataPageRanges() {
  for (ComponentType& type : types_) {
    if (!type.range_stale) continue;
    type.range_stale = false;
    while (type.first_page < type.end_page && type.data[type.first_page] == nullptr) {
      ++type.first_page;
    }
    while (type.end_page > type.first_page && type.data[type.end_page - 1] == nullptr) {
      --type.end_page;
    }
    if (type.first_page == type.end_page) type.first_page = type.end_page = 0;
  }
}

void EntityPages::MarkDirty(uint32_t page) {
  if (!dirty_[page]) {
    dirty_[page] = 1;
    dirty_pages_.push_back(page);
  }
}

uint32_t EntityPages::FindFreeSlotFrom(uint32_t first_slot) {
  const size_t end_slot = page_capacity_ * kEntityPageSize;
  if (first_slot >= end_slot) return first_slot;
  for (size_t page = first_slot >> kEntityPageShift; page < page_capacity_; ++page) {
    uint32_t free = ~occupied_[page];
    if (page == (first_slot >> kEntityPageShift)) {
      free &= ~uint32_t{0} << (first_slot & (kEntityPageSize - 1));
    }
    if (free != 0) {
      return static_cast<uint32_t>(page * kEntityPageSize +
                                   static_cast<uint32_t>(absl::countr_zero(free)));
    }
  }
  return static_cast<uint32_t>(end_slot);  // past the capacity: the caller grows
}

uint32_t EntityPages::AllocateSlot(uint32_t index) {
  uint32_t slot = index;
  const uint32_t own_page = index >> kEntityPageShift;
  // Never compacted: every entity is at its own slot, so a new one's is free.
  if (indirect_ && own_page < page_capacity_ &&
      ((occupied_[own_page] >> (index & (kEntityPageSize - 1))) & 1u) != 0) {
    // The entity's own slot holds another entity (moved there by a compaction): take
    // a slot freed since, or the first free one.
    slot = kNoSlot;
    while (!free_slots_.empty()) {
      const uint32_t candidate = free_slots_.back();
      free_slots_.pop_back();
      in_free_list_[candidate >> 6] &= ~(uint64_t{1} << (candidate & 63));
      if (((occupied_[candidate >> kEntityPageShift] >> (candidate & 31)) & 1u) == 0) {
        slot = candidate;
        break;
      }
    }
    if (slot == kNoSlot) {
      slot = FindFreeSlotFrom(scan_page_ * kEntityPageSize);
      if (slot >= page_capacity_ * kEntityPageSize && scan_page_ != 0) {
        slot = FindFreeSlotFrom(0);
      }
      scan_page_ = slot >> kEntityPageShift;
    }
  }
  GrowTo(slot >> kEntityPageShift);
  occupied_[slot >> kEntityPageShift] |= uint32_t{1} << (slot & (kEntityPageSize - 1));
  ++num_entities_;
  return slot;
}

void EntityPages::PushFreeSlot(uint32_t slot) {
  const size_t word = slot >> 6;
  if (word >= in_free_list_.size()) {
    in_free_list_.resize(std::max(word + 1, page_capacity_ / 2), 0);
  }
  const uint64_t bit = uint64_t{1} << (slot & 63);
  if ((in_free_list_[word] & bit) != 0) return;
  in_free_list_[word] |= bit;
  free_slots_.push_back(slot);
}

void EntityPages::FreeSlot(uint32_t index, uint32_t slot) {
  occupied_[slot >> kEntityPageShift] &= ~(uint32_t{1} << (slot & (kEntityPageSize - 1)));
  gen_of_[index] = Entity::kInvalidGeneration;
  SetSlot(index, kNoSlot);
  --num_entities_;
  // A slot at its own index is found again by the next entity of that index; only
  // the others need listing for entities whose own slot is taken.
  if (slot != index) PushFreeSlot(slot);
}

absl::Status EntityPages::AddSlow(Entity e, ComponentId c, const void* value) {
  if (ABSL_PREDICT_FALSE(!manager_->Alive(e))) {
    return absl::NotFoundError(absl::StrCat(e.DebugString(), " is not alive"));
  }
  if (ABSL_PREDICT_FALSE(c >= types_.size())) {
    return absl::InvalidArgumentError(absl::StrCat("unregistered component id ", c));
  }
  GrowSlotTable(size_t{e.index()} + 1);
  uint32_t slot;
  if (gen_of_[e.index()] == Entity::kInvalidGeneration) {
    // Alive and not in the store (destroyed entities were deleted by the listener
    // before their index could be reissued, so no older generation holds a slot).
    slot = AllocateSlot(e.index());
    EntityPage* entity_page = EnsureEntityPage(slot >> kEntityPageShift);
    const uint32_t bit = slot & (kEntityPageSize - 1);
    entity_page->index[bit] = e.index();
    entity_page->generation[bit] = e.generation();
    count_[slot] = 0;
    gen_of_[e.index()] = e.generation();
    SetSlot(e.index(), slot);
  } else {
    assert(gen_of_[e.index()] == e.generation());
    slot = SlotOfIndex(e.index());
  }
  const uint32_t page = slot >> kEntityPageShift;
  const uint32_t bit = slot & (kEntityPageSize - 1);
  const uint32_t flag = uint32_t{1} << bit;
  ComponentType& type = types_[c];
  if (type.masks[page] & flag) {
    return absl::AlreadyExistsError(
        absl::StrCat(e.DebugString(), " already has component '", type.name, "'"));
  }
  std::byte* data = EnsureDataPage(type, page);
  type.masks[page] |= flag;
  ++count_[slot];
  layout_changed_ = true;
  WriteValue(data + size_t{bit} * type.size, value, type.size);
  return absl::OkStatus();
}

absl::Status EntityPages::NotFoundError(Entity e, ComponentId c) const {
  return absl::NotFoundError(absl::StrCat(
      e.DebugString(), " is stale or has no component ",
      c < types_.size() ? absl::StrCat("'", types_[c].name, "'") : absl::StrCat(c)));
}

void EntityPages::DeleteSlot(uint32_t slot) {
  const uint32_t page = slot >> kEntityPageShift;
  const uint32_t bit = slot & (kEntityPageSize - 1);
  const uint32_t flag = uint32_t{1} << bit;
  EntityPage* entity_page = entity_pages_[page];
  uint32_t remaining = count_[slot];
  for (size_t c = 0; c < types_.size() && remaining != 0; ++c) {
    uint32_t& mask = types_[c].masks[page];
    if (mask & flag) {
      mask &= ~flag;
      --remaining;
    }
  }
  assert(remaining == 0);
  count_[slot] = 0;
  MarkDirty(page);
  layout_changed_ = true;
  FreeSlot(indirect_ ? entity_page->index[bit] : slot, slot);
}

absl::Status EntityPages::Delete(Entity e) {
  const uint32_t slot = SlotOf(e);
  if (slot == kNoSlot) {
    return absl::NotFoundError(
        absl::StrCat(e.DebugString(), " is stale or has no components"));
  }
  DeleteSlot(slot);
  return absl::OkStatus();
}

size_t EntityPages::DeleteEntities(absl::Span<const Entity> entities) {
  size_t deleted = 0;
  for (Entity e : entities) {
    const uint32_t slot = SlotOf(e);
    if (slot == kNoSlot) continue;
    DeleteSlot(slot);
    ++deleted;
  }
  return deleted;
}

absl::Status EntityPages::CreateFromArchetype(absl::Span<const Entity> entities,
                                              const Archetype& archetype) {
  for (const Archetype::Entry& entry : archetype.entries_) {
    if (entry.id >= types_.size()) {
      return absl::InvalidArgumentError(
          absl::StrCat("archetype names unregistered component id ", entry.id));
    }
    if (entry.size != types_[entry.id].size) {
      return absl::InvalidArgumentError(absl::StrCat(
          "archetype value for '", types_[entry.id].name, "' has ", entry.size,
          " bytes, the component has ", types_[entry.id].size));
    }
  }
  if (archetype.empty() || entities.empty()) return absl::OkStatus();
  if (!indirect_) return CreateFromArchetypeIdentity(entities, archetype);
  const uint16_t num_components = static_cast<uint16_t>(archetype.entries_.size());

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
    gen_of_[e.index()] = e.generation();
    SetSlot(e.index(), slot);
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
  for (const Archetype::Entry& entry : archetype.entries_) {
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
      entity_page->index[bit] = e.index();
      entity_page->generation[bit] = e.generation();
      count_[size_t{page} * kEntityPageSize + bit] = num_components;
      bits[k] = static_cast<uint8_t>(bit);
      run_flags |= uint32_t{1} << bit;
    }
    WriteArchetypeRun(page, archetype, run_flags, bits, n);
  }
  return absl::OkStatus();
}

void EntityPages::WriteArchetypeRun(uint32_t page, const Archetype& archetype, uint32_t run_flags,
                                    const uint8_t* bits, size_t n) {
  for (const Archetype::Entry& entry : archetype.entries_) {
    ComponentType& type = types_[entry.id];
    type.masks[page] |= run_flags;
    FillRun(type.size, type.data[page], archetype.bytes_.data() + entry.offset, bits, n);
  }
}

absl::Status EntityPages::CreateFromArchetypeIdentity(absl::Span<const Entity> entities,
                                                      const Archetype& archetype) {
  const uint16_t num_components = static_cast<uint16_t>(archetype.entries_.size());
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
  for (const Run& run : runs) {
    if (run.page < page_limit) EnsureEntityPage(run.page);  // may grow the tables
  }
  for (const Archetype::Entry& entry : archetype.entries_) {
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
  absl::Status error;
  size_t failed_at = 0;
  uint8_t bits[kEntityPageSize];
  for (const Run& run : runs) {
    const uint32_t page = run.page;
    const bool page_exists = page < page_limit;
    const uint32_t occupied = page_exists ? occupied_[page] : 0;
    uint32_t run_flags = 0;
    size_t n = 0;
    for (size_t k = run.begin; k < run.end; ++k, ++n) {
      const Entity e = entities[k];
      const uint32_t bit = e.index() & (kEntityPageSize - 1);
      const uint32_t flag = uint32_t{1} << bit;
      if (ABSL_PREDICT_FALSE(!manager_->Alive(e))) {
        error = absl::NotFoundError(absl::StrCat(e.DebugString(), " is not alive"));
      } else if (ABSL_PREDICT_FALSE(((occupied | run_flags) & flag) != 0)) {
        error = absl::AlreadyExistsError(absl::StrCat(
            e.DebugString(), " already has components or appears twice in the batch"));
      }
      if (ABSL_PREDICT_FALSE(!error.ok())) {
        failed_at = k;
        break;
      }
      // The entity page's records are not written in the identity layout.
      count_[e.index()] = num_components;
      gen_of_[e.index()] = e.generation();
      bits[n] = static_cast<uint8_t>(bit);
      run_flags |= flag;
    }
    if (run_flags != 0) {
      occupied_[page] = occupied | run_flags;
      num_entities_ += n;
    }
    if (!error.ok()) break;
    WriteArchetypeRun(page, archetype, run_flags, bits, n);
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
    for (const Archetype::Entry& entry : archetype.entries_) {
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

size_t EntityPages::ReleaseEmptyPages() {
  size_t released = 0;
  for (const uint32_t page : dirty_pages_) {
    EntityPage* entity_page = entity_pages_[page];
    dirty_[page] = 0;
    for (ComponentType& type : types_) {
      if (type.masks[page] == 0 && type.data[page] != nullptr) {
        if (type.size != 0) ++released;
        FreeDataPage(type, page);
      }
    }
    if (occupied_[page] == 0) {
      entity_page_pool_.Free(entity_page);
      entity_pages_[page] = nullptr;
      --allocated_entity_pages_;
      page_bytes_ -= sizeof(EntityPage);
      ++released;
    }
  }
  dirty_pages_.clear();
  if (num_entities_ == 0) {
    // Nothing left: every slot is free again, and so is the list's memory.
    free_slots_ = std::vector<uint32_t>();
    in_free_list_ = std::vector<uint64_t>();
    scan_page_ = 0;
    // Every own slot is free again: back to the identity layout (a pass in
    // progress has nothing left to move).
    plan_ = std::vector<PlannedMove>();
    plan_cursor_ = 0;
    slot_of_ = std::vector<uint32_t>();
    indirect_ = false;
  }
  ShrinkDataPageRanges();
  return released;
}

size_t EntityPages::ReleaseUnusedMemory() {
  const size_t before = reserved_page_bytes();
  // The pools first: the chunks they give back may empty the chunk pool's slabs.
  entity_page_pool_.ReleaseUnusedSlabs();
  for (ComponentType& type : types_) type.pool.ReleaseUnusedSlabs();
  chunk_pool_.ReleaseUnusedSlabs();
  return before - reserved_page_bytes();
}

size_t EntityPages::reserved_page_bytes() const {
  // What the store holds from the system: the chunk pool's slabs, plus the slabs the
  // pools allocated themselves (pages larger than a chunk).
  size_t bytes = chunk_pool_.reserved_bytes() + entity_page_pool_.system_bytes();
  for (const ComponentType& type : types_) bytes += type.pool.system_bytes();
  return bytes;
}

size_t EntityPages::MemoryUsage() const {
  size_t bytes = reserved_page_bytes() + occupied_.capacity() * sizeof(uint32_t) +
                 entity_pages_.capacity() * sizeof(EntityPage*) +
                 dirty_pages_.capacity() * sizeof(uint32_t) +
                 gen_of_.capacity() * sizeof(uint32_t) +
                 slot_of_.capacity() * sizeof(uint32_t) +
                 count_.capacity() * sizeof(uint16_t) + dirty_.capacity() +
                 free_slots_.capacity() * sizeof(uint32_t) +
                 in_free_list_.capacity() * sizeof(uint64_t) +
                 plan_.capacity() * sizeof(PlannedMove);
  for (const ComponentType& type : types_) {
    bytes += type.masks.capacity() * sizeof(uint32_t) +
             type.data.capacity() * sizeof(std::byte*) + type.name.capacity();
  }
  return bytes;
}

}  // namespace strata
