// The vocabulary EntityPages is written in: the page size, ComponentId and its typed
// form Component<T>, and ComponentBundle, a set of components with initial values for
// EntityPages::CreateFromBundle. Include iteration/entity_pages.h, which includes
// this; it is a header of its own so that entity_pages.h reads as the store's API.
//
//   ComponentBundle moving;
//   moving.Set(pos, Position{0, 0, 0}).Set(vel, Velocity{1, 0, 0});
//   STRATA_RETURN_IF_ERROR(pages.CreateFromBundle(batch, moving));
#ifndef STRATA_ITERATION_COMPONENTS_H_
#define STRATA_ITERATION_COMPONENTS_H_

#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "absl/types/span.h"

namespace strata {

class EntityPages;

// NOTE: a page is 32 entities so that one page's presence for one component is one
// uint32_t and the walk over it is tzcnt/blsr on a 32-bit register.
inline constexpr uint32_t kEntityPageSize = 32;
inline constexpr uint32_t kEntityPageShift = 5;
// kNoSlot: the slot of an entity that is not in the store.
inline constexpr uint32_t kNoSlot = 0xFFFFFFFFu;

// ComponentId: a registered component type, an index into the store's type table.
using ComponentId = uint32_t;

// kNoComponent: the id of no component type (a default-constructed Component<T>):
// never registered, so every call given it fails or finds nothing.
inline constexpr ComponentId kNoComponent = 0xFFFFFFFFu;

// Component<T>: a ComponentId that remembers its C++ type, for the typed helpers.
template <typename T>
struct Component {
  ComponentId id = kNoComponent;
  bool is_valid() const { return id != kNoComponent; }
};

// ComponentBundle: a set of components with initial values, for CreateFromBundle. Not
// an archetype in Unity's or flecs' sense (a set of component types, with a table per
// set): Strata keeps no such table; Compact groups entities of one set instead. Values
// are copied in, so the bundle can be reused and outlives nothing.
class ComponentBundle {
 public:
  // Set: adds `value` for `component` (or replaces an earlier value). O(components).
  template <typename T>
  ComponentBundle& Set(Component<T> component, const T& value) {
    static_assert(std::is_trivially_copyable_v<T> && std::is_trivially_destructible_v<T>);
    if constexpr (std::is_empty_v<T>) {
      return SetRaw(component.id, {});
    } else {
      return SetRaw(component.id,
                    absl::MakeConstSpan(reinterpret_cast<const std::byte*>(&value), sizeof(T)));
    }
  }
  // SetRaw: the untyped form; `bytes.size()` must equal the registered size, which
  // CreateFromBundle checks.
  ComponentBundle& SetRaw(ComponentId component, absl::Span<const std::byte> bytes);

  size_t size() const { return entries_.size(); }
  bool empty() const { return entries_.empty(); }
  // MemoryUsage: bytes of its arrays beyond the object (capacities).
  size_t MemoryUsage() const {
    return entries_.capacity() * sizeof(Entry) + bytes_.capacity();
  }
  // Equal: the same components with the same bytes, set in the same order.
  friend bool operator==(const ComponentBundle& a, const ComponentBundle& b) {
    if (a.entries_.size() != b.entries_.size() || a.bytes_ != b.bytes_) return false;
    for (size_t i = 0; i < a.entries_.size(); ++i) {
      if (a.entries_[i].id != b.entries_[i].id || a.entries_[i].size != b.entries_[i].size) {
        return false;
      }
    }
    return true;
  }

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

}  // namespace strata

#endif  // STRATA_ITERATION_COMPONENTS_H_
