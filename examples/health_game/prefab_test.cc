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

}  // namespace
}  // namespace health_game
