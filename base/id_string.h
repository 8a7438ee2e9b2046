// IdString32: the stable 32-bit hash of a name, used as a component's InstanceId and
// stored in resource files.
//
// The value is XXH32(name, seed 0) from xxHash, so it is the same on every run, machine
// and build, and a resource compiled on one machine spawns on another.
//
//   constexpr-free but cheap: IdString32 fog("Fog");
//   if (fog == IdString32("Fog")) { ... }          // equal names, equal ids
//   uint32_t stored = fog.value();                  // what resource files hold
//
// Distinct names may collide (32 bits); code that must tell them apart keeps the name.
#ifndef STRATA_BASE_ID_STRING_H_
#define STRATA_BASE_ID_STRING_H_

#include <cstdint>
#include <ostream>
#include <string>
#include <utility>

#include "absl/strings/string_view.h"
#include "base/policy_checks.h"

namespace strata {

class IdString32 {
 public:
  // IdString32(): the id of no name, value 0.
  constexpr IdString32() = default;
  // IdString32(name): XXH32 of the bytes of `name`, seed 0.
  explicit IdString32(absl::string_view name) : value_(Hash(name)) {}
  // FromValue: an id read back from storage.
  static constexpr IdString32 FromValue(uint32_t value) {
    IdString32 id;
    id.value_ = value;
    return id;
  }

  constexpr uint32_t value() const { return value_; }

  // Hash: the raw XXH32 of `name` (seed 0).
  static uint32_t Hash(absl::string_view name);

  friend constexpr bool operator==(IdString32 a, IdString32 b) {
    return a.value_ == b.value_;
  }
  friend constexpr bool operator!=(IdString32 a, IdString32 b) { return !(a == b); }
  friend constexpr bool operator<(IdString32 a, IdString32 b) {
    return a.value_ < b.value_;
  }
  template <typename H>
  friend H AbslHashValue(H h, IdString32 id) {
    return H::combine(std::move(h), id.value_);
  }
  // "#1a2b3c4d" (hex).
  std::string DebugString() const;
  friend std::ostream& operator<<(std::ostream& os, IdString32 id) {
    return os << id.DebugString();
  }

 private:
  uint32_t value_ = 0;
};

}  // namespace strata

#endif  // STRATA_BASE_ID_STRING_H_
