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

absl::Status ComponentManager::NotifyCreatedByName(absl::Span<const Entity> owners,
                                                   absl::Span<const uint32_t> names) {
  if (instance_listener_ == nullptr || owners.empty()) return absl::OkStatus();
  // The common case: every instance under one name (the type's), one call.
  bool one_name = true;
  for (uint32_t name : names) one_name = one_name && name == names[0];
  if (one_name) return NotifyCreated(IdString32::FromValue(names[0]), owners);
  // Groups in first-appearance order, so the listener sees the same calls every run.
  absl::flat_hash_map<uint32_t, size_t> group_of;
  std::vector<std::pair<uint32_t, std::vector<Entity>>> groups;
  for (size_t i = 0; i < owners.size(); ++i) {
    auto [it, added] = group_of.try_emplace(names[i], groups.size());
    if (added) groups.emplace_back(names[i], std::vector<Entity>());
    groups[it->second].second.push_back(owners[i]);
  }
  for (size_t g = 0; g < groups.size(); ++g) {
    absl::Status status =
        NotifyCreated(IdString32::FromValue(groups[g].first), absl::MakeConstSpan(groups[g].second));
    if (!status.ok()) {
      for (size_t told = 0; told < g; ++told) {
        NotifyDestroyed(IdString32::FromValue(groups[told].first),
                        absl::MakeConstSpan(groups[told].second));
      }
      return status;
    }
  }
  return absl::OkStatus();
}

}  // namespace strata
