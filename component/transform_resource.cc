#include "component/transform_resource.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/matrix.h"
#include "base/status_macros.h"

namespace strata {

absl::Status CompileTransformJson(const nlohmann::json& config, ComponentDataWriter& out) {
  STRATA_RETURN_IF_ERROR(CheckComponentKeys(config, {"position", "rotation", "scale"}));
  float position[3] = {0, 0, 0};
  float rotation[4] = {0, 0, 0, 1};
  float scale[3] = {1, 1, 1};
  STRATA_RETURN_IF_ERROR(ReadFloats(config, "position", absl::MakeSpan(position)));
  STRATA_RETURN_IF_ERROR(ReadFloats(config, "rotation", absl::MakeSpan(rotation)));
  STRATA_RETURN_IF_ERROR(ReadFloats(config, "scale", absl::MakeSpan(scale)));
  // NOTE: normalised here in double: a float component near float's limit (3e38) has
  // a square that overflows float, and Compose's own float normalisation would then
  // fall back to the identity. Every float's square fits in double, so any non-zero
  // quaternion is normalised exactly enough, however large or small its components.
  const double norm2 = double{rotation[0]} * rotation[0] + double{rotation[1]} * rotation[1] +
                       double{rotation[2]} * rotation[2] + double{rotation[3]} * rotation[3];
  if (!(norm2 > 0) || !std::isfinite(norm2)) {
    return absl::InvalidArgumentError("\"rotation\": expected a non-zero quaternion [x, y, z, w]");
  }
  const double inverse_norm = 1.0 / std::sqrt(norm2);
  const Quaternion unit{static_cast<float>(rotation[0] * inverse_norm),
                        static_cast<float>(rotation[1] * inverse_norm),
                        static_cast<float>(rotation[2] * inverse_norm),
                        static_cast<float>(rotation[3] * inverse_norm)};
  const Matrix4x4 local = Matrix4x4::Compose(Vector3{position[0], position[1], position[2]}, unit,
                                             Vector3{scale[0], scale[1], scale[2]});
  // Every element is finite: ReadFloats rejects values outside float's range and
  // Compose scales a unit rotation, so no element exceeds |scale| or |position|.
  for (float f : local.m) out.WriteF32(f);
  return absl::OkStatus();
}

namespace {

TransformComponent* DefaultFromContext(void* context) {
  return static_cast<TransformComponent*>(context);
}

absl::Status SpawnTransforms(TransformComponentFromContext from_context,
                             const ComponentSpawnBatch& batch) {
  TransformComponent* transforms = from_context(batch.context);
  if (transforms == nullptr) {
    return absl::FailedPreconditionError("transform: the spawn context has no TransformComponent");
  }
  return SpawnTransformBatch(*transforms, batch);
}

}  // namespace

absl::Status SpawnTransformBatch(TransformComponent& transforms,
                                 const ComponentSpawnBatch& batch) {
  if (batch.instance_stride != kTransformInstanceSize) {
    return absl::DataLossError(absl::StrCat("transform: instance stride ", batch.instance_stride,
                                            ", expected ", kTransformInstanceSize));
  }
  // NOTE: the view guarantees the data is 16-byte aligned and num_instances * 64 bytes,
  // so it is used in place as the Matrix4x4 array (an implicit-lifetime type).
  const auto locals = absl::MakeConstSpan(reinterpret_cast<const Matrix4x4*>(batch.data.data()),
                                          batch.num_instances);
  const uint32_t n = batch.num_instances;
  static_assert(TransformComponent::kNoBatchParent == kNoParent);
  if (batch.in_entity_order) {
    // Every entity has a transform, instance k on entity k (a level of transforms, as
    // the compiler writes it): the nearest ancestor with a transform is the parent, and
    // parent_index[k] < k (validated), so the blob's own arrays are the batch's.
    return transforms.CreateBatch(batch.entities, locals, batch.parent_index, {});
  }
  // Resource entity -> its instance, to find each instance's nearest ancestor with one.
  constexpr uint32_t kNone = TransformComponent::kNoBatchParent;
  std::vector<uint32_t> of_entity(batch.entities.size(), kNone);
  for (uint32_t i = 0; i < n; ++i) of_entity[batch.entity_index[i]] = i;
  std::vector<Entity> owners(n);
  for (uint32_t i = 0; i < n; ++i) owners[i] = batch.entity(i);
  // parents[i]: the instance of i's nearest ancestor with a transform. Instances usually
  // come in entity order, parents (parent_index[k] < k) before children: then one
  // CreateBatch makes and links them all.
  // Found for every entity in one pass in entity order (parent_index[k] < k,
  // validated): walking up from each instance would be quadratic below a long chain
  // of entities without transforms.
  std::vector<uint32_t> nearest(batch.entities.size(), kNoParent);  // entity -> ancestor with one
  const size_t num_entities = std::min(batch.entities.size(), batch.parent_index.size());
  for (uint32_t k = 0; k < num_entities; ++k) {
    const uint32_t p = batch.parent_index[k];
    if (p != kNoParent) nearest[k] = of_entity[p] != kNone ? p : nearest[p];
  }
  std::vector<uint32_t> parents(n, kNone);
  bool parents_first = true;
  for (uint32_t i = 0; i < n; ++i) {
    const uint32_t ancestor = nearest[batch.entity_index[i]];
    if (ancestor == kNoParent) continue;
    parents[i] = of_entity[ancestor];
    parents_first &= parents[i] < i;
  }
  if (parents_first) return transforms.CreateBatch(owners, locals, parents, {});
  std::vector<TransformHandle> created(n);
  // Instances out of entity order (a hand-made blob): create, then link pair by pair.
  STRATA_RETURN_IF_ERROR(transforms.CreateBatch(owners, locals, absl::MakeSpan(created)));
  std::vector<TransformHandle> children;
  std::vector<TransformHandle> parent_handles;
  for (uint32_t i = 0; i < n; ++i) {
    if (parents[i] == kNone) continue;
    children.push_back(created[i]);
    parent_handles.push_back(created[parents[i]]);
  }
  return transforms.LinkBatch(children, parent_handles);
}

absl::Status RegisterTransformCompiler(EntityCompiler& compiler, int spawn_order) {
  return compiler.RegisterComponentCompiler(kTransformTypeName, CompileTransformJson, spawn_order,
                                            kTransformInstanceSize);
}

absl::Status RegisterTransformSpawner(EntitySpawner& spawner,
                                      TransformComponentFromContext from_context) {
  if (from_context == nullptr) from_context = DefaultFromContext;
  return spawner.RegisterComponentSpawner(
      kTransformTypeName,
      [from_context](const ComponentSpawnBatch& batch) { return SpawnTransforms(from_context, batch); });
}

}  // namespace strata
