// A Schedule over a World: EachSystem derives its access from the callback, commands
// reach the World's observers at sync points, and SaveAll is byte-identical for any
// thread count.
#include "engine/world_schedule.h"

#include <atomic>
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "base/check.h"
#include "component/declare.h"
#include "component/registry.h"
#include "engine/world.h"
#include "entity/entity.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "iteration/command_buffer.h"
#include "schedule/schedule.h"
#include "testing/status_matchers.h"

namespace strata {
namespace {

using ::testing::HasSubstr;

struct Health {
  float hp = 100;
};
struct Regen {
  float rate = 1;
};
struct Poisoned {};

const ComponentRegistry& Registry() {
  static const ComponentRegistry* registry = [] {
    auto* r = new ComponentRegistry;
    STRATA_CHECK(r->Add(ComponentDeclaration<Health>("health").Field("hp", &Health::hp).Build()).ok(),
                 "health");
    STRATA_CHECK(r->Add(ComponentDeclaration<Regen>("regen").Field("rate", &Regen::rate).Build()).ok(),
                 "regen");
    STRATA_CHECK(r->Add(ComponentDeclaration<Poisoned>("poisoned").Build()).ok(), "poisoned");
    return r;
  }();
  return *registry;
}

struct Game {
  std::unique_ptr<World> world;
  std::unique_ptr<Schedule> schedule;
  std::atomic<size_t> census{0};
  size_t dead = 0;
  ComponentEvents::Subscription on_death;
  int frame = 0;
};

// A small game: spawners create poisoned and regenerating entities by commands, the
// poison kills (commands), regen heals, a census counts.
std::unique_ptr<Game> MakeGame(int threads) {
  auto game = std::make_unique<Game>();
  game->world = *World::Create(Registry());
  World& world = *game->world;
  game->on_death = world.OnRemove<Health>(
      [g = game.get()](absl::Span<const Entity> e, absl::Span<const Health>, CommandBuffer&) {
        g->dead += e.size();
      });
  const Component<Health> health = world.Pages<Health>().component();
  const Component<Regen> regen = world.Pages<Regen>().component();
  const Component<Poisoned> poisoned = world.Pages<Poisoned>().component();
  game->schedule = MakeSchedule(world, {.threads = threads});
  Schedule& s = *game->schedule;
  s.Stage("spawn");
  s.Add(System("spawn", [g = game.get(), health, regen, poisoned](SystemContext& ctx) {
          for (int i = 0; i < 300; ++i) {
            ComponentBundle bundle;
            bundle.Set(health, Health{static_cast<float>(20 + (g->frame * 7 + i) % 50)});
            if (i % 3 == 0) bundle.Set(regen, Regen{static_cast<float>(i % 4)});
            if (i % 2 == 0) bundle.Set(poisoned, Poisoned{});
            ctx.command_buffer().Create(bundle);
          }
        }).Commands(health, regen, poisoned));
  s.Stage("update");
  s.Add(EachSystem(world, "regen", [](Health& h, const Regen& r) { h.hp += r.rate; }));
  s.Add(EachSystem(world, "poison", With<Poisoned>(),
                   [](CommandBuffer& out, Entity e, Health& h) {
                     h.hp -= 3;
                     if (h.hp <= 0) out.Destroy(e);
                   })
            .After("regen")
            .Commands(health, regen, poisoned));
  s.Stage("report");
  s.Add(EachSystem(world, "census", [g = game.get()](const Health&) { g->census.fetch_add(1); })
            .MainThread());
  return game;
}

TEST(WorldSchedule, EachSystemDerivesAccessAndCommandsReachObservers) {
  std::unique_ptr<Game> game = MakeGame(1);
  STRATA_ASSERT_OK(game->schedule->Build());
  const std::string description = game->schedule->Describe();
  EXPECT_THAT(description, HasSubstr("regen          writes health; reads regen"));
  EXPECT_THAT(description, HasSubstr("poison         writes health; commands on health, poisoned, regen; after regen"));
  EXPECT_THAT(description, HasSubstr("census         reads health; main thread"));
  EXPECT_THAT(description, HasSubstr("sync point: play back the commands of spawn; \"regen\" touches"));
  EXPECT_THAT(description, HasSubstr("sync point: play back the commands of poison; \"census\" touches health"));
  EXPECT_TRUE(game->schedule->ambiguities().empty()) << description;
  for (game->frame = 0; game->frame < 30; ++game->frame) {
    game->census = 0;
    STRATA_ASSERT_OK(game->schedule->Run());
    // The census runs after the poison's destroys were played back.
    EXPECT_EQ(game->census.load(), 300u * (game->frame + 1) - game->dead);
  }
  EXPECT_GT(game->dead, 0u);
}

TEST(WorldSchedule, SaveAllIsByteIdenticalForAnyThreadCount) {
  std::vector<std::vector<std::byte>> saves;
  std::vector<size_t> deaths;
  for (int threads : {1, 2, 8}) {
    std::unique_ptr<Game> game = MakeGame(threads);
    for (game->frame = 0; game->frame < 40; ++game->frame) STRATA_ASSERT_OK(game->schedule->Run());
    STRATA_ASSERT_OK_AND_ASSIGN(std::vector<std::byte> saved, game->world->SaveAll());
    saves.push_back(std::move(saved));
    deaths.push_back(game->dead);
  }
  EXPECT_GT(saves[0].size(), 1000u);
  EXPECT_TRUE(saves[1] == saves[0]);
  EXPECT_TRUE(saves[2] == saves[0]);
  EXPECT_EQ(deaths[1], deaths[0]);
  EXPECT_EQ(deaths[2], deaths[0]);
}

}  // namespace
}  // namespace strata
