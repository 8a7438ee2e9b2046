#include "index/legacy_entity_index.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "index/internal/container_memory.h"

namespace strata {

absl::Status LegacyEntityIndex::AddInstance(Entity entity, ComponentManager* manager,
                                                  IdString32 name, InstanceId instance) {
  if (!entity.is_valid()) {
    return absl::InvalidArgumentError("AddInstance: invalid entity");
  }
  if (manager == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("AddInstance: null manager for ", name.DebugString()));
  }
  std::vector<Entry>& entries = entities_[entity];
  for (const Entry& e : entries) {
    if (e.name == name) {
      return absl::AlreadyExistsError(absl::StrCat(
          entity.DebugString(), " already has a component named ", name.DebugString()));
    }
  }
  entries.push_back(Entry{name, instance, manager});
  return absl::OkStatus();
}

absl::Status LegacyEntityIndex::AddInstance(absl::Span<const Entity> entities,
                                                  ComponentManager* manager,
                                                  IdString32 name) {
  if (manager == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("AddInstance: null manager for ", name.DebugString()));
  }
  for (size_t i = 0; i < entities.size(); ++i) {
    absl::Status status = AddInstance(entities[i], manager, name);
    if (!status.ok()) {
      for (size_t j = 0; j < i; ++j) {  // Roll back: the name was appended last.
        auto it = entities_.find(entities[j]);
        it->second.pop_back();
        if (it->second.empty()) entities_.erase(it);
      }
      // An entity that appears twice fails on its second occurrence, AlreadyExists.
      return status;
    }
  }
  return absl::OkStatus();
}

ComponentManager* LegacyEntityIndex::FindComponentManager(Entity entity,
                                                          IdString32 name) const {
  auto it = entities_.find(entity);
  if (it == entities_.end()) return nullptr;
  for (const Entry& e : it->second) {
    if (e.name == name) return e.manager;
  }
  return nullptr;
}

std::optional<InstanceId> LegacyEntityIndex::FindInstanceId(Entity entity,
                                                            IdString32 name) const {
  auto it = entities_.find(entity);
  if (it == entities_.end()) return std::nullopt;
  for (const Entry& e : it->second) {
    if (e.name == name) return e.instance;
  }
  return std::nullopt;
}

absl::Status LegacyEntityIndex::RemoveInstance(Entity entity, IdString32 name) {
  auto it = entities_.find(entity);
  if (it == entities_.end()) {
    return absl::NotFoundError(
        absl::StrCat("RemoveInstance: ", entity.DebugString(), " is not indexed"));
  }
  std::vector<Entry>& entries = it->second;
  auto entry = std::find_if(entries.begin(), entries.end(),
                            [name](const Entry& e) { return e.name == name; });
  if (entry == entries.end()) {
    return absl::NotFoundError(absl::StrCat("RemoveInstance: ", entity.DebugString(),
                                            " has no component named ",
                                            name.DebugString()));
  }
  entries.erase(entry);
  if (entries.empty()) entities_.erase(it);
  return absl::OkStatus();
}

size_t LegacyEntityIndex::RemoveEntity(absl::Span<const Entity> entities) {
  size_t removed = 0;
  for (const Entity entity : entities) removed += RemoveEntity(entity) ? 1 : 0;
  return removed;
}

std::vector<LegacyEntityIndex::ComponentEntry> LegacyEntityIndex::Components(
    Entity entity) const {
  std::vector<ComponentEntry> result;
  auto it = entities_.find(entity);
  if (it == entities_.end()) return result;
  for (const Entry& e : it->second) result.push_back(ComponentEntry{e.name, e.manager});
  return result;
}

size_t LegacyEntityIndex::MemoryUsage() const {
  using Slot = std::pair<const Entity, std::vector<Entry>>;
  size_t bytes =
      index_internal::SwissTableBytes(entities_.capacity(), sizeof(Slot), alignof(Slot));
  for (const auto& [entity, entries] : entities_) bytes += entries.capacity() * sizeof(Entry);
  return bytes;
}

}  // namespace strata
