// TransformComponentManager and DescribeTransformProperties: the transform component
// seen through the entity index (index/component_manager.h) and the property system
// (index/property_system.h), as "Rebuilding the Entity Index" asks: tools set
// `local_position` of an entity's "Transform" by name.
//
//   EntityManager entities;
//   TransformComponentManager transforms;        // owns a TransformComponent
//   // transforms.transforms().ConnectTo(entities) where transform_component.h is included
//   EntityIndex index;
//   PropertySystem properties(&index);
//   DescribeTransformProperties(properties, transforms);
//   InstanceIndexer indexer(pages, index);       // component/instance_indexer.h
//   indexer.Attach(transforms);                  // Create and Destroy reach the index
//   Entity e = entities.Create();
//   transforms.Create(e, IdString32("Transform"));
//   properties.Set(e, "Transform", "local_position", Vector3{1, 2, 3});
//   properties.Get(e, "Transform", "world");   // Matrix4x4, translation (1, 2, 3)
//
// Properties: local_position (vector3), local_rotation (quaternion x, y, z, w),
// local_scale (vector3) read/write, through Matrix4x4::Decompose/Compose of the local
// matrix; world (matrix4x4, row-major, row vectors) read-only. Setting one part keeps
// the other two. Setting a rotation that is zero or not finite, or a scale with a zero
// or non-finite element, is InvalidArgument (the local matrix must stay decomposable).
// A local matrix with shear reads back the rotation of its orthonormalised basis.
#ifndef STRATA_COMPONENT_TRANSFORM_PROPERTIES_H_
#define STRATA_COMPONENT_TRANSFORM_PROPERTIES_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "entity/entity.h"
#include "index/component_manager.h"
#include "index/property_system.h"
#include "transform/transform_component.h"

namespace strata {

// TransformComponentManager: adapts one TransformComponent (one world's transforms) to
// the ComponentManager interface. An entity has at most one transform per component,
// so the InstanceId is not checked: the entity index has already resolved the name
// ("Transform", or whatever the level called it) to this manager before Lookup.
// Instance::index is the transform's stable id; an Instance stays valid until that
// transform is destroyed (transform nodes move, ids do not).
class TransformComponentManager final : public ComponentManager {
 public:
  // TransformComponentManager(): owns a new immediate-mode TransformComponent.
  TransformComponentManager();
  // TransformComponentManager(transforms): adapts `transforms`, not owned (must outlive).
  // Aborts, in every build mode, if `transforms` is null.
  explicit TransformComponentManager(TransformComponent* transforms);
  ~TransformComponentManager() override;
  TransformComponentManager(const TransformComponentManager&) = delete;
  TransformComponentManager& operator=(const TransformComponentManager&) = delete;

  absl::string_view type_name() const override { return "transform"; }

  // Create: a root transform with the identity local matrix, told to the instance
  // listener under `id`. Errors of TransformComponent::Create (InvalidArgument,
  // AlreadyExists), the listener's refusal (nothing created). Amortised O(1).
  absl::StatusOr<Instance> Create(Entity entity, InstanceId id) override;
  // Lookup: `entity`'s transform (any `id`), or invalid. O(1) expected.
  Instance Lookup(Entity entity, InstanceId id) const override;
  // Destroy: destroys `entity`'s transform (children become roots) and tells the
  // listener that `id` (the name it was created under) is gone; false if none.
  bool Destroy(Entity entity, InstanceId id) override;
  // Spawned: tells the listener of transforms a batch spawn made on transforms()
  // directly (SpawnTransformBatch): owners[i] under IdString32 value names[i].
  // InvalidArgument if the sizes differ; the listener's refusal.
  absl::Status Spawned(absl::Span<const Entity> owners, absl::Span<const uint32_t> names);

  // Link: makes `child`'s transform a child of `parent`'s. NotFound if either entity
  // has no transform here; TransformComponent::Link's errors otherwise.
  absl::Status Link(Entity child, Entity parent);

  TransformComponent& transforms() const { return *transforms_; }

 private:
  // Handle: the transform behind index Instance `i` (Instance::index is the stable
  // id), or an invalid handle if that transform is gone.
  TransformHandle Handle(Instance i) const;
  // Remember: records `h` as the handle of its stable id; returns Instance{h.id()}.
  Instance Remember(TransformHandle h) const;
  friend absl::Status DescribeTransformProperties(PropertySystem&,
                                                  TransformComponentManager&);

  std::unique_ptr<TransformComponent> owned_;
  TransformComponent* transforms_;
  // The TransformHandle last issued for each stable id: the generation
  // tells a live transform from a destroyed one whose id was reused.
  mutable std::vector<TransformHandle> handles_;
};

// DescribeTransformProperties: describes `manager`'s properties (see above) to
// `properties`. Errors of PropertySystem::Describe (AlreadyExists if described twice).
absl::Status DescribeTransformProperties(PropertySystem& properties,
                                         TransformComponentManager& manager);

}  // namespace strata

#endif  // STRATA_COMPONENT_TRANSFORM_PROPERTIES_H_
