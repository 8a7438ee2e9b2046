// Prefabs through a game's declarations: an override of each field type takes that
// field alone, the override bits name it, the World spawns the flat copies, export
// writes the instance as its prefab and overrides (and compiles back to the same
// bytes), and a World refuses a blob whose prefab section is corrupt.
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/id_string.h"
#include "component/declare.h"
#include "component/export.h"
#include "component/registry.h"
#include "engine/world.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "resource/entity_compiler.h"
#include "resource/format.h"
#include "resource/prefab.h"
#include "testing/status_matchers.h"

namespace strata {
namespace {

using ::strata::testing::IsOk;
using ::strata::testing::StatusIs;

struct Mixed {
  float speed = 2.5f;
  int32_t level = -3;
  uint32_t count = 7;
  bool active = true;
  Vector3 offset{1, 2, 3};
  Vector4 tint{0.5f, 0.5f, 0.5f, 1};
  Quaternion turn;
  IdString32 tag;
  Entity target;
};

struct Hp {
  float hp = 100;
  float max = 100;
};

const ComponentRegistry& Registry() {
  static const ComponentRegistry* registry = [] {
    auto* r = new ComponentRegistry();
    EXPECT_THAT(r->Add(ComponentDeclaration<Hp>("hp").Field("hp", &Hp::hp).Field("max", &Hp::max).Build()),
                IsOk());
    EXPECT_THAT(r->Add(ComponentDeclaration<Mixed>("mixed")
                           .Field("speed", &Mixed::speed)
                           .Field("level", &Mixed::level)
                           .Field("count", &Mixed::count)
                           .Field("active", &Mixed::active)
                           .Field("offset", &Mixed::offset)
                           .Color("tint", &Mixed::tint)
                           .Field("turn", &Mixed::turn)
                           .Field("tag", &Mixed::tag)
                           .Field("target", &Mixed::target)
                           .Build()),
                IsOk());
    return r;
  }();
  return *registry;
}

struct FieldCase {
  const char* field;
  const char* override_value;  // JSON
  // Whether `m` holds the override (true) or the prefab's value (false) for this field.
  std::function<bool(const Mixed& m, Entity other)> overridden;
};

const std::vector<FieldCase>& Cases() {
  static const auto* cases = new std::vector<FieldCase>{
      {"speed", "9", [](const Mixed& m, Entity) { return m.speed == 9; }},
      {"level", "-40", [](const Mixed& m, Entity) { return m.level == -40; }},
      {"count", "4000000000", [](const Mixed& m, Entity) { return m.count == 4000000000u; }},
      {"active", "true", [](const Mixed& m, Entity) { return m.active; }},
      {"offset", "[7, 8, 9]", [](const Mixed& m, Entity) { return m.offset.x == 7 && m.offset.z == 9; }},
      {"tint", "[0, 0, 1, 1]", [](const Mixed& m, Entity) { return m.tint.z == 1 && m.tint.x == 0; }},
      {"turn", "[0, 1, 0, 0]", [](const Mixed& m, Entity) { return m.turn.y == 1; }},
      {"tag", "\"blue\"", [](const Mixed& m, Entity) { return m.tag == IdString32("blue"); }},
      {"target", "\"other\"", [](const Mixed& m, Entity other) { return m.target == other; }},
  };
  return *cases;
}

// The prefab sets every field away from the declaration's default; instance i
// overrides field i only; "other" is a plain entity.
std::string Level() {
  std::string text = R"({"prefabs": {"p": {"components": [{"type": "mixed", "speed": 1, "level": 5,
      "count": 11, "active": false, "offset": [4, 5, 6], "tint": [1, 0, 0, 1], "turn": [0, 0, 1, 0],
      "tag": "red", "target": "p"}]}}, "entities": [{"name": "other"})";
  for (const FieldCase& c : Cases()) {
    absl::StrAppend(&text, R"(, {"name": ")", c.field, R"(", "prefab": "p", "components": [{"type": "mixed", ")",
                    c.field, R"(": )", c.override_value, "}]}");
  }
  absl::StrAppend(&text, R"(, {"name": "plain", "prefab": "p"}]})");
  return text;
}

TEST(Prefab, AnOverrideOfEachFieldTypeTakesThatFieldAlone) {
  EntityCompiler compiler;
  ASSERT_THAT(Registry().RegisterCompilers(compiler), IsOk());
  STRATA_ASSERT_OK_AND_ASSIGN(EntityCompiler::Result level, compiler.Compile(Level(), {}));
  STRATA_ASSERT_OK_AND_ASSIGN(EntityResourceView view, EntityResourceView::Create(level.blob));
  STRATA_ASSERT_OK_AND_ASSIGN(std::unique_ptr<World> world, World::Create(Registry()));
  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<Entity> spawned, world->Spawn(view));
  const auto mixed = world->Pages<Mixed>().component();
  const Entity other = spawned[0];
  const size_t n = Cases().size();
  ASSERT_EQ(spawned.size(), n + 2);
  for (size_t i = 0; i < n; ++i) {
    const Mixed* m = world->pages().TryGet(spawned[1 + i], mixed);
    ASSERT_NE(m, nullptr);
    for (size_t j = 0; j < n; ++j) {
      EXPECT_EQ(Cases()[j].overridden(*m, other), i == j)
          << "instance overriding " << Cases()[i].field << ", field " << Cases()[j].field;
    }
    // The prefab's reference to its own root is the instance itself, unless overridden.
    if (std::string(Cases()[i].field) != "target") {
      EXPECT_EQ(m->target, spawned[1 + i]);
    }
  }
  const Mixed* plain = world->pages().TryGet(spawned[n + 1], mixed);
  ASSERT_NE(plain, nullptr);
  EXPECT_EQ(plain->speed, 1);
  EXPECT_EQ(plain->tag, IdString32("red"));
  EXPECT_EQ(plain->target, spawned[n + 1]);

  STRATA_ASSERT_OK_AND_ASSIGN(PrefabTable table, ReadPrefabTable(view));
  ASSERT_EQ(table.overrides.size(), n);
  for (size_t i = 0; i < n; ++i) {
    EXPECT_EQ(table.overrides[i].mask, std::vector<uint32_t>{1u << i}) << Cases()[i].field;
  }

  // Export writes each instance as its prefab and its one overridden field.
  STRATA_ASSERT_OK_AND_ASSIGN(nlohmann::json exported, ExportLevel(view, Registry()));
  const nlohmann::json& first = exported["entities"][1];
  EXPECT_EQ(first["prefab"], "p");
  EXPECT_EQ(first["components"][0].size(), 2u) << first.dump();  // "type" and "speed"
  EXPECT_TRUE(exported["entities"][n + 1].find("components") == exported["entities"][n + 1].end());
  STRATA_ASSERT_OK_AND_ASSIGN(EntityCompiler::Result again, compiler.Compile(exported.dump(2), {}));
  EXPECT_EQ(again.blob, level.blob);
}

TEST(Prefab, TheTransformOverridesWhole) {
  EntityCompiler compiler;
  ASSERT_THAT(Registry().RegisterCompilers(compiler), IsOk());
  STRATA_ASSERT_OK_AND_ASSIGN(
      EntityCompiler::Result level,
      compiler.Compile(R"({"prefabs": {"lamp": {"components": [{"type": "transform", "position": [0, 4, 0],
                               "scale": [2, 2, 2]}]}},
          "entities": [{"prefab": "lamp", "components": [{"type": "transform", "position": [5, 4, 0]}]},
                       {"prefab": "lamp"}]})",
                       {}));
  STRATA_ASSERT_OK_AND_ASSIGN(EntityResourceView view, EntityResourceView::Create(level.blob));
  STRATA_ASSERT_OK_AND_ASSIGN(std::unique_ptr<World> world, World::Create(Registry()));
  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<Entity> spawned, world->Spawn(view));
  const TransformComponent& transforms = world->transforms();
  const Matrix4x4 moved = transforms.Local(transforms.Lookup(spawned[0]));
  const Matrix4x4 kept = transforms.Local(transforms.Lookup(spawned[1]));
  EXPECT_EQ(moved.m[12], 5);
  EXPECT_EQ(moved.m[0], 2);  // the prefab's scale stays
  EXPECT_EQ(kept.m[12], 0);
  EXPECT_EQ(kept.m[13], 4);
  STRATA_ASSERT_OK_AND_ASSIGN(nlohmann::json exported, ExportLevel(view, Registry()));
  STRATA_ASSERT_OK_AND_ASSIGN(EntityCompiler::Result again, compiler.Compile(exported.dump(), {}));
  EXPECT_EQ(again.blob, level.blob);
}

TEST(Prefab, AWorldRefusesACorruptPrefabSection) {
  EntityCompiler compiler;
  ASSERT_THAT(Registry().RegisterCompilers(compiler), IsOk());
  STRATA_ASSERT_OK_AND_ASSIGN(EntityCompiler::Result level, compiler.Compile(Level(), {}));
  std::vector<std::byte> blob = level.blob;
  STRATA_ASSERT_OK_AND_ASSIGN(EntityResourceView view, EntityResourceView::Create(blob));
  size_t at = 0;
  for (const ComponentTypeView& t : view.component_types()) {
    if (t.type == IdString32(kPrefabsSection)) at = static_cast<size_t>(t.data.data() - blob.data());
  }
  ASSERT_NE(at, 0u);
  const uint32_t huge = 0x10000;  // num_entity_records past the section
  std::memcpy(blob.data() + at + 8, &huge, 4);
  const uint32_t checksum = ResourceChecksum(blob);
  std::memcpy(blob.data() + entity_resource_layout::kChecksumOffset, &checksum, 4);
  STRATA_ASSERT_OK_AND_ASSIGN(EntityResourceView bad, EntityResourceView::Create(blob));
  STRATA_ASSERT_OK_AND_ASSIGN(std::unique_ptr<World> world, World::Create(Registry()));
  EXPECT_THAT(world->Spawn(bad), StatusIs(absl::StatusCode::kDataLoss));
  EXPECT_EQ(world->entities().size(), 0u);
}

constexpr absl::string_view kInstantiable = R"({"prefabs": {
    "orc": {"components": [{"type": "hp", "hp": 30, "max": 40}]},
    "boss": {"prefab": "orc", "components": [{"type": "hp", "max": 400}, {"type": "mixed", "target": "boss"}],
             "children": [{"name": "guard", "components": [{"type": "mixed", "target": "boss"}]}]}},
  "entities": []})";

TEST(Prefab, InstantiatedFromCodeAndCommandBuffers) {
  EntityCompiler compiler;
  ASSERT_THAT(Registry().RegisterCompilers(compiler), IsOk());
  STRATA_ASSERT_OK_AND_ASSIGN(EntityCompiler::Result level, compiler.Compile(kInstantiable, {}));
  STRATA_ASSERT_OK_AND_ASSIGN(EntityResourceView view, EntityResourceView::Create(level.blob));
  STRATA_ASSERT_OK_AND_ASSIGN(std::unique_ptr<World> world, World::Create(Registry()));
  EXPECT_THAT(world->FindPrefab("orc"), StatusIs(absl::StatusCode::kNotFound));
  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<Entity> none, world->Spawn(view));  // learns the prefabs
  EXPECT_TRUE(none.empty());
  STRATA_ASSERT_OK_AND_ASSIGN(PrefabId orc, world->FindPrefab("orc"));
  STRATA_ASSERT_OK_AND_ASSIGN(PrefabId boss, world->FindPrefab("boss"));
  const auto hp = world->Pages<Hp>().component();
  const auto mixed = world->Pages<Mixed>().component();
  size_t added = 0;
  auto observed = world->OnAdd<Hp>([&](absl::Span<const Entity> entities, CommandBuffer&) {
    added += entities.size();
  });

  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<Entity> orcs, world->Instantiate(orc, 1000));
  ASSERT_EQ(orcs.size(), 1000u);
  EXPECT_EQ(added, 1000u);
  for (Entity e : orcs) {
    const Hp* h = world->pages().TryGet(e, hp);
    ASSERT_NE(h, nullptr);
    ASSERT_EQ(h->hp, 30);
    ASSERT_EQ(h->max, 40);
  }
  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<Entity> zero, world->Instantiate(orc, 0));
  EXPECT_TRUE(zero.empty());
  // Destroyed and made again: the handles of the dead are stale, the new ones live.
  ASSERT_THAT(world->DestroyBatch(orcs), IsOk());
  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<Entity> again, world->Instantiate(orc, 2));
  EXPECT_FALSE(world->entities().Alive(orcs[0]));
  EXPECT_EQ(world->pages().TryGet(again[1], hp)->max, 40);

  // From a command buffer: pending until playback.
  CommandBuffer commands(world->pages());
  STRATA_ASSERT_OK_AND_ASSIGN(Entity pending, world->Instantiate(commands, orc));
  (void)pending;
  STRATA_ASSERT_OK_AND_ASSIGN(CommandBuffer::Result played, world->Playback(commands));
  EXPECT_EQ(played.applied, 1u);
  EXPECT_EQ(added, 1000u + 2 + 1);
  EXPECT_THAT(world->Instantiate(commands, boss), StatusIs(absl::StatusCode::kFailedPrecondition));
  EXPECT_THAT(world->Instantiate(PrefabId{99}), StatusIs(absl::StatusCode::kInvalidArgument));

  // A prefab with children and references: each instance's references are its own.
  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<Entity> bosses, world->Instantiate(boss, 3));
  ASSERT_EQ(bosses.size(), 3u);
  for (Entity b : bosses) {
    EXPECT_EQ(world->pages().TryGet(b, hp)->max, 400);
    EXPECT_EQ(world->pages().TryGet(b, hp)->hp, 30);
    EXPECT_EQ(world->pages().TryGet(b, mixed)->target, b);
    EXPECT_EQ(world->EntityName(b), "boss");  // as the prefab names its root
  }
  EXPECT_EQ(world->Entities().size(), 2u + 1 + 3 * 2);
}

}  // namespace
}  // namespace strata
