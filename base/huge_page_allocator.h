// Large allocations backed by transparent huge pages (2 MiB on x86-64).
//
// Arrays of millions of elements indexed at random (entity slots, component pages,
// world matrices) miss the TLB on almost every access with 4 KiB pages: 1M entities of
// 16 bytes span 4,096 pages, more than any second-level TLB holds. One 2 MiB page
// covers 512 of them. Linux gives an anonymous mapping huge pages when it is advised
// with MADV_HUGEPAGE ("madvise" mode, the default on Debian), but malloc's large
// blocks are neither 2 MiB aligned nor advised, so std::vector never gets them.
//
//   std::vector<uint32_t, strata::HugePageAllocator<uint32_t>> generations(n);
//   std::vector<uint32_t, strata::UninitializedHugePageAllocator<uint32_t>> slots;
//   slots.resize(n);                          // not zeroed: written before read
//   void* slab = strata::AllocateLarge(bytes, alignof(Position));
//   ...
//   strata::DeallocateLarge(slab, bytes, alignof(Position));
//
// Allocations below kHugePageAdviseBytes go to ::operator new unchanged: rounding a
// small array up to 2 MiB would waste memory for no TLB gain. Above it, the block is
// 2 MiB aligned, its length rounded up to whole huge pages, and advised; the rounding
// is virtual address space only until touched. Where the kernel has no THP, or under a
// sanitizer's allocator, the advice is a no-op and the memory is ordinary.
//
// Thread-safety: as ::operator new.
#ifndef STRATA_BASE_HUGE_PAGE_ALLOCATOR_H_
#define STRATA_BASE_HUGE_PAGE_ALLOCATOR_H_

#include <cstddef>
#include <new>
#include <type_traits>
#include <utility>

#include "base/policy_checks.h"

namespace strata {

// kHugePageBytes: the huge page size advised for (x86-64 and arm64 with 4 KiB base
// pages).
inline constexpr size_t kHugePageBytes = size_t{2} << 20;
// kHugePageAdviseBytes: the smallest allocation that is huge-page aligned and advised.
// Half a huge page: from there the rounding wastes at most as much as it uses.
inline constexpr size_t kHugePageAdviseBytes = kHugePageBytes / 2;

// AllocateLarge: `bytes` bytes aligned to `alignment` (a power of two), huge-page
// backed when bytes >= kHugePageAdviseBytes. Never null: throws std::bad_alloc (or
// terminates with -fno-exceptions) like ::operator new. O(1) plus the allocator's cost.
void* AllocateLarge(size_t bytes, size_t alignment);
// DeallocateLarge: frees a block from AllocateLarge; `bytes` and `alignment` must be
// the values it was allocated with. Null is ignored.
void DeallocateLarge(void* p, size_t bytes, size_t alignment) noexcept;

// AdviseHugePages: asks for transparent huge pages for the whole 4 KiB pages inside
// [begin, begin + bytes) of a block nothing has touched yet, when bytes >=
// kHugePageAdviseBytes (else does nothing). For a large buffer allocated elsewhere (a
// std::string or std::vector about to be filled whole): of its first touch, the kernel
// then takes one trap per 2 MiB instead of one per 4 KiB. Advice only: where THP is
// missing the pages stay small. The block must be one this process allocated.
void AdviseHugePages(void* begin, size_t bytes) noexcept;

// HugePageAllocator<T>: a stateless std allocator over AllocateLarge, for containers of
// large arrays. All instances compare equal.
template <typename T>
class HugePageAllocator {
 public:
  using value_type = T;

  HugePageAllocator() noexcept = default;
  template <typename U>
  HugePageAllocator(const HugePageAllocator<U>&) noexcept {}  // NOLINT: std allocator

  T* allocate(size_t n) {
    if (n > static_cast<size_t>(-1) / sizeof(T)) throw std::bad_array_new_length();
    return static_cast<T*>(AllocateLarge(n * sizeof(T), alignof(T)));
  }
  void deallocate(T* p, size_t n) noexcept { DeallocateLarge(p, n * sizeof(T), alignof(T)); }

  template <typename U>
  bool operator==(const HugePageAllocator<U>&) const noexcept {
    return true;
  }
};

// UninitializedHugePageAllocator<T>: HugePageAllocator whose construct() with no
// arguments default-initialises, so a container's resize(n) leaves new elements of a
// trivial type unwritten instead of zeroing them. For large arrays whose every element
// is written before it is read: zeroing them would write (and fault in) every page
// once more, at the moment the array grows, for nothing. construct() with arguments,
// and so resize(n, value), behave as usual.
template <typename T>
class UninitializedHugePageAllocator : public HugePageAllocator<T> {
 public:
  UninitializedHugePageAllocator() noexcept = default;
  template <typename U>
  UninitializedHugePageAllocator(const UninitializedHugePageAllocator<U>&) noexcept {}  // NOLINT

  template <typename U>
  void construct(U* p) noexcept(std::is_nothrow_default_constructible_v<U>) {
    ::new (static_cast<void*>(p)) U;
  }
  template <typename U, typename... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
};

}  // namespace strata

#endif  // STRATA_BASE_HUGE_PAGE_ALLOCATOR_H_
