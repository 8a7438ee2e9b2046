#include "engine/render_data.h"

#include <cmath>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "index/property_system.h"

namespace strata {

RenderDataManager::RenderDataManager(EntityManager& entities)
    : listener_(entities.AddDestroyListener(
          [this](absl::Span<const Entity> dead) { DestroyEntities(dead); })) {}

RenderDataManager::~RenderDataManager() = default;

absl::Status RenderDataManager::NotAlive(Entity entity) const {
  return absl::NotFoundError(absl::StrCat(
      "render_data: ", entity.DebugString(), " is not alive in its EntityManager",
      listener_.expired() ? " (that manager has been destroyed)" : ""));
}

absl::StatusOr<Instance> RenderDataManager::Create(Entity entity, InstanceId id) {
  if (!entity.is_valid()) {
    return absl::InvalidArgumentError("render_data: invalid entity");
  }
  if (!listener_->Alive(entity)) return NotAlive(entity);
  const uint32_t index = static_cast<uint32_t>(data_.size());
  if (!instances_.try_emplace(Key{entity, id}, index).second) {
    return absl::AlreadyExistsError(absl::StrCat("render_data: ", entity.DebugString(),
                                                 " already has instance ", id.DebugString()));
  }
  data_.emplace_back();
  owners_.push_back(Key{entity, id});
  by_entity_[entity].push_back(id);
  return Instance{index};
}

Instance RenderDataManager::Lookup(Entity entity, InstanceId id) const {
  auto it = instances_.find(Key{entity, id});
  return it == instances_.end() ? Instance{} : Instance{it->second};
}

bool RenderDataManager::Destroy(Entity entity, InstanceId id) {
  auto it = instances_.find(Key{entity, id});
  if (it == instances_.end()) return false;
  const uint32_t index = it->second;
  instances_.erase(it);
  const uint32_t last = static_cast<uint32_t>(data_.size() - 1);
  if (index != last) {
    data_[index] = data_[last];
    owners_[index] = owners_[last];
    instances_[owners_[index]] = index;
  }
  data_.pop_back();
  owners_.pop_back();
  auto owner = by_entity_.find(entity);
  ABSL_HARDENING_ASSERT(owner != by_entity_.end());
  auto& ids = owner->second;
  for (size_t i = 0; i < ids.size(); ++i) {
    if (ids[i] == id) {
      ids.erase(ids.begin() + static_cast<std::ptrdiff_t>(i));
      break;
    }
  }
  if (ids.empty()) by_entity_.erase(owner);
  return true;
}

size_t RenderDataManager::DestroyEntities(absl::Span<const Entity> entities) {
  size_t destroyed = 0;
  for (Entity e : entities) {
    auto owner = by_entity_.find(e);
    if (owner == by_entity_.end()) continue;
    // Copied: Destroy edits the list and erases it with the last id.
    const absl::InlinedVector<InstanceId, 2> ids = owner->second;
    for (InstanceId id : ids) destroyed += Destroy(e, id) ? 1 : 0;
  }
  return destroyed;
}

size_t RenderDataManager::MemoryUsage() const {
  return data_.capacity() * sizeof(RenderData) + owners_.capacity() * sizeof(Key) +
         instances_.capacity() * (sizeof(std::pair<Key, uint32_t>) + 1) +
         by_entity_.capacity() *
             (sizeof(std::pair<Entity, absl::InlinedVector<InstanceId, 2>>) + 1);
}

std::vector<PropertyDescriptor> RenderDataManager::DescribeProperties() {
  std::vector<PropertyDescriptor> p;
  p.push_back(PropertyDescriptor::Make<float>(
      "density", [this](Instance i) { return data(i).density; },
      [this](Instance i, float v) -> absl::Status {
        if (!std::isfinite(v) || v < 0.0f) {
          return absl::InvalidArgumentError(
              absl::StrCat("render_data density must be finite and >= 0, got ", v));
        }
        data(i).density = v;
        return absl::OkStatus();
      }));
  p.push_back(PropertyDescriptor::Make<Vector4>(
      "color",
      [this](Instance i) {
        const float* c = data(i).color;
        return Vector4{c[0], c[1], c[2], c[3]};
      },
      [this](Instance i, const Vector4& v) {
        float* c = data(i).color;
        c[0] = v.x;
        c[1] = v.y;
        c[2] = v.z;
        c[3] = v.w;
      }));
  return p;
}

absl::Status RenderDataManager::Spawn(absl::Span<const Entity> entities,
                                      absl::Span<const uint32_t> names,
                                      absl::Span<const std::byte> data, EntityIndex* index) {
  if (names.size() != entities.size() ||
      data.size() != entities.size() * size_t{kRenderDataInstanceSize}) {
    return absl::InvalidArgumentError(absl::StrCat(
        "render_data: ", entities.size(), " entities, ", names.size(), " names and ",
        data.size(), " data bytes do not match (", kRenderDataInstanceSize,
        " bytes per instance)"));
  }
  // Checked before creating anything, so a failure leaves the manager unchanged. A
  // resource guarantees unique names per entity; a pair repeated inside the batch is
  // caught by Create below and rolled back.
  for (size_t i = 0; i < entities.size(); ++i) {
    if (!entities[i].is_valid()) return absl::InvalidArgumentError("render_data: invalid entity");
    if (!listener_->Alive(entities[i])) return NotAlive(entities[i]);
    if (instances_.contains(Key{entities[i], IdString32::FromValue(names[i])})) {
      return absl::AlreadyExistsError(absl::StrCat("render_data: ", entities[i].DebugString(),
                                                   " already has instance ",
                                                   IdString32::FromValue(names[i]).DebugString()));
    }
  }
  data_.reserve(data_.size() + entities.size());
  owners_.reserve(owners_.size() + entities.size());
  instances_.reserve(instances_.size() + entities.size());
  for (size_t i = 0; i < entities.size(); ++i) {
    absl::StatusOr<Instance> instance = Create(entities[i], IdString32::FromValue(names[i]));
    if (!instance.ok()) {
      for (size_t j = 0; j < i; ++j) Destroy(entities[j], IdString32::FromValue(names[j]));
      return instance.status();
    }
    RenderData& d = data_[instance->index];
    std::memcpy(&d.density, data.data() + i * kRenderDataInstanceSize, sizeof(float));
    std::memcpy(d.color, data.data() + i * kRenderDataInstanceSize + sizeof(float),
                4 * sizeof(float));
  }
  if (index == nullptr) return absl::OkStatus();
  // One batch registration per distinct name (a level has a handful: Fog, Ambient...).
  absl::flat_hash_map<uint32_t, std::vector<Entity>> by_name;
  for (size_t i = 0; i < entities.size(); ++i) by_name[names[i]].push_back(entities[i]);
  for (const auto& [name, group] : by_name) {
    absl::Status status =
        index->RegisterComponent(absl::MakeConstSpan(group), this, IdString32::FromValue(name));
    if (!status.ok()) {
      return absl::Status(status.code(), absl::StrCat("render_data: registering \"",
                                                      IdString32::FromValue(name).DebugString(),
                                                      "\" in the entity index: ", status.message()));
    }
  }
  return absl::OkStatus();
}

absl::Status CompileRenderData(const nlohmann::json& config, ComponentDataWriter& out) {
  STRATA_RETURN_IF_ERROR(CheckComponentKeys(config, {"density", "color"}));
  RenderData d;
  STRATA_RETURN_IF_ERROR(ReadFloat(config, "density", &d.density));
  if (!std::isfinite(d.density) || d.density < 0.0f) {
    return absl::InvalidArgumentError("\"density\": must be finite and >= 0");
  }
  STRATA_RETURN_IF_ERROR(ReadFloats(config, "color", absl::MakeSpan(d.color)));
  out.WriteF32(d.density);
  for (float c : d.color) out.WriteF32(c);
  return absl::OkStatus();
}

}  // namespace strata
