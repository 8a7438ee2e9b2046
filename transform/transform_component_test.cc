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
#include "entity/entity.h"
#include "entity/entity_manager.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/random.h"
#include "testing/status_matchers.h"
#include "transform/matrix.h"

namespace strata {
namespace {

using ::strata::testing::IsOk;
using ::strata::testing::Random;
using ::strata::testing::StatusIs;
using ::testing::HasSubstr;
using Instance = TransformComponent::Instance;
using Mode = TransformComponent::Mode;

TransformComponent::Options WithMode(Mode mode) {
  TransformComponent::Options options;
  options.mode = mode;
  return options;
}

class TransformModes : public ::testing::TestWithParam<Mode> {
 protected:
  // Deferred mode needs UpdateWorld before World() is current; immediate mode does not.
  void Settle(TransformComponent& tc) {
    if (tc.mode() == Mode::kDeferred) tc.UpdateWorld();
  }
};

INSTANTIATE_TEST_SUITE_P(Modes, TransformModes,
                         ::testing::Values(Mode::kImmediate, Mode::kDeferred),
                         [](const ::testing::TestParamInfo<Mode>& info) {
                           return info.param == Mode::kImmediate ? std::string("Immediate")
                                                                 : std::string("Deferred");
                         });

TEST_P(TransformModes, HeaderExample) {
  EntityManager entities;
  TransformComponent transforms(WithMode(GetParam()));
  transforms.ConnectTo(entities);
  Entity car = entities.Create(), wheel = entities.Create();
  STRATA_ASSERT_OK_AND_ASSIGN(Instance c, transforms.Create(car, Matrix4x4::Translation(10, 0, 0)));
  STRATA_ASSERT_OK_AND_ASSIGN(Instance w, transforms.Create(wheel, Matrix4x4::Translation(1, 0, 0)));
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
  EXPECT_FALSE(tc.IsValid(Instance()));
  EXPECT_FALSE(tc.SetLocal(Instance(), Matrix4x4::Identity()));
  EXPECT_FALSE(tc.DestroyEntity(Entity(3, 1)));
  EXPECT_THAT(tc.SetLocalBatch({}, {}), IsOk());
  std::vector<Instance> none;
  EXPECT_THAT(tc.CreateBatch({}, {}, absl::MakeSpan(none)), IsOk());
  tc.UpdateWorld();
  EXPECT_THAT(tc.CheckInvariants(), IsOk());
}

TEST_P(TransformModes, CreateLookupAndErrors) {
  TransformComponent tc(WithMode(GetParam()));
  const Entity e(5, 2);
  STRATA_ASSERT_OK_AND_ASSIGN(Instance i, tc.Create(e, Matrix4x4::Translation(1, 2, 3)));
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
  std::vector<Instance> out(3);
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

TEST_P(TransformModes, LinkComposesRowVectorOrder) {
  TransformComponent tc(WithMode(GetParam()));
  const Matrix4x4 parent_local = Matrix4x4::Compose({5, 0, 0}, Quaternion::FromAxisAngle({0, 0, 1}, 1.5707964f), {2, 2, 2});
  STRATA_ASSERT_OK_AND_ASSIGN(Instance p, tc.Create(Entity(1, 0), parent_local));
  STRATA_ASSERT_OK_AND_ASSIGN(Instance c, tc.Create(Entity(2, 0), Matrix4x4::Translation(1, 0, 0)));
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
  std::vector<Instance> n(4);
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
  STRATA_ASSERT_OK_AND_ASSIGN(Instance a, tc.Create(Entity(1, 0), Matrix4x4::Identity()));
  STRATA_ASSERT_OK_AND_ASSIGN(Instance b, tc.Create(Entity(2, 0), Matrix4x4::Identity()));
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
  STRATA_ASSERT_OK_AND_ASSIGN(Instance c, tc.Create(Entity(3, 0), Matrix4x4::Identity()));
  EXPECT_EQ(c.id(), a.id());
  EXPECT_NE(c, a);
  EXPECT_FALSE(tc.IsValid(a));
  EXPECT_TRUE(tc.IsValid(c));
  EXPECT_FALSE(tc.Lookup(Entity(1, 0)).is_valid());
}

TEST_P(TransformModes, DestroyParentOrphansChildren) {
  TransformComponent tc(WithMode(GetParam()));
  STRATA_ASSERT_OK_AND_ASSIGN(Instance root, tc.Create(Entity(0, 0), Matrix4x4::Translation(100, 0, 0)));
  STRATA_ASSERT_OK_AND_ASSIGN(Instance mid, tc.Create(Entity(1, 0), Matrix4x4::Translation(10, 0, 0)));
  STRATA_ASSERT_OK_AND_ASSIGN(Instance leaf, tc.Create(Entity(2, 0), Matrix4x4::Translation(1, 0, 0)));
  STRATA_ASSERT_OK_AND_ASSIGN(Instance other, tc.Create(Entity(3, 0), Matrix4x4::Translation(2, 0, 0)));
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
  STRATA_ASSERT_OK_AND_ASSIGN(Instance p, tc.Create(Entity(0, 0), Matrix4x4::Identity()));
  STRATA_ASSERT_OK_AND_ASSIGN(Instance c, tc.Create(Entity(1, 0), Matrix4x4::Identity()));
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
  STRATA_ASSERT_OK_AND_ASSIGN(Instance r, tc.Create(Entity(2, 0), Matrix4x4::Identity()));
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
  STRATA_ASSERT_OK_AND_ASSIGN(Instance a, tc.Create(Entity(1, 0), T(0)));
  STRATA_ASSERT_OK_AND_ASSIGN(Instance b, tc.Create(Entity(2, 0), T(0)));
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
  EXPECT_THAT(tc.PrepareBatch({Instance()}), StatusIs(absl::StatusCode::kNotFound));
  EXPECT_THAT(tc.CheckInvariants(), IsOk());
}

TEST_P(TransformModes, PreparedBatchRejectsInstancesDestroyedSinceAndChangesNothing) {
  TransformComponent tc(WithMode(GetParam()));
  std::vector<Instance> n;
  for (uint32_t k = 0; k < 4; ++k) {
    STRATA_ASSERT_OK_AND_ASSIGN(Instance i, tc.Create(Entity(k, 0), T(0)));
    n.push_back(i);
  }
  STRATA_ASSERT_OK_AND_ASSIGN(TransformComponent::PreparedBatch batch,
                              tc.PrepareBatch({n[0], n[1], n[3]}));
  // The last node: destroying it moves nothing else, yet the batch must notice.
  STRATA_ASSERT_OK(tc.Destroy(n[3]));
  EXPECT_THAT(tc.SetLocalBatch(batch, {T(1), T(2), T(3)}),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("instances[2]")));
  // Its id is reused by a new node at the same position: still stale.
  STRATA_ASSERT_OK_AND_ASSIGN(Instance fresh, tc.Create(Entity(9, 0), T(7)));
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
  std::vector<Instance> n;
  for (uint32_t k = 0; k < 5; ++k) {
    STRATA_ASSERT_OK_AND_ASSIGN(Instance i, tc.Create(Entity(k, 0), T(0)));
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
  STRATA_ASSERT_OK_AND_ASSIGN(Instance p, tc.Create(Entity(0, 0), T(0)));
  STRATA_ASSERT_OK_AND_ASSIGN(Instance c, tc.Create(Entity(1, 0), T(0)));
  STRATA_ASSERT_OK_AND_ASSIGN(Instance r, tc.Create(Entity(2, 0), T(0)));
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
  std::vector<Instance> inst(3);
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
  STRATA_ASSERT_OK_AND_ASSIGN(Instance l, tc.Create(later, Matrix4x4::Identity()));
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
  STRATA_ASSERT_OK_AND_ASSIGN(Instance g_axe, game.Create(pickaxe, Matrix4x4::Translation(1, 0, 0)));
  STRATA_ASSERT_OK_AND_ASSIGN(Instance g_player, game.Create(player, Matrix4x4::Translation(50, 0, 0)));
  STRATA_ASSERT_OK_AND_ASSIGN(Instance i_slot, inventory.Create(slot, Matrix4x4::Translation(0, 7, 0)));
  STRATA_ASSERT_OK_AND_ASSIGN(Instance i_axe, inventory.Create(pickaxe, Matrix4x4::Translation(0, 0, 1)));
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
  std::vector<Instance> inst(kDepth);
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
  std::vector<Instance> inst;
  for (uint32_t k = 0; k < 5000; ++k) {
    STRATA_ASSERT_OK_AND_ASSIGN(Instance i, tc.Create(Entity(k, 7), Matrix4x4::Translation(float(k), 0, 0)));
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
  STRATA_ASSERT_OK_AND_ASSIGN(Instance p, tc.Create(Entity(0, 0), Matrix4x4::Identity()));
  STRATA_ASSERT_OK_AND_ASSIGN(Instance c, tc.Create(Entity(1, 0), Matrix4x4::Translation(1, 0, 0)));
  STRATA_ASSERT_OK_AND_ASSIGN(Instance still, tc.Create(Entity(2, 0), Matrix4x4::Identity()));
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

// ---- Randomised comparison with a naive recursive reference -----------------------

struct RefNode {
  Matrix4x4 local;
  Entity parent;
};

// The oracle: recursion straight from the definition world = local * parent world
// (memoised per check in `cache`, so a check costs O(n), not O(n * depth)).
Matrix4x4 RefWorld(const std::map<Entity, RefNode>& nodes, Entity e,
                   std::map<Entity, Matrix4x4>& cache) {
  if (auto it = cache.find(e); it != cache.end()) return it->second;
  const RefNode& n = nodes.at(e);
  const Matrix4x4 world = n.parent.is_valid()
                              ? MultiplyMatrixReference(n.local, RefWorld(nodes, n.parent, cache))
                              : n.local;
  cache[e] = world;
  return world;
}

bool RefIsAncestorOrSelf(const std::map<Entity, RefNode>& nodes, Entity a, Entity x) {
  for (; x.is_valid(); x = nodes.at(x).parent) {
    if (x == a) return true;
  }
  return false;
}

Matrix4x4 RandomRigid(Random& rng) {
  return Matrix4x4::Compose(
      {rng.UniformFloat(-1, 1), rng.UniformFloat(-1, 1), rng.UniformFloat(-1, 1)},
      Quaternion::FromAxisAngle({rng.UniformFloat(-1, 1), rng.UniformFloat(-1, 1), 1.0f},
                                rng.UniformFloat(-3, 3)),
      {1, 1, 1});
}

// large_update_threshold: Options::parallel_min_nodes and stream_min_nodes (0: the
// defaults), so that small sequences exercise the parallel and streaming paths.
void RunRandomSequence(Mode mode, uint64_t seed, int steps, size_t max_nodes,
                       size_t large_update_threshold = 0) {
  Random rng(seed);
  SCOPED_TRACE(rng.DescribeSeed());
  SCOPED_TRACE(large_update_threshold);
  EntityManager manager;
  TransformComponent::Options options = WithMode(mode);
  options.idle_updates_before_clean = 1 + static_cast<uint32_t>(rng.UniformIndex(4));
  if (large_update_threshold > 0) {
    options.parallel_min_nodes = large_update_threshold;
    options.stream_min_nodes = large_update_threshold;
  }
  TransformComponent tc(options);
  tc.ConnectTo(manager);
  std::map<Entity, RefNode> ref;
  std::map<Entity, Instance> handle;
  std::vector<Instance> stale;
  // A prepared batch kept across steps, so the steps between make it stale.
  TransformComponent::PreparedBatch prepared;
  std::vector<Entity> prepared_entities;

  auto pick = [&]() {
    auto it = ref.begin();
    std::advance(it, rng.UniformIndex(ref.size()));
    return it->first;
  };
  auto forget = [&](Entity e) {
    for (auto& [other, node] : ref) {
      if (node.parent == e) node.parent = Entity();
    }
    ref.erase(e);
    stale.push_back(handle.at(e));
    handle.erase(e);
  };

  for (int step = 0; step < steps; ++step) {
    SCOPED_TRACE(step);
    const uint64_t op = rng.UniformIndex(100);
    if (ref.size() < 2 || (op < 22 && ref.size() < max_nodes)) {
      if (rng.Bernoulli(0.2)) {
        const size_t n = 1 + rng.UniformIndex(8);
        std::vector<Entity> es(n);
        manager.CreateBatch(absl::MakeSpan(es));
        std::vector<Matrix4x4> ls(n);
        for (auto& l : ls) l = RandomRigid(rng);
        std::vector<Instance> out(n);
        ASSERT_THAT(tc.CreateBatch(es, ls, absl::MakeSpan(out)), IsOk());
        for (size_t k = 0; k < n; ++k) {
          ref[es[k]] = {ls[k], Entity()};
          handle[es[k]] = out[k];
        }
      } else {
        const Entity e = manager.Create();
        const Matrix4x4 l = RandomRigid(rng);
        STRATA_ASSERT_OK_AND_ASSIGN(Instance i, tc.Create(e, l));
        ref[e] = {l, Entity()};
        handle[e] = i;
      }
    } else if (op < 32) {
      const Entity e = pick();
      switch (rng.UniformIndex(3)) {
        case 0:
          ASSERT_THAT(tc.Destroy(handle.at(e)), IsOk());
          break;
        case 1:
          ASSERT_TRUE(tc.DestroyEntity(e));
          break;
        default:
          ASSERT_THAT(manager.Destroy(e), IsOk());  // through the listener
          break;
      }
      forget(e);
    } else if (op < 55) {
      const Entity child = pick();
      const Entity parent = pick();
      const absl::Status s = tc.Link(handle.at(child), handle.at(parent));
      if (RefIsAncestorOrSelf(ref, child, parent)) {
        ASSERT_THAT(s, StatusIs(absl::StatusCode::kInvalidArgument));
      } else {
        ASSERT_THAT(s, IsOk());
        ref[child].parent = parent;
      }
    } else if (op < 62) {
      const Entity e = pick();
      ASSERT_THAT(tc.Unlink(handle.at(e)), IsOk());
      ref[e].parent = Entity();
    } else if (op < 80) {
      const Entity e = pick();
      const Matrix4x4 l = RandomRigid(rng);
      ASSERT_TRUE(tc.SetLocal(handle.at(e), l));
      ref[e].local = l;
    } else if (op < 90) {
      const size_t n = 1 + rng.UniformIndex(ref.size() + 2);  // repeats likely
      std::vector<Instance> is(n);
      std::vector<Matrix4x4> ls(n);
      for (size_t k = 0; k < n; ++k) {
        const Entity e = pick();
        is[k] = handle.at(e);
        ls[k] = RandomRigid(rng);
        ref[e].local = ls[k];  // the last one wins, as in the component
      }
      ASSERT_THAT(tc.SetLocalBatch(is, ls), IsOk());
    } else if (op < 93) {
      if (prepared_entities.empty() || rng.Bernoulli(0.25)) {
        const size_t n = 1 + rng.UniformIndex(ref.size() + 2);
        std::vector<Instance> is(n);
        prepared_entities.resize(n);
        for (size_t k = 0; k < n; ++k) {
          prepared_entities[k] = pick();
          is[k] = handle.at(prepared_entities[k]);
        }
        STRATA_ASSERT_OK_AND_ASSIGN(prepared, tc.PrepareBatch(is));
      }
      std::vector<Matrix4x4> ls(prepared_entities.size());
      for (Matrix4x4& l : ls) l = RandomRigid(rng);
      bool all_alive = true;
      for (Entity e : prepared_entities) all_alive &= ref.contains(e);
      const absl::Status s = tc.SetLocalBatch(prepared, ls);
      if (all_alive) {
        ASSERT_THAT(s, IsOk());
        for (size_t k = 0; k < ls.size(); ++k) ref[prepared_entities[k]].local = ls[k];
      } else {
        ASSERT_THAT(s, StatusIs(absl::StatusCode::kNotFound));  // and nothing changed
        prepared_entities.clear();
      }
    } else if (op < 95) {
      if (!stale.empty()) {
        const Instance s = stale[rng.UniformIndex(stale.size())];
        ASSERT_FALSE(tc.IsValid(s));
        ASSERT_FALSE(tc.SetLocal(s, Matrix4x4::Identity()));
        ASSERT_THAT(tc.Link(s, handle.at(pick())), StatusIs(absl::StatusCode::kNotFound));
        ASSERT_THAT(tc.Destroy(s), StatusIs(absl::StatusCode::kNotFound));
      }
    } else {
      tc.UpdateWorld();
    }
    ASSERT_THAT(tc.CheckInvariants(), IsOk());
    ASSERT_EQ(tc.size(), ref.size());
    // Immediate mode must be current without UpdateWorld (its UpdateWorld does nothing);
    // half the steps are checked, to keep the test fast under sanitizers.
    if (!rng.Bernoulli(mode == Mode::kDeferred ? 0.3 : 0.5)) continue;
    tc.UpdateWorld();
    std::map<Entity, Matrix4x4> cache;
    for (const auto& [e, node] : ref) {
      const Instance i = handle.at(e);
      ASSERT_EQ(tc.Lookup(e), i);
      ASSERT_EQ(tc.Local(i), node.local);
      const Entity parent = tc.entity(tc.Parent(i));
      ASSERT_EQ(parent, node.parent);
      const Matrix4x4 expected = RefWorld(ref, e, cache);
      ASSERT_TRUE(NearlyEqual(tc.World(i), expected, 2e-4f, 1e-4f))
          << e << " world " << tc.World(i) << " expected " << expected;
    }
  }
}

TEST_P(TransformModes, RandomSequencesMatchNaiveReference) {
  const uint64_t seed = ::strata::testing::TestSeed();
  for (uint64_t round = 0; round < 4; ++round) {
    RunRandomSequence(GetParam(), seed + round, 2500, round % 2 == 0 ? 24 : 96);
    if (HasFatalFailure()) return;
  }
}

// The same sequences with every update of 2 (or 8) nodes or more "large": batches and
// deferred updates run split across threads, batches with streaming stores.
TEST_P(TransformModes, RandomSequencesMatchNaiveReferenceOnTheParallelStreamingPaths) {
  const uint64_t seed = ::strata::testing::TestSeed() + 100;
  for (uint64_t round = 0; round < 4; ++round) {
    RunRandomSequence(GetParam(), seed + round, 2500, round % 2 == 0 ? 24 : 96,
                      round < 2 ? 2 : 8);
    if (HasFatalFailure()) return;
  }
}

// ---- Large updates: bit-identical to the serial path --------------------------------

// Two components fed the same calls: `fast` with the given thresholds, `serial` with
// parallel and streaming paths off. Every world must match bit for bit (same kernel,
// same arithmetic), and both the naive reference within rounding.
class LargeUpdates {
 public:
  LargeUpdates(Mode mode, size_t threshold) {
    TransformComponent::Options options = WithMode(mode);
    TransformComponent::Options serial = options;
    if (threshold > 0) {
      options.parallel_min_nodes = threshold;
      options.stream_min_nodes = threshold;
    }
    serial.parallel_min_nodes = SIZE_MAX;
    serial.stream_min_nodes = SIZE_MAX;
    fast_ = std::make_unique<TransformComponent>(options);
    serial_ = std::make_unique<TransformComponent>(serial);
  }

  // `families` roots, each followed by `children` children (some with a grandchild).
  void Build(Random& rng, size_t families, size_t children) {
    std::vector<Entity> entities;
    std::vector<Matrix4x4> locals;
    std::vector<Entity> kids, dads;
    for (size_t f = 0; f < families; ++f) {
      const Entity root(static_cast<uint32_t>(entities.size()), 0);
      entities.push_back(root);
      roots_.push_back(root);
      Entity previous = root;
      for (size_t c = 0; c < children; ++c) {
        const Entity kid(static_cast<uint32_t>(entities.size()), 0);
        entities.push_back(kid);
        kids.push_back(kid);
        // Every third child hangs below the previous one: depth up to 3 and families
        // whose children are not all leaves.
        dads.push_back(c % 3 == 2 ? previous : root);
        previous = kid;
      }
    }
    for (size_t k = 0; k < entities.size(); ++k) locals.push_back(RandomRigid(rng));
    for (TransformComponent* tc : {fast_.get(), serial_.get()}) {
      std::vector<Instance> out(entities.size());
      ASSERT_THAT(tc->CreateBatch(entities, locals, absl::MakeSpan(out)), IsOk());
      std::vector<Instance> c, p;
      for (size_t k = 0; k < kids.size(); ++k) {
        c.push_back(tc->Lookup(kids[k]));
        p.push_back(tc->Lookup(dads[k]));
      }
      ASSERT_THAT(tc->LinkBatch(c, p), IsOk());
    }
    for (size_t k = 0; k < entities.size(); ++k) ref_[entities[k]] = {locals[k], Entity()};
    for (size_t k = 0; k < kids.size(); ++k) ref_[kids[k]].parent = dads[k];
    all_ = entities;
  }

  enum class How { kSetLocal, kBatch, kPrepared };
  // Sets `which` (entities) to fresh matrices, by one SetLocal each, SetLocalBatch, or
  // (`fast` only) SetLocalBatch with a PreparedBatch, prepared, used, then used again
  // with other matrices: the second use skips the handle checks.
  void Set(Random& rng, const std::vector<Entity>& which, How how) {
    if (how == How::kPrepared) {
      std::vector<Instance> instances;
      for (Entity e : which) instances.push_back(fast_->Lookup(e));
      STRATA_ASSERT_OK_AND_ASSIGN(TransformComponent::PreparedBatch batch,
                                  fast_->PrepareBatch(instances));
      std::vector<Matrix4x4> first(which.size());
      for (Matrix4x4& l : first) l = RandomRigid(rng);
      ASSERT_THAT(fast_->SetLocalBatch(batch, first), IsOk());
      fast_->UpdateWorld();
      std::vector<Matrix4x4> second;
      for (Entity e : which) {
        second.push_back(RandomRigid(rng));
        ref_[e].local = second.back();
      }
      ASSERT_THAT(fast_->SetLocalBatch(batch, second), IsOk());
      fast_->UpdateWorld();
      // The serial twin gets the same matrices the plain way.
      ASSERT_THAT(serial_->SetLocalBatch(Lookup(*serial_, which), first), IsOk());
      serial_->UpdateWorld();
      ASSERT_THAT(serial_->SetLocalBatch(Lookup(*serial_, which), second), IsOk());
      serial_->UpdateWorld();
      return;
    }
    const bool batch = how == How::kBatch;
    std::vector<Matrix4x4> locals;
    for (Entity e : which) {
      locals.push_back(RandomRigid(rng));
      ref_[e].local = locals.back();  // a repeat takes its last matrix
    }
    for (TransformComponent* tc : {fast_.get(), serial_.get()}) {
      std::vector<Instance> instances;
      for (Entity e : which) instances.push_back(tc->Lookup(e));
      if (batch) {
        ASSERT_THAT(tc->SetLocalBatch(instances, locals), IsOk());
      } else {
        for (size_t k = 0; k < instances.size(); ++k) {
          ASSERT_TRUE(tc->SetLocal(instances[k], locals[k]));
        }
      }
      tc->UpdateWorld();
    }
  }

  void Check() {
    ASSERT_THAT(fast_->CheckInvariants(), IsOk());
    std::map<Entity, Matrix4x4> cache;
    for (Entity e : all_) {
      const Matrix4x4& world = fast_->World(fast_->Lookup(e));
      ASSERT_EQ(world, serial_->World(serial_->Lookup(e))) << e;
      ASSERT_EQ(fast_->Local(fast_->Lookup(e)), ref_.at(e).local) << e;
      const Matrix4x4 expected = RefWorld(ref_, e, cache);
      ASSERT_TRUE(NearlyEqual(world, expected, 2e-4f, 1e-4f))
          << e << " world " << world << " expected " << expected;
    }
  }

  static std::vector<Instance> Lookup(const TransformComponent& tc,
                                      const std::vector<Entity>& which) {
    std::vector<Instance> instances;
    for (Entity e : which) instances.push_back(tc.Lookup(e));
    return instances;
  }

  const std::vector<Entity>& roots() const { return roots_; }
  const std::vector<Entity>& all() const { return all_; }
  TransformComponent& fast() { return *fast_; }

 private:
  std::unique_ptr<TransformComponent> fast_, serial_;
  std::map<Entity, RefNode> ref_;
  std::vector<Entity> roots_, all_;
};

void RunLargeUpdates(Mode mode, size_t threshold, size_t families, size_t children) {
  Random rng(::strata::testing::TestSeed() + families * 31 + children);
  SCOPED_TRACE(rng.DescribeSeed());
  LargeUpdates t(mode, threshold);
  t.Build(rng, families, children);
  if (::testing::Test::HasFatalFailure()) return;
  // Every root moves (the Hierarchy and FlatAll shapes), in memory order: the
  // all-roots path.
  // Prepared: a run of lone roots when there are no children (a plain copy), else the
  // roots' walks.
  using How = LargeUpdates::How;
  for (How how : {How::kBatch, How::kSetLocal, How::kPrepared}) {
    t.Set(rng, t.roots(), how);
    t.Check();
    if (::testing::Test::HasFatalFailure()) return;
  }
  // Roots in random order with repeats: the marked path (parallel over its roots).
  std::vector<Entity> shuffled;
  for (size_t k = 0; k < t.roots().size() + t.roots().size() / 4; ++k) {
    shuffled.push_back(t.roots()[rng.UniformIndex(t.roots().size())]);
  }
  for (How how : {How::kBatch, How::kPrepared}) {
    t.Set(rng, shuffled, how);
    t.Check();
    if (::testing::Test::HasFatalFailure()) return;
  }
  if (::testing::Test::HasFatalFailure()) return;
  // Every node, parents and children mixed: roots of the walks are the families' roots.
  std::vector<Entity> everyone = t.all();
  for (size_t k = everyone.size(); k > 1; --k) {
    std::swap(everyone[k - 1], everyone[rng.UniformIndex(k)]);
  }
  for (How how : {How::kBatch, How::kPrepared}) {
    t.Set(rng, everyone, how);
    t.Check();
    if (::testing::Test::HasFatalFailure()) return;
  }
  if (::testing::Test::HasFatalFailure()) return;
  // A few nodes only (below every threshold), then idle updates that shrink the dirty
  // range in deferred mode.
  t.Set(rng, {t.all()[1], t.all()[t.all().size() / 2]}, How::kSetLocal);
  for (int frame = 0; frame < 7; ++frame) t.fast().UpdateWorld();
  t.Check();
}

TEST_P(TransformModes, LargeUpdatesAreBitIdenticalToSerialWithLowThresholds) {
  RunLargeUpdates(GetParam(), /*threshold=*/64, /*families=*/700, /*children=*/9);
  if (HasFatalFailure()) return;
  RunLargeUpdates(GetParam(), /*threshold=*/64, /*families=*/3000, /*children=*/0);
}

// Above the default thresholds (parallel_min_nodes 16384, stream_min_nodes 65536 of
// the written nodes for a batch).
TEST_P(TransformModes, LargeUpdatesAreBitIdenticalToSerialAtDefaultThresholds) {
  TransformComponent::Options defaults;
  ASSERT_LE(defaults.parallel_min_nodes, 20000u);
  ASSERT_LE(defaults.stream_min_nodes, 70000u);
  // 70,000 roots; then 66,000 roots with a child each (132,000 nodes).
  RunLargeUpdates(GetParam(), /*threshold=*/0, /*families=*/70000, /*children=*/0);
  if (HasFatalFailure()) return;
  RunLargeUpdates(GetParam(), /*threshold=*/0, /*families=*/66000, /*children=*/1);
}

}  // namespace
}  // namespace strata
