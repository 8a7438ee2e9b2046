#include "index/entity_index.h"

#include <algorithm>
#include <cassert>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "index/internal/container_memory.h"

namespace strata {
namespace {

// MurmurHash3's 64-bit finaliser: a bijection with full avalanche.
inline uint64_t FMix64(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ull;
  x ^= x >> 33;
  return x;
}

}  // namespace

uint32_t EntityIndex::Mix(uint32_t a, uint32_t b) {
  return static_cast<uint32_t>(FMix64((uint64_t{a} << 32) | b));
}

uint32_t EntityIndex::HashManager(const ComponentManager* manager) {
  const uint64_t h = FMix64(static_cast<uint64_t>(reinterpret_cast<uintptr_t>(manager)));
  return static_cast<uint32_t>(h ^ (h >> 32));
}

EntityIndex::EntityIndex(MixFunction mix)
    : mix_(mix), registry_(0, KeyHash{this}, KeyEq{this}) {
  records_.push_back(Record{0, 0, nullptr});
  transitions_.assign(size_t{1} << kTransitionBits, kEmptyPrototype);
  lookups_.assign(size_t{1} << kLookupBits, LookupEntry{0, 0});
  info_.push_back(RecordInfo{0, 0, 0});
}

EntityIndex::~EntityIndex() = default;

EntityIndex::PackedSlot& EntityIndex::SlotAtNewPage(uint32_t index) {
  const uint32_t page = index >> kPageBits;
  if (page >= pages_.size()) pages_.resize(size_t{page} + 1);
  if (pages_[page] == nullptr) {
    pages_[page] = std::make_unique<PackedSlot[]>(kPageSize);  // zeroed: all slots unused
    ++num_pages_;
  }
  return pages_[page][index & (kPageSize - 1)];
}

EntityIndex::Slot EntityIndex::WideSlot(uint32_t index) const {
  const auto it = wide_slots_.find(index);
  assert(it != wide_slots_.end() && "a slot reading kWideSlot has a wide value");
  return it->second;
}

absl::Status EntityIndex::CheckSlot(Entity entity, Slot slot, uint32_t* base) const {
  *base = kEmptyPrototype;
  if (slot.prototype == kEmptyPrototype) return absl::OkStatus();
  if (slot.generation == entity.generation()) {
    *base = slot.prototype;
    return absl::OkStatus();
  }
  if (entity.generation() < slot.generation) {
    return absl::FailedPreconditionError(
        absl::StrCat(entity.DebugString(), " is stale: its slot holds generation ",
                     slot.generation));
  }
  // An older generation left behind (destroyed without RemoveEntity): replaced.
  return absl::OkStatus();
}

ComponentManager* EntityIndex::FindComponentManagerSlow(uint32_t prototype,
                                                        uint32_t name) const {
  const Record* records = records_.data();
  for (uint32_t p = prototype; p != kEmptyPrototype; p = records[p].base) {
    if (records[p].name != name) continue;
    if (prototype < 0xFFFFu && p < 0xFFFFu) {
      lookups_[LookupSlot(prototype, name)] =
          LookupEntry{static_cast<uint16_t>(prototype), static_cast<uint16_t>(p)};
    }
    return records[p].manager;
  }
  return nullptr;
}

bool EntityIndex::ChainHas(uint32_t prototype, uint32_t name) const {
  const Record* records = records_.data();
  while (prototype != kEmptyPrototype) {
    const Record& r = records[prototype];
    if (r.name == name) return true;
    prototype = r.base;
  }
  return false;
}

uint32_t EntityIndex::ChildId(uint32_t base, const ComponentManager* manager,
                              uint32_t name) const {
  const uint32_t base_id = info_[base].id;
  uint32_t id = mix_ != nullptr ? mix_(base_id, mix_(HashManager(manager), name))
                                : Mix(base_id, Mix(HashManager(manager), name));
  // 0 is the empty prototype's id; a sequence that mixes to 0 takes 1 instead (the
  // registry compares the full key, so sharing an id is harmless).
  return id == 0 ? 1 : id;
}

uint32_t EntityIndex::FindChildInRegistry(uint32_t base, ComponentManager* manager,
                                          uint32_t name, uint32_t* set) {
  const Key key{base, name, manager, ChildId(base, manager, name)};
  ++registry_probes_;
  auto it = registry_.find(key);
  if (it == registry_.end()) return kEmptyPrototype;
  CacheTransition(set, *it);
  return *it;
}

uint32_t EntityIndex::AddChild(uint32_t base, ComponentManager* manager, uint32_t name) {
  const uint32_t id = ChildId(base, manager, name);
  uint32_t record;
  if (!free_records_.empty()) {
    record = free_records_.back();
    free_records_.pop_back();
    records_[record] = Record{base, name, manager};
    info_[record] = RecordInfo{id, 0, 0};
  } else {
    record = static_cast<uint32_t>(records_.size());
    records_.push_back(Record{base, name, manager});
    info_.push_back(RecordInfo{id, 0, 0});
  }
  if (base != kEmptyPrototype) ++info_[base].child_refs;
  registry_.insert(record);
  CacheTransition(&transitions_[TransitionSlot(base, manager, name)], record);
  return record;
}

void EntityIndex::SetPrototype(PackedSlot& packed, uint32_t index, uint32_t old_prototype,
                               uint32_t generation, uint32_t prototype) {
  if (old_prototype != kEmptyPrototype) {
    --info_[old_prototype].entity_refs;
    --num_entities_;
  }
  if (prototype == kEmptyPrototype) generation = 0;  // a free slot's generation is moot
  if (prototype != kEmptyPrototype) {
    ++info_[prototype].entity_refs;
    ++num_entities_;
  }
  const bool was_wide = packed.prototype == kWideSlot;
  if (generation <= 0xFFFFu && prototype < kWideSlot) [[likely]] {
    packed = PackedSlot{static_cast<uint16_t>(generation), static_cast<uint16_t>(prototype)};
    if (was_wide) [[unlikely]] wide_slots_.erase(index);
  } else {
    wide_slots_.insert_or_assign(index, Slot{generation, prototype});
    packed = PackedSlot{0, kWideSlot};
  }
}

absl::Status EntityIndex::AddInstanceSlow(Entity entity, ComponentManager* manager,
                                                IdString32 name) {
  if (!entity.is_valid()) {
    return absl::InvalidArgumentError("AddInstance: invalid entity");
  }
  if (manager == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("AddInstance: null manager for ", name.DebugString()));
  }
  PackedSlot& packed = SlotAt(entity.index());
  const Slot slot = Unpack(packed, entity.index());
  uint32_t base = kEmptyPrototype;
  if (slot.prototype != kEmptyPrototype) {
    if (slot.generation == entity.generation()) {
      base = slot.prototype;
    } else if (entity.generation() < slot.generation) {
      return CheckSlot(entity, slot, &base);  // the stale-handle error
    }
  }
  uint32_t child = FindChild(base, manager, name.value());
  if (child == kEmptyPrototype) {
    // Every existing prototype was built from a chain without duplicates, so only a
    // new child needs the duplicate check.
    if (ChainHas(base, name.value())) {
      return absl::AlreadyExistsError(absl::StrCat(
          entity.DebugString(), " already has a component named ", name.DebugString()));
    }
    child = AddChild(base, manager, name.value());
  }
  SetPrototype(packed, entity.index(), slot.prototype, entity.generation(), child);
  return absl::OkStatus();
}

absl::Status EntityIndex::AddInstance(absl::Span<const Entity> entities,
                                            ComponentManager* manager, IdString32 name) {
  if (manager == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("AddInstance: null manager for ", name.DebugString()));
  }
  // Pass 1 validates every entity and collects the distinct base prototypes; nothing
  // changes until all are known to be valid.
  absl::flat_hash_map<uint32_t, uint32_t> children;  // base -> child
  uint32_t last_base = kEmptyPrototype;
  bool have_last = false;
  for (const Entity entity : entities) {
    if (!entity.is_valid()) {
      return absl::InvalidArgumentError("AddInstance: invalid entity in batch");
    }
    const Slot slot = LoadSlot(entity.index());
    uint32_t base = slot.prototype;
    if (slot.prototype != kEmptyPrototype && slot.generation != entity.generation()) {
      STRATA_RETURN_IF_ERROR(CheckSlot(entity, slot, &base));
    }
    if (have_last && base == last_base) continue;
    if (children.try_emplace(base, 0).second && ChainHas(base, name.value())) {
      return absl::AlreadyExistsError(absl::StrCat(
          entity.DebugString(), " already has a component named ", name.DebugString()));
    }
    last_base = base;
    have_last = true;
  }
  // One hash and one registry probe per distinct base.
  for (auto& [base, child] : children) child = FindOrAddChild(base, manager, name.value());
  uint32_t last_child = 0;  // 0: not resolved yet
  // Pass 2 applies. No base from pass 1 contains `name`, so a slot whose prototype is
  // not a key of `children` was moved by an earlier occurrence of the same entity.
  // The reference counts SetPrototype would move one entity at a time move once per run
  // of slots going from the same old prototype to the same child (a spawn: one run).
  uint32_t run_old = kEmptyPrototype;
  uint32_t run_child = kEmptyPrototype;
  uint32_t run = 0;
  auto flush = [&] {
    if (run == 0) return;
    if (run_old != kEmptyPrototype) {
      info_[run_old].entity_refs -= run;
    } else {
      num_entities_ += run;
    }
    info_[run_child].entity_refs += run;
    run = 0;
  };
  // Slots of older generations the batch replaced, as (batch position, old value): the
  // one change roll_back cannot read back from the prototypes (rare: an entity
  // destroyed without RemoveEntity).
  absl::InlinedVector<std::pair<size_t, Slot>, 4> replaced;
  // Undoes entities[0, end) newest first, so that a slot the batch names twice ends as
  // it was before the batch: each step moved its slot from a base (or a replaced value)
  // to a child of that base.
  auto roll_back = [&](size_t end) {
    flush();
    for (size_t j = end; j-- > 0;) {
      const Entity e = entities[j];
      PackedSlot& packed = SlotAt(e.index());
      const uint32_t done = Unpack(packed, e.index()).prototype;
      Slot before{e.generation(), records_[done].base};
      if (!replaced.empty() && replaced.back().first == j) {
        before = replaced.back().second;
        replaced.pop_back();
      }
      SetPrototype(packed, e.index(), done, before.generation, before.prototype);
    }
  };
  last_base = kEmptyPrototype;
  for (size_t i = 0; i < entities.size(); ++i) {
    const Entity entity = entities[i];
    PackedSlot& packed = SlotAt(entity.index());
    const Slot slot = Unpack(packed, entity.index());
    uint32_t base = slot.prototype;
    if (slot.prototype != kEmptyPrototype && slot.generation != entity.generation()) [[unlikely]] {
      // Pass 1 found no stale entity, so a newer generation in the slot was put there
      // by an earlier entry of this batch: `entity` is stale now, as one by one.
      if (entity.generation() < slot.generation) {
        roll_back(i);
        return CheckSlot(entity, slot, &base);  // the stale-handle error
      }
      replaced.emplace_back(i, slot);
      base = kEmptyPrototype;
    }
    if (base != last_base || last_child == 0) {
      flush();
      auto it = children.find(base);
      if (it == children.end()) {
        roll_back(i);
        return absl::AlreadyExistsError(absl::StrCat(
            entity.DebugString(), " appears twice in a batch registering ",
            name.DebugString()));
      }
      last_base = base;
      last_child = it->second;
    }
    if (packed.prototype != kWideSlot && entity.generation() <= 0xFFFFu &&
        last_child < kWideSlot) [[likely]] {
      // SetPrototype's common case, its count updates deferred to flush().
      if (run != 0 && (slot.prototype != run_old || last_child != run_child)) flush();
      run_old = slot.prototype;
      run_child = last_child;
      ++run;
      packed = PackedSlot{static_cast<uint16_t>(entity.generation()),
                          static_cast<uint16_t>(last_child)};
    } else {
      flush();
      SetPrototype(packed, entity.index(), slot.prototype, entity.generation(), last_child);
    }
  }
  flush();
  return absl::OkStatus();
}

absl::Status EntityIndex::RemoveInstance(Entity entity, IdString32 name) {
  const uint32_t current = FindPrototype(entity);
  if (current == kEmptyPrototype) {
    return absl::NotFoundError(
        absl::StrCat("RemoveInstance: ", entity.DebugString(), " is not indexed"));
  }
  // The entries above the removed one, newest first, to re-apply on its base.
  absl::InlinedVector<uint32_t, 16> above;
  uint32_t prototype = current;
  while (prototype != kEmptyPrototype && records_[prototype].name != name.value()) {
    above.push_back(prototype);
    prototype = records_[prototype].base;
  }
  if (prototype == kEmptyPrototype) {
    return absl::NotFoundError(absl::StrCat(
        "RemoveInstance: ", entity.DebugString(), " has no component named ",
        name.DebugString()));
  }
  uint32_t rebuilt = records_[prototype].base;
  for (size_t i = above.size(); i-- > 0;) {
    const Record r = records_[above[i]];  // copy: FindOrAddChild may grow records_
    rebuilt = FindOrAddChild(rebuilt, r.manager, r.name);
  }
  SetPrototype(SlotAt(entity.index()), entity.index(), current, entity.generation(),
               rebuilt);
  return absl::OkStatus();
}

bool EntityIndex::RemoveEntitySlow(Entity entity) {
  const uint32_t prototype = FindPrototype(entity);
  if (prototype == kEmptyPrototype) return false;
  SetPrototype(SlotAt(entity.index()), entity.index(), prototype, entity.generation(),
               kEmptyPrototype);
  return true;
}

size_t EntityIndex::RemoveEntity(absl::Span<const Entity> entities) {
  size_t removed = 0;
  for (const Entity entity : entities) removed += RemoveEntity(entity) ? 1 : 0;
  return removed;
}

size_t EntityIndex::CollectGarbage() {
  size_t dropped = 0;
  for (uint32_t i = 1; i < records_.size(); ++i) {
    uint32_t prototype = i;
    // Dropping a leaf may leave its base unused: follow the chain down.
    while (prototype != kEmptyPrototype && records_[prototype].manager != nullptr &&
           info_[prototype].entity_refs == 0 && info_[prototype].child_refs == 0) {
      const uint32_t base = records_[prototype].base;
      registry_.erase(prototype);
      records_[prototype] = Record{0, 0, nullptr};
      info_[prototype] = RecordInfo{0, 0, 0};
      free_records_.push_back(prototype);
      ++dropped;
      if (base != kEmptyPrototype) --info_[base].child_refs;
      prototype = base;
    }
  }
  // A freed record may be reused for another chain: forget every cached lookup.
  if (dropped != 0) std::fill(lookups_.begin(), lookups_.end(), LookupEntry{0, 0});
  return dropped;
}

size_t EntityIndex::RemoveManager(const ComponentManager* manager) {
  if (manager == nullptr) return 0;
  // `prototype`'s chain without the entries of `manager` (`prototype` itself if it has
  // none), rebuilt from P0 reusing existing prototypes, as RemoveInstance does.
  auto without = [&](uint32_t prototype) {
    absl::InlinedVector<uint32_t, 16> kept;  // newest first
    bool names = false;
    for (uint32_t p = prototype; p != kEmptyPrototype; p = records_[p].base) {
      if (records_[p].manager == manager) {
        names = true;
      } else {
        kept.push_back(p);
      }
    }
    if (!names) return prototype;
    uint32_t rebuilt = kEmptyPrototype;
    for (size_t i = kept.size(); i-- > 0;) {
      const Record r = records_[kept[i]];  // copy: FindOrAddChild may grow records_
      rebuilt = FindOrAddChild(rebuilt, r.manager, r.name);
    }
    return rebuilt;
  };
  absl::flat_hash_map<uint32_t, uint32_t> moves;  // prototype -> without(prototype)
  size_t changed = 0;
  for (size_t page = 0; page < pages_.size(); ++page) {
    if (pages_[page] == nullptr) continue;
    for (uint32_t k = 0; k < kPageSize; ++k) {
      PackedSlot& packed = pages_[page][k];
      if (packed.prototype == kEmptyPrototype) continue;
      const uint32_t index = static_cast<uint32_t>(page << kPageBits) | k;
      const Slot slot = Unpack(packed, index);
      auto [it, inserted] = moves.try_emplace(slot.prototype, kEmptyPrototype);
      if (inserted) it->second = without(slot.prototype);
      if (it->second == slot.prototype) continue;
      SetPrototype(packed, index, slot.prototype, slot.generation, it->second);
      ++changed;
    }
  }
  // No entity uses a prototype naming `manager` now, nor does any prototype based on
  // one: garbage collection drops them all.
  CollectGarbage();
  return changed;
}

EntityIndex::PrototypeHandle EntityIndex::PrototypeOf(Entity entity) const {
  return FindPrototype(entity);
}

uint32_t EntityIndex::PrototypeId(PrototypeHandle prototype) const {
  if (prototype >= records_.size() || records_[prototype].manager == nullptr) return 0;
  return info_[prototype].id;
}

std::vector<EntityIndex::ComponentEntry> EntityIndex::Components(Entity entity) const {
  std::vector<ComponentEntry> result;
  for (uint32_t p = FindPrototype(entity); p != kEmptyPrototype; p = records_[p].base) {
    result.push_back(
        ComponentEntry{IdString32::FromValue(records_[p].name), records_[p].manager});
  }
  std::reverse(result.begin(), result.end());  // the walk yields newest first
  return result;
}

size_t EntityIndex::RegistryMemoryUsage() const {
  return records_.capacity() * sizeof(Record) + info_.capacity() * sizeof(RecordInfo) +
         transitions_.capacity() * sizeof(uint32_t) +
         lookups_.capacity() * sizeof(LookupEntry) +
         free_records_.capacity() * sizeof(uint32_t) +
         index_internal::SwissTableBytes(registry_.capacity(), sizeof(uint32_t),
                                         alignof(uint32_t));
}

size_t EntityIndex::MemoryUsage() const {
  using WideEntry = std::pair<const uint32_t, Slot>;
  return pages_.capacity() * sizeof(pages_[0]) +
         num_pages_ * kPageSize * sizeof(PackedSlot) +
         index_internal::SwissTableBytes(wide_slots_.capacity(), sizeof(WideEntry),
                                         alignof(WideEntry)) +
         RegistryMemoryUsage();
}

}  // namespace strata
