// Prefab deltas: a resource that writes entities made from prefabs as their prefab plus
// what differs (World::SaveAll writes one), made whole again.
//
// A delta resource has a prefab section whose `delta` flag is set (resource/prefab.h).
// Its entity records say which prefab entity each such entity is; then:
//   - a component of the prefab entity that the resource does not give the entity is
//     the prefab's, unless an override record marks it `removed`;
//   - a component the resource gives it replaces the prefab's: the fields of its
//     override record's mask, or all of them when it has no record (a component the
//     prefab lacks, one holding entity references, one the game changed throughout);
//     the other fields are the prefab's;
//   - `value_diff` records say which of those fields were the entity's own only
//     because their value differed at the save (the level did not override them).
// The prefab's values are those of the prefab the loader has now, so an instance
// follows later edits of its prefab in every field it did not override.
//
//   absl::StatusOr<PrefabTable> table = ReadPrefabTable(view);
//   std::vector<EntityResourceView> bases = ...;   // per table prefab: the current one
//   absl::StatusOr<std::vector<std::byte>> whole = ExpandPrefabDeltas(view, *table, bases);
//   // *whole spawns as a compiled level does; its prefab section (not a delta) lists
//   // what each instance overrode.
#ifndef STRATA_RESOURCE_PREFAB_DELTA_H_
#define STRATA_RESOURCE_PREFAB_DELTA_H_

#include <cstddef>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "resource/format.h"
#include "resource/prefab.h"

namespace strata {

// ExpandPrefabDeltas: the whole resource of delta resource `view` (its prefab section
// read as `table`, table.delta set), with bases[p] the prefab table prefab p stands for
// (the loader's current prefab of that name, or table.prefabs[p].view when the delta
// carries it, table.prefabs[p].by_name false). The result has
// the same entities, parents and names; each entity from a prefab has its prefab
// entity's components as above, in the layout of the base's section for a type the
// resource does not write; entity references inside a prefab's component name the
// entity of the same instance (the nearest ancestor from the same prefab's root) with
// that prefab entity, or none when the instance lacks it. Its prefab section lists the
// bases and the same entity records, and as override records, per component written
// for an entity from a prefab, its own fields but the value diffs (what the level
// overrode stays overridden after a spawn; a value diff does not). An entity whose prefab entity the base lacks (the
// prefab lost it since) keeps what the resource wrote of it.
//
// Errors, nothing read out of bounds: InvalidArgument if `table` is not a delta or
// `bases` has not one view per prefab; NotFound naming the prefab when a base has no
// entities (a prefab the delta names by name only and the loader does not know);
// FailedPrecondition naming the type and prefab
// when a base's component and the resource's of one type have different layouts (a
// delta is merged field by field in one layout: load it where the prefabs have the
// declarations it was saved with, or save it with full copies first); DataLoss for a
// malformed layout (one that does not fill its stride) or a component of varying size
// that would have to be merged or copied. O(resource + bases), whatever the depth of
// the entity tree.
absl::StatusOr<std::vector<std::byte>> ExpandPrefabDeltas(const EntityResourceView& view,
                                                          const PrefabTable& table,
                                                          absl::Span<const EntityResourceView> bases);

}  // namespace strata

#endif  // STRATA_RESOURCE_PREFAB_DELTA_H_
