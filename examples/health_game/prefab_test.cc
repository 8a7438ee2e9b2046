// The health game's prefabs: a goblin (health, a burning torch child whose attacker is
// its goblin) and a chief based on it. The level overrides fields per instance; the
// game's own systems run on the flat copies; more goblins are made at run time.
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "component/registry.h"
#include "engine/world.h"
#include "examples/health_game/health.h"
#include "gtest/gtest.h"
#include "resource/entity_compiler.h"
#include "resource/format.h"
#include "testing/status_matchers.h"

namespace health_game {
namespace {

using ::strata::ComponentRegistry;
using ::strata::Entity;
using ::strata::EntityCompiler;
using ::strata::EntityResourceView;
using ::strata::PrefabId;
using ::strata::World;
using ::strata::testing::IsOk;

std::string ReadLevel() {
  std::ifstream in("examples/health_game/horde.json", std::ios::binary);
  EXPECT_TRUE(in.good());
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(HealthPrefabs, InstancesOverrideRunAndMultiply) {
  ComponentRegistry registry;
  ASSERT_THAT(RegisterGameComponents(registry), IsOk());
  EntityCompiler compiler;
  ASSERT_THAT(registry.RegisterCompilers(compiler), IsOk());
  STRATA_ASSERT_OK_AND_ASSIGN(EntityCompiler::Result level, compiler.Compile(ReadLevel(), {}));
  STRATA_ASSERT_OK_AND_ASSIGN(EntityResourceView view, EntityResourceView::Create(level.blob));
  STRATA_ASSERT_OK_AND_ASSIGN(std::unique_ptr<World> world, World::Create(registry));
  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<Entity> spawned, world->Spawn(view));
  // camp 0; g1 1, its torch 2; g2 3, torch 4; chief 5, torch 6.
  ASSERT_EQ(spawned.size(), 7u);
  const auto health = world->Pages<Health>().component();
  auto hp = [&](Entity e) { return world->pages().TryGet(e, health)->hp; };
  EXPECT_EQ(hp(spawned[1]), 20);  // the prefab's
  EXPECT_EQ(hp(spawned[3]), 5);   // overridden
  EXPECT_EQ(world->pages().TryGet(spawned[3], health)->max, 20);
  EXPECT_EQ(hp(spawned[5]), 60);  // the chain's
  EXPECT_EQ(world->pages().TryGet(spawned[5], health)->attacker, spawned[1]);  // named in the level
  for (int torch : {2, 4, 6}) {
    EXPECT_EQ(world->EntityName(spawned[torch]), "torch");
    // The torch's attacker is its own goblin, whichever instance.
    EXPECT_EQ(world->pages().TryGet(spawned[torch], health)->attacker, spawned[torch - 1]);
    EXPECT_EQ(world->transforms().Parent(world->transforms().Lookup(spawned[torch])),
              world->transforms().Lookup(spawned[torch - 1]));
  }
  // The game's system runs on the copies as on any entity: the torches burn.
  STRATA_ASSERT_OK_AND_ASSIGN(size_t burned, BurnSystem(*world, 1));
  EXPECT_EQ(burned, 3u);
  EXPECT_EQ(hp(spawned[2]), 0);

  // More goblins at run time, each with its torch.
  STRATA_ASSERT_OK_AND_ASSIGN(PrefabId goblin, world->FindPrefab("goblin"));
  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<Entity> more, world->Instantiate(goblin, 4));
  ASSERT_EQ(more.size(), 4u);
  for (Entity g : more) EXPECT_EQ(hp(g), 20);
  STRATA_ASSERT_OK_AND_ASSIGN(burned, BurnSystem(*world, 1));
  EXPECT_EQ(burned, 3u + 4u);
}

// The level edited while the game runs: the goblin prefab's max raised, a goblin
// inserted first in the camp. Reloaded, every goblin takes the new max (changed in the
// file), keeps the hp the game left it (not changed there), and the newcomer comes
// with its torch, whose attacker is the newcomer.
TEST(HealthPrefabs, ALevelEditedWhileTheGameRunsIsReloaded) {
  ComponentRegistry registry;
  ASSERT_THAT(RegisterGameComponents(registry), IsOk());
  EntityCompiler compiler;
  ASSERT_THAT(registry.RegisterCompilers(compiler), IsOk());
  const std::string text = ReadLevel();
  STRATA_ASSERT_OK_AND_ASSIGN(EntityCompiler::Result level, compiler.Compile(text, {}));
  STRATA_ASSERT_OK_AND_ASSIGN(std::unique_ptr<World> world, World::Create(registry));
  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<Entity> spawned, world->SpawnLevel(std::move(level.blob)));
  const auto health = world->Pages<Health>().component();
  auto get = [&](Entity e) { return *world->pages().TryGet(e, health); };
  world->pages().TryGet(spawned[1], health)->hp = 7;  // g1 took a hit
  STRATA_ASSERT_OK_AND_ASSIGN(size_t burned, BurnSystem(*world, 1));
  EXPECT_EQ(burned, 3u);

  std::string edited = text;
  const std::string old_max = R"({"type": "health", "hp": 20, "max": 20})";
  edited.replace(edited.find(old_max), old_max.size(), R"({"type": "health", "hp": 20, "max": 25})");
  const std::string first = R"("children": [
    {"name": "g1")";
  edited.replace(edited.find(first), first.size(), R"("children": [
    {"name": "g0", "prefab": "goblin"},
    {"name": "g1")");
  STRATA_ASSERT_OK_AND_ASSIGN(EntityCompiler::Result again, compiler.Compile(edited, {}));
  STRATA_ASSERT_OK_AND_ASSIGN(strata::ReloadReport report, world->Reload(std::move(again.blob)));
  EXPECT_EQ(report.entities_added, 2u);  // g0 and its torch
  EXPECT_EQ(report.entities_removed, 0u);
  // g1 and g2 (the chief overrides max): the max only.
  EXPECT_EQ(report.written, (std::vector<std::pair<std::string, uint32_t>>{{"health.max", 2}}));
  EXPECT_EQ(get(spawned[1]).hp, 7);
  EXPECT_EQ(get(spawned[1]).max, 25);
  EXPECT_EQ(get(spawned[3]).hp, 5);
  EXPECT_EQ(get(spawned[3]).max, 25);
  EXPECT_EQ(get(spawned[5]).max, 60);
  EXPECT_EQ(get(spawned[5]).attacker, spawned[1]);
  EXPECT_EQ(get(spawned[2]).hp, 0);  // the torches burned out, and stay so
  // The newcomer is entity 1 of the new level, its torch entity 2.
  const absl::Span<const Entity> now = world->LevelEntities();
  ASSERT_EQ(now.size(), 9u);
  EXPECT_EQ(world->EntityName(now[1]), "g0");
  EXPECT_EQ(get(now[1]).hp, 20);
  EXPECT_EQ(get(now[1]).max, 25);
  EXPECT_EQ(get(now[2]).attacker, now[1]);
  EXPECT_EQ(world->transforms().Parent(world->transforms().Lookup(now[1])),
            world->transforms().Lookup(spawned[0]));  // linked under the camp
  EXPECT_EQ(now[3], spawned[1]);  // g1 kept its handle
}

}  // namespace
}  // namespace health_game
