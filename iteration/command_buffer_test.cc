// CommandBuffer: commands recorded (also inside walks) and played back give the store
// a single-call reference model gives, after every step; what is skipped is counted.
#include "iteration/command_buffer.h"

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <vector>

#include "absl/types/span.h"
#include "entity/entity.h"
#include "entity/entity_manager.h"
#include "gtest/gtest.h"
#include "iteration/components.h"
#include "iteration/entity_pages.h"
#include "iteration/filter.h"
#include "testing/status_matchers.h"

namespace strata {
namespace {

using ::strata::testing::IsOk;

struct Position {
  float x = 0;
  float y = 0;
};
struct Health {
  int32_t hp = 0;
};
struct Frozen {};

class Commands : public ::testing::Test {
 protected:
  void SetUp() override {
    pos_ = *pages_.RegisterComponent<Position>("position");
    health_ = *pages_.RegisterComponent<Health>("health");
    frozen_ = *pages_.RegisterComponent<Frozen>("frozen");
  }
  const Position* PosOf(Entity e) { return static_cast<const Position*>(pages_.TryGet(e, pos_.id)); }
  const Health* HealthOf(Entity e) {
    return static_cast<const Health*>(pages_.TryGet(e, health_.id));
  }

  EntityManager manager_;
  EntityPages pages_{manager_};
  Component<Position> pos_;
  Component<Health> health_;
  Component<Frozen> frozen_;
};

TEST_F(Commands, AnEmptyBufferPlaysBackToNothing) {
  CommandBuffer commands(pages_);
  EXPECT_TRUE(commands.empty());
  EXPECT_EQ(commands.Playback(manager_, pages_), CommandBuffer::Result{});
  EXPECT_EQ(manager_.size(), 0u);
  EXPECT_TRUE(commands.created().empty());
}

TEST_F(Commands, CreatedEntitiesTakeTheirComponentsAndLaterCommands) {
  CommandBuffer commands(pages_);
  ComponentBundle bundle;
  bundle.Set(pos_, Position{1, 2}).Set(health_, Health{10});
  const Entity a = commands.Create(bundle);
  const Entity b = commands.Create(bundle);
  const Entity bare = commands.Create();
  EXPECT_TRUE(CommandBuffer::IsPending(a));
  EXPECT_NE(a, b);
  commands.Set(b, health_, Health{20});
  commands.Add(bare, frozen_, Frozen{});
  commands.Remove(a, pos_);
  EXPECT_EQ(commands.size(), 6u);
  // Before playback a pending handle names no entity.
  EXPECT_FALSE(commands.Resolve(a).is_valid());
  const CommandBuffer::Result result = commands.Playback(manager_, pages_);
  EXPECT_EQ(result.applied, 6u);
  EXPECT_TRUE(commands.empty());
  const Entity ra = commands.Resolve(a);
  const Entity rb = commands.Resolve(b);
  const Entity rbare = commands.Resolve(bare);
  ASSERT_TRUE(manager_.Alive(ra) && manager_.Alive(rb) && manager_.Alive(rbare));
  EXPECT_EQ(commands.created().size(), 3u);
  EXPECT_EQ(PosOf(ra), nullptr);
  EXPECT_EQ(HealthOf(ra)->hp, 10);
  EXPECT_EQ(PosOf(rb)->y, 2);
  EXPECT_EQ(HealthOf(rb)->hp, 20);
  EXPECT_TRUE(pages_.Has(rbare, frozen_.id));
  // A live handle resolves to itself.
  EXPECT_EQ(commands.Resolve(rb), rb);
}

TEST_F(Commands, StaleDeadAndConflictingCommandsAreSkippedAndCounted) {
  std::vector<Entity> e(4);
  manager_.CreateBatch(absl::MakeSpan(e));
  ASSERT_THAT(pages_.Add(e[0], pos_, Position{}), IsOk());
  ASSERT_THAT(manager_.Destroy(e[3]), IsOk());
  CommandBuffer commands(pages_);
  commands.Add(e[0], pos_, Position{5, 5});   // conflict: has it
  commands.Add(e[1], pos_, Position{7, 7});   // applied
  commands.Add(e[3], pos_, Position{});       // dead
  commands.Add(e[2], pos_, Position{8, 8});   // applied, after the failures
  commands.Remove(e[2], health_);             // conflict: lacks it
  commands.Set(e[1], health_, Health{1});     // conflict: lacks it
  commands.Set(e[3], pos_, Position{});       // dead
  commands.Destroy(e[1]);
  commands.Destroy(e[1]);                     // already destroyed by the one before
  commands.Destroy(e[3]);                     // dead
  const CommandBuffer::Result result = commands.Playback(manager_, pages_);
  EXPECT_EQ(result.applied, 3u);
  EXPECT_EQ(result.skipped_conflict, 3u);
  EXPECT_EQ(result.skipped_dead, 4u);
  EXPECT_EQ(PosOf(e[0])->x, 0);  // untouched
  EXPECT_EQ(PosOf(e[2])->x, 8);
  EXPECT_FALSE(manager_.Alive(e[1]));
}

TEST_F(Commands, RecordedInsideAWalkAndPlayedAfterIt) {
  std::vector<Entity> e(100);
  manager_.CreateBatch(absl::MakeSpan(e));
  for (size_t i = 0; i < e.size(); ++i) {
    ASSERT_THAT(pages_.Add(e[i], health_, Health{static_cast<int32_t>(i)}), IsOk());
  }
  Filter all;
  all.Include(health_);
  CommandBuffer commands(pages_);
  ComponentBundle child;
  child.Set(pos_, Position{3, 3});
  ForEachMatch(pages_, all, [&](Entity x, Health& h) {
    if (h.hp % 2 == 0) commands.Destroy(x);
    if (h.hp % 3 == 0) commands.Add(x, frozen_, Frozen{});
    if (h.hp % 10 == 0) commands.Create(child);
  }, health_);
  const CommandBuffer::Result result = commands.Playback(manager_, pages_);
  // 50 destroyed, 34 frozen of which 17 are dead by then, 10 created.
  EXPECT_EQ(result.applied, 50u + 17u + 10u);
  EXPECT_EQ(result.skipped_dead, 17u);
  EXPECT_EQ(manager_.size(), 50u + 10u);
  Filter frozen;
  frozen.Include(frozen_);
  EXPECT_EQ(CountMatches(pages_, frozen), 17u);
  Filter positioned;
  positioned.Include(pos_);
  EXPECT_EQ(CountMatches(pages_, positioned), 10u);
}

TEST_F(Commands, HandlesAreTheSameForTheSameRecording) {
  auto run = [](bool warm) {
    EntityManager manager;
    EntityPages pages(manager);
    const Component<Health> health = *pages.RegisterComponent<Health>("health");
    std::vector<Entity> e(50);
    manager.CreateBatch(absl::MakeSpan(e));
    if (warm) manager.DestroyBatch(absl::MakeConstSpan(e).first(20)).IgnoreError();
    CommandBuffer commands(pages);
    ComponentBundle bundle;
    bundle.Set(health, Health{1});
    for (int i = 0; i < 30; ++i) commands.Create(bundle);
    commands.Playback(manager, pages);
    return std::vector<Entity>(commands.created().begin(), commands.created().end());
  };
  EXPECT_EQ(run(false), run(false));
  EXPECT_EQ(run(true), run(true));
}

TEST_F(Commands, BuffersReuseTheirMemoryAndRefuseOldPendingHandles) {
  CommandBuffer commands(pages_);
  // Two playbacks: the targets alternate between two arrays (the last playback's stay
  // readable until the next one, see HoldsPlayed), so both exist from the second on.
  commands.Create();
  commands.Playback(manager_, pages_);
  const Entity first = commands.Create();
  commands.Playback(manager_, pages_);
  const size_t memory = commands.MemoryUsage();
  EXPECT_GT(memory, 0u);
  const Entity again = commands.Create();
  EXPECT_NE(first, again);  // a new tag per playback
  // The old handle still resolves to what the last playback made...
  EXPECT_TRUE(manager_.Alive(commands.Resolve(first)));
  commands.Clear();
  EXPECT_TRUE(commands.empty());
  EXPECT_EQ(commands.MemoryUsage(), memory);
}

TEST_F(Commands, MisuseAbortsWithAMessage) {
  CommandBuffer commands(pages_);
  CommandBuffer other(pages_);
  const Entity theirs = other.Create();
  EXPECT_DEATH(commands.Destroy(theirs), "pending handle of another buffer");
  EXPECT_DEATH(commands.Remove(Entity(0, 0), ComponentId{200}), "not registered");
  const std::byte three[3] = {};
  EXPECT_DEATH(commands.Add(Entity(0, 0), pos_.id, three), "registered size");
  EntityManager manager2;
  EntityPages pages2(manager2);
  commands.Create();
  EXPECT_DEATH(commands.Playback(manager2, pages2), "another store");
}

// The reference: every command applied alone, in order, with the single calls.
struct Model {
  std::set<Entity> live;
  std::map<Entity, Position> pos;
  std::map<Entity, Health> health;
  std::map<Entity, bool> frozen;
};

TEST_F(Commands, RandomCommandsMatchTheSingleCallReferenceAfterEveryStep) {
  std::mt19937 rng(7);
  std::vector<Entity> known;  // live, dead and stale handles alike
  Model model;
  auto pick = [&]() -> Entity {
    return known.empty() ? Entity(0, 0) : known[rng() % known.size()];
  };
  for (int step = 0; step < 60; ++step) {
    CommandBuffer commands(pages_);
    std::vector<Entity> pending;
    // Each command is applied to the model at once; pending targets are resolved
    // after the playback, so the model keeps them by creation number meanwhile.
    struct Recorded {
      int op;
      Entity target;
      int32_t value;
    };
    std::vector<Recorded> log;
    const int n = 1 + static_cast<int>(rng() % 200);
    for (int k = 0; k < n; ++k) {
      const int op = static_cast<int>(rng() % 9);
      Entity target = (!pending.empty() && rng() % 4 == 0) ? pending[rng() % pending.size()] : pick();
      const int32_t value = static_cast<int32_t>(rng() % 1000);
      switch (op) {
        case 0: {
          ComponentBundle bundle;
          bundle.Set(health_, Health{value});
          if (value % 2) bundle.Set(pos_, Position{1, 1});
          target = commands.Create(bundle);
          pending.push_back(target);
          break;
        }
        case 1: commands.Destroy(target); break;
        case 2: commands.Add(target, pos_, Position{static_cast<float>(value), 0}); break;
        case 3: commands.Add(target, health_, Health{value}); break;
        case 4: commands.Add(target, frozen_, Frozen{}); break;
        case 5: commands.Remove(target, pos_); break;
        case 6: commands.Remove(target, frozen_); break;
        case 7: commands.Set(target, health_, Health{value}); break;
        case 8: commands.Set(target, pos_, Position{0, static_cast<float>(value)}); break;
      }
      log.push_back({op, target, value});
    }
    // Sometimes a walk first (recording nothing), sometimes a bounded Compact.
    if (step % 3 == 0) pages_.Compact(64);
    const CommandBuffer::Result result = commands.Playback(manager_, pages_);
    // Replay the log on the model, resolving pending handles now.
    CommandBuffer::Result expected;
    auto live_in_model = [&](Entity e) { return model.live.count(e) > 0; };
    for (const Recorded& r : log) {
      const Entity e = commands.Resolve(r.target);
      auto skip = [&] {
        if (live_in_model(e)) {
          ++expected.skipped_conflict;
        } else {
          ++expected.skipped_dead;
        }
      };
      switch (r.op) {
        case 0:
          ++expected.applied;
          model.live.insert(e);
          model.health[e] = Health{r.value};
          if (r.value % 2) model.pos[e] = Position{1, 1};
          known.push_back(e);
          break;
        case 1:
          if (!live_in_model(e)) {
            ++expected.skipped_dead;
            break;
          }
          ++expected.applied;
          model.live.erase(e);
          model.pos.erase(e);
          model.health.erase(e);
          model.frozen.erase(e);
          break;
        case 2:
        case 3:
        case 4: {
          if (!live_in_model(e)) {
            ++expected.skipped_dead;
            break;
          }
          bool has = r.op == 2 ? model.pos.count(e) : r.op == 3 ? model.health.count(e) : model.frozen.count(e);
          if (has) {
            ++expected.skipped_conflict;
            break;
          }
          ++expected.applied;
          if (r.op == 2) model.pos[e] = Position{static_cast<float>(r.value), 0};
          if (r.op == 3) model.health[e] = Health{r.value};
          if (r.op == 4) model.frozen[e] = true;
          break;
        }
        case 5:
        case 6: {
          const size_t erased = r.op == 5 ? model.pos.erase(e) : model.frozen.erase(e);
          if (erased == 0 || !live_in_model(e)) {
            skip();
            break;
          }
          ++expected.applied;
          break;
        }
        case 7:
        case 8: {
          const bool has = r.op == 7 ? model.health.count(e) > 0 : model.pos.count(e) > 0;
          if (!has || !live_in_model(e)) {
            skip();
            break;
          }
          ++expected.applied;
          if (r.op == 7) model.health[e] = Health{r.value};
          if (r.op == 8) model.pos[e] = Position{0, static_cast<float>(r.value)};
          break;
        }
      }
    }
    ASSERT_EQ(result.applied, expected.applied) << "step " << step;
    ASSERT_EQ(result.skipped_dead, expected.skipped_dead) << "step " << step;
    ASSERT_EQ(result.skipped_conflict, expected.skipped_conflict) << "step " << step;
    for (Entity e : known) ASSERT_EQ(manager_.Alive(e), model.live.count(e) > 0);
    // The store holds exactly the model.
    for (Entity e : known) {
      const Position* p = PosOf(e);
      const Health* h = HealthOf(e);
      ASSERT_EQ(p != nullptr, model.pos.count(e) > 0) << "step " << step;
      ASSERT_EQ(h != nullptr, model.health.count(e) > 0) << "step " << step;
      ASSERT_EQ(pages_.Has(e, frozen_.id), model.frozen.count(e) > 0) << "step " << step;
      if (p != nullptr) {
        ASSERT_EQ(p->x, model.pos[e].x);
        ASSERT_EQ(p->y, model.pos[e].y);
      }
      if (h != nullptr) {
        ASSERT_EQ(h->hp, model.health[e].hp);
      }
    }
  }
}

}  // namespace
}  // namespace strata
