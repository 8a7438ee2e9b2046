// Transform resources: the transform component's compile and spawn functions for
// entity resources (resource/entity_compiler.h, resource/entity_spawner.h). Each
// component package owns its own pair; this is the transform's.
//
// JSON (one component per entity per world):
//   {"type": "transform", "name": "Transform",          (name optional)
//    "position": [x, y, z],                              (default [0, 0, 0])
//    "rotation": [x, y, z, w],                           (quaternion, default identity;
//                                                          normalised when compiled)
//    "scale": [x, y, z]}                                 (default [1, 1, 1])
// Compiled instance data (NOTE: stride kTransformInstanceSize = 64 bytes): the local
// matrix Matrix4x4::Compose(position, rotation, scale), 16 floats row-major in the
// blob's byte order, so the spawner hands it to TransformComponent::CreateBatch in place.
//
//   EntityCompiler compiler;
//   RegisterTransformCompiler(compiler);
//   EntitySpawner spawner;
//   RegisterTransformSpawner(spawner);                   // context = TransformComponent*
//   TransformComponent transforms;
//   transforms.ConnectTo(entities);
//   auto blob = compiler.Compile(level_json, {});
//   auto view = EntityResourceView::Create(blob->blob);
//   auto spawned = spawner.Spawn(*view, entities, /*context=*/&transforms);
//   // Children are linked to their parents; World() is correct at once.
//
// Spawn links each transform to the transform of its nearest ancestor entity that has
// one (a parent entity without a transform is passed over), in one CreateBatch plus one
// LinkBatch. Errors (the spawner then rolls the spawn back): DataLoss if the stride is
// not 64; the TransformComponent's error if an entity gets two transforms.
#ifndef STRATA_COMPONENT_TRANSFORM_RESOURCE_H_
#define STRATA_COMPONENT_TRANSFORM_RESOURCE_H_

#include <cstdint>

#include "absl/status/status.h"
#include "resource/entity_compiler.h"
#include "resource/entity_spawner.h"
#include "transform/transform_component.h"

namespace strata {

// kTransformTypeName: the JSON "type" and the IdString32 the blob stores.
inline constexpr char kTransformTypeName[] = "transform";
// kTransformSpawnOrder: transforms spawn first; components that read their entity's
// transform (meshes, cameras) register with a larger spawn order.
inline constexpr int kTransformSpawnOrder = 0;
// kTransformInstanceSize: one local Matrix4x4.
inline constexpr uint32_t kTransformInstanceSize = 64;

// CompileTransformJson: the "transform" compile function: one component's JSON (see
// above) into its 64-byte local matrix.
absl::Status CompileTransformJson(const nlohmann::json& config, ComponentDataWriter& out);

// RegisterTransformCompiler: registers the "transform" compile function. AlreadyExists
// if the compiler already has one.
absl::Status RegisterTransformCompiler(EntityCompiler& compiler,
                                       int spawn_order = kTransformSpawnOrder);

// TransformComponentFromContext: maps the spawn context to the world's transform
// component (nullptr: the spawn fails with FailedPrecondition).
using TransformComponentFromContext = TransformComponent* (*)(void* context);

// RegisterTransformSpawner: registers the "transform" spawn function. By default the
// spawn context is the TransformComponent itself; an engine whose context is a whole
// world passes a `from_context` that returns the world's component. AlreadyExists if
// the spawner already has one.
absl::Status RegisterTransformSpawner(EntitySpawner& spawner,
                                      TransformComponentFromContext from_context = nullptr);

// SpawnTransformBatch: the "transform" spawn function's work on `transforms`, for an
// engine that registers its own spawn function to do more per batch (its World also
// indexes the instances by name): creates the batch's transforms in one CreateBatch
// and links each to its nearest ancestor's in one LinkBatch. Errors as above. O(n) plus
// the ancestor walks over entities without a transform.
absl::Status SpawnTransformBatch(TransformComponent& transforms,
                                 const ComponentSpawnBatch& batch);

}  // namespace strata

#endif  // STRATA_COMPONENT_TRANSFORM_RESOURCE_H_
