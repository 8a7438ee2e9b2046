#include "resource/entity_spawner.h"

#include <cstring>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "base/id_string.h"
#include "base/status_macros.h"
#include "entity/entity.h"
#include "entity/entity_manager.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "resource/entity_compiler.h"
#include "resource/format.h"
#include "testing/random.h"
#include "testing/status_matchers.h"

namespace strata {
namespace {

using ::strata::testing::IsOk;
using ::strata::testing::Random;
using ::strata::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

// A minimal component manager: entity -> (instance name, value), cleaned up through the
// entity manager's destroy listener, as a real component package would be.
struct ValueStore {
  struct Instance {
    IdString32 name;
    float value;
  };
  absl::flat_hash_map<Entity, std::vector<Instance>> instances;
  size_t size() const {
    size_t n = 0;
    for (const auto& [e, list] : instances) n += list.size();
    return n;
  }
};

struct TestWorld {
  EntityManager manager;
  ValueStore health;
  ValueStore speed;
  std::vector<std::string> calls;  // one entry per spawn function call
  int fail_on_type = -1;           // index in calls that should fail

  EntityManager::Subscription listening;

  TestWorld() {
    listening = manager.AddDestroyListener([this](absl::Span<const Entity> dead) {
      for (Entity e : dead) {
        health.instances.erase(e);
        speed.instances.erase(e);
      }
    });
  }
};

absl::Status CompileValue(const nlohmann::json& config, ComponentDataWriter& out) {
  STRATA_RETURN_IF_ERROR(CheckComponentKeys(config, {"value"}));
  float value = 0;
  STRATA_RETURN_IF_ERROR(ReadFloat(config, "value", &value));
  out.WriteF32(value);
  return absl::OkStatus();
}

// A spawn function that fills `store_of(world)` with every instance of the batch.
SpawnFunction ValueSpawner(const char* label, ValueStore TestWorld::*store) {
  return [label, store](const ComponentSpawnBatch& batch) -> absl::Status {
    auto* world = static_cast<TestWorld*>(batch.context);
    world->calls.push_back(label);
    if (world->fail_on_type == static_cast<int>(world->calls.size()) - 1) {
      return absl::DataLossError("refusing this batch");
    }
    if (batch.instance_stride != sizeof(float)) {
      return absl::DataLossError("unexpected instance stride");
    }
    for (uint32_t i = 0; i < batch.num_instances; ++i) {
      float value;
      std::memcpy(&value, batch.data.data() + i * sizeof(float), sizeof(value));
      (world->*store).instances[batch.entity(i)].push_back({batch.name(i), value});
    }
    return absl::OkStatus();
  };
}

std::vector<std::byte> CompileLevel(const char* json) {
  EntityCompiler compiler;
  EXPECT_THAT(compiler.RegisterComponentCompiler("health", CompileValue, 10, 4), IsOk());
  EXPECT_THAT(compiler.RegisterComponentCompiler("speed", CompileValue, 20, 4), IsOk());
  EXPECT_THAT(compiler.RegisterComponentCompiler("sound", CompileValue, 30, 4), IsOk());
  absl::StatusOr<EntityCompiler::Result> result = compiler.Compile(json, {});
  EXPECT_THAT(result, IsOk());
  return result.ok() ? result->blob : std::vector<std::byte>();
}

constexpr char kLevel[] = R"({"entities": [
  {"name": "player", "components": [{"type": "health", "value": 100},
                                    {"type": "speed", "value": 5},
                                    {"type": "speed", "name": "Sprint", "value": 9}],
   "children": [{"components": [{"type": "health", "name": "Shield", "value": 50}]}]},
  {"name": "radio", "components": [{"type": "sound", "value": 1}]}
]})";

void RegisterSpawners(EntitySpawner& spawner) {
  ASSERT_THAT(spawner.RegisterComponentSpawner("speed", ValueSpawner("speed", &TestWorld::speed)), IsOk());
  ASSERT_THAT(spawner.RegisterComponentSpawner("health", ValueSpawner("health", &TestWorld::health)), IsOk());
}

TEST(EntitySpawner, SpawnsBatchThenOneCallPerTypeInSpawnOrder) {
  const std::vector<std::byte> blob = CompileLevel(kLevel);
  STRATA_ASSERT_OK_AND_ASSIGN(EntityResourceView view, EntityResourceView::Create(blob));
  EntitySpawner spawner;
  RegisterSpawners(spawner);
  TestWorld world;
  SpawnStats stats;
  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<Entity> entities,
                              spawner.Spawn(view, world.manager, &world, {}, &stats));
  ASSERT_EQ(entities.size(), 3u);
  for (Entity e : entities) EXPECT_TRUE(world.manager.Alive(e));
  // One batch: consecutive fresh slots.
  EXPECT_EQ(entities[1].index(), entities[0].index() + 1);
  EXPECT_EQ(entities[2].index(), entities[0].index() + 2);
  // Registration order was speed, health; the blob's spawn order is health, speed.
  EXPECT_THAT(world.calls, ElementsAre("health", "speed"));
  ASSERT_EQ(world.health.instances[entities[0]].size(), 1u);
  EXPECT_EQ(world.health.instances[entities[0]][0].value, 100);
  EXPECT_EQ(world.health.instances[entities[0]][0].name, IdString32("health"));
  ASSERT_EQ(world.health.instances[entities[1]].size(), 1u);
  EXPECT_EQ(world.health.instances[entities[1]][0].name, IdString32("Shield"));
  ASSERT_EQ(world.speed.instances[entities[0]].size(), 2u);
  EXPECT_EQ(world.speed.instances[entities[0]][1].name, IdString32("Sprint"));
  EXPECT_EQ(world.speed.instances[entities[0]][1].value, 9);
  EXPECT_EQ(world.speed.size(), 2u);
  // "sound" has no spawn function: skipped whole by default.
  EXPECT_EQ(stats.types_spawned, 2u);
  EXPECT_EQ(stats.instances_spawned, 4u);
  EXPECT_THAT(stats.skipped_types, ElementsAre(IdString32("sound")));
  EXPECT_EQ(stats.instances_skipped, 1u);
}

TEST(EntitySpawner, SpawnFunctionSeesParentsAndContext) {
  const std::vector<std::byte> blob = CompileLevel(kLevel);
  STRATA_ASSERT_OK_AND_ASSIGN(EntityResourceView view, EntityResourceView::Create(blob));
  EntitySpawner spawner;
  int context_value = 0;
  std::vector<uint32_t> parents;
  ASSERT_THAT(spawner.RegisterComponentSpawner("health", [&](const ComponentSpawnBatch& batch) {
    *static_cast<int*>(batch.context) += 1;
    parents.assign(batch.parent_index.begin(), batch.parent_index.end());
    EXPECT_EQ(batch.entities.size(), 3u);
    return absl::OkStatus();
  }), IsOk());
  EntityManager manager;
  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<Entity> entities, spawner.Spawn(view, manager, &context_value));
  EXPECT_EQ(context_value, 1);
  EXPECT_THAT(parents, ElementsAre(kNoParent, 0u, kNoParent));
}

TEST(EntitySpawner, InEntityOrder) {
  EXPECT_TRUE(InEntityOrder({}, 0));
  EXPECT_TRUE(InEntityOrder(std::vector<uint32_t>{0, 1, 2}, 3));
  EXPECT_FALSE(InEntityOrder(std::vector<uint32_t>{0, 1}, 3));     // an entity without one
  EXPECT_FALSE(InEntityOrder(std::vector<uint32_t>{0, 2, 1}, 3));  // out of order
  EXPECT_FALSE(InEntityOrder(std::vector<uint32_t>{0, 0, 1}, 3));
  // The batch flag: "health" is on entities 0 and 1 of 3, "sound" on 2 alone; a level
  // where each entity has one, in order, sets it.
  for (const auto& [json, expected] :
       std::vector<std::pair<const char*, bool>>{{kLevel, false},
                                                 {R"({"entities": [
           {"components": [{"type": "health", "value": 1}]},
           {"components": [{"type": "health", "value": 2}],
            "children": [{"components": [{"type": "health", "value": 3}]}]}]})",
                                                  true}}) {
    const std::vector<std::byte> blob = CompileLevel(json);
    STRATA_ASSERT_OK_AND_ASSIGN(EntityResourceView view, EntityResourceView::Create(blob));
    EntitySpawner spawner;
    std::optional<bool> seen;
    ASSERT_THAT(spawner.RegisterComponentSpawner("health", [&](const ComponentSpawnBatch& batch) {
      seen = batch.in_entity_order;
      return absl::OkStatus();
    }), IsOk());
    EntityManager manager;
    ASSERT_THAT(spawner.Spawn(view, manager, nullptr).status(), IsOk());
    EXPECT_EQ(seen, std::optional<bool>(expected)) << json;
  }
}

TEST(EntitySpawner, RejectUnknownTypesCreatesNothing) {
  const std::vector<std::byte> blob = CompileLevel(kLevel);
  STRATA_ASSERT_OK_AND_ASSIGN(EntityResourceView view, EntityResourceView::Create(blob));
  EntitySpawner spawner;
  RegisterSpawners(spawner);
  TestWorld world;
  EntitySpawner::Options reject;
  reject.unknown_types = EntitySpawner::UnknownTypes::kReject;
  EXPECT_THAT(spawner.Spawn(view, world.manager, &world, reject),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr(IdString32("sound").DebugString())));
  EXPECT_EQ(world.manager.size(), 0u);
  EXPECT_TRUE(world.calls.empty());
  // Once "sound" is known, reject mode spawns.
  ASSERT_THAT(spawner.RegisterComponentSpawner("sound", [](const ComponentSpawnBatch&) {
    return absl::OkStatus();
  }), IsOk());
  EXPECT_THAT(spawner.Spawn(view, world.manager, &world, reject), IsOk());
  EXPECT_EQ(world.manager.size(), 3u);
}

TEST(EntitySpawner, FailingSpawnFunctionRollsBackEverything) {
  const std::vector<std::byte> blob = CompileLevel(kLevel);
  STRATA_ASSERT_OK_AND_ASSIGN(EntityResourceView view, EntityResourceView::Create(blob));
  EntitySpawner spawner;
  RegisterSpawners(spawner);
  TestWorld world;
  world.fail_on_type = 1;  // health succeeds, speed fails
  std::vector<Entity> entities(3);
  EXPECT_THAT(spawner.Spawn(view, world.manager, absl::MakeSpan(entities), &world, {}),
              StatusIs(absl::StatusCode::kDataLoss,
                       HasSubstr(IdString32("speed").DebugString() + ": refusing this batch")));
  EXPECT_THAT(world.calls, ElementsAre("health", "speed"));
  EXPECT_EQ(world.manager.size(), 0u);
  for (Entity e : entities) EXPECT_FALSE(world.manager.Alive(e));
  // The destroy listener removed what the health spawner had created.
  EXPECT_EQ(world.health.size(), 0u);
}

TEST(EntitySpawner, RollsBackWhenASpawnFunctionDestroyedSomeEntities) {
  const std::vector<std::byte> blob = CompileLevel(kLevel);
  STRATA_ASSERT_OK_AND_ASSIGN(EntityResourceView view, EntityResourceView::Create(blob));
  EntitySpawner spawner;
  EntityManager manager;
  ASSERT_THAT(spawner.RegisterComponentSpawner("health", [&](const ComponentSpawnBatch& batch) {
    EXPECT_THAT(manager.Destroy(batch.entities[0]), IsOk());
    return absl::InternalError("gave up");
  }), IsOk());
  EXPECT_THAT(spawner.Spawn(view, manager, nullptr), StatusIs(absl::StatusCode::kInternal));
  EXPECT_EQ(manager.size(), 0u);
}

TEST(EntitySpawner, WrongEntitySpanSizeIsAnError) {
  const std::vector<std::byte> blob = CompileLevel(kLevel);
  STRATA_ASSERT_OK_AND_ASSIGN(EntityResourceView view, EntityResourceView::Create(blob));
  EntitySpawner spawner;
  EntityManager manager;
  std::vector<Entity> too_few(2);
  EXPECT_THAT(spawner.Spawn(view, manager, absl::MakeSpan(too_few), nullptr, {}),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_EQ(manager.size(), 0u);
}

TEST(EntitySpawner, EmptyResourceSpawnsNothing) {
  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<std::byte> blob, WriteEntityResource({}));
  STRATA_ASSERT_OK_AND_ASSIGN(EntityResourceView view, EntityResourceView::Create(blob));
  EntitySpawner spawner;
  EntityManager manager;
  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<Entity> entities, spawner.Spawn(view, manager, nullptr));
  EXPECT_TRUE(entities.empty());
  EXPECT_EQ(manager.size(), 0u);
}

TEST(EntitySpawner, RegistrationErrors) {
  EntitySpawner spawner;
  RegisterSpawners(spawner);
  EXPECT_TRUE(spawner.HasSpawner(IdString32("speed")));
  EXPECT_FALSE(spawner.HasSpawner(IdString32("sound")));
  EXPECT_THAT(spawner.RegisterComponentSpawner("speed", ValueSpawner("x", &TestWorld::speed)),
              StatusIs(absl::StatusCode::kAlreadyExists));
  EXPECT_THAT(spawner.RegisterComponentSpawner("", ValueSpawner("x", &TestWorld::speed)),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(spawner.RegisterComponentSpawner("x", nullptr), StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST(EntitySpawner, LevelRestartManyTimes) {
  const std::vector<std::byte> blob = CompileLevel(kLevel);
  STRATA_ASSERT_OK_AND_ASSIGN(EntityResourceView view, EntityResourceView::Create(blob));
  EntitySpawner spawner;
  RegisterSpawners(spawner);
  TestWorld world;
  std::vector<Entity> previous;
  for (int restart = 0; restart < 2000; ++restart) {
    STRATA_ASSERT_OK_AND_ASSIGN(std::vector<Entity> entities, spawner.Spawn(view, world.manager, &world));
    ASSERT_EQ(world.manager.size(), 3u);
    ASSERT_EQ(world.health.size(), 2u);
    ASSERT_EQ(world.speed.size(), 2u);
    for (Entity old : previous) ASSERT_FALSE(world.manager.Alive(old));
    ASSERT_THAT(world.manager.DestroyBatch(entities), IsOk());
    ASSERT_EQ(world.health.size(), 0u);
    previous = entities;
  }
  // Past min_free_indices destroyed entities, slots are reused with new generations.
  EXPECT_LT(world.manager.slots_used(), 2000u * 3u);
}

// Random resources against a naive model: every instance lands on
// entities[entity_index[i]] with its own name and data, one call per known type.
TEST(EntitySpawner, RandomResourcesMatchNaiveModel) {
  Random rng(testing::TestSeed());
  SCOPED_TRACE(rng.DescribeSeed());
  EntitySpawner spawner;
  struct Seen {
    IdString32 type;
    Entity owner;
    IdString32 name;
    uint32_t value;
  };
  std::vector<Seen> seen;
  int calls = 0;
  for (int t = 0; t < 4; ++t) {
    ASSERT_THAT(spawner.RegisterComponentSpawner("known" + std::to_string(t),
                                                 [&](const ComponentSpawnBatch& batch) {
      ++calls;
      for (uint32_t i = 0; i < batch.num_instances; ++i) {
        uint32_t value;
        std::memcpy(&value, batch.data.data() + 4 * i, 4);
        seen.push_back({batch.type, batch.entity(i), batch.name(i), value});
      }
      return absl::OkStatus();
    }), IsOk());
  }
  EntityManager manager;
  for (int iteration = 0; iteration < 100; ++iteration) {
    EntityResourceContents contents;
    const uint32_t n = static_cast<uint32_t>(rng.UniformInt(1, 200));
    for (uint32_t i = 0; i < n; ++i) {
      contents.parent_index.push_back(i > 0 && rng.Bernoulli(0.5) ? static_cast<uint32_t>(rng.UniformIndex(i)) : kNoParent);
    }
    std::vector<Seen> expected_indices;  // owner holds the resource index for now
    int known_types = 0;
    for (int t = 0; t < 6; ++t) {
      if (rng.Bernoulli(0.3)) continue;
      const bool known = t < 4;
      ComponentTypeContents& type = contents.component_types.emplace_back();
      type.type = IdString32((known ? "known" : "unknown") + std::to_string(t));
      type.instance_stride = 4;
      known_types += known;
      const size_t count = rng.UniformIndex(3 * n);
      for (size_t i = 0; i < count; ++i) {
        const uint32_t owner = static_cast<uint32_t>(rng.UniformIndex(n));
        const uint32_t value = rng.Next32();
        type.entity_index.push_back(owner);
        type.names.push_back(rng.Next32());
        for (int b = 0; b < 4; ++b) type.data.push_back(std::byte((value >> (8 * b)) & 0xFF));
        if (known) {
          expected_indices.push_back({type.type, Entity(owner, 0), IdString32::FromValue(type.names.back()),
                                      value});
        }
      }
    }
    STRATA_ASSERT_OK_AND_ASSIGN(std::vector<std::byte> blob, WriteEntityResource(contents));
    STRATA_ASSERT_OK_AND_ASSIGN(EntityResourceView view, EntityResourceView::Create(blob));
    seen.clear();
    calls = 0;
    STRATA_ASSERT_OK_AND_ASSIGN(std::vector<Entity> entities, spawner.Spawn(view, manager, nullptr));
    EXPECT_EQ(calls, known_types);
    ASSERT_EQ(seen.size(), expected_indices.size());
    for (size_t i = 0; i < seen.size(); ++i) {
      EXPECT_EQ(seen[i].type, expected_indices[i].type);
      EXPECT_EQ(seen[i].owner, entities[expected_indices[i].owner.index()]);
      EXPECT_EQ(seen[i].name, expected_indices[i].name);
      EXPECT_EQ(seen[i].value, expected_indices[i].value);
    }
    ASSERT_THAT(manager.DestroyBatch(entities), IsOk());
  }
}

}  // namespace
}  // namespace strata
