// The transform component's compile function for level JSON, as the engine registers
// it: {"type": "transform", "name": "Transform", "position": [x, y, z],
// "rotation": [x, y, z, w], "scale": [x, y, z]} (all optional: origin, identity, 1)
// -> the local matrix Matrix4x4::Compose(position, rotation, scale), 16 floats
// row-major in the blob's byte order (kTransformInstanceSize bytes per instance).
// The matching spawn function is World's (engine/world.cc): it creates the transforms
// in one batch, links each to its nearest ancestor entity with a transform, and
// registers them in the entity index by name.
#ifndef STRATA_ENGINE_TRANSFORM_RESOURCE_FUNCTIONS_H_
#define STRATA_ENGINE_TRANSFORM_RESOURCE_FUNCTIONS_H_

#include <cstdint>

#include "absl/status/status.h"
#include "nlohmann/json.hpp"
#include "resource/entity_compiler.h"

namespace strata {

// kTransformInstanceSize: bytes per transform instance in a resource (a Matrix4x4).
inline constexpr uint32_t kTransformInstanceSize = 64;

// CompileTransform: InvalidArgument naming the key for a wrong type or length, a
// non-finite number, a zero scale or a zero rotation quaternion.
absl::Status CompileTransform(const nlohmann::json& config, ComponentDataWriter& out);

}  // namespace strata

#endif  // STRATA_ENGINE_TRANSFORM_RESOURCE_FUNCTIONS_H_
