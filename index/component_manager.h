// ComponentManager: the interface every component manager implements so the entity
// index and the property system can reach its instances, with caller-chosen InstanceIds
// ("Rebuilding the Entity Index": "Shifting control of the InstanceId").
//
// The caller picks the InstanceId, by convention the IdString32 of the component's name
// in the entity resource, so create and lookup are symmetrical and the entity index
// need not store ids at all:
//
//   RenderDataManager render_data("render_data");
//   absl::StatusOr<Instance> fog = render_data.Create(e, IdString32("Fog"));
//   absl::StatusOr<Instance> vignette = render_data.Create(e, IdString32("Vignette"));
//   Instance again = render_data.Lookup(e, IdString32("Fog"));   // == *fog
//   render_data.Destroy(e, IdString32("Fog"));                    // true
//
// An InstanceId must be unique per (entity, manager); for the property system it must
// be unique across all managers of an entity (enforced by EntityIndex::AddInstance).
//
// InstanceListener: the one path by which whoever indexes instances (a World's
// InstanceIndexer, component/instance_indexer.h) hears that a manager created or
// destroyed some, in batches of one name. A manager tells its listener from every path
// that creates or destroys an instance (Create, Destroy, its batch spawn); what goes
// with a destroyed entity is the entity manager's event, not a listener's.
#ifndef STRATA_INDEX_COMPONENT_MANAGER_H_
#define STRATA_INDEX_COMPONENT_MANAGER_H_

#include <cstdint>
#include <functional>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "base/id_string.h"
#include "entity/entity.h"

namespace strata {

// InstanceId: the caller's name for one component instance of an entity within one
// manager; by convention IdString32(component name).
using InstanceId = IdString32;

// Instance: a manager's handle to one instance's data, from its Create or Lookup. What
// `index` means, and how long the handle stays valid, is the manager's to say (named
// components: a position in its arrays, until the next Create or Destroy; page
// components: the entity's index and generation, until the entity loses the
// component; the transform: a stable id, until it is destroyed). A manager that can
// tell a stale handle (page components: by `generation`) refuses it.
struct Instance {
  static constexpr uint32_t kInvalidIndex = 0xFFFFFFFFu;
  uint32_t index = kInvalidIndex;
  // generation: the entity generation the handle was made for, where the manager
  // keys instances by entity (0 where it does not).
  uint32_t generation = 0;

  constexpr bool is_valid() const { return index != kInvalidIndex; }
  friend constexpr bool operator==(Instance a, Instance b) {
    return a.index == b.index && a.generation == b.generation;
  }
  friend constexpr bool operator!=(Instance a, Instance b) { return !(a == b); }
};

class ComponentManager;

// ForEachNameGroup: calls visit(name, group) once per distinct name of `names` (IdString32
// values), `group` the owners[i] with that name, in the order names first appear (the
// same calls every run); one call over `owners` itself when all share a name. Stops at
// the first error, which it returns after calling undo(name, group), if given, for
// each group visited before. owners and names have the same size (callers check).
absl::Status ForEachNameGroup(
    absl::Span<const Entity> owners, absl::Span<const uint32_t> names,
    const std::function<absl::Status(InstanceId, absl::Span<const Entity>)>& visit,
    const std::function<void(InstanceId, absl::Span<const Entity>)>& undo = nullptr);

// InstanceListener: told after `manager` created instance `name` of each of `entities`
// (OnCreated) or destroyed it (OnDestroyed). OnCreated may refuse the batch (the index
// refuses a name an entity already has in another manager): the manager then undoes
// the batch's creation and returns the error, so nothing is half-indexed.
class InstanceListener {
 public:
  virtual ~InstanceListener() = default;
  virtual absl::Status OnCreated(ComponentManager& manager, InstanceId name,
                                 absl::Span<const Entity> entities) = 0;
  virtual void OnDestroyed(ComponentManager& manager, InstanceId name,
                           absl::Span<const Entity> entities) = 0;
};

// ComponentManager: owns the instances of one component type (in one world).
// Implementations are not required to be thread-safe.
class ComponentManager {
 public:
  virtual ~ComponentManager() = default;

  // set_instance_listener: the listener told of this manager's creations and
  // destructions (nullptr: none, the default). Not owned: it must outlive the manager
  // or be unset first.
  void set_instance_listener(InstanceListener* listener) { instance_listener_ = listener; }
  InstanceListener* instance_listener() const { return instance_listener_; }

  // type_name: the manager's name for error messages ("transform", "render_data").
  virtual absl::string_view type_name() const = 0;

  // Create: a new instance for (entity, id). AlreadyExists if the entity already has
  // an instance `id` in this manager; InvalidArgument for an invalid entity. May
  // invalidate every Instance of this manager.
  virtual absl::StatusOr<Instance> Create(Entity entity, InstanceId id) = 0;

  // Lookup: the instance for (entity, id), or an invalid Instance. A stale entity
  // handle (older generation) finds nothing. Expected O(1).
  virtual Instance Lookup(Entity entity, InstanceId id) const = 0;

  // Destroy: destroys the instance for (entity, id); false if there is none. May
  // invalidate every Instance of this manager.
  virtual bool Destroy(Entity entity, InstanceId id) = 0;

 protected:
  // NotifyCreated / NotifyDestroyed: tell the listener, if any (OK when there is none).
  absl::Status NotifyCreated(InstanceId name, absl::Span<const Entity> entities) {
    return instance_listener_ == nullptr || entities.empty()
               ? absl::OkStatus()
               : instance_listener_->OnCreated(*this, name, entities);
  }
  void NotifyDestroyed(InstanceId name, absl::Span<const Entity> entities) {
    if (instance_listener_ != nullptr && !entities.empty()) {
      instance_listener_->OnDestroyed(*this, name, entities);
    }
  }
  // NotifyCreatedByName: NotifyCreated for owners[i] under IdString32(names[i]), one
  // call per distinct name (one call when all share a name). On a refusal, the groups
  // already told are told of their destruction, and the error returned: the caller
  // then undoes every creation. owners and names have the same size (checked by the
  // caller).
  absl::Status NotifyCreatedByName(absl::Span<const Entity> owners,
                                   absl::Span<const uint32_t> names);

 private:
  InstanceListener* instance_listener_ = nullptr;
};

}  // namespace strata

#endif  // STRATA_INDEX_COMPONENT_MANAGER_H_
