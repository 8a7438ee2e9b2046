// RenderDataManager: the "render data" component of the entity index article (post
// effects such as "Fog" and "Vignette"), a component manager whose instances are named
// by the caller, so one entity can hold several of them.
//
//   EntityManager entities;
//   RenderDataManager render_data(entities);   // drops a destroyed entity's instances
//   Entity env = entities.Create();
//   absl::StatusOr<Instance> fog = render_data.Create(env, IdString32("Fog"));
//   render_data.data(*fog).density = 0.02f;
//   render_data.Create(env, IdString32("Vignette"));
//   PropertySystem properties(&index);
//   properties.Describe(&render_data, render_data.DescribeProperties());
//   properties.Set(env, "Fog", "density", 0.5f);      // after index registration
//
// Resource form (what CompileRenderData writes and SpawnRenderData reads): per instance
// 5 little floats (in the blob's byte order) = kRenderDataInstanceSize bytes:
// density, color r, g, b, a. JSON: {"type": "render_data", "name": "Fog",
// "density": 0.02, "color": [0.5, 0.55, 0.6, 1]}; both fields optional (density 0,
// color opaque white).
//
// Storage: instances are dense (array of RenderData), with a hash map (entity, id) ->
// index and a per-entity list of ids for the destroy listener. Create and Destroy may
// move instances, so they invalidate every Instance of this manager.
// Thread-safety: none.
#ifndef STRATA_ENGINE_RENDER_DATA_H_
#define STRATA_ENGINE_RENDER_DATA_H_

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "entity/entity.h"
#include "entity/entity_manager.h"
#include "index/component_manager.h"
#include "index/entity_index.h"
#include "index/id_string.h"
#include "index/property_system.h"
#include "nlohmann/json.hpp"
#include "resource/entity_compiler.h"

namespace strata {

// RenderData: one post-effect instance.
struct RenderData {
  float density = 0.0f;
  float color[4] = {1.0f, 1.0f, 1.0f, 1.0f};
};

// kRenderDataTypeName: the component type name in level JSON and resource files.
inline constexpr absl::string_view kRenderDataTypeName = "render_data";
// kRenderDataInstanceSize: bytes per instance in a resource (5 floats).
inline constexpr uint32_t kRenderDataInstanceSize = 20;

class RenderDataManager final : public ComponentManager {
 public:
  // RenderDataManager(entities): subscribes to `entities`' destruction, so destroying
  // an entity destroys all its render data instances. Either may be destroyed first
  // (see EntityManager::Subscription).
  explicit RenderDataManager(EntityManager& entities);
  ~RenderDataManager() override;
  RenderDataManager(const RenderDataManager&) = delete;
  RenderDataManager& operator=(const RenderDataManager&) = delete;

  absl::string_view type_name() const override { return kRenderDataTypeName; }

  // Create: an instance `id` for `entity` with default data. InvalidArgument for an
  // invalid entity, NotFound if it is not alive in the manager (or that manager has
  // been destroyed), AlreadyExists if `entity` has `id` here. Amortised O(1).
  absl::StatusOr<Instance> Create(Entity entity, InstanceId id) override;
  // Lookup: O(1) expected; invalid Instance if absent.
  Instance Lookup(Entity entity, InstanceId id) const override;
  // Destroy: swap-removes the instance; false if absent. O(1) expected.
  bool Destroy(Entity entity, InstanceId id) override;
  // DestroyEntities: destroys every instance of each entity (the destroy listener);
  // returns how many instances. O(entities + their instances).
  size_t DestroyEntities(absl::Span<const Entity> entities);

  // data / entity / id: instance accessors; `instance` must be valid.
  RenderData& data(Instance instance) { return data_[instance.index]; }
  const RenderData& data(Instance instance) const { return data_[instance.index]; }
  Entity entity(Instance instance) const { return owners_[instance.index].first; }
  InstanceId id(Instance instance) const { return owners_[instance.index].second; }

  // CountOf: how many instances `entity` has here. O(1) expected.
  size_t CountOf(Entity entity) const {
    auto it = by_entity_.find(entity);
    return it == by_entity_.end() ? 0 : it->second.size();
  }

  // size: live instances. MemoryUsage: bytes of the arrays and maps (capacities).
  size_t size() const { return data_.size(); }
  size_t MemoryUsage() const;

  // DescribeProperties: "density" (float, finite and >= 0, else InvalidArgument) and
  // "color" (vector4 r, g, b, a), both read/write. The descriptors capture `this`.
  std::vector<PropertyDescriptor> DescribeProperties();

  // Spawn: the spawn function body. Creates instance i for entities[i] named names[i]
  // from `data` (num instances * kRenderDataInstanceSize bytes, native byte order) and
  // registers each in `index` under its name, in batch (one call per distinct name).
  // All or nothing for the instances: on error nothing is created. InvalidArgument for
  // mismatched sizes, AlreadyExists for a taken (entity, name).
  absl::Status Spawn(absl::Span<const Entity> entities, absl::Span<const uint32_t> names,
                     absl::Span<const std::byte> data, EntityIndex* index);

 private:
  using Key = std::pair<Entity, InstanceId>;

  absl::Status NotAlive(Entity entity) const;

  std::vector<RenderData> data_;
  std::vector<Key> owners_;
  absl::flat_hash_map<Key, uint32_t> instances_;
  absl::flat_hash_map<Entity, absl::InlinedVector<InstanceId, 2>> by_entity_;
  EntityManager::Subscription listener_;
};

// CompileRenderData: the compile function for "render_data" (see the resource form).
absl::Status CompileRenderData(const nlohmann::json& config, ComponentDataWriter& out);

}  // namespace strata

#endif  // STRATA_ENGINE_RENDER_DATA_H_
