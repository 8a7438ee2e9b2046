#include "base/id_string.h"

#include "absl/strings/str_format.h"
#include "xxhash.h"

namespace strata {

uint32_t IdString32::Hash(absl::string_view name) {
  return XXH32(name.data(), name.size(), /*seed=*/0);
}

std::string IdString32::DebugString() const { return absl::StrFormat("#%08x", value_); }

}  // namespace strata
