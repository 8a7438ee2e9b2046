// Entity: a generational handle to an entity, as in "Entity Memory Contiguity".
//
// 64 bits: a 32-bit index (the slot the entity owns while alive) and a 32-bit
// generation (how many times that slot was reused before). A handle whose generation no
// longer matches its slot is stale; the EntityManager detects it.
//
//   strata::Entity e = manager.Create();
//   if (manager.Alive(e)) { ... }
//   absl::flat_hash_set<strata::Entity> selected = {e};
//   std::cout << e;  // "Entity(17:3)"
//
// A default-constructed Entity is invalid and never issued by an EntityManager.
#ifndef STRATA_ENTITY_ENTITY_H_
#define STRATA_ENTITY_ENTITY_H_

#include <cstdint>
#include <ostream>
#include <string>
#include <utility>

#include "base/policy_checks.h"

namespace strata {

class Entity {
 public:
  // kInvalidIndex / kInvalidGeneration: the fields of the invalid handle.
  static constexpr uint32_t kInvalidIndex = 0xFFFFFFFFu;
  static constexpr uint32_t kInvalidGeneration = 0xFFFFFFFFu;

  // Entity(): the invalid handle.
  constexpr Entity() = default;
  constexpr Entity(uint32_t index, uint32_t generation)
      : index_(index), generation_(generation) {}

  // Invalid: the invalid handle, same as Entity().
  static constexpr Entity Invalid() { return Entity(); }

  // FromBits / bits: the 64-bit packed form (generation in the high half), for storage
  // in files or hash keys. FromBits(e.bits()) == e.
  static constexpr Entity FromBits(uint64_t bits) {
    return Entity(static_cast<uint32_t>(bits), static_cast<uint32_t>(bits >> 32));
  }
  constexpr uint64_t bits() const {
    return (uint64_t{generation_} << 32) | uint64_t{index_};
  }

  constexpr uint32_t index() const { return index_; }
  constexpr uint32_t generation() const { return generation_; }

  // is_valid: false only for the invalid handle. A valid handle may still be stale;
  // only its EntityManager can tell.
  constexpr bool is_valid() const { return index_ != kInvalidIndex; }

  friend constexpr bool operator==(Entity a, Entity b) {
    return a.index_ == b.index_ && a.generation_ == b.generation_;
  }
  friend constexpr bool operator!=(Entity a, Entity b) { return !(a == b); }
  // Ordered by bits(): a strict weak order for sorted containers, not a creation order.
  friend constexpr bool operator<(Entity a, Entity b) { return a.bits() < b.bits(); }

  template <typename H>
  friend H AbslHashValue(H h, Entity e) {
    return H::combine(std::move(h), e.bits());
  }

  // "Entity(index:generation)", or "Entity(invalid)".
  std::string DebugString() const;
  friend std::ostream& operator<<(std::ostream& os, Entity e) {
    return os << e.DebugString();
  }

 private:
  uint32_t index_ = kInvalidIndex;
  uint32_t generation_ = kInvalidGeneration;
};

static_assert(sizeof(Entity) == 8, "Entity is one 64-bit word");

}  // namespace strata

#endif  // STRATA_ENTITY_ENTITY_H_
