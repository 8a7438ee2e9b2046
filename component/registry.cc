#include "component/registry.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "base/user_text.h"
#include "component/transform_type.h"

namespace strata {

ComponentRegistry::ComponentRegistry() {
  // The transform type is built from constants and the registry is empty: cannot fail.
  Add(TransformComponentType()).IgnoreError();
}

absl::Status ComponentRegistry::Add(absl::StatusOr<ComponentType> type) {
  if (!type.ok()) return type.status();
  if (const ComponentType* other = Find(type->id())) {
    if (other->name() == type->name()) {
      return absl::AlreadyExistsError(
          absl::StrCat("component type \"", UserText(type->name()), "\" is already registered"));
    }
    return absl::AlreadyExistsError(absl::StrCat("component type \"", UserText(type->name()),
                                                 "\" has the same IdString32 as \"", other->name(),
                                                 "\""));
  }
  types_.push_back(std::make_unique<ComponentType>(*std::move(type)));
  const ComponentType* added = types_.back().get();
  by_id_.emplace(added->id().value(), added);
  ordered_.push_back(added);
  std::stable_sort(ordered_.begin(), ordered_.end(), [](const ComponentType* a, const ComponentType* b) {
    return a->spawn_order() != b->spawn_order() ? a->spawn_order() < b->spawn_order()
                                                : a->name() < b->name();
  });
  return absl::OkStatus();
}

const ComponentType* ComponentRegistry::Find(absl::string_view name) const {
  const ComponentType* type = Find(IdString32(name));
  return type != nullptr && type->name() == name ? type : nullptr;
}

const ComponentType* ComponentRegistry::Find(IdString32 id) const {
  auto it = by_id_.find(id.value());
  return it == by_id_.end() ? nullptr : it->second;
}

absl::Status ComponentRegistry::RegisterCompilers(EntityCompiler& compiler) const {
  for (const ComponentType* type : ordered_) STRATA_RETURN_IF_ERROR(type->RegisterCompiler(compiler));
  return absl::OkStatus();
}

}  // namespace strata
