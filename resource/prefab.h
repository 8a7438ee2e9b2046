// Prefab section: what an entity resource records of the prefabs its level declared
// (resource/entity_compiler.h has the level syntax). The compiler flattens instances
// (every instance's components hold the prefab's values with the level's overrides
// applied, so spawning and queries pay nothing for prefabs) and writes this section
// beside them:
//   - the prefab definitions, each a complete entity resource of the prefab's flattened
//     entities (entity 0 is the prefab's root, the others its children), with the
//     prefab's name;
//   - per entity that came from a prefab: which prefab and which of its entities
//     ("node": 0 for the instance's root, k for the prefab's entity k);
//   - per component instance of an instance's root that the level wrote: a bit per
//     declared field (the order of the type's layout) that the level overrode, or
//     "added" for a component the prefab does not have.
// A delta resource (World::SaveAll's; resource/prefab_delta.h) sets the header's delta
// flag: its entities from prefabs carry only the components that differ from the
// prefab's, with masks for those that differ in part and "removed" records for the
// prefab's components an entity no longer has; it may name a prefab without carrying
// it (blob_size 0: the loader must know the prefab).
//
//   absl::StatusOr<PrefabTable> table = ReadPrefabTable(view);   // empty if none
//   for (const PrefabEntityRecord& r : table->entities) {
//     absl::string_view prefab = table->prefabs[r.prefab].name;
//   }
//
// Byte layout (section type IdString32("strata.prefabs"), no instances, stride 0; every
// word a uint32 in the blob's byte order; data offsets from the section's data start):
//   header (8 words): version (1), num_prefabs, num_entity_records,
//     num_override_records, num_mask_words, string_bytes, flags (1: delta), 0
//   prefabs[num_prefabs]: name_end (into the strings), blob_offset, blob_size, 0
//   entity_records[n]: entity, prefab, node                 (entity strictly ascending)
//   override_records[m]: type, entity, name, mask_begin, mask_words, flags
//                        (mask_begin: the running sum of mask_words, from 0; flags
//                        0: the mask, 1: added, 2: removed (delta only, no mask),
//                        3: value diffs (delta only))
//   masks[num_mask_words]
//   strings[string_bytes] (the prefab names, one after another)
//   zero padding to 16, then each prefab's blob, each padded to 16 (blob_offset: where
//   it starts, 16-aligned; the layout is canonical: offsets are what the sizes imply)
#ifndef STRATA_RESOURCE_PREFAB_H_
#define STRATA_RESOURCE_PREFAB_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "base/id_string.h"
#include "resource/format.h"

namespace strata {

inline constexpr absl::string_view kPrefabsSection = "strata.prefabs";
inline constexpr uint32_t kPrefabSectionVersion = 1;

// PrefabEntityRecord: entity `entity` of the resource is entity `node` of prefab
// `prefab` (node 0: the root of an instance).
struct PrefabEntityRecord {
  uint32_t entity = 0;
  uint32_t prefab = 0;
  uint32_t node = 0;
};

// PrefabOverrideRecord: the component instance named `name` of type `type` on `entity`
// (an instance's root, or in a delta any entity from a prefab): mask bit i set when the
// level overrode the type's declared field i; `added` when the prefab has no such
// component (the level wrote all of it). In a delta only: the mask of a plain record
// says which fields of the written component are the entity's own (the others are the
// prefab's; no record: all of them), `removed` says the entity no longer has the
// prefab's component, and a `value_diff` record marks those of the entity's own fields
// that only differed from the prefab's at the save (the level did not override them:
// after a load they follow the prefab again once set back to its value).
struct PrefabOverrideRecord {
  uint32_t type = 0;
  uint32_t entity = 0;
  uint32_t name = 0;
  std::vector<uint32_t> mask;
  bool added = false;
  bool removed = false;
  bool value_diff = false;

  bool Overrides(size_t field) const {
    return added || (field / 32 < mask.size() && (mask[field / 32] >> (field % 32) & 1) != 0);
  }
};

// FieldUnderKey: whether the declared field `field` (a name in a type's layout: "hp",
// "stats.hp", "slots[2]") is written under the level JSON key `key` of a component
// ("hp", "stats", "slots"): a key overrides every field under it.
bool FieldUnderKey(absl::string_view field, absl::string_view key);

// PrefabDefinition (as written): a prefab's name and its flattened entities' blob (in a
// delta, an empty blob names the prefab without carrying it).
struct PrefabDefinition {
  std::string name;
  std::vector<std::byte> blob;
};

// MakePrefabSection: the section for `prefabs` (in the order of the records' prefab
// numbers), `entities` (ascending entity) and `overrides` (in the order to write), in
// `endianness`; with `delta`, the section of a delta resource. No section is needed
// when `prefabs` is empty.
ComponentTypeContents MakePrefabSection(absl::Span<const PrefabDefinition> prefabs,
                                        absl::Span<const PrefabEntityRecord> entities,
                                        absl::Span<const PrefabOverrideRecord> overrides,
                                        Endianness endianness, bool delta = false);

// PrefabTable: a validated prefab section. Views point into the blob.
struct PrefabTable {
  struct Prefab {
    absl::string_view name;
    EntityResourceView view;  // the prefab's flattened entities (validated)
    // by_name: a delta's prefab named without its blob (`view` is then a resource of
    // no entities): whoever spawns the delta must know the prefab.
    bool by_name = false;
  };
  std::vector<Prefab> prefabs;
  std::vector<PrefabEntityRecord> entities;
  std::vector<PrefabOverrideRecord> overrides;
  // delta: the resource is a delta (resource/prefab_delta.h): spawn it made whole.
  bool delta = false;

  bool empty() const { return prefabs.empty(); }
  // Find: the number of the prefab named `name`, or -1.
  int Find(absl::string_view name) const;
};

// ReadPrefabTable: the prefab section of a validated view (an empty table if it has
// none). DataLoss, nothing read out of bounds, for: another section version, unknown
// flags, sizes that disagree with the data, a record out of range (entity, prefab,
// node, mask, flags; a removed or value-diff record outside a delta, a removed one with a
// mask), entity records out of order, a prefab name that is not UTF-8 or repeated, a
// prefab blob that does not validate, has no entities, has a prefab section of its own
// or (outside a delta) is missing. An entity record's node is checked against its
// prefab's entities when the blob carries the prefab.
// O(section size + the prefab blobs).
absl::StatusOr<PrefabTable> ReadPrefabTable(const EntityResourceView& view);

}  // namespace strata

#endif  // STRATA_RESOURCE_PREFAB_H_
