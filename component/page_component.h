// PageComponentManager<T>: a component whose data lives in an EntityPages store
// (iteration/entity_pages.h), seen by the entity index and the property system as an
// ordinary ComponentManager.
//
// The page store keeps at most one T per entity, so an instance is always named after
// its type ("sprite", "spark"): Create and Lookup take only IdString32(type_name).
// Systems iterate the data with page queries (iteration/filter.h) through component();
// tools reach one instance through Lookup + Get, or by name through the property system.
//
//   EntityManager entities;
//   EntityPages pages(entities);
//   absl::StatusOr<std::unique_ptr<PageComponentManager<Sprite>>> sprites =
//       PageComponentManager<Sprite>::Register(pages, "sprite");
//   Entity e = entities.Create();
//   Instance i = *(*sprites)->Create(e, (*sprites)->instance_id());
//   (*sprites)->Get(i).size = 2.0f;
//   Filter all_sprites;
//   all_sprites.Include((*sprites)->component());
//   ForEachMatch(pages, all_sprites, [](Sprite& s) { s.size *= 2; }, (*sprites)->component());
//
// Instance: the entity's index and generation, not its page slot. It stays valid
// until the entity loses the component (Remove, Delete, destroy), across
// EntityPages::Compact too: Get resolves it through the store's index -> slot table,
// and refuses it once the entity is gone, even when another entity reuses its index.
// A T& from Get is valid until the next Compact or until the entity loses T.
// Destroying the entity in the EntityManager removes the data (EntityPages listens
// for destroys).
// Thread-safety: that of EntityPages.
#ifndef STRATA_COMPONENT_PAGE_COMPONENT_H_
#define STRATA_COMPONENT_PAGE_COMPONENT_H_

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "base/check.h"
#include "base/id_string.h"
#include "entity/entity.h"
#include "index/component_manager.h"
#include "iteration/entity_pages.h"

namespace strata {

template <typename T>
class PageComponentManager final : public ComponentManager {
  static_assert(std::is_trivially_copyable_v<T>, "page components are plain data copied with memcpy");

 public:
  // Register: registers T in `pages` under `type_name` and returns its manager.
  // `pages` must outlive the manager. Errors of EntityPages::RegisterComponent
  // (AlreadyExists for a taken name, ResourceExhausted past its type limit).
  static absl::StatusOr<std::unique_ptr<PageComponentManager>> Register(
      EntityPages& pages, absl::string_view type_name) {
    absl::StatusOr<Component<T>> component = pages.RegisterComponent<T>(type_name);
    if (!component.ok()) return component.status();
    return std::unique_ptr<PageComponentManager>(
        new PageComponentManager(pages, std::string(type_name), *component));
  }

  absl::string_view type_name() const override { return type_name_; }
  // instance_id: IdString32(type_name), the only InstanceId instances may have.
  InstanceId instance_id() const { return id_; }
  // component: the page store's id of T, for filters and ForEachMatch.
  Component<T> component() const { return component_; }
  EntityPages& pages() const { return *pages_; }

  // Create: gives live `entity` a zero-initialised T. InvalidArgument if `id` is not
  // instance_id() (or the entity is invalid), AlreadyExists if it has one, NotFound if
  // it is not alive. O(1) amortised.
  absl::StatusOr<Instance> Create(Entity entity, InstanceId id) override {
    return CreateWith(entity, id, T{});
  }
  absl::StatusOr<Instance> CreateWith(Entity entity, InstanceId id, const T& value) {
    if (id != id_) return WrongName(id);
    if (!entity.is_valid()) return absl::InvalidArgumentError(absl::StrCat(type_name_, ": invalid entity"));
    absl::Status status = pages_->Add(entity, component_, value);
    if (!status.ok()) return status;
    return Instance{entity.index(), entity.generation()};
  }

  // Lookup: O(1); invalid if `entity` is stale, lacks T, or `id` is not instance_id().
  Instance Lookup(Entity entity, InstanceId id) const override {
    if (id != id_ || static_cast<const EntityPages*>(pages_)->TryGet(entity, component_) == nullptr) {
      return Instance{};
    }
    return Instance{entity.index(), entity.generation()};
  }

  // Destroy: removes T from `entity`; false if it has none. O(1).
  bool Destroy(Entity entity, InstanceId id) override {
    if (id != id_) return false;
    return pages_->Remove(entity, component_.id).ok();
  }

  // Get: the data of a valid instance (from Create or Lookup). O(1): the generation
  // check, the slot table, then the page. The invalid Instance (a Lookup that found
  // nothing), or one whose entity has no T (never had, lost it, or was destroyed, also
  // when another entity now has its index), is a programmer error: STRATA_CHECK, in
  // every build (one null test). A tag (empty T) has no data to check: every instance
  // reads the one empty value.
  T& Get(Instance instance) const {
    if constexpr (std::is_empty_v<T>) {
      static T tag;
      return tag;
    }
    void* data = pages_->TryGet(Entity(instance.index, instance.generation), component_.id);
    STRATA_CHECK(data != nullptr, "PageComponentManager: the instance has no component");
    return *static_cast<T*>(data);
  }

  // Spawn: the spawn function body. Gives owners[i] the T stored at
  // data[i * sizeof(T)] (native byte order) in one batch; the store's listener (a
  // World's InstanceIndexer) registers them in the entity index. Checked before
  // any change (all or nothing): InvalidArgument if sizes disagree or a name is not
  // instance_id(), AlreadyExists if an owner already has T (or appears twice),
  // NotFound if one is not alive.
  absl::Status Spawn(absl::Span<const Entity> owners, absl::Span<const uint32_t> names,
                     absl::Span<const std::byte> data) {
    // A tag's instances are sizeof(T) == 1 byte each in the data, none in the store.
    if (names.size() != owners.size() || data.size() != owners.size() * sizeof(T)) {
      return absl::InvalidArgumentError(
          absl::StrCat(type_name_, ": ", owners.size(), " owners, ", names.size(),
                       " names and ", data.size(), " data bytes do not match (",
                       sizeof(T), " bytes per instance)"));
    }
    for (size_t i = 0; i < owners.size(); ++i) {
      if (names[i] != id_.value()) return WrongName(IdString32::FromValue(names[i]));
      if (pages_->Has(owners[i], component_.id)) {
        return absl::AlreadyExistsError(absl::StrCat(type_name_, ": ",
                                                     owners[i].DebugString(), " already has one"));
      }
    }
    absl::Status status;
    if constexpr (std::is_empty_v<T>) {
      status = pages_->AddEach(owners, component_.id, absl::Span<const std::byte>());
    } else if (reinterpret_cast<uintptr_t>(data.data()) % alignof(T) == 0) {
      // Whole T copies, the size known to the compiler (a blob's data is aligned).
      status = pages_->AddEach(
          owners, component_,
          absl::MakeConstSpan(reinterpret_cast<const T*>(data.data()), owners.size()));
    } else {
      status = pages_->AddEach(owners, component_.id, data);
    }
    if (!status.ok()) {
      // The batch stopped at the first failing owner; those before it took T.
      for (Entity owner : owners) {
        if (pages_->Has(owner, component_.id)) pages_->Remove(owner, component_.id).IgnoreError();
      }
    }
    return status;
  }

 private:
  PageComponentManager(EntityPages& pages, std::string type_name, Component<T> component)
      : pages_(&pages), type_name_(std::move(type_name)), id_(type_name_),
        component_(component) {}

  absl::Status WrongName(InstanceId id) const {
    return absl::InvalidArgumentError(absl::StrCat(
        type_name_, ": an entity has at most one, named \"", type_name_, "\" (",
        id_.DebugString(), "), not ", id.DebugString()));
  }

  EntityPages* pages_;
  std::string type_name_;
  IdString32 id_;
  Component<T> component_;
};

}  // namespace strata

#endif  // STRATA_COMPONENT_PAGE_COMPONENT_H_
