#include "resource/format.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <utility>

#include "absl/base/internal/endian.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "base/check.h"
#include "base/huge_page_allocator.h"
#include "xxhash.h"

namespace strata {
namespace {

namespace layout = entity_resource_layout;

uint32_t Load32(const std::byte* p) {
  uint32_t v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}

// ComponentTypesOffset: where the first section starts, right after the parent_index
// array padded to 16 (the only offset the header may store).
uint64_t ComponentTypesOffset(uint64_t num_entities) {
  return layout::AlignUp(layout::kParentIndexOffset + 4 * num_entities);
}

absl::Status Corrupt(const std::string& what) {
  return absl::DataLossError(absl::StrCat("entity resource: ", what));
}

}  // namespace

const char* EndiannessName(Endianness endianness) {
  return endianness == Endianness::kLittle ? "little" : "big";
}

uint32_t ResourceChecksum(absl::Span<const std::byte> blob) {
  STRATA_CHECK(blob.size() >= layout::kHeaderSize,
               "ResourceChecksum: the blob is shorter than the header (validate its size first)");
  const uint32_t header_hash = XXH32(blob.data(), layout::kChecksumOffset, 0);
  return XXH32(blob.data() + layout::kHeaderSize, blob.size() - layout::kHeaderSize, header_hash);
}

absl::StatusOr<EntityResource> EntityResource::Create(std::vector<std::byte> blob,
                                                     const ResourceValidateOptions& options) {
  absl::StatusOr<EntityResourceView> view = EntityResourceView::Create(blob, options);
  if (!view.ok()) return view.status();
  // NOTE: moving the vector keeps the buffer the view reads.
  return EntityResource(std::move(blob), *view);
}

absl::StatusOr<EntityResourceView> EntityResourceView::Create(
    absl::Span<const std::byte> blob, const ResourceValidateOptions& options) {
  // Every size below is computed in 64 bits from 32-bit fields, so no sum or product
  // can wrap before it is compared with blob.size().
  const uint64_t size = blob.size();
  if (reinterpret_cast<uintptr_t>(blob.data()) % layout::kAlignment != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "entity resource: blob must start at a ", layout::kAlignment,
        "-byte aligned address so instance data can be used in place"));
  }
  if (size < layout::kHeaderSize) {
    return Corrupt(absl::StrCat("truncated: ", size, " bytes, the header alone is ",
                                layout::kHeaderSize));
  }
  const std::byte* base = blob.data();
  if (std::memcmp(base + layout::kMagicOffset, layout::kMagic, sizeof(layout::kMagic)) != 0) {
    return Corrupt("bad magic (not an entity resource)");
  }
  const uint32_t marker = Load32(base + layout::kEndianMarkerOffset);
  if (marker != layout::kEndianMarker) {
    if (marker == absl::gbswap_32(layout::kEndianMarker)) {
      const Endianness other = kNativeEndianness == Endianness::kLittle ? Endianness::kBig
                                                                       : Endianness::kLittle;
      return absl::FailedPreconditionError(absl::StrCat(
          "entity resource: blob is ", EndiannessName(other), "-endian but this machine reads ",
          EndiannessName(kNativeEndianness), "-endian blobs; recompile it for this platform"));
    }
    return Corrupt(absl::StrCat("bad endian marker 0x", absl::Hex(marker)));
  }
  const uint32_t version = Load32(base + layout::kVersionOffset);
  if (version != layout::kFormatVersion) {
    return absl::FailedPreconditionError(
        absl::StrCat("entity resource: format version ", version, ", this reader supports ",
                     layout::kFormatVersion));
  }
  const uint64_t total_size = Load32(base + layout::kTotalSizeOffset);
  if (total_size != size) {
    return Corrupt(absl::StrCat("header says ", total_size, " bytes, blob has ", size,
                                total_size > size ? " (truncated)" : ""));
  }
  if (options.verify_checksum) {
    const uint32_t stored = Load32(base + layout::kChecksumOffset);
    const uint32_t computed = ResourceChecksum(blob);
    if (stored != computed) {
      return Corrupt(absl::StrCat("checksum mismatch (stored 0x", absl::Hex(stored),
                                  ", computed 0x", absl::Hex(computed), "): the blob is corrupt"));
    }
  }
  const uint32_t num_entities = Load32(base + layout::kNumEntitiesOffset);
  const uint32_t num_types = Load32(base + layout::kNumComponentTypesOffset);
  const uint64_t parents_end = layout::kParentIndexOffset + uint64_t{4} * num_entities;
  if (parents_end > size) {
    return Corrupt(absl::StrCat("num_entities ", num_entities, " needs ", parents_end,
                                " bytes, blob has ", size));
  }
  const uint64_t types_offset = ComponentTypesOffset(num_entities);
  if (Load32(base + layout::kComponentTypesOffsetOffset) != types_offset) {
    return Corrupt(absl::StrCat("component_types_offset ",
                                Load32(base + layout::kComponentTypesOffsetOffset),
                                " should be ", types_offset));
  }
  const std::byte* parents = base + layout::kParentIndexOffset;
  for (uint32_t i = 0; i < num_entities; ++i) {
    const uint32_t parent = Load32(parents + 4 * uint64_t{i});
    if (parent != kNoParent && parent >= i) {
      return Corrupt(absl::StrCat(
          "entity ", i, " has parent ", parent,
          parent >= num_entities ? " (out of range)"
                                 : " (parents must precede children; this rules out cycles)"));
    }
  }
  // A section is at least its header, so this bounds num_types before any allocation.
  if (uint64_t{num_types} * layout::kSectionHeaderSize > size - std::min(size, types_offset)) {
    return Corrupt(absl::StrCat("num_component_types ", num_types, " cannot fit in ",
                                size, " bytes"));
  }
  absl::flat_hash_set<uint32_t> seen_types;
  seen_types.reserve(num_types);
  uint64_t offset = types_offset;
  for (uint32_t t = 0; t < num_types; ++t) {
    // Built only on error: the success path stays allocation-free per section.
    auto where = [&] { return absl::StrCat("component type section ", t, " at offset ", offset); };
    if (offset + layout::kSectionHeaderSize > size) {
      return Corrupt(absl::StrCat(where(), ": header truncated"));
    }
    const std::byte* section = base + offset;
    const uint32_t type = Load32(section + layout::kSectionTypeOffset);
    const uint64_t num_instances = Load32(section + layout::kSectionNumInstancesOffset);
    const uint64_t stride = Load32(section + layout::kSectionStrideOffset);
    const uint64_t data_size = Load32(section + layout::kSectionDataSizeOffset);
    const uint64_t data_offset = Load32(section + layout::kSectionDataOffsetOffset);
    const uint64_t section_size = Load32(section + layout::kSectionSizeOffset);
    if (!seen_types.insert(type).second) {
      return Corrupt(absl::StrCat(where(), ": component type ", IdString32::FromValue(type).DebugString(),
                                  " appears twice"));
    }
    if (Load32(section + layout::kSectionReservedOffset) != 0) {
      return Corrupt(absl::StrCat(where(), ": reserved field is not 0"));
    }
    if (data_offset != layout::DataOffset(num_instances)) {
      return Corrupt(absl::StrCat(where(), ": data_offset ", data_offset, " should be ",
                                  layout::DataOffset(num_instances), " for ", num_instances,
                                  " instances"));
    }
    if (stride != 0 && data_size != stride * num_instances) {
      return Corrupt(absl::StrCat(where(), ": data_size ", data_size, " is not ", num_instances,
                                  " instances of ", stride, " bytes"));
    }
    if (section_size != layout::AlignUp(data_offset + data_size)) {
      return Corrupt(absl::StrCat(where(), ": section_size ", section_size, " should be ",
                                  layout::AlignUp(data_offset + data_size)));
    }
    if (offset + section_size > size) {
      return Corrupt(absl::StrCat(where(), ": ", section_size, " bytes run past the end (",
                                  size, ")"));
    }
    const std::byte* entity_index = section + layout::kSectionEntityIndexOffset;
    for (uint64_t i = 0; i < num_instances; ++i) {
      const uint32_t e = Load32(entity_index + 4 * i);
      if (e >= num_entities) {
        return Corrupt(absl::StrCat(where(), ": instance ", i, " belongs to entity ", e,
                                    ", but there are ", num_entities));
      }
    }
    offset += section_size;
  }
  if (offset != size) {
    return Corrupt(absl::StrCat(size - offset, " trailing bytes after the last section"));
  }
  return EntityResourceView(blob, num_entities, num_types);
}

EntityResourceView::Range EntityResourceView::component_types() const {
  const size_t first = ComponentTypesOffset(num_entities_);
  return Range(Iterator(blob_.data(), first, num_component_types_), num_component_types_);
}

ComponentTypeView EntityResourceView::Iterator::operator*() const {
  const std::byte* section = base_ + offset_;
  ComponentTypeView view;
  view.type = IdString32::FromValue(Field(layout::kSectionTypeOffset));
  view.num_instances = Field(layout::kSectionNumInstancesOffset);
  view.instance_stride = Field(layout::kSectionStrideOffset);
  view.layout_fingerprint = Field(layout::kSectionLayoutFingerprintOffset);
  // NOTE: validated: the blob start is 16-aligned and every array offset a multiple of
  // 4, so the uint32 arrays are aligned for in-place reads.
  const auto* entity_index =
      reinterpret_cast<const uint32_t*>(section + layout::kSectionEntityIndexOffset);
  view.entity_index = absl::MakeConstSpan(entity_index, view.num_instances);
  view.names = absl::MakeConstSpan(entity_index + view.num_instances, view.num_instances);
  view.data = absl::MakeConstSpan(section + Field(layout::kSectionDataOffsetOffset),
                                  Field(layout::kSectionDataSizeOffset));
  view.offset = offset_;
  return view;
}

EntityResourceView::Iterator& EntityResourceView::Iterator::operator++() {
  offset_ += Field(layout::kSectionSizeOffset);
  --remaining_;
  return *this;
}

// ---------------------------------------------------------------------------------
// Writer.

namespace {

class BlobWriter {
 public:
  BlobWriter(size_t size, Endianness endianness) : swap_(endianness != kNativeEndianness) {
    // Advised huge before the zeroing first touches it: a level's blob of 100 MB is 48
    // page faults instead of 25k, and as cheap to hand back (a tool's exit).
    bytes_.reserve(size);
    AdviseHugePages(bytes_.data(), bytes_.capacity());
    bytes_.resize(size);
  }

  void Put32(size_t offset, uint32_t v) {
    if (swap_) v = absl::gbswap_32(v);
    std::memcpy(bytes_.data() + offset, &v, sizeof(v));
  }
  void PutBytes(size_t offset, absl::Span<const std::byte> data) {
    if (!data.empty()) std::memcpy(bytes_.data() + offset, data.data(), data.size());
  }
  std::vector<std::byte> Release() && { return std::move(bytes_); }

 private:
  std::vector<std::byte> bytes_;
  bool swap_;
};

}  // namespace

absl::StatusOr<std::vector<std::byte>> WriteEntityResource(const EntityResourceContents& contents,
                                                           Endianness endianness) {
  const uint64_t num_entities = contents.parent_index.size();
  if (num_entities >= kNoParent) {
    return absl::ResourceExhaustedError("entity resource: too many entities");
  }
  for (uint64_t i = 0; i < num_entities; ++i) {
    const uint32_t parent = contents.parent_index[i];
    if (parent != kNoParent && parent >= i) {
      return absl::InvalidArgumentError(absl::StrCat(
          "entity resource: entity ", i, " has parent ", parent, "; parents must precede children"));
    }
  }
  const uint64_t types_offset = ComponentTypesOffset(num_entities);
  uint64_t size = types_offset;
  absl::flat_hash_set<uint32_t> seen_types;
  for (const ComponentTypeContents& type : contents.component_types) {
    const uint64_t n = type.entity_index.size();
    if (!seen_types.insert(type.type.value()).second) {
      return absl::InvalidArgumentError(absl::StrCat("entity resource: component type ",
                                                     type.type.DebugString(), " appears twice"));
    }
    if (type.names.size() != n) {
      return absl::InvalidArgumentError(absl::StrCat(
          "entity resource: component type ", type.type.DebugString(), " has ", n,
          " entity indices but ", type.names.size(), " names"));
    }
    if (type.instance_stride != 0 && type.data.size() != n * type.instance_stride) {
      return absl::InvalidArgumentError(absl::StrCat(
          "entity resource: component type ", type.type.DebugString(), " has ", type.data.size(),
          " data bytes, not ", n, " instances of ", type.instance_stride));
    }
    for (uint32_t e : type.entity_index) {
      if (e >= num_entities) {
        return absl::InvalidArgumentError(absl::StrCat("entity resource: component type ",
                                                       type.type.DebugString(), " refers to entity ",
                                                       e, " of ", num_entities));
      }
    }
    size += layout::AlignUp(layout::DataOffset(n) + type.data.size());
    if (size > layout::kMaxBlobSize) break;
  }
  if (size > layout::kMaxBlobSize || contents.component_types.size() >= kNoParent) {
    return absl::ResourceExhaustedError("entity resource: blob would reach 4 GiB");
  }

  BlobWriter out(size, endianness);
  out.PutBytes(layout::kMagicOffset,
               absl::MakeConstSpan(reinterpret_cast<const std::byte*>(layout::kMagic),
                                   sizeof(layout::kMagic)));
  out.Put32(layout::kVersionOffset, layout::kFormatVersion);
  out.Put32(layout::kEndianMarkerOffset, layout::kEndianMarker);
  out.Put32(layout::kTotalSizeOffset, static_cast<uint32_t>(size));
  out.Put32(layout::kNumEntitiesOffset, static_cast<uint32_t>(num_entities));
  out.Put32(layout::kNumComponentTypesOffset,
            static_cast<uint32_t>(contents.component_types.size()));
  out.Put32(layout::kComponentTypesOffsetOffset, static_cast<uint32_t>(types_offset));
  for (uint64_t i = 0; i < num_entities; ++i) {
    out.Put32(layout::kParentIndexOffset + 4 * i, contents.parent_index[i]);
  }
  uint64_t offset = types_offset;
  for (const ComponentTypeContents& type : contents.component_types) {
    const uint64_t n = type.entity_index.size();
    const uint64_t data_offset = layout::DataOffset(n);
    const uint64_t section_size = layout::AlignUp(data_offset + type.data.size());
    out.Put32(offset + layout::kSectionTypeOffset, type.type.value());
    out.Put32(offset + layout::kSectionNumInstancesOffset, static_cast<uint32_t>(n));
    out.Put32(offset + layout::kSectionStrideOffset, type.instance_stride);
    out.Put32(offset + layout::kSectionDataSizeOffset, static_cast<uint32_t>(type.data.size()));
    out.Put32(offset + layout::kSectionDataOffsetOffset, static_cast<uint32_t>(data_offset));
    out.Put32(offset + layout::kSectionSizeOffset, static_cast<uint32_t>(section_size));
    out.Put32(offset + layout::kSectionLayoutFingerprintOffset, type.layout_fingerprint);
    for (uint64_t i = 0; i < n; ++i) {
      out.Put32(offset + layout::kSectionEntityIndexOffset + 4 * i, type.entity_index[i]);
      out.Put32(offset + layout::kSectionEntityIndexOffset + 4 * (n + i), type.names[i]);
    }
    out.PutBytes(offset + data_offset, type.data);
    offset += section_size;
  }
  std::vector<std::byte> bytes = std::move(out).Release();
  // The checksum covers the bytes as written, so it is computed over the final order.
  uint32_t checksum = ResourceChecksum(bytes);
  if (endianness != kNativeEndianness) checksum = absl::gbswap_32(checksum);
  std::memcpy(bytes.data() + layout::kChecksumOffset, &checksum, sizeof(checksum));
  return bytes;
}

}  // namespace strata
