// NamedComponentManager<T>: a component an entity may hold several of, each under its
// own instance name ("Fog" and "Vignette" post effects of one environment entity, as
// the entity index article's render data), seen by the entity index and the property
// system as an ordinary ComponentManager.
//
//   EntityManager entities;
//   NamedComponentManager<PostEffect> effects(entities, "post_effect");
//   Entity env = entities.Create();
//   absl::StatusOr<Instance> fog = effects.Create(env, IdString32("Fog"));
//   effects.Get(*fog).density = 0.02f;
//   effects.Create(env, IdString32("Vignette"));
//   entities.Destroy(env);   // both instances go (the manager listens for destroys)
//
// Storage: a dense array of T with a hash map (entity, name) -> index and a per-entity
// list of names for the destroy listener. Create and Destroy may move instances, so they
// invalidate every Instance of this manager (Lookup again after them). Create, Destroy
// and Spawn tell the instance listener (index/component_manager.h), so a World's entity
// index and properties by name see instances made at run time.
// Thread-safety: none.
#ifndef STRATA_COMPONENT_NAMED_COMPONENT_H_
#define STRATA_COMPONENT_NAMED_COMPONENT_H_

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "base/check.h"
#include "base/id_string.h"
#include "entity/entity.h"
#include "entity/entity_manager.h"
#include "index/component_manager.h"

namespace strata {

template <typename T>
class NamedComponentManager final : public ComponentManager {
  static_assert(std::is_trivially_copyable_v<T>, "components are plain data copied with memcpy");

 public:
  // NamedComponentManager(entities, type_name): subscribes to `entities`' destruction,
  // so destroying an entity destroys its instances. Either may be destroyed first.
  NamedComponentManager(EntityManager& entities, std::string type_name)
      : type_name_(std::move(type_name)) {
    listener_ = entities.AddDestroyListener(
        [this](absl::Span<const Entity> dead) { DestroyEntities(dead); });
  }
  ~NamedComponentManager() override = default;
  NamedComponentManager(const NamedComponentManager&) = delete;
  NamedComponentManager& operator=(const NamedComponentManager&) = delete;

  absl::string_view type_name() const override { return type_name_; }

  // Create: instance `id` of live `entity`, default-constructed, and tells the instance
  // listener. InvalidArgument for an invalid entity, NotFound for a dead one,
  // AlreadyExists if it has `id` here; the listener's refusal (nothing created).
  absl::StatusOr<Instance> Create(Entity entity, InstanceId id) override {
    return CreateWith(entity, id, T{});
  }
  absl::StatusOr<Instance> CreateWith(Entity entity, InstanceId id, const T& value) {
    absl::StatusOr<Instance> created = Insert(entity, id, value);
    if (!created.ok()) return created;
    absl::Status told = NotifyCreated(id, absl::MakeConstSpan(&entity, 1));
    if (!told.ok()) {
      Erase(entity, id);
      return told;
    }
    return created;
  }

  // Lookup: O(1) expected; invalid Instance if absent.
  Instance Lookup(Entity entity, InstanceId id) const override {
    auto it = instances_.find(Key{entity, id});
    return it == instances_.end() ? Instance{} : Instance{it->second};
  }

  // Destroy: swap-removes the instance; false if absent. O(1) expected.
  bool Destroy(Entity entity, InstanceId id) override {
    if (!Erase(entity, id)) return false;
    NotifyDestroyed(id, absl::MakeConstSpan(&entity, 1));
    return true;
  }

  // DestroyEntities: every instance of each entity (the destroy listener); returns how
  // many. The instance listener is not told: an entity's destruction is the entity
  // manager's event. O(entities + their instances).
  size_t DestroyEntities(absl::Span<const Entity> entities) {
    size_t destroyed = 0;
    for (Entity e : entities) {
      // Erase edits the entity's list and erases it with the last id: look it up again
      // each time, first id first (no copy of the list: GCC 12 at -O2 warned falsely
      // about copying an InlinedVector here).
      for (auto owner = by_entity_.find(e); owner != by_entity_.end(); owner = by_entity_.find(e)) {
        if (!Erase(e, owner->second.front())) break;
        ++destroyed;
      }
    }
    return destroyed;
  }

  // Get / entity / id: a valid instance's data, owner and name. An invalid Instance
  // (a Lookup that found nothing) or one past the live instances is a programmer
  // error: STRATA_CHECK, in every build (one compare). An Instance kept across a
  // Create or Destroy may name another instance (see "Storage" above): Lookup again.
  T& Get(Instance instance) { return data_[Checked(instance)]; }
  const T& Get(Instance instance) const { return data_[Checked(instance)]; }
  Entity entity(Instance instance) const { return owners_[Checked(instance)].first; }
  InstanceId id(Instance instance) const { return owners_[Checked(instance)].second; }

  // InstancesOf: the names of `entity`'s instances, in creation order. A copy (no
  // allocation for up to two), so Create and Destroy may run while iterating it:
  //   for (InstanceId id : effects.InstancesOf(e)) effects.Destroy(e, id);
  absl::InlinedVector<InstanceId, 2> InstancesOf(Entity entity) const {
    auto it = by_entity_.find(entity);
    return it == by_entity_.end() ? absl::InlinedVector<InstanceId, 2>() : it->second;
  }
  // InstanceNames: the same names without the copy, valid until the next Create or
  // Destroy of this manager (for readers such as a save).
  absl::Span<const InstanceId> InstanceNames(Entity entity) const {
    auto it = by_entity_.find(entity);
    return it == by_entity_.end() ? absl::Span<const InstanceId>() : absl::MakeConstSpan(it->second);
  }
  size_t CountOf(Entity entity) const {
    auto it = by_entity_.find(entity);
    return it == by_entity_.end() ? 0 : it->second.size();
  }

  // size: live instances. MemoryUsage: bytes of the arrays and maps (capacities).
  size_t size() const { return data_.size(); }
  size_t MemoryUsage() const {
    return data_.capacity() * sizeof(T) + owners_.capacity() * sizeof(Key) +
           instances_.capacity() * (sizeof(std::pair<Key, uint32_t>) + 1) +
           by_entity_.capacity() * (sizeof(std::pair<Entity, absl::InlinedVector<InstanceId, 2>>) + 1);
  }

  // Spawn: gives owners[i] instance names[i] with the T at objects[i], and tells the
  // instance listener once per name. Checked before any change (all or nothing):
  // InvalidArgument for mismatched sizes or an invalid entity, AlreadyExists for a
  // taken (entity, name), NotFound for a dead entity, the listener's refusal.
  absl::Status Spawn(absl::Span<const Entity> owners, absl::Span<const uint32_t> names,
                     absl::Span<const T> objects) {
    if (names.size() != owners.size() || objects.size() != owners.size()) {
      return absl::InvalidArgumentError(absl::StrCat(type_name_, ": ", owners.size(), " owners, ",
                                                     names.size(), " names, ", objects.size(),
                                                     " objects"));
    }
    data_.reserve(data_.size() + owners.size());
    owners_.reserve(owners_.size() + owners.size());
    auto undo = [&](size_t created) {
      for (size_t j = 0; j < created; ++j) Erase(owners[j], IdString32::FromValue(names[j]));
    };
    for (size_t i = 0; i < owners.size(); ++i) {
      absl::StatusOr<Instance> created = Insert(owners[i], IdString32::FromValue(names[i]), objects[i]);
      if (!created.ok()) {
        undo(i);
        return created.status();
      }
    }
    absl::Status told = NotifyCreatedByName(owners, names);
    if (!told.ok()) undo(owners.size());
    return told;
  }

 private:
  using Key = std::pair<Entity, InstanceId>;

  // Insert / Erase: Create and Destroy without telling the listener.
  absl::StatusOr<Instance> Insert(Entity entity, InstanceId id, const T& value) {
    if (!entity.is_valid()) return absl::InvalidArgumentError(absl::StrCat(type_name_, ": invalid entity"));
    // Through the subscription: once the manager is gone, no entity is alive.
    if (!listener_->Alive(entity)) {
      return absl::NotFoundError(absl::StrCat(type_name_, ": ", entity.DebugString(), " is not alive"));
    }
    const uint32_t index = static_cast<uint32_t>(data_.size());
    if (!instances_.try_emplace(Key{entity, id}, index).second) {
      return absl::AlreadyExistsError(absl::StrCat(type_name_, ": ", entity.DebugString(),
                                                   " already has instance ", id.DebugString()));
    }
    data_.push_back(value);
    owners_.push_back(Key{entity, id});
    by_entity_[entity].push_back(id);
    return Instance{index};
  }

  bool Erase(Entity entity, InstanceId id) {
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

  uint32_t Checked(Instance instance) const {
    STRATA_CHECK(instance.index < data_.size(), "NamedComponentManager: instance out of range");
    return instance.index;
  }

  std::string type_name_;
  EntityManager::Subscription listener_;
  std::vector<T> data_;
  std::vector<Key> owners_;
  absl::flat_hash_map<Key, uint32_t> instances_;
  absl::flat_hash_map<Entity, absl::InlinedVector<InstanceId, 2>> by_entity_;
};

}  // namespace strata

#endif  // STRATA_COMPONENT_NAMED_COMPONENT_H_
