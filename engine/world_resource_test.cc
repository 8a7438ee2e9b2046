// World resources: a type declared with ComponentStorage::kResource is one value per
// World, reached by type and by name, saved by SaveAll, set by a spawned level, and
// checked against the running system's declaration.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/check.h"
#include "base/status_macros.h"
#include "component/declare.h"
#include "component/registry.h"
#include "engine/world.h"
#include "engine/world_schedule.h"
#include "entity/entity.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "resource/entity_compiler.h"
#include "resource/format.h"
#include "schedule/schedule.h"
#include "testing/status_matchers.h"

namespace strata {
namespace {

using ::strata::testing::StatusIs;
using ::testing::HasSubstr;

struct Health {
  float hp = 100;
};
struct GameRules {
  float gravity = 9.81f;
  int32_t lives = 3;
  Entity champion;  // a reference to an entity of the world
  bool hardcore = false;
};
struct Clock {
  double seconds = 0;
  uint32_t frame = 0;
  float dt = 1.0f / 60;
};

const ComponentRegistry& Registry() {
  static const ComponentRegistry* registry = [] {
    auto* r = new ComponentRegistry;
    STRATA_CHECK(r->Add(ComponentDeclaration<Health>("health").Field("hp", &Health::hp).Build()).ok(),
                 "health");
    STRATA_CHECK(r->Add(ComponentDeclaration<GameRules>("game_rules", ComponentStorage::kResource)
                            .Field("gravity", &GameRules::gravity)
                            .Field("lives", &GameRules::lives).Min(0)
                            .Field("champion", &GameRules::champion)
                            .Field("hardcore", &GameRules::hardcore)
                            .Build())
                     .ok(),
                 "game_rules");
    STRATA_CHECK(r->Add(ComponentDeclaration<Clock>("clock", ComponentStorage::kResource)
                            .Field("seconds", &Clock::seconds)
                            .Field("frame", &Clock::frame).ReadOnly()
                            .Field("dt", &Clock::dt)
                            .Build())
                     .ok(),
                 "clock");
    return r;
  }();
  return *registry;
}

std::unique_ptr<World> NewWorld() {
  absl::StatusOr<std::unique_ptr<World>> world = World::Create(Registry());
  STRATA_CHECK(world.ok(), "world");
  return *std::move(world);
}

absl::StatusOr<std::vector<std::byte>> Compile(const std::string& json) {
  EntityCompiler compiler;
  STRATA_RETURN_IF_ERROR(Registry().RegisterCompilers(compiler));
  STRATA_ASSIGN_OR_RETURN(EntityCompiler::Result result, compiler.Compile(json, {}));
  return std::move(result.blob);
}

bool HasSection(absl::Span<const std::byte> blob, absl::string_view type) {
  absl::StatusOr<EntityResourceView> view = EntityResourceView::Create(blob);
  STRATA_CHECK(view.ok(), "view");
  for (const ComponentTypeView& section : view->component_types()) {
    if (section.type == IdString32(type)) return true;
  }
  return false;
}

TEST(WorldResource, DefaultsUntilSetOnePerWorldReachedByType) {
  std::unique_ptr<World> world = NewWorld();
  std::unique_ptr<World> other = NewWorld();
  EXPECT_EQ(world->Resource<GameRules>().lives, 3);
  EXPECT_EQ(world->ReadResource<GameRules>().gravity, 9.81f);
  world->Resource<GameRules>().lives = 5;
  EXPECT_EQ(world->ReadResource<GameRules>().lives, 5);
  EXPECT_EQ(&world->Resource<GameRules>(), &world->ReadResource<GameRules>());
  EXPECT_EQ(other->ReadResource<GameRules>().lives, 3);  // each world its own
  EXPECT_EQ(world->TryResource<Clock>(), &world->Resource<Clock>());
  EXPECT_EQ(world->TryResource<Health>(), nullptr);  // a page component, not a resource
  EXPECT_EQ(world->ResourceName<Clock>(), "clock");
  // No entity holds a resource: nothing is alive, nothing is indexed.
  EXPECT_TRUE(world->Entities().empty());
  EXPECT_EQ(world->entities().size(), 0u);
  EXPECT_EQ(world->index().num_entities(), 0u);
}

TEST(WorldResourceDeathTest, AStructNoResourceDeclaresAborts) {
  std::unique_ptr<World> world = NewWorld();
  EXPECT_DEATH(world->Resource<Health>(), "Resource<T>.*not stored that way");
  struct Unknown {
    int x;
  };
  EXPECT_DEATH(world->ReadResource<Unknown>(), "ReadResource<T>: no component type");
}

TEST(WorldResource, PropertiesByName) {
  std::unique_ptr<World> world = NewWorld();
  STRATA_ASSERT_OK_AND_ASSIGN(PropertyValue lives, world->GetResourceProperty("game_rules", "lives"));
  EXPECT_EQ(std::get<int32_t>(lives), 3);
  STRATA_ASSERT_OK(world->SetResourceProperty("game_rules", "gravity", PropertyValue(2.5f)));
  EXPECT_EQ(world->ReadResource<GameRules>().gravity, 2.5f);
  STRATA_ASSERT_OK(world->SetResourceProperty("clock", "seconds", PropertyValue(1.25)));
  EXPECT_EQ(world->ReadResource<Clock>().seconds, 1.25);
  world->Resource<Clock>().frame = 7;
  STRATA_ASSERT_OK_AND_ASSIGN(PropertyValue frame, world->GetResourceProperty("clock", "frame"));
  EXPECT_EQ(std::get<uint32_t>(frame), 7u);

  EXPECT_THAT(world->GetResourceProperty("rules", "lives"),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("no world resource \"rules\"")));
  EXPECT_THAT(world->GetResourceProperty("health", "hp"),  // a component, not a resource
              StatusIs(absl::StatusCode::kNotFound));
  EXPECT_THAT(world->SetResourceProperty("game_rules", "live", PropertyValue(int32_t{1})),
              StatusIs(absl::StatusCode::kNotFound,
                       HasSubstr("(it has: gravity, lives, champion, hardcore)")));
  EXPECT_THAT(world->SetResourceProperty("game_rules", "lives", PropertyValue(1.0f)),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("is int32, not float")));
  EXPECT_THAT(world->SetResourceProperty("clock", "frame", PropertyValue(uint32_t{1})),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("read-only")));
  EXPECT_EQ(world->ReadResource<GameRules>().lives, 3);  // the failed sets changed nothing
}

TEST(WorldResource, SaveAllWritesThemAndALoadGivesTheSameBytes) {
  std::unique_ptr<World> world = NewWorld();
  PageComponentManager<Health>& health = world->Pages<Health>();
  std::vector<Entity> knights(3);
  world->entities().CreateBatch(absl::MakeSpan(knights));
  for (size_t i = 0; i < knights.size(); ++i) {
    STRATA_ASSERT_OK(world->pages().Add(knights[i], health.component(), Health{10.0f * (i + 1)}));
  }
  GameRules& rules = world->Resource<GameRules>();
  rules.lives = 7;
  rules.gravity = -1.5f;
  rules.champion = knights[1];
  rules.hardcore = true;
  world->Resource<Clock>().frame = 42;

  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<std::byte> saved, world->SaveAll());
  STRATA_ASSERT_OK_AND_ASSIGN(EntityResourceView view, EntityResourceView::Create(saved));
  EXPECT_EQ(view.num_entities(), knights.size() + 1);  // one more carries the resources
  EXPECT_TRUE(HasSection(saved, "game_rules"));
  EXPECT_TRUE(HasSection(saved, "clock"));

  std::unique_ptr<World> loaded = NewWorld();
  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<Entity> spawned, loaded->Spawn(view));
  ASSERT_EQ(spawned.size(), 4u);
  const GameRules& got = loaded->ReadResource<GameRules>();
  EXPECT_EQ(got.lives, 7);
  EXPECT_EQ(got.gravity, -1.5f);
  EXPECT_TRUE(got.hardcore);
  ASSERT_TRUE(loaded->entities().Alive(got.champion));
  EXPECT_EQ(loaded->pages().TryGet(got.champion, loaded->Pages<Health>().component())->hp, 20.0f);
  EXPECT_EQ(loaded->ReadResource<Clock>().frame, 42u);
  // The carrier held nothing else: not kept.
  EXPECT_FALSE(loaded->entities().Alive(spawned[3]));
  EXPECT_EQ(loaded->entities().size(), 3u);
  EXPECT_EQ(loaded->Entities().size(), 3u);

  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<std::byte> again, loaded->SaveAll());
  EXPECT_EQ(again, saved);
}

TEST(WorldResource, SaveAllWritesOnlyTheResourcesThatDifferFromTheirDefaults) {
  std::unique_ptr<World> world = NewWorld();
  // All at their defaults: nothing to carry (a fresh world has them).
  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<std::byte> empty, world->SaveAll());
  STRATA_ASSERT_OK_AND_ASSIGN(EntityResourceView empty_view, EntityResourceView::Create(empty));
  EXPECT_EQ(empty_view.num_entities(), 0u);
  EXPECT_FALSE(HasSection(empty, "clock"));
  // A value set back to its default counts as a default.
  world->Resource<GameRules>().lives = 8;
  world->Resource<GameRules>().lives = 3;
  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<std::byte> still_empty, world->SaveAll());
  EXPECT_EQ(still_empty, empty);

  world->Resource<GameRules>().hardcore = true;
  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<std::byte> saved, world->SaveAll());
  STRATA_ASSERT_OK_AND_ASSIGN(EntityResourceView view, EntityResourceView::Create(saved));
  EXPECT_EQ(view.num_entities(), 1u);
  EXPECT_TRUE(HasSection(saved, "game_rules"));
  EXPECT_FALSE(HasSection(saved, "clock"));
  std::unique_ptr<World> loaded = NewWorld();
  STRATA_ASSERT_OK(loaded->Spawn(view).status());
  EXPECT_TRUE(loaded->ReadResource<GameRules>().hardcore);
  EXPECT_EQ(loaded->entities().size(), 0u);
  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<std::byte> again, loaded->SaveAll());
  EXPECT_EQ(again, saved);
}

TEST(WorldResource, SaveOfChosenEntitiesWritesNoResources) {
  std::unique_ptr<World> world = NewWorld();
  const Entity e = world->entities().Create();
  STRATA_ASSERT_OK(world->pages().Add(e, world->Pages<Health>().component(), Health{5}));
  world->Resource<GameRules>().lives = 1;
  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<std::byte> saved, world->Save(std::vector<Entity>{e}));
  EXPECT_FALSE(HasSection(saved, "game_rules"));
  STRATA_ASSERT_OK_AND_ASSIGN(EntityResourceView view, EntityResourceView::Create(saved));
  EXPECT_EQ(view.num_entities(), 1u);
  std::unique_ptr<World> loaded = NewWorld();
  STRATA_ASSERT_OK(loaded->Spawn(view).status());
  EXPECT_EQ(loaded->ReadResource<GameRules>().lives, 3);
}

TEST(WorldResource, ALevelSetsThemOnASettingsEntity) {
  STRATA_ASSERT_OK_AND_ASSIGN(
      std::vector<std::byte> blob,
      Compile(R"({"entities": [{"name": "hero", "components": [{"type": "health", "hp": 50}]},
                               {"name": "settings", "components": [
                                 {"type": "game_rules", "lives": 9, "champion": "hero"},
                                 {"type": "clock", "dt": 0.5}]},
                               {"name": "boss", "components": [{"type": "health"}]}]})"));
  STRATA_ASSERT_OK_AND_ASSIGN(EntityResourceView view, EntityResourceView::Create(blob));
  std::unique_ptr<World> world = NewWorld();
  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<Entity> spawned, world->Spawn(view));
  ASSERT_EQ(spawned.size(), 3u);
  EXPECT_EQ(world->ReadResource<GameRules>().lives, 9);
  EXPECT_EQ(world->ReadResource<GameRules>().champion, spawned[0]);
  EXPECT_EQ(world->ReadResource<GameRules>().gravity, 9.81f);  // a default
  EXPECT_EQ(world->ReadResource<Clock>().dt, 0.5f);
  EXPECT_TRUE(world->entities().Alive(spawned[0]));
  EXPECT_FALSE(world->entities().Alive(spawned[1]));  // only carried resources
  EXPECT_EQ(world->EntityName(spawned[1]), "");
  EXPECT_TRUE(world->entities().Alive(spawned[2]));
  EXPECT_EQ(world->EntityName(spawned[2]), "boss");
}

TEST(WorldResource, AnEntityThatAlsoHasComponentsIsKept) {
  STRATA_ASSERT_OK_AND_ASSIGN(
      std::vector<std::byte> blob,
      Compile(R"({"entities": [{"name": "hero", "components": [
                                 {"type": "health", "hp": 50}, {"type": "game_rules", "lives": 2}]},
                               {"name": "boss", "components": [{"type": "health"}]}]})"));
  STRATA_ASSERT_OK_AND_ASSIGN(EntityResourceView view, EntityResourceView::Create(blob));
  std::unique_ptr<World> world = NewWorld();
  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<Entity> spawned, world->Spawn(view));
  EXPECT_EQ(world->ReadResource<GameRules>().lives, 2);
  ASSERT_TRUE(world->entities().Alive(spawned[0]));
  // Its health, as the boss's; the resource is the world's, not the hero's.
  EXPECT_EQ(world->ComponentCount(spawned[0]), world->ComponentCount(spawned[1]));
}

TEST(WorldResource, TwoInstancesInOneResourceFailTheSpawnAndChangeNothing) {
  STRATA_ASSERT_OK_AND_ASSIGN(
      std::vector<std::byte> blob,
      Compile(R"({"entities": [{"components": [{"type": "health"}]},
                               {"components": [{"type": "game_rules", "lives": 1}]},
                               {"components": [{"type": "game_rules", "lives": 2}]}]})"));
  STRATA_ASSERT_OK_AND_ASSIGN(EntityResourceView view, EntityResourceView::Create(blob));
  std::unique_ptr<World> world = NewWorld();
  world->Resource<GameRules>().lives = 4;
  EXPECT_THAT(world->Spawn(view),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("world resource \"game_rules\": the resource gives 2 instances")));
  EXPECT_EQ(world->ReadResource<GameRules>().lives, 4);
  EXPECT_EQ(world->entities().size(), 0u);
}

TEST(WorldResource, AFailedSpawnRestoresTheValuesItAlreadyTook) {
  // Types spawn in order (ties by name): clock takes dt = 0.5, then game_rules fails.
  STRATA_ASSERT_OK_AND_ASSIGN(
      std::vector<std::byte> blob,
      Compile(R"({"entities": [{"components": [{"type": "clock", "dt": 0.5}, {"type": "game_rules"}]},
                               {"components": [{"type": "game_rules"}]}]})"));
  STRATA_ASSERT_OK_AND_ASSIGN(EntityResourceView view, EntityResourceView::Create(blob));
  std::unique_ptr<World> world = NewWorld();
  EXPECT_THAT(world->Spawn(view), StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("game_rules")));
  EXPECT_EQ(world->ReadResource<Clock>().dt, 1.0f / 60);
  EXPECT_EQ(world->entities().size(), 0u);
  // The next spawn's carriers are its own.
  STRATA_ASSERT_OK_AND_ASSIGN(
      std::vector<std::byte> good,
      Compile(R"({"entities": [{"components": [{"type": "health"}]}, {"components": [{"type": "clock", "dt": 0.25}]}]})"));
  STRATA_ASSERT_OK_AND_ASSIGN(EntityResourceView good_view, EntityResourceView::Create(good));
  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<Entity> spawned, world->Spawn(good_view));
  EXPECT_EQ(world->ReadResource<Clock>().dt, 0.25f);
  EXPECT_EQ(world->entities().size(), 1u);
  EXPECT_TRUE(world->entities().Alive(spawned[0]));
}

TEST(WorldResource, ALevelNamesAResourceAfterItsType) {
  EXPECT_THAT(Compile(R"({"entities": [{"components": [{"type": "game_rules", "name": "rules"}]}]})"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("always named \"game_rules\"")));
  EXPECT_THAT(Compile(R"({"entities": [{"components": [{"type": "game_rules"}, {"type": "game_rules"}]}]})"),
              StatusIs(absl::StatusCode::kInvalidArgument));
}

// ---- Systems declare the resources they touch. ----

TEST(WorldResource, SystemsThatShareAResourceAreOrderedAndReported) {
  std::unique_ptr<World> world = NewWorld();
  std::unique_ptr<Schedule> frame = MakeSchedule(*world);
  std::vector<std::string> ran;
  frame->Add(System("tick", [&](SystemContext&) {
               Clock& clock = world->Resource<Clock>();
               ++clock.frame;
               clock.seconds += clock.dt;
               ran.push_back("tick");
             }).Writes(WorldResource<Clock>(*world)));
  frame->Add(System("rules", [&](SystemContext&) {
               world->Resource<GameRules>().lives = 2;
               ran.push_back("rules");
             }).Writes(WorldResource<GameRules>(*world)));
  frame->Add(System("show", [&](SystemContext&) -> absl::Status {
               STRATA_ASSIGN_OR_RETURN(PropertyValue lives, world->GetResourceProperty("game_rules", "lives"));
               EXPECT_EQ(std::get<int32_t>(lives), 2);
               EXPECT_EQ(world->ReadResource<Clock>().frame, 1u);
               ran.push_back("show");
               return absl::OkStatus();
             })
                 .Reads(WorldResource<Clock>(*world), WorldResource<GameRules>(*world))
                 .After("tick")
                 .After("rules"));
  STRATA_ASSERT_OK(frame->Build());
  const std::string described = frame->Describe();
  EXPECT_THAT(described, HasSubstr("tick -> show: read/write on clock (resource)"));
  EXPECT_THAT(described, HasSubstr("rules -> show: read/write on game_rules (resource)"));
  EXPECT_THAT(described, ::testing::Not(HasSubstr("tick -> rules")));
  EXPECT_TRUE(frame->ambiguities().empty());
  STRATA_ASSERT_OK(frame->Run());
  EXPECT_EQ(ran, (std::vector<std::string>{"tick", "rules", "show"}));
}

TEST(WorldResource, AnUnorderedWriterAndReaderAreAmbiguous) {
  std::unique_ptr<World> world = NewWorld();
  std::unique_ptr<Schedule> frame = MakeSchedule(*world, {.strict_order = true});
  frame->Add(System("a", [](SystemContext&) {}).Writes(WorldResource<GameRules>(*world)));
  frame->Add(System("b", [](SystemContext&) {}).Reads(WorldResource<GameRules>(*world)));
  EXPECT_THAT(frame->Build(), StatusIs(absl::StatusCode::kInvalidArgument,
                                       HasSubstr("\"a\" / \"b\" (game_rules (resource))")));
}

TEST(WorldResourceDeathTest, ASystemThatTouchesAResourceItDidNotDeclareAborts) {
  std::unique_ptr<World> world = NewWorld();
  auto run = [&world](System system) {
    std::unique_ptr<Schedule> frame = MakeSchedule(*world);
    frame->Add(std::move(system));
    (void)frame->Run();
  };
  EXPECT_DEATH(run(System("peek", [&](SystemContext&) { world->Resource<Clock>().frame++; })
                       .Reads(WorldResource<Clock>(*world))),
               "World::Resource<T>: system \"peek\" writes world resource \"clock\" but did not "
               "declare it written");
  EXPECT_DEATH(run(System("blind", [&](SystemContext&) { (void)world->ReadResource<GameRules>(); })),
               "system \"blind\" reads world resource \"game_rules\" but did not declare it");
  EXPECT_DEATH(run(System("setter", [&](SystemContext&) {
                     (void)world->SetResourceProperty("game_rules", "lives", PropertyValue(int32_t{1}));
                   }).Reads(WorldResource<GameRules>(*world))),
               "World::SetResourceProperty: system \"setter\" writes world resource \"game_rules\"");
  // Declared: fine; outside any system: unchecked.
  run(System("ok", [&](SystemContext&) { world->Resource<Clock>().frame++; })
          .Writes(WorldResource<Clock>(*world)));
  EXPECT_EQ(world->ReadResource<Clock>().frame, 1u);
}

}  // namespace
}  // namespace strata
