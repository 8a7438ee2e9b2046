#include "iteration/internal/page_range.h"

#include <sanitizer/asan_interface.h>  // no-op macros outside ASan builds
#include <sys/mman.h>

#include <algorithm>
#include <cassert>
#include <cstdint>
#include <utility>

#include "absl/base/config.h"
#include "base/huge_page_allocator.h"

namespace strata {
namespace iteration_internal {
namespace {

constexpr uint32_t kTouched = uint32_t{1} << 31;
constexpr uint32_t kCountMask = kTouched - 1;
constexpr size_t kGranulesPerRegion = kHugePageBytes / PageRange::kGranuleBytes;

bool TestBit(const std::vector<uint64_t>& bits, size_t i) {
  return i / 64 < bits.size() && ((bits[i / 64] >> (i % 64)) & 1u) != 0;
}
void SetBit(std::vector<uint64_t>& bits, size_t i, bool value) {
  if (i / 64 >= bits.size()) {
    if (!value) return;
    bits.resize(i / 64 + 1, 0);
  }
  const uint64_t flag = uint64_t{1} << (i % 64);
  bits[i / 64] = value ? (bits[i / 64] | flag) : (bits[i / 64] & ~flag);
}

}  // namespace

PageRange::PageRange(size_t block_bytes) : block_bytes_(block_bytes) {
  assert(block_bytes > 0 && block_bytes % 32 == 0);
}

PageRange::~PageRange() { Unmap(); }

PageRange::PageRange(PageRange&& other) noexcept
    : block_bytes_(other.block_bytes_),
      mapping_(std::exchange(other.mapping_, nullptr)),
      mapping_bytes_(std::exchange(other.mapping_bytes_, 0)),
      base_(std::exchange(other.base_, nullptr)),
      blocks_(std::exchange(other.blocks_, 0)),
      live_blocks_(std::exchange(other.live_blocks_, 0)),
      end_block_(std::exchange(other.end_block_, 0)),
      granules_(std::exchange(other.granules_, {})),
      committed_granules_(std::exchange(other.committed_granules_, 0)),
      decided_regions_(std::exchange(other.decided_regions_, {})),
      huge_regions_(std::exchange(other.huge_regions_, {})),
      tried_(std::exchange(other.tried_, false)) {}

PageRange& PageRange::operator=(PageRange&& other) noexcept {
  if (this != &other) {
    Unmap();
    block_bytes_ = other.block_bytes_;
    mapping_ = std::exchange(other.mapping_, nullptr);
    mapping_bytes_ = std::exchange(other.mapping_bytes_, 0);
    base_ = std::exchange(other.base_, nullptr);
    blocks_ = std::exchange(other.blocks_, 0);
    live_blocks_ = std::exchange(other.live_blocks_, 0);
    end_block_ = std::exchange(other.end_block_, 0);
    granules_ = std::exchange(other.granules_, {});
    committed_granules_ = std::exchange(other.committed_granules_, 0);
    decided_regions_ = std::exchange(other.decided_regions_, {});
    huge_regions_ = std::exchange(other.huge_regions_, {});
    tried_ = std::exchange(other.tried_, false);
  }
  return *this;
}

void PageRange::Unmap() {
  if (mapping_ == nullptr) return;
  // ASan keeps the shadow of unmapped memory: leave none poisoned for whoever maps
  // these addresses next.
  ASAN_UNPOISON_MEMORY_REGION(base_, granules_.size() * kGranuleBytes);
  munmap(mapping_, mapping_bytes_);
  mapping_ = base_ = nullptr;
  mapping_bytes_ = blocks_ = live_blocks_ = end_block_ = committed_granules_ = 0;
  granules_.clear();
  decided_regions_.clear();
  huge_regions_.clear();
}

size_t PageRange::Reserve(size_t max_blocks) {
  if (tried_) return blocks_;
  tried_ = true;
  const size_t blocks = std::min(max_blocks, kMaxReservationBytes / block_bytes_);
  if (blocks == 0) return 0;
  const size_t bytes = (blocks * block_bytes_ + kHugePageBytes - 1) / kHugePageBytes *
                       kHugePageBytes;
  // One huge page more, to start the blocks on a 2 MiB boundary (huge pages cover
  // aligned regions).
  const size_t mapping_bytes = bytes + kHugePageBytes;
  void* p = mmap(nullptr, mapping_bytes, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) return 0;
  mapping_ = static_cast<std::byte*>(p);
  mapping_bytes_ = mapping_bytes;
  const uintptr_t aligned = (reinterpret_cast<uintptr_t>(p) + kHugePageBytes - 1) &
                            ~uintptr_t{kHugePageBytes - 1};
  base_ = reinterpret_cast<std::byte*>(aligned);
  blocks_ = blocks;
  return blocks_;
}

void PageRange::MaybeAdviseHugePages(size_t offset) {
  const size_t region = offset / kHugePageBytes;
  if (TestBit(decided_regions_, region)) return;
  SetBit(decided_regions_, region, true);
  const bool dense = live_blocks_ * block_bytes_ >= kHugePageBytes &&
                     live_blocks_ * 2 >= end_block_;
  if (dense == TestBit(huge_regions_, region)) return;
  SetBit(huge_regions_, region, dense);
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  // Advice only: without THP the pages stay small, which is correct, only slower.
  (void)madvise(base_ + region * kHugePageBytes, kHugePageBytes,
                dense ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
#endif
}

std::byte* PageRange::Allocate(size_t i) {
  assert(i < blocks_);
  ++live_blocks_;
  end_block_ = std::max(end_block_, i + 1);
  const size_t begin = i * block_bytes_;
  const size_t last = (begin + block_bytes_ - 1) / kGranuleBytes;
  if (last >= granules_.size()) granules_.resize(last + 1, 0);
  for (size_t g = begin / kGranuleBytes; g <= last; ++g) {
    uint32_t& state = granules_[g];
    if ((state & kTouched) == 0) {
      state |= kTouched;
      ++committed_granules_;
      MaybeAdviseHugePages(g * kGranuleBytes);
    }
    ++state;
  }
  std::byte* block = base_ + begin;
  ASAN_UNPOISON_MEMORY_REGION(block, block_bytes_);
  return block;
}

void PageRange::Free(size_t i) {
  assert(i < end_block_ && live_blocks_ > 0);
  --live_blocks_;
  const size_t begin = i * block_bytes_;
  const size_t last = (begin + block_bytes_ - 1) / kGranuleBytes;
  for (size_t g = begin / kGranuleBytes; g <= last; ++g) {
    assert((granules_[g] & kCountMask) != 0);
    --granules_[g];
  }
  ASAN_POISON_MEMORY_REGION(base_ + begin, block_bytes_);
}

size_t PageRange::ReleaseUnused() {
  size_t released = 0;
  const size_t n = granules_.size();
  for (size_t g = 0; g < n;) {
    if (granules_[g] != kTouched) {  // untouched, or blocks in use
      ++g;
      continue;
    }
    size_t end = g;  // one call per run of free touched granules
    while (end < n && granules_[end] == kTouched) granules_[end++] = 0;
    (void)madvise(base_ + g * kGranuleBytes, (end - g) * kGranuleBytes, MADV_DONTNEED);
    released += (end - g) * kGranuleBytes;
    committed_granules_ -= end - g;
    g = end;
  }
  // A region with nothing touched is decided afresh when it is used again.
  for (size_t region = 0; region * kGranulesPerRegion < n; ++region) {
    if (!TestBit(decided_regions_, region)) continue;
    const size_t first = region * kGranulesPerRegion;
    const size_t end = std::min(n, first + kGranulesPerRegion);
    bool touched = false;
    for (size_t g = first; g < end && !touched; ++g) touched = granules_[g] != 0;
    if (!touched) SetBit(decided_regions_, region, false);
  }
  if (live_blocks_ == 0) end_block_ = 0;
  return released;
}

}  // namespace iteration_internal
}  // namespace strata
