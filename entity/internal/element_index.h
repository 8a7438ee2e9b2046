// ElementIndex: maps a pointer back to its element index in a store's array, the
// address check behind SparseStore::HandleOf and ContiguousStore::HandleOf.
//
//   uint32_t slot;
//   if (entity_internal::ElementIndex(data, capacity, entry, &slot)) { ... }
#ifndef STRATA_ENTITY_INTERNAL_ELEMENT_INDEX_H_
#define STRATA_ENTITY_INTERNAL_ELEMENT_INDEX_H_

#include <cstddef>
#include <cstdint>

namespace strata::entity_internal {

// ElementIndex: true, with *index = i, when `p` is exactly &base[i] for some
// i < count (< 2^32); false for any other pointer: nullptr, outside the array, or
// inside an element. Compares addresses as integers, so `p` may point anywhere. O(1).
template <typename T>
bool ElementIndex(const T* base, size_t count, const T* p, uint32_t* index) {
  const auto address = reinterpret_cast<uintptr_t>(p);
  const auto begin = reinterpret_cast<uintptr_t>(base);
  if (address < begin || address >= begin + sizeof(T) * count) return false;
  const size_t offset = address - begin;
  if (offset % sizeof(T) != 0) return false;
  *index = static_cast<uint32_t>(offset / sizeof(T));
  return true;
}

}  // namespace strata::entity_internal

#endif  // STRATA_ENTITY_INTERNAL_ELEMENT_INDEX_H_
