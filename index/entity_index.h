// EntityIndex: finds the component manager that holds an entity's component by the
// component's name, storing one shared prototype chain per component sequence instead of
// one lookup array per entity ("Rebuilding the Entity Index": "Building a Prototype chain").
//
// An entity starts at the empty prototype P0. Registering (manager, name) moves it to the
// prototype P' = {base: P, manager, name}, identified by
//   id(P') = mix(id(P), mix(hash(&manager), name))
// and shared by every entity that registered the same sequence, so the 75 compositions of
// a level need a few hundred 16-byte records, whatever the number of entities.
//
//   EntityIndex index;
//   absl::Status s = index.AddInstance(e, &transforms, IdString32("Transform"));
//   s = index.AddInstance(e, &render_data_1, IdString32("Fog"));
//   ComponentManager* m = index.FindComponentManager(e, IdString32("Fog"));  // &render_data_1
//   Instance fog = m->Lookup(e, IdString32("Fog"));   // the InstanceId is the name
//   EntityManager::Subscription listening = entity_manager.AddDestroyListener(
//       [&index](absl::Span<const Entity> dead) { index.RemoveEntity(dead); });
//
// Layout (docs/notes/index.md says why):
//  * entity -> prototype: a paged array indexed by Entity::index(), 4 bytes per slot
//    {generation, prototype} of 16 bits each (a value that does not fit is kept whole
//    in a side table); pages of 1024 slots are allocated on first use.
//  * prototype records: a dense array of 16-byte {base, name, manager} walked by lookups
//    that miss the lookup cache, by registrations that add a prototype, and by GC
//    (base is a record index, so walking the chain is array indexing, no hashing), plus
//    cold {id, entity_refs, child_refs}.
//  * a lookup cache (prototype, name) -> the record of that name in the chain, so a
//    lookup does not walk the chain (cleared by CollectGarbage, which reuses records).
//  * the registry: a hash set of record indices keyed by the full {base, manager, name}
//    triple and hashed by the prototype id, so two prototypes whose 32-bit ids collide
//    are told apart by comparing the stored triple, never confused.
//
// Invalidation: PrototypeHandles stay valid until CollectGarbage() drops them (only
// prototypes no entity and no other prototype uses). Thread-safety: none.
//
// Lifetimes: the index stores the ComponentManager pointers it is given, not owned, and
// FindComponentManager and Components return them. A manager must outlive its entries:
// before destroying a manager the index still names, call RemoveManager(manager) (or
// remove every entity using it, then CollectGarbage()); otherwise those calls return a
// dangling pointer.
// Not copyable or movable (the registry's hasher points back at the records).
#ifndef STRATA_INDEX_ENTITY_INDEX_H_
#define STRATA_INDEX_ENTITY_INDEX_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "absl/base/attributes.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/types/span.h"
#include "base/id_string.h"
#include "entity/entity.h"
#include "index/component_manager.h"

namespace strata {

class EntityIndex {
 public:
  // PrototypeHandle: a prototype's record in this index; 0 is the empty prototype P0.
  using PrototypeHandle = uint32_t;
  static constexpr PrototypeHandle kEmptyPrototype = 0;

  // MixFunction: combines two 32-bit hashes; must be deterministic.
  using MixFunction = uint32_t (*)(uint32_t a, uint32_t b);

  // ComponentEntry: one registered component of an entity.
  struct ComponentEntry {
    IdString32 name;
    ComponentManager* manager;
    friend bool operator==(const ComponentEntry& a, const ComponentEntry& b) {
      return a.name == b.name && a.manager == b.manager;
    }
  };

  EntityIndex() : EntityIndex(nullptr) {}
  // EntityIndex(mix): test hook. Uses `mix` instead of Mix() for prototype ids, e.g. a
  // constant function to force every prototype id to collide. nullptr means Mix().
  explicit EntityIndex(MixFunction mix);
  EntityIndex(const EntityIndex&) = delete;
  EntityIndex& operator=(const EntityIndex&) = delete;
  ~EntityIndex();

  // AddInstance: records that `entity`'s component `name` lives in `manager`,
  // moving the entity to the child prototype {its prototype, manager, name}.
  // O(depth of the entity's chain) for the duplicate check, plus one registry probe.
  // InvalidArgument for an invalid entity or a null manager; AlreadyExists if the entity
  // already has a component `name` (in any manager); FailedPrecondition if `entity` is
  // stale (its slot holds a newer generation). A newer generation replaces an older one
  // left in its slot (destroyed without RemoveEntity). On error nothing changes.
  ABSL_ATTRIBUTE_ALWAYS_INLINE absl::Status AddInstance(Entity entity,
                                                             ComponentManager* manager,
                                                             IdString32 name) {
    // The common case inline (forced: GCC kept it out of line, and the call's register
    // saves were a fifth of its samples): the slot's page exists, the slot is free or
    // holds this generation in 16 bits, and the transition is cached. Everything else
    // (errors, new pages, wide slots, registry probes, new prototypes) takes the call.
    const uint32_t page = entity.index() >> kPageBits;
    if (entity.is_valid() && manager != nullptr && page < pages_.size() &&
        pages_[page] != nullptr) [[likely]] {
      PackedSlot& slot = pages_[page][entity.index() & (kPageSize - 1)];
      const uint32_t base = slot.prototype;
      if (base == kEmptyPrototype ||
          (base != kWideSlot && slot.generation == entity.generation())) {
        const uint32_t child = transitions_[TransitionSlot(base, manager, name.value())];
        const Record& r = records_[child];
        if (r.manager == manager && r.base == base && r.name == name.value() &&
            child < kWideSlot && entity.generation() <= 0xFFFFu) [[likely]] {
          // An existing child: its chain has no duplicate name, so no check is needed.
          if (base != kEmptyPrototype) {
            --info_[base].entity_refs;
          } else {
            ++num_entities_;
          }
          ++info_[child].entity_refs;
          slot = PackedSlot{static_cast<uint16_t>(entity.generation()),
                            static_cast<uint16_t>(child)};
          return absl::OkStatus();
        }
      }
    }
    return AddInstanceSlow(entity, manager, name);
  }

  // AddInstance(entities, ...): the batch form, same result as adding to each
  // entity in order, all or nothing: a batch naming a newer generation of a slot before
  // an older one is FailedPrecondition (the older is stale by then), naming the same
  // entity twice AlreadyExists; then every slot is as before. Costs one hash and one
  // registry probe per distinct prototype among the entities (resource spawns have
  // one), plus O(entities).
  absl::Status AddInstance(absl::Span<const Entity> entities,
                                 ComponentManager* manager, IdString32 name);

  // FindComponentManager: the manager holding `entity`'s component `name`, or nullptr
  // (unknown or stale entity, no such name). O(1) when the (prototype, name) pair is in
  // the 16 KiB lookup cache (a multiply and two loads), else O(chain depth) and the
  // answer is cached. Writes that cache (a mutable member), so even concurrent const
  // calls must not race.
  ComponentManager* FindComponentManager(Entity entity, IdString32 name) const {
    const uint32_t prototype = FindPrototype(entity);
    if (prototype == kEmptyPrototype) return nullptr;
    // Two dependent loads (the cached entry, then the record it names) instead of one
    // per hop of the chain: a lookup walks half of an 11-deep chain on average.
    const LookupEntry cached = lookups_[LookupSlot(prototype, name.value())];
    const Record& r = records_[cached.record];
    if (cached.prototype == prototype && r.name == name.value()) [[likely]] {
      return r.manager;
    }
    return FindComponentManagerSlow(prototype, name.value());
  }

  // RemoveInstance: removes `name` from `entity`: the entity moves to the chain
  // without that entry, rebuilt from its base, reusing existing prototypes.
  // NotFound if the entity or the name is unknown.
  absl::Status RemoveInstance(Entity entity, IdString32 name);

  // RemoveEntity: forgets `entity`; false if it was not registered (or is stale). O(1).
  // Its prototypes stay until CollectGarbage().
  bool RemoveEntity(Entity entity) {
    // The common case inline: a packed slot of this generation (one per destroyed
    // entity, after its destroy handlers' lookups brought the slot into L1).
    const uint32_t page = entity.index() >> kPageBits;
    if (page < pages_.size() && pages_[page] != nullptr) [[likely]] {
      PackedSlot& slot = pages_[page][entity.index() & (kPageSize - 1)];
      if (slot.prototype != kEmptyPrototype && slot.prototype != kWideSlot &&
          slot.generation == entity.generation()) [[likely]] {
        --info_[slot.prototype].entity_refs;
        --num_entities_;
        slot = PackedSlot{0, 0};
        return true;
      }
    }
    return RemoveEntitySlow(entity);
  }
  // RemoveEntity(entities): the batch form (fits EntityManager::DestroyListener);
  // returns how many were removed. Unknown and stale entities are skipped.
  size_t RemoveEntity(absl::Span<const Entity> entities);

  // CollectGarbage: drops every prototype that no entity uses and no other prototype
  // is based on; returns how many. O(prototypes). Invalidates their handles only.
  size_t CollectGarbage();

  // RemoveManager: forgets `manager`, for a manager about to be destroyed (the index
  // keeps ComponentManager pointers, not owned: see Lifetimes above). Every entity
  // loses its entries of `manager` (it moves to its chain without them, as by
  // RemoveInstance; one left with none is no longer indexed), then CollectGarbage()
  // runs, so no prototype names `manager` afterwards. Returns how many entities
  // changed; 0 for null or a manager the index does not name. O(entity slots +
  // prototypes).
  size_t RemoveManager(const ComponentManager* manager);

  // Contains: true if `entity` has at least one registered component.
  bool Contains(Entity entity) const { return FindPrototype(entity) != kEmptyPrototype; }
  // PrototypeOf: `entity`'s prototype, kEmptyPrototype if it has none.
  PrototypeHandle PrototypeOf(Entity entity) const;
  // PrototypeId: the 32-bit mix id of a live prototype (0 for P0). Ids of distinct
  // prototypes may collide; handles never do.
  uint32_t PrototypeId(PrototypeHandle prototype) const;
  // Components: `entity`'s components in registration order (empty if unknown). O(depth).
  std::vector<ComponentEntry> Components(Entity entity) const;

  // num_entities: entities with at least one component.
  size_t num_entities() const { return num_entities_; }
  // num_prototypes: live prototypes, not counting P0.
  size_t num_prototypes() const { return registry_.size(); }
  // registry_probes: registry hash lookups made so far (for tests and benchmarks);
  // registrations that hit the small transition cache do not probe.
  uint64_t registry_probes() const { return registry_probes_; }

  // MemoryUsage: bytes allocated by the index (entity pages, prototype records and the
  // registry), from container capacities. O(1).
  size_t MemoryUsage() const;
  // RegistryMemoryUsage: the prototype part of MemoryUsage() (records + registry).
  size_t RegistryMemoryUsage() const;

  // Mix: the default hash combiner, a 64-bit finaliser (MurmurHash3 fmix64) over the
  // concatenated pair; not commutative.
  static uint32_t Mix(uint32_t a, uint32_t b);
  // HashManager: the hash of a manager's address (stable within one process only, so
  // prototype ids are never stored).
  static uint32_t HashManager(const ComponentManager* manager);

 private:
  // NOTE: a record is 16 bytes so four share a cache line; the chain walk touches only
  // these. `manager` is nullptr for P0 and for free records.
  struct Record {
    uint32_t base;
    uint32_t name;
    ComponentManager* manager;
  };
  static_assert(sizeof(Record) == 16, "prototype record is 16 bytes");
  struct RecordInfo {
    uint32_t id;
    uint32_t entity_refs;
    uint32_t child_refs;
  };
  // NOTE: an entity slot is 4 bytes: the generation and the prototype, 16 bits each.
  // Prototype 0 marks an unused slot (its generation is then meaningless). A value that
  // does not fit (generation > 0xFFFF, or prototype >= kWideSlot) is stored whole in
  // wide_slots_ and the slot's prototype reads kWideSlot. Both are rare: a slot reaches
  // generation 65536 only after 65536 reuses (EntityManager reuses an index only after
  // at least 1024 others were freed), and a level has a few hundred prototypes. So a
  // slot costs 4 bytes, not 8, and a stale handle is still rejected on its full 32-bit
  // generation.
  struct PackedSlot {
    uint16_t generation;
    uint16_t prototype;
  };
  static_assert(sizeof(PackedSlot) == 4, "entity slot is 4 bytes");
  static constexpr uint16_t kWideSlot = 0xFFFF;
  // A slot's full value (decoded from a PackedSlot, or from wide_slots_).
  struct Slot {
    uint32_t generation;
    uint32_t prototype;
  };
  static constexpr uint32_t kPageBits = 10;
  // NOTE: 4096 cached transitions (16 KiB) in 2048 sets of two, most recent first, for
  // a few hundred live prototypes' edges. Direct-mapped with 1024 entries, edges that
  // shared an entry evicted each other and ~1 registration in 12 fell through to a
  // registry probe (FindChildInRegistry + ChildId: 8 % of the benchmark's samples at
  // N = 640k); with 4096 direct-mapped entries still 1 in 26.
  static constexpr uint32_t kTransitionBits = 12;
  static constexpr uint32_t kPageSize = 1u << kPageBits;

  // The lookup key of a child prototype, with its precomputed id.
  struct Key {
    uint32_t base;
    uint32_t name;
    ComponentManager* manager;
    uint32_t id;
  };
  struct KeyHash {
    using is_transparent = void;
    const EntityIndex* index;
    size_t operator()(uint32_t record) const { return index->info_[record].id; }
    size_t operator()(const Key& key) const { return key.id; }
  };
  struct KeyEq {
    using is_transparent = void;
    const EntityIndex* index;
    bool operator()(uint32_t a, uint32_t b) const { return a == b; }
    bool operator()(uint32_t record, const Key& key) const {
      const Record& r = index->records_[record];
      return r.base == key.base && r.name == key.name && r.manager == key.manager;
    }
    bool operator()(const Key& key, uint32_t record) const { return (*this)(record, key); }
  };

  // NOTE: a lookup cache entry is 4 bytes: {prototype, record}, 16 bits each, meaning
  // "`record` is the entry of prototype's chain named records_[record].name". Names are
  // unique within a chain, so comparing the prototype and the record's name verifies an
  // entry. {0, 0} never matches (a lookup's prototype is never P0). Prototypes or
  // records at or above 0xFFFF are not cached. Entries go stale only when a record is
  // freed or reused, which only CollectGarbage() does, so it clears the cache.
  struct LookupEntry {
    uint16_t prototype;
    uint16_t record;
  };
  static_assert(sizeof(LookupEntry) == 4, "lookup cache entry is 4 bytes");
  // NOTE: 4096 entries (16 KiB), direct-mapped, for the (prototype, name) pairs that
  // are looked up: the benchmark's 75 compositions have ~450.
  static constexpr uint32_t kLookupBits = 12;
  static uint32_t LookupSlot(uint32_t prototype, uint32_t name) {
    // Names are XXH32 values, already well mixed; the prototype is spread by a
    // Fibonacci multiply. The top bits of the xor index the cache.
    return (name ^ (prototype * 0x9E3779B9u)) >> (32 - kLookupBits);
  }
  // FindComponentManager's cache miss: walks the chain and caches what it finds.
  ComponentManager* FindComponentManagerSlow(uint32_t prototype, uint32_t name) const;

  // The prototype of `entity`, kEmptyPrototype if it has none or is stale.
  uint32_t FindPrototype(Entity entity) const {
    const uint32_t page = entity.index() >> kPageBits;
    if (page >= pages_.size() || pages_[page] == nullptr) return kEmptyPrototype;
    const PackedSlot slot = pages_[page][entity.index() & (kPageSize - 1)];
    if (slot.prototype == kWideSlot) [[unlikely]] {
      const Slot wide = WideSlot(entity.index());
      return wide.generation == entity.generation() ? wide.prototype : kEmptyPrototype;
    }
    // A free slot has prototype 0 = kEmptyPrototype, whatever its generation.
    return slot.generation == entity.generation() ? slot.prototype : kEmptyPrototype;
  }
  // The full value of the slot `index`, whose PackedSlot reads kWideSlot.
  Slot WideSlot(uint32_t index) const;
  Slot Unpack(PackedSlot slot, uint32_t index) const {
    if (slot.prototype == kWideSlot) [[unlikely]] return WideSlot(index);
    return Slot{slot.generation, slot.prototype};
  }
  // The value of the slot `index` ({0, 0} if its page was never allocated).
  Slot LoadSlot(uint32_t index) const {
    const uint32_t page = index >> kPageBits;
    if (page >= pages_.size() || pages_[page] == nullptr) return Slot{0, 0};
    return Unpack(pages_[page][index & (kPageSize - 1)], index);
  }
  // The slot of `index`, allocating its page.
  PackedSlot& SlotAt(uint32_t index) {
    const uint32_t page = index >> kPageBits;
    if (page < pages_.size() && pages_[page] != nullptr) {
      return pages_[page][index & (kPageSize - 1)];
    }
    return SlotAtNewPage(index);
  }
  PackedSlot& SlotAtNewPage(uint32_t index);
  // Checks `entity` may register into its slot, whose value is `slot`; returns its
  // current prototype in *base (kEmptyPrototype if the slot is free or holds an older
  // generation).
  absl::Status CheckSlot(Entity entity, Slot slot, uint32_t* base) const;
  // RemoveEntity's general case (wide slots; unknown, stale or absent entities).
  bool RemoveEntitySlow(Entity entity);
  // AddInstance's general case.
  absl::Status AddInstanceSlow(Entity entity, ComponentManager* manager,
                                     IdString32 name);
  // True if the chain from `prototype` contains `name`.
  bool ChainHas(uint32_t prototype, uint32_t name) const;
  uint32_t ChildId(uint32_t base, const ComponentManager* manager, uint32_t name) const;
  // The first entry of the transition cache set of (base, manager, name).
  static uint32_t TransitionSlot(uint32_t base, const ComponentManager* manager,
                                 uint32_t name) {
    // Fibonacci hashing of base and of (manager, name) separately, xored: the part
    // that depends on `base`, the previous registration's result, is one multiply
    // (each registration of an entity waits for the one before it to write the slot).
    const uint32_t key =
        (name ^ static_cast<uint32_t>(reinterpret_cast<uintptr_t>(manager) >> 4) *
                    0x85EBCA77u) *
        0xC2B2AE3Du;
    return (((base * 0x9E3779B1u) ^ key) >> (33 - kTransitionBits)) << 1;
  }
  // True if `record` is the prototype {base, manager, name}. records_[0] has a null
  // manager, so an empty cache entry never matches.
  bool IsChild(uint32_t record, uint32_t base, const ComponentManager* manager,
               uint32_t name) const {
    const Record& r = records_[record];
    return r.manager == manager && r.base == base && r.name == name;
  }
  // Puts `child` first in the transition cache set `set`, demoting the first entry.
  static void CacheTransition(uint32_t* set, uint32_t child) {
    set[1] = set[0];
    set[0] = child;
  }
  // The prototype {base, manager, name}, or kEmptyPrototype if it does not exist.
  // Tries the transition cache, then the registry.
  uint32_t FindChild(uint32_t base, ComponentManager* manager, uint32_t name) {
    uint32_t* set = &transitions_[TransitionSlot(base, manager, name)];
    if (IsChild(set[0], base, manager, name)) return set[0];
    if (IsChild(set[1], base, manager, name)) {
      std::swap(set[0], set[1]);  // most recent first
      return set[0];
    }
    return FindChildInRegistry(base, manager, name, set);
  }
  // The registry probe of FindChild; caches what it finds in the transition set `set`.
  uint32_t FindChildInRegistry(uint32_t base, ComponentManager* manager, uint32_t name,
                               uint32_t* set);
  // Adds the prototype {base, manager, name}, which must not exist.
  uint32_t AddChild(uint32_t base, ComponentManager* manager, uint32_t name);
  uint32_t FindOrAddChild(uint32_t base, ComponentManager* manager, uint32_t name) {
    const uint32_t child = FindChild(base, manager, name);
    return child != kEmptyPrototype ? child : AddChild(base, manager, name);
  }
  // Points the slot `index` (`packed`, which held `old_prototype`) at {generation,
  // prototype}, keeping refcounts, num_entities_ and wide_slots_.
  void SetPrototype(PackedSlot& packed, uint32_t index, uint32_t old_prototype,
                    uint32_t generation, uint32_t prototype);

  MixFunction mix_;
  std::vector<std::unique_ptr<PackedSlot[]>> pages_;
  // The slots whose value does not fit a PackedSlot, by entity index.
  absl::flat_hash_map<uint32_t, Slot> wide_slots_;
  size_t num_pages_ = 0;
  size_t num_entities_ = 0;
  std::vector<Record> records_;
  std::vector<RecordInfo> info_;
  std::vector<uint32_t> free_records_;
  absl::flat_hash_set<uint32_t, KeyHash, KeyEq> registry_;
  // Two-way cache of recent transitions base -> child. An entry is trusted only
  // if the record it names still is {base, manager, name}, so it never needs
  // invalidating (records are never shrunk, only reused).
  std::vector<uint32_t> transitions_;
  // Cache of FindComponentManager's answers, see LookupEntry.
  mutable std::vector<LookupEntry> lookups_;
  uint64_t registry_probes_ = 0;
};

}  // namespace strata

#endif  // STRATA_INDEX_ENTITY_INDEX_H_
