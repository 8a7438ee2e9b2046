// Export: an entity resource back to level JSON, through the component declarations
// of a registry, and the human-readable listing the inspect tools print.
//
//   absl::StatusOr<nlohmann::json> level = ExportLevel(view, registry);
//   // level->dump(2) compiles (with the same registry) to the same bytes as the blob,
//   // for every blob the compiler writes and World::Save writes in full (a delta
//   // save of entities from prefabs is refused: FailedPrecondition).
//
// Entities nest as "children" following parent_index; names come from the blob's
// metadata sections; an entity reference is written as the target's name when that
// name is unique, else as "#N" (the entity's number in the exported level).
#ifndef STRATA_COMPONENT_EXPORT_H_
#define STRATA_COMPONENT_EXPORT_H_

#include <string>

#include "absl/status/statusor.h"
#include "component/registry.h"
#include "nlohmann/json_fwd.hpp"
#include "resource/format.h"

namespace strata {

// ExportLevel: the level JSON of `view`. FailedPrecondition for a section whose type
// the registry does not know or whose layout differs from its declaration; DataLoss
// for malformed metadata or instance data.
absl::StatusOr<nlohmann::json> ExportLevel(const EntityResourceView& view,
                                           const ComponentRegistry& registry);

// DescribeResource: a listing of `view`: header, one line per section (type name,
// instances, bytes, layout), then every entity with its name, parent and each
// component's fields by name. Types the registry does not know are listed by id with
// their raw size.
absl::StatusOr<std::string> DescribeResource(const EntityResourceView& view,
                                             const ComponentRegistry& registry);

}  // namespace strata

#endif  // STRATA_COMPONENT_EXPORT_H_
