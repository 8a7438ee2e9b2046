// EntityPages (see iteration/entity_pages.h): registration, the tables and their
// growth, slots, Add/Remove/Delete and the release of empty pages. The batch path is in
// entity_pages_create.cc; compaction is the Compactor's (iteration/internal/compactor.h),
// to which Compact delegates.
#include "iteration/entity_pages.h"

#include <algorithm>
#include <cassert>
#include <cstddef>
#include <cstring>
#include <limits>
#include <new>
#include <type_traits>
#include <utility>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "absl/numeric/bits.h"
#include "absl/strings/str_cat.h"

namespace strata {
namespace {

// Tags (size 0) share this: their "data page" pointer is never dereferenced for
// state, but typed callers index it with sizeof(T) == 1 for up to 32 elements.
alignas(4096) std::byte g_tag_storage[4096];

bool IsPowerOfTwo(size_t x) { return x != 0 && (x & (x - 1)) == 0; }

}  // namespace

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
  CheckNotWalking("RegisterComponent");
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
  ComponentType& type = types_.back();
  HotType& hot = hot_[id];
  hot.masks = type.masks.data();
  hot.size = static_cast<uint32_t>(size);
  hot.id = id;
  if (size == 0) {
    hot.base = g_tag_storage;
    hot.direct_pages = std::numeric_limits<size_t>::max();
  } else {
    type.range = iteration_internal::PageRange(size * kEntityPageSize);
  }
  num_types_ = static_cast<uint32_t>(types_.size());
  // A pass's trades end (their sets have a word per type of the plan), and the next
  // Compact plans a new pass with every type.
  if (compactor_.EndTrades()) layout_changed_ = true;
  return id;
}

absl::StatusOr<ComponentId> EntityPages::FindComponent(absl::string_view name) const {
  auto it = type_by_name_.find(name);
  if (it == type_by_name_.end()) {
    return absl::NotFoundError(absl::StrCat("no component named '", name, "'"));
  }
  return it->second;
}

size_t EntityPages::NextCapacity(size_t capacity, size_t page) {
  const size_t next = std::max(capacity * 2, page + 1);
  return (next + kPageCapacityQuantum - 1) / kPageCapacityQuantum * kPageCapacityQuantum;
}

void EntityPages::GrowTo(size_t page) {
  if (page < page_capacity_) return;
  GrowToCapacity(NextCapacity(page_capacity_, page));
}

void EntityPages::GrowToCapacity(size_t capacity) {
  if (capacity <= page_capacity_) return;
  for (size_t c = 0; c < types_.size(); ++c) {
    types_[c].masks.resize(capacity, 0);
    types_[c].data.resize(capacity, nullptr);
    hot_[c].masks = types_[c].masks.data();
    if (types_[c].ticks != nullptr) types_[c].ticks->Grow(capacity);
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
  gen_size_ = size;
  UpdateInlineLimit();
  if (indirect_) {
    GrowSlotEntries(slot_of_, size);
  } else if (reserve_slot_table_) {
    GrowSlotEntries(slot_reserve_, size);  // written: touched now, not in Compact
  }
}

void EntityPages::MakeIndirect() {
  if (indirect_) return;
  // Every entity in the store is at its own slot, and the entity pages' records are
  // written when an entity takes a slot, so the table starts as the identity, with
  // the generations copied beside: one sequential pass (the slots of indices not in
  // the store are never read: the generation says who is in it).
  // ReserveForCompaction's table has its memory already.
  if (slot_reserve_.size() >= gen_of_.size()) {
    slot_of_.swap(slot_reserve_);
    slot_reserve_ = LargeVector<SlotEntry>();
  } else {
    slot_of_ = LargeVector<SlotEntry>();
    slot_of_.resize(gen_of_.size());  // unwritten (LargeVector): written once, below
  }
  WriteSlotEntries(slot_of_.data(), gen_of_.data(), 0, gen_of_.size());
  indirect_ = true;
}

size_t EntityPages::Compact(size_t budget) {
  CheckNotWalking("Compact");
  return compactor_.Compact(budget);
}

absl::Status EntityPages::ReserveForCompaction(size_t entities) {
  CheckNotWalking("ReserveForCompaction");
  if (entities > Entity::kInvalidIndex) {
    return absl::InvalidArgumentError(
        absl::StrCat("ReserveForCompaction: ", entities,
                     " entities is past the entity index range"));
  }
  reserve_slot_table_ = true;
  // A compacted store already has its table (GrowSlotTable grows it, written).
  if (indirect_) return absl::OkStatus();
  const size_t size = std::max(entities, gen_of_.size());
  if (slot_reserve_.size() < size) {
    // Written, not only allocated: the kernel gives memory pages (and zeroes them) on
    // the first write, which is the cost this moves out of Compact.
    GrowSlotEntries(slot_reserve_, size);
  }
  return absl::OkStatus();
}

void EntityPages::GrowSlotEntries(LargeVector<SlotEntry>& table, size_t size) {
  const size_t old_size = table.size();
  if (size <= old_size) return;
  table.resize(size);  // unwritten (LargeVector): written once, below
  WriteSlotEntries(table.data(), /*gen=*/nullptr, old_size, size);
}

void EntityPages::WriteSlotEntries(SlotEntry* table, const uint32_t* gen, size_t begin,
                                   size_t end) {
  static_assert(offsetof(SlotEntry, slot) == 0 && offsetof(SlotEntry, generation) == 4);
  size_t i = begin;
#if defined(__SSE2__)
  // Four entries per step: the slots and the generations interleaved by two unpacks.
  // GCC 12 at -O2 vectorises no loop whose count is unknown, and its own interleaving
  // of a fixed-count loop went through the stack (7.5 instructions an entry; this is
  // under 2), which the first compaction pays for every index.
  const __m128i step = _mm_set1_epi32(4);
  const __m128i not_in_store = _mm_set1_epi32(static_cast<int>(Entity::kInvalidGeneration));
  const int first = static_cast<int>(begin);
  __m128i slots = _mm_setr_epi32(first, first + 1, first + 2, first + 3);
  for (; i + 4 <= end; i += 4) {
    const __m128i generations =
        gen == nullptr ? not_in_store
                       : _mm_loadu_si128(reinterpret_cast<const __m128i*>(gen + i));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(table + i),
                     _mm_unpacklo_epi32(slots, generations));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(table + i + 2),
                     _mm_unpackhi_epi32(slots, generations));
    slots = _mm_add_epi32(slots, step);
  }
#endif
  for (; i < end; ++i) {
    table[i] = SlotEntry{static_cast<uint32_t>(i),
                         gen == nullptr ? Entity::kInvalidGeneration : gen[i]};
  }
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
    HotType& hot = hot_[static_cast<size_t>(&type - types_.data())];
    if (!type.range.reserved() && type.range.Reserve() > 0) {
      // The first data page of the type: every page below direct_pages from now on
      // comes from the range (none came from the pool before).
      hot.base = type.range.base();
      hot.direct_pages = type.range.blocks();
    }
    data = page < hot.direct_pages ? type.range.Allocate(page)
                                   : static_cast<std::byte*>(type.pool.Allocate());
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

void EntityPages::EnsureDirectDataPage(ComponentId c, uint32_t page) {
  assert(c < types_.size() && page < hot_[c].direct_pages);
  EnsureDataPage(types_[c], page);
}

void EntityPages::FreeDataPage(ComponentType& type, uint32_t page) {
  std::byte*& data = type.data[page];
  if (type.size != 0) {
    if (page < Hot(static_cast<ComponentId>(&type - types_.data())).direct_pages) {
      type.range.Free(page);
    } else {
      type.pool.Free(data);
    }
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
  gen_of_[index] = Entity::kInvalidGeneration;  // the entry's slot is stale now
  if (indirect_) slot_of_[index].generation = Entity::kInvalidGeneration;
  --num_entities_;
  // A slot at its own index is found again by the next entity of that index; only
  // the others need listing for entities whose own slot is taken.
  if (slot != index) PushFreeSlot(slot);
}

absl::StatusOr<std::byte*> EntityPages::AddSlow(uint32_t index, uint32_t generation,
                                                ComponentId c, uint32_t value_size) {
  // The inline Add's check: a walk sends it here (see inline_limit_).
  CheckNotWalking("Add");
  const Entity e(index, generation);
  slow_added_ = e;
  // In the store implies alive (the destroy listener deletes destroyed entities), so
  // the common slow case, the first component of a page, skips the manager.
  const bool in_store = InStore(e);
  if (ABSL_PREDICT_FALSE(!in_store && !manager_->Alive(e))) {
    return absl::NotFoundError(absl::StrCat(e.DebugString(), " is not alive"));
  }
  if (ABSL_PREDICT_FALSE(c >= types_.size())) {
    return absl::InvalidArgumentError(absl::StrCat("unregistered component id ", c));
  }
  ComponentType& type = types_[c];
  if (ABSL_PREDICT_FALSE(value_size != kUntypedSize && value_size != type.size)) {
    return absl::InvalidArgumentError(
        absl::StrCat("component '", type.name, "' has ", type.size,
                     " bytes, the value given ", value_size));
  }
  uint32_t slot;
  if (in_store) {
    slot = SlotOfIndex(e.index());
  } else {
    // Alive and not in the store (destroyed entities were deleted by the listener
    // before their index could be reissued, so no older generation holds a slot).
    GrowSlotTable(size_t{e.index()} + 1);
    assert(gen_of_[e.index()] == Entity::kInvalidGeneration);
    slot = AllocateSlot(e.index());
    EntityPage* entity_page = EnsureEntityPage(slot >> kEntityPageShift);
    const uint32_t bit = slot & (kEntityPageSize - 1);
    entity_page->entity[bit] = e.bits();
    count_[slot] = 0;
    SetIndexEntry(e.index(), e.generation(), slot);
  }
  const uint32_t page = slot >> kEntityPageShift;
  const uint32_t bit = slot & (kEntityPageSize - 1);
  const uint32_t flag = uint32_t{1} << bit;
  if (type.masks[page] & flag) {
    return absl::AlreadyExistsError(
        absl::StrCat(e.DebugString(), " already has component '", type.name, "'"));
  }
  std::byte* data = EnsureDataPage(type, page);
  type.masks[page] |= flag;
  ++count_[slot];
  layout_changed_ = true;
  return data + size_t{bit} * type.size;
}

absl::Status EntityPages::RemoveSlow(uint32_t index, uint32_t generation,
                                     ComponentId c) {
  // The inline Remove's check: a walk sends it here (see inline_limit_).
  CheckNotWalking("Remove");
  const Entity e(index, generation);
  const uint32_t slot = SlotOf(e);
  if (slot == kNoSlot || c >= types_.size()) return NotFoundError(e, c);
  const uint32_t page = slot >> kEntityPageShift;
  const uint32_t flag = uint32_t{1} << (slot & (kEntityPageSize - 1));
  uint32_t& mask = types_[c].masks[page];
  if ((mask & flag) == 0) return NotFoundError(e, c);
  if (WantsRemoving()) NotifyRemoving(c, e);
  mask &= ~flag;
  layout_changed_ = true;
  if (--count_[slot] == 0 || mask == 0) RemoveEmptied(index, slot);
  return absl::OkStatus();
}

void EntityPages::RemoveEmptied(uint32_t index, uint32_t slot) {
  if (count_[slot] == 0) FreeSlot(index, slot);
  MarkDirty(slot >> kEntityPageShift);
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
  FreeSlot(indirect_ ? Entity::FromBits(entity_page->entity[bit]).index() : slot, slot);
}

absl::Status EntityPages::Delete(Entity e) {
  CheckNotWalking("Delete");
  const uint32_t slot = SlotOf(e);
  if (slot == kNoSlot) {
    return absl::NotFoundError(
        absl::StrCat(e.DebugString(), " is stale or has no components"));
  }
  if (WantsRemoving()) NotifyRemovingEntities(absl::MakeConstSpan(&e, 1));
  DeleteSlot(slot);
  return absl::OkStatus();
}

size_t EntityPages::DeleteEntities(absl::Span<const Entity> entities) {
  CheckNotWalking("DeleteEntities (a destroy)");
  if (WantsRemoving()) NotifyRemovingEntities(entities);
  size_t deleted = 0;
  for (Entity e : entities) {
    const uint32_t slot = SlotOf(e);
    if (slot == kNoSlot) continue;
    DeleteSlot(slot);
    ++deleted;
  }
  return deleted;
}

size_t EntityPages::ReleaseEmptyPages() {
  CheckNotWalking("ReleaseEmptyPages");
  size_t released = 0;
  // Backwards: the pools' free lists are LIFO, so pages freed in reverse order come
  // back in the order they were dirtied (ascending for a pass over entities in order):
  // the next adds get the same addresses in the same order, which keeps a component's
  // pages streaming in address order instead of reversing them on every round.
  for (size_t k = dirty_pages_.size(); k-- > 0;) {
    const uint32_t page = dirty_pages_[k];
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
    compactor_.DropPlan();
    if (reserve_slot_table_ && slot_reserve_.empty()) {
      // Kept for the next MakeIndirect, which writes it whole.
      slot_of_.swap(slot_reserve_);
    }
    slot_of_ = LargeVector<SlotEntry>();
    indirect_ = false;
  }
  ShrinkDataPageRanges();
  return released;
}

size_t EntityPages::ReleaseUnusedMemory() {
  CheckNotWalking("ReleaseUnusedMemory");
  const size_t before = reserved_page_bytes();
  // The pools first: the chunks they give back may empty the chunk pool's slabs.
  entity_page_pool_.ReleaseUnusedSlabs();
  for (ComponentType& type : types_) {
    type.pool.ReleaseUnusedSlabs();
    type.range.ReleaseUnused();
  }
  chunk_pool_.ReleaseUnusedSlabs();
  size_t table_bytes = 0;
  if (num_entities_ == 0 && !indirect_) {
    // ReserveForCompaction's table, in use by no one: back to the system.
    table_bytes = slot_reserve_.capacity() * sizeof(SlotEntry);
    slot_reserve_ = LargeVector<SlotEntry>();
    reserve_slot_table_ = false;
  }
  return before - reserved_page_bytes() + table_bytes;
}

size_t EntityPages::reserved_page_bytes() const {
  // What the store holds from the system: the chunk pool's slabs, plus the slabs the
  // pools allocated themselves (pages larger than a chunk).
  size_t bytes = chunk_pool_.reserved_bytes() + entity_page_pool_.system_bytes();
  for (const ComponentType& type : types_) {
    bytes += type.pool.system_bytes() + type.range.committed_bytes();
  }
  return bytes;
}

size_t EntityPages::MemoryUsage() const {
  size_t bytes = reserved_page_bytes() + occupied_.capacity() * sizeof(uint32_t) +
                 entity_pages_.capacity() * sizeof(EntityPage*) +
                 dirty_pages_.capacity() * sizeof(uint32_t) +
                 gen_of_.capacity() * sizeof(uint32_t) +
                 (slot_of_.capacity() + slot_reserve_.capacity()) * sizeof(SlotEntry) +
                 count_.capacity() * sizeof(uint16_t) + dirty_.capacity() +
                 free_slots_.capacity() * sizeof(uint32_t) +
                 in_free_list_.capacity() * sizeof(uint64_t) +
                 compactor_.plan_bytes();
  for (const ComponentType& type : types_) {
    bytes += type.masks.capacity() * sizeof(uint32_t) +
             type.data.capacity() * sizeof(std::byte*) + type.name.capacity();
  }
  return bytes;
}

}  // namespace strata
