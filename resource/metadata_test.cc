#include "resource/metadata.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/status_matchers.h"

namespace strata {
namespace {

using ::strata::testing::StatusIs;
using ::testing::HasSubstr;

absl::StatusOr<std::vector<std::byte>> BlobWith(std::vector<ComponentTypeContents> sections,
                                                uint32_t num_entities = 2) {
  EntityResourceContents contents;
  contents.parent_index.assign(num_entities, kNoParent);
  contents.component_types = std::move(sections);
  return WriteEntityResource(contents);
}

TEST(MetadataTest, RoundTripsEntityNamesNamesAndLayouts) {
  const std::vector<std::string> entity_names = {"player", ""};
  const std::vector<std::string> names = {"Fog"};
  const std::vector<std::string> layouts = {"hp:f32:4"};
  std::vector<ComponentTypeContents> sections;
  sections.push_back(MakeStringSection(IdString32(kEntityNamesSection), {0, 1}, {}, entity_names,
                                       kNativeEndianness));
  sections.push_back(
      MakeStringSection(IdString32(kNameStringsSection), {0}, {}, names, kNativeEndianness));
  sections.push_back(MakeStringSection(IdString32(kLayoutsSection), {0},
                                       {IdString32("health").value()}, layouts, kNativeEndianness));
  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<std::byte> blob, BlobWith(std::move(sections)));
  STRATA_ASSERT_OK_AND_ASSIGN(EntityResourceView view, EntityResourceView::Create(blob));
  STRATA_ASSERT_OK_AND_ASSIGN(ResourceMetadata meta, ReadResourceMetadata(view));
  EXPECT_EQ(meta.EntityName(0), "player");
  EXPECT_EQ(meta.EntityName(1), "");
  EXPECT_EQ(meta.EntityName(7), "");
  ASSERT_NE(meta.NameText(IdString32("Fog").value()), nullptr);
  EXPECT_EQ(*meta.NameText(IdString32("Fog").value()), "Fog");
  EXPECT_EQ(meta.NameText(IdString32("Vignette").value()), nullptr);
  EXPECT_EQ(meta.layouts.at(IdString32("health").value()), "hp:f32:4");
}

TEST(MetadataTest, NoSectionsIsEmptyMetadata) {
  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<std::byte> blob, BlobWith({}, 0));
  STRATA_ASSERT_OK_AND_ASSIGN(EntityResourceView view, EntityResourceView::Create(blob));
  STRATA_ASSERT_OK_AND_ASSIGN(ResourceMetadata meta, ReadResourceMetadata(view));
  EXPECT_TRUE(meta.entity_names.empty());
  EXPECT_TRUE(meta.names.empty());
  EXPECT_TRUE(meta.layouts.empty());
}

TEST(MetadataTest, SectionsAppendInOneOrderWithNameTextsSortedById) {
  MetadataSections metadata;
  metadata.named_entities = {1};
  metadata.entity_names = {"sun"};
  const uint32_t fog = IdString32("Fog").value();
  const uint32_t bloom = IdString32("Bloom").value();
  metadata.name_texts = {{std::max(fog, bloom), fog > bloom ? "Fog" : "Bloom"},
                         {std::min(fog, bloom), fog > bloom ? "Bloom" : "Fog"}};
  metadata.layout_types = {IdString32("health").value()};
  metadata.layouts = {"hp:f32:4"};
  std::vector<ComponentTypeContents> sections;
  std::move(metadata).AppendTo(sections, kNativeEndianness);
  ASSERT_EQ(sections.size(), 3u);
  EXPECT_EQ(sections[0].type, IdString32(kEntityNamesSection));
  EXPECT_EQ(sections[1].type, IdString32(kNameStringsSection));
  EXPECT_EQ(sections[2].type, IdString32(kLayoutsSection));
  EXPECT_EQ(sections[1].names, (std::vector<uint32_t>{std::min(fog, bloom), std::max(fog, bloom)}));

  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<std::byte> blob, BlobWith(std::move(sections)));
  STRATA_ASSERT_OK_AND_ASSIGN(EntityResourceView view, EntityResourceView::Create(blob));
  STRATA_ASSERT_OK_AND_ASSIGN(ResourceMetadata meta, ReadResourceMetadata(view));
  EXPECT_EQ(meta.EntityName(0), "");
  EXPECT_EQ(meta.EntityName(1), "sun");
  ASSERT_NE(meta.NameText(bloom), nullptr);
  EXPECT_EQ(*meta.NameText(bloom), "Bloom");
  EXPECT_EQ(meta.layouts.at(IdString32("health").value()), "hp:f32:4");

  std::vector<ComponentTypeContents> none;
  MetadataSections{}.AppendTo(none, kNativeEndianness);
  EXPECT_TRUE(none.empty());
}

TEST(MetadataTest, EndOffsetsOutOfBoundsAreDataLoss) {
  const std::vector<std::string> strings = {"ab", "cd"};
  ComponentTypeContents section =
      MakeStringSection(IdString32(kNameStringsSection), {0, 0}, {}, strings, kNativeEndianness);
  const uint32_t past_end = 100;
  std::memcpy(section.data.data(), &past_end, 4);
  std::vector<ComponentTypeContents> sections;
  sections.push_back(std::move(section));
  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<std::byte> blob, BlobWith(std::move(sections)));
  STRATA_ASSERT_OK_AND_ASSIGN(EntityResourceView view, EntityResourceView::Create(blob));
  EXPECT_THAT(ReadResourceMetadata(view),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("out of bounds")));
}

TEST(MetadataTest, StringThatDoesNotHashToItsIdIsDataLoss) {
  const std::vector<std::string> strings = {"Fog"};
  std::vector<ComponentTypeContents> sections;
  sections.push_back(MakeStringSection(IdString32(kNameStringsSection), {0},
                                       {IdString32("Vignette").value()}, strings,
                                       kNativeEndianness));
  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<std::byte> blob, BlobWith(std::move(sections)));
  STRATA_ASSERT_OK_AND_ASSIGN(EntityResourceView view, EntityResourceView::Create(blob));
  EXPECT_THAT(ReadResourceMetadata(view),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("does not hash")));
}

TEST(MetadataTest, StringThatIsNotUtf8IsDataLoss) {
  // The id is the hash of the bad bytes, so only the text itself is wrong.
  for (const char* section_name : {kEntityNamesSection.data(), kNameStringsSection.data()}) {
    const std::vector<std::string> strings = {"ok",
                                              "bad\xff"
                                              "name"};
    std::vector<ComponentTypeContents> sections;
    sections.push_back(
        MakeStringSection(IdString32(section_name), {0, 1}, {}, strings, kNativeEndianness));
    STRATA_ASSERT_OK_AND_ASSIGN(std::vector<std::byte> blob, BlobWith(std::move(sections)));
    STRATA_ASSERT_OK_AND_ASSIGN(EntityResourceView view, EntityResourceView::Create(blob));
    EXPECT_THAT(
        ReadResourceMetadata(view),
        StatusIs(absl::StatusCode::kDataLoss, HasSubstr("string 1: input is not UTF-8 at byte 3")))
        << section_name;
    EXPECT_THAT(ReadStringSection(*view.component_types().begin()),
                StatusIs(absl::StatusCode::kDataLoss, HasSubstr("not UTF-8")));
  }
  // Well-formed multi-byte text is fine.
  const std::vector<std::string> strings = {"caf\xc3\xa9", "\xe2\x82\xac"};
  std::vector<ComponentTypeContents> sections;
  sections.push_back(
      MakeStringSection(IdString32(kEntityNamesSection), {0, 1}, {}, strings, kNativeEndianness));
  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<std::byte> blob, BlobWith(std::move(sections)));
  STRATA_ASSERT_OK_AND_ASSIGN(EntityResourceView view, EntityResourceView::Create(blob));
  STRATA_ASSERT_OK_AND_ASSIGN(ResourceMetadata meta, ReadResourceMetadata(view));
  EXPECT_EQ(meta.EntityName(0), "caf\xc3\xa9");
}

TEST(MetadataTest, StringsCutInsideACharacterAreDataLoss) {
  // The section's text as a whole is well-formed ("caf\xc3\xa9", then "x"), but the
  // first string ends inside the two-byte character and the second starts with its
  // continuation byte: each string alone is not UTF-8.
  for (const std::vector<std::string>& strings :
       {std::vector<std::string>{"caf\xc3", "\xa9"},
        std::vector<std::string>{"caf\xc3", "", "\xa9x"}}) {
    // The name-strings section (every entry on entity 0): what is tested is
    // ReadStringSection, not the ids.
    std::vector<ComponentTypeContents> sections;
    sections.push_back(
        MakeStringSection(IdString32(kNameStringsSection), std::vector<uint32_t>(strings.size(), 0),
                          std::vector<uint32_t>(strings.size(), 0), strings, kNativeEndianness));
    STRATA_ASSERT_OK_AND_ASSIGN(std::vector<std::byte> blob, BlobWith(std::move(sections)));
    STRATA_ASSERT_OK_AND_ASSIGN(EntityResourceView view, EntityResourceView::Create(blob));
    EXPECT_THAT(ReadStringSection(*view.component_types().begin()),
                StatusIs(absl::StatusCode::kDataLoss, HasSubstr("string 0: input is not UTF-8")))
        << strings.size();
  }
}

TEST(MetadataTest, MakeStringSectionChecksTheSizesAgree) {
  const std::vector<std::string> strings = {"a", "b"};
  EXPECT_DEATH(
      MakeStringSection(IdString32(kNameStringsSection), {0}, {}, strings, kNativeEndianness),
      "MakeStringSection: entity_index, names and strings differ in size");
  EXPECT_DEATH(
      MakeStringSection(IdString32(kNameStringsSection), {0, 0, 0}, {}, strings, kNativeEndianness),
      "MakeStringSection: entity_index, names and strings differ in size");
  EXPECT_DEATH(
      MakeStringSection(IdString32(kLayoutsSection), {0, 0}, {1}, strings, kNativeEndianness),
      "MakeStringSection: entity_index, names and strings differ in size");
  // Empty names are the strings' hashes; given names are kept.
  const ComponentTypeContents hashed =
      MakeStringSection(IdString32(kNameStringsSection), {0, 0}, {}, strings, kNativeEndianness);
  EXPECT_EQ(hashed.names,
            (std::vector<uint32_t>{IdString32("a").value(), IdString32("b").value()}));
  const ComponentTypeContents given =
      MakeStringSection(IdString32(kLayoutsSection), {0, 0}, {7, 8}, strings, kNativeEndianness);
  EXPECT_EQ(given.names, (std::vector<uint32_t>{7, 8}));
  const ComponentTypeContents none =
      MakeStringSection(IdString32(kLayoutsSection), {}, {}, {}, kNativeEndianness);
  EXPECT_TRUE(none.data.empty());
}

TEST(MetadataTest, OnlyReservedNamesAreMetadata) {
  EXPECT_TRUE(IsMetadataSection(IdString32(kEntityNamesSection)));
  EXPECT_TRUE(IsMetadataSection(IdString32(kNameStringsSection)));
  EXPECT_TRUE(IsMetadataSection(IdString32(kLayoutsSection)));
  EXPECT_FALSE(IsMetadataSection(IdString32("transform")));
}

}  // namespace
}  // namespace strata
