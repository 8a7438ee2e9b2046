// ComponentEvents: every add, remove and set seen exactly once, in order, on every
// path, at the flush; observers record commands and run to a fixed point.
#include "iteration/component_events.h"

#include <cstddef>
#include <cstdint>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "absl/types/span.h"
#include "entity/entity.h"
#include "entity/entity_manager.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "iteration/command_buffer.h"
#include "iteration/components.h"
#include "iteration/entity_pages.h"
#include "iteration/filter.h"
#include "testing/status_matchers.h"

namespace strata {
namespace {

using ::strata::testing::IsOk;
using ::strata::testing::StatusIs;
using ::testing::ElementsAre;

struct Health {
  int32_t hp = 0;
};
struct Burning {};

// Counts calls to the listener it stands in front of (a World's indexer).
class Downstream final : public StructureListener {
 public:
  void OnAdded(ComponentId, absl::Span<const Entity> e) override { added += e.size(); }
  void OnRemoved(ComponentId, absl::Span<const Entity> e) override { removed += e.size(); }
  size_t added = 0;
  size_t removed = 0;
};

class Events : public ::testing::Test {
 protected:
  void SetUp() override {
    health_ = *pages_.RegisterComponent<Health>("health");
    burning_ = *pages_.RegisterComponent<Burning>("burning");
    pages_.set_structure_listener(&downstream_);
    events_ = std::make_unique<ComponentEvents>(manager_, pages_);
    entities_.resize(8);
    manager_.CreateBatch(absl::MakeSpan(entities_));
  }
  void TearDown() override { events_.reset(); }

  EntityManager manager_;
  EntityPages pages_{manager_};
  Component<Health> health_;
  Component<Burning> burning_;
  Downstream downstream_;
  std::unique_ptr<ComponentEvents> events_;
  std::vector<Entity> entities_;
};

TEST_F(Events, NothingIsDeliveredBeforeTheFlushAndNothingTwice) {
  std::vector<Entity> seen;
  auto sub = events_->OnAdd(health_, [&](absl::Span<const Entity> e, CommandBuffer&) {
    seen.insert(seen.end(), e.begin(), e.end());
  });
  EXPECT_THAT(events_->Flush(), IsOk());  // empty
  ASSERT_THAT(pages_.Add(entities_[0], health_, Health{1}), IsOk());
  ASSERT_THAT(pages_.Add(absl::MakeConstSpan(entities_).subspan(1, 3), health_, Health{2}), IsOk());
  EXPECT_TRUE(seen.empty());
  EXPECT_EQ(events_->pending(), 4u);
  ASSERT_THAT(events_->Flush(), IsOk());
  EXPECT_THAT(seen, ElementsAre(entities_[0], entities_[1], entities_[2], entities_[3]));
  ASSERT_THAT(events_->Flush(), IsOk());
  EXPECT_EQ(seen.size(), 4u);
  // The listener behind still hears of everything, at once.
  EXPECT_EQ(downstream_.added, 4u);
}

TEST_F(Events, RemoveSeesTheValuesOnEveryPath) {
  for (size_t i = 0; i < entities_.size(); ++i) {
    ASSERT_THAT(pages_.Add(entities_[i], health_, Health{static_cast<int32_t>(10 + i)}), IsOk());
  }
  std::vector<int32_t> last;
  std::vector<Entity> who;
  auto sub = events_->OnRemove(
      health_, [&](absl::Span<const Entity> e, absl::Span<const Health> values, CommandBuffer&) {
        who.insert(who.end(), e.begin(), e.end());
        for (const Health& h : values) last.push_back(h.hp);
      });
  ASSERT_THAT(pages_.Remove(entities_[0], health_), IsOk());             // single
  const Entity pair[] = {entities_[1], entities_[2], entities_[0]};        // span, stops at [0]
  EXPECT_FALSE(pages_.Remove(pair, health_.id).ok());
  ASSERT_THAT(pages_.Delete(entities_[3]), IsOk());                      // delete
  ASSERT_THAT(manager_.Destroy(entities_[4]), IsOk());                   // destroy
  CommandBuffer commands(pages_);
  commands.Remove(entities_[5], health_);                                 // command remove
  commands.Destroy(entities_[6]);                                         // command destroy
  commands.Playback(manager_, pages_);
  // The values outlive the removals: a later add reuses the elements first.
  std::vector<Entity> fresh(6);
  manager_.CreateBatch(absl::MakeSpan(fresh));
  ASSERT_THAT(pages_.Add(absl::MakeConstSpan(fresh), health_, Health{-1}), IsOk());
  ASSERT_THAT(events_->Flush(), IsOk());
  EXPECT_THAT(last, ElementsAre(10, 11, 12, 13, 14, 15, 16));
  EXPECT_THAT(who, ElementsAre(entities_[0], entities_[1], entities_[2], entities_[3],
                               entities_[4], entities_[5], entities_[6]));
}

TEST_F(Events, SetPathsAreEventsAndObserversRunInOrder) {
  ASSERT_THAT(pages_.Add(absl::MakeConstSpan(entities_), health_, Health{0}), IsOk());
  std::vector<std::string> log;
  auto first = events_->OnSet(health_, [&](absl::Span<const Entity> e, absl::Span<const Health> v,
                                           CommandBuffer&) {
    log.push_back("first " + std::to_string(e.size()) + " " + std::to_string(v[0].hp));
  });
  auto second = events_->OnSet(health_, [&](absl::Span<const Entity> e, absl::Span<const Health>,
                                            CommandBuffer&) {
    log.push_back("second " + std::to_string(e.size()));
  });
  CommandBuffer commands(pages_);
  commands.Set(entities_[0], health_, Health{5});
  commands.Set(entities_[1], health_, Health{6});
  commands.Playback(manager_, pages_);
  // In place through TryGet: not an event (change detection's).
  pages_.TryGet(entities_[2], health_)->hp = 9;
  ASSERT_THAT(events_->Flush(), IsOk());
  EXPECT_THAT(log, ElementsAre("first 2 5", "second 2"));
  // Unsubscribed by RAII: the second no longer hears.
  second.Reset();
  EXPECT_FALSE(second.active());
  commands.Set(entities_[0], health_, Health{7});
  commands.Playback(manager_, pages_);
  ASSERT_THAT(events_->Flush(), IsOk());
  EXPECT_THAT(log, ElementsAre("first 2 5", "second 2", "first 1 7"));
  EXPECT_EQ(events_->observers(), 1u);
}

TEST_F(Events, ObserversRecordCommandsThatRunToAFixedPoint) {
  // Burning spreads: an entity that starts burning loses 1 hp per round; at 0 it dies.
  ASSERT_THAT(pages_.Add(absl::MakeConstSpan(entities_), health_, Health{3}), IsOk());
  ASSERT_THAT(events_->Flush(), IsOk());
  size_t deaths = 0;
  auto burn = events_->OnAdd(burning_, [&](absl::Span<const Entity> e, CommandBuffer& out) {
    for (Entity x : e) out.Destroy(x);
  });
  auto died = events_->OnRemove(health_, [&](absl::Span<const Entity> e,
                                             absl::Span<const Health>, CommandBuffer&) {
    deaths += e.size();
  });
  ASSERT_THAT(pages_.Add(absl::MakeConstSpan(entities_).first(3), burning_, Burning{}), IsOk());
  ASSERT_THAT(events_->Flush(), IsOk());
  EXPECT_EQ(deaths, 3u);
  EXPECT_EQ(manager_.size(), entities_.size() - 3);
  EXPECT_EQ(events_->pending(), 0u);
}

TEST_F(Events, AnObserverThatFeedsItselfStopsWithAnError) {
  auto loop = events_->OnAdd(burning_, [&](absl::Span<const Entity> e, CommandBuffer& out) {
    for (Entity x : e) {
      out.Remove(x, burning_);
      out.Add(x, burning_, Burning{});
    }
  });
  ASSERT_THAT(pages_.Add(entities_[0], burning_, Burning{}), IsOk());
  EXPECT_THAT(events_->Flush(), StatusIs(absl::StatusCode::kFailedPrecondition));
  EXPECT_GT(events_->pending(), 0u);
  loop.Reset();
  EXPECT_THAT(events_->Flush(), IsOk());
}

TEST_F(Events, ObserversCannotChangeTheStoreDirectly) {
  auto bad = events_->OnAdd(health_, [&](absl::Span<const Entity> e, CommandBuffer&) {
    (void)pages_.Remove(e[0], health_);
  });
  ASSERT_THAT(pages_.Add(entities_[0], health_, Health{}), IsOk());
  EXPECT_DEATH(events_->Flush().IgnoreError(), "inside a walk of the store");
}

TEST_F(Events, UnobservedEventsCostNothingAndTheIndexerStillHears) {
  ASSERT_THAT(pages_.Add(absl::MakeConstSpan(entities_), health_, Health{}), IsOk());
  ASSERT_THAT(pages_.Remove(absl::MakeConstSpan(entities_), health_.id), IsOk());
  EXPECT_EQ(events_->pending(), 0u);
  EXPECT_EQ(downstream_.added, entities_.size());
  EXPECT_EQ(downstream_.removed, entities_.size());
  // The store asks for values only while someone observes removals.
  EXPECT_FALSE(events_->wants_removing());
  {
    auto sub = events_->OnRemove(health_, [](absl::Span<const Entity>, absl::Span<const Health>,
                                             CommandBuffer&) {});
    EXPECT_TRUE(events_->wants_removing());
  }
  EXPECT_FALSE(events_->wants_removing());
}

// Random adds, removes, sets and destroys by every path, against a reference log.
TEST_F(Events, RandomOperationsAreEachSeenOnceInOrder) {
  std::mt19937 rng(5);
  std::vector<std::string> expected, seen;
  auto add = events_->OnAdd(health_, [&](absl::Span<const Entity> e, CommandBuffer&) {
    for (Entity x : e) seen.push_back("add " + x.DebugString());
  });
  auto remove = events_->OnRemove(health_, [&](absl::Span<const Entity> e,
                                               absl::Span<const Health> v, CommandBuffer&) {
    for (size_t i = 0; i < e.size(); ++i) {
      seen.push_back("remove " + e[i].DebugString() + " " + std::to_string(v[i].hp));
    }
  });
  auto set = events_->OnSet(health_, [&](absl::Span<const Entity> e, absl::Span<const Health> v,
                                         CommandBuffer&) {
    for (size_t i = 0; i < e.size(); ++i) {
      seen.push_back("set " + e[i].DebugString() + " " + std::to_string(v[i].hp));
    }
  });
  std::map<Entity, int32_t> model;  // who has health, with what
  std::vector<Entity> live = entities_;
  for (int step = 0; step < 400; ++step) {
    const Entity e = live[rng() % live.size()];
    const int32_t value = static_cast<int32_t>(rng() % 100);
    const bool has = model.count(e) > 0;
    switch (rng() % 5) {
      case 0:
        if (!has) {
          ASSERT_THAT(pages_.Add(e, health_, Health{value}), IsOk());
          model[e] = value;
          expected.push_back("add " + e.DebugString());
        }
        break;
      case 1:
        if (has) {
          ASSERT_THAT(pages_.Remove(e, health_), IsOk());
          expected.push_back("remove " + e.DebugString() + " " + std::to_string(model[e]));
          model.erase(e);
        }
        break;
      case 2:
        if (has) {
          CommandBuffer commands(pages_);
          commands.Set(e, health_, Health{value});
          commands.Playback(manager_, pages_);
          model[e] = value;
          expected.push_back("set " + e.DebugString() + " " + std::to_string(value));
        }
        break;
      case 3: {
        ASSERT_THAT(manager_.Destroy(e), IsOk());
        if (has) {
          expected.push_back("remove " + e.DebugString() + " " + std::to_string(model[e]));
          model.erase(e);
        }
        std::erase(live, e);
        live.push_back(manager_.Create());
        break;
      }
      case 4:
        if (step % 3 == 0) {
          ASSERT_THAT(events_->Flush(), IsOk());
        }
        break;
    }
  }
  ASSERT_THAT(events_->Flush(), IsOk());
  EXPECT_EQ(seen, expected);
  EXPECT_GT(seen.size(), 100u);
}

// A store with events and a log of what its observers saw; two of them, fed the same
// commands, tell ComponentEvents::Playback from a playback followed by Flush.
struct Rig {
  Rig() {
    health = *pages.RegisterComponent<Health>("health");
    burning = *pages.RegisterComponent<Burning>("burning");
    added = events.OnAdd(health, [this](absl::Span<const Entity> e, CommandBuffer&) {
      for (Entity x : e) log.push_back("add " + x.DebugString());
    });
    removed = events.OnRemove(health, [this](absl::Span<const Entity> e,
                                              absl::Span<const Health> v, CommandBuffer&) {
      for (size_t i = 0; i < e.size(); ++i) {
        log.push_back("remove " + e[i].DebugString() + " " + std::to_string(v[i].hp));
      }
    });
    set = events.OnSet(health, [this](absl::Span<const Entity> e, absl::Span<const Health> v,
                                       CommandBuffer&) {
      for (size_t i = 0; i < e.size(); ++i) {
        log.push_back("set " + e[i].DebugString() + " " + std::to_string(v[i].hp));
      }
    });
    // Observers' own commands, delivered in later rounds: a burning entity loses its
    // health.
    burn = events.OnAdd(burning, [this](absl::Span<const Entity> e, CommandBuffer& out) {
      for (Entity x : e) {
        log.push_back("burn " + x.DebugString());
        out.Remove(x, health);
      }
    });
    entities.resize(64);
    manager.CreateBatch(absl::MakeSpan(entities));
  }
  EntityManager manager;
  EntityPages pages{manager};
  ComponentEvents events{manager, pages};
  Component<Health> health;
  Component<Burning> burning;
  std::vector<Entity> entities;
  std::vector<std::string> log;
  ComponentEvents::Subscription added, removed, set, burn;
};

// Records the same random commands into `buffers` of either rig.
void RecordRandomCommands(uint32_t seed, Rig& rig, std::vector<CommandBuffer>& buffers) {
  std::mt19937 rng(seed);
  ComponentBundle bundle;
  bundle.Set(rig.health, Health{7});
  for (CommandBuffer& buffer : buffers) {
    std::vector<Entity> created;
    for (int k = 0; k < 60; ++k) {
      const Entity e = rig.entities[rng() % rig.entities.size()];
      const int32_t value = static_cast<int32_t>(rng() % 100);
      switch (rng() % 6) {
        case 0:
          buffer.Add(e, rig.health, Health{value});
          break;
        case 1:
          buffer.Remove(e, rig.health);
          break;
        case 2:
          buffer.Set(e, rig.health, Health{value});
          break;
        case 3:
          created.push_back(buffer.Create(bundle));
          break;
        case 4:
          if (!created.empty()) buffer.Set(created.back(), rig.health, Health{value});
          break;
        case 5:
          buffer.Add(e, rig.burning, Burning{});
          break;
      }
    }
  }
}

TEST(EventsPlayback, DeliversWhatAPlaybackAndAFlushDeliverWithoutCopying) {
  for (uint32_t seed = 1; seed <= 20; ++seed) {
    Rig lending, copying;
    for (int frame = 0; frame < 3; ++frame) {
      std::vector<CommandBuffer> a, b;
      for (int i = 0; i < 3; ++i) {
        a.emplace_back(lending.pages);
        b.emplace_back(copying.pages);
      }
      RecordRandomCommands(seed * 7 + frame, lending, a);
      RecordRandomCommands(seed * 7 + frame, copying, b);
      STRATA_ASSERT_OK_AND_ASSIGN(CommandBuffer::Result played,
                                  lending.events.Playback(absl::MakeSpan(a)));
      CommandBuffer::Result total;
      for (CommandBuffer& buffer : b) {
        const CommandBuffer::Result r = buffer.Playback(copying.manager, copying.pages);
        total.applied += r.applied;
        total.skipped_dead += r.skipped_dead;
        total.skipped_conflict += r.skipped_conflict;
      }
      ASSERT_THAT(copying.events.Flush(), IsOk());
      EXPECT_EQ(played, total);
      EXPECT_EQ(lending.events.pending(), 0u);
    }
    EXPECT_EQ(lending.log, copying.log) << "seed " << seed;
    EXPECT_GT(lending.log.size(), 50u);
  }
}

TEST(EventsPlayback, AnObserverMayRecordIntoTheBufferBeingDelivered) {
  Rig rig;
  CommandBuffer commands(rig.pages);
  // Each health added takes a burning next time `commands` plays.
  auto spread = rig.events.OnAdd(rig.health, [&](absl::Span<const Entity> e, CommandBuffer&) {
    for (Entity x : e) commands.Add(x, rig.burning, Burning{});
  });
  for (Entity e : rig.entities) commands.Add(e, rig.health, Health{1});
  ASSERT_THAT(rig.events.Playback(commands).status(), IsOk());
  ASSERT_EQ(commands.size(), rig.entities.size());
  ASSERT_EQ(rig.log.size(), rig.entities.size());
  for (size_t i = 0; i < rig.entities.size(); ++i) {
    EXPECT_EQ(rig.log[i], "add " + rig.entities[i].DebugString());
  }
  rig.log.clear();
  // The burning adds, then the observer's removals of health in the next round.
  ASSERT_THAT(rig.events.Playback(commands).status(), IsOk());
  ASSERT_EQ(rig.log.size(), 2 * rig.entities.size());
  EXPECT_EQ(rig.log.front(), "burn " + rig.entities.front().DebugString());
  EXPECT_EQ(rig.log.back(), "remove " + rig.entities.back().DebugString() + " 1");
}

TEST(EventsPlayback, AGivenUpFlushKeepsItsLastEventsDeliverable) {
  Rig rig;
  // Feeds itself: every round adds burning again.
  auto loop = rig.events.OnAdd(rig.burning, [&](absl::Span<const Entity> e, CommandBuffer& out) {
    for (Entity x : e) {
      out.Remove(x, rig.burning);
      out.Add(x, rig.burning, Burning{});
    }
  });
  CommandBuffer commands(rig.pages);
  for (Entity e : rig.entities) commands.Add(e, rig.burning, Burning{});
  EXPECT_THAT(rig.events.Playback(commands).status(),
              StatusIs(absl::StatusCode::kFailedPrecondition));
  // The last round's adds name the observers' buffer, kept until they are delivered.
  EXPECT_EQ(rig.events.pending(), rig.entities.size());
  loop.Reset();
  rig.log.clear();
  ASSERT_THAT(rig.events.Flush(), IsOk());
  ASSERT_EQ(rig.log.size(), rig.entities.size());
  for (size_t i = 0; i < rig.entities.size(); ++i) {
    EXPECT_EQ(rig.log[i], "burn " + rig.entities[i].DebugString());
  }
}

TEST(EventsPlaybackDeathTest, AnObserverCannotPlayTheBufferBeingDeliveredBack) {
  Rig rig;
  CommandBuffer commands(rig.pages);
  auto replay = rig.events.OnAdd(rig.health, [&](absl::Span<const Entity>, CommandBuffer&) {
    commands.Playback(rig.manager, rig.pages);
  });
  commands.Add(rig.entities[0], rig.health, Health{1});
  EXPECT_DEATH(rig.events.Playback(commands).IgnoreError(),
               "played back by an observer of its own playback");
}

}  // namespace
}  // namespace strata
