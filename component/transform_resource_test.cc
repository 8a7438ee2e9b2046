#include "component/transform_resource.h"

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/matrix.h"
#include "entity/entity_manager.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "resource/entity_compiler.h"
#include "resource/entity_spawner.h"
#include "resource/format.h"
#include "testing/random.h"
#include "testing/status_matchers.h"
#include "transform/transform_component.h"

namespace strata {
namespace {

using ::strata::testing::IsOk;
using ::strata::testing::StatusIs;
using ::testing::HasSubstr;

void ExpectNear(const Matrix4x4& a, const Matrix4x4& b) {
  for (int i = 0; i < 16; ++i) EXPECT_NEAR(a.m[i], b.m[i], 1e-4f) << "element " << i << "\n" << a << "\n" << b;
}

struct Fixture {
  EntityCompiler compiler;
  EntitySpawner spawner;
  EntityManager entities;
  TransformComponent transforms;

  Fixture() {
    EXPECT_THAT(RegisterTransformCompiler(compiler), IsOk());
    EXPECT_THAT(RegisterTransformSpawner(spawner), IsOk());
    transforms.ConnectTo(entities);
  }

  absl::StatusOr<std::vector<Entity>> CompileAndSpawn(const std::string& json,
                                                      std::vector<std::byte>* blob_out) {
    absl::StatusOr<EntityCompiler::Result> compiled = compiler.Compile(json, {});
    if (!compiled.ok()) return compiled.status();
    *blob_out = std::move(compiled->blob);
    absl::StatusOr<EntityResourceView> view = EntityResourceView::Create(*blob_out);
    if (!view.ok()) return view.status();
    return spawner.Spawn(*view, entities, &transforms);
  }
};

constexpr char kCar[] = R"({"entities": [
  {"name": "car", "components": [{"type": "transform", "position": [10, 0, 5],
                                  "rotation": [0, 0.70710678, 0, 0.70710678], "scale": [2, 2, 2]}],
   "children": [
     {"name": "wheel", "components": [{"type": "transform", "position": [1, -0.5, 0]}],
      "children": [{"name": "hubcap", "components": [{"type": "transform", "position": [0, 0, 0.1]}]}]},
     {"name": "logic_only",
      "children": [{"name": "antenna", "components": [{"type": "transform", "position": [0, 2, 0]}]}]}]},
  {"name": "lamp", "components": [{"type": "transform", "position": [0, 3, 0], "rotation": [0, 0, 0, 2]}]}
]})";

TEST(TransformResource, SpawnLinksChildrenAndComputesWorld) {
  Fixture f;
  std::vector<std::byte> blob;
  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<Entity> e, f.CompileAndSpawn(kCar, &blob));
  ASSERT_EQ(e.size(), 6u);  // car, wheel, hubcap, logic_only, antenna, lamp
  EXPECT_EQ(f.transforms.size(), 5u);
  const auto car = f.transforms.Lookup(e[0]);
  const auto wheel = f.transforms.Lookup(e[1]);
  const auto hubcap = f.transforms.Lookup(e[2]);
  const auto antenna = f.transforms.Lookup(e[4]);
  const auto lamp = f.transforms.Lookup(e[5]);
  ASSERT_TRUE(car.is_valid() && wheel.is_valid() && hubcap.is_valid() && antenna.is_valid() && lamp.is_valid());
  EXPECT_FALSE(f.transforms.Lookup(e[3]).is_valid());

  const Matrix4x4 car_local = Matrix4x4::Compose({10, 0, 5}, {0, 0.70710678f, 0, 0.70710678f}, {2, 2, 2});
  const Matrix4x4 wheel_local = Matrix4x4::Translation(1, -0.5f, 0);
  const Matrix4x4 hubcap_local = Matrix4x4::Translation(0, 0, 0.1f);
  ExpectNear(f.transforms.Local(car), car_local);
  ExpectNear(f.transforms.World(car), car_local);
  EXPECT_EQ(f.transforms.Parent(wheel), car);
  ExpectNear(f.transforms.World(wheel), wheel_local * car_local);
  EXPECT_EQ(f.transforms.Parent(hubcap), wheel);
  ExpectNear(f.transforms.World(hubcap), hubcap_local * wheel_local * car_local);
  // antenna's parent entity has no transform: it links to the nearest ancestor's.
  EXPECT_EQ(f.transforms.Parent(antenna), car);
  ExpectNear(f.transforms.World(antenna), Matrix4x4::Translation(0, 2, 0) * car_local);
  // A non-unit rotation is normalised: (0,0,0,2) is the identity.
  EXPECT_FALSE(f.transforms.Parent(lamp).is_valid());
  ExpectNear(f.transforms.World(lamp), Matrix4x4::Translation(0, 3, 0));
  // Moving the car moves its subtree (the links are real).
  f.transforms.SetLocal(car, Matrix4x4::Identity());
  ExpectNear(f.transforms.World(hubcap), hubcap_local * wheel_local);
  EXPECT_THAT(f.transforms.CheckInvariants(), IsOk());
}

TEST(TransformResource, CompileErrorsNameTheEntity) {
  EntityCompiler compiler;
  ASSERT_THAT(RegisterTransformCompiler(compiler), IsOk());
  EXPECT_THAT(RegisterTransformCompiler(compiler), StatusIs(absl::StatusCode::kAlreadyExists));
  EXPECT_THAT(compiler.Compile(R"({"entities": [{}, {"name": "x", "components": [
                  {"type": "transform", "position": [1, 2]}]}]})", {}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("entities[1] (\"x\").components[0] \"transform\"")));
  EXPECT_THAT(compiler.Compile(R"({"entities": [{"components": [
                  {"type": "transform", "rotation": [0, 0, 0, 0]}]}]})", {}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("non-zero quaternion")));
  EXPECT_THAT(compiler.Compile(R"({"entities": [{"components": [
                  {"type": "transform", "positon": [0, 0, 0]}]}]})", {}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("unknown key \"positon\"")));
}

// Components whose squares overflow (or underflow) float still give their rotation:
// (3e38, 0, 0, 1) is a half turn about x, not the identity.
TEST(TransformResource, RotationIsNormalisedWithoutOverflow) {
  struct Case {
    const char* rotation;
    Quaternion unit;
  };
  const Case cases[] = {
      {"[3e38, 0, 0, 1]", {1, 0, 0, 0}},
      {"[-3.4e38, 0, 0, 0]", {-1, 0, 0, 0}},
      {"[0, 3e38, 0, 3e38]", {0, 0.70710678f, 0, 0.70710678f}},
      {"[3e38, 3e38, 3e38, 3e38]", {0.5f, 0.5f, 0.5f, 0.5f}},
      {"[1e-30, 0, 0, 0]", {1, 0, 0, 0}},
      {"[0, 0, 1e-45, 1e-45]", {0, 0, 0.70710678f, 0.70710678f}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.rotation);
    Fixture f;
    std::vector<std::byte> blob;
    STRATA_ASSERT_OK_AND_ASSIGN(
        std::vector<Entity> e,
        f.CompileAndSpawn(absl::StrCat(R"({"entities": [{"components": [{"type": "transform", "rotation": )",
                                       c.rotation, "}]}]}"),
                          &blob));
    ASSERT_EQ(e.size(), 1u);
    const Matrix4x4 local = f.transforms.Local(f.transforms.Lookup(e[0]));
    ExpectNear(local, Matrix4x4::Compose({0, 0, 0}, c.unit, {1, 1, 1}));
  }
  // The half turn about x, spelled out: diagonal (1, -1, -1).
  Fixture f;
  std::vector<std::byte> blob;
  STRATA_ASSERT_OK_AND_ASSIGN(
      std::vector<Entity> e,
      f.CompileAndSpawn(R"({"entities": [{"components": [{"type": "transform", "rotation": [3e38, 0, 0, 1]}]}]})",
                        &blob));
  const Matrix4x4 local = f.transforms.Local(f.transforms.Lookup(e[0]));
  EXPECT_NEAR(local.m[0], 1, 1e-6f);
  EXPECT_NEAR(local.m[5], -1, 1e-6f);
  EXPECT_NEAR(local.m[10], -1, 1e-6f);
}

TEST(TransformResource, TwoTransformsOnOneEntityRollsBack) {
  Fixture f;
  std::vector<std::byte> blob;
  EXPECT_FALSE(f.CompileAndSpawn(R"({"entities": [{"components": [
      {"type": "transform", "name": "a"}, {"type": "transform", "name": "b"}]}]})", &blob).ok());
  EXPECT_EQ(f.entities.size(), 0u);
  EXPECT_EQ(f.transforms.size(), 0u);
}

TEST(TransformResource, WrongStrideIsDataLoss) {
  EntitySpawner spawner;
  ASSERT_THAT(RegisterTransformSpawner(spawner), IsOk());
  EntityResourceContents contents;
  contents.parent_index = {kNoParent};
  ComponentTypeContents& type = contents.component_types.emplace_back();
  type.type = IdString32(kTransformTypeName);
  type.instance_stride = 12;
  type.entity_index = {0};
  type.names = {0};
  type.data.resize(12);
  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<std::byte> blob, WriteEntityResource(contents));
  STRATA_ASSERT_OK_AND_ASSIGN(EntityResourceView view, EntityResourceView::Create(blob));
  EntityManager entities;
  TransformComponent transforms;
  EXPECT_THAT(spawner.Spawn(view, entities, &transforms),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("stride 12")));
  EXPECT_EQ(entities.size(), 0u);
}

TEST(TransformResource, ContextAccessorAndLevelRestart) {
  struct World {
    int other = 0;
    TransformComponent transforms;
  };
  EntityCompiler compiler;
  ASSERT_THAT(RegisterTransformCompiler(compiler), IsOk());
  EntitySpawner spawner;
  ASSERT_THAT(RegisterTransformSpawner(spawner, [](void* context) {
    return &static_cast<World*>(context)->transforms;
  }), IsOk());
  STRATA_ASSERT_OK_AND_ASSIGN(EntityCompiler::Result compiled, compiler.Compile(kCar, {}));
  STRATA_ASSERT_OK_AND_ASSIGN(EntityResourceView view, EntityResourceView::Create(compiled.blob));
  EntityManager entities;  // declared first: it must outlive the connected component
  World world;
  world.transforms.ConnectTo(entities);
  for (int restart = 0; restart < 50; ++restart) {
    STRATA_ASSERT_OK_AND_ASSIGN(std::vector<Entity> e, spawner.Spawn(view, entities, &world));
    ASSERT_EQ(world.transforms.size(), 5u);
    const auto hubcap = world.transforms.Lookup(e[2]);
    ASSERT_TRUE(hubcap.is_valid());
    EXPECT_EQ(world.transforms.Parent(hubcap), world.transforms.Lookup(e[1]));
    ASSERT_THAT(entities.DestroyBatch(e), IsOk());
    ASSERT_EQ(world.transforms.size(), 0u);
  }
}

// Random hierarchies: every spawned world matrix equals the product of locals up the
// resource's parent chain (the naive model), skipping entities without a transform.
TEST(TransformResource, RandomHierarchiesMatchNaiveWorld) {
  testing::Random rng(testing::TestSeed());
  SCOPED_TRACE(rng.DescribeSeed());
  for (int iteration = 0; iteration < 20; ++iteration) {
    Fixture f;
    const int n = static_cast<int>(rng.UniformInt(1, 60));
    std::vector<int> parent(n, -1);
    std::vector<bool> has(n);
    std::vector<Matrix4x4> local(n);
    // Build JSON depth-first: entity i's children are the later entities naming it.
    for (int i = 1; i < n; ++i) parent[i] = rng.Bernoulli(0.2) ? -1 : static_cast<int>(rng.UniformIndex(i));
    std::vector<std::string> text(n);
    for (int i = 0; i < n; ++i) {
      has[i] = rng.Bernoulli(0.8);
      const float x = rng.UniformFloat(-5, 5), y = rng.UniformFloat(-5, 5), z = rng.UniformFloat(-5, 5);
      const float angle = rng.UniformFloat(0, 3);
      const float s = std::sin(angle / 2), c = std::cos(angle / 2);
      local[i] = Matrix4x4::Compose({x, y, z}, {0, s, 0, c}, {1, 1, 1});
      if (has[i]) {
        text[i] = absl::StrCat("{\"type\": \"transform\", \"position\": [", x, ",", y, ",", z,
                               "], \"rotation\": [0,", s, ",0,", c, "]}");
      }
    }
    // Pre-order numbering must match the model's: emit children in index order, and the
    // model's indices are already pre-order only if we renumber; so renumber via DFS.
    std::vector<std::vector<int>> kids(n);
    std::vector<int> roots;
    for (int i = 0; i < n; ++i) (parent[i] < 0 ? roots : kids[parent[i]]).push_back(i);
    std::vector<int> order;  // resource index -> model index
    std::function<std::string(int)> emit = [&](int i) {
      order.push_back(i);
      std::string s = absl::StrCat("{\"components\": [", text[i], "], \"children\": [");
      for (size_t k = 0; k < kids[i].size(); ++k) s += (k ? "," : "") + emit(kids[i][k]);
      return s + "]}";
    };
    std::string json = "{\"entities\": [";
    for (size_t r = 0; r < roots.size(); ++r) json += (r ? "," : "") + emit(roots[r]);
    json += "]}";
    std::vector<std::byte> blob;
    STRATA_ASSERT_OK_AND_ASSIGN(std::vector<Entity> e, f.CompileAndSpawn(json, &blob));
    for (int r = 0; r < n; ++r) {
      const int i = order[r];
      const auto instance = f.transforms.Lookup(e[r]);
      ASSERT_EQ(instance.is_valid(), has[i]);
      if (!has[i]) continue;
      Matrix4x4 expected = local[i];
      for (int a = parent[i]; a >= 0; a = parent[a]) {
        if (has[a]) expected = expected * local[a];
      }
      for (int k = 0; k < 16; ++k) ASSERT_NEAR(f.transforms.World(instance).m[k], expected.m[k], 1e-3f);
    }
  }
}

}  // namespace
}  // namespace strata
