#include "base/huge_page_allocator.h"

#include <cassert>
#include <cstdint>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace strata {
namespace {

size_t RoundUpToHugePages(size_t bytes) {
  return (bytes + kHugePageBytes - 1) / kHugePageBytes * kHugePageBytes;
}

}  // namespace

void* AllocateLarge(size_t bytes, size_t alignment) {
  assert(alignment != 0 && (alignment & (alignment - 1)) == 0);
  if (bytes < kHugePageAdviseBytes) {
    return ::operator new(bytes, std::align_val_t(alignment));
  }
  const size_t rounded = RoundUpToHugePages(bytes);
  const size_t huge_alignment = alignment > kHugePageBytes ? alignment : kHugePageBytes;
  void* p = ::operator new(rounded, std::align_val_t(huge_alignment));
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  // Advice only: a kernel without THP returns EINVAL and the pages stay small, which
  // is correct, only slower. Nothing has touched the block yet, so every page it
  // faults in from now on can be a huge one.
  (void)madvise(p, rounded, MADV_HUGEPAGE);
#endif
  return p;
}

void AdviseHugePages(void* begin, size_t bytes) noexcept {
  if (begin == nullptr || bytes < kHugePageAdviseBytes) return;
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  constexpr uintptr_t kPage = 4096;
  const uintptr_t first = (reinterpret_cast<uintptr_t>(begin) + kPage - 1) & ~(kPage - 1);
  const uintptr_t end = (reinterpret_cast<uintptr_t>(begin) + bytes) & ~(kPage - 1);
  if (end > first) (void)madvise(reinterpret_cast<void*>(first), end - first, MADV_HUGEPAGE);
#endif
}

void DeallocateLarge(void* p, size_t bytes, size_t alignment) noexcept {
  if (p == nullptr) return;
  if (bytes < kHugePageAdviseBytes) {
    ::operator delete(p, std::align_val_t(alignment));
    return;
  }
  const size_t huge_alignment = alignment > kHugePageBytes ? alignment : kHugePageBytes;
  ::operator delete(p, std::align_val_t(huge_alignment));
}

}  // namespace strata
