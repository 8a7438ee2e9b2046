// The "Your own component" snippet of examples/README.md, compiled and run: the code
// between the README markers is the README's code block, line for line (checked by
// readme_snippet_match_test).
#include <algorithm>
#include <cstddef>
#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "base/status_macros.h"
#include "component/declare.h"
#include "engine/world.h"
#include "gtest/gtest.h"
#include "resource/entity_compiler.h"
#include "resource/format.h"
#include "testing/status_matchers.h"

namespace {

// BEGIN README
struct Health {
  float hp = 100;
  float max = 100;
  strata::Entity attacker;  // an entity reference: a name in JSON, a live handle at run time
};
struct Burning {};  // a tag

absl::Status RegisterGameComponents(strata::ComponentRegistry& registry) {
  STRATA_RETURN_IF_ERROR(registry.Add(strata::ComponentDeclaration<Health>("health")
                                          .Field("hp", &Health::hp).Min(0)
                                          .Field("max", &Health::max).Min(1)
                                          .Field("attacker", &Health::attacker)
                                          .Build()));
  return registry.Add(strata::ComponentDeclaration<Burning>("burning").Build());
}

absl::StatusOr<std::vector<std::byte>> PlayOneTurn(const strata::ComponentRegistry& registry) {
  strata::EntityCompiler compiler;
  STRATA_RETURN_IF_ERROR(registry.RegisterCompilers(compiler));
  STRATA_ASSIGN_OR_RETURN(strata::EntityCompiler::Result level, compiler.Compile(R"({"entities": [
    {"name": "orc", "components": [{"type": "health", "attacker": "knight"}, {"type": "burning"}]},
    {"name": "knight", "components": [{"type": "health", "hp": 80, "attacker": "orc"}]}]})", {}));
  STRATA_ASSIGN_OR_RETURN(strata::EntityResourceView view,
                          strata::EntityResourceView::Create(level.blob));
  STRATA_ASSIGN_OR_RETURN(std::unique_ptr<strata::World> world, strata::World::Create(registry));
  STRATA_ASSIGN_OR_RETURN(std::vector<strata::Entity> spawned, world->Spawn(view));
  // A system: a page query over everything that has health and burns.
  world->Each(strata::With<Burning>(), [](Health& h) { h.hp = std::max(0.0f, h.hp - 10); });
  // A tool sets a field by name; the checks of the declaration (Min(0)) apply.
  STRATA_RETURN_IF_ERROR(
      world->properties().Set(spawned[1], "health", "hp", strata::PropertyValue(50.0f)));
  return world->SaveAll();  // a blob again: spawn it into a fresh World to load the game
}
// END README

TEST(ReadmeSnippet, RunsAndSavesWhatItDid) {
  strata::ComponentRegistry registry;
  ASSERT_THAT(RegisterGameComponents(registry), strata::testing::IsOk());
  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<std::byte> saved, PlayOneTurn(registry));
  STRATA_ASSERT_OK_AND_ASSIGN(strata::EntityResourceView view, strata::EntityResourceView::Create(saved));
  STRATA_ASSERT_OK_AND_ASSIGN(std::unique_ptr<strata::World> world, strata::World::Create(registry));
  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<strata::Entity> e, world->Spawn(view));
  ASSERT_EQ(e.size(), 2u);
  ASSERT_EQ(world->EntityName(e[0]), "orc");
  const strata::Component<Health> health = world->Pages<Health>().component();
  const Health* orc = world->pages().TryGet(e[0], health);
  const Health* knight = world->pages().TryGet(e[1], health);
  ASSERT_NE(orc, nullptr);
  ASSERT_NE(knight, nullptr);
  EXPECT_EQ(orc->hp, 90.0f);     // burned once
  EXPECT_EQ(knight->hp, 50.0f);  // set by name (80 before; the knight does not burn)
  EXPECT_EQ(orc->attacker, e[1]);
  EXPECT_EQ(knight->attacker, e[0]);
}

}  // namespace
