// PageRange: one reserved range of virtual addresses holding a component type's data
// pages at computable addresses: block i (the data page of page i) starts at
// base() + i * block_bytes, so an element's address is base() + slot * element size and
// does not wait for a pointer load.
//
// Why: a random read through a handle spent nine tenths of its time on the element load
// waiting for the data-page pointer (a per-page table that misses L1 at 1M entities).
// With the address computed from the slot, the element load starts as soon as the slot
// is known, in parallel with the generation and mask reads, as on a flat array. Blocks
// of neighbouring pages are neighbours in memory, so a compacted run of pages is also
// one run of memory (pools hand freed pages back at unrelated addresses).
//
//   PageRange range(/*block_bytes=*/32 * sizeof(Position));
//   if (range.Reserve() > 7) {
//     std::byte* page7 = range.Allocate(7);   // == range.base() + 7 * block_bytes
//     range.Free(7);
//     range.ReleaseUnused();                  // gives the memory back to the system
//   }
//
// Memory: the reservation is address space only (MAP_NORESERVE); the system backs a
// block when it is first written. Allocate/Free only count and (under ASan) poison; the
// memory of freed blocks stays until ReleaseUnused(), which returns every 64 KiB granule
// with no block in use (MADV_DONTNEED), the way PagePool keeps freed blocks until
// ReleaseUnusedSlabs (a component removed and added back every frame costs no system
// call). A 2 MiB region is advised for huge pages when its first block is allocated if
// the range is dense and large (its blocks in use cover at least half of the span up
// to the highest one and at least 2 MiB), so a sparse type in a large world does not
// get a 2 MiB page per scattered block, and a small store gets none.
// NOTE: the reservation is at most kMaxReservationBytes; blocks past blocks() are not
// covered (the caller falls back to a PagePool for them).
//
// Under AddressSanitizer free blocks are poisoned, as in PagePool.
//
// Thread-safety: none; the owner serialises calls.
#ifndef STRATA_ITERATION_INTERNAL_PAGE_RANGE_H_
#define STRATA_ITERATION_INTERNAL_PAGE_RANGE_H_

#include <cstddef>
#include <cstdint>
#include <vector>

namespace strata {
namespace iteration_internal {

class PageRange {
 public:
  // kMaxReservationBytes: the address space one range reserves at most (a 12-byte
  // component's range then covers 358M entities; 256 types reserve at most 1 TiB).
  static constexpr size_t kMaxReservationBytes = size_t{4} << 30;
  // kGranuleBytes: the unit ReleaseUnused returns.
  static constexpr size_t kGranuleBytes = size_t{64} << 10;

  // PageRange: blocks of `block_bytes` (a multiple of 32, > 0). Reserves nothing yet.
  explicit PageRange(size_t block_bytes);
  ~PageRange();
  PageRange(PageRange&& other) noexcept;
  PageRange& operator=(PageRange&& other) noexcept;
  PageRange(const PageRange&) = delete;
  PageRange& operator=(const PageRange&) = delete;

  // Reserve: reserves the address space for min(max_blocks, kMaxReservationBytes /
  // block_bytes) blocks, 2 MiB aligned, and returns blocks(): 0 if the system refused
  // (the caller then uses its pool for every block). Once only; later calls return
  // blocks(). O(1).
  size_t Reserve(size_t max_blocks = size_t{1} << 27);
  bool reserved() const { return base_ != nullptr; }
  std::byte* base() const { return base_; }
  // blocks: how many blocks the reservation covers (0 before Reserve).
  size_t blocks() const { return blocks_; }
  size_t block_bytes() const { return block_bytes_; }

  // Allocate: block `i` (< blocks(), not in use) is in use; returns its address. Its
  // contents are unspecified (zero if never written since the last ReleaseUnused).
  // O(block_bytes / kGranuleBytes + 1).
  std::byte* Allocate(size_t i);
  // Free: block `i` (in use) is not any more. Its memory stays until ReleaseUnused.
  void Free(size_t i);
  // ReleaseUnused: gives every granule with no block in use back to the system and
  // returns the bytes released. O(granules touched since the last call).
  size_t ReleaseUnused();

  // live_blocks: blocks in use. committed_bytes: the granules touched since their
  // last release (an upper bound of the memory the range holds).
  size_t live_blocks() const { return live_blocks_; }
  size_t committed_bytes() const { return committed_granules_ * kGranuleBytes; }

 private:
  void Unmap();
  // Advises the 2 MiB region holding `offset` for huge pages if the range is dense.
  void MaybeAdviseHugePages(size_t offset);

  size_t block_bytes_;
  std::byte* mapping_ = nullptr;  // what mmap returned (base_ rounded down)
  size_t mapping_bytes_ = 0;
  std::byte* base_ = nullptr;
  size_t blocks_ = 0;
  size_t live_blocks_ = 0;
  size_t end_block_ = 0;  // one past the highest block ever allocated
  // Per granule: blocks in use overlapping it; bit 31 set once touched (committed).
  std::vector<uint32_t> granules_;
  size_t committed_granules_ = 0;
  // A bit per 2 MiB region: advised since its first block was allocated, and the
  // advice given (huge pages or not).
  std::vector<uint64_t> decided_regions_;
  std::vector<uint64_t> huge_regions_;
  bool tried_ = false;
};

}  // namespace iteration_internal
}  // namespace strata

#endif  // STRATA_ITERATION_INTERNAL_PAGE_RANGE_H_
