#include "index/component_manager.h"

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/types/span.h"
#include "base/id_string.h"
#include "entity/entity.h"

namespace strata {

absl::Status ForEachNameGroup(
    absl::Span<const Entity> owners, absl::Span<const uint32_t> names,
    const std::function<absl::Status(InstanceId, absl::Span<const Entity>)>& visit,
    const std::function<void(InstanceId, absl::Span<const Entity>)>& undo) {
  if (owners.empty()) return absl::OkStatus();
  // The common case: every instance under one name (the type's), one call, no copy.
  bool one_name = true;
  for (uint32_t name : names) one_name = one_name && name == names[0];
  if (one_name) return visit(IdString32::FromValue(names[0]), owners);
  absl::flat_hash_map<uint32_t, size_t> group_of;
  std::vector<std::pair<uint32_t, std::vector<Entity>>> groups;
  for (size_t i = 0; i < owners.size(); ++i) {
    auto [it, added] = group_of.try_emplace(names[i], groups.size());
    if (added) groups.emplace_back(names[i], std::vector<Entity>());
    groups[it->second].second.push_back(owners[i]);
  }
  for (size_t g = 0; g < groups.size(); ++g) {
    absl::Status status =
        visit(IdString32::FromValue(groups[g].first), absl::MakeConstSpan(groups[g].second));
    if (!status.ok()) {
      for (size_t done = 0; undo && done < g; ++done) {
        undo(IdString32::FromValue(groups[done].first), absl::MakeConstSpan(groups[done].second));
      }
      return status;
    }
  }
  return absl::OkStatus();
}

absl::Status ComponentManager::NotifyCreatedByName(absl::Span<const Entity> owners,
                                                   absl::Span<const uint32_t> names) {
  if (instance_listener_ == nullptr) return absl::OkStatus();
  return ForEachNameGroup(
      owners, names,
      [this](InstanceId name, absl::Span<const Entity> group) { return NotifyCreated(name, group); },
      [this](InstanceId name, absl::Span<const Entity> group) { NotifyDestroyed(name, group); });
}

}  // namespace strata
