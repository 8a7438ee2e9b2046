// The transform as a component type: the World's transform graph
// (transform/transform_component.h) registered through the same door as a game's
// declared types, with its own codec and store. Every ComponentRegistry holds it.
//
// Level JSON: {"type": "transform", "name": "Transform", "position": [x, y, z],
// "rotation": [x, y, z, w], "scale": [x, y, z]} (component/transform_resource.h), or
// {"type": "transform", "matrix": [16 numbers, row-major]}: the local matrix itself,
// what export writes when position, rotation and scale would not recompile to the
// same bytes. Blob: the 64-byte local matrix. Spawn links each transform to its
// nearest ancestor's; save writes the local matrices and the links (as the blob's
// parent_index). One transform per entity.
#ifndef STRATA_COMPONENT_TRANSFORM_TYPE_H_
#define STRATA_COMPONENT_TRANSFORM_TYPE_H_

#include "absl/status/statusor.h"
#include "component/component_type.h"

namespace strata {

// TransformComponentType: the transform's ComponentType.
absl::StatusOr<ComponentType> TransformComponentType();

}  // namespace strata

#endif  // STRATA_COMPONENT_TRANSFORM_TYPE_H_
