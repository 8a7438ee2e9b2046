#include "index/property_system.h"

#include <memory>
#include <string>
#include <vector>

#include "base/id_string.h"
#include "entity/entity.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "index/entity_index.h"
#include "index/testing/render_data_manager.h"
#include "testing/random.h"
#include "testing/status_matchers.h"

namespace strata {
namespace {

using ::strata::testing::IsOk;
using ::strata::testing::Random;
using ::strata::testing::RenderDataManager;
using ::strata::testing::StatusIs;
using ::testing::AllOf;
using ::testing::HasSubstr;

// The article's entity: Fog and Vignette in one render data manager, looked up through
// the index with InstanceId = IdString32(name).
class PropertySystemTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* name : {"Fog", "Vignette"}) {
      STRATA_ASSERT_OK_AND_ASSIGN(Instance i, render_data_.Create(e_, IdString32(name)));
      (void)i;
      ASSERT_THAT(index_.AddInstance(e_, &render_data_, IdString32(name)), IsOk());
    }
    ASSERT_THAT(properties_.Describe(&render_data_, render_data_.DescribeProperties()),
                IsOk());
  }

  const Entity e_{3, 1};
  EntityIndex index_;
  RenderDataManager render_data_{"render_data"};
  PropertySystem properties_{&index_};
};

TEST_F(PropertySystemTest, SetThenGetEveryType) {
  Matrix4x4 projection;
  for (int i = 0; i < 16; ++i) projection.m[i] = static_cast<float>(i) * 0.5f;
  const std::vector<std::pair<std::string, PropertyValue>> values = {
      {"enabled", false},
      {"layer", int32_t{-7}},
      {"density", 0.25f},
      {"offset", Vector3{1, 2, 3}},
      {"colour", Vector4{0.1f, 0.2f, 0.3f, 1}},
      {"projection", projection},
      {"label", std::string("thick fog")},
  };
  for (const auto& [property, value] : values) {
    SCOPED_TRACE(property);
    ASSERT_THAT(properties_.Set(e_, "Fog", property, value), IsOk());
    STRATA_ASSERT_OK_AND_ASSIGN(PropertyValue got, properties_.Get(e_, "Fog", property));
    EXPECT_EQ(got, value);
  }
  // Vignette is a separate instance of the same manager: untouched.
  STRATA_ASSERT_OK_AND_ASSIGN(PropertyValue vignette_label,
                              properties_.Get(e_, "Vignette", "label"));
  EXPECT_EQ(vignette_label, PropertyValue(std::string()));
  // The value really lives in the manager's instance.
  const Instance fog = render_data_.Lookup(e_, IdString32("Fog"));
  ASSERT_TRUE(fog.is_valid());
  EXPECT_EQ(render_data_.data(fog).layer, -7);
  EXPECT_EQ(render_data_.data(fog).projection, projection);
}

TEST_F(PropertySystemTest, EachErrorHasItsOwnMessage) {
  EXPECT_THAT(properties_.Get(Entity(99, 0), "Fog", "density"),
              StatusIs(absl::StatusCode::kNotFound,
                       AllOf(HasSubstr("no such entity"), HasSubstr("Entity(99:0)"))));
  // A stale handle of the same slot is another entity.
  EXPECT_THAT(properties_.Get(Entity(3, 0), "Fog", "density"),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("no such entity")));
  EXPECT_THAT(properties_.Get(e_, "Bloom", "density"),
              StatusIs(absl::StatusCode::kNotFound,
                       HasSubstr("has no component named 'Bloom'")));
  EXPECT_THAT(properties_.Get(e_, "Fog", "thickness"),
              StatusIs(absl::StatusCode::kNotFound,
                       AllOf(HasSubstr("no property named 'thickness'"),
                             HasSubstr("'Fog'"), HasSubstr("render_data"))));
  EXPECT_THAT(properties_.Set(e_, "Fog", "density", int32_t{3}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       AllOf(HasSubstr("wrong type"), HasSubstr("is float, not int32"))));
  EXPECT_THAT(properties_.Set(e_, "Fog", "instance_count", int32_t{3}),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("read-only")));
  // The setter's own validation is passed through.
  EXPECT_THAT(properties_.Set(e_, "Fog", "density", -1.0f),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(">= 0")));
  // Read-only properties still read.
  STRATA_ASSERT_OK_AND_ASSIGN(PropertyValue count,
                              properties_.Get(e_, "Fog", "instance_count"));
  EXPECT_EQ(count, PropertyValue(int32_t{2}));
}

TEST_F(PropertySystemTest, IndexedButDestroyedInstanceAndUndescribedManager) {
  ASSERT_TRUE(render_data_.Destroy(e_, IdString32("Vignette")));
  EXPECT_THAT(properties_.Get(e_, "Vignette", "density"),
              StatusIs(absl::StatusCode::kNotFound,
                       HasSubstr("but that manager has no such instance")));
  // Destroy moved Fog (swap-remove); the lookup still finds it.
  ASSERT_THAT(properties_.Set(e_, "Fog", "layer", int32_t{5}), IsOk());
  EXPECT_EQ(properties_.Get(e_, "Fog", "layer").value(), PropertyValue(int32_t{5}));

  RenderDataManager undescribed("physics");
  ASSERT_TRUE(undescribed.Create(e_, IdString32("Body")).ok());
  ASSERT_THAT(index_.AddInstance(e_, &undescribed, IdString32("Body")), IsOk());
  EXPECT_THAT(properties_.Get(e_, "Body", "mass"),
              StatusIs(absl::StatusCode::kNotFound,
                       AllOf(HasSubstr("physics"), HasSubstr("no described properties"))));
}

// A manager about to be destroyed is forgotten by the index and the system: its
// entities' components are then not found, and a manager described later (possibly at
// the same address) starts with its own description, not the old getters and setters.
TEST_F(PropertySystemTest, ForgottenManagerIsNotFoundAndCanBeDescribedAgain) {
  auto doomed = std::make_unique<RenderDataManager>("doomed");
  const Entity other(4, 0);
  ASSERT_THAT(doomed->Create(other, IdString32("Fog")), IsOk());
  ASSERT_THAT(index_.AddInstance(other, doomed.get(), IdString32("Fog")), IsOk());
  ASSERT_THAT(properties_.Describe(doomed.get(), doomed->DescribeProperties()), IsOk());
  ASSERT_THAT(properties_.Set(other, "Fog", "density", 0.5f), IsOk());
  EXPECT_EQ(index_.RemoveManager(doomed.get()), 1u);
  EXPECT_TRUE(properties_.Forget(doomed.get()));
  EXPECT_FALSE(properties_.Forget(doomed.get()));
  EXPECT_EQ(properties_.FindProperty(doomed.get(), "density"), nullptr);
  doomed.reset();
  EXPECT_THAT(properties_.Get(other, "Fog", "density"), StatusIs(absl::StatusCode::kNotFound));
  auto successor = std::make_unique<RenderDataManager>("successor");
  ASSERT_THAT(properties_.Describe(successor.get(), successor->DescribeProperties()), IsOk());
  // The other manager's entity is untouched.
  ASSERT_THAT(properties_.Set(e_, "Fog", "density", 0.25f), IsOk());
  EXPECT_THAT(properties_.Get(e_, "Fog", "density"), IsOk());
}

TEST_F(PropertySystemTest, DescribeRejectsBadDescriptions) {
  EXPECT_THAT(properties_.Describe(&render_data_, {}),
              StatusIs(absl::StatusCode::kAlreadyExists));
  EXPECT_THAT(properties_.Describe(nullptr, {}), StatusIs(absl::StatusCode::kInvalidArgument));
  RenderDataManager other("other");
  auto get = [](Instance) { return 1.0f; };
  std::vector<PropertyDescriptor> twice = {PropertyDescriptor::Make<float>("x", get),
                                           PropertyDescriptor::Make<float>("x", get)};
  EXPECT_THAT(properties_.Describe(&other, twice),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("described twice")));
  std::vector<PropertyDescriptor> unnamed = {PropertyDescriptor::Make<float>("", get)};
  EXPECT_THAT(properties_.Describe(&other, unnamed),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("no name")));
  std::vector<PropertyDescriptor> no_getter = {
      PropertyDescriptor{"y", PropertyType::kFloat, nullptr, nullptr}};
  EXPECT_THAT(properties_.Describe(&other, no_getter),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("no getter")));
  // After the failures the manager can still be described once.
  EXPECT_THAT(properties_.Describe(&other, {PropertyDescriptor::Make<float>("x", get)}),
              IsOk());
  EXPECT_NE(properties_.FindProperty(&other, "x"), nullptr);
  EXPECT_EQ(properties_.FindProperty(&other, "z"), nullptr);
}

// The index is the system's one dependency: a null one aborts at construction, in
// every build mode (this test also runs under -c opt), not at the first Get.
TEST(PropertySystemDeathTest, NullIndexAborts) {
  EXPECT_DEATH(PropertySystem properties(nullptr), "PropertySystem: the index is null");
}

TEST(PropertyValue, TypesAndNames) {
  EXPECT_EQ(PropertyTypeOf<bool>(), PropertyType::kBool);
  EXPECT_EQ(PropertyTypeOf<int32_t>(), PropertyType::kInt32);
  EXPECT_EQ(PropertyTypeOf<float>(), PropertyType::kFloat);
  EXPECT_EQ(PropertyTypeOf<Vector3>(), PropertyType::kVector3);
  EXPECT_EQ(PropertyTypeOf<Vector4>(), PropertyType::kVector4);
  EXPECT_EQ(PropertyTypeOf<Quaternion>(), PropertyType::kQuaternion);
  EXPECT_EQ(PropertyTypeOf<Matrix4x4>(), PropertyType::kMatrix4x4);
  EXPECT_EQ(PropertyTypeOf<std::string>(), PropertyType::kString);
  EXPECT_EQ(PropertyTypeOf<uint32_t>(), PropertyType::kUint32);
  EXPECT_EQ(PropertyTypeOf<IdString32>(), PropertyType::kName);
  EXPECT_EQ(PropertyTypeOf<Entity>(), PropertyType::kEntity);
  EXPECT_EQ(PropertyTypeName(PropertyType::kEntity), "entity");
  EXPECT_EQ(TypeOf(PropertyValue(1.5f)), PropertyType::kFloat);
  EXPECT_EQ(PropertyTypeName(PropertyType::kMatrix4x4), "matrix4x4");
  EXPECT_EQ(PropertyTypeName(PropertyType::kVector4), "vector4");
  EXPECT_EQ(PropertyTypeName(PropertyType::kQuaternion), "quaternion");
}

TEST(PropertySystem, RandomisedAgainstTheManagersData) {
  Random rng(::strata::testing::TestSeed());
  SCOPED_TRACE(rng.DescribeSeed());
  EntityIndex index;
  RenderDataManager a("a"), b("b");
  PropertySystem properties(&index);
  ASSERT_THAT(properties.Describe(&a, a.DescribeProperties()), IsOk());
  ASSERT_THAT(properties.Describe(&b, b.DescribeProperties()), IsOk());
  const char* kNames[] = {"Fog", "Vignette", "Bloom", "Sky"};
  std::vector<Entity> entities;
  for (uint32_t i = 0; i < 50; ++i) {
    const Entity e(i, 0);
    entities.push_back(e);
    for (const char* name : kNames) {
      if (!rng.Bernoulli(0.5)) continue;
      RenderDataManager* m = rng.Bernoulli(0.5) ? &a : &b;
      ASSERT_TRUE(m->Create(e, IdString32(name)).ok());
      ASSERT_THAT(index.AddInstance(e, m, IdString32(name)), IsOk());
    }
  }
  for (int step = 0; step < 2000; ++step) {
    const Entity e = entities[rng.UniformIndex(entities.size())];
    const char* name = kNames[rng.UniformIndex(4)];
    const int32_t layer = static_cast<int32_t>(rng.UniformInt(-100, 100));
    ComponentManager* owner = index.FindComponentManager(e, IdString32(name));
    const absl::Status status = properties.Set(e, name, "layer", layer);
    if (owner == nullptr) {
      EXPECT_THAT(status, StatusIs(absl::StatusCode::kNotFound)) << step;
      continue;
    }
    ASSERT_THAT(status, IsOk()) << step;
    RenderDataManager* m = static_cast<RenderDataManager*>(owner);
    EXPECT_EQ(m->data(m->Lookup(e, IdString32(name))).layer, layer);
    EXPECT_EQ(properties.Get(e, name, "layer").value(), PropertyValue(layer));
  }
}

}  // namespace
}  // namespace strata
