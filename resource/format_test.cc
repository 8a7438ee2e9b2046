#include "resource/format.h"

#include <cstring>
#include <vector>

#include "base/id_string.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/random.h"
#include "testing/status_matchers.h"

namespace strata {
namespace {

namespace layout = entity_resource_layout;
using ::strata::testing::IsOk;
using ::strata::testing::Random;
using ::strata::testing::StatusIs;
using ::testing::HasSubstr;

uint32_t Get32(const std::vector<std::byte>& blob, size_t offset) {
  uint32_t v;
  std::memcpy(&v, blob.data() + offset, sizeof(v));
  return v;
}

void Put32(std::vector<std::byte>& blob, size_t offset, uint32_t v) {
  std::memcpy(blob.data() + offset, &v, sizeof(v));
}

// Re-signs a hand-patched blob so the structure checks, not the checksum, judge it.
void FixChecksum(std::vector<std::byte>& blob) {
  Put32(blob, layout::kChecksumOffset, ResourceChecksum(blob));
}

std::vector<std::byte> Bytes(std::initializer_list<int> values) {
  std::vector<std::byte> out;
  for (int v : values) out.push_back(static_cast<std::byte>(v));
  return out;
}

// Three entities (0 root, 1 child of 0, 2 root), two types: "transform" with a 12-byte
// stride on entities 0 and 1, "tag" with variable data on entity 2.
EntityResourceContents SmallContents() {
  EntityResourceContents contents;
  contents.parent_index = {kNoParent, 0, kNoParent};
  ComponentTypeContents& transform = contents.component_types.emplace_back();
  transform.type = IdString32("transform");
  transform.instance_stride = 12;
  transform.entity_index = {0, 1};
  transform.names = {IdString32("Transform").value(), IdString32("Transform").value()};
  transform.data.resize(24);
  for (size_t i = 0; i < transform.data.size(); ++i) transform.data[i] = std::byte(i);
  ComponentTypeContents& tag = contents.component_types.emplace_back();
  tag.type = IdString32("tag");
  tag.instance_stride = 0;
  tag.entity_index = {2};
  tag.names = {IdString32("Tag").value()};
  tag.data = Bytes({1, 2, 3, 4, 5});
  return contents;
}

std::vector<std::byte> SmallBlob() {
  absl::StatusOr<std::vector<std::byte>> blob = WriteEntityResource(SmallContents());
  EXPECT_THAT(blob, IsOk());
  return *blob;
}

// Offset of the first section of SmallBlob().
constexpr size_t kFirstSection = 48;  // AlignUp(32 + 3 * 4)

EntityResourceContents RandomContents(Random& rng) {
  EntityResourceContents contents;
  const uint32_t num_entities = static_cast<uint32_t>(rng.UniformInt(0, 60));
  for (uint32_t i = 0; i < num_entities; ++i) {
    contents.parent_index.push_back(i == 0 || rng.Bernoulli(0.3)
                                        ? kNoParent
                                        : static_cast<uint32_t>(rng.UniformIndex(i)));
  }
  if (num_entities == 0) return contents;
  const int num_types = static_cast<int>(rng.UniformInt(0, 5));
  for (int t = 0; t < num_types; ++t) {
    ComponentTypeContents& type = contents.component_types.emplace_back();
    type.type = IdString32("type" + std::to_string(t));
    const uint32_t strides[] = {0, 1, 4, 12, 16, 64};
    type.instance_stride = strides[rng.UniformIndex(6)];
    const size_t n = rng.UniformIndex(2 * num_entities + 1);
    for (size_t i = 0; i < n; ++i) {
      type.entity_index.push_back(static_cast<uint32_t>(rng.UniformIndex(num_entities)));
      type.names.push_back(rng.Next32());
    }
    const size_t data_size =
        type.instance_stride != 0 ? n * type.instance_stride : rng.UniformIndex(100);
    for (size_t i = 0; i < data_size; ++i) type.data.push_back(std::byte(rng.Next32() & 0xFF));
  }
  return contents;
}

// The safety property every accepted blob must have: all spans lie inside it.
void ExpectSpansInside(const EntityResourceView& view, absl::Span<const std::byte> blob) {
  const std::byte* begin = blob.data();
  const std::byte* end = blob.data() + blob.size();
  auto inside = [&](const void* p, size_t bytes) {
    const auto* b = static_cast<const std::byte*>(p);
    return b >= begin && b + bytes <= end;
  };
  EXPECT_TRUE(inside(view.parent_index().data(), view.parent_index().size() * 4));
  for (uint32_t i = 0; i < view.num_entities(); ++i) {
    const uint32_t parent = view.parent_index()[i];
    EXPECT_TRUE(parent == kNoParent || parent < i);
  }
  size_t count = 0;
  for (const ComponentTypeView& type : view.component_types()) {
    ++count;
    EXPECT_TRUE(inside(type.entity_index.data(), type.entity_index.size() * 4));
    EXPECT_TRUE(inside(type.names.data(), type.names.size() * 4));
    EXPECT_TRUE(inside(type.data.data(), type.data.size()));
    for (uint32_t e : type.entity_index) EXPECT_LT(e, view.num_entities());
  }
  EXPECT_EQ(count, view.num_component_types());
}

TEST(EntityResourceView, EmptyResource) {
  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<std::byte> blob,
                              WriteEntityResource(EntityResourceContents()));
  EXPECT_EQ(blob.size(), layout::kHeaderSize);
  STRATA_ASSERT_OK_AND_ASSIGN(EntityResourceView view, EntityResourceView::Create(blob));
  EXPECT_EQ(view.num_entities(), 0u);
  EXPECT_EQ(view.num_component_types(), 0u);
  EXPECT_TRUE(view.parent_index().empty());
  EXPECT_EQ(view.component_types().begin(), view.component_types().end());
}

TEST(EntityResourceView, ReadsSmallBlobInPlace) {
  std::vector<std::byte> blob = SmallBlob();
  STRATA_ASSERT_OK_AND_ASSIGN(EntityResourceView view, EntityResourceView::Create(blob));
  EXPECT_EQ(view.num_entities(), 3u);
  EXPECT_THAT(view.parent_index(), ::testing::ElementsAre(kNoParent, 0u, kNoParent));
  std::vector<ComponentTypeView> types(view.component_types().begin(),
                                       view.component_types().end());
  ASSERT_EQ(types.size(), 2u);
  EXPECT_EQ(types[0].type, IdString32("transform"));
  EXPECT_EQ(types[0].offset, kFirstSection);
  EXPECT_EQ(types[0].instance_stride, 12u);
  EXPECT_THAT(types[0].entity_index, ::testing::ElementsAre(0u, 1u));
  EXPECT_EQ(types[0].name(1), IdString32("Transform"));
  ASSERT_EQ(types[0].data.size(), 24u);
  EXPECT_EQ(types[0].data[23], std::byte{23});
  EXPECT_EQ(types[1].type, IdString32("tag"));
  EXPECT_EQ(types[1].name(0), IdString32("Tag"));
  EXPECT_EQ(types[1].data.size(), 5u);
  for (const ComponentTypeView& type : types) {
    // In-place use: instance data starts 16-byte aligned, and points into the blob.
    EXPECT_EQ(reinterpret_cast<uintptr_t>(type.data.data()) % layout::kAlignment, 0u);
    EXPECT_GE(type.data.data(), blob.data());
  }
}

TEST(EntityResourceView, RoundTripsRandomContents) {
  Random rng(testing::TestSeed());
  SCOPED_TRACE(rng.DescribeSeed());
  for (int iteration = 0; iteration < 200; ++iteration) {
    const EntityResourceContents contents = RandomContents(rng);
    STRATA_ASSERT_OK_AND_ASSIGN(std::vector<std::byte> blob, WriteEntityResource(contents));
    EXPECT_EQ(blob.size() % layout::kAlignment, 0u);
    STRATA_ASSERT_OK_AND_ASSIGN(EntityResourceView view, EntityResourceView::Create(blob));
    ASSERT_EQ(view.num_entities(), contents.parent_index.size());
    EXPECT_TRUE(std::equal(view.parent_index().begin(), view.parent_index().end(),
                           contents.parent_index.begin()));
    ASSERT_EQ(view.num_component_types(), contents.component_types.size());
    size_t t = 0;
    for (const ComponentTypeView& type : view.component_types()) {
      const ComponentTypeContents& expected = contents.component_types[t++];
      EXPECT_EQ(type.type, expected.type);
      EXPECT_EQ(type.instance_stride, expected.instance_stride);
      EXPECT_EQ(type.num_instances, expected.entity_index.size());
      EXPECT_TRUE(std::equal(type.entity_index.begin(), type.entity_index.end(),
                             expected.entity_index.begin(), expected.entity_index.end()));
      EXPECT_TRUE(std::equal(type.names.begin(), type.names.end(), expected.names.begin(),
                             expected.names.end()));
      EXPECT_TRUE(std::equal(type.data.begin(), type.data.end(), expected.data.begin(),
                             expected.data.end()));
    }
    ExpectSpansInside(view, blob);
  }
}

TEST(WriteEntityResource, RejectsInconsistentContents) {
  {
    EntityResourceContents c = SmallContents();
    c.component_types[0].names.pop_back();
    EXPECT_THAT(WriteEntityResource(c), StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("names")));
  }
  {
    EntityResourceContents c = SmallContents();
    c.component_types[1].entity_index = {3};
    EXPECT_THAT(WriteEntityResource(c), StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("entity 3")));
  }
  {
    EntityResourceContents c = SmallContents();
    c.parent_index[1] = 1;  // self-parent
    EXPECT_THAT(WriteEntityResource(c), StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("precede")));
  }
  {
    EntityResourceContents c = SmallContents();
    c.component_types[1].type = c.component_types[0].type;
    EXPECT_THAT(WriteEntityResource(c), StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("twice")));
  }
  {
    EntityResourceContents c = SmallContents();
    c.component_types[0].data.pop_back();
    EXPECT_THAT(WriteEntityResource(c), StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("instances of 12")));
  }
}

TEST(EntityResourceView, RejectsMisalignedBlob) {
  std::vector<std::byte> blob = SmallBlob();
  std::vector<std::byte> shifted(blob.size() + 4);
  std::memcpy(shifted.data() + 4, blob.data(), blob.size());
  EXPECT_THAT(EntityResourceView::Create(absl::MakeConstSpan(shifted).subspan(4)),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("aligned")));
}

TEST(EntityResourceView, RejectsTruncationAtEveryOffset) {
  Random rng(testing::TestSeed());
  SCOPED_TRACE(rng.DescribeSeed());
  std::vector<std::vector<std::byte>> blobs = {SmallBlob()};
  for (int i = 0; i < 3; ++i) {
    STRATA_ASSERT_OK_AND_ASSIGN(std::vector<std::byte> blob, WriteEntityResource(RandomContents(rng)));
    blobs.push_back(std::move(blob));
  }
  for (const std::vector<std::byte>& blob : blobs) {
    for (size_t length = 0; length < blob.size(); ++length) {
      const std::vector<std::byte> prefix(blob.begin(), blob.begin() + length);  // aligned copy
      for (bool verify : {true, false}) {
        EXPECT_THAT(EntityResourceView::Create(prefix, {.verify_checksum = verify}),
                    StatusIs(absl::StatusCode::kDataLoss))
            << "length " << length << " of " << blob.size();
      }
    }
  }
}

TEST(EntityResourceView, RejectsTrailingBytes) {
  std::vector<std::byte> blob = SmallBlob();
  blob.resize(blob.size() + 16);
  EXPECT_THAT(EntityResourceView::Create(blob), StatusIs(absl::StatusCode::kDataLoss));
  Put32(blob, layout::kTotalSizeOffset, static_cast<uint32_t>(blob.size()));
  FixChecksum(blob);
  EXPECT_THAT(EntityResourceView::Create(blob),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("trailing")));
}

TEST(EntityResourceView, ChecksumCatchesEveryFlippedByte) {
  const std::vector<std::byte> blob = SmallBlob();
  for (size_t i = 0; i < blob.size(); ++i) {
    for (int bit = 0; bit < 8; ++bit) {
      std::vector<std::byte> corrupt = blob;
      corrupt[i] ^= std::byte(1 << bit);
      EXPECT_FALSE(EntityResourceView::Create(corrupt).ok()) << "byte " << i << " bit " << bit;
    }
  }
}

// Every header and section-header field, overwritten with hostile values and
// re-signed: the structure checks alone must reject or, if the value happens to be
// consistent, yield a view whose every span is inside the blob.
TEST(EntityResourceView, StructureChecksSurviveHostileCountsAndOffsets) {
  const std::vector<std::byte> blob = SmallBlob();
  std::vector<size_t> fields;
  for (size_t f = 4; f < layout::kHeaderSize; f += 4) {
    if (f != layout::kChecksumOffset) fields.push_back(f);
  }
  for (size_t section : {kFirstSection, kFirstSection + 32 + 16 + 32}) {
    for (size_t f = 0; f < layout::kSectionHeaderSize; f += 4) fields.push_back(section + f);
  }
  // The second section starts after the first: header 32, 2 indices + 2 names = 16,
  // data 24 padded to 32.
  ASSERT_EQ(Get32(blob, kFirstSection + layout::kSectionSizeOffset), 32u + 16 + 32);
  for (size_t field : fields) {
    const uint32_t original = Get32(blob, field);
    for (uint32_t value : {original + 1, original - 1, original + 16, original ^ 0x80000000u,
                           0u, 0xFFFFFFFFu, 0x7FFFFFFFu, original * 2}) {
      if (value == original) continue;
      std::vector<std::byte> corrupt = blob;
      Put32(corrupt, field, value);
      EXPECT_FALSE(EntityResourceView::Create(corrupt).ok()) << "checksum, field " << field;
      FixChecksum(corrupt);
      absl::StatusOr<EntityResourceView> view = EntityResourceView::Create(corrupt);
      if (view.ok()) ExpectSpansInside(*view, corrupt);
    }
  }
}

TEST(EntityResourceView, RejectsEachStructuralInconsistency) {
  struct Case {
    const char* what;
    size_t offset;
    uint32_t value;
    const char* message;
  };
  const size_t s = kFirstSection;
  const Case cases[] = {
      {"total size", layout::kTotalSizeOffset, 0, "header says"},
      {"num_entities past end", layout::kNumEntitiesOffset, 1000, "num_entities"},
      {"types offset", layout::kComponentTypesOffsetOffset, 64, "component_types_offset"},
      {"too many types", layout::kNumComponentTypesOffset, 100, "cannot fit"},
      {"data offset", s + layout::kSectionDataOffsetOffset, 80, "data_offset"},
      {"section size", s + layout::kSectionSizeOffset, 96, "section_size"},
      {"data size vs stride", s + layout::kSectionDataSizeOffset, 25, "instances of 12"},
      {"stride", s + layout::kSectionStrideOffset, 4, "instances of 4"},
      {"reserved", s + layout::kSectionReservedOffset, 7, "reserved"},
      {"entity index", s + layout::kSectionEntityIndexOffset, 3, "belongs to entity 3"},
      {"parent out of range", layout::kParentIndexOffset + 4, 9, "out of range"},
      {"self parent", layout::kParentIndexOffset + 4, 1, "precede"},
      {"forward parent (cycle 0->2->0)", layout::kParentIndexOffset, 2, "precede"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    std::vector<std::byte> blob = SmallBlob();
    Put32(blob, c.offset, c.value);
    FixChecksum(blob);
    EXPECT_THAT(EntityResourceView::Create(blob),
                StatusIs(absl::StatusCode::kDataLoss, HasSubstr(c.message)));
  }
}

TEST(EntityResourceView, RejectsRepeatedComponentType) {
  std::vector<std::byte> blob = SmallBlob();
  const size_t second = kFirstSection + Get32(blob, kFirstSection + layout::kSectionSizeOffset);
  Put32(blob, second + layout::kSectionTypeOffset, IdString32("transform").value());
  FixChecksum(blob);
  EXPECT_THAT(EntityResourceView::Create(blob),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("appears twice")));
}

TEST(EntityResourceView, RejectsWrongMagicVersionAndEndianness) {
  {
    std::vector<std::byte> blob = SmallBlob();
    blob[0] = std::byte{'X'};
    EXPECT_THAT(EntityResourceView::Create(blob), StatusIs(absl::StatusCode::kDataLoss, HasSubstr("magic")));
  }
  {
    std::vector<std::byte> blob = SmallBlob();
    Put32(blob, layout::kVersionOffset, layout::kFormatVersion + 1);
    FixChecksum(blob);
    EXPECT_THAT(EntityResourceView::Create(blob),
                StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("format version 3")));
  }
  {
    std::vector<std::byte> blob = SmallBlob();
    Put32(blob, layout::kEndianMarkerOffset, 0x01010101u);
    EXPECT_THAT(EntityResourceView::Create(blob),
                StatusIs(absl::StatusCode::kDataLoss, HasSubstr("endian marker")));
  }
  {
    const Endianness other =
        kNativeEndianness == Endianness::kLittle ? Endianness::kBig : Endianness::kLittle;
    STRATA_ASSERT_OK_AND_ASSIGN(std::vector<std::byte> blob,
                                WriteEntityResource(SmallContents(), other));
    EXPECT_THAT(EntityResourceView::Create(blob),
                StatusIs(absl::StatusCode::kFailedPrecondition,
                         HasSubstr(std::string("blob is ") + EndiannessName(other) + "-endian")));
  }
}

TEST(WriteEntityResource, OtherEndiannessIsByteSwappedNative) {
  const Endianness other =
      kNativeEndianness == Endianness::kLittle ? Endianness::kBig : Endianness::kLittle;
  const std::vector<std::byte> native = SmallBlob();
  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<std::byte> swapped,
                              WriteEntityResource(SmallContents(), other));
  ASSERT_EQ(native.size(), swapped.size());
  // Header and parent_index are all uint32 fields: each is the byte reverse.
  for (size_t f = 4; f < kFirstSection; f += 4) {
    if (f == layout::kChecksumOffset) continue;
    for (size_t b = 0; b < 4; ++b) EXPECT_EQ(native[f + b], swapped[f + 3 - b]) << f;
  }
  // Instance data is written by compile functions already in the target order: copied.
  EXPECT_EQ(native[kFirstSection + 48], swapped[kFirstSection + 48]);
}

TEST(ResourceChecksum, NeedsAtLeastTheHeader) {
  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<std::byte> blob, WriteEntityResource(SmallContents()));
  // The header alone is enough; the checksum of a written blob is the stored one.
  EXPECT_EQ(ResourceChecksum(blob), Get32(blob, layout::kChecksumOffset));
  const std::vector<std::byte> header(blob.begin(), blob.begin() + layout::kHeaderSize);
  ResourceChecksum(header);
  const std::vector<std::byte> shorter(blob.begin(), blob.begin() + layout::kHeaderSize - 1);
  EXPECT_DEATH(ResourceChecksum(shorter), "ResourceChecksum: the blob is shorter than the header");
  EXPECT_DEATH(ResourceChecksum({}), "ResourceChecksum: the blob is shorter than the header");
}

}  // namespace
}  // namespace strata
