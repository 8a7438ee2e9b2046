// Metadata sections: sections of an entity resource that describe the resource rather
// than hold components. Their types are reserved names beginning with "strata.":
//
//   strata.entity_names  instance i names entity entity_index[i]: the text of the
//                        entity's "name" in the level (names[i] is its IdString32)
//   strata.names         the text of every instance name that is not its type's name
//                        ("Fog", "Transform"), so tools print and export names, not hashes
//   strata.layouts       instance i is the declared layout (field names, types and sizes,
//                        as text) of component type names[i], whose section's
//                        layout_fingerprint is the XXH32 of that text
//
//   strata.prefabs       the prefabs of the level and which entities came from them
//                        (resource/prefab.h; not a string section)
//
// The first three are string sections: stride 0, data = uint32 end[n] (blob byte order; the
// end offset of string i within the bytes that follow) then the bytes of the strings.
// The spawner passes over metadata sections without counting them as skipped types.
//
//   EntityResourceContents contents = ...;
//   contents.component_types.push_back(MakeStringSection(
//       IdString32(kEntityNamesSection), {0}, {"player"}, kNativeEndianness));
//   ...
//   absl::StatusOr<ResourceMetadata> meta = ReadResourceMetadata(view);
//   meta->EntityName(0);   // "player"
#ifndef STRATA_RESOURCE_METADATA_H_
#define STRATA_RESOURCE_METADATA_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "base/id_string.h"
#include "resource/format.h"

namespace strata {

inline constexpr absl::string_view kEntityNamesSection = "strata.entity_names";
inline constexpr absl::string_view kNameStringsSection = "strata.names";
inline constexpr absl::string_view kLayoutsSection = "strata.layouts";

// IsMetadataSection: whether `type` is one of the reserved section types above.
bool IsMetadataSection(IdString32 type);

// MakeStringSection: a string section of `type`: instance i belongs to entity_index[i],
// has name id IdString32(strings[i]) when `names` is empty (else names[i]) and data
// strings[i]. Sizes must agree (STRATA_CHECK: entity_index and a non-empty names have
// one entry per string).
ComponentTypeContents MakeStringSection(IdString32 type, std::vector<uint32_t> entity_index,
                                        std::vector<uint32_t> names,
                                        absl::Span<const std::string> strings,
                                        Endianness endianness);

// MetadataSections: what a writer of levels (the compiler, World::Save) knows of its
// metadata. AppendTo writes the sections in the one order every writer uses, so a saved
// level and the same level compiled from its export are the same bytes: entity names
// (by ascending entity number), name texts (sorted by id), layouts (in spawn order).
// Empty lists write no section.
struct MetadataSections {
  std::vector<uint32_t> named_entities;  // ascending entity numbers
  std::vector<std::string> entity_names;  // entity_names[i] names named_entities[i]
  std::vector<std::pair<uint32_t, std::string>> name_texts;  // (IdString32 value, text)
  std::vector<uint32_t> layout_types;  // IdString32 value of each type, in spawn order
  std::vector<std::string> layouts;  // layouts[i] is layout_types[i]'s

  void AppendTo(std::vector<ComponentTypeContents>& sections, Endianness endianness) &&;
};

// ReadStringSection: the strings of a string section of a validated view. DataLoss if
// the section is not a well-formed string section (stride not 0, end offsets out of
// order or past the data) or a string is not UTF-8 (naming the string and the byte).
// The views point into the blob. O(bytes).
absl::StatusOr<std::vector<absl::string_view>> ReadStringSection(const ComponentTypeView& section);

// ResourceMetadata: the metadata sections of a validated view, looked up by key. The
// views point into the blob.
struct ResourceMetadata {
  absl::flat_hash_map<uint32_t, absl::string_view> entity_names;  // by entity number
  absl::flat_hash_map<uint32_t, absl::string_view> names;         // by IdString32 value
  absl::flat_hash_map<uint32_t, absl::string_view> layouts;       // by component type

  // EntityName: the name of entity `k`, or "" if it has none.
  absl::string_view EntityName(uint32_t k) const;
  // NameText: the text of name id `id`, or nullptr if the resource does not carry it.
  const absl::string_view* NameText(uint32_t id) const;
};

// ReadResourceMetadata: every metadata section of `view`. DataLoss for a malformed
// section, a string that is not UTF-8, or a string whose IdString32 is not the id
// stored beside it. Every text it yields can be written as a JSON string.
absl::StatusOr<ResourceMetadata> ReadResourceMetadata(const EntityResourceView& view);

}  // namespace strata

#endif  // STRATA_RESOURCE_METADATA_H_
