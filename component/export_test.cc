#include "component/export.h"

#include <cstring>
#include <string>
#include <vector>

#include "component/declare.h"
#include "component/registry.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "resource/format.h"
#include "resource/metadata.h"
#include "testing/status_matchers.h"

namespace strata {
namespace {

using ::strata::testing::IsOk;
using ::strata::testing::StatusIs;
using ::testing::HasSubstr;

struct Label {
  IdString32 tag;
};

const ComponentRegistry& LabelRegistry() {
  static const ComponentRegistry* registry = [] {
    auto* r = new ComponentRegistry();
    EXPECT_THAT(r->Add(ComponentDeclaration<Label>("label").Field("tag", &Label::tag).Build()),
                IsOk());
    return r;
  }();
  return *registry;
}

// A blob of one entity named `entity_name` with a label whose tag is `tag`, the tag's
// text in strata.names: what the compiler writes, but with any bytes as the texts (the
// blob's checksum is computed by the writer, so the blob is valid).
std::vector<std::byte> LabelBlob(const std::string& entity_name, const std::string& tag) {
  const ComponentType& type = *LabelRegistry().Find("label");
  const uint32_t tag_id = IdString32::Hash(tag);
  MetadataSections metadata;
  metadata.named_entities = {0};
  metadata.entity_names = {entity_name};
  metadata.name_texts = {{tag_id, tag}};
  metadata.layout_types = {type.id().value()};
  metadata.layouts = {type.layout()};
  EntityResourceContents contents;
  contents.parent_index = {kNoParent};
  std::move(metadata).AppendTo(contents.component_types, kNativeEndianness);
  ComponentTypeContents section;
  section.type = type.id();
  section.instance_stride = type.instance_size();
  section.layout_fingerprint = type.fingerprint();
  section.entity_index = {0};
  section.names = {type.id().value()};
  section.data.resize(4);
  std::memcpy(section.data.data(), &tag_id, 4);
  contents.component_types.push_back(std::move(section));
  absl::StatusOr<std::vector<std::byte>> blob = WriteEntityResource(contents);
  EXPECT_THAT(blob, IsOk());
  return blob.ok() ? *blob : std::vector<std::byte>();
}

TEST(Export, WellFormedTextsExportAndDescribe) {
  const std::vector<std::byte> blob = LabelBlob("caf\xc3\xa9", "Fog");
  STRATA_ASSERT_OK_AND_ASSIGN(EntityResourceView view, EntityResourceView::Create(blob));
  STRATA_ASSERT_OK_AND_ASSIGN(nlohmann::json level, ExportLevel(view, LabelRegistry()));
  EXPECT_EQ(level.dump(),
            R"({"entities":[{"components":[{"tag":"Fog","type":"label"}],"name":"café"}]})");
  STRATA_ASSERT_OK_AND_ASSIGN(std::string listing, DescribeResource(view, LabelRegistry()));
  EXPECT_THAT(listing, HasSubstr("tag=\"Fog\""));
}

// Texts that are not UTF-8 cannot become JSON strings (dump would throw): the blob is
// rejected, naming the string, before any JSON is built.
TEST(Export, EntityNameThatIsNotUtf8IsDataLoss) {
  const std::vector<std::byte> blob = LabelBlob("bad\xff", "Fog");
  STRATA_ASSERT_OK_AND_ASSIGN(EntityResourceView view, EntityResourceView::Create(blob));
  EXPECT_THAT(
      ExportLevel(view, LabelRegistry()),
      StatusIs(absl::StatusCode::kDataLoss, HasSubstr("string 0: input is not UTF-8 at byte 3")));
  EXPECT_THAT(
      DescribeResource(view, LabelRegistry()),
      StatusIs(absl::StatusCode::kDataLoss, HasSubstr("string 0: input is not UTF-8 at byte 3")));
}

TEST(Export, NameTextThatIsNotUtf8IsDataLoss) {
  const std::vector<std::byte> blob = LabelBlob("e", "\xc0\xaf");
  STRATA_ASSERT_OK_AND_ASSIGN(EntityResourceView view, EntityResourceView::Create(blob));
  EXPECT_THAT(ExportLevel(view, LabelRegistry()),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("not UTF-8")));
  EXPECT_THAT(DescribeResource(view, LabelRegistry()),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("not UTF-8")));
}

}  // namespace
}  // namespace strata
