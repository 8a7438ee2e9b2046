// ExpandPrefabDeltas on hand-made deltas: a masked component merged field by field with
// the base (the current prefab), a component left out taken from it with its internal
// reference remapped to the instance's entity, a removed one left out, the level's
// overrides (the entity's own fields but the value diffs) passed on as the whole
// resource's; and its errors, each naming what is wrong.
#include "resource/prefab_delta.h"

#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/id_string.h"
#include "base/status_macros.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "resource/format.h"
#include "resource/metadata.h"
#include "resource/prefab.h"
#include "testing/status_matchers.h"

namespace strata {
namespace {

using ::strata::testing::IsOk;
using ::strata::testing::StatusIs;
using ::testing::HasSubstr;

constexpr char kLayout[] = "hp:f32:4;max:f32:4;target:entity:4";

struct Unit {
  float hp;
  float max;
  uint32_t target;
};

ComponentTypeContents UnitSection(const std::vector<uint32_t>& entities, const std::vector<Unit>& units) {
  ComponentTypeContents section;
  section.type = IdString32("unit");
  section.instance_stride = sizeof(Unit);
  section.layout_fingerprint = 7;
  section.entity_index = entities;
  section.names.assign(entities.size(), IdString32("unit").value());
  section.data.resize(units.size() * sizeof(Unit));
  if (!units.empty()) std::memcpy(section.data.data(), units.data(), section.data.size());
  return section;
}

void AddLayout(EntityResourceContents& contents, const std::string& layout) {
  MetadataSections metadata;
  metadata.layout_types.push_back(IdString32("unit").value());
  metadata.layouts.push_back(layout);
  std::move(metadata).AppendTo(contents.component_types, kNativeEndianness);
}

// A prefab: a root and a child whose unit targets the root (entity 0).
std::vector<std::byte> Prefab(float root_hp, float child_hp, const std::string& layout = kLayout) {
  EntityResourceContents contents;
  contents.parent_index = {kNoParent, 0};
  AddLayout(contents, layout);
  contents.component_types.push_back(
      UnitSection({0, 1}, {Unit{root_hp, 20, kNoEntityRef}, Unit{child_hp, 5, 0}}));
  return *WriteEntityResource(contents);
}

// A delta of one instance (entities 3 and 4 under two plain entities): the root's unit
// written with a mask (hp its own), the child's left out (or removed); with
// `hp_value_diff`, the hp was a value diff, not the level's.
std::vector<std::byte> Delta(const std::vector<std::byte>& prefab, bool child_removed, bool carry = true,
                             const std::string& layout = kLayout, bool hp_value_diff = false) {
  EntityResourceContents contents;
  contents.parent_index = {kNoParent, 0, 1, 2, 3};
  AddLayout(contents, layout);
  PrefabDefinition definition;
  definition.name = "orc";
  if (carry) definition.blob = prefab;
  std::vector<PrefabOverrideRecord> overrides(1);
  overrides[0].type = overrides[0].name = IdString32("unit").value();
  overrides[0].entity = 3;
  overrides[0].mask = {0b001};  // hp is the entity's, max and target the prefab's
  if (hp_value_diff) {
    overrides.push_back(overrides[0]);
    overrides.back().value_diff = true;
  }
  if (child_removed) {
    PrefabOverrideRecord& removed = overrides.emplace_back();
    removed.type = removed.name = IdString32("unit").value();
    removed.entity = 4;
    removed.removed = true;
  }
  contents.component_types.push_back(MakePrefabSection(
      {&definition, 1}, {PrefabEntityRecord{3, 0, 0}, PrefabEntityRecord{4, 0, 1}}, overrides, kNativeEndianness,
      /*delta=*/true));
  contents.component_types.push_back(UnitSection({1, 3}, {Unit{1, 1, kNoEntityRef}, Unit{50, 999, 999}}));
  return *WriteEntityResource(contents);
}

// The unit of each entity of `blob` (hp < 0 for none).
std::vector<Unit> Units(const EntityResourceView& view) {
  std::vector<Unit> units(view.num_entities(), Unit{-1, -1, kNoEntityRef});
  for (const ComponentTypeView& s : view.component_types()) {
    if (s.type != IdString32("unit")) continue;
    for (uint32_t i = 0; i < s.num_instances; ++i) {
      std::memcpy(&units[s.entity_index[i]], s.data.data() + size_t{i} * sizeof(Unit), sizeof(Unit));
    }
  }
  return units;
}

TEST(ExpandPrefabDeltas, MergesMaskedFieldsAndTakesTheRestFromTheBase) {
  const std::vector<std::byte> saved_prefab = Prefab(10, 2);
  const std::vector<std::byte> delta = Delta(saved_prefab, /*child_removed=*/false);
  STRATA_ASSERT_OK_AND_ASSIGN(const EntityResourceView view, EntityResourceView::Create(delta));
  STRATA_ASSERT_OK_AND_ASSIGN(const PrefabTable table, ReadPrefabTable(view));
  // With the save's copy, then with an edited prefab as the base.
  const std::vector<std::byte> edited = Prefab(11, 3);
  STRATA_ASSERT_OK_AND_ASSIGN(const EntityResourceView edited_view, EntityResourceView::Create(edited));
  for (const EntityResourceView& base : {table.prefabs[0].view, edited_view}) {
    const bool is_edit = base.blob().data() == edited_view.blob().data();
    STRATA_ASSERT_OK_AND_ASSIGN(const std::vector<std::byte> whole, ExpandPrefabDeltas(view, table, {&base, 1}));
    STRATA_ASSERT_OK_AND_ASSIGN(const EntityResourceView whole_view, EntityResourceView::Create(whole));
    EXPECT_EQ(whole_view.num_entities(), 5u);
    const std::vector<Unit> units = Units(whole_view);
    EXPECT_EQ(units[0].hp, -1);  // none
    EXPECT_EQ(units[1].hp, 1);   // not from a prefab: as written
    EXPECT_EQ(units[3].hp, 50);  // the mask's
    EXPECT_EQ(units[3].max, 20);  // the base's, not the 999 the delta held
    EXPECT_EQ(units[3].target, kNoEntityRef);
    EXPECT_EQ(units[4].hp, is_edit ? 3 : 2);  // left out: the base's
    EXPECT_EQ(units[4].target, 3u);           // the instance's root, not the base's 0
    STRATA_ASSERT_OK_AND_ASSIGN(const PrefabTable whole_table, ReadPrefabTable(whole_view));
    EXPECT_FALSE(whole_table.delta);
    ASSERT_EQ(whole_table.entities.size(), 2u);
    ASSERT_EQ(whole_table.overrides.size(), 1u);  // the root's hp: the level's
    EXPECT_EQ(whole_table.overrides[0].entity, 3u);
    EXPECT_EQ(whole_table.overrides[0].mask, std::vector<uint32_t>{0b001});
    EXPECT_FALSE(whole_table.overrides[0].value_diff);
    // The whole carries the base it was made with.
    EXPECT_EQ(whole_table.prefabs[0].view.blob().size(), base.blob().size());
  }
}

// A field the delta wrote as a value diff is the entity's value, but not an override
// the whole resource records.
TEST(ExpandPrefabDeltas, AValueDiffIsAValueNotAnOverride) {
  const std::vector<std::byte> delta = Delta(Prefab(10, 2), false, true, kLayout, /*hp_value_diff=*/true);
  STRATA_ASSERT_OK_AND_ASSIGN(const EntityResourceView view, EntityResourceView::Create(delta));
  STRATA_ASSERT_OK_AND_ASSIGN(const PrefabTable table, ReadPrefabTable(view));
  ASSERT_EQ(table.overrides.size(), 2u);
  EXPECT_TRUE(table.overrides[1].value_diff);
  STRATA_ASSERT_OK_AND_ASSIGN(const std::vector<std::byte> whole,
                              ExpandPrefabDeltas(view, table, {&table.prefabs[0].view, 1}));
  STRATA_ASSERT_OK_AND_ASSIGN(const EntityResourceView whole_view, EntityResourceView::Create(whole));
  EXPECT_EQ(Units(whole_view)[3].hp, 50);
  EXPECT_EQ(Units(whole_view)[3].max, 20);
  STRATA_ASSERT_OK_AND_ASSIGN(const PrefabTable whole_table, ReadPrefabTable(whole_view));
  EXPECT_TRUE(whole_table.overrides.empty());
}

TEST(ExpandPrefabDeltas, ARemovedComponentStaysRemoved) {
  const std::vector<std::byte> delta = Delta(Prefab(10, 2), /*child_removed=*/true);
  STRATA_ASSERT_OK_AND_ASSIGN(const EntityResourceView view, EntityResourceView::Create(delta));
  STRATA_ASSERT_OK_AND_ASSIGN(const PrefabTable table, ReadPrefabTable(view));
  STRATA_ASSERT_OK_AND_ASSIGN(const std::vector<std::byte> whole,
                              ExpandPrefabDeltas(view, table, {&table.prefabs[0].view, 1}));
  const std::vector<Unit> units = Units(*EntityResourceView::Create(whole));
  EXPECT_EQ(units[3].hp, 50);
  EXPECT_EQ(units[4].hp, -1);
}

TEST(ExpandPrefabDeltas, ErrorsNameWhatIsWrong) {
  const std::vector<std::byte> prefab = Prefab(10, 2);
  const std::vector<std::byte> delta = Delta(prefab, false);
  STRATA_ASSERT_OK_AND_ASSIGN(const EntityResourceView view, EntityResourceView::Create(delta));
  STRATA_ASSERT_OK_AND_ASSIGN(PrefabTable table, ReadPrefabTable(view));
  EXPECT_THAT(ExpandPrefabDeltas(view, table, {}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("0 bases for 1 prefabs")));
  PrefabTable not_delta = table;
  not_delta.delta = false;
  EXPECT_THAT(ExpandPrefabDeltas(view, not_delta, {&table.prefabs[0].view, 1}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("not a delta")));
  // A base of another layout for the merged type: named.
  const std::vector<std::byte> wide = Prefab(10, 2, "hp:f32:4;max:f32:4;target:u32:4");
  STRATA_ASSERT_OK_AND_ASSIGN(const EntityResourceView wide_view, EntityResourceView::Create(wide));
  EXPECT_THAT(ExpandPrefabDeltas(view, table, {&wide_view, 1}),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("prefab \"orc\"")));
  // A layout that does not fill the stride (both sides agree, so it gets to the merge).
  const std::vector<std::byte> short_prefab = Prefab(10, 2, "hp:f32:4;max:f32:4");
  const std::vector<std::byte> short_delta = Delta(short_prefab, false, true, "hp:f32:4;max:f32:4");
  STRATA_ASSERT_OK_AND_ASSIGN(const EntityResourceView short_view, EntityResourceView::Create(short_delta));
  STRATA_ASSERT_OK_AND_ASSIGN(const PrefabTable short_table, ReadPrefabTable(short_view));
  EXPECT_THAT(ExpandPrefabDeltas(short_view, short_table, {&short_table.prefabs[0].view, 1}),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("layout of 8 bytes, stride 12")));
  // A prefab named without a copy and given no base.
  const std::vector<std::byte> by_name = Delta(prefab, false, /*carry=*/false);
  STRATA_ASSERT_OK_AND_ASSIGN(const EntityResourceView by_name_view, EntityResourceView::Create(by_name));
  STRATA_ASSERT_OK_AND_ASSIGN(const PrefabTable by_name_table, ReadPrefabTable(by_name_view));
  ASSERT_TRUE(by_name_table.prefabs[0].by_name);
  EXPECT_EQ(by_name_table.prefabs[0].view.num_entities(), 0u);
  EXPECT_THAT(ExpandPrefabDeltas(by_name_view, by_name_table, {&by_name_table.prefabs[0].view, 1}),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("prefab \"orc\" is not known here")));
  // Given the prefab, the same delta expands as the carried one does.
  STRATA_ASSERT_OK_AND_ASSIGN(const EntityResourceView prefab_view, EntityResourceView::Create(prefab));
  STRATA_ASSERT_OK_AND_ASSIGN(const std::vector<std::byte> a, ExpandPrefabDeltas(by_name_view, by_name_table,
                                                                                 {&prefab_view, 1}));
  STRATA_ASSERT_OK_AND_ASSIGN(const std::vector<std::byte> b, ExpandPrefabDeltas(view, table, {&prefab_view, 1}));
  EXPECT_EQ(a, b);
}

}  // namespace
}  // namespace strata
