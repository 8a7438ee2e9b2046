// EntitySpawner: spawns a validated entity resource (resource/format.h) the data-
// oriented way: all entities with one EntityManager::CreateBatch, then one spawn
// function call per component type, in the blob's spawn order, each given every
// instance of its type at once.
//
// Each component package registers a spawn function for its type name. The function
// gets the created entities, the resource's parent_index, its instances' entity_index,
// names and data, and an opaque context pointer that the caller of Spawn passes
// through (the engine hands in its world: the TransformComponent, the entity index).
// It registers the new instances by name in whatever index the engine keeps; this
// package does not depend on one.
//
//   EntitySpawner spawner;
//   spawner.RegisterComponentSpawner("health", [](const ComponentSpawnBatch& batch) {
//     auto* world = static_cast<MyWorld*>(batch.context);
//     if (batch.instance_stride != sizeof(float)) return absl::DataLossError("stride");
//     for (uint32_t i = 0; i < batch.num_instances; ++i) {
//       float hp;
//       std::memcpy(&hp, batch.data.data() + i * sizeof(float), sizeof(hp));
//       world->health.Add(batch.entity(i), batch.name(i), hp);
//     }
//     return absl::OkStatus();
//   });
//   absl::StatusOr<EntityResourceView> view = EntityResourceView::Create(blob);
//   absl::StatusOr<std::vector<Entity>> spawned =
//       spawner.Spawn(*view, entity_manager, /*context=*/&world);
//   // Restarting the level: destroy them and Spawn the same view again.
//
// Thread-safety: Spawn is const and may run concurrently with other Spawn calls on
// different EntityManagers, as long as the spawn functions allow it.
#ifndef STRATA_RESOURCE_ENTITY_SPAWNER_H_
#define STRATA_RESOURCE_ENTITY_SPAWNER_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "base/id_string.h"
#include "entity/entity.h"
#include "entity/entity_manager.h"
#include "resource/format.h"
#include "resource/metadata.h"

namespace strata {

// ComponentSpawnBatch: every instance of one component type in a resource, handed to
// its spawn function. All spans point into the blob or the caller's entity array and
// are valid only during the call. Validated: entity_index[i] < entities.size(),
// names.size() == entity_index.size() == num_instances, data is 16-byte aligned and
// data.size() == num_instances * instance_stride when instance_stride != 0. A spawn
// function must still check that instance_stride (and anything inside its own data,
// which the blob's author controls) is what it expects.
struct ComponentSpawnBatch {
  IdString32 type;
  // entities[k]: the Entity created for resource entity k (the article's entity_lookup).
  absl::Span<const Entity> entities;
  // parent_index[k]: resource index of entity k's parent, kNoParent for roots.
  absl::Span<const uint32_t> parent_index;
  uint32_t num_instances = 0;
  absl::Span<const uint32_t> entity_index;
  absl::Span<const uint32_t> names;
  uint32_t instance_stride = 0;
  absl::Span<const std::byte> data;
  // layout_fingerprint / layout: the instance layout the blob's writer declared for
  // this type (resource/metadata.h's strata.layouts); 0 / empty when it declared none.
  // A spawn function with a declared layout compares them with its own.
  uint32_t layout_fingerprint = 0;
  absl::string_view layout;
  // context: the pointer the caller passed to Spawn, untouched.
  void* context = nullptr;
  // in_entity_order: instance i belongs to entity i for every entity (num_instances ==
  // entities.size(), entity_index[i] == i), so `entities` is also the array of owners:
  // a spawn function can hand it on instead of gathering entity(i) into a copy.
  bool in_entity_order = false;

  // entity: the entity owning instance i.
  Entity entity(size_t i) const { return entities[entity_index[i]]; }
  // name: the IdString32 of instance i's name.
  IdString32 name(size_t i) const { return IdString32::FromValue(names[i]); }
};

// InEntityOrder: whether entity_index is 0, 1, ..., num_entities - 1 (what
// ComponentSpawnBatch::in_entity_order records). O(n).
bool InEntityOrder(absl::Span<const uint32_t> entity_index, size_t num_entities);

// SpawnFunction: creates the batch's instances. Returns an error (DataLoss for data it
// cannot use) to abort the spawn; see EntitySpawner::Spawn for what happens then.
using SpawnFunction = std::function<absl::Status(const ComponentSpawnBatch& batch)>;

// SpawnUnknownTypes: what Spawn does with a component type that has no registered
// spawn function.
enum class SpawnUnknownTypes : uint8_t {
  kSkip,    // jump over the whole section in one step; count it in SpawnStats
  kReject,  // NotFound before anything is created
};

struct SpawnOptions {
  SpawnUnknownTypes unknown_types = SpawnUnknownTypes::kSkip;
};

// SpawnStats: what one Spawn did.
struct SpawnStats {
  uint32_t types_spawned = 0;
  uint32_t instances_spawned = 0;
  // skipped_types: unknown types jumped over, in blob order.
  std::vector<IdString32> skipped_types;
  uint32_t instances_skipped = 0;
};

class EntitySpawner {
 public:
  using UnknownTypes = SpawnUnknownTypes;
  using Options = SpawnOptions;

  EntitySpawner() = default;
  EntitySpawner(const EntitySpawner&) = delete;
  EntitySpawner& operator=(const EntitySpawner&) = delete;

  // RegisterComponentSpawner: `spawn` handles sections whose type is
  // IdString32(type_name). AlreadyExists if that id is registered (also for another
  // name with the same hash); InvalidArgument if the name or function is empty, or the
  // name is reserved for metadata sections (resource/metadata.h), which Spawn passes
  // over without counting them.
  absl::Status RegisterComponentSpawner(absl::string_view type_name, SpawnFunction spawn);

  // HasSpawner: whether a spawn function is registered for `type`. O(1).
  bool HasSpawner(IdString32 type) const { return spawners_.contains(type.value()); }

  // Spawn: creates view.num_entities() entities into `entities` (which must have exactly
  // that size) with one CreateBatch, then calls each known type's spawn function once,
  // in the blob's order. O(num_entities + num_component_types) plus the spawn
  // functions' own work. `context` is passed through to every spawn function. `stats`,
  // if not null, receives what happened.
  // Errors: InvalidArgument if entities.size() is wrong; NotFound (nothing created)
  // for an unknown type under kReject; a spawn function's error, prefixed with the
  // type. On a spawn function error every entity of this spawn is destroyed with one
  // DestroyBatch, so components that listen for destroys drop the instances the
  // earlier spawn functions created; `entities` then holds stale handles.
  absl::Status Spawn(const EntityResourceView& view, EntityManager& manager,
                     absl::Span<Entity> entities, void* context, const Options& options,
                     SpawnStats* stats = nullptr) const;

  // Spawn: the same, returning a new vector of the created entities (index k is
  // resource entity k).
  absl::StatusOr<std::vector<Entity>> Spawn(const EntityResourceView& view,
                                            EntityManager& manager, void* context,
                                            const Options& options = Options(),
                                            SpawnStats* stats = nullptr) const;

 private:
  absl::flat_hash_map<uint32_t, SpawnFunction> spawners_;
};

}  // namespace strata

#endif  // STRATA_RESOURCE_ENTITY_SPAWNER_H_
