// TransformComponent: CreateBatch with parents (the spawn path) against Create plus
// LinkBatch, and the entity -> transform table behind Lookup.
#include <cstddef>
#include <cstdint>
#include <vector>

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
#include "transform/transform_component.h"

namespace strata {
namespace {

using ::strata::testing::IsOk;
using ::strata::testing::Random;
using ::strata::testing::StatusIs;
using ::strata::transform_internal::Mode;
using ::strata::transform_internal::ModeName;
using ::strata::transform_internal::RandomRigid;
using ::strata::transform_internal::TransformModes;
using ::strata::transform_internal::WithMode;
using ::testing::HasSubstr;

constexpr uint32_t kRoot = TransformComponent::kNoBatchParent;

INSTANTIATE_TEST_SUITE_P(Modes, TransformModes,
                         ::testing::Values(Mode::kImmediate, Mode::kDeferred), ModeName);

// The batch index of handle h among `handles` (-1 for the invalid handle).
int64_t IndexOf(const std::vector<TransformHandle>& handles, TransformHandle h) {
  if (!h.is_valid()) return -1;
  for (size_t k = 0; k < handles.size(); ++k) {
    if (handles[k] == h) return static_cast<int64_t>(k);
  }
  return -2;
}

// A random forest of n nodes (parents[i] < i or a root), some nodes already present.
TEST_P(TransformModes, CreateBatchWithParentsEqualsCreateBatchThenLinkBatch) {
  for (const size_t n : {size_t{0}, size_t{1}, size_t{2}, size_t{700}, size_t{3000}}) {
    Random rng(testing::TestSeed() + n);
    SCOPED_TRACE(rng.DescribeSeed());
    std::vector<Entity> entities;
    std::vector<Matrix4x4> locals;
    std::vector<uint32_t> parents;
    for (size_t i = 0; i < n; ++i) {
      entities.emplace_back(static_cast<uint32_t>(i + 10), 0);
      locals.push_back(RandomRigid(rng));
      parents.push_back(i == 0 || rng.Bernoulli(0.2) ? kRoot
                                                     : static_cast<uint32_t>(rng.UniformInt(0, static_cast<int>(i) - 1)));
    }
    TransformComponent batched(WithMode(GetParam()));
    TransformComponent linked(WithMode(GetParam()));
    // Something already there, so the batch does not start at position 0.
    for (TransformComponent* tc : {&batched, &linked}) {
      STRATA_ASSERT_OK_AND_ASSIGN(TransformHandle a, tc->Create(Entity(1, 0), Matrix4x4::Translation(1, 0, 0)));
      STRATA_ASSERT_OK_AND_ASSIGN(TransformHandle b, tc->Create(Entity(2, 0), Matrix4x4::Translation(0, 2, 0)));
      STRATA_ASSERT_OK(tc->Link(b, a));
    }
    std::vector<TransformHandle> out_batched(n);
    ASSERT_THAT(batched.CreateBatch(entities, locals, parents, absl::MakeSpan(out_batched)), IsOk());
    std::vector<TransformHandle> out_linked(n);
    ASSERT_THAT(linked.CreateBatch(entities, locals, absl::MakeSpan(out_linked)), IsOk());
    std::vector<TransformHandle> children, parent_handles;
    for (size_t i = 0; i < n; ++i) {
      if (parents[i] == kRoot) continue;
      children.push_back(out_linked[i]);
      parent_handles.push_back(out_linked[parents[i]]);
    }
    ASSERT_THAT(linked.LinkBatch(children, parent_handles), IsOk());
    Settle(batched);
    Settle(linked);
    ASSERT_THAT(batched.CheckInvariants(), IsOk());
    ASSERT_THAT(linked.CheckInvariants(), IsOk());
    ASSERT_EQ(batched.size(), linked.size());
    for (size_t i = 0; i < n; ++i) {
      const TransformHandle b = out_batched[i], l = out_linked[i];
      ASSERT_EQ(batched.Lookup(entities[i]), b);
      ASSERT_EQ(batched.entity(b), entities[i]);
      // Same links (as batch indices), same sibling order, same matrices bit for bit.
      ASSERT_EQ(IndexOf(out_batched, batched.Parent(b)), IndexOf(out_linked, linked.Parent(l))) << i;
      ASSERT_EQ(IndexOf(out_batched, batched.FirstChild(b)), IndexOf(out_linked, linked.FirstChild(l))) << i;
      ASSERT_EQ(IndexOf(out_batched, batched.NextSibling(b)), IndexOf(out_linked, linked.NextSibling(l))) << i;
      ASSERT_EQ(batched.Local(b), locals[i]);
      ASSERT_EQ(batched.World(b), linked.World(l)) << i;
    }
  }
}

// A batch whose storage a helper thread faults in ahead of it (prefault_min_nodes 1)
// gives exactly what the same batches give without one: growth in the middle, reused
// ids, both overloads, then a batch update through the marks the growth left unset.
TEST_P(TransformModes, PrefaultedBatchesEqualPlainOnes) {
  TransformComponent::Options with = WithMode(GetParam()), without = WithMode(GetParam());
  with.prefault_min_nodes = 1;
  without.prefault_min_nodes = SIZE_MAX;
  TransformComponent prefaulted(with), plain(without);
  Random rng(testing::TestSeed());
  SCOPED_TRACE(rng.DescribeSeed());
  std::vector<std::vector<TransformHandle>> handles(2);
  uint32_t next_entity = 0;
  for (const size_t n : {size_t{40}, size_t{5000}, size_t{1}, size_t{70000}}) {
    std::vector<Entity> entities;
    std::vector<Matrix4x4> locals;
    std::vector<uint32_t> parents;
    for (size_t i = 0; i < n; ++i) {
      entities.emplace_back(next_entity++, 0);
      locals.push_back(RandomRigid(rng));
      parents.push_back(i == 0 || rng.Bernoulli(0.3)
                            ? kRoot
                            : static_cast<uint32_t>(rng.UniformInt(0, static_cast<int>(i) - 1)));
    }
    int side = 0;
    for (TransformComponent* tc : {&prefaulted, &plain}) {
      std::vector<TransformHandle> out(n);
      if (n % 2 == 0) {
        ASSERT_THAT(tc->CreateBatch(entities, locals, parents, absl::MakeSpan(out)), IsOk());
      } else {
        ASSERT_THAT(tc->CreateBatch(entities, locals, absl::MakeSpan(out)), IsOk());
      }
      // Destroy every third handle so far: the next batch reuses their ids.
      std::vector<TransformHandle>& all = handles[side++];
      all.insert(all.end(), out.begin(), out.end());
      for (size_t k = 0; k < all.size(); k += 3) {
        if (tc->IsValid(all[k])) {
          ASSERT_THAT(tc->Destroy(all[k]), IsOk());
        }
      }
      Settle(*tc);
      ASSERT_THAT(tc->CheckInvariants(), IsOk());
    }
    ASSERT_EQ(handles[0], handles[1]);
    ASSERT_EQ(prefaulted.size(), plain.size());
  }
  // Every third live node moves, children with their parents: the marked update path.
  std::vector<TransformHandle> movers;
  std::vector<Matrix4x4> moved;
  for (size_t k = 0; k < handles[0].size(); k += 3) {
    if (!prefaulted.IsValid(handles[0][k])) continue;
    movers.push_back(handles[0][k]);
    moved.push_back(RandomRigid(rng));
  }
  ASSERT_THAT(prefaulted.SetLocalBatch(movers, moved), IsOk());
  ASSERT_THAT(plain.SetLocalBatch(movers, moved), IsOk());
  Settle(prefaulted);
  Settle(plain);
  ASSERT_THAT(prefaulted.CheckInvariants(), IsOk());
  for (size_t k = 0; k < handles[0].size(); ++k) {
    const TransformHandle h = handles[0][k];
    ASSERT_EQ(prefaulted.IsValid(h), plain.IsValid(h)) << k;
    if (!plain.IsValid(h)) continue;
    ASSERT_EQ(prefaulted.Parent(h), plain.Parent(h)) << k;
    ASSERT_EQ(prefaulted.Local(h), plain.Local(h)) << k;
    ASSERT_EQ(prefaulted.World(h), plain.World(h)) << k;
  }
}

TEST_P(TransformModes, CreateBatchWithParentsWithoutOut) {
  TransformComponent tc(WithMode(GetParam()));
  const std::vector<Entity> entities = {Entity(0, 0), Entity(1, 0), Entity(2, 0)};
  const std::vector<Matrix4x4> locals = {Matrix4x4::Translation(1, 0, 0),
                                         Matrix4x4::Translation(0, 1, 0),
                                         Matrix4x4::Translation(0, 0, 1)};
  ASSERT_THAT(tc.CreateBatch(entities, locals, std::vector<uint32_t>{kRoot, 0, 1}, {}), IsOk());
  Settle(tc);
  const TransformHandle leaf = tc.Lookup(entities[2]);
  ASSERT_TRUE(leaf.is_valid());
  EXPECT_EQ(tc.Parent(leaf), tc.Lookup(entities[1]));
  EXPECT_EQ(tc.World(leaf), Matrix4x4::Translation(1, 1, 1));
  EXPECT_THAT(tc.CheckInvariants(), IsOk());
}

TEST_P(TransformModes, CreateBatchWithParentsIsAllOrNothing) {
  EntityManager manager;
  TransformComponent tc(WithMode(GetParam()));
  tc.ConnectTo(manager);
  std::vector<Entity> e(4);
  manager.CreateBatch(absl::MakeSpan(e));
  STRATA_ASSERT_OK(tc.Create(e[3], Matrix4x4::Identity()).status());
  const std::vector<Matrix4x4> locals(3, Matrix4x4::Translation(1, 1, 1));
  std::vector<TransformHandle> out(3);
  auto create = [&](std::vector<Entity> entities, std::vector<uint32_t> parents) {
    return tc.CreateBatch(entities, locals, parents, absl::MakeSpan(out));
  };
  EXPECT_THAT(create({e[0], e[1], e[2]}, {kRoot, 0}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("sizes")));
  EXPECT_THAT(create({e[0], e[1], e[2]}, {kRoot, 1, 0}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("parents[1] is 1")));
  EXPECT_THAT(create({e[0], e[1], e[2]}, {kRoot, 2, 0}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("parents[1] is 2")));
  // The entity checks, in order, each leaving nothing behind (claims released).
  EXPECT_THAT(create({e[0], e[1], e[3]}, {kRoot, 0, 1}),
              StatusIs(absl::StatusCode::kAlreadyExists, HasSubstr("entities[2]")));
  EXPECT_THAT(create({e[0], e[1], e[0]}, {kRoot, 0, 1}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("entities[2]")));
  EXPECT_THAT(create({e[0], Entity(), e[1]}, {kRoot, 0, 1}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("entities[1] is invalid")));
  EXPECT_THAT(create({e[0], Entity(e[1].index(), e[1].generation() + 1), e[2]}, {kRoot, 0, 1}),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("entities[1]")));
  EXPECT_THAT(create({e[0], e[1], Entity(77, 0)}, {kRoot, 0, 1}),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("entities[2]")));
  EXPECT_EQ(tc.size(), 1u);
  for (int k = 0; k < 3; ++k) EXPECT_FALSE(tc.Lookup(e[k]).is_valid());
  ASSERT_THAT(tc.CheckInvariants(), IsOk());
  // After every failure the same entities go in.
  ASSERT_THAT(create({e[0], e[1], e[2]}, {kRoot, 0, 0}), IsOk());
  for (int k = 0; k < 3; ++k) EXPECT_EQ(tc.Lookup(e[k]), out[k]);
  EXPECT_EQ(tc.Parent(out[2]), out[0]);
  EXPECT_THAT(tc.CheckInvariants(), IsOk());
}

// Spawn, destroy, spawn again on reused indices: stale entities find nothing, the new
// generations find their own transforms.
TEST_P(TransformModes, RespawnOnReusedIndices) {
  EntityManager::Options options;
  options.min_free_indices = 0;  // reuse at once
  EntityManager manager(options);
  TransformComponent tc(WithMode(GetParam()));
  tc.ConnectTo(manager);
  std::vector<Entity> first(5000);
  for (int round = 0; round < 3; ++round) {
    std::vector<Entity> e(first.size());
    manager.CreateBatch(absl::MakeSpan(e));
    std::vector<uint32_t> parents(e.size());
    for (size_t i = 0; i < e.size(); ++i) parents[i] = i % 4 == 0 ? kRoot : static_cast<uint32_t>(i - 1);
    ASSERT_THAT(tc.CreateBatch(e, std::vector<Matrix4x4>(e.size(), Matrix4x4::Translation(1, 0, 0)),
                               parents, {}),
                IsOk());
    Settle(tc);
    EXPECT_EQ(tc.size(), e.size());
    EXPECT_EQ(tc.World(tc.Lookup(e[3])), Matrix4x4::Translation(4, 0, 0));
    if (round > 0) {
      EXPECT_EQ(e[0].index(), first[0].index());  // the same slots, newer generations
      for (const Entity old : first) ASSERT_FALSE(tc.Lookup(old).is_valid()) << old;
    }
    ASSERT_THAT(tc.CheckInvariants(), IsOk());
    ASSERT_THAT(manager.DestroyBatch(e), IsOk());
    EXPECT_EQ(tc.size(), 0u);
    first = e;
  }
}

// Disconnected, a component may hold two generations of one index (the entity table
// keeps the second aside) and entities with any index.
TEST_P(TransformModes, DisconnectedGenerationsAndLargeIndices) {
  TransformComponent tc(WithMode(GetParam()));
  const Entity old_gen(5, 1), new_gen(5, 2), far(0xFFFFFFFEu, 7);
  STRATA_ASSERT_OK_AND_ASSIGN(TransformHandle a, tc.Create(old_gen, Matrix4x4::Translation(1, 0, 0)));
  STRATA_ASSERT_OK_AND_ASSIGN(TransformHandle b, tc.Create(new_gen, Matrix4x4::Translation(2, 0, 0)));
  EXPECT_THAT(tc.Create(new_gen, Matrix4x4::Identity()), StatusIs(absl::StatusCode::kAlreadyExists));
  EXPECT_EQ(tc.Lookup(old_gen), a);
  EXPECT_EQ(tc.Lookup(new_gen), b);
  EXPECT_FALSE(tc.Lookup(Entity(5, 3)).is_valid());
  std::vector<TransformHandle> out(3);
  const std::vector<Matrix4x4> locals(3, Matrix4x4::Identity());
  // A third generation and the far index in one batch; then the repeat of the third is
  // caught though it sits outside the table.
  EXPECT_THAT(tc.CreateBatch({Entity(5, 3), far, Entity(5, 3)}, locals, absl::MakeSpan(out)),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("entities[2]")));
  EXPECT_THAT(tc.CreateBatch({Entity(5, 3), far, old_gen}, locals, absl::MakeSpan(out)),
              StatusIs(absl::StatusCode::kAlreadyExists, HasSubstr("entities[2]")));
  EXPECT_EQ(tc.size(), 2u);
  ASSERT_THAT(tc.CreateBatch({Entity(5, 3), far, Entity(6, 0)}, locals, std::vector<uint32_t>{kRoot, 0, 1},
                             absl::MakeSpan(out)),
              IsOk());
  EXPECT_EQ(tc.Lookup(Entity(5, 3)), out[0]);
  EXPECT_EQ(tc.Lookup(far), out[1]);
  EXPECT_EQ(tc.Parent(out[2]), out[1]);
  ASSERT_THAT(tc.CheckInvariants(), IsOk());
  EXPECT_TRUE(tc.DestroyEntity(old_gen));
  EXPECT_FALSE(tc.DestroyEntity(old_gen));
  EXPECT_EQ(tc.Lookup(new_gen), b);
  EXPECT_TRUE(tc.DestroyEntity(new_gen));
  EXPECT_EQ(tc.Lookup(Entity(5, 3)), out[0]);
  EXPECT_TRUE(tc.DestroyEntity(far));
  EXPECT_FALSE(tc.Lookup(far).is_valid());
  EXPECT_EQ(tc.size(), 2u);
  // The freed slot takes a new entity again.
  STRATA_ASSERT_OK(tc.Create(Entity(5, 9), Matrix4x4::Identity()).status());
  EXPECT_THAT(tc.CheckInvariants(), IsOk());
}

}  // namespace
}  // namespace strata
