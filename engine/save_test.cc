// World::Save and load: the default level round trip over every sample type, entity
// references turned into handles and back, and the errors of a bad save.
#include <cstring>
#include <fstream>
#include <limits>
#include <iterator>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "component/declare.h"
#include "component/export.h"
#include "component/registry.h"
#include "base/matrix.h"
#include "transform/transform_component.h"
#include "engine/sample_components.h"
#include "engine/world.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "resource/entity_compiler.h"
#include "testing/status_matchers.h"

namespace strata {
namespace {

using ::strata::testing::IsOk;
using ::strata::testing::StatusIs;
using ::testing::HasSubstr;

std::string ReadDefaultLevel() {
  std::ifstream in("engine/levels/default.json");
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::vector<std::byte> Compile(const ComponentRegistry& registry, const std::string& json) {
  EntityCompiler compiler;
  EXPECT_THAT(registry.RegisterCompilers(compiler), IsOk());
  absl::StatusOr<EntityCompiler::Result> result = compiler.Compile(json, {});
  EXPECT_THAT(result, IsOk());
  return result.ok() ? result->blob : std::vector<std::byte>();
}

TEST(Save, DefaultLevelRoundTripsByteForByte) {
  const std::vector<std::byte> compiled = Compile(SampleRegistry(), ReadDefaultLevel());
  STRATA_ASSERT_OK_AND_ASSIGN(EntityResourceView view, EntityResourceView::Create(compiled));
  STRATA_ASSERT_OK_AND_ASSIGN(std::unique_ptr<DemoWorld> first, DemoWorld::Create());
  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<Entity> spawned, first->Spawn(view));
  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<std::byte> a, first->world().SaveAll());
  // Every level entity has a component or a name, so the save is the compiled level.
  EXPECT_EQ(a, compiled);

  STRATA_ASSERT_OK_AND_ASSIGN(EntityResourceView saved, EntityResourceView::Create(a));
  STRATA_ASSERT_OK_AND_ASSIGN(std::unique_ptr<DemoWorld> second, DemoWorld::Create());
  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<Entity> again, second->Spawn(saved));
  ASSERT_EQ(again.size(), spawned.size());
  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<std::byte> b, second->world().SaveAll());
  EXPECT_EQ(a, b);
  // The second save is byte-identical, so every value of every type survived; names
  // and component counts too.
  for (size_t k = 0; k < spawned.size(); ++k) {
    EXPECT_EQ(first->world().EntityName(spawned[k]), second->world().EntityName(again[k]));
    EXPECT_EQ(first->ComponentCount(spawned[k]), second->ComponentCount(again[k]));
  }
  // Export of the save compiles to the same bytes.
  STRATA_ASSERT_OK_AND_ASSIGN(nlohmann::json level, ExportLevel(saved, SampleRegistry()));
  EXPECT_EQ(Compile(SampleRegistry(), level.dump()), a);
}

TEST(Save, ValuesChangedAtRunTimeAreSavedAndRestored) {
  const std::vector<std::byte> compiled = Compile(SampleRegistry(), ReadDefaultLevel());
  STRATA_ASSERT_OK_AND_ASSIGN(EntityResourceView view, EntityResourceView::Create(compiled));
  STRATA_ASSERT_OK_AND_ASSIGN(std::unique_ptr<DemoWorld> world, DemoWorld::Create());
  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<Entity> spawned, world->Spawn(view));
  const Entity env = spawned[0];
  ASSERT_THAT(world->SetFloatProperty(env, "Fog", "density", 0.75f), IsOk());
  ASSERT_THAT(world->properties().Set(env, "Transform", "local_position", Vector3{1, 2, 3}), IsOk());
  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<std::byte> blob, world->world().SaveAll());
  STRATA_ASSERT_OK_AND_ASSIGN(EntityResourceView saved, EntityResourceView::Create(blob));
  STRATA_ASSERT_OK_AND_ASSIGN(std::unique_ptr<DemoWorld> loaded, DemoWorld::Create());
  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<Entity> again, loaded->Spawn(saved));
  EXPECT_EQ(loaded->world().EntityName(again[0]), "Environment");
  STRATA_ASSERT_OK_AND_ASSIGN(float density, loaded->GetFloatProperty(again[0], "Fog", "density"));
  EXPECT_EQ(density, 0.75f);
  STRATA_ASSERT_OK_AND_ASSIGN(PropertyValue p, loaded->properties().Get(again[0], "Transform", "local_position"));
  EXPECT_EQ(std::get<Vector3>(p), (Vector3{1, 2, 3}));
  EXPECT_EQ(loaded->render_data().size(), world->render_data().size());
}

struct Link {
  Entity target;
  float weight = 1;
};

const ComponentRegistry& LinkRegistry() {
  static const ComponentRegistry* registry = [] {
    auto* r = new ComponentRegistry();
    EXPECT_THAT(r->Add(ComponentDeclaration<Link>("link").Field("target", &Link::target).Field("weight", &Link::weight).Build()),
                IsOk());
    return r;
  }();
  return *registry;
}

TEST(Save, EntityReferencesBecomeHandlesAndBackEvenInCycles) {
  const std::vector<std::byte> blob = Compile(LinkRegistry(), R"({"entities": [
      {"name": "a", "components": [{"type": "link", "target": "b"}]},
      {"name": "b", "components": [{"type": "link", "target": "a", "weight": 2}]},
      {"name": "self", "components": [{"type": "link", "target": "self"}]},
      {"components": [{"type": "link"}]}]})");
  STRATA_ASSERT_OK_AND_ASSIGN(EntityResourceView view, EntityResourceView::Create(blob));
  STRATA_ASSERT_OK_AND_ASSIGN(std::unique_ptr<World> world, World::Create(LinkRegistry()));
  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<Entity> e, world->Spawn(view));
  STRATA_ASSERT_OK_AND_ASSIGN(PageComponentManager<Link>* links, world->Pages<Link>("link"));
  EXPECT_EQ(world->pages().TryGet(e[0], links->component())->target, e[1]);
  EXPECT_EQ(world->pages().TryGet(e[1], links->component())->target, e[0]);
  EXPECT_EQ(world->pages().TryGet(e[2], links->component())->target, e[2]);
  EXPECT_FALSE(world->pages().TryGet(e[3], links->component())->target.is_valid());
  STRATA_ASSERT_OK_AND_ASSIGN(PropertyValue target, world->properties().Get(e[1], "link", "target"));
  EXPECT_EQ(std::get<Entity>(target), e[0]);
  // Typed access checks the struct and the storage.
  EXPECT_THAT(world->Pages<Sprite>("link"), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(world->Named<Link>("link"), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(world->Pages<Link>("nothing"), StatusIs(absl::StatusCode::kNotFound));

  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<std::byte> saved, world->SaveAll());
  EXPECT_EQ(saved, blob);

  // A subset: the reference from a to b dangles unless b is saved too.
  EXPECT_THAT(world->Save({e[0]}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr(absl::StrCat(e[0].DebugString(), " \"a\"'s link field \"target\" refers to ",
                                              e[1].DebugString(), ", which is alive but not saved"))));
  EXPECT_THAT(world->Save({e[2], e[3]}), IsOk());
  // A reference to a destroyed entity is saved as none.
  ASSERT_THAT(world->Destroy(e[1]), IsOk());
  STRATA_ASSERT_OK_AND_ASSIGN(saved, world->Save({e[0]}));
  STRATA_ASSERT_OK_AND_ASSIGN(EntityResourceView one, EntityResourceView::Create(saved));
  STRATA_ASSERT_OK_AND_ASSIGN(nlohmann::json level, ExportLevel(one, LinkRegistry()));
  EXPECT_TRUE(level["entities"][0]["components"][0]["target"].is_null()) << level.dump();
}

TEST(Save, AReferencedEntityWithNoComponentIsSavedWithItsHolder) {
  // Compiled without names: the target has no component and no name, so the world
  // knows it only as the holder's reference.
  EntityCompiler compiler;
  ASSERT_THAT(LinkRegistry().RegisterCompilers(compiler), IsOk());
  EntityCompiler::Options options;
  options.keep_names = false;
  STRATA_ASSERT_OK_AND_ASSIGN(EntityCompiler::Result compiled, compiler.Compile(R"({"entities": [
      {"name": "holder", "components": [{"type": "link", "target": "bare"}]},
      {"name": "bare"},
      {"name": "loner"}]})", options));
  STRATA_ASSERT_OK_AND_ASSIGN(EntityResourceView view, EntityResourceView::Create(compiled.blob));
  STRATA_ASSERT_OK_AND_ASSIGN(std::unique_ptr<World> world, World::Create(LinkRegistry()));
  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<Entity> e, world->Spawn(view));
  ASSERT_EQ(e.size(), 3u);
  EXPECT_EQ(world->Entities(), std::vector<Entity>{e[0]});

  // SaveAll takes the bare entity along (not the loner: nothing refers to it).
  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<std::byte> saved, world->SaveAll());
  STRATA_ASSERT_OK_AND_ASSIGN(EntityResourceView saved_view, EntityResourceView::Create(saved));
  EXPECT_EQ(saved_view.num_entities(), 2u);
  STRATA_ASSERT_OK_AND_ASSIGN(std::unique_ptr<World> loaded, World::Create(LinkRegistry()));
  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<Entity> again, loaded->Spawn(saved_view));
  ASSERT_EQ(again.size(), 2u);
  STRATA_ASSERT_OK_AND_ASSIGN(PageComponentManager<Link>* links, loaded->Pages<Link>("link"));
  EXPECT_EQ(loaded->pages().TryGet(again[0], links->component())->target, again[1]);
  // A fixpoint: the loaded world saves the same bytes, and the export compiles to them.
  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<std::byte> resaved, loaded->SaveAll());
  EXPECT_EQ(resaved, saved);
  STRATA_ASSERT_OK_AND_ASSIGN(nlohmann::json level, ExportLevel(saved_view, LinkRegistry()));
  EXPECT_EQ(Compile(LinkRegistry(), level.dump()), saved) << level.dump();

  // A chosen set that leaves the target out names the holder, component and field.
  EXPECT_THAT(world->Save({e[0]}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr(absl::StrCat(e[0].DebugString(), "'s link field \"target\" refers to ",
                                              e[1].DebugString(), ", which is alive but not saved"))));
}

struct Gauge {
  float level = 1;
  int32_t steps = 0;
  Quaternion turn;
};

const ComponentRegistry& GaugeRegistry() {
  static const ComponentRegistry* registry = [] {
    auto* r = new ComponentRegistry();
    EXPECT_THAT(r->Add(ComponentDeclaration<Gauge>("gauge")
                           .Field("level", &Gauge::level).Range(0, 10)
                           .Field("steps", &Gauge::steps).Min(0)
                           .Field("turn", &Gauge::turn)
                           .Build()),
                IsOk());
    return r;
  }();
  return *registry;
}

TEST(Save, ValuesOutsideTheDeclaredChecksSaveLoadAndRecompile) {
  const std::vector<std::byte> blob = Compile(GaugeRegistry(), R"({"entities": [
      {"name": "a", "components": [{"type": "gauge"}]},
      {"name": "b", "components": [{"type": "gauge"}]},
      {"name": "c", "components": [{"type": "gauge"}]}]})");
  STRATA_ASSERT_OK_AND_ASSIGN(EntityResourceView view, EntityResourceView::Create(blob));
  STRATA_ASSERT_OK_AND_ASSIGN(std::unique_ptr<World> world, World::Create(GaugeRegistry()));
  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<Entity> e, world->Spawn(view));
  PageComponentManager<Gauge>& gauges = world->Pages<Gauge>();
  // A system writes what the checks would refuse: a NaN with a payload, a negative
  // count, an all-zero quaternion, -0.0, infinity.
  Gauge* a = world->pages().TryGet(e[0], gauges.component());
  const uint32_t nan_bits = 0xffa00005u;
  std::memcpy(&a->level, &nan_bits, 4);
  a->steps = -5;
  a->turn = Quaternion{0, 0, 0, 0};
  Gauge* b = world->pages().TryGet(e[1], gauges.component());
  b->level = -0.0f;
  b->turn = Quaternion{-0.0f, 0, 0, std::numeric_limits<float>::infinity()};
  // A set by name stores what a system may write, as a spawn does: no range check.
  ASSERT_THAT(world->properties().Set(e[2], "gauge", "level", PropertyValue(16.0f)), IsOk());
  STRATA_ASSERT_OK_AND_ASSIGN(PropertyValue level, world->properties().Get(e[2], "gauge", "level"));
  EXPECT_EQ(std::get<float>(level), 16.0f);

  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<std::byte> saved, world->SaveAll());
  STRATA_ASSERT_OK_AND_ASSIGN(EntityResourceView saved_view, EntityResourceView::Create(saved));
  STRATA_ASSERT_OK_AND_ASSIGN(std::unique_ptr<World> loaded, World::Create(GaugeRegistry()));
  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<Entity> again, loaded->Spawn(saved_view));
  const Gauge* la = loaded->pages().TryGet(again[0], loaded->Pages<Gauge>().component());
  uint32_t loaded_bits;
  std::memcpy(&loaded_bits, &la->level, 4);
  EXPECT_EQ(loaded_bits, nan_bits);
  EXPECT_EQ(la->steps, -5);
  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<std::byte> resaved, loaded->SaveAll());
  EXPECT_EQ(resaved, saved);
  // The export compiles back to the same bytes.
  STRATA_ASSERT_OK_AND_ASSIGN(nlohmann::json exported, ExportLevel(saved_view, GaugeRegistry()));
  EXPECT_EQ(Compile(GaugeRegistry(), exported.dump()), saved) << exported.dump();
  const nlohmann::json& first = exported["entities"][0]["components"][0];
  EXPECT_EQ(first["level"], nlohmann::json::parse(R"({"unchecked": "nan:0xffa00005"})")) << first.dump();
  EXPECT_EQ(first["steps"], nlohmann::json::parse(R"({"unchecked": -5})")) << first.dump();
  // Authored as a plain number, the same value is refused: ranges check authoring.
  EntityCompiler compiler;
  ASSERT_THAT(GaugeRegistry().RegisterCompilers(compiler), IsOk());
  EXPECT_THAT(compiler.Compile(R"({"entities": [{"components": [{"type": "gauge", "level": 16}]}]})", {}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("\"level\": 16 is outside [0, 10]")));
}

TEST(Save, TransformsASystemLeftNonFiniteOrDegenerateSaveAndRecompile) {
  const std::vector<std::byte> blob = Compile(SampleRegistry(), R"({"entities": [
      {"name": "nan", "components": [{"type": "transform"}]},
      {"name": "flat", "components": [{"type": "transform"}]},
      {"name": "zero", "components": [{"type": "transform"}]},
      {"name": "negative_zero", "components": [{"type": "transform", "position": [-0.0, 1, 2]}]}]})");
  STRATA_ASSERT_OK_AND_ASSIGN(EntityResourceView view, EntityResourceView::Create(blob));
  STRATA_ASSERT_OK_AND_ASSIGN(std::unique_ptr<World> world, World::Create(SampleRegistry()));
  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<Entity> e, world->Spawn(view));
  TransformComponent& transforms = world->transforms();
  // A NaN with a payload, an infinity; a rotation that is all zero (the matrix's
  // rotation part collapses); the zero matrix.
  Matrix4x4 with_nan = Matrix4x4::Translation(1, 2, 3);
  const uint32_t nan_bits = 0x7fa00001u;
  std::memcpy(&with_nan.m[12], &nan_bits, 4);
  with_nan.m[13] = -std::numeric_limits<float>::infinity();
  ASSERT_TRUE(transforms.SetLocal(transforms.Lookup(e[0]),with_nan));
  ASSERT_TRUE(transforms.SetLocal(transforms.Lookup(e[1]),
                                  Matrix4x4::Compose(Vector3{4, 5, 6}, Quaternion{0, 0, 0, 0}, Vector3{1, 1, 1})));
  ASSERT_TRUE(transforms.SetLocal(transforms.Lookup(e[2]), Matrix4x4{}));

  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<std::byte> saved, world->SaveAll());
  STRATA_ASSERT_OK_AND_ASSIGN(EntityResourceView saved_view, EntityResourceView::Create(saved));
  STRATA_ASSERT_OK_AND_ASSIGN(std::unique_ptr<World> loaded, World::Create(SampleRegistry()));
  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<Entity> again, loaded->Spawn(saved_view));
  uint32_t loaded_bits;
  std::memcpy(&loaded_bits, &loaded->transforms().Local(loaded->transforms().Lookup(again[0])).m[12], 4);
  EXPECT_EQ(loaded_bits, nan_bits);
  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<std::byte> resaved, loaded->SaveAll());
  EXPECT_EQ(resaved, saved);
  STRATA_ASSERT_OK_AND_ASSIGN(nlohmann::json exported, ExportLevel(saved_view, SampleRegistry()));
  const nlohmann::json& nan = exported["entities"][0]["components"][0];
  EXPECT_EQ(nan["matrix"][12], "nan:0x7fa00001") << nan.dump();
  EXPECT_EQ(nan["matrix"][13], "-inf") << nan.dump();
  EXPECT_EQ(Compile(SampleRegistry(), exported.dump()), saved) << exported.dump();
  // The matrix form refuses what is no float, naming the element.
  EntityCompiler compiler;
  ASSERT_THAT(SampleRegistry().RegisterCompilers(compiler), IsOk());
  std::string matrix = "[1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, \"x\", 1]";
  EXPECT_THAT(compiler.Compile(absl::StrCat(R"({"entities": [{"components": [{"type": "transform", "matrix": )",
                                            matrix, "}]}]}"),
                               {}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("\"matrix[14]\": \"x\" is not a number")));
  matrix = "[1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 1e39, 1]";
  EXPECT_THAT(compiler.Compile(absl::StrCat(R"({"entities": [{"components": [{"type": "transform", "matrix": )",
                                            matrix, "}]}]}"),
                               {}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("\"matrix[14]\": number out of float range")));
}

TEST(Save, BadSetsAreErrorsAndWriteNothing) {
  World world;
  const Entity a = world.entities().Create();
  const Entity dead = world.entities().Create();
  ASSERT_THAT(world.Destroy(dead), IsOk());
  EXPECT_THAT(world.Save({a, a}), StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("given twice")));
  EXPECT_THAT(world.Save({dead}), StatusIs(absl::StatusCode::kNotFound, HasSubstr("not alive")));
  // An entity of another world's manager is not alive in this one.
  World other;
  const Entity foreign = other.entities().Create();
  other.entities().Create();
  const Entity foreign2 = other.entities().Create();
  (void)foreign;
  EXPECT_THAT(world.Save({foreign2}), StatusIs(absl::StatusCode::kNotFound));
  // Empty: a valid blob of no entities.
  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<std::byte> empty, world.Save({}));
  STRATA_ASSERT_OK_AND_ASSIGN(EntityResourceView view, EntityResourceView::Create(empty));
  EXPECT_EQ(view.num_entities(), 0u);
}

TEST(Save, ChosenSetKeepsParentsBeforeChildrenAndRootsOrphans) {
  World world;
  TransformComponent& t = world.transforms();
  const Entity root = world.entities().Create();
  const Entity mid = world.entities().Create();
  const Entity leaf = world.entities().Create();
  STRATA_ASSERT_OK_AND_ASSIGN(TransformHandle r, t.Create(root, Matrix4x4::Translation(1, 0, 0)));
  STRATA_ASSERT_OK_AND_ASSIGN(TransformHandle m, t.Create(mid, Matrix4x4::Translation(0, 2, 0)));
  STRATA_ASSERT_OK_AND_ASSIGN(TransformHandle l, t.Create(leaf, Matrix4x4::Translation(0, 0, 3)));
  ASSERT_THAT(t.Link(m, r), IsOk());
  ASSERT_THAT(t.Link(l, m), IsOk());
  // Given leaf first: the blob still puts parents first.
  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<std::byte> all, world.Save({leaf, mid, root}));
  STRATA_ASSERT_OK_AND_ASSIGN(EntityResourceView view, EntityResourceView::Create(all));
  EXPECT_THAT(view.parent_index(), ::testing::ElementsAre(kNoParent, 0u, 1u));
  // Without the middle node, the leaf's nearest saved ancestor is the root.
  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<std::byte> two, world.Save({root, leaf}));
  STRATA_ASSERT_OK_AND_ASSIGN(view, EntityResourceView::Create(two));
  EXPECT_THAT(view.parent_index(), ::testing::ElementsAre(kNoParent, 0u));
  // Without the root, the middle node is a root.
  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<std::byte> orphan, world.Save({mid, leaf}));
  STRATA_ASSERT_OK_AND_ASSIGN(view, EntityResourceView::Create(orphan));
  EXPECT_THAT(view.parent_index(), ::testing::ElementsAre(kNoParent, 0u));
  // Spawned again, the locals (and so the worlds under the same parents) are the same.
  World fresh;
  STRATA_ASSERT_OK_AND_ASSIGN(EntityResourceView whole, EntityResourceView::Create(all));
  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<Entity> e, fresh.Spawn(whole));
  EXPECT_EQ(fresh.transforms().World(fresh.transforms().Lookup(e[2])).m[12], 1.0f);
  EXPECT_EQ(fresh.transforms().World(fresh.transforms().Lookup(e[2])).m[13], 2.0f);
  EXPECT_EQ(fresh.transforms().World(fresh.transforms().Lookup(e[2])).m[14], 3.0f);
}

struct Zeta {
  float value = 0;
};
struct Alpha {
  float a = 0, b = 0, c = 0, d = 0;
  IdString32 label;
};

TEST(Save, TypeRegisteredAfterCreateDoesNotShiftTheSavedStores) {
  ComponentRegistry registry;
  ASSERT_THAT(registry.Add(ComponentDeclaration<Zeta>("zeta").Field("value", &Zeta::value).Build()),
              IsOk());
  const std::vector<std::byte> blob = Compile(registry, R"({"entities": [
      {"name": "one", "components": [{"type": "zeta", "value": 1.5}]},
      {"name": "two", "components": [{"type": "zeta", "value": 2.5}]}]})");
  STRATA_ASSERT_OK_AND_ASSIGN(EntityResourceView view, EntityResourceView::Create(blob));
  STRATA_ASSERT_OK_AND_ASSIGN(std::unique_ptr<World> world, World::Create(registry));
  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<Entity> e, world->Spawn(view));
  // "alpha" sorts before "zeta" in the registry's order, but this world has no store
  // of it: it keeps saving the types it was built with, each under its own id.
  ASSERT_THAT(registry.Add(ComponentDeclaration<Alpha>("alpha")
                               .Field("a", &Alpha::a)
                               .Field("b", &Alpha::b)
                               .Field("c", &Alpha::c)
                               .Field("d", &Alpha::d)
                               .Field("label", &Alpha::label)
                               .Build()),
              IsOk());
  EXPECT_EQ(world->Store("alpha"), nullptr);
  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<std::byte> saved, world->SaveAll());
  EXPECT_EQ(saved, blob);
  STRATA_ASSERT_OK_AND_ASSIGN(EntityResourceView again, EntityResourceView::Create(saved));
  STRATA_ASSERT_OK_AND_ASSIGN(std::unique_ptr<World> loaded, World::Create(registry));
  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<Entity> l, loaded->Spawn(again));
  ASSERT_EQ(l.size(), 2u);
  STRATA_ASSERT_OK_AND_ASSIGN(PageComponentManager<Zeta> * zeta, loaded->Pages<Zeta>("zeta"));
  ASSERT_NE(loaded->pages().TryGet(l[0], zeta->component()), nullptr);
  EXPECT_EQ(loaded->pages().TryGet(l[0], zeta->component())->value, 1.5f);
  EXPECT_EQ(loaded->pages().TryGet(l[1], zeta->component())->value, 2.5f);
  STRATA_ASSERT_OK_AND_ASSIGN(PageComponentManager<Alpha> * alpha, loaded->Pages<Alpha>("alpha"));
  EXPECT_EQ(loaded->pages().TryGet(l[0], alpha->component()), nullptr);
  EXPECT_EQ(loaded->EntityName(l[1]), "two");
}

}  // namespace
}  // namespace strata
