// EntityPages: scheme 2 of "Efficient Entity Page Iteration": entities grouped in pages
// of 32 by entity index, one 32-bit presence mask per (component type, page).
//
// Entity `e` lives in page e.index() / 32 at bit e.index() % 32. For every registered
// component type the store keeps the masks of all pages in one contiguous array
// (component-as-row), so a filter ANDs a few words per page, or, with the Highway kernel
// in iteration/filter.h, 8 (AVX2) or 16 (AVX-512) pages per instruction. Component data
// lives in 32-element pages allocated when the first entity of the page gets the
// component; pages whose masks dropped to zero are released by ReleaseEmptyPages(), the
// article's dirty-page handling. Pages come from per-type pools of huge-page-backed
// slabs (iteration/internal/page_pool.h): the pages of a batch sit together in memory,
// and a released page is reused by the next one of its type without a malloc;
// ReleaseUnusedMemory() hands fully free slabs back to the system.
//
//   EntityManager manager;
//   EntityPages pages(manager);   // deletes an entity's components when it is destroyed
//   Component<Position> pos = *pages.RegisterComponent<Position>("Position");
//   Component<Velocity> vel = *pages.RegisterComponent<Velocity>("Velocity");
//   Archetype moving;
//   moving.Set(pos, Position{0, 0, 0}).Set(vel, Velocity{1, 0, 0});
//   std::vector<Entity> batch(1000);
//   manager.CreateBatch(absl::MakeSpan(batch));
//   STRATA_RETURN_IF_ERROR(pages.CreateFromArchetype(batch, moving));
//   if (Position* p = pages.TryGet(batch[0], pos)) p->x += 1;
//   STRATA_RETURN_IF_ERROR(pages.Remove(batch[0], vel));
//   pages.ReleaseEmptyPages();    // once per frame: frees pages nobody uses any more
//
// Component types are plain bytes: registered with a size and an alignment and copied
// with memcpy. The typed helpers accept only trivially copyable, trivially destructible
// types; an empty type (a tag such as Frozen) takes no data storage.
//
// Thread-safety: none for mutation. Const methods, TryGet and the filters in
// iteration/filter.h may run concurrently with each other while nothing mutates.
#ifndef STRATA_ITERATION_ENTITY_PAGES_H_
#define STRATA_ITERATION_ENTITY_PAGES_H_

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/base/attributes.h"
#include "absl/base/config.h"
#include "absl/base/optimization.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "entity/entity.h"
#include "entity/entity_manager.h"
#include "iteration/internal/page_pool.h"

namespace strata {

// NOTE: a page is 32 entities so that one page's presence for one component is one
// uint32_t and the walk over it is tzcnt/blsr on a 32-bit register.
inline constexpr uint32_t kEntityPageSize = 32;
inline constexpr uint32_t kEntityPageShift = 5;

// ComponentId: a registered component type, an index into the store's type table.
using ComponentId = uint32_t;

// Component<T>: a ComponentId that remembers its C++ type, for the typed helpers.
template <typename T>
struct Component {
  ComponentId id = 0;
};

// Archetype: a set of components with initial values, for CreateFromArchetype. Values
// are copied in, so the archetype can be reused and outlives nothing.
class Archetype {
 public:
  // Set: adds `value` for `component` (or replaces an earlier value). O(components).
  template <typename T>
  Archetype& Set(Component<T> component, const T& value) {
    static_assert(std::is_trivially_copyable_v<T> && std::is_trivially_destructible_v<T>);
    if constexpr (std::is_empty_v<T>) {
      return SetRaw(component.id, {});
    } else {
      return SetRaw(component.id,
                    absl::MakeConstSpan(reinterpret_cast<const std::byte*>(&value),
                                        sizeof(T)));
    }
  }
  // SetRaw: the untyped form; `bytes.size()` must equal the registered size, which
  // CreateFromArchetype checks.
  Archetype& SetRaw(ComponentId component, absl::Span<const std::byte> bytes);

  size_t size() const { return entries_.size(); }
  bool empty() const { return entries_.empty(); }

 private:
  friend class EntityPages;
  struct Entry {
    ComponentId id;
    uint32_t offset;
    uint32_t size;
  };
  std::vector<Entry> entries_;
  std::vector<std::byte> bytes_;
};

class EntityPages {
 public:
  // kMaxComponentTypes: registered types per store. A type costs one mask word and one
  // pointer per page of capacity, plus one step in Delete; nothing else scales with it.
  static constexpr size_t kMaxComponentTypes = 256;

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
  // ResourceExhausted past kMaxComponentTypes. O(page capacity).
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
  size_t component_size(ComponentId c) const { return types_[c].size; }
  absl::string_view component_name(ComponentId c) const { return types_[c].name; }

  // Add: gives live entity `e` component `c`, initialised from `value` (component_size
  // bytes) or zero-filled if `value` is null. Allocates the entity page and the
  // component's data page on first use. NotFound if `e` is not alive in the manager,
  // InvalidArgument for an unregistered `c`, AlreadyExists if `e` has `c` (nothing
  // changes). O(1) amortised. Invalidates no pointers except when the page capacity
  // grows (see page_masks()).
  ABSL_ATTRIBUTE_ALWAYS_INLINE absl::Status Add(Entity e, ComponentId c, const void* value) {
    return AddWith(e, c, value, [&](std::byte* dst, uint32_t size) {
      WriteValue(dst, value, size);
    });
  }
  template <typename T>
  ABSL_ATTRIBUTE_ALWAYS_INLINE absl::Status Add(Entity e, Component<T> c, const T& value) {
    if constexpr (std::is_empty_v<T>) {
      // A tag has no bytes (sizeof of an empty type is 1, its registered size 0).
      return AddWith(e, c.id, nullptr, [](std::byte*, uint32_t) {});
    } else {
      // A fixed-size copy: the compiler turns it into a few moves.
      return AddWith(e, c.id, &value, [&](std::byte* dst, uint32_t size) {
        ABSL_HARDENING_ASSERT(size == sizeof(T));
        (void)size;
        std::memcpy(dst, &value, sizeof(T));
      });
    }
  }

  // Remove: takes component `c` away from `e`. NotFound if `e` is stale or lacks `c`.
  // The data page stays until ReleaseEmptyPages(). O(1). Pointers to `e`'s `c` become
  // dangling-by-contract (the slot may be reused by the next Add).
  ABSL_ATTRIBUTE_ALWAYS_INLINE absl::Status Remove(Entity e, ComponentId c) {
    const uint32_t page = e.index() >> kEntityPageShift;
    const uint32_t bit = e.index() & (kEntityPageSize - 1);
    const uint32_t flag = uint32_t{1} << bit;
    if (ABSL_PREDICT_TRUE(page < page_capacity_ && c < num_types_)) {
      uint32_t& mask = types_[c].masks[page];
      if (ABSL_PREDICT_TRUE((mask & flag) != 0 &&
                            entity_pages_[page]->generation[bit] == e.generation())) {
        mask &= ~flag;
        EntityPage* entity_page = entity_pages_[page];
        if (--entity_page->count[bit] == 0) occupied_[page] &= ~flag;
        if (!entity_page->dirty) MarkDirty(page);
        return absl::OkStatus();
      }
    }
    return NotFoundError(e, c);
  }
  template <typename T>
  ABSL_ATTRIBUTE_ALWAYS_INLINE absl::Status Remove(Entity e, Component<T> c) {
    return Remove(e, c.id);
  }

  // Delete: removes every component of `e`. NotFound if `e` has none or is stale.
  // O(registered types) (the article's scheme 2 delete), early exit after the last one.
  absl::Status Delete(Entity e);
  // DeleteEntities: Delete for each entity of the batch that is in the store, skipping
  // the others (so it can take the manager's destroy batches, where most entities may
  // have no components here). Returns how many were deleted.
  size_t DeleteEntities(absl::Span<const Entity> entities);

  // CreateFromArchetype: gives every entity of `entities` exactly the archetype's
  // components and values, in one pass per component. All or nothing: NotFound if one
  // is not alive, AlreadyExists if one already has components here or appears twice,
  // InvalidArgument if the archetype names an unregistered type or a wrong size.
  // O(entities * archetype size).
  absl::Status CreateFromArchetype(absl::Span<const Entity> entities,
                                   const Archetype& archetype);

  // Contains: true if `e` is current and has at least one component. O(1).
  bool Contains(Entity e) const {
    const uint32_t page = e.index() >> kEntityPageShift;
    const uint32_t bit = e.index() & (kEntityPageSize - 1);
    return page < page_capacity_ && ((occupied_[page] >> bit) & 1u) != 0 &&
           entity_pages_[page]->generation[bit] == e.generation();
  }
  // Has: true if current entity `e` has component `c`. O(1).
  bool Has(Entity e, ComponentId c) const { return TryGet(e, c) != nullptr; }

  // TryGet: `e`'s component `c`, or nullptr if `e` is stale or lacks it. O(1), no
  // allocation. The pointer stays valid until `e` loses `c` (Remove, Delete, destroy);
  // it does not move when other entities change. For tags it points at shared,
  // stateless storage.
  const void* TryGet(Entity e, ComponentId c) const {
    const uint32_t page = e.index() >> kEntityPageShift;
    const uint32_t bit = e.index() & (kEntityPageSize - 1);
    if (ABSL_PREDICT_FALSE(page >= page_capacity_ || c >= num_types_)) return nullptr;
    const ComponentType& type = types_[c];
    if (((type.masks[page] >> bit) & 1u) == 0) return nullptr;
    if (entity_pages_[page]->generation[bit] != e.generation()) return nullptr;
    return type.data[page] + size_t{bit} * type.size;
  }
  void* TryGet(Entity e, ComponentId c) {
    return const_cast<void*>(static_cast<const EntityPages*>(this)->TryGet(e, c));
  }
  template <typename T>
  T* TryGet(Entity e, Component<T> c) {
    return static_cast<T*>(TryGet(e, c.id));
  }
  template <typename T>
  const T* TryGet(Entity e, Component<T> c) const {
    return static_cast<const T*>(TryGet(e, c.id));
  }

  // ReleaseEmptyPages: the dirty-page pass. For each page touched by Remove/Delete
  // since the last call, frees each component data page whose mask is zero, and the
  // entity page if no entity in it has any component. O(dirty pages * registered
  // types). Returns the number of pages (data + entity) freed. Freed pages go back to
  // their type's pool, not to the system: see ReleaseUnusedMemory.
  size_t ReleaseEmptyPages();
  // ReleaseUnusedMemory: gives every pool slab with no page in use back to the system
  // and returns the bytes released (call after ReleaseEmptyPages, e.g. on a level
  // unload). O(free pages * log slabs).
  size_t ReleaseUnusedMemory();
  size_t num_dirty_pages() const { return dirty_pages_.size(); }

  // ---- Read access for filters (iteration/filter.h). ----

  // page_capacity: the length of every mask array, a multiple of kPageCapacityQuantum
  // pages; pages past the highest entity have zero masks. Grows (never shrinks) when an
  // entity with a larger index is added, which reallocates all mask arrays.
  static constexpr size_t kPageCapacityQuantum = 64;
  size_t page_capacity() const { return page_capacity_; }
  // page_masks: component `c`'s presence masks, one per page, page_capacity() long.
  // Invalidated by Add/CreateFromArchetype when the capacity grows.
  const uint32_t* page_masks(ComponentId c) const { return types_[c].masks.data(); }
  // occupied_masks: per page, the entities having at least one component.
  const uint32_t* occupied_masks() const { return occupied_.data(); }
  // page_data: component `c`'s 32-element array for `page` (element i is entity
  // page*32+i), or nullptr if not allocated. Tags return shared stateless storage.
  std::byte* page_data(ComponentId c, size_t page) const { return types_[c].data[page]; }
  // generations: the generations of `page`'s 32 entities (meaningful where occupied).
  // Requires occupied_masks()[page] != 0.
  const uint32_t* generations(size_t page) const {
    return entity_pages_[page]->generation;
  }

  // allocated_data_pages / allocated_entity_pages / page_bytes: the pages in use now;
  // all three return to zero once every entity is gone and ReleaseEmptyPages() ran.
  size_t allocated_data_pages() const { return allocated_data_pages_; }
  size_t allocated_entity_pages() const { return allocated_entity_pages_; }
  size_t page_bytes() const { return page_bytes_; }
  // reserved_page_bytes: the bytes the page pools hold, pages in use or free; zero
  // after ReleaseEmptyPages() and ReleaseUnusedMemory() with every entity gone.
  size_t reserved_page_bytes() const;
  // MemoryUsage: reserved_page_bytes() plus the per-page tables (masks, pointers).
  size_t MemoryUsage() const;

 private:
  struct EntityPage {
    uint32_t generation[kEntityPageSize];
    // Components each entity has: when it drops to zero the entity leaves the page.
    uint16_t count[kEntityPageSize];
    bool dirty;
  };
  struct ComponentType {
    std::string name;
    uint32_t size;
    uint32_t alignment;
    std::vector<uint32_t> masks;      // page_capacity_ long
    std::vector<std::byte*> data;     // page_capacity_ long; null = not allocated
    // The data pages' pool: blocks of 32 * size bytes (tags, size 0, use none).
    iteration_internal::PagePool pool;
  };

  // Copies a value of `size` bytes, or zero-fills if `value` is null. Out of line:
  // inlined into a caller that passes a smaller object, GCC's -Warray-bounds flags the
  // switch's wider (unreachable) copies. The typed Add copies inline instead.
  static void WriteValue(std::byte* dst, const void* value, uint32_t size);
  absl::Status AddSlow(Entity e, ComponentId c, const void* value);
  // The inline fast path of Add: slot and data page exist, entity alive, component
  // absent; `write(dst, size)` stores the value. Anything else goes to AddSlow.
  template <typename Writer>
  ABSL_ATTRIBUTE_ALWAYS_INLINE absl::Status AddWith(Entity e, ComponentId c,
                                                    const void* value, Writer write) {
    const uint32_t page = e.index() >> kEntityPageShift;
    const uint32_t bit = e.index() & (kEntityPageSize - 1);
    const uint32_t flag = uint32_t{1} << bit;
    if (ABSL_PREDICT_TRUE(manager_->Alive(e) && c < num_types_ &&
                          page < page_capacity_)) {
      ComponentType& type = types_[c];
      EntityPage* entity_page = entity_pages_[page];
      std::byte* data = type.data[page];
      if (ABSL_PREDICT_TRUE(entity_page != nullptr && data != nullptr &&
                            (type.masks[page] & flag) == 0)) {
        if ((occupied_[page] & flag) == 0) {
          occupied_[page] |= flag;
          entity_page->generation[bit] = e.generation();
          entity_page->count[bit] = 1;
        } else {
          ++entity_page->count[bit];
        }
        type.masks[page] |= flag;
        write(data + size_t{bit} * type.size, type.size);
        return absl::OkStatus();
      }
    }
    return AddSlow(e, c, value);
  }
  absl::Status NotFoundError(Entity e, ComponentId c) const;
  void GrowTo(size_t page);
  EntityPage* EnsureEntityPage(uint32_t page);
  std::byte* EnsureDataPage(ComponentType& type, uint32_t page);
  void FreeDataPage(ComponentType& type, uint32_t page);
  void MarkDirty(uint32_t page);
  void DeleteSlot(uint32_t page, uint32_t bit);

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
  iteration_internal::PagePool entity_page_pool_{sizeof(EntityPage), alignof(EntityPage),
                                                 &chunk_pool_};
  std::vector<uint32_t> dirty_pages_;
  size_t allocated_data_pages_ = 0;
  size_t allocated_entity_pages_ = 0;
  size_t page_bytes_ = 0;
};

}  // namespace strata

#endif  // STRATA_ITERATION_ENTITY_PAGES_H_
