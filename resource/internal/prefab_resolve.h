// Prefab definitions as the level JSON declares them, resolved: every chain ("prefab":
// "base" inside a prefab) applied, so each prefab is one plain entity object the
// compiler can compile on its own and instances copy from.
//
//   absl::StatusOr<std::vector<ResolvedPrefab>> prefabs = ResolvePrefabs(level["prefabs"]);
//   // (*prefabs)[i].entity: {"name": "orc", "components": [...], "children": [...]}
//
// Merging, for a prefab based on another and for an instance of a prefab: components
// are matched by component name ("name", else the type); a matched component keeps the
// base's fields and takes every field the derived one writes (a field's value is
// replaced whole, also an array or object); an unmatched one is added after the base's.
// A derived prefab's children follow its base's.
#ifndef STRATA_RESOURCE_INTERNAL_PREFAB_RESOLVE_H_
#define STRATA_RESOURCE_INTERNAL_PREFAB_RESOLVE_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "nlohmann/json.hpp"

namespace strata::resource_internal {

struct ResolvedPrefab {
  std::string name;
  // entity: {"name": name, "components": [COMPONENT...], "children": [ENTITY...]}, the
  // chain applied; children are plain level entities (they may not name a prefab).
  nlohmann::json entity;
  // aliases: the names of the prefabs it is based on, nearest first: references the
  // base wrote to its root ("goblin", "goblin/torch") mean this prefab's root.
  std::vector<std::string> aliases;
};

// kMaxPrefabChain: how long a chain of prefabs based on prefabs may be.
inline constexpr size_t kMaxPrefabChain = 64;

// ResolvePrefabs: `definitions` is the level's "prefabs" object (name -> definition
// {"prefab": "base", "components": [...], "children": [...]}, each key optional).
// Returns the prefabs sorted by name. InvalidArgument naming the prefab for: a
// definition that is not an object or has another key, a "prefab" that names no
// prefab, a cycle (naming the chain, "a -> b -> a"), a chain longer than
// kMaxPrefabChain, a component that is not an object with a string "type" (and
// optional string "name"), a component name used twice in one prefab, a component that
// changes the type of the base's component of the same name. O(total size x chain).
absl::StatusOr<std::vector<ResolvedPrefab>> ResolvePrefabs(const nlohmann::json& definitions);

// ComponentName: a component object's "name", else its "type" (both checked to be
// strings by the caller).
const std::string& ComponentName(const nlohmann::json& component);

}  // namespace strata::resource_internal

#endif  // STRATA_RESOURCE_INTERNAL_PREFAB_RESOLVE_H_
