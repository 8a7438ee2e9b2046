// PagePool: fixed-size blocks carved from large slabs, for EntityPages' data and entity
// pages.
//
// Why not ::operator new per page: at 1M entities a component has 31,250 pages of
// 32 elements. Allocated one by one they are scattered over the heap with malloc
// headers between them, on 4 KiB pages; a walk or a random read then misses the TLB
// on almost every page, and every page released and re-added costs a malloc/free
// pair. Here blocks are handed out in address order from slabs that grow to 2 MiB and
// are huge-page backed (base/huge_page_allocator.h), so a batch of pages created
// together sits together, and a released block goes on a free list for the next page
// of the same type: O(1) both ways, no system call.
//
//   PagePool pool(/*block_bytes=*/32 * sizeof(Position), alignof(Position));
//   void* page = pool.Allocate();
//   pool.Free(page);
//   pool.ReleaseUnusedSlabs();   // gives fully free slabs back to the system
//
// Memory policy: freed blocks stay in the pool (a game that removes a component this
// frame usually adds it back the next) until ReleaseUnusedSlabs().
//
// Pools can share an upstream pool whose blocks become their slabs ("chunks"): then a
// pool holds whole chunks of, say, 16 KiB instead of its own slabs of up to 2 MiB, and
// only the upstream's last slab is partly used, instead of one per pool. EntityPages
// gives all its pools one upstream.
//
// Under AddressSanitizer free blocks are poisoned, so a stale pointer into a released
// page is reported as a use-after-poison.
//
// Thread-safety: none; the owner serialises calls.
#ifndef STRATA_ITERATION_INTERNAL_PAGE_POOL_H_
#define STRATA_ITERATION_INTERNAL_PAGE_POOL_H_

#include <sanitizer/asan_interface.h>  // no-op macros outside ASan builds

#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/base/config.h"

namespace strata {
namespace iteration_internal {

class PagePool {
 public:
  // PagePool: blocks of `block_bytes` (> 0) aligned to `alignment` (a power of two).
  // With an `upstream` pool (which must outlive this one), slabs are the upstream's
  // blocks whenever a block fits in one and the upstream's alignment covers ours;
  // otherwise, and without one, slabs come from AllocateLarge.
  PagePool(size_t block_bytes, size_t alignment, PagePool* upstream = nullptr);
  ~PagePool();
  PagePool(PagePool&& other) noexcept;
  PagePool& operator=(PagePool&& other) noexcept;
  PagePool(const PagePool&) = delete;
  PagePool& operator=(const PagePool&) = delete;

  // Allocate: an uninitialised block. The most recently freed block first, else the
  // next unused one of the newest slab, else a new slab (twice the last one's size,
  // up to 2 MiB). O(1) amortised.
  void* Allocate() {
    void* block;
    if (free_list_ != nullptr) {
      block = free_list_;
      ASAN_UNPOISON_MEMORY_REGION(block, block_bytes_);
      free_list_ = free_list_->next;
    } else if (bump_ != bump_end_) {
      block = bump_;
      bump_ += stride_;
      ASAN_UNPOISON_MEMORY_REGION(block, block_bytes_);
    } else {
      block = AllocateFromNewSlab();
    }
    ++live_blocks_;
    return block;
  }

  // Free: returns `block` (from this pool's Allocate, not yet freed) to the pool. O(1).
  void Free(void* block) {
    auto* node = static_cast<FreeBlock*>(block);
    node->next = free_list_;
    free_list_ = node;
    ASAN_POISON_MEMORY_REGION(block, block_bytes_);
    --live_blocks_;
  }

  // ReleaseUnusedSlabs: gives every slab none of whose blocks is in use back to the
  // upstream pool or the system and returns the bytes released (an upstream then
  // frees its own slabs on its own ReleaseUnusedSlabs). O(free blocks * log slabs).
  size_t ReleaseUnusedSlabs();

  size_t block_bytes() const { return block_bytes_; }
  // live_blocks: blocks allocated and not freed.
  size_t live_blocks() const { return live_blocks_; }
  // reserved_bytes: bytes of all slabs held, in use or not.
  size_t reserved_bytes() const { return reserved_bytes_; }
  // system_bytes: the part of reserved_bytes() allocated from the system rather than
  // taken from the upstream pool.
  size_t system_bytes() const { return system_bytes_; }
  size_t alignment() const { return alignment_; }

 private:
  struct FreeBlock {
    FreeBlock* next;
  };
  struct Slab {
    std::byte* begin;
    size_t bytes;
    bool from_upstream;
  };

  void* AllocateFromNewSlab();
  // Gives `slab` back to where it came from (its blocks must not be in use).
  void FreeSlab(const Slab& slab);
  void ReleaseAll();
  // NOTE: blocks start 8-byte aligned and span a multiple of 32 bytes, ASan's
  // poisoning granularity (ASAN_(UN)POISON_MEMORY_REGION on a block).

  size_t block_bytes_;
  size_t alignment_;
  PagePool* upstream_;
  size_t stride_;  // block_bytes_ rounded up to the alignment
  FreeBlock* free_list_ = nullptr;
  std::byte* bump_ = nullptr;      // next never-used block of the newest slab
  std::byte* bump_end_ = nullptr;  // end of the newest slab's whole blocks
  std::vector<Slab> slabs_;        // allocation order; slabs_.back() is bumped if bump_
  size_t next_slab_bytes_;
  size_t live_blocks_ = 0;
  size_t reserved_bytes_ = 0;
  size_t system_bytes_ = 0;
};

}  // namespace iteration_internal
}  // namespace strata

#endif  // STRATA_ITERATION_INTERNAL_PAGE_POOL_H_
