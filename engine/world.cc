#include "engine/world.h"

#include <utility>
#include <variant>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "transform/matrix.h"
#include "transform/transform_component.h"
#include "transform/transform_resource.h"

namespace strata {
namespace {

// The spawn functions' context: the world being spawned into.
World& WorldOf(const ComponentSpawnBatch& batch) { return *static_cast<World*>(batch.context); }

std::vector<Entity> Owners(const ComponentSpawnBatch& batch) {
  std::vector<Entity> owners(batch.num_instances);
  for (uint32_t i = 0; i < batch.num_instances; ++i) owners[i] = batch.entity(i);
  return owners;
}

absl::Status CheckStride(const ComponentSpawnBatch& batch, absl::string_view type,
                         size_t stride) {
  if (batch.instance_stride != stride) {
    return absl::DataLossError(absl::StrCat(type, ": instance stride ", batch.instance_stride,
                                            ", expected ", stride));
  }
  return absl::OkStatus();
}

// Registers instance i of `owners` under names[i] with one batch call per distinct name.
absl::Status RegisterByName(EntityIndex& index, ComponentManager* manager,
                            absl::Span<const Entity> owners, absl::Span<const uint32_t> names) {
  absl::flat_hash_map<uint32_t, std::vector<Entity>> by_name;
  for (size_t i = 0; i < owners.size(); ++i) by_name[names[i]].push_back(owners[i]);
  for (const auto& [name, group] : by_name) {
    STRATA_RETURN_IF_ERROR(index.RegisterComponent(absl::MakeConstSpan(group), manager,
                                                   IdString32::FromValue(name)));
  }
  return absl::OkStatus();
}

absl::Status SpawnTransforms(const ComponentSpawnBatch& batch) {
  World& world = WorldOf(batch);
  // Create and link as the transform package's own spawn function does, then index
  // the instances by name, which that function knows nothing of.
  STRATA_RETURN_IF_ERROR(SpawnTransformBatch(world.transforms(), batch));
  return RegisterByName(world.index(), &world.transform_manager(), Owners(batch),
                        batch.names);
}

// The spawn function of a manager with a Spawn(owners, names, data, index) body (the
// page components and render_data): checks the stride, then hands the batch over.
template <typename Manager>
absl::Status SpawnWithManager(const ComponentSpawnBatch& batch, Manager& manager,
                              size_t stride) {
  STRATA_RETURN_IF_ERROR(CheckStride(batch, manager.type_name(), stride));
  const std::vector<Entity> owners = Owners(batch);
  return manager.Spawn(owners, batch.names, batch.data, &WorldOf(batch).index());
}

}  // namespace

World::World(const Options& options)
    : World(std::make_unique<EntityManager>(), nullptr, options) {}

World::World(EntityManager& shared, const Options& options)
    : World(nullptr, &shared, options) {}

World::World(std::unique_ptr<EntityManager> owned, EntityManager* shared,
             const Options& options)
    : owned_entities_(std::move(owned)),
      entities_(owned_entities_ != nullptr ? owned_entities_.get() : shared) {
  TransformComponent::Options transform_options;
  transform_options.mode = options.deferred_transforms
                               ? TransformComponent::Mode::kDeferred
                               : TransformComponent::Mode::kImmediate;
  transforms_.reset(new TransformComponent(transform_options));
  transforms_->ConnectTo(*entities_);
  transform_manager_ = std::make_unique<TransformComponentManager>(transforms_.get());
  index_ = std::make_unique<EntityIndex>();
  index_listener_ = entities_->AddDestroyListener(
      [index = index_.get()](absl::Span<const Entity> dead) { index->RemoveEntity(dead); });
  pages_ = std::make_unique<EntityPages>(*entities_);
  render_data_ = std::make_unique<RenderDataManager>(*entities_);
  // The type names are distinct and the store is empty, so registration cannot fail.
  sprites_ = *SpriteManager::Register(*pages_, kSpriteTypeName);
  sparks_ = *SparkManager::Register(*pages_, kSparkTypeName);
  emitters_ = *SparkEmitterManager::Register(*pages_, kSparkEmitterTypeName);
  properties_ = std::make_unique<PropertySystem>(index_.get());
  DescribeProperties();
  spawner_ = std::make_unique<EntitySpawner>();
  RegisterSpawners();
}

// Every listener (members' and index_listener_) is a Subscription: it unsubscribes when
// destroyed, before an owned manager (declared first) goes, and is merely detached if a
// shared manager was destroyed before the World.
World::~World() = default;

void World::DescribeProperties() {
  // Each manager is described once, with distinct property names, so these cannot fail.
  DescribeTransformProperties(*properties_, *transform_manager_).IgnoreError();
  properties_->Describe(render_data_.get(), render_data_->DescribeProperties()).IgnoreError();
  properties_->Describe(sprites_.get(), DescribeSpriteProperties(*sprites_)).IgnoreError();
  properties_->Describe(sparks_.get(), DescribeSparkProperties(*sparks_)).IgnoreError();
  properties_->Describe(emitters_.get(), DescribeSparkEmitterProperties(*emitters_))
      .IgnoreError();
}

absl::Status World::SetFloatProperty(Entity entity, absl::string_view component,
                                     absl::string_view property, float value) {
  return properties_->Set(entity, component, property, PropertyValue(value));
}

absl::StatusOr<float> World::GetFloatProperty(Entity entity, absl::string_view component,
                                              absl::string_view property) const {
  absl::StatusOr<PropertyValue> value = properties_->Get(entity, component, property);
  if (!value.ok()) return value.status();
  if (const float* f = std::get_if<float>(&*value)) return *f;
  return absl::InvalidArgumentError(absl::StrCat(
      "property '", property, "' of component '", component, "' is a ",
      PropertyTypeName(TypeOf(*value)), ", not a float"));
}

void World::RegisterSpawners() {
  // Registration of distinct names on a fresh spawner cannot fail.
  spawner_->RegisterComponentSpawner(kTransformTypeName, SpawnTransforms).IgnoreError();
  spawner_
      ->RegisterComponentSpawner(kRenderDataTypeName,
                                 [](const ComponentSpawnBatch& batch) {
                                   return SpawnWithManager(batch, WorldOf(batch).render_data(),
                                                           kRenderDataInstanceSize);
                                 })
      .IgnoreError();
  spawner_
      ->RegisterComponentSpawner(kSpriteTypeName,
                                 [](const ComponentSpawnBatch& batch) {
                                   return SpawnWithManager(batch, WorldOf(batch).sprites(),
                                                           sizeof(Sprite));
                                 })
      .IgnoreError();
  spawner_
      ->RegisterComponentSpawner(kSparkTypeName,
                                 [](const ComponentSpawnBatch& batch) {
                                   return SpawnWithManager(batch, WorldOf(batch).sparks(),
                                                           sizeof(Spark));
                                 })
      .IgnoreError();
  spawner_
      ->RegisterComponentSpawner(kSparkEmitterTypeName,
                                 [](const ComponentSpawnBatch& batch) {
                                   return SpawnWithManager(batch, WorldOf(batch).emitters(),
                                                           sizeof(SparkEmitter));
                                 })
      .IgnoreError();
}

absl::Status World::RegisterCompilers(EntityCompiler& compiler) {
  // transform/transform_resource.h's compile function; the spawn function is this
  // file's SpawnTransforms, which also registers the transforms in the entity index.
  STRATA_RETURN_IF_ERROR(RegisterTransformCompiler(compiler, kTransformSpawnOrder));
  STRATA_RETURN_IF_ERROR(compiler.RegisterComponentCompiler(
      kRenderDataTypeName, CompileRenderData, kRenderDataSpawnOrder, kRenderDataInstanceSize));
  STRATA_RETURN_IF_ERROR(compiler.RegisterComponentCompiler(
      kSpriteTypeName, CompileSprite, kSpriteSpawnOrder, sizeof(Sprite)));
  STRATA_RETURN_IF_ERROR(compiler.RegisterComponentCompiler(
      kSparkTypeName, CompileSpark, kSparkSpawnOrder, sizeof(Spark)));
  STRATA_RETURN_IF_ERROR(compiler.RegisterComponentCompiler(
      kSparkEmitterTypeName, CompileSparkEmitter, kSparkEmitterSpawnOrder,
      sizeof(SparkEmitter)));
  return absl::OkStatus();
}

absl::StatusOr<std::vector<Entity>> World::Spawn(const EntityResourceView& view,
                                                 SpawnStats* stats) {
  // The spawner destroys the partly spawned entities on a spawn function's error, and
  // every subsystem listens, so a failed spawn leaves nothing behind.
  return spawner_->Spawn(view, *entities_, this, SpawnOptions(), stats);
}

size_t World::num_transforms() const { return transforms_->size(); }

void World::UpdateTransforms() { transforms_->UpdateWorld(); }

size_t World::ComponentCount(Entity entity) const {
  size_t n = transforms_->Lookup(entity).is_valid() ? 1 : 0;
  n += sprites_->Lookup(entity, sprites_->instance_id()).is_valid() ? 1 : 0;
  n += sparks_->Lookup(entity, sparks_->instance_id()).is_valid() ? 1 : 0;
  n += emitters_->Lookup(entity, emitters_->instance_id()).is_valid() ? 1 : 0;
  n += render_data_->CountOf(entity);
  n += index_->Components(entity).size();
  return n;
}

World::MemoryReport World::Memory() const {
  MemoryReport m;
  m.entity_manager = owned_entities_ != nullptr ? entities_->MemoryUsage() : 0;
  m.transforms = transforms_->MemoryUsage();
  m.entity_index = index_->MemoryUsage();
  m.pages = pages_->MemoryUsage();
  m.render_data = render_data_->MemoryUsage();
  return m;
}

}  // namespace strata
