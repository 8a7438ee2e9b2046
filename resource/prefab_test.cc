// Prefabs in levels: flattening, chains, children and their references, overrides
// recorded per field, errors naming what is wrong, both compile paths giving the same
// bytes, and the prefab section's validation against hostile bytes.
#include "resource/prefab.h"

#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "base/status_macros.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "resource/entity_compiler.h"
#include "resource/format.h"
#include "resource/metadata.h"
#include "testing/status_matchers.h"

namespace strata {
namespace {

using ::strata::testing::IsOk;
using ::strata::testing::StatusIs;
using ::testing::HasSubstr;

// "unit": hp (f32), max (f32), target (entity reference). Layout "hp:f32:4;max:f32:4;target:entity:4".
struct Unit {
  float hp;
  float max;
  uint32_t target;
};

absl::Status CompileUnit(const nlohmann::json& config, ComponentDataWriter& out) {
  STRATA_RETURN_IF_ERROR(CheckComponentKeys(config, {"hp", "max", "target"}));
  float hp = 100, max = 100;
  STRATA_RETURN_IF_ERROR(ReadFloat(config, "hp", &hp));
  STRATA_RETURN_IF_ERROR(ReadFloat(config, "max", &max));
  out.WriteF32(hp);
  out.WriteF32(max);
  auto it = config.find("target");
  if (it == config.end() || it->is_null()) {
    out.WriteNoEntityRef();
  } else if (it->is_string()) {
    out.WriteEntityRef("target", it->get_ref<const std::string&>());
  } else {
    return absl::InvalidArgumentError("\"target\": expected a string or null");
  }
  return absl::OkStatus();
}

// "tag": variable size, the bytes of its "text".
absl::Status CompileTag(const nlohmann::json& config, ComponentDataWriter& out) {
  STRATA_RETURN_IF_ERROR(CheckComponentKeys(config, {"text"}));
  std::string text;
  STRATA_RETURN_IF_ERROR(ReadString(config, "text", &text));
  out.WriteBytes(absl::MakeConstSpan(reinterpret_cast<const std::byte*>(text.data()), text.size()));
  return absl::OkStatus();
}

class PrefabTest : public ::testing::Test {
 protected:
  void SetUp() override {
    EntityCompiler::ComponentCompileInfo unit;
    unit.type_name = "unit";
    unit.compile = CompileUnit;
    unit.instance_size = 12;
    unit.max_per_entity = 1;
    unit.layout = "hp:f32:4;max:f32:4;target:entity:4";
    ASSERT_THAT(compiler_.RegisterComponentCompiler(std::move(unit)), IsOk());
    EntityCompiler::ComponentCompileInfo tag;
    tag.type_name = "tag";
    tag.compile = CompileTag;
    tag.spawn_order = 1;
    tag.layout = "text:bytes:0";
    ASSERT_THAT(compiler_.RegisterComponentCompiler(std::move(tag)), IsOk());
  }

  // Compiles `text` serially, on 2 threads with tiny slices, and checks the bytes agree.
  absl::StatusOr<EntityCompiler::Result> Compile(absl::string_view text) {
    absl::StatusOr<EntityCompiler::Result> serial = compiler_.Compile(text, {});
    EntityCompiler::Options threaded;
    threaded.threads = 2;
    threaded.slice_bytes = 16;
    absl::StatusOr<EntityCompiler::Result> parallel = compiler_.Compile(text, threaded);
    EXPECT_EQ(serial.status(), parallel.status());
    if (serial.ok() && parallel.ok()) {
      EXPECT_EQ(serial->blob, parallel->blob);
    }
    return serial;
  }

  // units[e]: entity e's unit, or nullopt.
  static std::vector<std::optional<Unit>> Units(const EntityResourceView& view) {
    std::vector<std::optional<Unit>> units(view.num_entities());
    for (const ComponentTypeView& t : view.component_types()) {
      if (t.type != IdString32("unit")) continue;
      for (uint32_t i = 0; i < t.num_instances; ++i) {
        Unit u;
        std::memcpy(&u, t.data.data() + 12 * i, 12);
        units[t.entity_index[i]] = u;
      }
    }
    return units;
  }

  EntityCompiler compiler_;
};

constexpr absl::string_view kOrcs = R"({"prefabs": {
  "orc": {"components": [{"type": "unit", "hp": 50, "max": 60}, {"type": "tag", "text": "grunt"}]}},
  "entities": [
    {"name": "a", "prefab": "orc"},
    {"name": "b", "prefab": "orc", "components": [{"type": "unit", "hp": 10}]},
    {"name": "c", "components": [{"type": "unit", "hp": 1}]},
    {"name": "d", "prefab": "orc", "components": [{"type": "tag", "name": "extra", "text": "x"}]}]})";

TEST_F(PrefabTest, InstancesAreFlatCopiesWithOverrides) {
  STRATA_ASSERT_OK_AND_ASSIGN(EntityCompiler::Result result, Compile(kOrcs));
  STRATA_ASSERT_OK_AND_ASSIGN(EntityResourceView view, EntityResourceView::Create(result.blob));
  ASSERT_EQ(view.num_entities(), 4u);
  const auto units = Units(view);
  EXPECT_EQ(units[0]->hp, 50);
  EXPECT_EQ(units[0]->max, 60);
  EXPECT_EQ(units[1]->hp, 10);
  EXPECT_EQ(units[1]->max, 60);  // not overridden: the prefab's
  EXPECT_EQ(units[2]->hp, 1);
  EXPECT_EQ(units[2]->max, 100);  // not an instance: the declaration's default
  EXPECT_EQ(units[3]->hp, 50);
  int tags = 0;
  for (const ComponentTypeView& t : view.component_types()) {
    if (t.type == IdString32("tag")) tags = static_cast<int>(t.num_instances);
  }
  EXPECT_EQ(tags, 4);  // a, b, d from the prefab, d's extra

  STRATA_ASSERT_OK_AND_ASSIGN(PrefabTable table, ReadPrefabTable(view));
  ASSERT_EQ(table.prefabs.size(), 1u);
  EXPECT_EQ(table.prefabs[0].name, "orc");
  EXPECT_EQ(table.prefabs[0].view.num_entities(), 1u);
  EXPECT_EQ(Units(table.prefabs[0].view)[0]->hp, 50);
  ASSERT_EQ(table.entities.size(), 3u);
  EXPECT_EQ(table.entities[0].entity, 0u);
  EXPECT_EQ(table.entities[1].entity, 1u);
  EXPECT_EQ(table.entities[2].entity, 3u);
  ASSERT_EQ(table.overrides.size(), 2u);
  const PrefabOverrideRecord& b = table.overrides[0];
  EXPECT_EQ(b.entity, 1u);
  EXPECT_EQ(b.type, IdString32("unit").value());
  EXPECT_FALSE(b.added);
  EXPECT_TRUE(b.Overrides(0));   // hp
  EXPECT_FALSE(b.Overrides(1));  // max
  EXPECT_FALSE(b.Overrides(2));  // target
  const PrefabOverrideRecord& d = table.overrides[1];
  EXPECT_EQ(d.entity, 3u);
  EXPECT_TRUE(d.added);
  EXPECT_EQ(d.name, IdString32("extra").value());
}

TEST_F(PrefabTest, KeyOrderAndPlacementGiveTheSameBytes) {
  STRATA_ASSERT_OK_AND_ASSIGN(EntityCompiler::Result first, Compile(kOrcs));
  // "prefab" after "components" and "prefabs" after "entities" take the DOM path.
  std::string reordered = absl::StrReplaceAll(
      kOrcs, {{R"("prefab": "orc", "components": [{"type": "unit", "hp": 10}]})",
               R"("components": [{"type": "unit", "hp": 10}], "prefab": "orc"})"}});
  ASSERT_NE(reordered, kOrcs);
  STRATA_ASSERT_OK_AND_ASSIGN(EntityCompiler::Result second, Compile(reordered));
  EXPECT_EQ(first.blob, second.blob);
  nlohmann::json level = nlohmann::json::parse(kOrcs);
  STRATA_ASSERT_OK_AND_ASSIGN(EntityCompiler::Result third, Compile(level.dump()));  // sorted keys
  EXPECT_EQ(first.blob, third.blob);
}

TEST_F(PrefabTest, ChainsFromOneToEightDeep) {
  for (int depth = 1; depth <= 8; ++depth) {
    // p0 sets hp 0; p_k is based on p_(k-1) and sets max = k.
    nlohmann::json prefabs = nlohmann::json::object();
    prefabs["p0"] = {{"components", {{{"type", "unit"}, {"hp", 0}}}}};
    for (int k = 1; k < depth; ++k) {
      prefabs[absl::StrCat("p", k)] = {{"prefab", absl::StrCat("p", k - 1)},
                                       {"components", {{{"type", "unit"}, {"max", k}}}}};
    }
    nlohmann::json level = {{"prefabs", prefabs},
                            {"entities", {{{"prefab", absl::StrCat("p", depth - 1)}}}}};
    SCOPED_TRACE(level.dump());
    STRATA_ASSERT_OK_AND_ASSIGN(EntityCompiler::Result result, Compile(level.dump()));
    STRATA_ASSERT_OK_AND_ASSIGN(EntityResourceView view, EntityResourceView::Create(result.blob));
    const auto units = Units(view);
    EXPECT_EQ(units[0]->hp, 0);
    EXPECT_EQ(units[0]->max, depth == 1 ? 100 : depth - 1);
    STRATA_ASSERT_OK_AND_ASSIGN(PrefabTable table, ReadPrefabTable(view));
    EXPECT_EQ(table.prefabs.size(), static_cast<size_t>(depth));
    EXPECT_EQ(table.prefabs[table.entities[0].prefab].name, absl::StrCat("p", depth - 1));
  }
}

TEST_F(PrefabTest, ChildrenAndReferencesArePerInstance) {
  constexpr absl::string_view kTanks = R"({"prefabs": {
    "tank": {"components": [{"type": "unit", "target": "turret"}],
             "children": [{"name": "turret", "components": [{"type": "unit", "target": "tank"}],
                           "children": [{"name": "gun", "components": [{"type": "unit", "target": "tank/turret/gun"}]}]}]}},
    "entities": [
      {"name": "player", "components": [{"type": "unit"}]},
      {"name": "t1", "prefab": "tank", "components": [{"type": "unit", "hp": 7}],
       "children": [{"name": "flag", "components": [{"type": "unit", "target": "player"}]}]},
      {"name": "t2", "prefab": "tank", "components": [{"type": "unit", "target": "player"}]}]})";
  STRATA_ASSERT_OK_AND_ASSIGN(EntityCompiler::Result result, Compile(kTanks));
  STRATA_ASSERT_OK_AND_ASSIGN(EntityResourceView view, EntityResourceView::Create(result.blob));
  // player 0; t1 1, its own flag 2, then the prefab's turret 3 and gun 4; t2 5, turret 6, gun 7.
  ASSERT_EQ(view.num_entities(), 8u);
  EXPECT_EQ(std::vector<uint32_t>(view.parent_index().begin(), view.parent_index().end()),
            (std::vector<uint32_t>{kNoParent, kNoParent, 1, 1, 3, kNoParent, 5, 6}));
  const auto units = Units(view);
  EXPECT_EQ(units[1]->hp, 7);
  EXPECT_EQ(units[1]->target, 3u);  // inherited reference: its own turret
  EXPECT_EQ(units[2]->target, 0u);  // the flag names the player
  EXPECT_EQ(units[3]->target, 1u);
  EXPECT_EQ(units[4]->target, 4u);
  EXPECT_EQ(units[5]->target, 0u);  // overridden reference: named in the level
  EXPECT_EQ(units[6]->target, 5u);
  EXPECT_EQ(units[7]->target, 7u);
  STRATA_ASSERT_OK_AND_ASSIGN(ResourceMetadata meta, ReadResourceMetadata(view));
  EXPECT_EQ(meta.EntityName(3), "turret");
  EXPECT_EQ(meta.EntityName(7), "gun");
  STRATA_ASSERT_OK_AND_ASSIGN(PrefabTable table, ReadPrefabTable(view));
  ASSERT_EQ(table.entities.size(), 6u);
  EXPECT_EQ(table.entities[1].entity, 3u);
  EXPECT_EQ(table.entities[1].node, 1u);
  EXPECT_EQ(table.entities[2].node, 2u);
  EXPECT_EQ(table.entities[3].entity, 5u);
  EXPECT_EQ(table.entities[3].node, 0u);
  EXPECT_EQ(table.prefabs[0].view.num_entities(), 3u);
}

TEST_F(PrefabTest, ABasedPrefabAnswersToItsBasesNames) {
  STRATA_ASSERT_OK_AND_ASSIGN(EntityCompiler::Result result, Compile(R"({"prefabs": {
      "a": {"components": [{"type": "unit", "target": "a/kid"}],
            "children": [{"name": "kid", "components": [{"type": "unit", "target": "a"}]}]},
      "b": {"prefab": "a", "components": [{"type": "unit", "hp": 2}]}},
    "entities": [{"prefab": "b"}, {"prefab": "b", "components": [{"type": "unit", "max": 3}]}]})"));
  STRATA_ASSERT_OK_AND_ASSIGN(EntityResourceView view, EntityResourceView::Create(result.blob));
  const auto units = Units(view);
  ASSERT_EQ(units.size(), 4u);
  EXPECT_EQ(units[0]->target, 1u);
  EXPECT_EQ(units[1]->target, 0u);
  EXPECT_EQ(units[2]->target, 3u);  // inherited through an override of another field
  EXPECT_EQ(units[2]->max, 3);
  EXPECT_EQ(units[3]->target, 2u);
}

TEST_F(PrefabTest, ErrorsNameThePrefab) {
  EXPECT_THAT(Compile(R"({"prefabs": {"a": {"prefab": "b"}, "b": {"prefab": "c"}, "c": {"prefab": "a"}},
                          "entities": []})"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("prefab cycle: a -> b -> c -> a")));
  EXPECT_THAT(Compile(R"({"prefabs": {"a": {"prefab": "a"}}, "entities": []})"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("prefab cycle: a -> a")));
  EXPECT_THAT(Compile(R"({"prefabs": {"a": {"prefab": "ghost"}}, "entities": []})"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr(R"(prefab "a": "prefab": no prefab is named "ghost")")));
  EXPECT_THAT(Compile(R"({"prefabs": {"a": {}}, "entities": [{"name": "x", "prefab": "ghost"}]})"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr(R"(entities[0] ("x"): "prefab": no prefab is named "ghost")")));
  EXPECT_THAT(Compile(R"({"entities": [{"prefab": "ghost"}]})"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("no prefab is named \"ghost\"")));
  EXPECT_THAT(Compile(R"({"prefabs": {"a": {"components": [{"type": "unit", "hp": -1, "bad": 1}]}},
                          "entities": []})"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("prefab \"a\": entities[0] (\"a\")")));
  EXPECT_THAT(Compile(R"({"prefabs": {"a": {"children": [{"prefab": "a"}]}}, "entities": []})"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("cannot be instances of a prefab")));
  EXPECT_THAT(Compile(R"({"prefabs": {"a": {"components": [{"type": "unit"}]},
                                      "b": {"prefab": "a", "components": [{"type": "tag", "name": "unit"}]}},
                          "entities": []})"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("component \"unit\" is of type \"unit\"")));
  EXPECT_THAT(Compile(R"({"prefabs": {"a": {"components": [{"type": "unit"}]}},
                          "entities": [{"prefab": "a", "components": [{"type": "tag", "name": "unit"}]}]})"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("in prefab \"a\"")));
  // One unit per entity: the prefab's and an added one are two.
  EXPECT_THAT(Compile(R"({"prefabs": {"a": {"components": [{"type": "unit"}]}},
                          "entities": [{"prefab": "a", "components": [{"type": "unit", "name": "u2"}]}]})"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("at most 1")));
  EXPECT_THAT(Compile(R"({"prefabs": [], "entities": []})"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("expected an object")));
  EXPECT_THAT(Compile(R"({"prefabs": {"a": {"color": 1}}, "entities": []})"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("unknown key \"color\"")));
}

TEST_F(PrefabTest, EdgesEmptyAndUnused) {
  // No prefabs declared: no section; declared but unused: definitions only.
  STRATA_ASSERT_OK_AND_ASSIGN(EntityCompiler::Result none, Compile(R"({"prefabs": {}, "entities": [{}]})"));
  STRATA_ASSERT_OK_AND_ASSIGN(EntityResourceView none_view, EntityResourceView::Create(none.blob));
  STRATA_ASSERT_OK_AND_ASSIGN(PrefabTable none_table, ReadPrefabTable(none_view));
  EXPECT_TRUE(none_table.empty());
  STRATA_ASSERT_OK_AND_ASSIGN(EntityCompiler::Result unused,
                              Compile(R"({"prefabs": {"x": {"components": [{"type": "tag", "text": "t"}]}},
                                          "entities": []})"));
  STRATA_ASSERT_OK_AND_ASSIGN(EntityResourceView unused_view, EntityResourceView::Create(unused.blob));
  EXPECT_EQ(unused_view.num_entities(), 0u);
  STRATA_ASSERT_OK_AND_ASSIGN(PrefabTable unused_table, ReadPrefabTable(unused_view));
  ASSERT_EQ(unused_table.prefabs.size(), 1u);
  EXPECT_TRUE(unused_table.entities.empty());
  // An instance that writes a component with no field overrides nothing.
  STRATA_ASSERT_OK_AND_ASSIGN(EntityCompiler::Result plain,
                              Compile(R"({"prefabs": {"x": {"components": [{"type": "unit", "hp": 3}]}},
                                          "entities": [{"prefab": "x", "components": [{"type": "unit"}]}]})"));
  STRATA_ASSERT_OK_AND_ASSIGN(EntityResourceView plain_view, EntityResourceView::Create(plain.blob));
  EXPECT_EQ(Units(plain_view)[0]->hp, 3);
  STRATA_ASSERT_OK_AND_ASSIGN(PrefabTable plain_table, ReadPrefabTable(plain_view));
  EXPECT_TRUE(plain_table.overrides.empty());
}

TEST_F(PrefabTest, ManyInstancesAcrossSlices) {
  std::string text = R"({"prefabs": {"orc": {"components": [{"type": "unit", "hp": 5}],
      "children": [{"name": "axe", "components": [{"type": "unit", "target": "orc"}]}]}}, "entities": [)";
  for (int i = 0; i < 500; ++i) {
    absl::StrAppend(&text, i == 0 ? "" : ",", R"({"prefab": "orc", "components": [{"type": "unit", "hp": )", i,
                    "}]}");
  }
  text += "]}";
  STRATA_ASSERT_OK_AND_ASSIGN(EntityCompiler::Result result, Compile(text));
  STRATA_ASSERT_OK_AND_ASSIGN(EntityResourceView view, EntityResourceView::Create(result.blob));
  ASSERT_EQ(view.num_entities(), 1000u);
  const auto units = Units(view);
  for (uint32_t i = 0; i < 500; ++i) {
    ASSERT_EQ(units[2 * i]->hp, static_cast<float>(i));
    ASSERT_EQ(units[2 * i + 1]->hp, 100);
    ASSERT_EQ(units[2 * i + 1]->target, 2 * i);
  }
}

// Patches the word at `offset` of the blob and recomputes the checksum, so only the
// prefab section's own checks can refuse it.
std::vector<std::byte> Patched(std::vector<std::byte> blob, size_t offset, uint32_t value) {
  std::memcpy(blob.data() + offset, &value, 4);
  const uint32_t checksum = ResourceChecksum(blob);
  std::memcpy(blob.data() + entity_resource_layout::kChecksumOffset, &checksum, 4);
  return blob;
}

TEST_F(PrefabTest, CorruptPrefabTablesAreRefused) {
  STRATA_ASSERT_OK_AND_ASSIGN(EntityCompiler::Result result, Compile(kOrcs));
  STRATA_ASSERT_OK_AND_ASSIGN(EntityResourceView view, EntityResourceView::Create(result.blob));
  size_t data_at = 0, data_size = 0;
  for (const ComponentTypeView& t : view.component_types()) {
    if (t.type == IdString32(kPrefabsSection)) {
      data_at = static_cast<size_t>(t.data.data() - result.blob.data());
      data_size = t.data.size();
    }
  }
  ASSERT_NE(data_at, 0u);
  // Every word of the tables (header, prefab, records, masks) set to hostile values:
  // each is refused or, if still consistent, read within bounds (ASan checks).
  size_t refused = 0, words = 0;
  for (size_t w = 0; 4 * w < data_size; ++w) {
    for (uint32_t value : {0u, 1u, 2u, 0xFFFFFFFFu, 0x7FFFFFFFu, 16u, 64u}) {
      std::vector<std::byte> bad = Patched(result.blob, data_at + 4 * w, value);
      absl::StatusOr<EntityResourceView> bad_view = EntityResourceView::Create(bad);
      if (!bad_view.ok()) continue;  // the nested blob's header bytes etc.
      ++words;
      absl::StatusOr<PrefabTable> table = ReadPrefabTable(*bad_view);
      if (!table.ok()) {
        EXPECT_THAT(table, StatusIs(absl::StatusCode::kDataLoss));
        ++refused;
      }
    }
  }
  EXPECT_GT(refused, 20u);
  EXPECT_GT(words, refused / 2);
  // Specific ones, with their messages.
  EXPECT_THAT(ReadPrefabTable(*EntityResourceView::Create(Patched(result.blob, data_at, 2))),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("version 2")));
  EXPECT_THAT(ReadPrefabTable(*EntityResourceView::Create(Patched(result.blob, data_at + 4, 9))),
              StatusIs(absl::StatusCode::kDataLoss));
  EXPECT_THAT(ReadPrefabTable(*EntityResourceView::Create(Patched(result.blob, data_at + 8, 1000))),
              StatusIs(absl::StatusCode::kDataLoss));
  // The first entity record's entity past the level.
  const size_t first_record = data_at + 4 * (8 + 4 * 1);
  EXPECT_THAT(ReadPrefabTable(*EntityResourceView::Create(Patched(result.blob, first_record, 4))),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("entity record 0")));
  EXPECT_THAT(ReadPrefabTable(*EntityResourceView::Create(Patched(result.blob, first_record + 8, 1))),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("entity record 0")));
}

}  // namespace
}  // namespace strata
