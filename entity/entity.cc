#include "entity/entity.h"

#include "absl/strings/str_cat.h"

namespace strata {

std::string Entity::DebugString() const {
  if (!is_valid()) return "Entity(invalid)";
  return absl::StrCat("Entity(", index_, ":", generation_, ")");
}

}  // namespace strata
