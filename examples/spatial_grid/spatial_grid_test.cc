// The grid_position type end to end, as a game uses a custom-store type: compile a level
// with the registry's compilers, spawn it into a World, query the grid, move entities by
// property name, destroy them, save and load the save, and feed it bad levels and blobs.
#include "examples/spatial_grid/spatial_grid.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <ostream>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "component/declare.h"
#include "component/export.h"
#include "component/registry.h"
#include "engine/world.h"
#include "entity/entity_manager.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "index/property_system.h"
#include "nlohmann/json.hpp"
#include "resource/entity_compiler.h"
#include "resource/format.h"
#include "testing/status_matchers.h"

namespace spatial_grid {

// Readable failure messages (found by ADL, so in the types' namespace).
void PrintTo(const GridPosition& p, std::ostream* os) { *os << "(" << p.x << ", " << p.y << ")"; }
void PrintTo(const GridCell& c, std::ostream* os) { *os << "cell(" << c.x << ", " << c.y << ")"; }

namespace {

using ::strata::ComponentRegistry;
using ::strata::Entity;
using ::strata::EntityCompiler;
using ::strata::EntityResourceView;
using ::strata::IdString32;
using ::strata::Instance;
using ::strata::PropertyValue;
using ::strata::World;
using ::strata::testing::IsOk;
using ::strata::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::UnorderedElementsAre;
using json = ::nlohmann::json;

absl::StatusOr<std::vector<std::byte>> Compile(const ComponentRegistry& registry,
                                               absl::string_view level) {
  EntityCompiler compiler;
  absl::Status registered = registry.RegisterCompilers(compiler);
  if (!registered.ok()) return registered;
  absl::StatusOr<EntityCompiler::Result> result = compiler.Compile(level, {});
  if (!result.ok()) return result.status();
  return std::move(result->blob);
}

// Level: one entity per (name, component JSON) pair; a null component means none.
std::string Level(const std::vector<std::pair<std::string, json>>& entities) {
  json level = {{"entities", json::array()}};
  for (const auto& [name, component] : entities) {
    json entity = {{"name", name}, {"components", json::array()}};
    if (!component.is_null()) entity["components"].push_back(component);
    level["entities"].push_back(entity);
  }
  return level.dump();
}

json At(double x, double y) { return json{{"type", "grid_position"}, {"x", x}, {"y", y}}; }

std::map<std::string, Entity> ByName(const World& world, const std::vector<Entity>& spawned) {
  std::map<std::string, Entity> by_name;
  for (Entity e : spawned) by_name[std::string(world.EntityName(e))] = e;
  return by_name;
}

bool Contains(absl::Span<const Entity> entities, Entity e) {
  return std::find(entities.begin(), entities.end(), e) != entities.end();
}

class SpatialGridTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_THAT(registry_.Add(SpatialGridComponentType()), IsOk()); }

  // Spawn: compiles `level` and spawns it into world_ (created on first use).
  void Spawn(const std::string& level) {
    if (world_ == nullptr) {
      STRATA_ASSERT_OK_AND_ASSIGN(world_, World::Create(registry_));
    }
    STRATA_ASSERT_OK_AND_ASSIGN(blob_, Compile(registry_, level));
    STRATA_ASSERT_OK_AND_ASSIGN(EntityResourceView view, EntityResourceView::Create(blob_));
    STRATA_ASSERT_OK_AND_ASSIGN(spawned_, world_->Spawn(view));
    e_ = ByName(*world_, spawned_);
    grid_ = GridOf(*world_);
    ASSERT_NE(grid_, nullptr);
  }

  ComponentRegistry registry_;
  std::unique_ptr<World> world_;
  std::vector<std::byte> blob_;
  std::vector<Entity> spawned_;
  std::map<std::string, Entity> e_;
  SpatialGrid* grid_ = nullptr;
};

TEST_F(SpatialGridTest, TheTypeIsDeclaredThroughTheCustomDoor) {
  const strata::ComponentType* type = registry_.Find("grid_position");
  ASSERT_NE(type, nullptr);
  EXPECT_EQ(type->storage(), strata::ComponentStorage::kCustom);
  EXPECT_EQ(type->instance_size(), 8u);
  EXPECT_EQ(type->max_per_entity(), 1u);
  EXPECT_EQ(type->layout(), "x:f32:4;y:f32:4");
  EXPECT_NE(type->fingerprint(), 0u);
  // Spawns after the transform: the registry lists types in spawn order.
  const auto& types = registry_.types();
  ASSERT_EQ(types.size(), 2u);
  EXPECT_EQ(types[0]->name(), "transform");
  EXPECT_EQ(types[1]->name(), "grid_position");
  EXPECT_GT(types[1]->spawn_order(), types[0]->spawn_order());
}

TEST_F(SpatialGridTest, SpawnsPositionsIntoTheirCells) {
  Spawn(Level({{"origin", json{{"type", "grid_position"}}},
               {"a", At(1.5, -2)},
               {"b", At(-0.5, 0)},
               {"c", At(4, 4)},
               {"d", At(-4, -4)},
               {"e", At(-4.25, 7.99)},
               {"f", At(3.99, 0.01)},
               {"plain", json{{"type", "transform"}}}}));

  // The raw door: the store by name, its typed() cast after checking type_tag().
  strata::ComponentStore* store = world_->Store("grid_position");
  ASSERT_NE(store, nullptr);
  ASSERT_EQ(store->type_tag(), strata::TypeTag<SpatialGrid>());
  EXPECT_EQ(static_cast<SpatialGrid*>(store->typed()), grid_);
  EXPECT_EQ(&store->manager(), grid_);

  const std::map<std::string, GridPosition> expected_position = {
      {"origin", {0, 0}}, {"a", {1.5f, -2}}, {"b", {-0.5f, 0}},      {"c", {4, 4}},
      {"d", {-4, -4}},    {"e", {-4.25f, 7.99f}}, {"f", {3.99f, 0.01f}}};
  const std::map<std::string, GridCell> expected_cell = {
      {"origin", {0, 0}}, {"a", {0, -1}}, {"b", {-1, 0}}, {"c", {1, 1}},
      {"d", {-1, -1}},    {"e", {-2, 1}}, {"f", {0, 0}}};
  for (const auto& [name, position] : expected_position) {
    SCOPED_TRACE(name);
    const Entity e = e_.at(name);
    ASSERT_TRUE(grid_->PositionOf(e).has_value());
    EXPECT_EQ(grid_->PositionOf(e)->x, position.x);
    EXPECT_EQ(grid_->PositionOf(e)->y, position.y);
    const GridCell cell = expected_cell.at(name);
    EXPECT_EQ(SpatialGrid::CellOf(position.x, position.y), cell);
    EXPECT_TRUE(Contains(grid_->EntitiesInCell(cell.x, cell.y), e));
    // Registered in the index under the type's name, so the property system finds it.
    EXPECT_EQ(world_->index().FindComponentManager(e, IdString32("grid_position")), grid_);
    STRATA_ASSERT_OK_AND_ASSIGN(PropertyValue x, world_->properties().Get(e, "grid_position", "x"));
    EXPECT_EQ(std::get<float>(x), position.x);
    STRATA_ASSERT_OK_AND_ASSIGN(PropertyValue y, world_->properties().Get(e, "grid_position", "y"));
    EXPECT_EQ(std::get<float>(y), position.y);
  }
  EXPECT_THAT(grid_->EntitiesInCell(0, 0), UnorderedElementsAre(e_["origin"], e_["f"]));
  EXPECT_THAT(grid_->EntitiesInCell(5, 5), IsEmpty());
  EXPECT_FALSE(grid_->PositionOf(e_["plain"]).has_value());
  EXPECT_EQ(grid_->CountOf(e_["plain"]), 0u);
  EXPECT_EQ(grid_->size(), 7u);
  EXPECT_EQ(grid_->num_cells(), 6u);
  EXPECT_EQ(store->size(), 7u);
  EXPECT_EQ(store->CountOf(e_["a"]), 1u);
  std::vector<Entity> collected;
  store->CollectEntities(&collected);
  EXPECT_EQ(collected.size(), 7u);
  EXPECT_FALSE(Contains(collected, e_["plain"]));
  EXPECT_GT(store->MemoryUsage(), 0u);
  EXPECT_GE(world_->Memory().components, store->MemoryUsage());
}

TEST_F(SpatialGridTest, EntitiesNearOnAnEmptyGridIsEmpty) {
  Spawn(Level({{"plain", json{{"type", "transform"}}}}));
  EXPECT_EQ(grid_->size(), 0u);
  EXPECT_THAT(grid_->EntitiesNear(0, 0, 100), IsEmpty());
  EXPECT_THAT(grid_->EntitiesNear(0, 0, std::numeric_limits<float>::infinity()), IsEmpty());
  EXPECT_THAT(grid_->EntitiesInCell(0, 0), IsEmpty());
}

TEST_F(SpatialGridTest, EntitiesNearOneEntityHonoursTheRadiusExactly) {
  Spawn(Level({{"one", At(3, 4)}}));
  const Entity one = e_["one"];
  EXPECT_THAT(grid_->EntitiesNear(0, 0, 5), ElementsAre(one));  // on the circle: inside
  EXPECT_THAT(grid_->EntitiesNear(0, 0, 4.999f), IsEmpty());
  EXPECT_THAT(grid_->EntitiesNear(3, 4, 0), ElementsAre(one));   // the point itself
  EXPECT_THAT(grid_->EntitiesNear(-100, -100, 10), IsEmpty());
  EXPECT_THAT(grid_->EntitiesNear(0, 0, std::numeric_limits<float>::infinity()), ElementsAre(one));
  EXPECT_THAT(grid_->EntitiesNear(0, 0, -1), IsEmpty());
  EXPECT_THAT(grid_->EntitiesNear(0, 0, std::nanf("")), IsEmpty());
  EXPECT_THAT(grid_->EntitiesNear(std::nanf(""), 0, 10), IsEmpty());
}

TEST_F(SpatialGridTest, EntitiesNearAgreesWithBruteForceAcrossCellBorders) {
  // A lattice straddling cell borders on both sides of 0, with points exactly on
  // borders (multiples of 4) and just either side of them.
  std::vector<std::pair<std::string, json>> level;
  std::vector<std::pair<std::string, GridPosition>> where;
  const float kOffsets[] = {-12, -8.001f, -8, -4.5f, -4, -0.001f, 0, 0.5f, 3.999f, 4, 7.25f, 12};
  for (float x : kOffsets) {
    for (float y : kOffsets) {
      const std::string name = absl::StrCat("p", where.size());
      level.emplace_back(name, At(x, y));
      where.emplace_back(name, GridPosition{x, y});
    }
  }
  Spawn(Level(level));
  ASSERT_EQ(grid_->size(), where.size());

  const float kQueries[][3] = {{0, 0, 4},      {0, 0, 0.5f},  {-4, -4, 4},    {-4.5f, 3.999f, 1},
                               {2, -2, 6.5f},  {-10, 10, 3},  {12, 12, 0},    {-8, 0, 8.001f},
                               {0.3f, 0.3f, 100}, {50, 50, 10}, {-0.001f, -0.001f, 0.001f}};
  for (const auto& q : kQueries) {
    SCOPED_TRACE(absl::StrCat("near (", q[0], ", ", q[1], ") within ", q[2]));
    std::vector<Entity> expected;
    for (const auto& [name, p] : where) {
      const double dx = double{p.x} - q[0];
      const double dy = double{p.y} - q[1];
      if (dx * dx + dy * dy <= double{q[2]} * q[2]) expected.push_back(e_.at(name));
    }
    std::sort(expected.begin(), expected.end());
    EXPECT_THAT(grid_->EntitiesNear(q[0], q[1], q[2]), ElementsAreArray(expected));
  }
  // Sanity of the brute force itself: the big query finds every entity, the far one none.
  EXPECT_EQ(grid_->EntitiesNear(0.3f, 0.3f, 100).size(), where.size());
  EXPECT_THAT(grid_->EntitiesNear(50, 50, 10), IsEmpty());
}

TEST_F(SpatialGridTest, SettingXByNameMovesTheEntityToItsNewCell) {
  Spawn(Level({{"walker", At(1, 1)}, {"stay", At(2, 2)}}));
  const Entity walker = e_["walker"];
  ASSERT_THAT(grid_->EntitiesInCell(0, 0), UnorderedElementsAre(walker, e_["stay"]));

  ASSERT_THAT(world_->properties().Set(walker, "grid_position", "x", PropertyValue(9.0f)), IsOk());
  EXPECT_EQ(grid_->PositionOf(walker), (GridPosition{9, 1}));
  EXPECT_THAT(grid_->EntitiesInCell(0, 0), ElementsAre(e_["stay"]));
  EXPECT_THAT(grid_->EntitiesInCell(2, 0), ElementsAre(walker));
  EXPECT_THAT(grid_->EntitiesNear(9, 1, 0.5f), ElementsAre(walker));
  EXPECT_THAT(grid_->EntitiesNear(1, 1, 0.5f), IsEmpty());
  STRATA_ASSERT_OK_AND_ASSIGN(PropertyValue x, world_->properties().Get(walker, "grid_position", "x"));
  EXPECT_EQ(std::get<float>(x), 9.0f);

  // Within a cell: the position changes, the cell does not.
  ASSERT_THAT(world_->properties().Set(walker, "grid_position", "y", PropertyValue(3.5f)), IsOk());
  EXPECT_EQ(grid_->PositionOf(walker), (GridPosition{9, 3.5f}));
  EXPECT_THAT(grid_->EntitiesInCell(2, 0), ElementsAre(walker));
  // Into negative cells.
  ASSERT_THAT(world_->properties().Set(walker, "grid_position", "y", PropertyValue(-0.25f)), IsOk());
  EXPECT_THAT(grid_->EntitiesInCell(2, 0), IsEmpty());
  EXPECT_THAT(grid_->EntitiesInCell(2, -1), ElementsAre(walker));
  EXPECT_EQ(grid_->num_cells(), 2u);  // the emptied cell (2, 0) is gone

  // Refused values leave the position alone.
  EXPECT_THAT(world_->properties().Set(walker, "grid_position", "x",
                                       PropertyValue(std::numeric_limits<float>::infinity())),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("finite")));
  EXPECT_THAT(world_->properties().Set(walker, "grid_position", "x", PropertyValue(int32_t{3})),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(world_->properties().Set(walker, "grid_position", "z", PropertyValue(1.0f)),
              StatusIs(absl::StatusCode::kNotFound));
  EXPECT_EQ(grid_->PositionOf(walker), (GridPosition{9, -0.25f}));
}

TEST_F(SpatialGridTest, DestroyingAnEntityRemovesItFromTheGrid) {
  // Three in one cell: destroying the first moves the last into its slots, in the
  // dense array and in the cell's list.
  Spawn(Level({{"doomed", At(1, 1)}, {"stays", At(1.5f, 1.5f)}, {"last", At(2, 2)}}));
  const Entity doomed = e_["doomed"];
  const Entity stays = e_["stays"];
  const Entity last = e_["last"];
  ASSERT_THAT(world_->Destroy(doomed), IsOk());
  EXPECT_FALSE(grid_->PositionOf(doomed).has_value());
  EXPECT_THAT(grid_->EntitiesInCell(0, 0), UnorderedElementsAre(stays, last));
  EXPECT_THAT(grid_->EntitiesNear(1, 1, 10), UnorderedElementsAre(stays, last));
  EXPECT_EQ(grid_->size(), 2u);
  EXPECT_EQ(world_->ComponentCount(doomed), 0u);
  EXPECT_THAT(world_->properties().Get(doomed, "grid_position", "x"), StatusIs(absl::StatusCode::kNotFound));

  // The moved entity still leaves its cell cleanly, and by name the right one moves.
  ASSERT_THAT(world_->properties().Set(last, "grid_position", "x", PropertyValue(20.0f)), IsOk());
  EXPECT_EQ(grid_->PositionOf(last), (GridPosition{20, 2}));
  EXPECT_EQ(grid_->PositionOf(stays), (GridPosition{1.5f, 1.5f}));
  EXPECT_THAT(grid_->EntitiesInCell(0, 0), ElementsAre(stays));
  EXPECT_THAT(grid_->EntitiesInCell(5, 0), ElementsAre(last));

  // Through the entity manager directly, by anyone: the same single destruction path.
  ASSERT_THAT(world_->entities().DestroyBatch(std::vector<Entity>{stays, last}), IsOk());
  EXPECT_EQ(grid_->size(), 0u);
  EXPECT_EQ(grid_->num_cells(), 0u);
}

TEST_F(SpatialGridTest, AReusedIndexDoesNotResurrectADestroyedPosition) {
  // A manager that reuses a freed index at once (the default waits for 1024 frees).
  strata::EntityManager::Options options;
  options.min_free_indices = 0;
  strata::EntityManager entities(options);
  STRATA_ASSERT_OK_AND_ASSIGN(world_, World::Create(registry_, entities));
  Spawn(Level({{"old", At(5, 5)}}));
  const Entity old = e_["old"];
  ASSERT_THAT(world_->Destroy(old), IsOk());

  const Entity reused = entities.Create();
  ASSERT_EQ(reused.index(), old.index());  // the precondition of this test
  ASSERT_NE(reused.generation(), old.generation());
  EXPECT_FALSE(grid_->PositionOf(reused).has_value());
  EXPECT_EQ(grid_->CountOf(reused), 0u);
  EXPECT_FALSE(grid_->Lookup(reused, IdString32("grid_position")).is_valid());
  EXPECT_THAT(grid_->EntitiesInCell(1, 1), IsEmpty());
  EXPECT_THAT(grid_->EntitiesNear(5, 5, 1), IsEmpty());
  EXPECT_THAT(world_->properties().Get(reused, "grid_position", "x"),
              StatusIs(absl::StatusCode::kNotFound));

  // The new entity starts afresh, at the origin.
  STRATA_ASSERT_OK_AND_ASSIGN(Instance created, grid_->Create(reused, IdString32("grid_position")));
  EXPECT_EQ(grid_->position(created), (GridPosition{0, 0}));
  EXPECT_THAT(grid_->EntitiesInCell(0, 0), ElementsAre(reused));
  EXPECT_THAT(grid_->EntitiesInCell(1, 1), IsEmpty());
  world_.reset();  // before `entities`, which it listens to
}

TEST_F(SpatialGridTest, TheManagerCreatesAndDestroysThroughTheIndex) {
  Spawn(Level({{"placed", At(1, 1)},
               {"bare", json{{"type", "transform"}}},
               {"other", json{{"type", "transform"}}}}));
  const Entity bare = e_["bare"];
  STRATA_ASSERT_OK_AND_ASSIGN(Instance i, grid_->CreateAt(bare, IdString32("grid_position"), {-6, 2}));
  EXPECT_EQ(grid_->entity(i), bare);
  EXPECT_EQ(grid_->Lookup(bare, IdString32("grid_position")), i);
  EXPECT_FALSE(grid_->Lookup(bare, IdString32("Spot")).is_valid());
  EXPECT_THAT(grid_->EntitiesInCell(-2, 0), ElementsAre(bare));
  // Create registered it: the property system reaches it by name.
  ASSERT_THAT(world_->properties().Set(bare, "grid_position", "y", PropertyValue(-9.0f)), IsOk());
  EXPECT_EQ(grid_->PositionOf(bare), (GridPosition{-6, -9}));

  // One per entity, whatever the name.
  EXPECT_THAT(grid_->Create(bare, IdString32("grid_position")), StatusIs(absl::StatusCode::kAlreadyExists));
  EXPECT_THAT(grid_->Create(bare, IdString32("Spot")), StatusIs(absl::StatusCode::kAlreadyExists));
  // The index refuses a name the entity's transform holds, and then the grid is unchanged.
  const Entity other = e_["other"];
  EXPECT_THAT(grid_->Create(other, IdString32("transform")), StatusIs(absl::StatusCode::kAlreadyExists));
  EXPECT_EQ(grid_->CountOf(other), 0u);
  EXPECT_EQ(grid_->size(), 2u);
  const Entity fresh = world_->entities().Create();
  EXPECT_THAT(grid_->CreateAt(fresh, IdString32("grid_position"), {std::nanf(""), 0}),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(grid_->Create(Entity(), IdString32("grid_position")),
              StatusIs(absl::StatusCode::kInvalidArgument));
  ASSERT_THAT(world_->Destroy(fresh), IsOk());
  EXPECT_THAT(grid_->Create(fresh, IdString32("grid_position")), StatusIs(absl::StatusCode::kNotFound));

  // Destroy unregisters: the index no longer names the grid for it.
  EXPECT_FALSE(grid_->Destroy(bare, IdString32("Spot")));
  EXPECT_TRUE(grid_->Destroy(bare, IdString32("grid_position")));
  EXPECT_FALSE(grid_->Destroy(bare, IdString32("grid_position")));
  EXPECT_EQ(world_->index().FindComponentManager(bare, IdString32("grid_position")), nullptr);
  EXPECT_THAT(world_->properties().Get(bare, "grid_position", "x"), StatusIs(absl::StatusCode::kNotFound));
  EXPECT_THAT(grid_->EntitiesInCell(-2, -3), IsEmpty());
  // Only its own entry went: the transform is still indexed, the spawned position kept.
  EXPECT_NE(world_->index().FindComponentManager(bare, IdString32("transform")), nullptr);
  EXPECT_EQ(grid_->PositionOf(e_["placed"]), (GridPosition{1, 1}));
  EXPECT_THAT(grid_->EntitiesInCell(0, 0), ElementsAre(e_["placed"]));
}

TEST_F(SpatialGridTest, SaveLoadSaveGivesTheSameBytes) {
  Spawn(Level({{"a", At(1.5, -2)},
               {"b", At(-7.25, 100.125)},
               {"named", json{{"type", "grid_position"}, {"name", "Spot"}, {"x", 0.1}}},
               {"plain", json{{"type", "transform"}}}}));
  ASSERT_THAT(world_->properties().Set(e_["a"], "grid_position", "x", PropertyValue(-3.0f)), IsOk());
  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<std::byte> saved, world_->SaveAll());

  // The blob's instances are x, y as f32, in entity order.
  STRATA_ASSERT_OK_AND_ASSIGN(EntityResourceView view, EntityResourceView::Create(saved));
  bool found = false;
  for (const strata::ComponentTypeView& section : view.component_types()) {
    if (section.type != IdString32("grid_position")) continue;
    found = true;
    ASSERT_EQ(section.instance_stride, 8u);
    ASSERT_EQ(section.num_instances, 3u);
    float first[2];
    std::memcpy(first, section.data.data(), sizeof(first));
    EXPECT_EQ(first[0], -3.0f);
    EXPECT_EQ(first[1], -2.0f);
    EXPECT_EQ(section.name(2), IdString32("Spot"));
  }
  EXPECT_TRUE(found);

  STRATA_ASSERT_OK_AND_ASSIGN(std::unique_ptr<World> loaded, World::Create(registry_));
  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<Entity> again, loaded->Spawn(view));
  std::map<std::string, Entity> e = ByName(*loaded, again);
  SpatialGrid* grid = GridOf(*loaded);
  ASSERT_NE(grid, nullptr);
  EXPECT_EQ(grid->PositionOf(e["a"]), (GridPosition{-3, -2}));
  EXPECT_EQ(grid->PositionOf(e["b"]), (GridPosition{-7.25f, 100.125f}));
  EXPECT_EQ(grid->PositionOf(e["named"]), (GridPosition{0.1f, 0}));
  EXPECT_FALSE(grid->PositionOf(e["plain"]).has_value());
  // The instance name survived: the property system finds it under "Spot".
  STRATA_ASSERT_OK_AND_ASSIGN(PropertyValue x, loaded->properties().Get(e["named"], "Spot", "x"));
  EXPECT_EQ(std::get<float>(x), 0.1f);
  EXPECT_THAT(grid->EntitiesNear(-7, 100, 1), ElementsAre(e["b"]));

  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<std::byte> saved_again, loaded->SaveAll());
  EXPECT_EQ(saved_again, saved);

  // Export writes level JSON that compiles back to the same bytes.
  STRATA_ASSERT_OK_AND_ASSIGN(json exported, strata::ExportLevel(view, registry_));
  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<std::byte> recompiled, Compile(registry_, exported.dump()));
  EXPECT_EQ(recompiled, saved) << exported.dump(2);
}

TEST_F(SpatialGridTest, BadLevelsAreRejectedNamingTheKey) {
  struct Case {
    json component;
    std::string needle;
  };
  const std::vector<Case> cases = {
      {{{"type", "grid_position"}, {"x", 1}, {"z", 2}}, "unknown key \"z\""},
      {{{"type", "grid_position"}, {"postion", 1}}, "unknown key \"postion\""},
      {{{"type", "grid_position"}, {"x", 1e39}}, "\"x\": number out of float range"},
      {{{"type", "grid_position"}, {"y", -1e39}}, "\"y\": number out of float range"},
      {{{"type", "grid_position"}, {"y", "far"}}, "\"y\": expected a number"},
      {{{"type", "grid_position"}, {"x", nullptr}}, "\"x\": expected a number"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.component.dump());
    EXPECT_THAT(Compile(registry_, Level({{"thing", c.component}})).status(),
                StatusIs(absl::StatusCode::kInvalidArgument,
                         ::testing::AllOf(HasSubstr("grid_position"), HasSubstr(c.needle))));
  }
  // A number JSON can write but no float holds (it would be infinite once stored).
  EXPECT_THAT(Compile(registry_, R"({"entities": [{"components": [{"type": "grid_position", "x": 1e400}]}]})")
                  .status(),
              StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST_F(SpatialGridTest, ASecondPositionOnOneEntityIsRejected) {
  const std::string level = R"({"entities": [{"name": "twice", "components": [
      {"type": "grid_position", "x": 1},
      {"type": "grid_position", "name": "Other", "x": 2}]}]})";
  EXPECT_THAT(Compile(registry_, level).status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       ::testing::AllOf(HasSubstr("twice"), HasSubstr("grid_position"),
                                        HasSubstr("at most 1"))));
}

// A blob written by hand (not by the compiler, which enforces max_per_entity and
// finite values): one section of grid_position instances.
std::vector<std::byte> HandWrittenBlob(uint32_t num_entities, std::vector<uint32_t> entity_index,
                                       std::vector<float> xy) {
  absl::StatusOr<strata::ComponentType> type = SpatialGridComponentType();
  EXPECT_THAT(type, IsOk());
  if (!type.ok()) return {};
  strata::EntityResourceContents contents;
  contents.parent_index.assign(num_entities, strata::kNoParent);
  strata::ComponentTypeContents section;
  section.type = IdString32("grid_position");
  section.instance_stride = 8;
  section.layout_fingerprint = type->fingerprint();
  section.names.assign(entity_index.size(), IdString32("grid_position").value());
  section.entity_index = std::move(entity_index);
  section.data.resize(xy.size() * sizeof(float));
  std::memcpy(section.data.data(), xy.data(), section.data.size());
  contents.component_types.push_back(std::move(section));
  absl::StatusOr<std::vector<std::byte>> blob = strata::WriteEntityResource(contents);
  EXPECT_THAT(blob, IsOk());
  return blob.ok() ? *std::move(blob) : std::vector<std::byte>();
}

TEST_F(SpatialGridTest, BadBlobsSpawnNothing) {
  STRATA_ASSERT_OK_AND_ASSIGN(world_, World::Create(registry_));
  grid_ = GridOf(*world_);
  ASSERT_NE(grid_, nullptr);
  // The hand-written helper is right: a good blob spawns.
  {
    const std::vector<std::byte> good = HandWrittenBlob(2, {0, 1}, {1, 2, -3, -4});
    STRATA_ASSERT_OK_AND_ASSIGN(EntityResourceView view, EntityResourceView::Create(good));
    STRATA_ASSERT_OK_AND_ASSIGN(std::vector<Entity> spawned, world_->Spawn(view));
    EXPECT_EQ(grid_->PositionOf(spawned[1]), (GridPosition{-3, -4}));
    ASSERT_THAT(world_->DestroyBatch(spawned), IsOk());
    ASSERT_EQ(grid_->size(), 0u);
  }
  {
    const std::vector<std::byte> twice = HandWrittenBlob(2, {0, 1, 1}, {1, 2, 3, 4, 5, 6});
    STRATA_ASSERT_OK_AND_ASSIGN(EntityResourceView view, EntityResourceView::Create(twice));
    EXPECT_THAT(world_->Spawn(view), StatusIs(absl::StatusCode::kAlreadyExists,
                                              HasSubstr("one per entity")));
    EXPECT_EQ(grid_->size(), 0u);
    EXPECT_EQ(grid_->num_cells(), 0u);
    EXPECT_THAT(world_->Entities(), IsEmpty());
  }
  {
    const std::vector<std::byte> nan = HandWrittenBlob(1, {0}, {std::nanf(""), 0});
    STRATA_ASSERT_OK_AND_ASSIGN(EntityResourceView view, EntityResourceView::Create(nan));
    EXPECT_THAT(world_->Spawn(view), StatusIs(absl::StatusCode::kDataLoss, HasSubstr("non-finite")));
    EXPECT_EQ(grid_->size(), 0u);
    EXPECT_THAT(world_->Entities(), IsEmpty());
  }
}

// OldGridPosition: "grid_position" as another build of the game declared it, x only.
struct OldGridPosition {
  float x = 0;
};

TEST_F(SpatialGridTest, ABlobOfAnotherLayoutIsRefusedNamingTheType) {
  ComponentRegistry old;
  ASSERT_THAT(old.Add(strata::ComponentDeclaration<OldGridPosition>("grid_position")
                          .Field("x", &OldGridPosition::x)
                          .Build()),
              IsOk());
  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<std::byte> blob,
                              Compile(old, Level({{"thing", json{{"type", "grid_position"}, {"x", 3}}}})));
  STRATA_ASSERT_OK_AND_ASSIGN(EntityResourceView view, EntityResourceView::Create(blob));
  STRATA_ASSERT_OK_AND_ASSIGN(world_, World::Create(registry_));
  EXPECT_THAT(world_->Spawn(view),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       ::testing::AllOf(HasSubstr("\"grid_position\""), HasSubstr("x:f32:4;y:f32:4"))));
  EXPECT_EQ(GridOf(*world_)->size(), 0u);
  EXPECT_THAT(world_->Entities(), IsEmpty());
}

TEST(SpatialGridCells, CellsAreFloorDivisionAndClampedAtTheEdges) {
  EXPECT_EQ(SpatialGrid::CellOf(0, 0), (GridCell{0, 0}));
  EXPECT_EQ(SpatialGrid::CellOf(3.999f, 4), (GridCell{0, 1}));
  EXPECT_EQ(SpatialGrid::CellOf(-0.001f, -4), (GridCell{-1, -1}));
  EXPECT_EQ(SpatialGrid::CellOf(-4.001f, -8), (GridCell{-2, -2}));
  const float big = std::numeric_limits<float>::max();
  EXPECT_EQ(SpatialGrid::CellOf(big, -big),
            (GridCell{std::numeric_limits<int32_t>::max(), std::numeric_limits<int32_t>::min()}));
}

TEST(SpatialGridCells, GridOfAWorldWithoutTheTypeIsNull) {
  ComponentRegistry registry;  // the transform alone
  STRATA_ASSERT_OK_AND_ASSIGN(std::unique_ptr<World> world, World::Create(registry));
  EXPECT_EQ(GridOf(*world), nullptr);
}

}  // namespace
}  // namespace spatial_grid
