// End to end: compile the default level, spawn it into a World, run frames of the
// demo's systems, check counts and property values against the level JSON (the
// oracle), destroy everything and check that every byte allocated since the start was
// freed (//testing:global_allocation_counter).
#include <algorithm>
#include <cmath>
#include <fstream>
#include <iterator>
#include <string>
#include <variant>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "base/id_string.h"
#include "engine/sample_components.h"
#include "engine/systems.h"
#include "engine/world.h"
#include "gtest/gtest.h"
#include "index/property_system.h"
#include "iteration/filter.h"
#include "nlohmann/json.hpp"
#include "resource/entity_compiler.h"
#include "resource/format.h"
#include "testing/counting_allocator.h"
#include "testing/status_matchers.h"

namespace strata {
namespace {

using ::strata::testing::GlobalAllocationCounter;
using ::strata::testing::IsOk;

constexpr char kLevelPath[] = "engine/levels/default.json";

std::string ReadLevel() {
  std::ifstream in(kLevelPath, std::ios::binary);
  EXPECT_TRUE(in.good()) << "cannot open " << kLevelPath;
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// What the level JSON says: entities and component instances per type (the oracle).
struct LevelCounts {
  size_t entities = 0;
  absl::flat_hash_map<std::string, size_t> by_type;
  size_t with_fog = 0;
};

void CountEntities(const nlohmann::json& entities, LevelCounts* counts) {
  for (const nlohmann::json& e : entities) {
    ++counts->entities;
    if (e.contains("components")) {
      for (const nlohmann::json& c : e["components"]) {
        ++counts->by_type[c["type"].get<std::string>()];
        if (c.value("name", "") == "Fog") ++counts->with_fog;
      }
    }
    if (e.contains("children")) CountEntities(e["children"], counts);
  }
}

size_t Count(DemoWorld& world, Filter filter) { return CountMatches(world.pages(), filter); }

// The body of the test, in its own function so every local is gone before the final
// allocation check.
void RunLevel(const std::string& json, const LevelCounts& expected, bool deferred) {
  EntityCompiler compiler;
  ASSERT_THAT(SampleRegistry().RegisterCompilers(compiler), IsOk());
  absl::StatusOr<EntityCompiler::Result> compiled = compiler.Compile(json, {});
  ASSERT_THAT(compiled.status(), IsOk());
  STRATA_ASSERT_OK_AND_ASSIGN(EntityResourceView view, EntityResourceView::Create(compiled->blob));
  ASSERT_EQ(view.num_entities(), expected.entities);

  World::Options options;
  options.deferred_transforms = deferred;
  auto demo_world = DemoWorld::Create(options);
  ASSERT_TRUE(demo_world.ok());
  DemoWorld& world = **demo_world;
  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<Entity> level, world.Spawn(view));
  world.UpdateTransforms();

  // Counts after spawning, per subsystem, against the JSON.
  EXPECT_EQ(world.entities().size(), expected.entities);
  EXPECT_EQ(world.num_transforms(), expected.by_type.at("transform"));
  EXPECT_EQ(world.render_data().size(), expected.by_type.at("render_data"));
  Filter sprites, sparks, emitters;
  sprites.Include(world.sprites().component());
  sparks.Include(world.sparks().component());
  emitters.Include(world.emitters().component());
  EXPECT_EQ(Count(world, sprites), expected.by_type.at("sprite"));
  EXPECT_EQ(Count(world, sparks), expected.by_type.at("spark"));
  EXPECT_EQ(Count(world, emitters), expected.by_type.at("spark_emitter"));
  ASSERT_EQ(expected.with_fog, 1u);

  // The environment (entity 0): Fog and Vignette by name.
  const Entity env = level[0];
  STRATA_ASSERT_OK_AND_ASSIGN(float fog, world.GetFloatProperty(env, "Fog", "density"));
  EXPECT_FLOAT_EQ(fog, 0.02f);
  STRATA_ASSERT_OK_AND_ASSIGN(float vignette, world.GetFloatProperty(env, "Vignette", "density"));
  EXPECT_FLOAT_EQ(vignette, 0.3f);

  // A building's first floor is a child: its world translation is the building's world
  // translation plus the floor's local offset rotated by the building (y is unrotated
  // by a yaw, and the floor's local offset is (0, 0, 0) for floor 0).
  const Entity building = level[1];
  const Entity floor0 = level[2];
  absl::StatusOr<PropertyValue> bw = world.properties().Get(building, "Transform", "world");
  absl::StatusOr<PropertyValue> fw = world.properties().Get(floor0, "Transform", "world");
  ASSERT_THAT(bw.status(), IsOk());
  ASSERT_THAT(fw.status(), IsOk());
  for (int i = 12; i < 15; ++i) {
    EXPECT_NEAR(std::get<Matrix4x4>(*fw).m[i], std::get<Matrix4x4>(*bw).m[i], 1e-4f) << i;
  }

  // Frames. The sprite sync reads only the sprites whose transform moved (the World's
  // transform mirror); after each frame every sprite still sits on its transform.
  ASSERT_THAT(world.world().TrackTransformChanges(), IsOk());
  uint32_t synced_at = EntityPages::kNeverRan;
  auto expect_sprites_on_their_transforms = [&] {
    Filter still;
    still.Include(world.sprites().component()).Exclude(world.sparks().component());
    size_t off = 0;
    ForEachMatch(
        world.pages(), still,
        [&](Entity e, const Sprite& s) {
          const TransformHandle t = world.transforms().Lookup(e);
          if (!t.is_valid()) return;
          const Vector3 p = world.transforms().World(t).translation();
          off += (s.position.x != p.x || s.position.y != p.y || s.position.z != p.z);
        },
        world.sprites().component());
    EXPECT_EQ(off, 0u);
  };
  TransformAnimator animator(world, level);
  EXPECT_GT(animator.num_roots(), 100u);
  std::vector<Entity> created;
  ParallelCommands commands(world.pages());
  std::vector<SpriteVertex> vertices;
  size_t emitted = 0, destroyed = 0;
  constexpr int kFrames = 25;
  constexpr uint32_t kSparks = 300;
  constexpr float kDt = 1.0f / 30.0f;
  for (int frame = 0; frame < kFrames; ++frame) {
    ASSERT_THAT(EmitSparks(world, kSparks, frame, &created), IsOk());
    emitted += created.size();
    MoveSparks(world, kDt, /*parallel=*/false);
    const size_t dying = FadeSparks(world, kDt, /*parallel=*/false, &commands);
    STRATA_ASSERT_OK_AND_ASSIGN(const CommandBuffer::Result played, PlayCommands(world, &commands));
    ASSERT_EQ(played.applied, dying);
    destroyed += played.applied;
    ASSERT_THAT(animator.Step(world, frame * kDt), IsOk());
    const size_t synced = SyncChangedSprites(world, synced_at);
    synced_at = world.pages().tick();
    world.pages().AdvanceTick();
    if (frame == 0) {
      EXPECT_EQ(synced, expected.by_type.at("sprite") - expected.by_type.at("spark"));
    } else {
      EXPECT_LE(synced, expected.by_type.at("sprite") - expected.by_type.at("spark"));
      EXPECT_GT(synced, 0u);  // the animated roots' sprites
    }
    expect_sprites_on_their_transforms();
    RenderSprites(world, &vertices);
    ASSERT_THAT(world.SetFloatProperty(env, "Fog", "density", 0.01f * frame), IsOk());
  }
  EXPECT_EQ(emitted, size_t{kFrames} * kSparks);
  // Every entity is accounted for: the level, plus sparks emitted, minus those burnt out.
  EXPECT_EQ(world.entities().size(), expected.entities + emitted - destroyed);
  EXPECT_GT(destroyed, 0u);  // lifetimes are ~1 s, the run 1.3 s
  // Sparks alive in the page store equal sparks alive in the index.
  const size_t sparks_alive = Count(world, sparks);
  EXPECT_EQ(sparks_alive, expected.by_type.at("spark") + emitted - destroyed);
  size_t visible = 0;  // the naive draw list: every sprite checked one by one
  ForEachMatch(
      world.pages(), sprites,
      [&visible](const Sprite& s) { visible += (s.color.w >= 1.0f / 255.0f && s.size > 0.0f); },
      world.sprites().component());
  EXPECT_EQ(vertices.size(), visible);
  EXPECT_GT(visible, expected.by_type.at("sprite"));
  STRATA_ASSERT_OK_AND_ASSIGN(fog, world.GetFloatProperty(env, "Fog", "density"));
  EXPECT_FLOAT_EQ(fog, 0.01f * (kFrames - 1));
  // Each live spark is reachable by name, with a lifetime in (0, max_lifetime].
  size_t checked = 0;
  ForEachMatch(
      world.pages(), sparks,
      [&](Entity e, Spark& spark) {
        if (checked++ % 97 != 0) return;
        absl::StatusOr<float> lifetime = world.GetFloatProperty(e, "spark", "lifetime");
        ASSERT_TRUE(lifetime.ok()) << lifetime.status();
        EXPECT_EQ(*lifetime, spark.lifetime);
        EXPECT_GT(spark.lifetime, 0.0f);
        EXPECT_LE(spark.lifetime, spark.max_lifetime);
      },
      world.sparks().component());

  // Destroy everything through the manager; every subsystem must be empty.
  std::vector<Entity> live;
  for (Entity e : level) {
    if (world.entities().Alive(e)) live.push_back(e);
  }
  ForEachMatch(
      world.pages(), sparks,
      [&](Entity e, Spark&) {
        if (e.index() >= level.size() || level[e.index()] != e) live.push_back(e);
      },
      world.sparks().component());
  std::sort(live.begin(), live.end());
  live.erase(std::unique(live.begin(), live.end()), live.end());
  ASSERT_EQ(live.size(), world.entities().size());
  ASSERT_THAT(world.DestroyBatch(live), IsOk());
  world.pages().ReleaseEmptyPages();
  world.index().CollectGarbage();
  EXPECT_EQ(world.entities().size(), 0u);
  EXPECT_EQ(world.num_transforms(), 0u);
  EXPECT_EQ(world.render_data().size(), 0u);
  EXPECT_EQ(world.index().num_entities(), 0u);
  EXPECT_EQ(world.index().num_prototypes(), 0u);
  EXPECT_EQ(world.pages().allocated_data_pages(), 0u);
  EXPECT_EQ(world.pages().allocated_entity_pages(), 0u);
  for (Entity e : live) ASSERT_EQ(world.ComponentCount(e), 0u) << e;
}

class EndToEndTest : public ::testing::TestWithParam<bool> {};

TEST_P(EndToEndTest, DefaultLevelFramesAndTeardownFreeEverything) {
  const std::string json = ReadLevel();
  LevelCounts expected;
  CountEntities(nlohmann::json::parse(json)["entities"], &expected);
  ASSERT_GT(expected.entities, 3000u);
  ASSERT_TRUE(strata::testing::GlobalAllocationCountingEnabled());
  const int64_t before = GlobalAllocationCounter().live_bytes();
  RunLevel(json, expected, /*deferred=*/GetParam());
  EXPECT_EQ(GlobalAllocationCounter().live_bytes(), before)
      << "bytes still allocated after the world and everything in it were destroyed";
}

INSTANTIATE_TEST_SUITE_P(TransformModes, EndToEndTest, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& info) {
                           return info.param ? "Deferred" : "Immediate";
                         });

// The parallel systems produce the same world as the serial ones.
TEST(EndToEnd, ParallelSystemsMatchSerial) {
  const std::string json = ReadLevel();
  EntityCompiler compiler;
  ASSERT_THAT(SampleRegistry().RegisterCompilers(compiler), IsOk());
  absl::StatusOr<EntityCompiler::Result> compiled = compiler.Compile(json, {});
  ASSERT_THAT(compiled.status(), IsOk());
  STRATA_ASSERT_OK_AND_ASSIGN(EntityResourceView view, EntityResourceView::Create(compiled->blob));
  auto serial_world = DemoWorld::Create();
  auto parallel_world = DemoWorld::Create();
  ASSERT_TRUE(serial_world.ok() && parallel_world.ok());
  DemoWorld& serial = **serial_world;
  DemoWorld& parallel = **parallel_world;
  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<Entity> a, serial.Spawn(view));
  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<Entity> b, parallel.Spawn(view));
  std::vector<Entity> created;
  ParallelCommands commands_a(serial.pages()), commands_b(parallel.pages());
  std::vector<SpriteVertex> va, vb;
  for (int frame = 0; frame < 20; ++frame) {
    ASSERT_THAT(EmitSparks(serial, 1000, frame, &created), IsOk());
    ASSERT_THAT(EmitSparks(parallel, 1000, frame, &created), IsOk());
    MoveSparks(serial, 0.05f, false);
    MoveSparks(parallel, 0.05f, true);
    ASSERT_EQ(FadeSparks(serial, 0.05f, false, &commands_a),
              FadeSparks(parallel, 0.05f, true, &commands_b))
        << "frame " << frame;
    STRATA_ASSERT_OK_AND_ASSIGN(const CommandBuffer::Result played_a, PlayCommands(serial, &commands_a));
    STRATA_ASSERT_OK_AND_ASSIGN(const CommandBuffer::Result played_b,
                                PlayCommands(parallel, &commands_b));
    ASSERT_EQ(played_a, played_b) << "frame " << frame;
  }
  // The same world, byte for byte: the commands recorded from several threads played
  // back as the serial walk's.
  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<std::byte> saved_a, serial.world().SaveAll());
  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<std::byte> saved_b, parallel.world().SaveAll());
  EXPECT_TRUE(saved_a == saved_b);
  RenderSprites(serial, &va);
  RenderSprites(parallel, &vb);
  ASSERT_EQ(va.size(), vb.size());
  for (size_t i = 0; i < va.size(); ++i) {
    for (int k = 0; k < 3; ++k) ASSERT_EQ(va[i].position[k], vb[i].position[k]) << i;
    ASSERT_EQ(va[i].color[3], vb[i].color[3]) << i;
  }
}

}  // namespace
}  // namespace strata
