// TransformComponent: random operation sequences checked against a naive recursive
// reference after every step, on the serial and the parallel/streaming paths.
#include "transform/transform_component.h"

#include <cstddef>
#include <cstdint>
#include <map>
#include <set>
#include <utility>
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
using ::strata::transform_internal::RandomRigid;
using ::strata::transform_internal::RefIsAncestorOrSelf;
using ::strata::transform_internal::RefNode;
using ::strata::transform_internal::RefWorld;

INSTANTIATE_TEST_SUITE_P(Modes, TransformModes,
                         ::testing::Values(Mode::kImmediate, Mode::kDeferred), ModeName);

// large_update_threshold: Options::parallel_min_nodes and stream_min_nodes (0: the
// defaults), so that small sequences exercise the parallel and streaming paths.
// With the change log on, each check also takes the changes and compares them with
// the reference: every entity whose world matrix differs from the last check, or that
// is new, is reported moved or created; every one gone is reported destroyed.
void RunRandomSequence(Mode mode, uint64_t seed, int steps, size_t max_nodes,
                       size_t large_update_threshold = 0, bool log_changes = true) {
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
  tc.set_change_log(log_changes);
  std::map<Entity, Matrix4x4> world_at_last_check;
  std::map<Entity, RefNode> ref;
  std::map<Entity, TransformHandle> handle;
  std::vector<TransformHandle> stale;
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
        std::vector<TransformHandle> out(n);
        ASSERT_THAT(tc.CreateBatch(es, ls, absl::MakeSpan(out)), IsOk());
        for (size_t k = 0; k < n; ++k) {
          ref[es[k]] = {ls[k], Entity()};
          handle[es[k]] = out[k];
        }
      } else {
        const Entity e = manager.Create();
        const Matrix4x4 l = RandomRigid(rng);
        STRATA_ASSERT_OK_AND_ASSIGN(TransformHandle i, tc.Create(e, l));
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
      std::vector<TransformHandle> is(n);
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
        std::vector<TransformHandle> is(n);
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
        const TransformHandle s = stale[rng.UniformIndex(stale.size())];
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
      const TransformHandle i = handle.at(e);
      ASSERT_EQ(tc.Lookup(e), i);
      ASSERT_EQ(tc.Local(i), node.local);
      const Entity parent = tc.entity(tc.Parent(i));
      ASSERT_EQ(parent, node.parent);
      const Matrix4x4 expected = RefWorld(ref, e, cache);
      ASSERT_TRUE(NearlyEqual(tc.World(i), expected, 2e-4f, 1e-4f))
          << e << " world " << tc.World(i) << " expected " << expected;
    }
    if (!log_changes) continue;
    std::set<Entity> moved_or_created;
    std::set<Entity> destroyed;
    tc.TakeChanges([&](Entity e, TransformComponent::Change change) {
      switch (change) {
        case TransformComponent::Change::kDestroyed:
          ASSERT_TRUE(!ref.contains(e)) << e << " reported destroyed, but it is here";
          destroyed.insert(e);
          break;
        case TransformComponent::Change::kMoved:  // a node destroyed since is skipped
          ASSERT_TRUE(ref.contains(e)) << e << " reported moved, but it is gone";
          moved_or_created.insert(e);
          break;
        case TransformComponent::Change::kCreated:  // and perhaps destroyed after
          moved_or_created.insert(e);
          break;
      }
    });
    for (Entity e : moved_or_created) {
      if (!ref.contains(e)) {
        ASSERT_TRUE(destroyed.contains(e)) << e << " gone unreported";
      }
    }
    for (const auto& [e, world] : world_at_last_check) {
      if (!ref.contains(e)) {
        ASSERT_TRUE(destroyed.contains(e)) << e << " gone unreported";
      }
    }
    for (const auto& [e, node] : ref) {
      auto before = world_at_last_check.find(e);
      if (before == world_at_last_check.end() || !(before->second == cache.at(e))) {
        ASSERT_TRUE(moved_or_created.contains(e)) << e << " changed unreported";
      }
    }
    world_at_last_check = cache;
  }
}

// Deferred mode: a move is taken only once an UpdateWorld has applied it; a creation
// or a destruction at once.
TEST(TransformChangeLog, DeferredChangesWaitForUpdateWorld) {
  EntityManager manager;
  TransformComponent tc(WithMode(Mode::kDeferred));
  const Entity a = manager.Create(), b = manager.Create();
  STRATA_ASSERT_OK_AND_ASSIGN(TransformHandle ia, tc.Create(a, Matrix4x4::Identity()));
  tc.set_change_log(true);  // what came before is not logged
  STRATA_ASSERT_OK_AND_ASSIGN(TransformHandle ib, tc.Create(b, Matrix4x4::Identity()));
  ASSERT_THAT(tc.Link(ib, ia), IsOk());
  std::vector<std::pair<Entity, TransformComponent::Change>> taken;
  auto take = [&] {
    taken.clear();
    tc.TakeChanges([&](Entity e, TransformComponent::Change c) { taken.emplace_back(e, c); });
  };
  using C = TransformComponent::Change;
  take();  // the creation at once, the link's move not yet
  EXPECT_THAT(taken, ::testing::ElementsAre(std::pair(b, C::kCreated)));
  tc.UpdateWorld();
  ASSERT_TRUE(tc.SetLocal(ia, Matrix4x4::Translation(1, 2, 3)));  // after the update
  take();
  EXPECT_THAT(taken, ::testing::ElementsAre(std::pair(b, C::kMoved)));
  take();
  EXPECT_TRUE(taken.empty());
  tc.UpdateWorld();
  take();  // a's subtree: a, then b
  EXPECT_THAT(taken, ::testing::ElementsAre(std::pair(a, C::kMoved), std::pair(b, C::kMoved)));
  ASSERT_THAT(tc.Destroy(ia), IsOk());  // b becomes a root: its world changes
  tc.UpdateWorld();
  take();
  EXPECT_THAT(taken, ::testing::ElementsAre(std::pair(a, C::kDestroyed), std::pair(b, C::kMoved)));
  tc.set_change_log(false);
  ASSERT_TRUE(tc.SetLocal(ib, Matrix4x4::Identity()));
  tc.UpdateWorld();
  take();
  EXPECT_TRUE(taken.empty());
}

TEST_P(TransformModes, RandomSequencesMatchNaiveReference) {
  const uint64_t seed = ::strata::testing::TestSeed();
  for (uint64_t round = 0; round < 4; ++round) {
    RunRandomSequence(GetParam(), seed + round, 2500, round % 2 == 0 ? 24 : 96,
                      /*large_update_threshold=*/0, /*log_changes=*/round != 1);
    if (HasFatalFailure()) return;
  }
}

// The same sequences with every update of 2 (or 8) nodes or more "large": batches and
// deferred updates run split across threads, batches with streaming stores.
TEST_P(TransformModes, RandomSequencesMatchNaiveReferenceOnTheParallelStreamingPaths) {
  const uint64_t seed = ::strata::testing::TestSeed() + 100;
  for (uint64_t round = 0; round < 4; ++round) {
    RunRandomSequence(GetParam(), seed + round, 2500, round % 2 == 0 ? 24 : 96,
                      round < 2 ? 2 : 8, /*log_changes=*/round != 1);
    if (HasFatalFailure()) return;
  }
}

}  // namespace
}  // namespace strata
