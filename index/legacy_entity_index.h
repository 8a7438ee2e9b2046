// LegacyEntityIndex: the entity index "Rebuilding the Entity Index" replaced, kept as the
// benchmark baseline. One hash-map entry per entity holding an array of
// {name, manager, instance id}, one element per component: nothing is shared between
// entities, so memory grows with entities × components.
//
//   LegacyEntityIndex index;
//   absl::Status s = index.AddInstance(e, &render_data_1, IdString32("Fog"));
//   ComponentManager* m = index.FindComponentManager(e, IdString32("Fog"));
//
// Same interface as EntityIndex (plus the instance id the old design stored), so the
// benchmark and tests drive both through one template. Thread-safety: none.
#ifndef STRATA_INDEX_LEGACY_ENTITY_INDEX_H_
#define STRATA_INDEX_LEGACY_ENTITY_INDEX_H_

#include <cstddef>
#include <optional>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/types/span.h"
#include "base/id_string.h"
#include "entity/entity.h"
#include "index/component_manager.h"

namespace strata {

class LegacyEntityIndex {
 public:
  // Entry: one component of an entity, 16 bytes as in the article's table.
  struct Entry {
    IdString32 name;
    InstanceId instance;
    ComponentManager* manager;
  };
  struct ComponentEntry {
    IdString32 name;
    ComponentManager* manager;
    friend bool operator==(const ComponentEntry& a, const ComponentEntry& b) {
      return a.name == b.name && a.manager == b.manager;
    }
  };

  LegacyEntityIndex() = default;

  // AddInstance: appends {name, manager, instance} to `entity`'s array; the
  // instance id defaults to the name (the new convention). Amortised O(components)
  // for the duplicate check. InvalidArgument for an invalid entity or null manager,
  // AlreadyExists if the entity already has `name`.
  absl::Status AddInstance(Entity entity, ComponentManager* manager, IdString32 name) {
    return AddInstance(entity, manager, name, name);
  }
  absl::Status AddInstance(Entity entity, ComponentManager* manager, IdString32 name,
                                 InstanceId instance);
  // AddInstance(entities, ...): adds to each entity, all or nothing. No
  // sharing to exploit, so O(entities × components).
  absl::Status AddInstance(absl::Span<const Entity> entities,
                                 ComponentManager* manager, IdString32 name);

  // FindComponentManager: the manager of `entity`'s component `name`, or nullptr.
  // One hash lookup, then a linear scan of the entity's array.
  ComponentManager* FindComponentManager(Entity entity, IdString32 name) const;
  // FindInstanceId: the instance id registered for `name`.
  std::optional<InstanceId> FindInstanceId(Entity entity, IdString32 name) const;

  // RemoveInstance: removes `name` from the entity's array (order kept); an entity
  // left with no components is forgotten. NotFound if absent.
  absl::Status RemoveInstance(Entity entity, IdString32 name);

  // RemoveEntity: forgets `entity` and frees its array; false if unknown.
  bool RemoveEntity(Entity entity) { return entities_.erase(entity) != 0; }
  size_t RemoveEntity(absl::Span<const Entity> entities);

  // CollectGarbage: nothing is shared, so nothing to collect; returns 0.
  size_t CollectGarbage() { return 0; }

  bool Contains(Entity entity) const { return entities_.contains(entity); }
  std::vector<ComponentEntry> Components(Entity entity) const;
  size_t num_entities() const { return entities_.size(); }
  // num_prototypes: every entity owns its own lookup array, one "prototype" each.
  size_t num_prototypes() const { return entities_.size(); }

  // MemoryUsage: bytes allocated by the map and the arrays. O(entities).
  size_t MemoryUsage() const;

 private:
  absl::flat_hash_map<Entity, std::vector<Entry>> entities_;
};

}  // namespace strata

#endif  // STRATA_INDEX_LEGACY_ENTITY_INDEX_H_
