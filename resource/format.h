// Entity resource format: one flat, offset-only binary blob describing a set of
// entities (a level or a prefab), grouped by component type so spawning does similar
// things together ("Building a Data-Oriented Entity System", part 4).
//
// The blob is used in place: EntityResourceView::Create validates every count, size,
// offset, alignment and parent index once, and afterwards every accessor is a bounds-
// free read. WriteEntityResource builds a blob from plain vectors (the compiler and
// the tests use it).
//
//   EntityResourceContents contents;
//   contents.parent_index = {kNoParent, 0};            // entity 1 is a child of 0
//   ComponentTypeContents& health = contents.component_types.emplace_back();
//   health.type = IdString32("health");
//   health.instance_stride = 4;
//   health.entity_index = {1};
//   health.names = {IdString32("health").value()};
//   health.data = ...4 bytes...;
//   absl::StatusOr<std::vector<std::byte>> blob = WriteEntityResource(contents);
//   absl::StatusOr<EntityResourceView> view = EntityResourceView::Create(*blob);
//   for (const ComponentTypeView& type : view->component_types()) {
//     // type.entity_index[i] owns instance i; type.data holds all instance data.
//   }
//
// Byte layout (every field a uint32 in the blob's byte order; resource/README.md has
// the full table):
//   header (32 bytes): magic "STRE", version, endian marker 0x01020304, total_size,
//     num_entities, num_component_types, component_types_offset, checksum (XXH32)
//   parent_index[num_entities]                 (kNoParent for roots; parent < child)
//   zero padding to 16
//   num_component_types sections, in spawn order, each 16-aligned:
//     section header (32 bytes): component identifier (IdString32 of the type name),
//       num_instances, instance_stride (0 = variable-size instances), data_size,
//       data_offset (from the section start), section_size, layout_fingerprint
//       (0 = none; see ComponentTypeView::layout_fingerprint), reserved 0
//     entity_index[num_instances]              (< num_entities)
//     name[num_instances]                      (IdString32 of each instance's name)
//     zero padding to 16
//     instance data[data_size]                 (16-aligned: usable in place)
//     zero padding to 16
//
// NOTE: the layout is canonical: every offset the blob stores must equal the offset
// the counts imply, so a blob has exactly one valid encoding of its counts and a
// flipped count or offset is caught by the structure checks most of the time and by
// the checksum always (every byte of the blob is covered). Entities are in parent-before-child
// order (parent_index[i] < i), which also rules out cycles and self-parenting.
#ifndef STRATA_RESOURCE_FORMAT_H_
#define STRATA_RESOURCE_FORMAT_H_

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <utility>
#include <vector>

#include "absl/base/config.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "base/id_string.h"

namespace strata {

// kNoParent: parent_index value of a root entity.
inline constexpr uint32_t kNoParent = 0xFFFFFFFFu;
// kNoEntityRef: the value of an entity-reference field that refers to no entity.
inline constexpr uint32_t kNoEntityRef = 0xFFFFFFFFu;

// Endianness: the byte order a blob is written in. Only blobs in the reading machine's
// order are accepted; the compiler can write the other order for another platform.
enum class Endianness : uint8_t { kLittle, kBig };

#ifdef ABSL_IS_BIG_ENDIAN
inline constexpr Endianness kNativeEndianness = Endianness::kBig;
#else
inline constexpr Endianness kNativeEndianness = Endianness::kLittle;
#endif

// "little" / "big".
const char* EndiannessName(Endianness endianness);

// Byte offsets and constants of the format, for tools and tests that inspect or patch
// blobs. NOTE: changing any of these changes the file format: bump kFormatVersion.
namespace entity_resource_layout {
inline constexpr char kMagic[4] = {'S', 'T', 'R', 'E'};
inline constexpr uint32_t kFormatVersion = 2;
inline constexpr uint32_t kEndianMarker = 0x01020304u;
// Alignment of the blob start, of every section and of every section's instance data.
inline constexpr size_t kAlignment = 16;
inline constexpr size_t kHeaderSize = 32;
inline constexpr size_t kMagicOffset = 0;
inline constexpr size_t kVersionOffset = 4;
inline constexpr size_t kEndianMarkerOffset = 8;
inline constexpr size_t kTotalSizeOffset = 12;
inline constexpr size_t kNumEntitiesOffset = 16;
inline constexpr size_t kNumComponentTypesOffset = 20;
inline constexpr size_t kComponentTypesOffsetOffset = 24;
// kChecksumOffset: XXH32(blob[32, total_size), seed = XXH32(blob[0, 28), seed 0)):
// the whole blob except the checksum itself.
inline constexpr size_t kChecksumOffset = 28;
inline constexpr size_t kParentIndexOffset = kHeaderSize;
// Section header fields, relative to the section start.
inline constexpr size_t kSectionHeaderSize = 32;
inline constexpr size_t kSectionTypeOffset = 0;
inline constexpr size_t kSectionNumInstancesOffset = 4;
inline constexpr size_t kSectionStrideOffset = 8;
inline constexpr size_t kSectionDataSizeOffset = 12;
inline constexpr size_t kSectionDataOffsetOffset = 16;
inline constexpr size_t kSectionSizeOffset = 20;
inline constexpr size_t kSectionLayoutFingerprintOffset = 24;
inline constexpr size_t kSectionReservedOffset = 28;  // one uint32, 0
inline constexpr size_t kSectionEntityIndexOffset = kSectionHeaderSize;
// The format stores sizes as uint32: a blob is smaller than 4 GiB.
inline constexpr uint64_t kMaxBlobSize = 0xFFFFFFF0u;

// AlignUp: `n` rounded up to a multiple of kAlignment.
constexpr uint64_t AlignUp(uint64_t n) { return (n + kAlignment - 1) & ~uint64_t{kAlignment - 1}; }
// DataOffset: where a section's instance data starts, relative to the section.
constexpr uint64_t DataOffset(uint64_t num_instances) {
  return AlignUp(kSectionHeaderSize + 8 * num_instances);
}
}  // namespace entity_resource_layout

// ComponentTypeView: one component type's instances inside a validated blob. Spans
// point into the blob and stay valid while the blob does. Every entity_index value is
// < the view's num_entities; data.size() == num_instances * instance_stride when the
// stride is not 0. data.data() is 16-byte aligned.
struct ComponentTypeView {
  IdString32 type;
  uint32_t num_instances = 0;
  // instance_stride: bytes per instance, or 0 when instances have different sizes
  // and the component's own data says where each one starts.
  uint32_t instance_stride = 0;
  absl::Span<const uint32_t> entity_index;
  // names[i]: IdString32 value of instance i's name; see name(i).
  absl::Span<const uint32_t> names;
  absl::Span<const std::byte> data;
  // layout_fingerprint: a hash of the instance layout the writer declared (field names,
  // types and sizes), so a reader can tell that the bytes mean what it expects; 0 when
  // the writer declared none.
  uint32_t layout_fingerprint = 0;
  // offset: where the section starts in the blob (for diagnostics).
  size_t offset = 0;

  IdString32 name(size_t i) const { return IdString32::FromValue(names[i]); }
};

// ResourceValidateOptions: how much EntityResourceView::Create checks.
struct ResourceValidateOptions {
  // verify_checksum: compare the header checksum with the bytes (O(blob size), a few
  // GB/s). Structure checks always run; turning this off is for fuzzing the structure
  // checks, which random bytes would otherwise never reach.
  bool verify_checksum = true;
};

// ResourceChecksum: the checksum a blob of these bytes should store (see
// kChecksumOffset). `blob` must be at least kHeaderSize bytes (STRATA_CHECK: check an
// outside blob's size first, as EntityResourceView::Create does). O(blob size).
uint32_t ResourceChecksum(absl::Span<const std::byte> blob);

// EntityResourceView: a validated, read-only view of an entity resource blob. Cheap to
// copy (a span and two counts); it does not own the blob, which must outlive it and
// must not change. Thread-safe for concurrent readers.
class EntityResourceView {
 public:
  class Iterator;
  class Range;

  // Create: validates `blob` completely and returns a view of it, in
  // O(num_entities + total instances). Errors, nothing read out of bounds:
  //   InvalidArgument     blob.data() not 16-byte aligned
  //   DataLoss            too short, bad magic, total_size != blob.size(), checksum
  //                       mismatch, any count,
  //                       size, stride or offset inconsistent or out of range, a
  //                       parent or entity index out of range, a parent not before its
  //                       child (which includes cycles), a repeated component type,
  //                       reserved fields not 0
  //   FailedPrecondition  other format version, or other endianness (the message says
  //                       which byte order the blob has and which this machine reads)
  // A blob that passes is safe to read through every accessor below.
  static absl::StatusOr<EntityResourceView> Create(
      absl::Span<const std::byte> blob,
      const ResourceValidateOptions& options = ResourceValidateOptions());

  uint32_t num_entities() const { return num_entities_; }
  uint32_t num_component_types() const { return num_component_types_; }
  // parent_index: one per entity, kNoParent for roots; parent_index[i] < i otherwise.
  absl::Span<const uint32_t> parent_index() const {
    return absl::MakeConstSpan(
        reinterpret_cast<const uint32_t*>(blob_.data() + entity_resource_layout::kParentIndexOffset),
        num_entities_);
  }
  // component_types: the sections in spawn order; iterating is O(1) per section (one
  // jump by section_size, whatever the section holds).
  Range component_types() const;
  // blob: the bytes this view reads.
  absl::Span<const std::byte> blob() const { return blob_; }

 private:
  EntityResourceView(absl::Span<const std::byte> blob, uint32_t num_entities,
                     uint32_t num_component_types)
      : blob_(blob), num_entities_(num_entities), num_component_types_(num_component_types) {}

  absl::Span<const std::byte> blob_;
  uint32_t num_entities_ = 0;
  uint32_t num_component_types_ = 0;
};

// EntityResource: a blob and its validated view, owned together, for whoever keeps a
// resource beyond the call that validated it (World::SpawnLevel, World::Reload).
// Move-only: moving keeps the bytes where they are, so the view stays valid.
//
//   absl::StatusOr<EntityResource> level = EntityResource::Create(std::move(blob));
//   level->view().num_entities();
class EntityResource {
 public:
  // Create: validates `blob` (EntityResourceView::Create's errors) and takes it.
  static absl::StatusOr<EntityResource> Create(
      std::vector<std::byte> blob, const ResourceValidateOptions& options = ResourceValidateOptions());

  EntityResource(EntityResource&&) = default;
  EntityResource& operator=(EntityResource&&) = default;
  EntityResource(const EntityResource&) = delete;
  EntityResource& operator=(const EntityResource&) = delete;

  const EntityResourceView& view() const { return view_; }
  size_t size() const { return blob_.size(); }

 private:
  EntityResource(std::vector<std::byte> blob, EntityResourceView view)
      : blob_(std::move(blob)), view_(view) {}
  // NOTE: a vector's move keeps its buffer, which view_ reads.
  std::vector<std::byte> blob_;
  EntityResourceView view_;
};

// Forward iterator over the sections of a validated blob.
class EntityResourceView::Iterator {
 public:
  using iterator_category = std::forward_iterator_tag;
  using value_type = ComponentTypeView;
  using difference_type = std::ptrdiff_t;
  using pointer = const ComponentTypeView*;
  using reference = ComponentTypeView;

  Iterator() = default;
  ComponentTypeView operator*() const;
  Iterator& operator++();
  Iterator operator++(int) {
    Iterator old = *this;
    ++*this;
    return old;
  }
  friend bool operator==(const Iterator& a, const Iterator& b) { return a.remaining_ == b.remaining_; }
  friend bool operator!=(const Iterator& a, const Iterator& b) { return !(a == b); }

 private:
  friend class EntityResourceView;
  Iterator(const std::byte* base, size_t offset, uint32_t remaining)
      : base_(base), offset_(offset), remaining_(remaining) {}

  uint32_t Field(size_t field_offset) const {
    uint32_t v;
    std::memcpy(&v, base_ + offset_ + field_offset, sizeof(v));
    return v;
  }

  const std::byte* base_ = nullptr;
  size_t offset_ = 0;
  uint32_t remaining_ = 0;
};

class EntityResourceView::Range {
 public:
  Iterator begin() const { return begin_; }
  Iterator end() const { return Iterator(); }
  size_t size() const { return size_; }

 private:
  friend class EntityResourceView;
  Range(Iterator begin, size_t size) : begin_(begin), size_(size) {}
  Iterator begin_;
  size_t size_;
};

// ComponentTypeContents / EntityResourceContents: a resource as plain vectors, the
// input of WriteEntityResource. `data` is already in the target byte order (the
// component's compile function wrote it so).
struct ComponentTypeContents {
  IdString32 type;
  uint32_t instance_stride = 0;
  uint32_t layout_fingerprint = 0;
  std::vector<uint32_t> entity_index;
  std::vector<uint32_t> names;
  std::vector<std::byte> data;
};

struct EntityResourceContents {
  std::vector<uint32_t> parent_index;
  // In spawn order.
  std::vector<ComponentTypeContents> component_types;
};

// WriteEntityResource: encodes `contents` as a blob in `endianness` byte order. The
// result (when native) always passes EntityResourceView::Create. O(total size).
// Errors: InvalidArgument when the contents break an invariant (names/entity_index
// size mismatch, an index out of range, a parent not before its child, a repeated
// type, data size not num_instances * stride); ResourceExhausted when the blob would
// reach 4 GiB.
absl::StatusOr<std::vector<std::byte>> WriteEntityResource(
    const EntityResourceContents& contents, Endianness endianness = kNativeEndianness);

}  // namespace strata

#endif  // STRATA_RESOURCE_FORMAT_H_
