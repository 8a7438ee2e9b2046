// World: spawning, the one destruction path, several worlds. Transforms are checked
// through the property system ("world", "local_position"), as a tool would see them.
#include "engine/sample_components.h"
#include "engine/world.h"

#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "index/property_system.h"
#include "resource/entity_compiler.h"
#include "resource/format.h"
#include "testing/random.h"
#include "testing/status_matchers.h"

namespace strata {
namespace {

using ::strata::testing::IsOk;
using ::strata::testing::StatusIs;

constexpr char kLevel[] = R"({"entities": [
  {"name": "env", "components": [
     {"type": "transform", "name": "Transform", "position": [1, 2, 3]},
     {"type": "render_data", "name": "Fog", "density": 0.25, "color": [0.5, 0.5, 0.5, 1]},
     {"type": "render_data", "name": "Vignette", "density": 0.75}]},
  {"name": "car", "components": [
     {"type": "transform", "name": "Transform", "position": [10, 0, 0]},
     {"type": "sprite", "size": 2}],
   "children": [
     {"name": "wheel", "components": [
        {"type": "transform", "name": "Transform", "position": [1, 0, 0]},
        {"type": "sprite", "size": 0.5}],
      "children": [
        {"name": "no transform"},
        {"name": "hub", "components": [
           {"type": "transform", "position": [0, 1, 0]},
           {"type": "spark_emitter", "speed": 4}]}]}]},
  {"name": "ember", "components": [
     {"type": "spark", "velocity": [0, 1, 0], "lifetime": 0.5},
     {"type": "sprite", "position": [5, 5, 5], "size": 0.1}]}
]})";

struct CompiledLevel {
  std::vector<std::byte> blob;
  EntityResourceView view;
};

std::vector<std::byte> Compile(absl::string_view json) {
  EntityCompiler compiler;
  EXPECT_THAT(SampleRegistry().RegisterCompilers(compiler), IsOk());
  absl::StatusOr<EntityCompiler::Result> result = compiler.Compile(json, {});
  EXPECT_THAT(result.status(), IsOk());
  return result.ok() ? std::move(result->blob) : std::vector<std::byte>();
}

template <typename T>
T GetProperty(const World& world, Entity e, absl::string_view component,
              absl::string_view property) {
  absl::StatusOr<PropertyValue> v = world.properties().Get(e, component, property);
  EXPECT_THAT(v.status(), IsOk()) << component << "." << property;
  if (!v.ok() || !std::holds_alternative<T>(*v)) return T{};
  return std::get<T>(*v);
}

TEST(World, SpawnsEveryComponentTypeAndRegistersNames) {
  const std::vector<std::byte> blob = Compile(kLevel);
  STRATA_ASSERT_OK_AND_ASSIGN(EntityResourceView view, EntityResourceView::Create(blob));
  auto demo_world = DemoWorld::Create();
  ASSERT_TRUE(demo_world.ok());
  DemoWorld& world = **demo_world;
  SpawnStats stats;
  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<Entity> e, world.Spawn(view, &stats));
  ASSERT_EQ(e.size(), 6u);  // env, car, wheel, no transform, hub, ember
  EXPECT_TRUE(stats.skipped_types.empty());
  EXPECT_EQ(stats.types_spawned, 5u);
  EXPECT_EQ(world.entities().size(), 6u);
  const Entity env = e[0], car = e[1], wheel = e[2], bare = e[3], hub = e[4], ember = e[5];

  EXPECT_FLOAT_EQ(GetProperty<float>(world.world(), env, "Fog", "density"), 0.25f);
  EXPECT_FLOAT_EQ(GetProperty<float>(world.world(), env, "Vignette", "density"), 0.75f);
  EXPECT_EQ(world.render_data().size(), 2u);
  EXPECT_FLOAT_EQ(GetProperty<float>(world.world(), car, "sprite", "size"), 2.0f);
  EXPECT_FLOAT_EQ(GetProperty<float>(world.world(), hub, "spark_emitter", "speed"), 4.0f);
  EXPECT_FLOAT_EQ(GetProperty<float>(world.world(), ember, "spark", "lifetime"), 0.5f);
  // The hub's transform is linked to its nearest ancestor with one (the wheel), so
  // world = hub local * wheel local * car local: translation (11, 1, 0).
  const Matrix4x4 hub_world = GetProperty<Matrix4x4>(world.world(), hub, "transform", "world");
  EXPECT_FLOAT_EQ(hub_world.m[12], 11.0f);
  EXPECT_FLOAT_EQ(hub_world.m[13], 1.0f);
  EXPECT_FLOAT_EQ(hub_world.m[14], 0.0f);
  // Moving the car by name moves its descendants at once.
  ASSERT_THAT(world.properties().Set(car, "Transform", "local_position", Vector3{20, 0, 0}),
              IsOk());
  EXPECT_FLOAT_EQ(GetProperty<Matrix4x4>(world.world(), wheel, "Transform", "world").m[12], 21.0f);
  EXPECT_FLOAT_EQ(GetProperty<Matrix4x4>(world.world(), hub, "transform", "world").m[12], 21.0f);

  EXPECT_EQ(world.ComponentCount(bare), 0u);
  EXPECT_EQ(world.ComponentCount(env), 1u + 2u + 3u);  // transform, 2 render data, 3 names
  EXPECT_EQ(world.ComponentCount(car), 2u + 2u);
}

TEST(World, SetAndGetFloatPropertyByName) {
  const std::vector<std::byte> blob = Compile(kLevel);
  STRATA_ASSERT_OK_AND_ASSIGN(EntityResourceView view, EntityResourceView::Create(blob));
  auto demo_world = DemoWorld::Create();
  ASSERT_TRUE(demo_world.ok());
  DemoWorld& world = **demo_world;
  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<Entity> e, world.Spawn(view));
  ASSERT_THAT(world.SetFloatProperty(e[0], "Fog", "density", 0.5f), IsOk());
  STRATA_ASSERT_OK_AND_ASSIGN(float fog, world.GetFloatProperty(e[0], "Fog", "density"));
  EXPECT_EQ(fog, 0.5f);
  // Vignette is another instance of the same manager: unchanged.
  STRATA_ASSERT_OK_AND_ASSIGN(float vignette,
                              world.GetFloatProperty(e[0], "Vignette", "density"));
  EXPECT_EQ(vignette, 0.75f);
  // Below Min(0): ranges check authored levels; a set by name stores it, as a
  // system's write would.
  ASSERT_THAT(world.SetFloatProperty(e[0], "Fog", "density", -1.0f), IsOk());
  STRATA_ASSERT_OK_AND_ASSIGN(fog, world.GetFloatProperty(e[0], "Fog", "density"));
  EXPECT_EQ(fog, -1.0f);
  EXPECT_THAT(world.SetFloatProperty(e[0], "Haze", "density", 1.0f),
              StatusIs(absl::StatusCode::kNotFound));
  EXPECT_THAT(world.GetFloatProperty(e[0], "Fog", "color").status(),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(world.GetFloatProperty(e[0], "Fog", "thickness").status(),
              StatusIs(absl::StatusCode::kNotFound));
}

TEST(World, DestroyRemovesEverythingEverywhere) {
  const std::vector<std::byte> blob = Compile(kLevel);
  STRATA_ASSERT_OK_AND_ASSIGN(EntityResourceView view, EntityResourceView::Create(blob));
  auto demo_world = DemoWorld::Create();
  ASSERT_TRUE(demo_world.ok());
  DemoWorld& world = **demo_world;
  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<Entity> e, world.Spawn(view));
  // One entity through World::Destroy, the rest directly through the manager: both are
  // the same path.
  ASSERT_THAT(world.Destroy(e[0]), IsOk());
  EXPECT_EQ(world.ComponentCount(e[0]), 0u);
  EXPECT_EQ(world.render_data().size(), 0u);
  EXPECT_THAT(world.properties().Get(e[0], "Fog", "density").status(),
              StatusIs(absl::StatusCode::kNotFound));
  EXPECT_THAT(world.Destroy(e[0]), StatusIs(absl::StatusCode::kNotFound));
  ASSERT_THAT(world.entities().DestroyBatch(absl::MakeConstSpan(e).subspan(1)), IsOk());
  for (Entity d : e) EXPECT_EQ(world.ComponentCount(d), 0u) << d;
  EXPECT_EQ(world.entities().size(), 0u);
  EXPECT_EQ(world.index().num_entities(), 0u);
  world.pages().ReleaseEmptyPages();
  EXPECT_EQ(world.pages().allocated_data_pages(), 0u);
  EXPECT_EQ(world.pages().allocated_entity_pages(), 0u);
  EXPECT_EQ(world.index().CollectGarbage() > 0, true);
  EXPECT_EQ(world.index().num_prototypes(), 0u);
}

TEST(World, DestroyTakesTransformChildrenUnlessAskedNotTo) {
  const std::vector<std::byte> blob = Compile(kLevel);
  STRATA_ASSERT_OK_AND_ASSIGN(EntityResourceView view, EntityResourceView::Create(blob));
  STRATA_ASSERT_OK_AND_ASSIGN(std::unique_ptr<World> world, World::Create(SampleRegistry()));
  // env 0, car 1, wheel 2, "no transform" 3 (a child in the level, not in the transform
  // hierarchy), hub 4, ember 5.
  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<Entity> e, world->Spawn(view));
  ASSERT_EQ(e.size(), 6u);
  EntityManager& entities = world->entities();
  // A dead entity in the batch: NotFound, nothing changes.
  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<Entity> spare, world->Spawn(view));
  ASSERT_THAT(world->DestroyBatch(spare), IsOk());
  EXPECT_THAT(world->DestroyBatch({e[1], spare[0]}), StatusIs(absl::StatusCode::kNotFound));
  EXPECT_TRUE(entities.Alive(e[1]) && entities.Alive(e[2]) && entities.Alive(e[4]));
  ASSERT_THAT(world->Destroy(e[1]), IsOk());
  EXPECT_FALSE(entities.Alive(e[1]));
  EXPECT_FALSE(entities.Alive(e[2]));
  EXPECT_FALSE(entities.Alive(e[4]));
  EXPECT_TRUE(entities.Alive(e[3]));
  EXPECT_TRUE(entities.Alive(e[0]) && entities.Alive(e[5]));
  EXPECT_EQ(world->ComponentCount(e[4]), 0u);

  // Keeping the children: the wheel becomes a root, the hub stays its child.
  STRATA_ASSERT_OK_AND_ASSIGN(e, world->Spawn(view));
  ASSERT_THAT(world->DestroyKeepingChildren(e[1]), IsOk());
  TransformComponent& transforms = world->transforms();
  ASSERT_TRUE(entities.Alive(e[2]));
  EXPECT_FALSE(transforms.Parent(transforms.Lookup(e[2])).is_valid());
  EXPECT_EQ(transforms.Parent(transforms.Lookup(e[4])), transforms.Lookup(e[2]));

  // A child named in the batch before its parent is destroyed once.
  STRATA_ASSERT_OK_AND_ASSIGN(e, world->Spawn(view));
  ASSERT_THAT(world->DestroyBatch({e[4], e[2], e[1]}), IsOk());
  EXPECT_FALSE(entities.Alive(e[1]) || entities.Alive(e[2]) || entities.Alive(e[4]));
  // Deep: a chain of 1000 transforms goes with its root.
  std::vector<Entity> chain(1000);
  entities.CreateBatch(absl::MakeSpan(chain));
  TransformHandle parent;
  for (Entity c : chain) {
    STRATA_ASSERT_OK_AND_ASSIGN(TransformHandle t, transforms.Create(c, Matrix4x4::Identity()));
    if (parent.is_valid()) {
      ASSERT_TRUE(transforms.Link(t, parent).ok());
    }
    parent = t;
  }
  const size_t before = entities.size();
  ASSERT_THAT(world->Destroy(chain[0]), IsOk());
  EXPECT_EQ(entities.size(), before - 1000);
}

TEST(World, RespawnAfterDestroyIsIdentical) {
  const std::vector<std::byte> blob = Compile(kLevel);
  STRATA_ASSERT_OK_AND_ASSIGN(EntityResourceView view, EntityResourceView::Create(blob));
  auto demo_world = DemoWorld::Create();
  ASSERT_TRUE(demo_world.ok());
  DemoWorld& world = **demo_world;
  for (int round = 0; round < 5; ++round) {
    STRATA_ASSERT_OK_AND_ASSIGN(std::vector<Entity> e, world.Spawn(view));
    EXPECT_FLOAT_EQ(GetProperty<float>(world.world(), e[0], "Fog", "density"), 0.25f);
    EXPECT_EQ(world.entities().size(), 6u);
    ASSERT_THAT(world.DestroyBatch(e), IsOk());
  }
  EXPECT_EQ(world.render_data().size(), 0u);
}

TEST(World, TwoWorldsShareOneEntity) {
  World game;
  const ComponentRegistry transform_only;
  auto inventory_world = World::Create(transform_only, game.entities());
  ASSERT_TRUE(inventory_world.ok());
  World& inventory = **inventory_world;
  const Entity pickaxe = game.entities().Create();
  const IdString32 transform("Transform");
  // Each world's manager indexes its own instance in its own world.
  ASSERT_TRUE(game.transform_manager().Create(pickaxe, transform).ok());
  ASSERT_TRUE(inventory.transform_manager().Create(pickaxe, transform).ok());
  EXPECT_EQ(game.index().FindComponentManager(pickaxe, transform), &game.transform_manager());
  EXPECT_EQ(inventory.index().FindComponentManager(pickaxe, transform),
            &inventory.transform_manager());
  ASSERT_THAT(game.properties().Set(pickaxe, "Transform", "local_position", Vector3{100, 0, 0}),
              IsOk());
  ASSERT_THAT(
      inventory.properties().Set(pickaxe, "Transform", "local_position", Vector3{0, 0, 2}),
      IsOk());
  EXPECT_FLOAT_EQ(GetProperty<Matrix4x4>(game, pickaxe, "Transform", "world").m[12], 100.0f);
  EXPECT_FLOAT_EQ(GetProperty<Matrix4x4>(inventory, pickaxe, "Transform", "world").m[12], 0.0f);
  EXPECT_FLOAT_EQ(GetProperty<Matrix4x4>(inventory, pickaxe, "Transform", "world").m[14], 2.0f);
  // Destroyed once, gone from both worlds.
  ASSERT_THAT(game.Destroy(pickaxe), IsOk());
  EXPECT_EQ(game.ComponentCount(pickaxe), 0u);
  EXPECT_EQ(inventory.ComponentCount(pickaxe), 0u);
}

TEST(RenderDataManager, CreateRejectsEntitiesThatAreNotAlive) {
  EntityManager::Options options;
  options.min_free_indices = 0;  // reuse a slot at once, to make a stale handle
  EntityManager entities(options);
  RenderDataManager render(entities, "render_data");
  const IdString32 fog("Fog");
  const Entity dead = entities.Create();
  ASSERT_THAT(entities.Destroy(dead), IsOk());
  const Entity alive = entities.Create();  // dead's slot, next generation
  for (Entity e : {dead, Entity(99, 0)}) {
    EXPECT_THAT(render.Create(e, fog).status(), StatusIs(absl::StatusCode::kNotFound)) << e;
  }
  EXPECT_EQ(render.size(), 0u);
  const std::vector<RenderData> data(2);
  const std::vector<uint32_t> names = {fog.value(), fog.value()};
  EXPECT_THAT(render.Spawn({alive, dead}, names, data), StatusIs(absl::StatusCode::kNotFound));
  EXPECT_EQ(render.size(), 0u);
  EXPECT_THAT(render.Create(alive, fog).status(), IsOk());
}

// Under ASan, a store that still used its freed manager fails here.
TEST(RenderDataManager, ManagerMayBeDestroyedFirst) {
  auto entities = std::make_unique<EntityManager>();
  auto render = std::make_unique<RenderDataManager>(*entities, "render_data");
  const Entity e = entities->Create();
  ASSERT_THAT(render->Create(e, IdString32("Fog")).status(), IsOk());
  entities.reset();
  EXPECT_EQ(render->CountOf(e), 1u);  // kept: the entity was never destroyed
  EXPECT_THAT(render->Create(e, IdString32("Haze")).status(),
              StatusIs(absl::StatusCode::kNotFound));
  EXPECT_TRUE(render->Destroy(e, IdString32("Fog")));
  render.reset();
}

TEST(World, SharedManagerMayBeDestroyedBeforeTheWorld) {
  auto entities = std::make_unique<EntityManager>();
  STRATA_ASSERT_OK_AND_ASSIGN(std::unique_ptr<World> world, World::Create(SampleRegistry(), *entities));
  const std::vector<std::byte> blob = Compile(kLevel);
  absl::StatusOr<EntityResourceView> view = EntityResourceView::Create(blob);
  ASSERT_THAT(view.status(), IsOk());
  ASSERT_THAT(world->Spawn(*view).status(), IsOk());
  EXPECT_EQ(entities->destroy_listeners(), 4u);  // transforms, index and names, pages, render data
  entities.reset();
  world.reset();  // every member's destructor and the index listener's
}

TEST(World, SpawnFailureLeavesNothingBehind) {
  // A hand-made blob whose sprite section has the wrong stride: the spawn fails after
  // the transforms were created, and everything is destroyed again.
  EntityResourceContents contents;
  contents.parent_index = {kNoParent, 0};
  ComponentTypeContents& render = contents.component_types.emplace_back();
  render.type = IdString32("render_data");
  render.instance_stride = 20u;
  render.layout_fingerprint = SampleRegistry().Find("render_data")->fingerprint();
  render.entity_index = {0};
  render.names = {IdString32("Fog").value()};
  render.data.resize(20u);
  ComponentTypeContents& sprite = contents.component_types.emplace_back();
  sprite.type = IdString32("sprite");
  sprite.instance_stride = 4;
  sprite.entity_index = {1};
  sprite.names = {IdString32("sprite").value()};
  sprite.data.resize(4);
  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<std::byte> blob, WriteEntityResource(contents));
  STRATA_ASSERT_OK_AND_ASSIGN(EntityResourceView view, EntityResourceView::Create(blob));
  auto demo_world = DemoWorld::Create();
  ASSERT_TRUE(demo_world.ok());
  DemoWorld& world = **demo_world;
  // The render data spawns, then the sprite section (no declared layout) is refused.
  EXPECT_THAT(world.Spawn(view).status(),
              StatusIs(absl::StatusCode::kFailedPrecondition, ::testing::HasSubstr("\"sprite\"")));
  EXPECT_EQ(world.entities().size(), 0u);
  EXPECT_EQ(world.render_data().size(), 0u);
  EXPECT_EQ(world.index().num_entities(), 0u);
}

TEST(World, SpritesNamedOtherwiseAreRejectedAtCompileTime) {
  EntityCompiler compiler;
  ASSERT_THAT(SampleRegistry().RegisterCompilers(compiler), IsOk());
  EXPECT_THAT(compiler
                  .Compile(R"({"entities": [{"components": [
                      {"type": "sprite", "name": "Body"}]}]})",
                           {})
                  .status(),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(compiler
                  .Compile(R"({"entities": [{"components": [
                      {"type": "transform", "rotation": [0, 0, 0, 0]}]}]})",
                           {})
                  .status(),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(compiler
                  .Compile(R"({"entities": [{"components": [
                      {"type": "render_data", "density": -1}]}]})",
                           {})
                  .status(),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(compiler
                  .Compile(R"({"entities": [{"components": [
                      {"type": "spark", "lifetime": "long"}]}]})",
                           {})
                  .status(),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(SampleRegistry().RegisterCompilers(compiler), StatusIs(absl::StatusCode::kAlreadyExists));
}

}  // namespace
}  // namespace strata
