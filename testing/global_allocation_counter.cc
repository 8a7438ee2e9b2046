// Replaces the global operator new/delete so that GlobalAllocationCounter() sees every
// allocation of the process. Linked with alwayslink; include it only in tests and
// benchmarks.
//
// Sizes come from malloc_usable_size on both sides, so unsized delete balances new
// exactly (ASan reports the requested size, glibc the usable block size).
#include <malloc.h>

#include <cstdint>
#include <cstdlib>
#include <new>

#include "testing/counting_allocator.h"

namespace strata::testing {

// True only if this file's operator new is the one the process really calls: a
// sanitizer runtime loaded ahead of a shared-library build of this target would
// otherwise take the calls silently (.bazelrc links statically to prevent that).
bool GlobalAllocationCountingEnabled() {
  static const bool hooked = [] {
    const int64_t before = GlobalAllocationCounter().allocations();
    ::operator delete(::operator new(1));  // direct calls: never elided
    return GlobalAllocationCounter().allocations() > before;
  }();
  return hooked;
}

namespace {

void* CountedAlloc(size_t size, size_t alignment) {
  if (size == 0) size = 1;
  void* p;
  if (alignment <= alignof(std::max_align_t)) {
    p = std::malloc(size);
  } else {
    p = std::aligned_alloc(alignment, (size + alignment - 1) / alignment * alignment);
  }
  if (p == nullptr) return nullptr;
  GlobalAllocationCounter().RecordAllocation(malloc_usable_size(p));
  return p;
}

void CountedFree(void* p) {
  if (p == nullptr) return;
  GlobalAllocationCounter().RecordDeallocation(malloc_usable_size(p));
  std::free(p);
}

void* CountedAllocOrThrow(size_t size, size_t alignment) {
  void* p = CountedAlloc(size, alignment);
  if (p == nullptr) throw std::bad_alloc();
  return p;
}

}  // namespace
}  // namespace strata::testing

using strata::testing::CountedAlloc;
using strata::testing::CountedAllocOrThrow;
using strata::testing::CountedFree;

void* operator new(size_t size) { return CountedAllocOrThrow(size, 0); }
void* operator new[](size_t size) { return CountedAllocOrThrow(size, 0); }
void* operator new(size_t size, const std::nothrow_t&) noexcept {
  return CountedAlloc(size, 0);
}
void* operator new[](size_t size, const std::nothrow_t&) noexcept {
  return CountedAlloc(size, 0);
}
void* operator new(size_t size, std::align_val_t al) {
  return CountedAllocOrThrow(size, static_cast<size_t>(al));
}
void* operator new[](size_t size, std::align_val_t al) {
  return CountedAllocOrThrow(size, static_cast<size_t>(al));
}
void* operator new(size_t size, std::align_val_t al, const std::nothrow_t&) noexcept {
  return CountedAlloc(size, static_cast<size_t>(al));
}
void* operator new[](size_t size, std::align_val_t al, const std::nothrow_t&) noexcept {
  return CountedAlloc(size, static_cast<size_t>(al));
}

void operator delete(void* p) noexcept { CountedFree(p); }
void operator delete[](void* p) noexcept { CountedFree(p); }
void operator delete(void* p, size_t) noexcept { CountedFree(p); }
void operator delete[](void* p, size_t) noexcept { CountedFree(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { CountedFree(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { CountedFree(p); }
void operator delete(void* p, std::align_val_t) noexcept { CountedFree(p); }
void operator delete[](void* p, std::align_val_t) noexcept { CountedFree(p); }
void operator delete(void* p, size_t, std::align_val_t) noexcept { CountedFree(p); }
void operator delete[](void* p, size_t, std::align_val_t) noexcept { CountedFree(p); }
void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept {
  CountedFree(p);
}
void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept {
  CountedFree(p);
}
