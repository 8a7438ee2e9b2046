#include "iteration/entity_pages.h"

#include <algorithm>
#include <cassert>
#include <cstring>
#include <new>
#include <type_traits>
#include <utility>

#include "absl/strings/str_cat.h"

namespace strata {
namespace {

// Tags (size 0) share this: their "data page" pointer is never dereferenced for
// state, but typed callers index it with sizeof(T) == 1 for up to 32 elements.
alignas(4096) std::byte g_tag_storage[4096];

bool IsPowerOfTwo(size_t x) { return x != 0 && (x & (x - 1)) == 0; }

// Writes the `kSize`-byte `value` into the slot of each entity of `run` (all in the
// page `data` belongs to).
template <size_t kSize>
void FillRun(std::byte* data, const std::byte* value, absl::Span<const Entity> run) {
  for (const Entity e : run) {
    std::memcpy(data + size_t{e.index() & (kEntityPageSize - 1)} * kSize, value, kSize);
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
  page_capacity_ = capacity;
}

EntityPages::EntityPage* EntityPages::EnsureEntityPage(uint32_t page) {
  GrowTo(page);
  EntityPage*& slot = entity_pages_[page];
  if (slot == nullptr) {
    slot = new (entity_page_pool_.Allocate()) EntityPage();  // zero counts, not dirty
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
}

void EntityPages::MarkDirty(uint32_t page) {
  EntityPage* entity_page = entity_pages_[page];
  if (!entity_page->dirty) {
    entity_page->dirty = true;
    dirty_pages_.push_back(page);
  }
}

absl::Status EntityPages::AddSlow(Entity e, ComponentId c, const void* value) {
  if (ABSL_PREDICT_FALSE(!manager_->Alive(e))) {
    return absl::NotFoundError(absl::StrCat(e.DebugString(), " is not alive"));
  }
  if (ABSL_PREDICT_FALSE(c >= types_.size())) {
    return absl::InvalidArgumentError(absl::StrCat("unregistered component id ", c));
  }
  const uint32_t page = e.index() >> kEntityPageShift;
  const uint32_t bit = e.index() & (kEntityPageSize - 1);
  const uint32_t flag = uint32_t{1} << bit;
  EntityPage* entity_page = EnsureEntityPage(page);
  ComponentType& type = types_[c];
  if ((occupied_[page] & flag) == 0) {
    // The slot is empty: the destroy listener cleared any earlier occupant.
    occupied_[page] |= flag;
    entity_page->generation[bit] = e.generation();
    entity_page->count[bit] = 0;
  } else {
    // Alive and occupied means the occupant is `e` itself: destroyed entities were
    // deleted by the listener before their slot could be reissued.
    assert(entity_page->generation[bit] == e.generation());
    if (type.masks[page] & flag) {
      return absl::AlreadyExistsError(
          absl::StrCat(e.DebugString(), " already has component '", type.name, "'"));
    }
  }
  std::byte* data = EnsureDataPage(type, page);
  type.masks[page] |= flag;
  ++entity_page->count[bit];
  WriteValue(data + size_t{bit} * type.size, value, type.size);
  return absl::OkStatus();
}

absl::Status EntityPages::NotFoundError(Entity e, ComponentId c) const {
  return absl::NotFoundError(absl::StrCat(
      e.DebugString(), " is stale or has no component ",
      c < types_.size() ? absl::StrCat("'", types_[c].name, "'") : absl::StrCat(c)));
}

void EntityPages::DeleteSlot(uint32_t page, uint32_t bit) {
  const uint32_t flag = uint32_t{1} << bit;
  EntityPage* entity_page = entity_pages_[page];
  uint32_t remaining = entity_page->count[bit];
  for (size_t c = 0; c < types_.size() && remaining != 0; ++c) {
    uint32_t& mask = types_[c].masks[page];
    if (mask & flag) {
      mask &= ~flag;
      --remaining;
    }
  }
  assert(remaining == 0);
  entity_page->count[bit] = 0;
  occupied_[page] &= ~flag;
  MarkDirty(page);
}

absl::Status EntityPages::Delete(Entity e) {
  if (!Contains(e)) {
    return absl::NotFoundError(
        absl::StrCat(e.DebugString(), " is stale or has no components"));
  }
  DeleteSlot(e.index() >> kEntityPageShift, e.index() & (kEntityPageSize - 1));
  return absl::OkStatus();
}

size_t EntityPages::DeleteEntities(absl::Span<const Entity> entities) {
  size_t deleted = 0;
  for (Entity e : entities) {
    if (!Contains(e)) continue;
    DeleteSlot(e.index() >> kEntityPageShift, e.index() & (kEntityPageSize - 1));
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
  auto for_each_run = [&](auto&& visit) {
    for (const Run& run : runs) {
      if (!visit(run.page, run.begin, run.end)) return;
    }
  };
  // Allocate first, one kind of page at a time, so that each component's pages of the
  // batch are allocated one after the other and sit together in memory. (Allocating
  // a page's Position, Velocity and entity pages together interleaves them, and a later
  // full walk of Position + Velocity ran about 1.4x slower at 1M entities.)
  // Pages past the manager's last slot hold no live entity: a bad handle there must
  // not grow the tables; the claim pass rejects it.
  const size_t page_limit =
      (manager_->slots_used() + kEntityPageSize - 1) >> kEntityPageShift;
  for_each_run([&](uint32_t page, size_t, size_t) {
    if (page < page_limit) EnsureEntityPage(page);  // may grow the tables
    return true;
  });
  for (const Archetype::Entry& entry : archetype.entries_) {
    ComponentType& type = types_[entry.id];
    for_each_run([&](uint32_t page, size_t, size_t) {
      if (page < page_limit) EnsureDataPage(type, page);
      return true;
    });
  }
  // Then one pass over the batch, a run at a time: its entities are validated and
  // claimed, then each component's mask word is set once and its values are written
  // while the page's lines are in cache. (Three whole-batch passes, claim then one per
  // component, measured 12-16 ns per entity at 1M: each pass streamed the batch's pages
  // from L3 again.) A failure undoes the entities already claimed and marks every page
  // of the batch dirty, so the call stays all or nothing and ReleaseEmptyPages frees
  // what was allocated for nothing.
  absl::Status error;
  size_t failed_at = 0;
  for (const Run& run : runs) {
    const uint32_t page = run.page;
    // Claim: the run's entities are validated against the page's occupancy as it was
    // plus the run so far (which catches a duplicate in the batch), and the page's
    // occupancy word is written once per run. Locals, not members, so nothing is
    // reloaded after the stores into the entity page.
    // A page at or past page_limit was never allocated (nor the tables grown to it):
    // only handles that cannot be alive point there, and the first is rejected.
    const bool page_exists = page < page_limit;
    const uint32_t occupied = page_exists ? occupied_[page] : 0;
    EntityPage* const entity_page = page_exists ? entity_pages_[page] : nullptr;
    uint32_t run_flags = 0;
    for (size_t k = run.begin; k < run.end; ++k) {
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
      // Alive implies page < page_limit, so entity_page is not null here.
      entity_page->generation[bit] = e.generation();
      entity_page->count[bit] = num_components;
      run_flags |= flag;
    }
    if (run_flags != 0) occupied_[page] = occupied | run_flags;
    if (!error.ok()) break;
    const absl::Span<const Entity> run_entities =
        entities.subspan(run.begin, run.end - run.begin);
    for (const Archetype::Entry& entry : archetype.entries_) {
      ComponentType& type = types_[entry.id];
      std::byte* data = type.data[page];
      type.masks[page] |= run_flags;
      const std::byte* value = archetype.bytes_.data() + entry.offset;
      switch (type.size) {  // fixed-size copies for the common sizes
        case 0: break;
        case 4: FillRun<4>(data, value, run_entities); break;
        case 8: FillRun<8>(data, value, run_entities); break;
        case 12: FillRun<12>(data, value, run_entities); break;
        case 16: FillRun<16>(data, value, run_entities); break;
        default:
          for (const Entity e : run_entities) {
            std::memcpy(data + size_t{e.index() & (kEntityPageSize - 1)} * type.size,
                        value, type.size);
          }
      }
    }
  }
  if (error.ok()) return absl::OkStatus();
  // Roll back: entities [0, failed_at) were claimed, and those of the failing run
  // before it have their occupied bits but no mask bits yet; clearing both is right
  // for all of them, since their slots were empty before this call.
  for (size_t j = 0; j < failed_at; ++j) {
    const uint32_t page = entities[j].index() >> kEntityPageShift;
    const uint32_t bit = entities[j].index() & (kEntityPageSize - 1);
    for (const Archetype::Entry& entry : archetype.entries_) {
      types_[entry.id].masks[page] &= ~(uint32_t{1} << bit);
    }
    occupied_[page] &= ~(uint32_t{1} << bit);
    entity_pages_[page]->count[bit] = 0;
  }
  for_each_run([&](uint32_t page, size_t, size_t) {
    if (page < page_limit) MarkDirty(page);
    return true;
  });
  return error;
}

size_t EntityPages::ReleaseEmptyPages() {
  size_t released = 0;
  for (const uint32_t page : dirty_pages_) {
    EntityPage* entity_page = entity_pages_[page];
    entity_page->dirty = false;
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
                 dirty_pages_.capacity() * sizeof(uint32_t);
  for (const ComponentType& type : types_) {
    bytes += type.masks.capacity() * sizeof(uint32_t) +
             type.data.capacity() * sizeof(std::byte*) + type.name.capacity();
  }
  return bytes;
}

}  // namespace strata
