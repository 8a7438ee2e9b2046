// The health game end to end, as a game uses Strata: compile its level with its own
// registry, spawn, run its system over a page query, set fields by name, save, load the
// save into a fresh world and check every value, and export the save back to level JSON
// that recompiles to the same bytes.
#include "examples/health_game/health.h"

#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <variant>
#include <vector>

#include "absl/strings/string_view.h"
#include "base/matrix.h"
#include "component/export.h"
#include "component/registry.h"
#include "engine/world.h"
#include "gtest/gtest.h"
#include "index/property_system.h"
#include "nlohmann/json.hpp"
#include "resource/entity_compiler.h"
#include "resource/format.h"
#include "testing/status_matchers.h"

namespace health_game {
namespace {

using ::strata::ComponentEvents;
using ::strata::ComponentRegistry;
using ::strata::Entity;
using ::strata::EntityCompiler;
using ::strata::EntityResourceView;
using ::strata::Matrix4x4;
using ::strata::PropertyValue;
using ::strata::Vector3;
using ::strata::World;
using ::strata::testing::IsOk;
using ::strata::testing::StatusIs;
using ::testing::HasSubstr;

constexpr char kLevelPath[] = "examples/health_game/arena.json";
// Depth-first, parents before children: the entity numbers of arena.json.
const std::vector<std::string> kNames = {"arena", "knight", "shield", "orc", "barrel", "campfire"};

std::string ReadLevel() {
  std::ifstream in(kLevelPath, std::ios::binary);
  EXPECT_TRUE(in.good()) << "cannot open " << kLevelPath;
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

absl::StatusOr<std::vector<std::byte>> Compile(const ComponentRegistry& registry,
                                               absl::string_view json) {
  EntityCompiler compiler;
  absl::Status registered = registry.RegisterCompilers(compiler);
  if (!registered.ok()) return registered;
  absl::StatusOr<EntityCompiler::Result> result = compiler.Compile(json, {});
  if (!result.ok()) return result.status();
  return std::move(result->blob);
}

// ByName: the spawned entities by the names the world kept.
std::map<std::string, Entity> ByName(const World& world, const std::vector<Entity>& spawned) {
  std::map<std::string, Entity> by_name;
  for (Entity e : spawned) by_name[std::string(world.EntityName(e))] = e;
  return by_name;
}

const Health* HealthOf(const World& world, Entity e) {
  absl::StatusOr<strata::PageComponentManager<Health>*> health = world.Pages<Health>(kHealthTypeName);
  if (!health.ok()) return nullptr;
  return world.pages().TryGet(e, (*health)->component());
}

bool Burns(const World& world, Entity e) {
  absl::StatusOr<strata::PageComponentManager<Burning>*> burning = world.Pages<Burning>(kBurningTypeName);
  return burning.ok() && world.pages().Has(e, (*burning)->component().id);
}

// ParentName: the name of the entity whose transform is `e`'s transform parent, or "".
std::string ParentName(const World& world, Entity e) {
  const auto t = world.transforms().Lookup(e);
  if (!t.is_valid()) return "(no transform)";
  const auto parent = world.transforms().Parent(t);
  return parent.is_valid() ? std::string(world.EntityName(world.transforms().entity(parent))) : "";
}

class HealthGame : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_THAT(RegisterGameComponents(registry_), IsOk());
    STRATA_ASSERT_OK_AND_ASSIGN(blob_, Compile(registry_, ReadLevel()));
    STRATA_ASSERT_OK_AND_ASSIGN(EntityResourceView view, EntityResourceView::Create(blob_));
    STRATA_ASSERT_OK_AND_ASSIGN(world_, World::Create(registry_));
    STRATA_ASSERT_OK_AND_ASSIGN(spawned_, world_->Spawn(view));
    e_ = ByName(*world_, spawned_);
  }

  ComponentRegistry registry_;
  std::vector<std::byte> blob_;
  std::unique_ptr<World> world_;
  std::vector<Entity> spawned_;
  std::map<std::string, Entity> e_;
};

TEST_F(HealthGame, SpawnsTheLevelWithEveryValueAndReference) {
  ASSERT_EQ(spawned_.size(), kNames.size());
  for (size_t k = 0; k < kNames.size(); ++k) EXPECT_EQ(world_->EntityName(spawned_[k]), kNames[k]);

  const Health* knight = HealthOf(*world_, e_["knight"]);
  const Health* orc = HealthOf(*world_, e_["orc"]);
  const Health* shield = HealthOf(*world_, e_["shield"]);
  const Health* campfire = HealthOf(*world_, e_["campfire"]);
  ASSERT_NE(knight, nullptr);
  ASSERT_NE(orc, nullptr);
  ASSERT_NE(shield, nullptr);
  ASSERT_NE(campfire, nullptr);
  EXPECT_EQ(HealthOf(*world_, e_["arena"]), nullptr);
  EXPECT_EQ(HealthOf(*world_, e_["barrel"]), nullptr);

  EXPECT_EQ(knight->hp, 80.0f);
  EXPECT_EQ(knight->max, 100.0f);  // absent: the struct's default
  EXPECT_EQ(orc->hp, 60.0f);
  EXPECT_EQ(orc->max, 60.0f);
  // The reference cycle: each is the other's attacker, as live handles of this world
  // (one written by name, one by path).
  EXPECT_EQ(knight->attacker, e_["orc"]);
  EXPECT_EQ(orc->attacker, e_["knight"]);
  EXPECT_TRUE(world_->entities().Alive(knight->attacker));
  EXPECT_FALSE(shield->attacker.is_valid());  // absent: no attacker
  EXPECT_EQ(campfire->hp, 5.0f);

  EXPECT_TRUE(Burns(*world_, e_["knight"]));
  EXPECT_TRUE(Burns(*world_, e_["barrel"]));
  EXPECT_TRUE(Burns(*world_, e_["campfire"]));
  EXPECT_FALSE(Burns(*world_, e_["orc"]));
  EXPECT_FALSE(Burns(*world_, e_["shield"]));

  // The hierarchy: knight and orc under the arena, the shield under the knight, the
  // campfire without a transform.
  EXPECT_EQ(ParentName(*world_, e_["arena"]), "");
  EXPECT_EQ(ParentName(*world_, e_["knight"]), "arena");
  EXPECT_EQ(ParentName(*world_, e_["shield"]), "knight");
  EXPECT_EQ(ParentName(*world_, e_["orc"]), "arena");
  EXPECT_EQ(ParentName(*world_, e_["campfire"]), "(no transform)");
  STRATA_ASSERT_OK_AND_ASSIGN(PropertyValue orc_world,
                              world_->properties().Get(e_["orc"], "transform", "world"));
  EXPECT_EQ(std::get<Matrix4x4>(orc_world).translation(), (Vector3{-3, 0, 4}));
}

TEST_F(HealthGame, BurnSystemHurtsOnlyBurningEntitiesWithHealth) {
  STRATA_ASSERT_OK_AND_ASSIGN(size_t burned, BurnSystem(*world_, 10.0f));
  EXPECT_EQ(burned, 2u);  // knight, campfire (the barrel has no health, the orc no fire)
  EXPECT_EQ(HealthOf(*world_, e_["knight"])->hp, 70.0f);
  EXPECT_EQ(HealthOf(*world_, e_["campfire"])->hp, 0.0f);  // 5 - 10, floored
  EXPECT_EQ(HealthOf(*world_, e_["orc"])->hp, 60.0f);
  EXPECT_EQ(HealthOf(*world_, e_["shield"])->hp, 30.0f);

  // A world without the game's types: the system refuses rather than guessing.
  const ComponentRegistry bare;
  STRATA_ASSERT_OK_AND_ASSIGN(std::unique_ptr<World> other, World::Create(bare));
  EXPECT_THAT(BurnSystem(*other, 1.0f).status(), StatusIs(absl::StatusCode::kFailedPrecondition));
}

TEST_F(HealthGame, BurnedOutEntitiesStopBurningThroughCommandsAndAreObserved) {
  size_t extinguished = 0;
  STRATA_ASSERT_OK_AND_ASSIGN(ComponentEvents::Subscription watch,
                              ObserveExtinguished(*world_, &extinguished));
  STRATA_ASSERT_OK_AND_ASSIGN(size_t stopped, ExtinguishSystem(*world_));
  EXPECT_EQ(stopped, 0u);  // nobody is at 0 yet
  ASSERT_THAT(BurnSystem(*world_, 10.0f).status(), IsOk());  // the campfire burns out
  STRATA_ASSERT_OK_AND_ASSIGN(stopped, ExtinguishSystem(*world_));
  EXPECT_EQ(stopped, 1u);
  EXPECT_EQ(extinguished, 1u);
  const auto burning = world_->Pages<Burning>().component();
  EXPECT_FALSE(world_->pages().Has(e_["campfire"], burning.id));
  EXPECT_TRUE(world_->pages().Has(e_["knight"], burning.id));
  // Another path, the same observer: destroying a burning entity.
  ASSERT_THAT(world_->Destroy(e_["knight"]), IsOk());
  ASSERT_THAT(world_->Flush(), IsOk());
  EXPECT_EQ(extinguished, 2u);
  // Unsubscribed: no longer told.
  watch.Reset();
  ASSERT_THAT(world_->Destroy(e_["barrel"]), IsOk());
  ASSERT_THAT(world_->Flush(), IsOk());
  EXPECT_EQ(extinguished, 2u);
}

TEST_F(HealthGame, PropertiesByNameCheckTypesNotRanges) {
  const Entity orc = e_["orc"];
  ASSERT_THAT(world_->properties().Set(orc, "health", "hp", PropertyValue(50.0f)), IsOk());
  EXPECT_EQ(HealthOf(*world_, orc)->hp, 50.0f);
  STRATA_ASSERT_OK_AND_ASSIGN(PropertyValue hp, world_->properties().Get(orc, "health", "hp"));
  EXPECT_EQ(std::get<float>(hp), 50.0f);

  // Min(0) checks authored levels; at run time hp may go below it (a set by name,
  // like the burn system's write, stores it, and it saves and loads).
  ASSERT_THAT(world_->properties().Set(orc, "health", "hp", PropertyValue(-1.0f)), IsOk());
  EXPECT_EQ(HealthOf(*world_, orc)->hp, -1.0f);
  // A value of the wrong type is refused and changes nothing.
  EXPECT_THAT(world_->properties().Set(orc, "health", "hp", PropertyValue(int32_t{3})),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_EQ(HealthOf(*world_, orc)->hp, -1.0f);
  EXPECT_THAT(world_->properties().Set(orc, "health", "armor", PropertyValue(1.0f)),
              StatusIs(absl::StatusCode::kNotFound));
  // The barrel has no health.
  EXPECT_FALSE(world_->properties().Set(e_["barrel"], "health", "hp", PropertyValue(1.0f)).ok());

  // The entity reference is a property too.
  STRATA_ASSERT_OK_AND_ASSIGN(PropertyValue attacker, world_->properties().Get(orc, "health", "attacker"));
  EXPECT_EQ(std::get<Entity>(attacker), e_["knight"]);
  ASSERT_THAT(world_->properties().Set(orc, "health", "attacker", PropertyValue(e_["shield"])), IsOk());
  EXPECT_EQ(HealthOf(*world_, orc)->attacker, e_["shield"]);
}

TEST_F(HealthGame, SaveAndLoadReproducesEveryValue) {
  STRATA_ASSERT_OK_AND_ASSIGN(size_t burned, BurnSystem(*world_, 10.0f));
  ASSERT_EQ(burned, 2u);
  ASSERT_THAT(world_->properties().Set(e_["orc"], "health", "hp", PropertyValue(50.0f)), IsOk());
  ASSERT_THAT(world_->properties().Set(e_["shield"], "transform", "local_position",
                                       PropertyValue(Vector3{0.25f, 1.5f, 0})),
              IsOk());
  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<std::byte> saved, world_->SaveAll());

  STRATA_ASSERT_OK_AND_ASSIGN(EntityResourceView saved_view, EntityResourceView::Create(saved));
  STRATA_ASSERT_OK_AND_ASSIGN(std::unique_ptr<World> loaded, World::Create(registry_));
  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<Entity> respawned, loaded->Spawn(saved_view));
  ASSERT_EQ(respawned.size(), kNames.size());
  std::map<std::string, Entity> l = ByName(*loaded, respawned);
  ASSERT_EQ(l.size(), kNames.size());

  for (const std::string& name : kNames) {
    SCOPED_TRACE(name);
    ASSERT_EQ(l.count(name), 1u);
    const Health* before = HealthOf(*world_, e_[name]);
    const Health* after = HealthOf(*loaded, l[name]);
    ASSERT_EQ(before == nullptr, after == nullptr);
    if (before != nullptr) {
      EXPECT_EQ(after->hp, before->hp);
      EXPECT_EQ(after->max, before->max);
      // The attacker maps to the corresponding entity of the new world.
      const std::string attacker_name =
          before->attacker.is_valid() ? std::string(world_->EntityName(before->attacker)) : "";
      if (attacker_name.empty()) {
        EXPECT_FALSE(after->attacker.is_valid());
      } else {
        EXPECT_EQ(after->attacker, l[attacker_name]);
      }
    }
    EXPECT_EQ(Burns(*loaded, l[name]), Burns(*world_, e_[name]));
    EXPECT_EQ(ParentName(*loaded, l[name]), ParentName(*world_, e_[name]));
    const auto t_before = world_->transforms().Lookup(e_[name]);
    const auto t_after = loaded->transforms().Lookup(l[name]);
    ASSERT_EQ(t_before.is_valid(), t_after.is_valid());
    if (t_before.is_valid()) {
      EXPECT_EQ(loaded->transforms().Local(t_after), world_->transforms().Local(t_before));
      EXPECT_EQ(loaded->transforms().World(t_after), world_->transforms().World(t_before));
    }
    EXPECT_EQ(loaded->ComponentCount(l[name]), world_->ComponentCount(e_[name]));
  }
  // The values the game changed, by value (not only "same as before").
  EXPECT_EQ(HealthOf(*loaded, l["knight"])->hp, 70.0f);
  EXPECT_EQ(HealthOf(*loaded, l["orc"])->hp, 50.0f);
  EXPECT_EQ(HealthOf(*loaded, l["campfire"])->hp, 0.0f);
  EXPECT_EQ(HealthOf(*loaded, l["knight"])->attacker, l["orc"]);
  EXPECT_EQ(HealthOf(*loaded, l["orc"])->attacker, l["knight"]);
  EXPECT_EQ(loaded->transforms().Local(loaded->transforms().Lookup(l["shield"])).translation(),
            (Vector3{0.25f, 1.5f, 0}));

  // Saving the loaded world again gives the same bytes.
  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<std::byte> saved_again, loaded->SaveAll());
  EXPECT_EQ(saved_again, saved);

  // Export: the save as level JSON recompiles, with the game's registry, to the same bytes.
  STRATA_ASSERT_OK_AND_ASSIGN(nlohmann::json level, strata::ExportLevel(saved_view, registry_));
  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<std::byte> recompiled, Compile(registry_, level.dump(2)));
  EXPECT_EQ(recompiled, saved);
}

TEST_F(HealthGame, SaveDropsReferencesToDestroyedEntities) {
  // The knight's attacker dies: its handle goes stale and is saved as no attacker.
  ASSERT_THAT(world_->Destroy(e_["orc"]), IsOk());
  EXPECT_EQ(world_->ComponentCount(e_["orc"]), 0u);
  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<std::byte> saved, world_->SaveAll());
  STRATA_ASSERT_OK_AND_ASSIGN(EntityResourceView view, EntityResourceView::Create(saved));
  STRATA_ASSERT_OK_AND_ASSIGN(std::unique_ptr<World> loaded, World::Create(registry_));
  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<Entity> respawned, loaded->Spawn(view));
  EXPECT_EQ(respawned.size(), kNames.size() - 1);
  std::map<std::string, Entity> l = ByName(*loaded, respawned);
  EXPECT_EQ(l.count("orc"), 0u);
  ASSERT_NE(HealthOf(*loaded, l["knight"]), nullptr);
  EXPECT_FALSE(HealthOf(*loaded, l["knight"])->attacker.is_valid());
  EXPECT_EQ(HealthOf(*loaded, l["knight"])->hp, 80.0f);
}

TEST_F(HealthGame, SavingPartOfTheWorldChecksItsReferences) {
  // The knight refers to the orc, alive and outside the set: the save would dangle.
  EXPECT_THAT(world_->Save({e_["knight"]}).status(),
              StatusIs(absl::StatusCode::kInvalidArgument));
  // Both ends of the cycle together are fine; the shield (no attacker) alone too.
  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<std::byte> pair, world_->Save({e_["orc"], e_["knight"]}));
  STRATA_ASSERT_OK_AND_ASSIGN(EntityResourceView view, EntityResourceView::Create(pair));
  STRATA_ASSERT_OK_AND_ASSIGN(std::unique_ptr<World> loaded, World::Create(registry_));
  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<Entity> respawned, loaded->Spawn(view));
  ASSERT_EQ(respawned.size(), 2u);
  std::map<std::string, Entity> l = ByName(*loaded, respawned);
  EXPECT_EQ(HealthOf(*loaded, l["knight"])->attacker, l["orc"]);
  EXPECT_EQ(HealthOf(*loaded, l["orc"])->attacker, l["knight"]);
  // Their parent (the arena) was left out: both are roots now.
  EXPECT_EQ(ParentName(*loaded, l["knight"]), "");
  EXPECT_THAT(world_->Save({e_["shield"]}).status(), IsOk());
  // A destroyed entity, and one this world's manager never issued (another world's):
  // NotFound, nothing written.
  const Entity barrel = e_["barrel"];
  ASSERT_THAT(world_->Destroy(barrel), IsOk());
  EXPECT_THAT(world_->Save({e_["shield"], barrel}).status(), StatusIs(absl::StatusCode::kNotFound));
  Entity foreign;
  for (size_t i = 0; i <= kNames.size() + 4; ++i) foreign = loaded->entities().Create();
  EXPECT_THAT(world_->Save({foreign}).status(), StatusIs(absl::StatusCode::kNotFound));
  // A repeated entity.
  EXPECT_THAT(world_->Save({e_["shield"], e_["shield"]}).status(),
              StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST_F(HealthGame, EmptyWorldThenRespawnIntoReusedSlots) {
  ASSERT_THAT(world_->DestroyBatch(spawned_), IsOk());
  for (Entity e : spawned_) EXPECT_EQ(world_->ComponentCount(e), 0u);
  EXPECT_TRUE(world_->Entities().empty());
  STRATA_ASSERT_OK_AND_ASSIGN(size_t burned, BurnSystem(*world_, 1.0f));
  EXPECT_EQ(burned, 0u);

  // An empty world saves an empty, valid blob, which spawns nothing.
  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<std::byte> empty, world_->SaveAll());
  STRATA_ASSERT_OK_AND_ASSIGN(EntityResourceView empty_view, EntityResourceView::Create(empty));
  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<Entity> none, world_->Spawn(empty_view));
  EXPECT_TRUE(none.empty());

  // The level again: the freed slots are reused under new generations; the old handles
  // stay dead and the new references point at the new entities.
  STRATA_ASSERT_OK_AND_ASSIGN(EntityResourceView view, EntityResourceView::Create(blob_));
  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<Entity> again, world_->Spawn(view));
  ASSERT_EQ(again.size(), kNames.size());
  std::map<std::string, Entity> n = ByName(*world_, again);
  EXPECT_NE(n["knight"], e_["knight"]);
  EXPECT_FALSE(world_->entities().Alive(e_["knight"]));
  EXPECT_EQ(HealthOf(*world_, e_["knight"]), nullptr);
  EXPECT_FALSE(world_->properties().Set(e_["knight"], "health", "hp", PropertyValue(1.0f)).ok());
  EXPECT_EQ(HealthOf(*world_, n["knight"])->attacker, n["orc"]);
  EXPECT_EQ(HealthOf(*world_, n["orc"])->attacker, n["knight"]);
  EXPECT_EQ(HealthOf(*world_, n["knight"])->hp, 80.0f);
  STRATA_ASSERT_OK_AND_ASSIGN(size_t burned_again, BurnSystem(*world_, 1.0f));
  EXPECT_EQ(burned_again, 2u);
}

TEST_F(HealthGame, AReferencedEntityWithNothingElseIsSavedWithItsHolder) {
  // An entity with no component and no name is not one of the world's Entities(); a
  // reference to it takes it into SaveAll, so the reference survives the load.
  const Entity bare = world_->entities().Create();
  ASSERT_THAT(world_->properties().Set(e_["orc"], "health", "attacker", PropertyValue(bare)), IsOk());
  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<std::byte> with_bare, world_->SaveAll());
  STRATA_ASSERT_OK_AND_ASSIGN(EntityResourceView bare_view, EntityResourceView::Create(with_bare));
  EXPECT_EQ(bare_view.num_entities(), kNames.size() + 1);
  {
    STRATA_ASSERT_OK_AND_ASSIGN(std::unique_ptr<World> loaded, World::Create(registry_));
    STRATA_ASSERT_OK_AND_ASSIGN(std::vector<Entity> l, loaded->Spawn(bare_view));
    const Entity attacker = HealthOf(*loaded, ByName(*loaded, l)["orc"])->attacker;
    ASSERT_TRUE(loaded->entities().Alive(attacker));
    EXPECT_EQ(loaded->ComponentCount(attacker), 0u);
  }
  // Once it is gone the reference is saved as none, and the entity is not saved.
  ASSERT_THAT(world_->entities().Destroy(bare), IsOk());
  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<std::byte> saved, world_->SaveAll());
  STRATA_ASSERT_OK_AND_ASSIGN(EntityResourceView view, EntityResourceView::Create(saved));
  EXPECT_EQ(view.num_entities(), kNames.size());
  STRATA_ASSERT_OK_AND_ASSIGN(std::unique_ptr<World> loaded, World::Create(registry_));
  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<Entity> l, loaded->Spawn(view));
  EXPECT_FALSE(HealthOf(*loaded, ByName(*loaded, l)["orc"])->attacker.is_valid());
}

}  // namespace
}  // namespace health_game
