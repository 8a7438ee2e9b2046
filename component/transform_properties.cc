#include "component/transform_properties.h"

#include <cmath>
#include <initializer_list>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/check.h"
#include "base/matrix.h"

namespace strata {

TransformComponentManager::TransformComponentManager()
    : owned_(std::make_unique<TransformComponent>()), transforms_(owned_.get()) {}

TransformComponentManager::TransformComponentManager(TransformComponent* transforms)
    : transforms_(transforms) {
  STRATA_CHECK(transforms != nullptr, "TransformComponentManager: the TransformComponent is null");
}

TransformComponentManager::~TransformComponentManager() = default;

absl::StatusOr<Instance> TransformComponentManager::Create(Entity entity, InstanceId id) {
  absl::StatusOr<TransformHandle> h =
      transforms_->Create(entity, Matrix4x4::Identity());
  if (!h.ok()) return h.status();
  absl::Status told = NotifyCreated(id, absl::MakeConstSpan(&entity, 1));
  if (!told.ok()) {
    transforms_->DestroyEntity(entity);
    return told;
  }
  return Remember(*h);
}

absl::Status TransformComponentManager::Spawned(absl::Span<const Entity> owners,
                                                absl::Span<const uint32_t> names) {
  if (owners.size() != names.size()) {
    return absl::InvalidArgumentError(absl::StrCat("transform: ", owners.size(), " owners, ",
                                                   names.size(), " names"));
  }
  return NotifyCreatedByName(owners, names);
}

Instance TransformComponentManager::Lookup(Entity entity, InstanceId) const {
  const TransformHandle h = transforms_->Lookup(entity);
  if (!h.is_valid()) return Instance{};
  // Transforms created directly on the component (e.g. by the resource spawner) are
  // learnt here, the first time the index resolves them.
  return Remember(h);
}

Instance TransformComponentManager::Remember(TransformHandle h) const {
  if (h.id() >= handles_.size()) handles_.resize(size_t{h.id()} + 1 + handles_.size() / 2);
  handles_[h.id()] = h;
  return Instance{h.id()};
}

bool TransformComponentManager::Destroy(Entity entity, InstanceId id) {
  if (!transforms_->DestroyEntity(entity)) return false;
  NotifyDestroyed(id, absl::MakeConstSpan(&entity, 1));
  return true;
}

absl::Status TransformComponentManager::Link(Entity child, Entity parent) {
  const TransformHandle c = transforms_->Lookup(child);
  const TransformHandle p = transforms_->Lookup(parent);
  if (!c.is_valid() || !p.is_valid()) {
    return absl::NotFoundError(absl::StrCat(
        "transform: ", (c.is_valid() ? parent : child).DebugString(), " has no transform"));
  }
  return transforms_->Link(c, p);
}

TransformHandle TransformComponentManager::Handle(Instance i) const {
  if (!i.is_valid() || i.index >= handles_.size()) return {};
  const TransformHandle h = handles_[i.index];
  return transforms_->IsValid(h) ? h : TransformHandle();
}

namespace {

absl::Status Gone() {
  return absl::NotFoundError("transform: the instance no longer exists");
}

bool AllFinite(std::initializer_list<float> values) {
  for (float f : values) {
    if (!std::isfinite(f)) return false;
  }
  return true;
}

struct Parts {
  Vector3 position;
  Quaternion rotation;
  Vector3 scale{1, 1, 1};
};

}  // namespace

absl::Status DescribeTransformProperties(PropertySystem& properties,
                                         TransformComponentManager& manager) {
  TransformComponentManager* m = &manager;
  // The local matrix's parts; identity parts for a matrix that does not decompose (set
  // directly on the TransformComponent with a zero scale or a projection).
  auto read = [m](Instance i) {
    Parts parts;
    const TransformHandle h = m->Handle(i);
    if (h.is_valid()) {
      Parts decomposed;
      if (m->transforms_->Local(h).Decompose(&decomposed.position, &decomposed.rotation,
                                             &decomposed.scale)) {
        parts = decomposed;
      }
    }
    return parts;
  };
  // Edits one part of the local matrix and writes it back; a local matrix that does
  // not decompose is an error rather than silently replaced.
  auto edit = [m](Instance i, auto&& change) -> absl::Status {
    const TransformHandle h = m->Handle(i);
    if (!h.is_valid()) return Gone();
    Parts parts;
    if (!m->transforms_->Local(h).Decompose(&parts.position, &parts.rotation,
                                            &parts.scale)) {
      return absl::FailedPreconditionError(
          "transform: the local matrix has a zero scale or is not affine, so its parts "
          "cannot be edited one by one");
    }
    change(parts);
    m->transforms_->SetLocal(
        h, Matrix4x4::Compose(parts.position, parts.rotation, parts.scale));
    return absl::OkStatus();
  };

  std::vector<PropertyDescriptor> p;
  p.push_back(PropertyDescriptor::Make<Vector3>(
      "local_position", [read](Instance i) { return read(i).position; },
      [edit](Instance i, const Vector3& v) -> absl::Status {
        if (!AllFinite({v.x, v.y, v.z})) {
          return absl::InvalidArgumentError("transform local_position must be finite");
        }
        return edit(i, [&v](Parts& parts) { parts.position = v; });
      }));
  p.push_back(PropertyDescriptor::Make<Quaternion>(
      "local_rotation", [read](Instance i) { return read(i).rotation; },
      [edit](Instance i, const Quaternion& q) -> absl::Status {
        const float norm2 = q.x * q.x + q.y * q.y + q.z * q.z + q.w * q.w;
        if (!AllFinite({q.x, q.y, q.z, q.w}) || !(norm2 > 0.0f) || !std::isfinite(norm2)) {
          return absl::InvalidArgumentError(
              "transform local_rotation must be a finite, non-zero quaternion (x, y, z, w)");
        }
        return edit(i, [&q](Parts& parts) { parts.rotation = q; });
      }));
  p.push_back(PropertyDescriptor::Make<Vector3>(
      "local_scale", [read](Instance i) { return read(i).scale; },
      [edit](Instance i, const Vector3& v) -> absl::Status {
        if (!AllFinite({v.x, v.y, v.z}) || v.x == 0.0f || v.y == 0.0f || v.z == 0.0f) {
          return absl::InvalidArgumentError(
              "transform local_scale must be finite and non-zero in every axis");
        }
        return edit(i, [&v](Parts& parts) { parts.scale = v; });
      }));
  p.push_back(PropertyDescriptor::Make<Matrix4x4>("world", [m](Instance i) {
    const TransformHandle h = m->Handle(i);
    return h.is_valid() ? m->transforms_->World(h) : Matrix4x4::Identity();
  }));
  return properties.Describe(&manager, std::move(p));
}

}  // namespace strata
