#include "entity/entity_manager.h"

#include <cstdint>
#include <deque>
#include <memory>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "entity/entity.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/random.h"
#include "testing/status_matchers.h"

namespace strata {
namespace {

using ::strata::testing::IsOk;
using ::strata::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

EntityManager::Options Opts(uint32_t min_free, uint32_t max_generation = 0x7FFFFFFFu) {
  EntityManager::Options options;
  options.min_free_indices = min_free;
  options.max_generation = max_generation;
  return options;
}

// The oracle: the documented semantics written the obvious way.
class NaiveManager {
 public:
  explicit NaiveManager(EntityManager::Options options) : options_(options) {}

  Entity Create() {
    ++live_;
    if (free_.size() > options_.min_free_indices) {
      const uint32_t index = free_.front();
      free_.pop_front();
      slots_[index].alive = true;
      return Entity(index, slots_[index].generation);
    }
    slots_.push_back({0, true});
    return Entity(static_cast<uint32_t>(slots_.size() - 1), 0);
  }

  bool Alive(Entity e) const {
    return e.index() < slots_.size() && slots_[e.index()].alive &&
           slots_[e.index()].generation == e.generation();
  }

  bool Destroy(Entity e) { return DestroyBatch({e}); }

  bool DestroyBatch(const std::vector<Entity>& batch) {
    absl::flat_hash_set<Entity> seen;
    for (Entity e : batch) {
      if (!Alive(e) || !seen.insert(e).second) return false;
    }
    for (Entity e : batch) {
      Slot& slot = slots_[e.index()];
      slot.alive = false;
      if (slot.generation >= options_.max_generation) continue;  // retired
      ++slot.generation;
      free_.push_back(e.index());
    }
    live_ -= batch.size();
    return true;
  }

  size_t size() const { return live_; }

 private:
  struct Slot {
    uint32_t generation;
    bool alive;
  };
  EntityManager::Options options_;
  std::vector<Slot> slots_;
  std::deque<uint32_t> free_;
  size_t live_ = 0;
};

TEST(EntityManager, StartsEmpty) {
  EntityManager manager;
  EXPECT_EQ(manager.size(), 0u);
  EXPECT_EQ(manager.slots_used(), 0u);
  EXPECT_EQ(manager.free_slots(), 0u);
  EXPECT_EQ(manager.retired_slots(), 0u);
  EXPECT_FALSE(manager.Alive(Entity()));
  EXPECT_FALSE(manager.Alive(Entity(0, 0)));
}

TEST(EntityManager, CreateIssuesFreshSlotsAtGenerationZero) {
  EntityManager manager;
  const Entity a = manager.Create();
  const Entity b = manager.Create();
  EXPECT_EQ(a, Entity(0, 0));
  EXPECT_EQ(b, Entity(1, 0));
  EXPECT_TRUE(manager.Alive(a));
  EXPECT_TRUE(manager.Alive(b));
  EXPECT_EQ(manager.size(), 2u);
  EXPECT_EQ(manager.slots_used(), 2u);
}

TEST(EntityManager, DestroyMakesEveryCopyStale) {
  EntityManager manager;
  const Entity e = manager.Create();
  const Entity copy = e;
  EXPECT_THAT(manager.Destroy(e), IsOk());
  EXPECT_FALSE(manager.Alive(e));
  EXPECT_FALSE(manager.Alive(copy));
  EXPECT_EQ(manager.size(), 0u);
}

TEST(EntityManager, BadHandlesAreRejectedAndChangeNothing) {
  EntityManager manager(Opts(/*min_free=*/0));
  const Entity e = manager.Create();
  const Entity keep = manager.Create();
  ASSERT_THAT(manager.Destroy(e), IsOk());
  const size_t free_before = manager.free_slots();

  const Entity bad[] = {
      e,                            // already destroyed (stale)
      Entity(),                     // invalid
      Entity(5, 0),                 // never issued: index beyond the table
      Entity(keep.index(), 7),      // wrong generation
      Entity(e.index(), 1u | 0x80000000u),  // forged: the slot's free-marked word
      Entity(e.index(), 0x80000000u),
  };
  for (Entity b : bad) {
    SCOPED_TRACE(b.DebugString());
    EXPECT_FALSE(manager.Alive(b));
    EXPECT_THAT(manager.Destroy(b),
                StatusIs(absl::StatusCode::kNotFound, HasSubstr("not alive")));
    EXPECT_THAT(manager.DestroyBatch({b}), StatusIs(absl::StatusCode::kNotFound));
    EXPECT_EQ(manager.size(), 1u);
    EXPECT_EQ(manager.free_slots(), free_before);
    EXPECT_TRUE(manager.Alive(keep));
  }
  // The slot freed once is reused once, with the next generation.
  EXPECT_EQ(manager.Create(), Entity(e.index(), 1));
  EXPECT_EQ(manager.Create(), Entity(2, 0));
}

TEST(EntityManager, GenerationBumpsOnReuse) {
  EntityManager manager(Opts(/*min_free=*/0));
  Entity e = manager.Create();
  for (uint32_t generation = 1; generation <= 5; ++generation) {
    const Entity old = e;
    ASSERT_THAT(manager.Destroy(old), IsOk());
    e = manager.Create();
    EXPECT_EQ(e, Entity(0, generation));
    EXPECT_FALSE(manager.Alive(old));
    EXPECT_TRUE(manager.Alive(e));
  }
  EXPECT_EQ(manager.slots_used(), 1u);
}

TEST(EntityManager, FreedSlotsAreReusedLateInFifoOrder) {
  EntityManager manager(Opts(/*min_free=*/3));
  std::vector<Entity> e(8);
  manager.CreateBatch(absl::MakeSpan(e));
  for (int i : {5, 1, 6, 2, 7}) ASSERT_THAT(manager.Destroy(e[i]), IsOk());
  ASSERT_EQ(manager.free_slots(), 5u);
  // Reuse only while more than 3 slots are free: 2 reuses, oldest first.
  EXPECT_EQ(manager.Create(), Entity(5, 1));
  EXPECT_EQ(manager.Create(), Entity(1, 1));
  EXPECT_EQ(manager.free_slots(), 3u);
  EXPECT_EQ(manager.Create(), Entity(8, 0));  // queue at minimum: fresh slot
  EXPECT_EQ(manager.free_slots(), 3u);
  ASSERT_THAT(manager.Destroy(Entity(5, 1)), IsOk());
  EXPECT_EQ(manager.Create(), Entity(6, 1));  // 6 waited longest, not the newest 5
}

TEST(EntityManager, CreateBatchHonoursTheMinimumQueue) {
  EntityManager manager(Opts(/*min_free=*/2));
  std::vector<Entity> first(5);
  manager.CreateBatch(absl::MakeSpan(first));
  ASSERT_THAT(manager.DestroyBatch({first[3], first[0], first[4], first[1]}), IsOk());
  std::vector<Entity> second(4);
  manager.CreateBatch(absl::MakeSpan(second));
  EXPECT_THAT(second, ElementsAre(Entity(3, 1), Entity(0, 1), Entity(5, 0), Entity(6, 0)));
  EXPECT_EQ(manager.free_slots(), 2u);
  EXPECT_EQ(manager.size(), 5u);
}

TEST(EntityManager, SlotIsRetiredWhenItsGenerationWouldWrap) {
  EntityManager manager(Opts(/*min_free=*/0, /*max_generation=*/2));
  Entity e = manager.Create();
  ASSERT_THAT(manager.Destroy(e), IsOk());
  e = manager.Create();
  EXPECT_EQ(e, Entity(0, 1));
  ASSERT_THAT(manager.Destroy(e), IsOk());
  e = manager.Create();
  EXPECT_EQ(e, Entity(0, 2));  // max_generation itself is still issued
  ASSERT_THAT(manager.Destroy(e), IsOk());
  EXPECT_EQ(manager.retired_slots(), 1u);
  EXPECT_EQ(manager.free_slots(), 0u);
  EXPECT_FALSE(manager.Alive(e));
  EXPECT_THAT(manager.Destroy(e), StatusIs(absl::StatusCode::kNotFound));
  // No generation ever repeats: slot 0 is never reissued.
  EXPECT_EQ(manager.Create(), Entity(1, 0));
  EXPECT_EQ(manager.retired_slots(), 1u);
}

TEST(EntityManager, DestroyBatchRetiresToo) {
  EntityManager manager(Opts(/*min_free=*/0, /*max_generation=*/0));
  std::vector<Entity> e(3);
  manager.CreateBatch(absl::MakeSpan(e));
  ASSERT_THAT(manager.DestroyBatch(e), IsOk());
  EXPECT_EQ(manager.retired_slots(), 3u);
  EXPECT_EQ(manager.free_slots(), 0u);
  EXPECT_EQ(manager.Create(), Entity(3, 0));
}

TEST(EntityManager, DestroyBatchIsAllOrNothing) {
  EntityManager manager(Opts(/*min_free=*/0));
  std::vector<Entity> e(4);
  manager.CreateBatch(absl::MakeSpan(e));
  int notified = 0;
  const EntityManager::Subscription listening =
      manager.AddDestroyListener([&](absl::Span<const Entity>) { ++notified; });
  const Entity stale = e[3];
  ASSERT_THAT(manager.Destroy(stale), IsOk());
  notified = 0;

  const std::vector<std::vector<Entity>> bad_batches = {
      {e[0], e[1], e[0]},   // duplicate
      {e[0], e[1], stale},  // stale at the end
      {stale, e[0]},        // stale first
      {e[2], Entity()},     // invalid
      {e[1], e[1]},
  };
  for (const auto& batch : bad_batches) {
    EXPECT_THAT(manager.DestroyBatch(batch),
                StatusIs(absl::StatusCode::kNotFound, HasSubstr("nothing was destroyed")));
    for (int i = 0; i < 3; ++i) EXPECT_TRUE(manager.Alive(e[i])) << i;
    EXPECT_EQ(manager.size(), 3u);
    EXPECT_EQ(manager.free_slots(), 1u);
  }
  EXPECT_EQ(notified, 0);
  // The failed batches left no trace in the free queue: reuse order is unchanged.
  ASSERT_THAT(manager.DestroyBatch({e[1], e[0]}), IsOk());
  EXPECT_EQ(notified, 1);
  EXPECT_EQ(manager.Create(), Entity(3, 1));
  EXPECT_EQ(manager.Create(), Entity(1, 1));
  EXPECT_EQ(manager.Create(), Entity(0, 1));
}

TEST(EntityManager, EmptyBatches) {
  EntityManager manager;
  manager.CreateBatch(absl::Span<Entity>());
  EXPECT_EQ(manager.size(), 0u);
  EXPECT_THAT(manager.DestroyBatch({}), IsOk());
  EXPECT_EQ(manager.size(), 0u);
}

TEST(EntityManager, ListenersSeeStaleHandlesAfterRelease) {
  EntityManager manager;
  std::vector<Entity> e(3);
  manager.CreateBatch(absl::MakeSpan(e));
  std::vector<std::vector<Entity>> calls;
  const EntityManager::Subscription listening =
      manager.AddDestroyListener([&](absl::Span<const Entity> dead) {
        calls.emplace_back(dead.begin(), dead.end());
        for (Entity d : dead) EXPECT_FALSE(manager.Alive(d));
        EXPECT_EQ(manager.size(), 3 - dead.size() - (calls.size() > 1 ? 1 : 0));
      });
  ASSERT_THAT(manager.Destroy(e[1]), IsOk());
  ASSERT_THAT(manager.DestroyBatch({e[2], e[0]}), IsOk());
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_THAT(calls[0], ElementsAre(e[1]));
  EXPECT_THAT(calls[1], ElementsAre(e[2], e[0]));
  // Failed destroys notify nobody.
  EXPECT_FALSE(manager.Destroy(e[1]).ok());
  EXPECT_EQ(calls.size(), 2u);
}

TEST(EntityManager, ListenersRunInOrderAndCanBeRemoved) {
  EntityManager manager;
  std::vector<int> order;
  EntityManager::Subscription a =
      manager.AddDestroyListener([&](absl::Span<const Entity>) { order.push_back(1); });
  EntityManager::Subscription b =
      manager.AddDestroyListener([&](absl::Span<const Entity>) { order.push_back(2); });
  EXPECT_TRUE(a.active());
  EXPECT_EQ(manager.destroy_listeners(), 2u);
  ASSERT_THAT(manager.Destroy(manager.Create()), IsOk());
  EXPECT_THAT(order, ElementsAre(1, 2));
  a.Reset();
  EXPECT_FALSE(a.active());
  EXPECT_FALSE(a.expired());
  a.Reset();  // a no-op the second time
  EXPECT_EQ(manager.destroy_listeners(), 1u);
  ASSERT_THAT(manager.Destroy(manager.Create()), IsOk());
  EXPECT_THAT(order, ElementsAre(1, 2, 2));
  { const EntityManager::Subscription gone = std::move(b); }  // unregisters on scope exit
  EXPECT_EQ(manager.destroy_listeners(), 0u);
  ASSERT_THAT(manager.Destroy(manager.Create()), IsOk());
  EXPECT_THAT(order, ElementsAre(1, 2, 2));
}

TEST(EntityManager, DiscardedSubscriptionUnregistersAtOnce) {
  EntityManager manager;
  int calls = 0;
  (void)manager.AddDestroyListener([&](absl::Span<const Entity>) { ++calls; });
  EXPECT_EQ(manager.destroy_listeners(), 0u);
  ASSERT_THAT(manager.Destroy(manager.Create()), IsOk());
  EXPECT_EQ(calls, 0);
}

TEST(EntityManager, MovedSubscriptionKeepsListening) {
  EntityManager manager;
  int calls = 0;
  std::vector<EntityManager::Subscription> held;
  // Growing the vector moves the subscriptions; each must stay registered, once.
  for (int i = 0; i < 9; ++i) {
    held.push_back(manager.AddDestroyListener([&](absl::Span<const Entity>) { ++calls; }));
  }
  EntityManager::Subscription assigned;
  EXPECT_FALSE(assigned.active());
  assigned = std::move(held[4]);
  EXPECT_FALSE(held[4].active());  // NOLINT(bugprone-use-after-move): defined as empty
  EXPECT_TRUE(assigned.active());
  EXPECT_EQ(manager.destroy_listeners(), 9u);
  ASSERT_THAT(manager.Destroy(manager.Create()), IsOk());
  EXPECT_EQ(calls, 9);
  // Move-assigning over an active subscription unregisters the one it replaces.
  assigned = std::move(held[0]);
  EXPECT_EQ(manager.destroy_listeners(), 8u);
  held.clear();
  EXPECT_EQ(manager.destroy_listeners(), 1u);
  assigned.Reset();
  EXPECT_EQ(manager.destroy_listeners(), 0u);
}

// Shutdown in any order: a subscription that outlives its manager is detached, reads
// as an empty manager, and is destroyed without touching the freed manager (ASan
// reports a use after free here if it were not).
TEST(EntityManager, ManagerDestroyedBeforeItsSubscriptions) {
  auto manager = std::make_unique<EntityManager>();
  const Entity e = manager->Create();
  int calls = 0;
  EntityManager::Subscription first =
      manager->AddDestroyListener([&](absl::Span<const Entity>) { ++calls; });
  EntityManager::Subscription second =
      manager->AddDestroyListener([&](absl::Span<const Entity>) { ++calls; });
  EXPECT_TRUE(first->Alive(e));
  EXPECT_EQ(&first.manager(), manager.get());
  manager.reset();
  EXPECT_EQ(calls, 0);  // dying is not destroying entities
  for (const EntityManager::Subscription* s : {&first, &second}) {
    EXPECT_FALSE(s->active());
    EXPECT_TRUE(s->expired());
    EXPECT_FALSE((*s)->Alive(e));
    EXPECT_EQ((*s)->slots_used(), 0u);
    EXPECT_EQ((*s)->size(), 0u);
  }
  // A move of an expired subscription carries the state; Reset forgets it.
  EntityManager::Subscription moved = std::move(first);
  EXPECT_TRUE(moved.expired());
  EXPECT_FALSE(first.expired());  // NOLINT(bugprone-use-after-move): defined as empty
  second.Reset();
  EXPECT_FALSE(second.expired());
}

TEST(EntityManager, DefaultSubscriptionReadsAnEmptyManager) {
  const EntityManager::Subscription none;
  EXPECT_FALSE(none.active());
  EXPECT_FALSE(none.expired());
  EXPECT_FALSE(none->Alive(Entity(0, 0)));
  EXPECT_EQ(none.manager().slots_used(), 0u);
}

TEST(EntityManager, OptionsAboveTheHandlesLimitAreRejected) {
  EntityManager::Options options;
  options.max_generation = EntityManager::kMaxGeneration;
  EXPECT_THAT(options.Validate(), IsOk());
  absl::StatusOr<std::unique_ptr<EntityManager>> made = EntityManager::Make(options);
  ASSERT_THAT(made.status(), IsOk());
  EXPECT_EQ((*made)->Create(), Entity(0, 0));

  for (uint32_t bad : {EntityManager::kMaxGeneration + 1, 0xFFFFFFFFu}) {
    options.max_generation = bad;
    EXPECT_THAT(options.Validate(),
                StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("max_generation")));
    EXPECT_THAT(EntityManager::Make(options).status(),
                StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("max_generation")));
  }
}

// The constructor cannot return a Status: it refuses bad options in every build mode
// (this test also runs under -c opt).
TEST(EntityManagerDeathTest, ConstructorAbortsOnOptionsAboveTheLimit) {
  EntityManager::Options options;
  options.max_generation = EntityManager::kMaxGeneration + 1;
  EXPECT_DEATH(EntityManager manager(options), "max_generation");
}

// A listener that destroys entities would re-enter the notification it is part of:
// Destroy and DestroyBatch abort inside a listener in every build mode.
TEST(EntityManagerDeathTest, ListenerDestroyingEntitiesAborts) {
  EntityManager manager;
  const Entity victim = manager.Create();
  EntityManager::Subscription destroying = manager.AddDestroyListener(
      [&](absl::Span<const Entity>) { manager.Destroy(victim).IgnoreError(); });
  EXPECT_DEATH(manager.Destroy(manager.Create()).IgnoreError(),
               "Destroy: called from a DestroyListener");
  destroying = manager.AddDestroyListener([&](absl::Span<const Entity>) {
    manager.DestroyBatch(absl::MakeConstSpan(&victim, 1)).IgnoreError();
  });
  EXPECT_DEATH(manager.Destroy(manager.Create()).IgnoreError(),
               "DestroyBatch: called from a DestroyListener");
  // Outside a listener both work.
  destroying.Reset();
  EXPECT_TRUE(manager.Destroy(victim).ok());
}

// A listener that adds or removes listeners (its own included, e.g. by destroying a
// store that holds a Subscription) would change the list NotifyDestroyed is walking:
// it aborts in every build mode (this test also runs under -c opt).
TEST(EntityManagerDeathTest, ListenerChangingTheListenersAborts) {
  EntityManager manager;
  EntityManager::Subscription other = manager.AddDestroyListener([](absl::Span<const Entity>) {});
  EntityManager::Subscription self;
  self = manager.AddDestroyListener([&](absl::Span<const Entity>) { other.Reset(); });
  EXPECT_DEATH(manager.Destroy(manager.Create()).IgnoreError(),
               "RemoveListener: called from a DestroyListener");
  self = manager.AddDestroyListener([&](absl::Span<const Entity>) { self.Reset(); });
  EXPECT_DEATH(manager.Destroy(manager.Create()).IgnoreError(),
               "RemoveListener: called from a DestroyListener");
  auto owned = std::make_unique<EntityManager::Subscription>();
  self = manager.AddDestroyListener([&](absl::Span<const Entity>) { owned.reset(); });
  *owned = manager.AddDestroyListener([](absl::Span<const Entity>) {});
  EXPECT_DEATH(manager.Destroy(manager.Create()).IgnoreError(),
               "RemoveListener: called from a DestroyListener");
  self = manager.AddDestroyListener([&](absl::Span<const Entity>) {
    (void)manager.AddDestroyListener([](absl::Span<const Entity>) {});
  });
  std::vector<Entity> batch(3);
  manager.CreateBatch(absl::MakeSpan(batch));
  EXPECT_DEATH(manager.DestroyBatch(batch).IgnoreError(),
               "AddDestroyListener: called from a DestroyListener");
  // Moving a subscription inside a listener is fine, and so is every change after it.
  EntityManager::Subscription moved;
  self = manager.AddDestroyListener([&](absl::Span<const Entity>) { moved = std::move(other); });
  ASSERT_THAT(manager.Destroy(manager.Create()), IsOk());
  EXPECT_TRUE(moved.active());
  EXPECT_EQ(manager.destroy_listeners(), 3u);
  self.Reset();
  moved.Reset();
  owned.reset();
  EXPECT_EQ(manager.destroy_listeners(), 0u);
}

TEST(EntityManager, ListenerMayCreateEntities) {
  EntityManager manager;
  std::vector<Entity> spawned;
  const EntityManager::Subscription listening =
      manager.AddDestroyListener([&](absl::Span<const Entity> dead) {
        for (size_t i = 0; i < dead.size(); ++i) spawned.push_back(manager.Create());
      });
  ASSERT_THAT(manager.Destroy(manager.Create()), IsOk());
  ASSERT_EQ(spawned.size(), 1u);
  EXPECT_TRUE(manager.Alive(spawned[0]));
  EXPECT_EQ(manager.size(), 1u);
}

TEST(EntityManager, ManyEntitiesRoundTrip) {
  EntityManager manager(Opts(/*min_free=*/1024));
  constexpr size_t kCount = 200000;
  std::vector<Entity> e(kCount);
  manager.CreateBatch(absl::MakeSpan(e));
  EXPECT_EQ(manager.size(), kCount);
  EXPECT_EQ(e.back(), Entity(kCount - 1, 0));
  ASSERT_THAT(manager.DestroyBatch(e), IsOk());
  EXPECT_EQ(manager.size(), 0u);
  EXPECT_EQ(manager.free_slots(), kCount);
  manager.CreateBatch(absl::MakeSpan(e));
  // All but the minimum queue are reused, oldest first, then fresh slots.
  EXPECT_EQ(e[0], Entity(0, 1));
  EXPECT_EQ(e[kCount - 1025], Entity(kCount - 1025, 1));
  EXPECT_EQ(e[kCount - 1024], Entity(kCount, 0));
  EXPECT_EQ(manager.free_slots(), 1024u);
  EXPECT_GT(manager.MemoryUsage(), kCount * sizeof(uint32_t));
}

// Random interleavings of single and batch calls, compared call by call with the
// naive model: same handles, same success, same liveness of every handle ever issued.
TEST(EntityManager, MatchesNaiveModelOnRandomSequences) {
  ::strata::testing::Random rng(::strata::testing::TestSeed());
  SCOPED_TRACE(rng.DescribeSeed());
  for (int round = 0; round < 20; ++round) {
    const auto options = Opts(static_cast<uint32_t>(rng.UniformInt(0, 8)),
                              static_cast<uint32_t>(rng.UniformInt(0, 6)));
    EntityManager manager(options);
    NaiveManager model(options);
    std::vector<Entity> issued;
    for (int step = 0; step < 600; ++step) {
      SCOPED_TRACE(step);
      const int op = static_cast<int>(rng.UniformInt(0, 3));
      if (op == 0) {
        const Entity e = manager.Create();
        ASSERT_EQ(e, model.Create());
        issued.push_back(e);
      } else if (op == 1) {
        std::vector<Entity> batch(rng.UniformIndex(6));
        manager.CreateBatch(absl::MakeSpan(batch));
        for (Entity e : batch) {
          ASSERT_EQ(e, model.Create());
          issued.push_back(e);
        }
      } else if (op == 2 && !issued.empty()) {
        const Entity e = issued[rng.UniformIndex(issued.size())];
        ASSERT_EQ(manager.Destroy(e).ok(), model.Destroy(e));
      } else if (!issued.empty()) {
        std::vector<Entity> batch(rng.UniformIndex(5));
        for (Entity& e : batch) e = issued[rng.UniformIndex(issued.size())];
        ASSERT_EQ(manager.DestroyBatch(batch).ok(), model.DestroyBatch(batch));
      }
      ASSERT_EQ(manager.size(), model.size());
    }
    for (Entity e : issued) ASSERT_EQ(manager.Alive(e), model.Alive(e)) << e;
  }
}

// Large batches push the free ring through wrap-around and through growth while
// wrapped; FIFO order must survive both.
TEST(EntityManager, FreeRingWrapsAndGrowsInFifoOrder) {
  ::strata::testing::Random rng(::strata::testing::TestSeed());
  SCOPED_TRACE(rng.DescribeSeed());
  for (const uint32_t min_free : {0u, 5u, 1500u}) {
    SCOPED_TRACE(min_free);
    EntityManager manager(Opts(min_free, /*max_generation=*/40));
    NaiveManager model(Opts(min_free, /*max_generation=*/40));
    std::vector<Entity> live;
    for (int step = 0; step < 300; ++step) {
      const size_t grow = rng.UniformIndex(900);
      std::vector<Entity> created(grow);
      manager.CreateBatch(absl::MakeSpan(created));
      for (Entity e : created) {
        ASSERT_EQ(e, model.Create());
        live.push_back(e);
      }
      rng.Shuffle(absl::MakeSpan(live));
      const size_t kill = rng.UniformIndex(live.size() + 1);
      std::vector<Entity> batch(live.end() - kill, live.end());
      live.resize(live.size() - kill);
      if (rng.Bernoulli(0.2) && !batch.empty()) {
        // Single destroys exercise Release(), the other path into the ring.
        for (Entity e : batch) ASSERT_THAT(manager.Destroy(e), IsOk());
        ASSERT_TRUE(model.DestroyBatch(batch));
      } else {
        ASSERT_THAT(manager.DestroyBatch(batch), IsOk());
        ASSERT_TRUE(model.DestroyBatch(batch));
      }
      ASSERT_EQ(manager.size(), model.size());
    }
    EXPECT_GT(manager.retired_slots(), 0u);
  }
}

}  // namespace
}  // namespace strata
