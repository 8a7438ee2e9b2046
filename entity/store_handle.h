// StoreHandle: a generational handle to one entry of a SparseStore or ContiguousStore.
//
// The stores issue their own handles, as the storage in "Entity Memory Contiguity"
// does: 32-bit slot index + 32-bit generation. It is a distinct type from
// strata::Entity on purpose: an EntityManager handle passed to a store (or the other way
// round) is a compile error, not a silent lookup of the wrong slot. To attach store
// data to an EntityManager entity, keep the Entity inside T (or a map Entity ->
// StoreHandle) and remove the entry from a DestroyListener.
//
//   strata::SparseStore<Npc> npcs(4096);
//   strata::StoreHandle h = *npcs.Add(Npc{...});
//   absl::flat_hash_set<strata::StoreHandle> selected = {h};
//   std::cout << h;  // "StoreHandle(17:3)"
//
// A default-constructed StoreHandle is invalid and never issued by a store.
#ifndef STRATA_ENTITY_STORE_HANDLE_H_
#define STRATA_ENTITY_STORE_HANDLE_H_

#include <cstdint>
#include <ostream>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/policy_checks.h"

namespace strata {

class StoreHandle {
 public:
  // kInvalidIndex / kInvalidGeneration: the fields of the invalid handle.
  static constexpr uint32_t kInvalidIndex = 0xFFFFFFFFu;
  static constexpr uint32_t kInvalidGeneration = 0xFFFFFFFFu;

  // StoreHandle(): the invalid handle.
  constexpr StoreHandle() = default;
  constexpr StoreHandle(uint32_t index, uint32_t generation)
      : index_(index), generation_(generation) {}

  // FromBits / bits: the packed form (generation in the high half). FromBits(h.bits())
  // == h.
  static constexpr StoreHandle FromBits(uint64_t bits) {
    return StoreHandle(static_cast<uint32_t>(bits), static_cast<uint32_t>(bits >> 32));
  }
  constexpr uint64_t bits() const {
    return (uint64_t{generation_} << 32) | uint64_t{index_};
  }

  // index: the slot in the store's id table (the entry's slot for SparseStore).
  constexpr uint32_t index() const { return index_; }
  constexpr uint32_t generation() const { return generation_; }
  // is_valid: false only for the invalid handle; a valid handle may still be stale.
  constexpr bool is_valid() const { return index_ != kInvalidIndex; }

  friend constexpr bool operator==(StoreHandle a, StoreHandle b) {
    return a.bits() == b.bits();
  }
  friend constexpr bool operator!=(StoreHandle a, StoreHandle b) { return !(a == b); }
  friend constexpr bool operator<(StoreHandle a, StoreHandle b) {
    return a.bits() < b.bits();
  }

  template <typename H>
  friend H AbslHashValue(H h, StoreHandle handle) {
    return H::combine(std::move(h), handle.bits());
  }

  // DebugString: "StoreHandle(index:generation)" or "StoreHandle(invalid)".
  std::string DebugString() const {
    if (!is_valid()) return "StoreHandle(invalid)";
    return absl::StrCat("StoreHandle(", index_, ":", generation_, ")");
  }
  friend std::ostream& operator<<(std::ostream& os, StoreHandle h) {
    return os << h.DebugString();
  }

 private:
  uint32_t index_ = kInvalidIndex;
  uint32_t generation_ = kInvalidGeneration;
};

static_assert(sizeof(StoreHandle) == 8, "StoreHandle is one 64-bit word");

}  // namespace strata

#endif  // STRATA_ENTITY_STORE_HANDLE_H_
