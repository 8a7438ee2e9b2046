#include "component/transform_type.h"

#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/matrix.h"
#include "base/status_macros.h"
#include "component/field.h"
#include "component/instance_indexer.h"
#include "component/transform_properties.h"
#include "component/transform_resource.h"
#include "nlohmann/json.hpp"
#include "transform/transform_component.h"

namespace strata {
namespace {

using json = nlohmann::json;

constexpr char kTransformLayout[] = "local:matrix4x4:64";

// MatrixElement: element i of "matrix" as an f32 field, for its JSON forms.
FieldInfo MatrixElement(size_t i) {
  FieldInfo element;
  element.name = absl::StrCat("matrix[", i, "]");
  element.type = FieldType::kF32;
  return element;
}

absl::Status CompileTransformOrMatrix(const json& config, ComponentDataWriter& out) {
  auto matrix = config.is_object() ? config.find("matrix") : config.end();
  if (matrix == config.end()) return CompileTransformJson(config, out);
  for (auto it = config.begin(); it != config.end(); ++it) {
    if (it.key() != "type" && it.key() != "name" && it.key() != "matrix") {
      return absl::InvalidArgumentError(absl::StrCat(
          "\"matrix\" replaces position, rotation and scale; \"", it.key(), "\" cannot go with it"));
    }
  }
  if (!matrix->is_array() || matrix->size() != 16) {
    return absl::InvalidArgumentError("\"matrix\": expected an array of 16 numbers (row-major)");
  }
  // Each element is an f32 field: a number in float's range or a non-finite spelling
  // ("nan", "inf", "nan:0x7fa00001"), what a system may leave in a local matrix.
  const std::byte zeros[4] = {};
  for (size_t i = 0; i < 16; ++i) {
    STRATA_RETURN_IF_ERROR(CompileField(MatrixElement(i), &(*matrix)[i], zeros, out));
  }
  return absl::OkStatus();
}

// Export: position / rotation / scale when those compile back to exactly these bytes,
// else the matrix.
absl::StatusOr<json> ExportTransform(absl::Span<const std::byte> instance, const FieldTextLookup&) {
  if (instance.size() != kTransformInstanceSize) {
    return absl::DataLossError(absl::StrCat("transform: instance of ", instance.size(), " bytes"));
  }
  Matrix4x4 local;
  std::memcpy(local.m, instance.data(), sizeof(local.m));
  Vector3 position, scale;
  Quaternion rotation;
  if (local.Decompose(&position, &rotation, &scale)) {
    json parts = {{"position", {position.x, position.y, position.z}},
                  {"rotation", {rotation.x, rotation.y, rotation.z, rotation.w}},
                  {"scale", {scale.x, scale.y, scale.z}}};
    std::vector<std::byte> again;
    ComponentDataWriter writer(kNativeEndianness, &again);
    if (CompileTransformJson(parts, writer).ok() && again.size() == instance.size() &&
        std::memcmp(again.data(), instance.data(), instance.size()) == 0) {
      return parts;
    }
  }
  json m = json::array();
  for (size_t i = 0; i < 16; ++i) m.push_back(ExportFieldValue(MatrixElement(i), instance.data() + 4 * i, {}));
  return json{{"matrix", m}};
}

class TransformStore final : public ComponentStore {
 public:
  TransformStore(const ComponentType& type, TransformComponent& transforms,
                 TransformComponentManager& manager)
      : type_(&type), transforms_(&transforms), manager_(&manager) {}

  ComponentManager& manager() override { return *manager_; }
  void* typed() override { return manager_; }
  const void* type_tag() const override { return TypeTag<TransformComponentManager>(); }

  absl::Status Spawn(const ComponentSpawnBatch& batch) override {
    if (batch.layout_fingerprint != type_->fingerprint()) {
      return absl::FailedPreconditionError(absl::StrCat(
          "component type \"transform\": the blob's layout differs from the declaration (\"",
          batch.layout, "\", declared \"", kTransformLayout, "\")"));
    }
    STRATA_RETURN_IF_ERROR(SpawnTransformBatch(*transforms_, batch));
    // The manager tells the world's indexer, which registers the names.
    if (batch.in_entity_order) return manager_->Spawned(batch.entities, batch.names);
    return manager_->Spawned(SpawnOwners(batch), batch.names);
  }

  absl::Status Save(const SaveContext& context, ComponentTypeContents* out) override {
    TransformComponent& transforms = *transforms_;
    for (uint32_t k = 0; k < context.entities.size(); ++k) {
      const TransformHandle i = transforms.Lookup(context.entities[k]);
      if (!i.is_valid()) continue;
      const Matrix4x4& local = transforms.Local(i);
      const auto* bytes = reinterpret_cast<const std::byte*>(local.m);
      out->data.insert(out->data.end(), bytes, bytes + sizeof(local.m));
      out->entity_index.push_back(k);
      const std::optional<IdString32> name =
          context.name_of(context.entities[k], manager_);
      out->names.push_back(name.has_value() ? name->value() : type_->id().value());
    }
    return absl::OkStatus();
  }

  // Write: the one field is the local matrix; one batch, one propagation.
  absl::StatusOr<size_t> Write(const FieldWrites& writes) override {
    std::vector<TransformHandle> handles;
    std::vector<Matrix4x4> locals;
    for (size_t i = 0; i < writes.entities.size(); ++i) {
      const TransformHandle h = transforms_->Lookup(writes.entities[i]);
      if (!h.is_valid() || !writes.Writes(i, 0)) continue;
      handles.push_back(h);
      Matrix4x4& local = locals.emplace_back();
      std::memcpy(local.m, writes.objects.data() + i * kTransformInstanceSize, sizeof(local.m));
    }
    STRATA_RETURN_IF_ERROR(transforms_->SetLocalBatch(handles, locals));
    return handles.size();
  }
  bool writable() const override { return true; }

  void CollectEntities(std::vector<Entity>* out) const override {
    const TransformComponent& transforms = *transforms_;
    for (size_t i = 0; i < transforms.size(); ++i) out->push_back(transforms.EntityAt(i));
  }
  size_t CountOf(Entity entity) const override {
    return transforms_->Lookup(entity).is_valid() ? 1 : 0;
  }
  size_t size() const override { return transforms_->size(); }
  // The World reports the transform component's memory itself.
  size_t MemoryUsage() const override { return 0; }
  absl::Status DescribeProperties(PropertySystem& properties) override {
    return DescribeTransformProperties(properties, *manager_);
  }

 private:
  const ComponentType* type_;
  TransformComponent* transforms_;
  TransformComponentManager* manager_;
};

}  // namespace

absl::StatusOr<ComponentType> TransformComponentType() {
  ComponentType::Custom custom;
  custom.name = kTransformTypeName;
  custom.spawn_order = kTransformSpawnOrder;
  custom.instance_size = kTransformInstanceSize;
  custom.max_per_entity = 1;
  custom.layout = kTransformLayout;
  custom.compile = CompileTransformOrMatrix;
  custom.export_instance = ExportTransform;
  custom.make_store = [](const ComponentType& type,
                         const WorldServices& services) -> absl::StatusOr<std::unique_ptr<ComponentStore>> {
    // The world's transform graph, lent by type: WorldServices names no component.
    TransformComponent* transforms = services.Find<TransformComponent>();
    TransformComponentManager* manager = services.Find<TransformComponentManager>();
    if (transforms == nullptr || manager == nullptr || services.indexer == nullptr) {
      return absl::FailedPreconditionError("transform: the world has no transform component");
    }
    services.indexer->Attach(*manager);
    return std::unique_ptr<ComponentStore>(new TransformStore(type, *transforms, *manager));
  };
  return ComponentType::FromCustom(std::move(custom));
}

}  // namespace strata
