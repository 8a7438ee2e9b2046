#include "resource/entity_spawner.h"

#include <string>
#include <utility>

#include "absl/strings/str_cat.h"

namespace strata {

absl::Status EntitySpawner::RegisterComponentSpawner(absl::string_view type_name,
                                                     SpawnFunction spawn) {
  if (type_name.empty()) return absl::InvalidArgumentError("component type name is empty");
  if (!spawn) return absl::InvalidArgumentError("spawn function is empty");
  const IdString32 id(type_name);
  if (IsMetadataSection(id)) {
    return absl::InvalidArgumentError(
        absl::StrCat("\"", type_name, "\" is a metadata section, not a component type"));
  }
  if (!spawners_.try_emplace(id.value(), std::move(spawn)).second) {
    return absl::AlreadyExistsError(absl::StrCat("a spawn function for \"", type_name, "\" (",
                                                 id.DebugString(), ") is already registered"));
  }
  return absl::OkStatus();
}

absl::Status EntitySpawner::Spawn(const EntityResourceView& view, EntityManager& manager,
                                  absl::Span<Entity> entities, void* context,
                                  const Options& options, SpawnStats* stats) const {
  if (entities.size() != view.num_entities()) {
    return absl::InvalidArgumentError(absl::StrCat("Spawn: entities has ", entities.size(),
                                                   " slots, the resource has ",
                                                   view.num_entities(), " entities"));
  }
  // The declared layouts (strata.layouts), read before anything is created so a
  // malformed section leaves no trace.
  absl::flat_hash_map<uint32_t, absl::string_view> layouts;
  for (const ComponentTypeView& type : view.component_types()) {
    if (type.type != IdString32(kLayoutsSection)) continue;
    absl::StatusOr<std::vector<absl::string_view>> strings = ReadStringSection(type);
    if (!strings.ok()) return strings.status();
    for (size_t i = 0; i < strings->size(); ++i) layouts[type.names[i]] = (*strings)[i];
  }
  if (options.unknown_types == UnknownTypes::kReject) {
    // Checked before anything is created, so a rejected resource leaves no trace.
    for (const ComponentTypeView& type : view.component_types()) {
      if (IsMetadataSection(type.type)) continue;
      if (!spawners_.contains(type.type.value())) {
        return absl::NotFoundError(absl::StrCat("Spawn: no spawn function for component type ",
                                                type.type.DebugString(), " (", type.num_instances,
                                                " instances)"));
      }
    }
  }
  if (stats != nullptr) *stats = SpawnStats();

  manager.CreateBatch(entities);

  ComponentSpawnBatch batch;
  batch.entities = entities;
  batch.parent_index = view.parent_index();
  batch.context = context;
  for (const ComponentTypeView& type : view.component_types()) {
    if (IsMetadataSection(type.type)) continue;
    auto it = spawners_.find(type.type.value());
    if (it == spawners_.end()) {
      // Unknown: the whole section is skipped; the iterator jumps over it in one step.
      if (stats != nullptr) {
        stats->skipped_types.push_back(type.type);
        stats->instances_skipped += type.num_instances;
      }
      continue;
    }
    batch.type = type.type;
    batch.num_instances = type.num_instances;
    batch.entity_index = type.entity_index;
    batch.names = type.names;
    batch.instance_stride = type.instance_stride;
    batch.data = type.data;
    batch.layout_fingerprint = type.layout_fingerprint;
    auto layout = layouts.find(type.type.value());
    batch.layout = layout == layouts.end() ? absl::string_view() : layout->second;
    absl::Status status = it->second(batch);
    if (!status.ok()) {
      // Roll back: one DestroyBatch tells the destroy listeners to drop what the
      // earlier spawn functions created. It is all-or-nothing, so if a spawn function
      // already destroyed some of these entities, destroy the rest one by one.
      if (!manager.DestroyBatch(entities).ok()) {
        for (Entity e : entities) {
          if (manager.Alive(e)) manager.Destroy(e).IgnoreError();
        }
      }
      return absl::Status(status.code(), absl::StrCat("Spawn: component type ",
                                                      type.type.DebugString(), ": ",
                                                      status.message()));
    }
    if (stats != nullptr) {
      ++stats->types_spawned;
      stats->instances_spawned += type.num_instances;
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<Entity>> EntitySpawner::Spawn(const EntityResourceView& view,
                                                         EntityManager& manager, void* context,
                                                         const Options& options,
                                                         SpawnStats* stats) const {
  std::vector<Entity> entities(view.num_entities());
  absl::Status status = Spawn(view, manager, absl::MakeSpan(entities), context, options, stats);
  if (!status.ok()) return status;
  return entities;
}

}  // namespace strata
