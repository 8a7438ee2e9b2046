// EntityPages: scheme 2 of "Efficient Entity Page Iteration": entities in pages of 32
// slots, one 32-bit presence mask per (component type, page), and a slot layer that
// lets Compact() regroup entities so that those with the same components fill whole
// pages.
//
// Every entity in the store occupies one slot; slot s is bit s % 32 of page s / 32. A
// dense generation table (by entity index) validates handles. Until a Compact moves
// something, an entity's slot is its index and no slot table exists, so a store never
// compacted has the seed's layout and cost (page = index / 32); after it, a dense
// table maps the entity index to its slot and each entity page maps its slots back to
// entities (one extra dependent load per lookup). For every registered component
// type the store keeps the masks of all pages in one contiguous array
// (component-as-row), so a filter ANDs a few words per page, or, with the Highway
// kernel in iteration/filter.h, 8 (AVX2) or 16 (AVX-512) pages per instruction.
// Component data lives in 32-element pages allocated when the first slot of the page
// gets the component; pages whose masks dropped to zero are released by
// ReleaseEmptyPages(). A type's data pages sit in one reserved address range, page p
// at a fixed offset (iteration/internal/page_range.h), so an element's address is
// computed from its slot like a flat array's; pages past the range (a very large
// component in a very large world) come from pools of huge-page-backed slabs
// (iteration/internal/page_pool.h).
//
// Add and Remove set or clear a mask bit in place (no data moves). Compact(budget)
// moves entities between slots, with their data, until entities with the same
// component set fill contiguous whole pages, sorted by that set's signature; it
// stops after `budget` moves and resumes on the next call, so a game can spend a
// bounded slice of each frame on it. A compaction never changes which entities a
// query visits or their values, only the order of the walk.
//
//   EntityManager manager;
//   EntityPages pages(manager);   // deletes an entity's components when it is destroyed
//   Component<Position> pos = *pages.RegisterComponent<Position>("Position");
//   Component<Velocity> vel = *pages.RegisterComponent<Velocity>("Velocity");
//   ComponentBundle moving;
//   moving.Set(pos, Position{0, 0, 0}).Set(vel, Velocity{1, 0, 0});
//   std::vector<Entity> batch(1000);
//   manager.CreateBatch(absl::MakeSpan(batch));
//   STRATA_RETURN_IF_ERROR(pages.CreateFromBundle(batch, moving));
//   if (Position* p = pages.TryGet(batch[0], pos)) p->x += 1;
//   STRATA_RETURN_IF_ERROR(pages.Remove(batch[0], vel));
//   pages.Compact(/*budget=*/4096);  // once per frame, outside any walk
//   pages.ReleaseEmptyPages();       // once per frame: frees pages nobody uses any more
//
// Invalidation (as std::vector documents it):
// - Compact() (any call that returns > 0) invalidates every pointer into component
//   data (TryGet, page_data, the references a ForEachMatch callback received), every
//   slot number (SlotOf) and every page number. It does not invalidate Entity
//   handles, ComponentIds, Filters, or anything that names an entity by handle or
//   index (PageComponentManager instances), and it never changes a value.
// - Growth of the page capacity (Add, CreateFromBundle or Compact reaching a slot
//   past page_capacity()) invalidates page_masks()/occupied_masks() pointers.
// - Remove/Delete invalidate pointers to the removed entity's components only; Add
//   and Remove never move other entities' data.
// epoch() changes whenever slots may have moved or mask arrays been reallocated. The
// walks in iteration/filter.h hold a WalkScope, under which every call that could
// change it aborts (see WalkScope).
//
// Component types are plain bytes: registered with a size and an alignment and copied
// with memcpy. The typed helpers accept only trivially copyable, trivially destructible
// types; an empty type (a tag such as Frozen) takes no data storage.
//
// Thread-safety: none for mutation (Compact included). Const methods, TryGet and the
// filters in iteration/filter.h may run concurrently with each other while nothing
// mutates.
#ifndef STRATA_ITERATION_ENTITY_PAGES_H_
#define STRATA_ITERATION_ENTITY_PAGES_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <new>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/base/attributes.h"
#include "absl/base/config.h"
#include "absl/base/optimization.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "base/check.h"
#include "base/huge_page_allocator.h"
#include "entity/entity.h"
#include "entity/entity_manager.h"
#include "iteration/components.h"
#include "iteration/internal/compactor.h"
#include "iteration/internal/entity_pages_types.h"
#include "iteration/internal/page_pool.h"

namespace strata {

// StructureListener: told after entities gain or lose components in an EntityPages
// store, in batches: one call per single Add or Remove, one per span Add or Remove
// (the entities that took the change, also when a later one failed), one per
// component of a CreateFromBundle. Not told of Delete / DeleteEntities (an entity
// leaving the store whole: its destruction is the entity manager's event) nor of
// Compact (no entity's set changes). The entity index of a World hears of page
// components through this (component/instance_indexer.h). A listener may read the
// store but must not change it.
//
// Two more calls, for observers (iteration/component_events.h):
// - OnRemoving: before entities lose `c`, while TryGet still reads their values, for
//   every path that removes: Remove (single and span: the entities that will lose it),
//   Delete, and DeleteEntities (a destroy; one call per component type of the batch).
//   Made only while wants_removing() is true, so a listener with no use for the values
//   costs the store nothing.
// - OnSet: after a set path wrote the values of `entities`' `c` (EntityPages::NotifySet:
//   a command buffer's Set, a property set); in-place writes are not reported.
class StructureListener {
 public:
  virtual ~StructureListener() = default;
  virtual void OnAdded(ComponentId c, absl::Span<const Entity> entities) = 0;
  virtual void OnRemoved(ComponentId c, absl::Span<const Entity> entities) = 0;
  virtual void OnRemoving(ComponentId, absl::Span<const Entity>) {}
  virtual void OnSet(ComponentId, absl::Span<const Entity>) {}
  bool wants_removing() const { return wants_removing_; }

 protected:
  void set_wants_removing(bool wants) { wants_removing_ = wants; }

 private:
  bool wants_removing_ = false;
};

class EntityPages {
 public:
  // LargeVector: a std::vector whose large buffers are huge-page backed. resize(n)
  // without a value leaves the new elements unwritten (resize(n, value) writes them).
  template <typename T>
  using LargeVector = std::vector<T, UninitializedHugePageAllocator<T>>;
  // kMaxComponentTypes: registered types per store. A type costs one mask word and one
  // pointer per page of capacity, plus one step in Delete and per compaction move.
  static constexpr size_t kMaxComponentTypes = 256;
  static_assert((kMaxComponentTypes & (kMaxComponentTypes - 1)) == 0,
                "Add and Remove read the type entry of the id modulo kMaxComponentTypes");
  // kUnbounded: Compact's default budget, finish the compaction in this call.
  static constexpr size_t kUnbounded = std::numeric_limits<size_t>::max();

  // EntityPages: a store for entities of `manager`, which must outlive it. Registers a
  // destroy listener on `manager` that deletes destroyed entities' components
  // (DeleteEntities); the destructor removes it.
  explicit EntityPages(EntityManager& manager);
  ~EntityPages();
  EntityPages(const EntityPages&) = delete;
  EntityPages& operator=(const EntityPages&) = delete;

  // RegisterComponent: a new component type of `size` bytes aligned to `alignment`
  // (a power of two, at most 4096; size 0 is a tag with no storage). InvalidArgument
  // for a bad size/alignment or an empty name, AlreadyExists for a taken name,
  // ResourceExhausted past kMaxComponentTypes. O(page capacity). Inside a compaction
  // pass it ends the pass's trades; the next Compact plans a new pass.
  absl::StatusOr<ComponentId> RegisterComponent(absl::string_view name, size_t size,
                                                size_t alignment);
  template <typename T>
  absl::StatusOr<Component<T>> RegisterComponent(absl::string_view name) {
    static_assert(std::is_trivially_copyable_v<T> && std::is_trivially_destructible_v<T>,
                  "component data is copied with memcpy and never destroyed");
    absl::StatusOr<ComponentId> id =
        RegisterComponent(name, std::is_empty_v<T> ? 0 : sizeof(T), alignof(T));
    if (!id.ok()) return id.status();
    return Component<T>{*id};
  }
  // FindComponent: the id registered under `name`, or NotFound. O(1).
  absl::StatusOr<ComponentId> FindComponent(absl::string_view name) const;

  size_t num_component_types() const { return types_.size(); }
  // component_size, component_name: of a registered `c` (aborts with a message
  // otherwise, in every build mode, as every accessor below that takes an id).
  size_t component_size(ComponentId c) const { return RegisteredType(c).size; }
  absl::string_view component_name(ComponentId c) const { return RegisteredType(c).name; }

  // Add: gives live entity `e` component `c`, initialised from `value` (component_size
  // bytes) or zero-filled if `value` is null. An entity new to the store takes a slot
  // (its index's slot if free); the entity page and the component's data page are
  // allocated on first use. NotFound if `e` is not alive in the manager,
  // InvalidArgument for an unregistered `c`, AlreadyExists if `e` has `c` (nothing
  // changes). O(1) amortised. Moves no data; invalidates no pointers except when the
  // page capacity grows (see page_masks()).
  // In a loop of single calls, keep the Component in a local, not in a member of an
  // object whose address escapes: the compiler must assume the call on the rare path
  // changes such a member and reloads it every time (about 5 % of an Add/Remove pair
  // at 1M). The batch forms below are faster still (about 1.7x per pair at 1M).
  ABSL_ATTRIBUTE_ALWAYS_INLINE absl::Status Add(Entity e, ComponentId c, const void* value);
  // The typed form also returns InvalidArgument if `c` was registered with a size
  // other than T's (a Component<T> made from another type's id).
  template <typename T>
  ABSL_ATTRIBUTE_ALWAYS_INLINE absl::Status Add(Entity e, Component<T> c, const T& value);

  // Remove: takes component `c` away from `e`. NotFound if `e` is stale or lacks `c`.
  // The data page stays until ReleaseEmptyPages(); an entity left with no component
  // leaves the store and frees its slot. O(1). Pointers to `e`'s `c` become
  // dangling-by-contract (the element may be reused by the next Add).
  ABSL_ATTRIBUTE_ALWAYS_INLINE absl::Status Remove(Entity e, ComponentId c);
  template <typename T>
  ABSL_ATTRIBUTE_ALWAYS_INLINE absl::Status Remove(Entity e, Component<T> c) {
    return Remove(e, c.id);
  }

  // Add, Remove (batch): the single call for each entity of `entities` in order (one
  // value for all), with the store's tables read once rather than per entity. Errors
  // as a loop of the single calls that stops at the first failure: that entity's
  // error, its position in the span in the message ("entity 7 of the batch: ..."); the
  // entities before it keep the change, it and those after are untouched (an entity
  // listed twice fails the second time). OK for an empty span. Cost and invalidation
  // as the single calls.
  template <typename T>
  absl::Status Add(absl::Span<const Entity> entities, Component<T> c, const T& value);
  absl::Status Add(absl::Span<const Entity> entities, ComponentId c, const void* value);
  // done: when not null, set to how many entities, from the first, lost `c` (all of
  // them on OK), so a caller can skip the failing one and go on.
  absl::Status Remove(absl::Span<const Entity> entities, ComponentId c, size_t* done = nullptr);
  template <typename T>
  absl::Status Remove(absl::Span<const Entity> entities, Component<T> c) {
    return Remove(entities, c.id);
  }

  // AddEach: the batch Add with a value per entity: entities[i] takes the
  // component_size(c) bytes at values[i * component_size(c)] (native layout; empty
  // for a tag). InvalidArgument, nothing changed, if values holds another number of
  // bytes or `c` is not registered; otherwise errors and cost as the batch Add. done:
  // as for the batch Remove, how many entities from the first took `c`.
  absl::Status AddEach(absl::Span<const Entity> entities, ComponentId c,
                       absl::Span<const std::byte> values, size_t* done = nullptr);
  // The typed form copies whole T values (sizeof(T) known to the compiler).
  template <typename T>
  absl::Status AddEach(absl::Span<const Entity> entities, Component<T> c,
                       absl::Span<const T> values, size_t* done = nullptr);

  // Delete: removes every component of `e` and frees its slot. NotFound if `e` has
  // none or is stale. O(registered types) (the article's scheme 2 delete), early exit
  // after the last one.
  absl::Status Delete(Entity e);
  // DeleteEntities: Delete for each entity of the batch that is in the store, skipping
  // the others (so it can take the manager's destroy batches, where most entities may
  // have no components here). Returns how many were deleted.
  size_t DeleteEntities(absl::Span<const Entity> entities);

  // CreateFromBundle: gives every entity of `entities` exactly the bundle's
  // components and values. All or nothing: NotFound if one is not alive,
  // AlreadyExists if one already has components here or appears twice,
  // InvalidArgument if the bundle names an unregistered type or a wrong size.
  // O(entities * bundle size).
  absl::Status CreateFromBundle(absl::Span<const Entity> entities,
                                   const ComponentBundle& bundle);

  // set_structure_listener: the listener told of every Add and Remove (nullptr: none,
  // the default; a store with none pays one predicted branch per call). Not owned; it
  // must outlive the store or be unset first.
  void set_structure_listener(StructureListener* listener) {
    listener_ = listener;
    UpdateInlineLimit();
  }
  StructureListener* structure_listener() const { return listener_; }
  // NotifySet: tells the listener that a set path wrote `entities`' `c` values (see
  // StructureListener::OnSet). No-op without a listener.
  void NotifySet(ComponentId c, absl::Span<const Entity> entities) {
    if (listener_ != nullptr && !entities.empty()) listener_->OnSet(c, entities);
  }

  // WalkScope: marks a walk of the store (ForEachMatch and its forms open one; a job
  // system that walks pages by itself opens its own) for as long as it lives. While any
  // is open, a structural change aborts at the call with a message, in every build
  // mode: Add, Remove, AddEach, Delete, CreateFromBundle, RegisterComponent, Compact,
  // ReserveForCompaction, ReleaseEmptyPages, ReleaseUnusedMemory, and destroying any
  // entity of the store's manager (its destroy listener). Record such changes in a
  // CommandBuffer (iteration/command_buffer.h) and play it back after the walk. Reads
  // and in-place writes through TryGet are fine. Scopes nest and may be opened from
  // several threads at once (atomic counts: four read-modify-writes per walk).
  class WalkScope {
   public:
    explicit WalkScope(const EntityPages& pages) : pages_(&pages) {
      __atomic_fetch_add(&pages_->walks_, 1, __ATOMIC_RELAXED);
      __atomic_fetch_sub(&pages_->inline_limit_, kWalkUnit, __ATOMIC_RELAXED);
    }
    ~WalkScope() {
      __atomic_fetch_add(&pages_->inline_limit_, kWalkUnit, __ATOMIC_RELAXED);
      __atomic_fetch_sub(&pages_->walks_, 1, __ATOMIC_RELAXED);
    }
    WalkScope(const WalkScope&) = delete;
    WalkScope& operator=(const WalkScope&) = delete;

   private:
    const EntityPages* pages_;
  };
  // walking: true while a WalkScope is open.
  bool walking() const { return __atomic_load_n(&walks_, __ATOMIC_RELAXED) != 0; }

  // Change detection (opt-in per type). TrackChanges(c) starts keeping, for every slot
  // of `c`, the store tick of its last write and of its add (every entity that has `c`
  // then counts as added and written now). Writes that count: every add (Add, the span
  // forms, AddEach, CreateFromBundle, so a spawn and a command buffer's playback), a
  // command's Set, a property set, MarkChanged (after a write through a mutable
  // TryGet, which is not seen by itself: a mark there would slow every random access),
  // and a walk whose callback takes `T&` (or a non-const `T*` for an Optional): it marks
  // every slot it visits, written or not, as Unity's chunk versions do. A walk taking
  // `const T&` marks nothing; a generic callback (auto&) counts as writing. Compact moves
  // the history with the entities. Cost: 8 bytes per slot and 12 per page of the type;
  // a walk pays two stores per page it writes.
  // ChangedMask / AddedMask: the slots of `page` whose `c` (present) was written /
  // added after tick `since`: exact for any `since` up to kMaxTickAge ticks back (older
  // ones are clamped to that); kNeverRan: every present slot. Filter::Changed and
  // Filter::Added (iteration/filter.h) select with them.
  absl::Status TrackChanges(ComponentId c);
  bool tracks_changes(ComponentId c) const {
    return c < num_types_ && tracked_[c] != nullptr;
  }
  // tick: the store's clock, starting at 1; AdvanceTick: one step (a frame, or a
  // system's run: a system keeps the tick it last ran at). It never reads 0.
  uint32_t tick() const { return tick_; }
  void AdvanceTick(uint32_t steps = 1);
  static constexpr uint32_t kNeverRan = 0;
  static constexpr uint32_t kMaxTickAge = iteration_internal::ChangeTicks::kMaxAge;
  uint32_t ChangedMask(ComponentId c, size_t page, uint32_t since) const;
  uint32_t AddedMask(ComponentId c, size_t page, uint32_t since) const;
  // Changed / Added: one entity's (false if stale, without `c`, or `c` untracked).
  bool Changed(Entity e, ComponentId c, uint32_t since) const;
  bool Added(Entity e, ComponentId c, uint32_t since) const;
  // MarkChanged: `e`'s `c` counts as written now (for writes the store cannot see).
  void MarkChanged(Entity e, ComponentId c);
  // change_ticks / ClampedSince: what a walk reads to select changed slots itself
  // (iteration/filter.h): the type's history (null if untracked), and `since` clamped
  // to the oldest tick kept.
  const iteration_internal::ChangeTicks* change_ticks(ComponentId c) const {
    return c < num_types_ ? tracked_[c] : nullptr;
  }
  uint32_t ClampedSince(uint32_t since) const {
    const uint32_t oldest = tick_ - kMaxTickAge;
    return iteration_internal::ChangeTicks::After(oldest, since) ? oldest : since;
  }
  // MarkWalked: what a walk calls for a component it hands out writable: slots `bits`
  // of `page` written now. Const, as walks hold the store; walks on disjoint pages
  // mark disjoint words.
  ABSL_ATTRIBUTE_ALWAYS_INLINE void MarkWalked(ComponentId c, size_t page, uint32_t bits) const {
    if (ABSL_PREDICT_FALSE(tracked_[c] != nullptr)) tracked_[c]->MarkWritten(page, bits, tick_);
  }

  // Contains: true if `e` is current and has at least one component. O(1).
  bool Contains(Entity e) const { return SlotOf(e) != kNoSlot; }
  // Has: true if current entity `e` has component `c`. O(1).
  bool Has(Entity e, ComponentId c) const { return TryGet(e, c) != nullptr; }

  // TryGet: `e`'s component `c`, or nullptr if `e` is stale or lacks it. O(1): the
  // generation table (once compacted, the slot table, whose entries hold the
  // generation beside the slot), then the page. No
  // allocation. The pointer stays valid until `e` loses `c` (Remove, Delete, destroy)
  // or the next Compact() that moves anything; other entities' Add/Remove/Delete do
  // not move it. For tags it points at shared, stateless storage.
  // The typed form aborts with a message, in every build mode, if `c` is registered
  // with a size other than T's (a Component<T> made from another type's id, or another
  // store's): the pointer would address T-sized elements in a page of other elements.
  const void* TryGet(Entity e, ComponentId c) const { return TryGetSized<kUntypedSize>(e, c); }
  // A write through the mutable forms is not seen by change detection: call
  // MarkChanged after it (marking inside TryGet cost a random access 1.6x).
  void* TryGet(Entity e, ComponentId c) {
    return const_cast<void*>(static_cast<const EntityPages*>(this)->TryGet(e, c));
  }
  template <typename T>
  T* TryGet(Entity e, Component<T> c) {
    return const_cast<T*>(static_cast<const EntityPages*>(this)->TryGet(e, c));
  }
  template <typename T>
  const T* TryGet(Entity e, Component<T> c) const {
    return static_cast<const T*>(TryGetSized < std::is_empty_v<T> ? 0 : sizeof(T) > (e, c.id));
  }
  // TryGetMany: out[i] = TryGet(entities[i], c) for every i, for a caller that reads
  // many handles at once: the lines of the lookups some steps ahead are prefetched
  // (their index entries, then their masks and elements), so that their cache misses
  // overlap instead of each waiting in turn. Aborts with a message, in every build
  // mode, if the spans' sizes differ (and, typed, as TryGet). O(entities), no
  // allocation; the pointers are TryGet's (a write through them is not seen by change
  // detection: MarkChanged).
  template <typename T>
  void TryGetMany(absl::Span<const Entity> entities, Component<T> c,
                  absl::Span<const T*> out) const {
    STRATA_CHECK(out.size() == entities.size(),
                 "EntityPages::TryGetMany: `out` and `entities` differ in size");
    TryGetManySized<std::is_empty_v<T> ? 0 : sizeof(T)>(
        entities, c.id, [p = out.data()](size_t i, const void* element) {
          p[i] = static_cast<const T*>(element);
        });
  }
  template <typename T>
  void TryGetMany(absl::Span<const Entity> entities, Component<T> c, absl::Span<T*> out) {
    STRATA_CHECK(out.size() == entities.size(),
                 "EntityPages::TryGetMany: `out` and `entities` differ in size");
    TryGetManySized<std::is_empty_v<T> ? 0 : sizeof(T)>(
        entities, c.id, [p = out.data()](size_t i, const void* element) {
          p[i] = static_cast<T*>(const_cast<void*>(element));
        });
  }
  void TryGetMany(absl::Span<const Entity> entities, ComponentId c,
                  absl::Span<const void*> out) const {
    STRATA_CHECK(out.size() == entities.size(),
                 "EntityPages::TryGetMany: `out` and `entities` differ in size");
    TryGetManySized<kUntypedSize>(
        entities, c, [p = out.data()](size_t i, const void* element) { p[i] = element; });
  }
  // TryGetByIndex: the component `c` of the entity in the store whose index is
  // `entity_index`, whatever its generation, or nullptr. O(1). For callers that name
  // entities by index and validated the handle earlier (PageComponentManager's
  // instances); resolving through the slot table keeps them valid across Compact().
  void* TryGetByIndex(uint32_t entity_index, ComponentId c) const;

  // SlotOf: `e`'s slot (page SlotOf(e) / 32, bit SlotOf(e) % 32), or kNoSlot if `e` is
  // stale or not in the store. O(1). Valid until `e` leaves the store or the next
  // Compact() that moves anything.
  uint32_t SlotOf(Entity e) const {
    if (!indirect_) return InStore(e) ? e.index() : kNoSlot;
    // One line: the entry's generation is gen_of_'s.
    if (e.index() >= gen_size_ || e.generation() == Entity::kInvalidGeneration) {
      return kNoSlot;
    }
    const SlotEntry entry = slot_of_[e.index()];
    return entry.generation == e.generation() ? entry.slot : kNoSlot;
  }
  // compacted: true once a Compact moved an entity: slots are no longer the entity
  // indices, and every slot lookup reads the slot table. Back to false when the store
  // empties (ReleaseEmptyPages with no entity left).
  bool compacted() const { return indirect_; }

  // Compact: moves entities between slots, each with all its component data, so that
  // entities with the same component set occupy contiguous whole pages (one set's
  // pages after another's, sorted by the set's signature), then releases the pages
  // emptied (ReleaseEmptyPages). At most `budget` entity moves per call (a swap of two
  // entities counts two); the next call resumes the same pass. The first call of a
  // pass plans it: O(pages * component sets per page * registered types + entities
  // that cannot trade places), and only if the store changed since the last pass
  // finished; each move is O(registered types + the entity's component bytes). An
  // entity added or changed during a pass may be moved or left where it is; the next
  // pass places it. Returns the number of moves made (0 when budget is 0 or the store
  // is compact: a pass that finds nothing left to move plans the next one in the
  // same call).
  // Invalidates: see "Invalidation" at the top. Never call it inside a walk
  // (ForEachMatch, ParallelForEachMatch): the walk aborts with a message.
  size_t Compact(size_t budget = kUnbounded);
  // compaction_in_progress: true while a planned pass has moves left.
  bool compaction_in_progress() const { return compactor_.in_progress(); }
  // ReserveForCompaction: opt-in. The slot table's memory (8 bytes per entity index,
  // at least `entities`, growing with the store) is allocated and written now, so no
  // Compact pays page faults for it; the store holds it, compacting or not, until
  // ReleaseUnusedMemory() on an empty store ends the opt-in. InvalidArgument past the
  // entity index range. O(indices): call it at load time. Invalidates nothing.
  absl::Status ReserveForCompaction(size_t entities = 0);
  bool compaction_reserved() const { return reserve_slot_table_; }

  // ReleaseEmptyPages: the dirty-page pass. For each page where Remove/Delete/
  // Compact emptied a mask or a slot since the last call, frees each component data
  // page whose mask is zero, and the entity page if none of its slots is occupied.
  // O(dirty pages * registered types). Returns the number of pages (data + entity)
  // freed. Freed memory stays with the store, not the system (see
  // ReleaseUnusedMemory). A data page taken again has the same address (it is
  // computed from the page); pool pages (entity pages, data pages past a type's
  // range) go back in the reverse of the order they were dirtied, so pages taken again
  // in that order get the same blocks (a component removed and re-added every frame
  // stays where it was).
  size_t ReleaseEmptyPages();
  // ReleaseUnusedMemory: gives every pool slab and every 64 KiB granule of a type's
  // range with no page in use back to the system and returns the bytes released (call
  // after ReleaseEmptyPages, e.g. on a level unload); on an empty store, also the
  // memory of ReserveForCompaction, which ends it. O(free pages * log slabs +
  // granules touched).
  size_t ReleaseUnusedMemory();
  size_t num_dirty_pages() const { return dirty_pages_.size(); }
  // num_entities: entities in the store (with at least one component). O(1).
  size_t num_entities() const { return num_entities_; }

  // ---- Read access for filters (iteration/filter.h). ----

  // page_capacity: the length of every mask array, a multiple of kPageCapacityQuantum
  // pages; pages past the highest slot in use have zero masks. Grows (never shrinks)
  // when a slot past it is taken, which reallocates all mask arrays.
  static constexpr size_t kPageCapacityQuantum = 64;
  size_t page_capacity() const { return page_capacity_; }
  // page_masks: component `c`'s presence masks, one per page, page_capacity() long.
  // Invalidated when the capacity grows.
  const uint32_t* page_masks(ComponentId c) const { return RegisteredType(c).masks.data(); }
  // occupied_masks: per page, the slots holding an entity.
  const uint32_t* occupied_masks() const { return occupied_.data(); }
  // page_data: component `c`'s 32-element array for `page` (element i is slot
  // page*32+i), or nullptr if not allocated. Tags return shared stateless storage.
  // Requires `c` registered and page < page_capacity(), unchecked: the walks call it
  // per page, after checking their components once.
  std::byte* page_data(ComponentId c, size_t page) const { return types_[c].data[page]; }
  // entity_at: the entity in slot `i` of `page`. Requires that slot to be occupied.
  // In the identity layout it comes from the index itself and the generation table
  // (4 bytes per slot read, where the entity page's record is 8).
  Entity entity_at(size_t page, uint32_t i) const {
    if (!indirect_) {
      const size_t index = page * kEntityPageSize + i;
      return Entity(static_cast<uint32_t>(index), gen_of_[index]);
    }
    return Entity::FromBits(entity_pages_[page]->entity[i]);
  }
  // page_entity_bits / page_generations: entity_at's sources for a whole page, resolved
  // once so that a walk handing out entities reads one word per slot: once compacted
  // (compacted()), the page's records (Entity::bits() per slot); in the identity
  // layout, the generations of indices page*32 .. page*32+31. Requires that layout and
  // an allocated page.
  const uint64_t* page_entity_bits(size_t page) const { return entity_pages_[page]->entity; }
  const uint32_t* page_generations(size_t page) const {
    return gen_of_.data() + page * kEntityPageSize;
  }
  // data_page_range: pages [first, second) hold every allocated data page of `c`
  // (a superset of the pages where `c`'s mask is non-zero); the walks filter only
  // the intersection of their includes' ranges. {0, 0} when none.
  std::pair<uint32_t, uint32_t> data_page_range(ComponentId c) const {
    const ComponentType& t = RegisteredType(c);
    return {t.first_page, t.end_page};
  }
  // epoch: changes whenever a Compact moved entities or the mask arrays were
  // reallocated, i.e. whenever pointers from before may be invalid.
  uint64_t epoch() const { return epoch_; }

  // allocated_data_pages / allocated_entity_pages / page_bytes: the pages in use now;
  // all three return to zero once every entity is gone and ReleaseEmptyPages() ran.
  size_t allocated_data_pages() const { return allocated_data_pages_; }
  size_t allocated_entity_pages() const { return allocated_entity_pages_; }
  size_t page_bytes() const { return page_bytes_; }
  // reserved_page_bytes: the bytes the page pools hold, pages in use or free; zero
  // after ReleaseEmptyPages() and ReleaseUnusedMemory() with every entity gone.
  size_t reserved_page_bytes() const;
  // MemoryUsage: reserved_page_bytes() plus the tables (masks, pointers, slot table,
  // free slots, a compaction plan in progress).
  size_t MemoryUsage() const;

 private:
  // The compaction pass (iteration/internal/compactor.h), a friend so that it can work
  // on the store's own tables: it writes the slot records (entity_pages_, count_,
  // occupied_, slot_of_) and the types' masks and data (types_); it reads gen_of_,
  // dirty_, hot_, num_types_, num_entities_, page_capacity_ and indirect_; it calls the
  // page and slot methods (EnsureEntityPage, EnsureDataPage, FreeDataPage, MarkDirty,
  // PushFreeSlot, FindFreeSlotFrom, MakeIndirect, ReleaseEmptyPages); it bumps epoch_
  // after moves and clears layout_changed_ when it plans a pass. Nothing else of the
  // store is its business.
  friend class iteration_internal::Compactor;
  // The types of the private state (iteration/internal/entity_pages_types.h).
  using EntityPage = iteration_internal::EntityPage;
  using ComponentType = iteration_internal::ComponentType;
  using HotType = iteration_internal::HotType;
  using IndexTables = iteration_internal::IndexTables;
  using SlotEntry = iteration_internal::SlotEntry;

  // Copies a value of `size` bytes, or zero-fills if `value` is null. Out of line:
  // inlined into a caller that passes a smaller object, GCC's -Warray-bounds flags the
  // switch's wider (unreachable) copies. The typed Add copies inline instead.
  static void WriteValue(std::byte* dst, const void* value, uint32_t size);
  // kUntypedSize: AddWith's value size when the value has the registered size by
  // contract (the untyped Add); a typed Add passes sizeof(T), checked against it.
  static constexpr uint32_t kUntypedSize = 0xFFFFFFFFu;
  // The inline fast path of Add: `e` already in the store (which implies alive: the
  // destroy listener deletes destroyed entities), `c` registered with kValueSize bytes
  // (unless kUntypedSize), its data page present (some bit of the page's mask set),
  // component absent; `write(dst, size)` stores the value. Everything else, errors
  // included, goes to AddSlow, one call on a path of its own.
  // NOTE: GCC still reloads the store's fields (tables, sizes, the type entry) on
  // every call of a loop of Adds: the call on the slow path may change them, and it
  // does not move those loads onto that path. Keeping the fast path short is what is
  // left (see docs/notes/iteration.md, "The hot paths").
  template <uint32_t kValueSize, typename Writer>
  ABSL_ATTRIBUTE_ALWAYS_INLINE absl::Status AddWith(Entity e, ComponentId c, Writer write);
  // Add's and Remove's out-of-line paths: every case but the common one, with every
  // check (`value_size`: see kUntypedSize). AddSlow gives `e` component `c` and
  // returns the element for the caller to write.
  // They take the handle's fields apart, so that the inline caller loads them as two
  // words instead of one it then splits.
  ABSL_ATTRIBUTE_NOINLINE absl::StatusOr<std::byte*> AddSlow(uint32_t index,
                                                             uint32_t generation,
                                                             ComponentId c,
                                                             uint32_t value_size);
  ABSL_ATTRIBUTE_NOINLINE absl::Status RemoveSlow(uint32_t index, uint32_t generation,
                                                  ComponentId c);
  // The entity of the last AddSlow, for the inline Add's NotifyAdded after it wrote the
  // value (so the caller keeps no handle live across the call).
  Entity slow_added_;
  // What Remove does after clearing the bit of `slot` (of entity `index`) when its
  // page's mask or its count dropped to zero: marks the page dirty, frees the slot.
  ABSL_ATTRIBUTE_NOINLINE void RemoveEmptied(uint32_t index, uint32_t slot);
  // The batch Add's loop (entity_pages_inl.h); BatchError: `status` of entity `position`
  // of the span.
  template <uint32_t kValueSize, typename Writer>
  absl::Status AddBatchWith(absl::Span<const Entity> entities, ComponentId c, Writer write,
                            size_t* done = nullptr);
  ABSL_ATTRIBUTE_NOINLINE static absl::Status BatchError(const absl::Status& status,
                                                         size_t position);
  ABSL_ATTRIBUTE_NOINLINE static absl::Status ValueCountError(size_t entities, size_t values);
  // The listener's calls for one entity, out of line so that the inline paths keep
  // `e` in registers. NotifyAdded also marks the add of a tracked type.
  ABSL_ATTRIBUTE_NOINLINE void NotifyAdded(ComponentId c, Entity e);
  ABSL_ATTRIBUTE_NOINLINE void NotifyRemoved(ComponentId c, Entity e);
  // NotifyRemoving: OnRemoving for one entity, when the listener wants it.
  ABSL_ATTRIBUTE_NOINLINE void NotifyRemoving(ComponentId c, Entity e);
  bool WantsRemoving() const { return listener_ != nullptr && listener_->wants_removing(); }
  // RemovingPrefix: the entities, from the first, that a span Remove will remove (each
  // has `c`, none listed twice); NotifyRemovingEntities: OnRemoving for every
  // component type `entities` (a destroy batch) have, one call per type.
  size_t RemovingPrefix(absl::Span<const Entity> entities, ComponentId c) const;
  void NotifyRemovingEntities(absl::Span<const Entity> entities);
  // CheckNotWalking: aborts, naming `what`, while a WalkScope is open. The inline Add
  // and Remove need no call: an open walk sends them out of line (inline_limit_), where
  // they call it.
  ABSL_ATTRIBUTE_ALWAYS_INLINE void CheckNotWalking(const char* what) const {
    // A plain load, not an atomic one: GCC keeps atomic loads in place, which would
    // stop a batch's loop from hoisting its table loads. It races only with a walk on
    // another thread, which a mutation may not overlap anyway (see Thread-safety).
    if (ABSL_PREDICT_FALSE(walks_ != 0)) WalkViolation(what);
  }
  [[noreturn]] ABSL_ATTRIBUTE_NOINLINE void WalkViolation(const char* what) const;
  // The batch Remove's loop; *done: how many entities, from the first, lost `c`.
  absl::Status RemoveBatch(absl::Span<const Entity> entities, ComponentId c, size_t* done);
  absl::Status CreateFromBundleChecked(absl::Span<const Entity> entities,
                                          const ComponentBundle& bundle);
  // TryGet with elements of kSize bytes (kUntypedSize: the registered size); a typed
  // call checks the registered size (an instruction per call, and the element's
  // address then needs no multiply).
  template <uint32_t kSize>
  ABSL_ATTRIBUTE_ALWAYS_INLINE const void* TryGetSized(Entity e, ComponentId c) const;
  // TryGetMany's loop: out(i, TryGetSized<kSize>(entities[i], c)) for every i, with
  // prefetches ahead.
  template <uint32_t kSize, typename Out>
  void TryGetManySized(absl::Span<const Entity> entities, ComponentId c, Out out) const;
  // TryGet's path for a slot whose page is not below Hot(c).direct_pages: the element
  // through the data-page pointer, or nullptr if `c` is not registered or the slot
  // lacks it. Requires a slot below the page capacity. Inline on a branch of its own:
  // a call inside a loop of TryGet would make the loop save its registers around it.
  ABSL_ATTRIBUTE_ALWAYS_INLINE const void* TryGetPastRange(ComponentId c, uint32_t slot) const;
  absl::Status NotFoundError(Entity e, ComponentId c) const;
  // The entry of a registered `c`, checked (the public accessors' ids come from
  // callers).
  const ComponentType& RegisteredType(ComponentId c) const {
    STRATA_CHECK(c < num_types_, "EntityPages: component id not registered in this store");
    return types_[c];
  }
  const HotType& Hot(ComponentId c) const {
    return hot_[c < kMaxComponentTypes ? c : kMaxComponentTypes];
  }
  HotType& Hot(ComponentId c) { return hot_[c < kMaxComponentTypes ? c : kMaxComponentTypes]; }
  // The entry Add and Remove read: `c`'s if its id field is `c` (see HotType).
  const HotType& HotById(ComponentId c) const { return hot_[c & (kMaxComponentTypes - 1)]; }
  // InStore: `e` is the entity of its index in the store (which implies alive: the
  // destroy listener deletes destroyed entities). The invalid generation marks an index
  // not in the store; a handle carrying it must not pass for one. An entity in the
  // store has a slot below page_capacity_, so the hot paths need no page check.
  ABSL_ATTRIBUTE_ALWAYS_INLINE bool InStore(Entity e) const {
    return e.index() < gen_size_ && gen_of_[e.index()] == e.generation() &&
           e.generation() != Entity::kInvalidGeneration;
  }
  // InlineAddRemove: InStore, and nothing needs the out-of-line path (see
  // inline_limit_): the same instructions as InStore.
  ABSL_ATTRIBUTE_ALWAYS_INLINE bool InlineAddRemove(Entity e) const {
    return static_cast<int64_t>(e.index()) < inline_limit_ &&
           gen_of_[e.index()] == e.generation() &&
           e.generation() != Entity::kInvalidGeneration;
  }
  // The slot of entity index `index` (in the store: gen_of_ says so). Identity until
  // the first compaction, so a store never compacted reads no slot table.
  ABSL_ATTRIBUTE_ALWAYS_INLINE uint32_t SlotOfIndex(uint32_t index) const {
    return indirect_ ? slot_of_[index].slot : index;
  }
  IndexTables index_tables() const {
    return {gen_of_.data(), gen_size_, slot_of_.data(), indirect_};
  }
  // SetIndexEntry: entity `index` of `generation` is in the store at `slot`.
  void SetIndexEntry(uint32_t index, uint32_t generation, uint32_t slot) {
    gen_of_[index] = generation;
    if (indirect_) slot_of_[index] = SlotEntry{slot, generation};
  }
  // CreateFromBundle of a never-compacted store: slots are the indices, so the
  // batch is cut into runs by index page up front and validated, claimed and written
  // in one pass per run.
  absl::Status CreateFromBundleIdentity(absl::Span<const Entity> entities,
                                           const ComponentBundle& bundle);
  // Gives the elements `bits[0, n)` of data page `page` (whose mask bits are
  // `run_flags`) every component of `bundle` with its initial value.
  void WriteBundleRun(uint32_t page, const ComponentBundle& bundle, uint32_t run_flags,
                         const uint8_t* bits, size_t n);
  // Switches to the slot table (slot_of_), which starts as the identity with the
  // generations of gen_of_.
  void MakeIndirect();
  // Grows `table` to `size` entries, written (the new ones not in the store).
  static void GrowSlotEntries(LargeVector<SlotEntry>& table, size_t size);
  // Writes table[i] = {i, gen[i]} for i in [begin, end) (gen null: not in the store).
  static void WriteSlotEntries(SlotEntry* table, const uint32_t* gen, size_t begin,
                               size_t end);
  void ShrinkDataPageRanges();
  // GrowTo: a capacity past `page` (NextCapacity: doubling, in kPageCapacityQuantum
  // steps); GrowToCapacity: every per-page table to `capacity` pages in one step.
  void GrowTo(size_t page);
  static size_t NextCapacity(size_t capacity, size_t page);
  void GrowToCapacity(size_t capacity);
  void GrowSlotTable(size_t entities);
  EntityPage* EnsureEntityPage(uint32_t page);
  std::byte* EnsureDataPage(ComponentType& type, uint32_t page);
  // EnsureDataPage for a registered type's page below its direct_pages: the page's
  // data is then at HotById(c).base + page * 32 * size, as before the call (Add's
  // fast path calls it for the first element of a page and goes on).
  void EnsureDirectDataPage(ComponentId c, uint32_t page);
  void FreeDataPage(ComponentType& type, uint32_t page);
  void MarkDirty(uint32_t page);
  // Slots: AllocateSlot takes a free slot for entity index `index` (its own if free,
  // else a freed one, else the first free one from a scan) and marks it occupied;
  // FreeSlot gives `slot` back and takes `index` out of the slot table.
  uint32_t AllocateSlot(uint32_t index);
  uint32_t FindFreeSlotFrom(uint32_t first_slot);
  void PushFreeSlot(uint32_t slot);
  void FreeSlot(uint32_t index, uint32_t slot);
  void DeleteSlot(uint32_t slot);

  // Reads as an empty manager (no entity alive) once the manager has been destroyed.
  EntityManager::Subscription manager_;
  // The upstream of every page pool below (declared first: it must outlive them): all
  // types' pages share its huge-page slabs in kChunkBytes chunks, so the store holds at
  // most one partly used 2 MiB slab, not one per type. Pages larger than a chunk (a
  // component over kChunkBytes / 32 bytes) get slabs of their own.
  // NOTE: chunks are aligned to kMaxComponentAlignment, so every type can use them.
  static constexpr size_t kChunkBytes = size_t{16} << 10;
  static constexpr size_t kMaxComponentAlignment = 4096;
  iteration_internal::PagePool chunk_pool_{kChunkBytes, kMaxComponentAlignment};
  std::vector<ComponentType> types_;
  // types_.size(), kept apart so the hot paths' range check is a compare, not a
  // division by sizeof(ComponentType).
  uint32_t num_types_ = 0;
  absl::flat_hash_map<std::string, ComponentId> type_by_name_;
  size_t page_capacity_ = 0;
  std::vector<uint32_t> occupied_;          // page_capacity_ long
  std::vector<EntityPage*> entity_pages_;   // page_capacity_ long; null = released
  LargeVector<uint16_t> count_;  // per slot: components of its entity (0 = free)
  std::vector<uint8_t> dirty_;   // per page: listed in dirty_pages_
  iteration_internal::PagePool entity_page_pool_{sizeof(EntityPage), alignof(EntityPage),
                                                 &chunk_pool_};
  std::vector<uint32_t> dirty_pages_;
  // The slot layer. gen_of_: entity index -> generation of the entity in the store,
  // Entity::kInvalidGeneration if none. slot_of_: entity index -> slot and a copy of
  // the generation (SlotEntry), used only when indirect_ (after a compaction moved
  // something); before, every entity sits at the slot equal to its index and slot_of_
  // is empty. While indirect_, every write of gen_of_[i] writes slot_of_[i].generation
  // too (SetIndexEntry, FreeSlot), so either answers who is in the store; the slot of
  // an index not in the store is stale.
  // NOTE: the per-index and per-slot tables are huge-page backed at scale: a random
  // lookup at 1M entities then misses the cache but not the TLB.
  LargeVector<uint32_t> gen_of_;
  LargeVector<SlotEntry> slot_of_;
  // gen_of_.size(), kept apart so the hot paths' range check is one load; a size_t,
  // which their uint32_t mask stores cannot alias, so a loop keeps it in a register.
  size_t gen_size_ = 0;
  bool indirect_ = false;
  // Slots freed away from their own index (after a compaction), for entities whose own
  // slot is taken; in_free_list_ (a bit per slot) keeps each slot listed once. Entries
  // are checked when popped (the slot may have been taken since).
  std::vector<uint32_t> free_slots_;
  std::vector<uint64_t> in_free_list_;
  uint32_t scan_page_ = 0;  // where FindFreeSlotFrom's fallback scan resumes
  size_t num_entities_ = 0;
  uint64_t epoch_ = 0;
  StructureListener* listener_ = nullptr;
  // walks_: open WalkScopes (mutable: a walk takes the store as const), changed with
  // atomic read-modify-writes (walks may run on several threads at once).
  mutable uint32_t walks_ = 0;
  // inline_limit_: the single-entity Add and Remove take their inline path only for an
  // entity index below it. It folds every reason to go out of line into the range
  // check those paths make anyway, so they test nothing else: it is gen_size_ when
  // nothing needs the out-of-line path, 0 with a listener or a tracked type (the out-of-
  // line path tells and marks them), and every open WalkScope subtracts kWalkUnit (the
  // out-of-line path aborts). Read with a plain load, for the reason CheckNotWalking
  // gave before it: an atomic load kept a loop of Adds from hoisting its table loads.
  static constexpr int64_t kWalkUnit = int64_t{1} << 40;
  mutable int64_t inline_limit_ = 0;
  // Recomputes inline_limit_ after gen_size_, the listener or the tracked set changed.
  void UpdateInlineLimit();
  // Compaction: the pass in progress and its state (the Compactor runs Compact), and
  // whether anything changed since the last pass was planned (set by the mutations,
  // cleared by the Compactor when it plans one).
  iteration_internal::Compactor compactor_{*this};
  bool layout_changed_ = false;
  // ReserveForCompaction: the slot table, written as the identity, for gen_of_.size()
  // indices at least, until a compaction takes it as slot_of_ (and back when the store
  // empties).
  bool reserve_slot_table_ = false;
  LargeVector<SlotEntry> slot_reserve_;
  size_t allocated_data_pages_ = 0;
  size_t allocated_entity_pages_ = 0;
  size_t page_bytes_ = 0;
  // kMaxComponentTypes + 1 entries (see HotType); unregistered ids read as empty. In
  // the object, so the hot paths find an entry without loading a table pointer.
  HotType hot_[kMaxComponentTypes + 1];
  // tracked_[c]: types_[c].ticks, or null (untracked, or no such type).
  iteration_internal::ChangeTicks* tracked_[kMaxComponentTypes + 1] = {};
  uint32_t tick_ = 1;
  void MarkAddedEntities(absl::Span<const Entity> entities, ComponentId c);
  // SwapChangeTicks: a compaction's swaps (pairs (a, b), or xs[k] with ys[k]) for the
  // histories of every tracked type.
  void SwapChangeTicks(const uint32_t* pairs, size_t n);
  void SwapChangeTicks(const uint32_t* xs, const uint32_t* ys, size_t n);
};

}  // namespace strata

// The hot paths' inline definitions.
#include "iteration/internal/entity_pages_inl.h"  // IWYU pragma: export

#endif  // STRATA_ITERATION_ENTITY_PAGES_H_
