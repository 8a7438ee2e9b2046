// TransformComponent: creation, links, handles, batches, the destroy listener, modes.
#include "transform/transform_component.h"

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/types/span.h"
#include "base/matrix.h"
#include "entity/entity.h"
#include "entity/entity_manager.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/random.h"
#include "testing/status_matchers.h"
#include "transform/internal/transform_test_util.h"

namespace strata {
namespace {

using ::strata::testing::IsOk;
using ::strata::testing::Random;
using ::strata::testing::StatusIs;
using ::strata::transform_internal::Mode;
using ::strata::transform_internal::ModeName;
using ::strata::transform_internal::TransformModes;
using ::strata::transform_internal::WithMode;
using ::testing::HasSubstr;

INSTANTIATE_TEST_SUITE_P(Modes, TransformModes,
                         ::testing::Values(Mode::kImmediate, Mode::kDeferred), ModeName);

TEST_P(TransformModes, HeaderExample) {
  EntityManager entities;
  TransformComponent transforms(WithMode(GetParam()));
  transforms.ConnectTo(entities);
  Entity car = entities.Create(), wheel = entities.Create();
  STRATA_ASSERT_OK_AND_ASSIGN(TransformHandle c, transforms.Create(car, Matrix4x4::Translation(10, 0, 0)));
  STRATA_ASSERT_OK_AND_ASSIGN(TransformHandle w, transforms.Create(wheel, Matrix4x4::Translation(1, 0, 0)));
  STRATA_ASSERT_OK(transforms.Link(w, c));
  EXPECT_TRUE(transforms.SetLocal(c, Matrix4x4::Translation(20, 0, 0)));
  Settle(transforms);
  EXPECT_EQ(transforms.World(w), Matrix4x4::Translation(21, 0, 0));
  EXPECT_THAT(transforms.Link(c, w), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(transforms.CheckInvariants(), IsOk());
}

TEST_P(TransformModes, EmptyComponent) {
  TransformComponent tc(WithMode(GetParam()));
  EXPECT_EQ(tc.size(), 0u);
  EXPECT_FALSE(tc.Lookup(Entity(0, 0)).is_valid());
  EXPECT_FALSE(tc.IsValid(TransformHandle()));
  EXPECT_FALSE(tc.SetLocal(TransformHandle(), Matrix4x4::Identity()));
  EXPECT_FALSE(tc.DestroyEntity(Entity(3, 1)));
  EXPECT_THAT(tc.SetLocalBatch({}, {}), IsOk());
  std::vector<TransformHandle> none;
  EXPECT_THAT(tc.CreateBatch({}, {}, absl::MakeSpan(none)), IsOk());
  tc.UpdateWorld();
  EXPECT_THAT(tc.CheckInvariants(), IsOk());
}

TEST_P(TransformModes, CreateLookupAndErrors) {
  TransformComponent tc(WithMode(GetParam()));
  const Entity e(5, 2);
  STRATA_ASSERT_OK_AND_ASSIGN(TransformHandle i, tc.Create(e, Matrix4x4::Translation(1, 2, 3)));
  EXPECT_EQ(tc.Lookup(e), i);
  EXPECT_EQ(tc.entity(i), e);
  EXPECT_EQ(tc.Local(i), Matrix4x4::Translation(1, 2, 3));
  EXPECT_EQ(tc.World(i), Matrix4x4::Translation(1, 2, 3));  // a new root is current
  EXPECT_THAT(tc.Create(e, Matrix4x4::Identity()), StatusIs(absl::StatusCode::kAlreadyExists));
  EXPECT_THAT(tc.Create(Entity(), Matrix4x4::Identity()),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_FALSE(tc.Parent(i).is_valid());
  EXPECT_FALSE(tc.FirstChild(i).is_valid());
  EXPECT_EQ(tc.size(), 1u);
}

TEST_P(TransformModes, CreateBatchIsAllOrNothing) {
  TransformComponent tc(WithMode(GetParam()));
  ASSERT_THAT(tc.Create(Entity(1, 0), Matrix4x4::Identity()), IsOk());
  std::vector<Entity> entities = {Entity(2, 0), Entity(3, 0), Entity(1, 0)};
  std::vector<Matrix4x4> locals(3, Matrix4x4::Translation(1, 1, 1));
  std::vector<TransformHandle> out(3);
  EXPECT_THAT(tc.CreateBatch(entities, locals, absl::MakeSpan(out)),
              StatusIs(absl::StatusCode::kAlreadyExists, HasSubstr("entities[2]")));
  entities[2] = Entity(2, 0);
  EXPECT_THAT(tc.CreateBatch(entities, locals, absl::MakeSpan(out)),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("repeated")));
  entities[2] = Entity();
  EXPECT_THAT(tc.CreateBatch(entities, locals, absl::MakeSpan(out)),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("invalid")));
  EXPECT_THAT(tc.CreateBatch(entities, locals, absl::MakeSpan(out).subspan(1)),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("sizes")));
  EXPECT_EQ(tc.size(), 1u);
  EXPECT_FALSE(tc.Lookup(Entity(2, 0)).is_valid());
  entities[2] = Entity(4, 0);
  ASSERT_THAT(tc.CreateBatch(entities, locals, absl::MakeSpan(out)), IsOk());
  for (size_t k = 0; k < 3; ++k) {
    EXPECT_EQ(tc.Lookup(entities[k]), out[k]);
    EXPECT_EQ(tc.World(out[k]), Matrix4x4::Translation(1, 1, 1));
  }
  EXPECT_THAT(tc.CheckInvariants(), IsOk());
}

// Create's local may be a matrix of this component (Local or World of a node): Create
// takes it before growing the storage it lives in. Under ASan, a read of the freed
// block fails here; 300 nodes cross the capacities 16 to 256.
TEST_P(TransformModes, CreateFromOwnMatricesAcrossGrowth) {
  TransformComponent tc(WithMode(GetParam()));
  const Matrix4x4 first = Matrix4x4::Translation(1, 2, 3);
  std::vector<TransformHandle> inst;
  STRATA_ASSERT_OK_AND_ASSIGN(TransformHandle root, tc.Create(Entity(0, 0), first));
  inst.push_back(root);
  for (uint32_t k = 1; k < 300; ++k) {
    const TransformHandle prev = inst.back();
    const Matrix4x4& from = k % 2 == 0 ? tc.Local(prev) : tc.World(prev);
    STRATA_ASSERT_OK_AND_ASSIGN(TransformHandle i, tc.Create(Entity(k, 0), from));
    inst.push_back(i);
  }
  EXPECT_GE(tc.capacity(), 300u);
  Settle(tc);
  for (const TransformHandle i : inst) {
    ASSERT_EQ(tc.Local(i), first);
    ASSERT_EQ(tc.World(i), first);
  }
  // CreateBatch takes a span of such matrices alike, growing or not.
  std::vector<TransformHandle> out(1);
  for (uint32_t k = 300; k < 600; ++k) {
    const TransformHandle prev = inst.back();
    const Matrix4x4& from = k % 2 == 0 ? tc.Local(prev) : tc.World(prev);
    ASSERT_THAT(tc.CreateBatch({Entity(k, 0)}, absl::MakeConstSpan(&from, 1), absl::MakeSpan(out)),
                IsOk());
    inst.push_back(out[0]);
  }
  Settle(tc);
  for (const TransformHandle i : inst) {
    ASSERT_EQ(tc.Local(i), first);
    ASSERT_EQ(tc.World(i), first);
  }
  EXPECT_THAT(tc.CheckInvariants(), IsOk());
}

TEST_P(TransformModes, LinkComposesRowVectorOrder) {
  TransformComponent tc(WithMode(GetParam()));
  const Matrix4x4 parent_local = Matrix4x4::Compose({5, 0, 0}, Quaternion::FromAxisAngle({0, 0, 1}, 1.5707964f), {2, 2, 2});
  STRATA_ASSERT_OK_AND_ASSIGN(TransformHandle p, tc.Create(Entity(1, 0), parent_local));
  STRATA_ASSERT_OK_AND_ASSIGN(TransformHandle c, tc.Create(Entity(2, 0), Matrix4x4::Translation(1, 0, 0)));
  STRATA_ASSERT_OK(tc.Link(c, p));
  Settle(tc);
  EXPECT_EQ(tc.Parent(c), p);
  EXPECT_EQ(tc.FirstChild(p), c);
  EXPECT_TRUE(NearlyEqual(tc.World(c), Matrix4x4::Translation(1, 0, 0) * parent_local));
  // The child's origin: (1,0,0) scaled by 2, rotated onto +y, moved by 5 in x.
  const Vector3 origin = tc.World(c).translation();
  EXPECT_NEAR(origin.x, 5.0f, 1e-5f);
  EXPECT_NEAR(origin.y, 2.0f, 1e-5f);
  STRATA_ASSERT_OK(tc.Unlink(c));
  STRATA_ASSERT_OK(tc.Unlink(c));  // already a root
  Settle(tc);
  EXPECT_EQ(tc.World(c), Matrix4x4::Translation(1, 0, 0));
  EXPECT_FALSE(tc.Parent(c).is_valid());
}

TEST_P(TransformModes, CyclesAreRejectedAndChangeNothing) {
  TransformComponent tc(WithMode(GetParam()));
  std::vector<TransformHandle> n(4);
  for (uint32_t k = 0; k < 4; ++k) {
    STRATA_ASSERT_OK_AND_ASSIGN(n[k], tc.Create(Entity(k, 0), Matrix4x4::Translation(1, 0, 0)));
  }
  STRATA_ASSERT_OK(tc.Link(n[1], n[0]));
  STRATA_ASSERT_OK(tc.Link(n[2], n[1]));
  STRATA_ASSERT_OK(tc.Link(n[3], n[1]));
  Settle(tc);
  EXPECT_THAT(tc.Link(n[0], n[0]), StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("cycle")));
  EXPECT_THAT(tc.Link(n[0], n[2]), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(tc.Link(n[1], n[3]), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(tc.Link(n[0], n[3]), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(tc.LinkBatch({n[3], n[0]}, {n[2], n[3]}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("pair 1")));
  // The first pair of the batch was applied, as documented.
  EXPECT_EQ(tc.Parent(n[3]), n[2]);
  EXPECT_FALSE(tc.Parent(n[0]).is_valid());
  Settle(tc);
  EXPECT_EQ(tc.World(n[3]), Matrix4x4::Translation(4, 0, 0));
  EXPECT_EQ(tc.World(n[0]), Matrix4x4::Translation(1, 0, 0));
  EXPECT_THAT(tc.CheckInvariants(), IsOk());
}

TEST_P(TransformModes, StaleInstancesAreRejected) {
  TransformComponent tc(WithMode(GetParam()));
  STRATA_ASSERT_OK_AND_ASSIGN(TransformHandle a, tc.Create(Entity(1, 0), Matrix4x4::Identity()));
  STRATA_ASSERT_OK_AND_ASSIGN(TransformHandle b, tc.Create(Entity(2, 0), Matrix4x4::Identity()));
  STRATA_ASSERT_OK(tc.Destroy(a));
  EXPECT_FALSE(tc.IsValid(a));
  EXPECT_THAT(tc.Destroy(a), StatusIs(absl::StatusCode::kNotFound));
  EXPECT_THAT(tc.Link(a, b), StatusIs(absl::StatusCode::kNotFound, HasSubstr("child")));
  EXPECT_THAT(tc.Link(b, a), StatusIs(absl::StatusCode::kNotFound, HasSubstr("parent")));
  EXPECT_THAT(tc.Unlink(a), StatusIs(absl::StatusCode::kNotFound));
  EXPECT_FALSE(tc.SetLocal(a, Matrix4x4::Translation(1, 0, 0)));
  EXPECT_THAT(tc.SetLocalBatch({b, a}, {Matrix4x4::Translation(9, 0, 0), Matrix4x4::Identity()}),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("instances[1]")));
  Settle(tc);
  EXPECT_EQ(tc.Local(b), Matrix4x4::Identity());  // all or nothing
  EXPECT_FALSE(tc.Parent(a).is_valid());
  EXPECT_EQ(tc.entity(a), Entity());
  // The id is reused by the next create, but the old handle stays stale.
  STRATA_ASSERT_OK_AND_ASSIGN(TransformHandle c, tc.Create(Entity(3, 0), Matrix4x4::Identity()));
  EXPECT_EQ(c.id(), a.id());
  EXPECT_NE(c, a);
  EXPECT_FALSE(tc.IsValid(a));
  EXPECT_TRUE(tc.IsValid(c));
  EXPECT_FALSE(tc.Lookup(Entity(1, 0)).is_valid());
}

// Local, World and EntityAt take what the component issued: a stale, invalid or
// foreign handle, or a position past size(), aborts in every build mode (this test
// also runs under -c opt) instead of reading the identity or a slot past the last
// instance. IsValid is the check for handles from outside.
TEST(TransformComponentDeathTest, AccessorsRejectWhatTheComponentDidNotIssue) {
  TransformComponent tc, other;
  STRATA_ASSERT_OK_AND_ASSIGN(TransformHandle a, tc.Create(Entity(1, 0), Matrix4x4::Identity()));
  STRATA_ASSERT_OK_AND_ASSIGN(TransformHandle b, tc.Create(Entity(2, 0), Matrix4x4::Identity()));
  for (uint32_t k = 0; k < 3; ++k) {
    ASSERT_THAT(other.Create(Entity(10 + k, 0), Matrix4x4::Identity()), IsOk());
  }
  STRATA_ASSERT_OK_AND_ASSIGN(TransformHandle foreign,
                              other.Create(Entity(20, 0), Matrix4x4::Identity()));
  STRATA_ASSERT_OK(tc.Destroy(a));
  EXPECT_DEATH(tc.Local(a), "Local: the handle is invalid or stale");
  EXPECT_DEATH(tc.World(a), "World: the handle is invalid or stale");
  EXPECT_DEATH(tc.World(TransformHandle()), "World: the handle is invalid or stale");
  EXPECT_DEATH(tc.Local(foreign), "Local: the handle is invalid or stale");
  EXPECT_DEATH(tc.EntityAt(1), "EntityAt: position past size");
  EXPECT_DEATH(tc.EntityAt(size_t{1} << 40), "EntityAt: position past size");
  EXPECT_EQ(tc.EntityAt(0), Entity(2, 0));
  EXPECT_EQ(tc.Local(b), Matrix4x4::Identity());
  EXPECT_EQ(tc.World(b), Matrix4x4::Identity());
}

TEST_P(TransformModes, DestroyParentOrphansChildren) {
  TransformComponent tc(WithMode(GetParam()));
  STRATA_ASSERT_OK_AND_ASSIGN(TransformHandle root, tc.Create(Entity(0, 0), Matrix4x4::Translation(100, 0, 0)));
  STRATA_ASSERT_OK_AND_ASSIGN(TransformHandle mid, tc.Create(Entity(1, 0), Matrix4x4::Translation(10, 0, 0)));
  STRATA_ASSERT_OK_AND_ASSIGN(TransformHandle leaf, tc.Create(Entity(2, 0), Matrix4x4::Translation(1, 0, 0)));
  STRATA_ASSERT_OK_AND_ASSIGN(TransformHandle other, tc.Create(Entity(3, 0), Matrix4x4::Translation(2, 0, 0)));
  STRATA_ASSERT_OK(tc.Link(mid, root));
  STRATA_ASSERT_OK(tc.Link(leaf, mid));
  STRATA_ASSERT_OK(tc.Link(other, root));
  Settle(tc);
  EXPECT_EQ(tc.World(leaf), Matrix4x4::Translation(111, 0, 0));
  STRATA_ASSERT_OK(tc.Destroy(root));
  Settle(tc);
  EXPECT_EQ(tc.size(), 3u);
  EXPECT_FALSE(tc.Parent(mid).is_valid());
  EXPECT_FALSE(tc.Parent(other).is_valid());
  EXPECT_EQ(tc.Parent(leaf), mid);
  EXPECT_EQ(tc.World(mid), Matrix4x4::Translation(10, 0, 0));
  EXPECT_EQ(tc.World(leaf), Matrix4x4::Translation(11, 0, 0));
  EXPECT_EQ(tc.World(other), Matrix4x4::Translation(2, 0, 0));
  EXPECT_THAT(tc.CheckInvariants(), IsOk());
  // Destroying a middle child keeps the sibling list intact.
  STRATA_ASSERT_OK(tc.Link(other, mid));
  STRATA_ASSERT_OK(tc.Destroy(leaf));
  EXPECT_EQ(tc.FirstChild(mid), other);
  EXPECT_FALSE(tc.NextSibling(other).is_valid());
  EXPECT_THAT(tc.CheckInvariants(), IsOk());
}

TEST_P(TransformModes, SetLocalBatchTakesLastOfRepeatsAndChecksSizes) {
  TransformComponent tc(WithMode(GetParam()));
  STRATA_ASSERT_OK_AND_ASSIGN(TransformHandle p, tc.Create(Entity(0, 0), Matrix4x4::Identity()));
  STRATA_ASSERT_OK_AND_ASSIGN(TransformHandle c, tc.Create(Entity(1, 0), Matrix4x4::Identity()));
  STRATA_ASSERT_OK(tc.Link(c, p));
  EXPECT_THAT(tc.SetLocalBatch({p}, {}), StatusIs(absl::StatusCode::kInvalidArgument));
  STRATA_ASSERT_OK(tc.SetLocalBatch(
      {c, p, c, p},
      {Matrix4x4::Translation(1, 0, 0), Matrix4x4::Translation(10, 0, 0),
       Matrix4x4::Translation(2, 0, 0), Matrix4x4::Translation(20, 0, 0)}));
  Settle(tc);
  EXPECT_EQ(tc.Local(c), Matrix4x4::Translation(2, 0, 0));
  EXPECT_EQ(tc.World(p), Matrix4x4::Translation(20, 0, 0));
  EXPECT_EQ(tc.World(c), Matrix4x4::Translation(22, 0, 0));
  // Only roots in the batch (the path without marks): repeats still take the last.
  STRATA_ASSERT_OK_AND_ASSIGN(TransformHandle r, tc.Create(Entity(2, 0), Matrix4x4::Identity()));
  STRATA_ASSERT_OK(tc.SetLocalBatch(
      {r, p, r}, {Matrix4x4::Translation(0, 1, 0), Matrix4x4::Translation(30, 0, 0),
                  Matrix4x4::Translation(0, 2, 0)}));
  Settle(tc);
  EXPECT_EQ(tc.World(r), Matrix4x4::Translation(0, 2, 0));
  EXPECT_EQ(tc.World(c), Matrix4x4::Translation(32, 0, 0));
}

// ---- PreparedBatch -----------------------------------------------------------------

Matrix4x4 T(float x) { return Matrix4x4::Translation(x, 0, 0); }

TEST_P(TransformModes, PreparedBatchEdges) {
  TransformComponent tc(WithMode(GetParam()));
  TransformComponent other(WithMode(GetParam()));
  // Empty: nothing to do, but the sizes must still agree.
  STRATA_ASSERT_OK_AND_ASSIGN(TransformComponent::PreparedBatch empty, tc.PrepareBatch({}));
  EXPECT_EQ(empty.size(), 0u);
  EXPECT_THAT(tc.SetLocalBatch(empty, {}), IsOk());
  EXPECT_THAT(tc.SetLocalBatch(empty, {T(1)}), StatusIs(absl::StatusCode::kInvalidArgument));
  STRATA_ASSERT_OK_AND_ASSIGN(TransformHandle a, tc.Create(Entity(1, 0), T(0)));
  STRATA_ASSERT_OK_AND_ASSIGN(TransformHandle b, tc.Create(Entity(2, 0), T(0)));
  // One.
  STRATA_ASSERT_OK_AND_ASSIGN(TransformComponent::PreparedBatch one, tc.PrepareBatch({b}));
  EXPECT_EQ(one.size(), 1u);
  EXPECT_THAT(tc.SetLocalBatch(one, {T(5)}), IsOk());
  Settle(tc);
  EXPECT_EQ(tc.World(b), T(5));
  EXPECT_EQ(tc.World(a), T(0));
  // Sizes differ; a batch never prepared, or prepared by another component.
  EXPECT_THAT(tc.SetLocalBatch(one, {T(1), T(2)}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("sizes")));
  TransformComponent::PreparedBatch none;
  EXPECT_THAT(tc.SetLocalBatch(none, {}), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(other.SetLocalBatch(empty, {}), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(other.SetLocalBatch(one, {T(1)}), StatusIs(absl::StatusCode::kInvalidArgument));
  // Stale at preparation.
  STRATA_ASSERT_OK(tc.Destroy(a));
  EXPECT_THAT(tc.PrepareBatch({b, a}),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("instances[1]")));
  EXPECT_THAT(tc.PrepareBatch({TransformHandle()}), StatusIs(absl::StatusCode::kNotFound));
  EXPECT_THAT(tc.CheckInvariants(), IsOk());
}

TEST_P(TransformModes, PreparedBatchRejectsInstancesDestroyedSinceAndChangesNothing) {
  TransformComponent tc(WithMode(GetParam()));
  std::vector<TransformHandle> n;
  for (uint32_t k = 0; k < 4; ++k) {
    STRATA_ASSERT_OK_AND_ASSIGN(TransformHandle i, tc.Create(Entity(k, 0), T(0)));
    n.push_back(i);
  }
  STRATA_ASSERT_OK_AND_ASSIGN(TransformComponent::PreparedBatch batch,
                              tc.PrepareBatch({n[0], n[1], n[3]}));
  // The last node: destroying it moves nothing else, yet the batch must notice.
  STRATA_ASSERT_OK(tc.Destroy(n[3]));
  EXPECT_THAT(tc.SetLocalBatch(batch, {T(1), T(2), T(3)}),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("instances[2]")));
  // Its id is reused by a new node at the same position: still stale.
  STRATA_ASSERT_OK_AND_ASSIGN(TransformHandle fresh, tc.Create(Entity(9, 0), T(7)));
  EXPECT_THAT(tc.SetLocalBatch(batch, {T(1), T(2), T(3)}),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("instances[2]")));
  Settle(tc);
  EXPECT_EQ(tc.Local(n[0]), T(0));  // all or nothing
  EXPECT_EQ(tc.Local(n[1]), T(0));
  EXPECT_EQ(tc.World(fresh), T(7));
  EXPECT_THAT(tc.CheckInvariants(), IsOk());
}

TEST_P(TransformModes, PreparedBatchFollowsLinksAndMovesMadeSincePreparation) {
  TransformComponent tc(WithMode(GetParam()));
  std::vector<TransformHandle> n;
  for (uint32_t k = 0; k < 5; ++k) {
    STRATA_ASSERT_OK_AND_ASSIGN(TransformHandle i, tc.Create(Entity(k, 0), T(0)));
    n.push_back(i);
  }
  // A run of lone roots, prepared as such.
  STRATA_ASSERT_OK_AND_ASSIGN(TransformComponent::PreparedBatch batch,
                              tc.PrepareBatch({n[0], n[1], n[2]}));
  STRATA_ASSERT_OK(tc.SetLocalBatch(batch, {T(1), T(2), T(3)}));
  Settle(tc);
  EXPECT_EQ(tc.World(n[2]), T(3));
  // Now n[2] hangs below n[1] and n[4] below n[2]: the run is a hierarchy.
  STRATA_ASSERT_OK(tc.Link(n[2], n[1]));
  STRATA_ASSERT_OK(tc.Link(n[4], n[2]));
  ASSERT_TRUE(tc.SetLocal(n[4], T(100)));
  STRATA_ASSERT_OK(tc.SetLocalBatch(batch, {T(10), T(20), T(30)}));
  Settle(tc);
  EXPECT_EQ(tc.World(n[0]), T(10));
  EXPECT_EQ(tc.World(n[2]), T(50));
  EXPECT_EQ(tc.World(n[4]), T(150));
  // n[3] is destroyed: the others move (swap-erase), the batch finds them again.
  STRATA_ASSERT_OK(tc.Destroy(n[3]));
  STRATA_ASSERT_OK(tc.Unlink(n[2]));
  STRATA_ASSERT_OK(tc.SetLocalBatch(batch, {T(1), T(2), T(3)}));
  Settle(tc);
  EXPECT_EQ(tc.World(n[1]), T(2));
  EXPECT_EQ(tc.World(n[2]), T(3));
  EXPECT_EQ(tc.World(n[4]), T(103));
  EXPECT_THAT(tc.CheckInvariants(), IsOk());
}

TEST_P(TransformModes, PreparedBatchTakesLastOfRepeatsAndSetsParentsBeforeChildren) {
  TransformComponent tc(WithMode(GetParam()));
  STRATA_ASSERT_OK_AND_ASSIGN(TransformHandle p, tc.Create(Entity(0, 0), T(0)));
  STRATA_ASSERT_OK_AND_ASSIGN(TransformHandle c, tc.Create(Entity(1, 0), T(0)));
  STRATA_ASSERT_OK_AND_ASSIGN(TransformHandle r, tc.Create(Entity(2, 0), T(0)));
  STRATA_ASSERT_OK(tc.Link(c, p));
  STRATA_ASSERT_OK_AND_ASSIGN(TransformComponent::PreparedBatch batch,
                              tc.PrepareBatch({c, r, p, c, r}));
  for (float frame : {1.0f, 2.0f, 3.0f}) {  // reused frame after frame
    STRATA_ASSERT_OK(tc.SetLocalBatch(
        batch, {T(frame), T(-1), T(10 * frame), T(2 * frame), T(-frame)}));
    Settle(tc);
    EXPECT_EQ(tc.Local(c), T(2 * frame));
    EXPECT_EQ(tc.World(c), T(12 * frame));
    EXPECT_EQ(tc.World(r), T(-frame));
  }
  EXPECT_THAT(tc.CheckInvariants(), IsOk());
}

TEST_P(TransformModes, DestroyListenerRemovesTransforms) {
  EntityManager manager;
  TransformComponent tc(WithMode(GetParam()));
  tc.ConnectTo(manager);
  std::vector<Entity> e(3);
  manager.CreateBatch(absl::MakeSpan(e));
  std::vector<TransformHandle> inst(3);
  STRATA_ASSERT_OK(tc.CreateBatch(e, {Matrix4x4::Translation(1, 0, 0), Matrix4x4::Translation(2, 0, 0), Matrix4x4::Translation(3, 0, 0)}, absl::MakeSpan(inst)));
  STRATA_ASSERT_OK(tc.Link(inst[1], inst[0]));
  STRATA_ASSERT_OK(manager.Destroy(e[0]));
  EXPECT_FALSE(tc.IsValid(inst[0]));
  EXPECT_FALSE(tc.Lookup(e[0]).is_valid());
  Settle(tc);
  EXPECT_EQ(tc.World(inst[1]), Matrix4x4::Translation(2, 0, 0));
  STRATA_ASSERT_OK(manager.DestroyBatch({e[1], e[2]}));
  EXPECT_EQ(tc.size(), 0u);
  tc.Disconnect();
  const Entity later = manager.Create();
  STRATA_ASSERT_OK_AND_ASSIGN(TransformHandle l, tc.Create(later, Matrix4x4::Identity()));
  STRATA_ASSERT_OK(manager.Destroy(later));
  EXPECT_TRUE(tc.IsValid(l));  // disconnected: not told
}

TEST_P(TransformModes, SeveralWorldsAreIndependent) {
  EntityManager manager;
  TransformComponent game(WithMode(GetParam()));
  TransformComponent inventory(WithMode(GetParam()));
  game.ConnectTo(manager);
  inventory.ConnectTo(manager);
  const Entity pickaxe = manager.Create();
  const Entity player = manager.Create();
  const Entity slot = manager.Create();
  STRATA_ASSERT_OK_AND_ASSIGN(TransformHandle g_axe, game.Create(pickaxe, Matrix4x4::Translation(1, 0, 0)));
  STRATA_ASSERT_OK_AND_ASSIGN(TransformHandle g_player, game.Create(player, Matrix4x4::Translation(50, 0, 0)));
  STRATA_ASSERT_OK_AND_ASSIGN(TransformHandle i_slot, inventory.Create(slot, Matrix4x4::Translation(0, 7, 0)));
  STRATA_ASSERT_OK_AND_ASSIGN(TransformHandle i_axe, inventory.Create(pickaxe, Matrix4x4::Translation(0, 0, 1)));
  STRATA_ASSERT_OK(game.Link(g_axe, g_player));
  STRATA_ASSERT_OK(inventory.Link(i_axe, i_slot));
  EXPECT_FALSE(inventory.Lookup(player).is_valid());
  EXPECT_FALSE(game.Lookup(slot).is_valid());
  EXPECT_TRUE(game.SetLocal(g_player, Matrix4x4::Translation(60, 0, 0)));
  Settle(game);
  Settle(inventory);
  EXPECT_EQ(game.World(game.Lookup(pickaxe)), Matrix4x4::Translation(61, 0, 0));
  EXPECT_EQ(inventory.World(inventory.Lookup(pickaxe)), Matrix4x4::Translation(0, 7, 1));
  STRATA_ASSERT_OK(manager.Destroy(pickaxe));  // gone from both worlds
  EXPECT_FALSE(game.Lookup(pickaxe).is_valid());
  EXPECT_FALSE(inventory.Lookup(pickaxe).is_valid());
  EXPECT_EQ(game.size(), 1u);
  EXPECT_EQ(inventory.size(), 1u);
  EXPECT_THAT(game.CheckInvariants(), IsOk());
  EXPECT_THAT(inventory.CheckInvariants(), IsOk());
}

TEST_P(TransformModes, DeepChainOf100000DoesNotRecurse) {
  constexpr uint32_t kDepth = 100000;
  TransformComponent tc(WithMode(GetParam()));
  std::vector<Entity> entities(kDepth);
  for (uint32_t k = 0; k < kDepth; ++k) entities[k] = Entity(k, 0);
  std::vector<Matrix4x4> locals(kDepth, Matrix4x4::Translation(1, 0, 0));
  std::vector<TransformHandle> inst(kDepth);
  STRATA_ASSERT_OK(tc.CreateBatch(entities, locals, absl::MakeSpan(inst)));
  STRATA_ASSERT_OK(tc.LinkBatch(absl::MakeSpan(inst).subspan(1),
                                absl::MakeSpan(inst).subspan(0, kDepth - 1)));
  Settle(tc);
  // Integers below 2^24 are exact in float, so the sums are exact.
  EXPECT_EQ(tc.World(inst.back()), Matrix4x4::Translation(kDepth, 0, 0));
  EXPECT_TRUE(tc.SetLocal(inst[0], Matrix4x4::Translation(2, 0, 0)));
  Settle(tc);
  EXPECT_EQ(tc.World(inst.back()), Matrix4x4::Translation(kDepth + 1, 0, 0));
  // The cycle check from the root to the leaf walks no further than it must.
  EXPECT_THAT(tc.Link(inst[0], inst.back()), StatusIs(absl::StatusCode::kInvalidArgument));
  STRATA_ASSERT_OK(tc.SetLocalBatch(inst, locals));
  Settle(tc);
  EXPECT_EQ(tc.World(inst.back()), Matrix4x4::Translation(kDepth, 0, 0));
  STRATA_ASSERT_OK(tc.Destroy(inst[0]));
  Settle(tc);
  EXPECT_EQ(tc.World(inst.back()), Matrix4x4::Translation(kDepth - 1, 0, 0));
  EXPECT_THAT(tc.CheckInvariants(), IsOk());
}

TEST_P(TransformModes, GrowthKeepsHandlesAndValues) {
  TransformComponent tc(WithMode(GetParam()));
  std::vector<TransformHandle> inst;
  for (uint32_t k = 0; k < 5000; ++k) {
    STRATA_ASSERT_OK_AND_ASSIGN(TransformHandle i, tc.Create(Entity(k, 7), Matrix4x4::Translation(float(k), 0, 0)));
    if (k > 0) {
      STRATA_ASSERT_OK(tc.Link(i, inst[k / 2]));
    }
    inst.push_back(i);
  }
  Settle(tc);
  EXPECT_GE(tc.capacity(), 5000u);
  EXPECT_GT(tc.MemoryUsage(), 5000u * 2 * sizeof(Matrix4x4));
  for (uint32_t k = 0; k < 5000; ++k) {
    ASSERT_EQ(tc.Lookup(Entity(k, 7)), inst[k]);
    float expected = 0;
    for (uint32_t x = k; x > 0; x /= 2) expected += float(x);
    ASSERT_EQ(tc.World(inst[k]).translation().x, expected) << k;
  }
  EXPECT_THAT(tc.CheckInvariants(), IsOk());
}

TEST(TransformDeferred, WorldIsStaleUntilUpdateAndIdleNodesLeaveTheDirtyRange) {
  TransformComponent::Options options = WithMode(Mode::kDeferred);
  options.idle_updates_before_clean = 3;
  TransformComponent tc(options);
  STRATA_ASSERT_OK_AND_ASSIGN(TransformHandle p, tc.Create(Entity(0, 0), Matrix4x4::Identity()));
  STRATA_ASSERT_OK_AND_ASSIGN(TransformHandle c, tc.Create(Entity(1, 0), Matrix4x4::Translation(1, 0, 0)));
  STRATA_ASSERT_OK_AND_ASSIGN(TransformHandle still, tc.Create(Entity(2, 0), Matrix4x4::Identity()));
  EXPECT_EQ(tc.dirty_count(), 0u);
  STRATA_ASSERT_OK(tc.Link(c, p));
  EXPECT_EQ(tc.World(c), Matrix4x4::Translation(1, 0, 0));  // not yet
  EXPECT_TRUE(tc.SetLocal(p, Matrix4x4::Translation(10, 0, 0)));
  EXPECT_EQ(tc.dirty_count(), 2u);  // p and its subtree
  EXPECT_EQ(tc.World(p), Matrix4x4::Identity());
  tc.UpdateWorld();
  EXPECT_EQ(tc.World(c), Matrix4x4::Translation(11, 0, 0));
  EXPECT_THAT(tc.CheckInvariants(), IsOk());
  for (int frame = 0; frame < 2; ++frame) tc.UpdateWorld();
  EXPECT_EQ(tc.dirty_count(), 2u);
  tc.UpdateWorld();  // p idle for 3 updates: leaves; c follows once p is clean
  tc.UpdateWorld();
  EXPECT_EQ(tc.dirty_count(), 0u);
  EXPECT_EQ(tc.World(c), Matrix4x4::Translation(11, 0, 0));
  // Moving the child alone keeps the parent clean.
  EXPECT_TRUE(tc.SetLocal(c, Matrix4x4::Translation(2, 0, 0)));
  EXPECT_EQ(tc.dirty_count(), 1u);
  tc.UpdateWorld();
  EXPECT_EQ(tc.World(c), Matrix4x4::Translation(12, 0, 0));
  EXPECT_EQ(tc.World(still), Matrix4x4::Identity());
  EXPECT_THAT(tc.CheckInvariants(), IsOk());
}

}  // namespace
}  // namespace strata
