// World: one game world, composing Strata's subsystems the way the Bitsquid articles
// describe: an entity manager, the world's transform graph, the entity index with its
// property system, the page store the systems iterate, the resource spawner with the
// built-in component types registered, and the sample components (render_data, sprite,
// spark, spark_emitter).
//
//   EntityCompiler compiler;
//   World::RegisterCompilers(compiler);
//   absl::StatusOr<EntityCompiler::Result> level = compiler.Compile(json_text, {});
//   absl::StatusOr<EntityResourceView> view = EntityResourceView::Create(level->blob);
//   World world;
//   absl::StatusOr<std::vector<Entity>> spawned = world.Spawn(*view);
//   world.SetFloatProperty((*spawned)[0], "Fog", "density", 0.5f);
//   world.DestroyBatch(*spawned);   // every subsystem drops them (destroy listeners)
//
// One destruction path: every subsystem subscribes to the entity manager's destroy
// notification (the transform component, the page store, the render data manager and
// the entity index), so destroying an entity through the manager, by anyone, removes
// all of its components everywhere; World::Destroy is only a shorthand.
//
// Several worlds: `World a; World b(a.entities());` share one entity manager, so one
// entity can have a transform in both worlds (the transform article's pickaxe that is
// both in the game and in the inventory world), placed independently; destroying it
// removes it from both. The shared manager must outlive the worlds using it.
//
// Thread-safety: none; a world belongs to one thread at a time (systems may fan out
// page queries to worker threads, see engine/systems.h).
#ifndef STRATA_ENGINE_WORLD_H_
#define STRATA_ENGINE_WORLD_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "engine/render_data.h"
#include "engine/sample_components.h"
#include "entity/entity.h"
#include "entity/entity_manager.h"
#include "index/entity_index.h"
#include "index/property_system.h"
#include "iteration/entity_pages.h"
#include "resource/entity_compiler.h"
#include "resource/entity_spawner.h"
#include "resource/format.h"
#include "transform/transform_component.h"
#include "transform/transform_properties.h"

namespace strata {

// WorldOptions: how a World is built (World::Options).
struct WorldOptions {
  // deferred_transforms: the transform component in deferred mode (SetLocal marks
  // dirty, UpdateTransforms() propagates) instead of immediate mode.
  bool deferred_transforms = false;
};

class World {
 public:
  using Options = WorldOptions;

  // MemoryReport: bytes owned by each subsystem (container capacities).
  struct MemoryReport {
    size_t entity_manager = 0;  // 0 when the manager is shared (owned elsewhere)
    size_t transforms = 0;
    size_t entity_index = 0;
    size_t pages = 0;
    size_t render_data = 0;
    size_t total() const {
      return entity_manager + transforms + entity_index + pages + render_data;
    }
  };

  // World(): a world with its own entity manager.
  World() : World(Options()) {}
  explicit World(const Options& options);
  // World(shared): a world over `shared`, which must outlive every use of the World;
  // destroying the World after `shared` is safe.
  explicit World(EntityManager& shared, const Options& options = Options());
  ~World();
  World(const World&) = delete;
  World& operator=(const World&) = delete;

  // RegisterCompilers: registers the compile functions of every built-in component type
  // (transform, render_data, sprite, spark, spark_emitter) in `compiler`, with their
  // spawn orders. AlreadyExists if one is registered already.
  static absl::Status RegisterCompilers(EntityCompiler& compiler);

  // Spawn: spawns a validated resource into this world: one CreateBatch for its
  // entities, then one batch per component type, each instance registered in the entity
  // index under its name. Unknown component types are skipped (counted in `stats`).
  // On error every entity of this spawn is destroyed again (through the manager, so
  // nothing stays behind) and the error is returned. O(entities + instances).
  absl::StatusOr<std::vector<Entity>> Spawn(const EntityResourceView& view,
                                            SpawnStats* stats = nullptr);

  // Destroy / DestroyBatch: EntityManager::Destroy / DestroyBatch (NotFound for a dead
  // or foreign entity, nothing changes); every subsystem drops the entities.
  absl::Status Destroy(Entity entity) { return entities_->Destroy(entity); }
  absl::Status DestroyBatch(absl::Span<const Entity> entities) {
    return entities_->DestroyBatch(entities);
  }

  // ComponentCount: how many components `entity` has in this world across every
  // subsystem (transform, page components, render data, index entries), for tests and
  // tools checking that nothing is left behind. O(components).
  size_t ComponentCount(Entity entity) const;

  // UpdateTransforms: deferred mode: propagates dirty transforms. Immediate: nothing.
  void UpdateTransforms();

  // SetFloatProperty / GetFloatProperty: PropertySystem Set/Get for float properties
  // (GetFloatProperty: InvalidArgument if the property is not a float).
  absl::Status SetFloatProperty(Entity entity, absl::string_view component,
                                absl::string_view property, float value);
  absl::StatusOr<float> GetFloatProperty(Entity entity, absl::string_view component,
                                         absl::string_view property) const;

  MemoryReport Memory() const;

  // num_transforms: transforms in this world (TransformComponent::size()).
  size_t num_transforms() const;

  EntityManager& entities() const { return *entities_; }
  TransformComponent& transforms() const { return *transforms_; }
  TransformComponentManager& transform_manager() const { return *transform_manager_; }
  EntityIndex& index() const { return *index_; }
  PropertySystem& properties() const { return *properties_; }
  EntityPages& pages() const { return *pages_; }
  RenderDataManager& render_data() const { return *render_data_; }
  SpriteManager& sprites() const { return *sprites_; }
  SparkManager& sparks() const { return *sparks_; }
  SparkEmitterManager& emitters() const { return *emitters_; }
  EntitySpawner& spawner() const { return *spawner_; }

 private:
  World(std::unique_ptr<EntityManager> owned, EntityManager* shared, const Options& options);

  void DescribeProperties();
  void RegisterSpawners();

  // NOTE: declaration order is construction order; members that listen to the entity
  // manager are destroyed (and unsubscribe) before an owned manager goes.
  std::unique_ptr<EntityManager> owned_entities_;
  EntityManager* entities_;
  std::unique_ptr<TransformComponent> transforms_;
  std::unique_ptr<TransformComponentManager> transform_manager_;
  std::unique_ptr<EntityIndex> index_;
  EntityManager::Subscription index_listener_;
  std::unique_ptr<EntityPages> pages_;
  std::unique_ptr<RenderDataManager> render_data_;
  std::unique_ptr<SpriteManager> sprites_;
  std::unique_ptr<SparkManager> sparks_;
  std::unique_ptr<SparkEmitterManager> emitters_;
  std::unique_ptr<PropertySystem> properties_;
  std::unique_ptr<EntitySpawner> spawner_;
};

}  // namespace strata

#endif  // STRATA_ENGINE_WORLD_H_
