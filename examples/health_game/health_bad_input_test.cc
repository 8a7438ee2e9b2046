// The bad input a game meets: references to entities that do not exist, a blob written
// with another declaration of the same type, an older blob after a field was added
// (a migration), and declaring the game's types twice.
#include "examples/health_game/health.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "component/declare.h"
#include "component/export.h"
#include "component/registry.h"
#include "engine/world.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "resource/entity_compiler.h"
#include "resource/format.h"
#include "testing/status_matchers.h"

namespace health_game {
namespace {

using ::strata::ComponentDeclaration;
using ::strata::ComponentRegistry;
using ::strata::Entity;
using ::strata::EntityCompiler;
using ::strata::EntityResourceView;
using ::strata::World;
using ::strata::testing::IsOk;
using ::strata::testing::StatusIs;
using ::testing::AllOf;
using ::testing::HasSubstr;

constexpr char kDuel[] = R"({"entities": [
  {"name": "knight", "components": [
     {"type": "transform", "position": [1, 0, 0]},
     {"type": "health", "hp": 80, "attacker": "orc"},
     {"type": "burning"}]},
  {"name": "orc", "components": [
     {"type": "health", "hp": 60, "max": 60, "attacker": "knight"}]}
]})";

absl::StatusOr<std::vector<std::byte>> Compile(const ComponentRegistry& registry,
                                               absl::string_view json) {
  EntityCompiler compiler;
  absl::Status registered = registry.RegisterCompilers(compiler);
  if (!registered.ok()) return registered;
  absl::StatusOr<EntityCompiler::Result> result = compiler.Compile(json, {});
  if (!result.ok()) return result.status();
  return std::move(result->blob);
}

std::vector<std::byte> DuelBlob() {
  ComponentRegistry registry;
  EXPECT_THAT(RegisterGameComponents(registry), IsOk());
  absl::StatusOr<std::vector<std::byte>> blob = Compile(registry, kDuel);
  EXPECT_THAT(blob.status(), IsOk());
  return blob.ok() ? *std::move(blob) : std::vector<std::byte>();
}

TEST(HealthBadInput, ReferenceToAMissingEntityNamesIt) {
  ComponentRegistry registry;
  ASSERT_THAT(RegisterGameComponents(registry), IsOk());
  EXPECT_THAT(Compile(registry, R"({"entities": [
                {"name": "knight", "components": [{"type": "health", "attacker": "goblin"}]}]})")
                  .status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       AllOf(HasSubstr("goblin"), HasSubstr("attacker"), HasSubstr("knight"))));
  // A path whose last step is missing, too.
  EXPECT_THAT(Compile(registry, R"({"entities": [
                {"name": "arena", "children": [{"name": "knight", "components": [
                   {"type": "health", "attacker": "arena/orc"}]}]}]})")
                  .status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("arena/orc")));
  // Checks of the declaration: Min(0), the field's JSON type, unknown keys.
  EXPECT_THAT(Compile(registry, R"({"entities": [{"components": [{"type": "health", "hp": -1}]}]})")
                  .status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("hp")));
  EXPECT_THAT(Compile(registry, R"({"entities": [{"components": [{"type": "health", "attacker": 3}]}]})")
                  .status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("attacker")));
  EXPECT_THAT(Compile(registry, R"({"entities": [{"components": [{"type": "burning", "hot": true}]}]})")
                  .status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("hot")));
}

TEST(HealthBadInput, SelfReferenceAndNullAttackerCompile) {
  ComponentRegistry registry;
  ASSERT_THAT(RegisterGameComponents(registry), IsOk());
  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<std::byte> blob, Compile(registry, R"({"entities": [
    {"name": "berserk", "components": [{"type": "health", "attacker": "berserk"}]},
    {"name": "calm", "components": [{"type": "health", "attacker": null}]}]})"));
  STRATA_ASSERT_OK_AND_ASSIGN(EntityResourceView view, EntityResourceView::Create(blob));
  STRATA_ASSERT_OK_AND_ASSIGN(std::unique_ptr<World> world, World::Create(registry));
  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<Entity> e, world->Spawn(view));
  ASSERT_EQ(e.size(), 2u);
  STRATA_ASSERT_OK_AND_ASSIGN(auto* health, world->Pages<Health>(kHealthTypeName));
  EXPECT_EQ(world->pages().TryGet(e[0], health->component())->attacker, e[0]);
  EXPECT_FALSE(world->pages().TryGet(e[1], health->component())->attacker.is_valid());
}

// Health2: "health" as another build of the game declares it: hp is an integer there.
struct Health2 {
  int32_t hp = 100;
  float max = 100;
  Entity attacker;
};

TEST(HealthBadInput, BlobOfAnotherLayoutIsRefusedNamingTypeAndField) {
  const std::vector<std::byte> blob = DuelBlob();
  STRATA_ASSERT_OK_AND_ASSIGN(EntityResourceView view, EntityResourceView::Create(blob));

  ComponentRegistry other;
  ASSERT_THAT(other.Add(ComponentDeclaration<Health2>("health")
                            .Field("hp", &Health2::hp)
                            .Field("max", &Health2::max)
                            .Field("attacker", &Health2::attacker)
                            .Build()),
              IsOk());
  ASSERT_THAT(other.Add(ComponentDeclaration<Burning>("burning").Build()), IsOk());
  STRATA_ASSERT_OK_AND_ASSIGN(std::unique_ptr<World> world, World::Create(other));
  EXPECT_THAT(world->Spawn(view).status(),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       AllOf(HasSubstr("\"health\""), HasSubstr("\"hp\""), HasSubstr("f32"),
                             HasSubstr("i32"))));
  // Nothing half-spawned: no entity, no transform, no burning tag.
  EXPECT_TRUE(world->Entities().empty());
  EXPECT_EQ(world->num_transforms(), 0u);
  EXPECT_EQ(world->Store("burning")->size(), 0u);
  EXPECT_EQ(world->entities().size(), 0u);

  // A declaration that dropped a field refuses too, naming it: spawning would lose it.
  struct NoAttacker {
    float hp = 100;
    float max = 100;
  };
  ComponentRegistry dropped;
  ASSERT_THAT(dropped.Add(ComponentDeclaration<NoAttacker>("health")
                              .Field("hp", &NoAttacker::hp)
                              .Field("max", &NoAttacker::max)
                              .Build()),
              IsOk());
  STRATA_ASSERT_OK_AND_ASSIGN(std::unique_ptr<World> dropped_world, World::Create(dropped));
  EXPECT_THAT(dropped_world->Spawn(view).status(),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       AllOf(HasSubstr("\"health\""), HasSubstr("\"attacker\""))));
  EXPECT_TRUE(dropped_world->Entities().empty());
}

// HealthV2: the next version of the game adds armor, with a default.
struct HealthV2 {
  float hp = 100;
  float max = 100;
  Entity attacker;
  float armor = 5;
};

TEST(HealthBadInput, OlderBlobMigratesAddedFieldToItsDefault) {
  const std::vector<std::byte> old_blob = DuelBlob();
  STRATA_ASSERT_OK_AND_ASSIGN(EntityResourceView old_view, EntityResourceView::Create(old_blob));

  ComponentRegistry v2;
  ASSERT_THAT(v2.Add(ComponentDeclaration<HealthV2>("health")
                         .Field("hp", &HealthV2::hp).Min(0)
                         .Field("max", &HealthV2::max).Min(1)
                         .Field("attacker", &HealthV2::attacker)
                         .Field("armor", &HealthV2::armor).Min(0)
                         .Build()),
              IsOk());
  ASSERT_THAT(v2.Add(ComponentDeclaration<Burning>("burning").Build()), IsOk());
  STRATA_ASSERT_OK_AND_ASSIGN(std::unique_ptr<World> world, World::Create(v2));
  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<Entity> e, world->Spawn(old_view));
  ASSERT_EQ(e.size(), 2u);
  STRATA_ASSERT_OK_AND_ASSIGN(auto* health, world->Pages<HealthV2>(kHealthTypeName));
  const HealthV2* knight = world->pages().TryGet(e[0], health->component());
  const HealthV2* orc = world->pages().TryGet(e[1], health->component());
  ASSERT_NE(knight, nullptr);
  ASSERT_NE(orc, nullptr);
  EXPECT_EQ(knight->hp, 80.0f);
  EXPECT_EQ(knight->max, 100.0f);
  EXPECT_EQ(knight->armor, 5.0f);  // not in the blob: the declared default
  EXPECT_EQ(knight->attacker, e[1]);
  EXPECT_EQ(orc->hp, 60.0f);
  EXPECT_EQ(orc->max, 60.0f);
  EXPECT_EQ(orc->armor, 5.0f);
  EXPECT_EQ(orc->attacker, e[0]);
  STRATA_ASSERT_OK_AND_ASSIGN(auto* burning, world->Pages<Burning>(kBurningTypeName));
  EXPECT_TRUE(world->pages().Has(e[0], burning->component().id));
  EXPECT_FALSE(world->pages().Has(e[1], burning->component().id));

  // Saved by v2, the blob has the new layout: it reloads in v2 with armor as set, and
  // the old declaration now refuses it (armor is not declared there).
  ASSERT_THAT(world->properties().Set(e[0], "health", "armor", strata::PropertyValue(2.5f)), IsOk());
  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<std::byte> new_blob, world->SaveAll());
  STRATA_ASSERT_OK_AND_ASSIGN(EntityResourceView new_view, EntityResourceView::Create(new_blob));
  STRATA_ASSERT_OK_AND_ASSIGN(std::unique_ptr<World> reloaded, World::Create(v2));
  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<Entity> r, reloaded->Spawn(new_view));
  STRATA_ASSERT_OK_AND_ASSIGN(auto* reloaded_health, reloaded->Pages<HealthV2>(kHealthTypeName));
  EXPECT_EQ(reloaded->pages().TryGet(r[0], reloaded_health->component())->armor, 2.5f);
  EXPECT_EQ(reloaded->pages().TryGet(r[1], reloaded_health->component())->armor, 5.0f);

  ComponentRegistry v1;
  ASSERT_THAT(RegisterGameComponents(v1), IsOk());
  STRATA_ASSERT_OK_AND_ASSIGN(std::unique_ptr<World> v1_world, World::Create(v1));
  EXPECT_THAT(v1_world->Spawn(new_view).status(),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("\"armor\"")));
}

TEST(HealthBadInput, DeclaringTheGameTwiceIsRefused) {
  ComponentRegistry registry;
  ASSERT_THAT(RegisterGameComponents(registry), IsOk());
  EXPECT_THAT(RegisterGameComponents(registry), StatusIs(absl::StatusCode::kAlreadyExists));
  // A field whose C++ member is the wrong size for its declared type.
  EXPECT_THAT(registry.Add(ComponentDeclaration<Health>("poison")
                               .RawField("dose", strata::FieldType::kVec3, sizeof(Health) - 4)
                               .Build()),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("dose")));
  EXPECT_EQ(registry.Find("poison"), nullptr);
}

// BurningV2: the tag grows a field with a default; older blobs hold the bare tag.
struct BurningV2 {
  float heat = 3;
};

TEST(HealthBadInput, TagThatGainsAFieldMigrates) {
  const std::vector<std::byte> old_blob = DuelBlob();
  STRATA_ASSERT_OK_AND_ASSIGN(EntityResourceView view, EntityResourceView::Create(old_blob));
  ComponentRegistry v2;
  ASSERT_THAT(v2.Add(ComponentDeclaration<Health>("health")
                         .Field("hp", &Health::hp)
                         .Field("max", &Health::max)
                         .Field("attacker", &Health::attacker)
                         .Build()),
              IsOk());
  ASSERT_THAT(v2.Add(ComponentDeclaration<BurningV2>("burning").Field("heat", &BurningV2::heat).Build()),
              IsOk());
  STRATA_ASSERT_OK_AND_ASSIGN(std::unique_ptr<World> world, World::Create(v2));
  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<Entity> e, world->Spawn(view));
  STRATA_ASSERT_OK_AND_ASSIGN(auto* burning, world->Pages<BurningV2>(kBurningTypeName));
  const BurningV2* knight = world->pages().TryGet(e[0], burning->component());
  ASSERT_NE(knight, nullptr);
  EXPECT_EQ(knight->heat, 3.0f);
  EXPECT_EQ(world->pages().TryGet(e[1], burning->component()), nullptr);
}

TEST(HealthBadInput, AmbiguousNamesNeedPathsAndExportRoundTrips) {
  ComponentRegistry registry;
  ASSERT_THAT(RegisterGameComponents(registry), IsOk());
  constexpr char kTwoGuards[] = R"({"entities": [
    {"name": "north", "children": [{"name": "guard", "components": [
       {"type": "health", "attacker": "south/guard"}]}]},
    {"name": "south", "children": [{"name": "guard", "components": [
       {"type": "health", "attacker": "north/guard"}]}]},
    {"components": [{"type": "health", "attacker": "north/guard"}]}]})";
  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<std::byte> blob, Compile(registry, kTwoGuards));
  STRATA_ASSERT_OK_AND_ASSIGN(EntityResourceView view, EntityResourceView::Create(blob));
  STRATA_ASSERT_OK_AND_ASSIGN(std::unique_ptr<World> world, World::Create(registry));
  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<Entity> e, world->Spawn(view));
  ASSERT_EQ(e.size(), 5u);  // north, north/guard, south, south/guard, unnamed
  STRATA_ASSERT_OK_AND_ASSIGN(auto* health, world->Pages<Health>(kHealthTypeName));
  EXPECT_EQ(world->pages().TryGet(e[1], health->component())->attacker, e[3]);
  EXPECT_EQ(world->pages().TryGet(e[3], health->component())->attacker, e[1]);
  EXPECT_EQ(world->pages().TryGet(e[4], health->component())->attacker, e[1]);

  // "guard" alone is ambiguous: an error naming it.
  EXPECT_THAT(Compile(registry, R"({"entities": [
                {"name": "a", "children": [{"name": "guard"}]},
                {"name": "b", "children": [{"name": "guard"}]},
                {"components": [{"type": "health", "attacker": "guard"}]}]})")
                  .status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("guard")));

  // Saved with and without names, exported and recompiled: the same bytes.
  for (bool keep_names : {true, false}) {
    SCOPED_TRACE(keep_names ? "names" : "no names");
    strata::SaveOptions options;
    options.keep_names = keep_names;
    STRATA_ASSERT_OK_AND_ASSIGN(std::vector<std::byte> saved, world->SaveAll(options));
    STRATA_ASSERT_OK_AND_ASSIGN(EntityResourceView saved_view, EntityResourceView::Create(saved));
    STRATA_ASSERT_OK_AND_ASSIGN(nlohmann::json level, strata::ExportLevel(saved_view, registry));
    EntityCompiler compiler;
    ASSERT_THAT(registry.RegisterCompilers(compiler), IsOk());
    EntityCompiler::Options compile_options;
    compile_options.keep_names = keep_names;
    STRATA_ASSERT_OK_AND_ASSIGN(EntityCompiler::Result recompiled,
                                compiler.Compile(level.dump(), compile_options));
    EXPECT_EQ(recompiled.blob, saved) << level.dump(1);
    STRATA_ASSERT_OK_AND_ASSIGN(std::unique_ptr<World> loaded, World::Create(registry));
    STRATA_ASSERT_OK_AND_ASSIGN(std::vector<Entity> l, loaded->Spawn(saved_view));
    ASSERT_EQ(l.size(), 5u);
    STRATA_ASSERT_OK_AND_ASSIGN(auto* loaded_health, loaded->Pages<Health>(kHealthTypeName));
    EXPECT_EQ(loaded->pages().TryGet(l[1], loaded_health->component())->attacker, l[3]);
    EXPECT_EQ(loaded->pages().TryGet(l[3], loaded_health->component())->attacker, l[1]);
    EXPECT_EQ(loaded->pages().TryGet(l[4], loaded_health->component())->attacker, l[1]);
  }
}

// Threat: several per entity, each under its own name, each referring to an entity.
struct Threat {
  Entity target;
  float weight = 1;
};

TEST(HealthBadInput, NamedComponentsWithReferencesRoundTrip) {
  ComponentRegistry registry;
  ASSERT_THAT(RegisterGameComponents(registry), IsOk());
  ASSERT_THAT(registry.Add(ComponentDeclaration<Threat>("threat", strata::ComponentStorage::kNamed)
                               .Field("target", &Threat::target)
                               .Field("weight", &Threat::weight).Min(0)
                               .Build()),
              IsOk());
  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<std::byte> blob, Compile(registry, R"({"entities": [
    {"name": "knight", "components": [{"type": "health", "attacker": "orc"},
       {"type": "threat", "name": "Nearest", "target": "orc", "weight": 2},
       {"type": "threat", "name": "Self", "target": "knight"}]},
    {"name": "orc", "components": [{"type": "threat", "name": "Nearest", "target": "knight"}]}]})"));
  STRATA_ASSERT_OK_AND_ASSIGN(EntityResourceView view, EntityResourceView::Create(blob));
  STRATA_ASSERT_OK_AND_ASSIGN(std::unique_ptr<World> world, World::Create(registry));
  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<Entity> e, world->Spawn(view));
  ASSERT_EQ(e.size(), 2u);
  STRATA_ASSERT_OK_AND_ASSIGN(strata::PropertyValue target,
                              world->properties().Get(e[0], "Self", "target"));
  EXPECT_EQ(std::get<Entity>(target), e[0]);
  STRATA_ASSERT_OK_AND_ASSIGN(target, world->properties().Get(e[1], "Nearest", "target"));
  EXPECT_EQ(std::get<Entity>(target), e[0]);
  STRATA_ASSERT_OK_AND_ASSIGN(strata::PropertyValue weight,
                              world->properties().Get(e[0], "Nearest", "weight"));
  EXPECT_EQ(std::get<float>(weight), 2.0f);

  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<std::byte> saved, world->SaveAll());
  EXPECT_EQ(saved, blob);  // nothing changed: the save is the compiled level
  STRATA_ASSERT_OK_AND_ASSIGN(EntityResourceView saved_view, EntityResourceView::Create(saved));
  STRATA_ASSERT_OK_AND_ASSIGN(nlohmann::json level, strata::ExportLevel(saved_view, registry));
  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<std::byte> recompiled, Compile(registry, level.dump()));
  EXPECT_EQ(recompiled, blob);

  // A world without threat skips it, counted; the rest spawns.
  ComponentRegistry game_only;
  ASSERT_THAT(RegisterGameComponents(game_only), IsOk());
  STRATA_ASSERT_OK_AND_ASSIGN(std::unique_ptr<World> partial, World::Create(game_only));
  strata::SpawnStats stats;
  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<Entity> p, partial->Spawn(view, &stats));
  EXPECT_EQ(stats.skipped_types.size(), 1u);
  EXPECT_EQ(stats.instances_skipped, 3u);
  STRATA_ASSERT_OK_AND_ASSIGN(auto* health, partial->Pages<Health>(kHealthTypeName));
  EXPECT_EQ(partial->pages().TryGet(p[0], health->component())->attacker, p[1]);
}

}  // namespace
}  // namespace health_game
