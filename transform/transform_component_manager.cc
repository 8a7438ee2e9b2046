// The half of //transform:transform_properties that talks to the TransformComponent.
// It must not include index/property_system.h (see transform_properties.h's NOTE).
#include "transform/transform_properties.h"

#include <cmath>
#include <cstring>
#include <type_traits>

#include "absl/strings/str_cat.h"
#include "transform/matrix.h"
#include "transform/transform_component.h"

namespace strata {

using TransformHandle = TransformComponent::Instance;
static_assert(sizeof(TransformHandle) == 8 && std::is_trivially_copyable_v<TransformHandle>,
              "handles are remembered as 8 raw bytes");

void TransformComponentManager::OwnedDeleter::operator()(TransformComponent* t) const {
  delete t;
}

TransformComponentManager::TransformComponentManager()
    : owned_(new TransformComponent()), transforms_(owned_.get()) {}

TransformComponentManager::TransformComponentManager(TransformComponent* transforms)
    : transforms_(transforms) {}

TransformComponentManager::~TransformComponentManager() = default;

void TransformComponentManager::Remember(uint32_t id, const void* handle) const {
  if (id >= handles_.size()) handles_.resize(size_t{id} + 1 + handles_.size() / 2);
  std::memcpy(handles_[id].data(), handle, sizeof(TransformHandle));
}

bool TransformComponentManager::Recall(Instance i, void* handle) const {
  if (!i.is_valid() || i.index >= handles_.size()) return false;
  TransformHandle h;
  std::memcpy(&h, handles_[i.index].data(), sizeof(h));
  if (!transforms_->IsValid(h)) return false;
  std::memcpy(handle, &h, sizeof(h));
  return true;
}

absl::StatusOr<Instance> TransformComponentManager::Create(Entity entity, InstanceId) {
  absl::StatusOr<TransformHandle> h = transforms_->Create(entity, Matrix4x4::Identity());
  if (!h.ok()) return h.status();
  Remember(h->id(), &*h);
  return Instance{h->id()};
}

Instance TransformComponentManager::Lookup(Entity entity, InstanceId) const {
  const TransformHandle h = transforms_->Lookup(entity);
  if (!h.is_valid()) return Instance{};
  Remember(h.id(), &h);
  return Instance{h.id()};
}

bool TransformComponentManager::Destroy(Entity entity, InstanceId) {
  return transforms_->DestroyEntity(entity);
}

absl::Status TransformComponentManager::Link(Entity child, Entity parent) {
  const TransformHandle c = transforms_->Lookup(child);
  const TransformHandle p = transforms_->Lookup(parent);
  if (!c.is_valid() || !p.is_valid()) {
    return absl::NotFoundError(absl::StrCat("transform: ", (c.is_valid() ? parent : child).DebugString(),
                                            " has no transform"));
  }
  return transforms_->Link(c, p);
}

bool TransformComponentManager::LocalParts(Instance i, float position[3], float rotation[4],
                                           float scale[3]) const {
  TransformHandle h;
  if (!Recall(i, &h)) return false;
  Vector3 p, s;
  Quaternion q;
  if (!transforms_->Local(h).Decompose(&p, &q, &s)) return false;
  position[0] = p.x, position[1] = p.y, position[2] = p.z;
  rotation[0] = q.x, rotation[1] = q.y, rotation[2] = q.z, rotation[3] = q.w;
  scale[0] = s.x, scale[1] = s.y, scale[2] = s.z;
  return true;
}

bool TransformComponentManager::SetLocalParts(Instance i, const float position[3],
                                              const float rotation[4], const float scale[3]) {
  TransformHandle h;
  if (!Recall(i, &h)) return false;
  const Matrix4x4 local =
      Matrix4x4::Compose(Vector3{position[0], position[1], position[2]},
                         Quaternion{rotation[0], rotation[1], rotation[2], rotation[3]},
                         Vector3{scale[0], scale[1], scale[2]});
  return transforms_->SetLocal(h, local);
}

bool TransformComponentManager::WorldMatrix(Instance i, float out[16]) const {
  TransformHandle h;
  if (!Recall(i, &h)) return false;
  std::memcpy(out, transforms_->World(h).m, 16 * sizeof(float));
  return true;
}

}  // namespace strata
