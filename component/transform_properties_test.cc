#include "component/transform_properties.h"

#include <cmath>
#include <variant>

#include "base/id_string.h"
#include "entity/entity_manager.h"
#include "gtest/gtest.h"
#include "index/entity_index.h"
#include "index/property_system.h"
#include "testing/random.h"
#include "testing/status_matchers.h"

namespace strata {
namespace {

using ::strata::testing::IsOk;
using ::strata::testing::StatusIs;

class TransformPropertiesTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_THAT(DescribeTransformProperties(properties_, transforms_), IsOk()); }

  Entity Spawn() {
    const Entity e = entities_.Create();
    EXPECT_TRUE(transforms_.Create(e, name_).ok());
    EXPECT_THAT(index_.AddInstance(e, &transforms_, name_), IsOk());
    return e;
  }

  template <typename T>
  T Get(Entity e, absl::string_view property) {
    absl::StatusOr<PropertyValue> v = properties_.Get(e, "Transform", property);
    EXPECT_THAT(v.status(), IsOk());
    if (!v.ok() || !std::holds_alternative<T>(*v)) {
      ADD_FAILURE() << property << " has the wrong type";
      return T{};
    }
    return std::get<T>(*v);
  }

  EntityManager entities_;
  TransformComponentManager transforms_;
  EntityIndex index_;
  PropertySystem properties_{&index_};
  const IdString32 name_{"Transform"};
};

void ExpectNear(const Vector3& a, const Vector3& b, float tolerance = 1e-4f) {
  EXPECT_NEAR(a.x, b.x, tolerance);
  EXPECT_NEAR(a.y, b.y, tolerance);
  EXPECT_NEAR(a.z, b.z, tolerance);
}

// An adapter of no component aborts at construction, in every build mode (this test
// also runs under -c opt), not at the first Create or Lookup.
TEST(TransformComponentManagerDeathTest, NullComponentAborts) {
  EXPECT_DEATH(TransformComponentManager manager(nullptr),
               "TransformComponentManager: the TransformComponent is null");
}

TEST_F(TransformPropertiesTest, NewTransformIsIdentity) {
  const Entity e = Spawn();
  ExpectNear(Get<Vector3>(e, "local_position"), Vector3{0, 0, 0});
  ExpectNear(Get<Vector3>(e, "local_scale"), Vector3{1, 1, 1});
  const Quaternion q = Get<Quaternion>(e, "local_rotation");
  EXPECT_EQ(q.w, 1.0f);
  const Matrix4x4 world = Get<Matrix4x4>(e, "world");
  for (int i = 0; i < 16; ++i) EXPECT_EQ(world.m[i], (i % 5 == 0) ? 1.0f : 0.0f) << i;
}

TEST_F(TransformPropertiesTest, SettingPositionMovesChildrenInWorld) {
  const Entity parent = Spawn();
  const Entity child = Spawn();
  ASSERT_THAT(transforms_.Link(child, parent), IsOk());
  ASSERT_THAT(properties_.Set(child, "Transform", "local_position", Vector3{1, 0, 0}), IsOk());
  ASSERT_THAT(properties_.Set(parent, "Transform", "local_position", Vector3{10, 20, 30}),
              IsOk());
  const Matrix4x4 world = Get<Matrix4x4>(child, "world");
  EXPECT_FLOAT_EQ(world.m[12], 11.0f);
  EXPECT_FLOAT_EQ(world.m[13], 20.0f);
  EXPECT_FLOAT_EQ(world.m[14], 30.0f);
  // The child's local position is unchanged by its parent's move.
  ExpectNear(Get<Vector3>(child, "local_position"), Vector3{1, 0, 0});
}

TEST_F(TransformPropertiesTest, ScaleAndRotationComposeWithParent) {
  const Entity parent = Spawn();
  const Entity child = Spawn();
  ASSERT_THAT(transforms_.Link(child, parent), IsOk());
  ASSERT_THAT(properties_.Set(child, "Transform", "local_position", Vector3{1, 0, 0}), IsOk());
  ASSERT_THAT(properties_.Set(parent, "Transform", "local_scale", Vector3{2, 2, 2}), IsOk());
  // 90 degrees about y: x -> -z in the row-vector convention (p * R).
  const float h = std::sqrt(0.5f);
  ASSERT_THAT(properties_.Set(parent, "Transform", "local_rotation", Quaternion{0, h, 0, h}),
              IsOk());
  const Matrix4x4 world = Get<Matrix4x4>(child, "world");
  EXPECT_NEAR(world.m[12], 0.0f, 1e-5f);
  EXPECT_NEAR(world.m[13], 0.0f, 1e-5f);
  EXPECT_NEAR(std::fabs(world.m[14]), 2.0f, 1e-5f);
  ExpectNear(Get<Vector3>(parent, "local_scale"), Vector3{2, 2, 2});
  const Quaternion q = Get<Quaternion>(parent, "local_rotation");
  EXPECT_NEAR(q.y, h, 1e-5f);
  EXPECT_NEAR(q.w, h, 1e-5f);
}

TEST_F(TransformPropertiesTest, RandomPartsRoundTrip) {
  strata::testing::Random rng(strata::testing::TestSeed());
  SCOPED_TRACE(rng.DescribeSeed());
  const Entity e = Spawn();
  for (int step = 0; step < 500; ++step) {
    const Vector3 position{rng.UniformFloat(-100.0f, 100.0f), rng.UniformFloat(-100.0f, 100.0f),
                           rng.UniformFloat(-100.0f, 100.0f)};
    const Vector3 scale{rng.UniformFloat(0.1f, 5.0f), rng.UniformFloat(0.1f, 5.0f),
                        rng.UniformFloat(0.1f, 5.0f)};
    Quaternion q{rng.UniformFloat(-1.0f, 1.0f), rng.UniformFloat(-1.0f, 1.0f), rng.UniformFloat(-1.0f, 1.0f),
              rng.UniformFloat(0.1f, 1.0f)};
    const float n = std::sqrt(q.x * q.x + q.y * q.y + q.z * q.z + q.w * q.w);
    q = Quaternion{q.x / n, q.y / n, q.z / n, q.w / n};
    ASSERT_THAT(properties_.Set(e, "Transform", "local_scale", scale), IsOk());
    ASSERT_THAT(properties_.Set(e, "Transform", "local_rotation", q), IsOk());
    ASSERT_THAT(properties_.Set(e, "Transform", "local_position", position), IsOk());
    ExpectNear(Get<Vector3>(e, "local_position"), position, 1e-3f);
    ExpectNear(Get<Vector3>(e, "local_scale"), scale, 1e-3f);
    const Quaternion r = Get<Quaternion>(e, "local_rotation");
    EXPECT_NEAR(std::fabs(r.x * q.x + r.y * q.y + r.z * q.z + r.w * q.w), 1.0f, 1e-3f);
    const Matrix4x4 world = Get<Matrix4x4>(e, "world");  // a root: world == local
    EXPECT_NEAR(world.m[12], position.x, 1e-3f);
    EXPECT_NEAR(world.m[13], position.y, 1e-3f);
    EXPECT_NEAR(world.m[14], position.z, 1e-3f);
  }
}

TEST_F(TransformPropertiesTest, ErrorsAreReported) {
  const Entity e = Spawn();
  EXPECT_THAT(properties_.Set(e, "Transform", "world", Matrix4x4{}),
              StatusIs(absl::StatusCode::kFailedPrecondition));
  EXPECT_THAT(properties_.Set(e, "Transform", "local_position", 1.0f),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(properties_.Set(e, "Transform", "local_scale", Vector3{1, 0, 1}),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(properties_.Set(e, "Transform", "local_rotation", Quaternion{0, 0, 0, 0}),
              StatusIs(absl::StatusCode::kInvalidArgument));
  // A rotation is a quaternion, not any four floats.
  EXPECT_THAT(properties_.Set(e, "Transform", "local_rotation", Vector4{0, 0, 0, 1}),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(properties_.Set(e, "Transform", "local_position", Vector3{NAN, 0, 0}),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(properties_.Get(e, "Transform", "local_velocity").status(),
              StatusIs(absl::StatusCode::kNotFound));
  // After a failed set the value is unchanged.
  ExpectNear(Get<Vector3>(e, "local_scale"), Vector3{1, 1, 1});
}

TEST_F(TransformPropertiesTest, DestroyedTransformIsNotFound) {
  const Entity e = Spawn();
  EXPECT_TRUE(transforms_.Destroy(e, name_));
  EXPECT_FALSE(transforms_.Destroy(e, name_));
  EXPECT_FALSE(transforms_.Lookup(e, name_).is_valid());
  // Still registered in the index, but the manager no longer has the instance.
  EXPECT_THAT(properties_.Get(e, "Transform", "local_position").status(),
              StatusIs(absl::StatusCode::kNotFound));
  EXPECT_THAT(transforms_.Link(e, Spawn()), StatusIs(absl::StatusCode::kNotFound));
}

TEST_F(TransformPropertiesTest, CreateTwiceAndInvalidEntityFail) {
  const Entity e = Spawn();
  EXPECT_THAT(transforms_.Create(e, name_).status(),
              StatusIs(absl::StatusCode::kAlreadyExists));
  EXPECT_THAT(transforms_.Create(Entity(), name_).status(),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_EQ(transforms_.type_name(), "transform");
}

TEST_F(TransformPropertiesTest, CycleRejectedThroughLink) {
  const Entity a = Spawn();
  const Entity b = Spawn();
  ASSERT_THAT(transforms_.Link(b, a), IsOk());
  EXPECT_THAT(transforms_.Link(a, b), StatusIs(absl::StatusCode::kInvalidArgument));
}

}  // namespace
}  // namespace strata
