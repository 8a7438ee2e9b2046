#include "iteration/internal/page_pool.h"

#include <algorithm>
#include <cassert>
#include <utility>

#include "base/huge_page_allocator.h"

namespace strata {
namespace iteration_internal {
namespace {

// The first slab: small, so a store with a few entities per type (tests, tools,
// 256 registered types) costs kilobytes, not a huge page per type.
constexpr size_t kFirstSlabBytes = size_t{16} << 10;

size_t RoundUp(size_t n, size_t multiple) { return (n + multiple - 1) / multiple * multiple; }

// Slabs start on a cache line, so a block whose size is a multiple of 64 bytes (a
// page of 12-byte components is 384) covers whole lines and can be streamed.
size_t SlabAlignment(size_t block_alignment) {
  return std::max(block_alignment, size_t{64});
}

}  // namespace

PagePool::PagePool(size_t block_bytes, size_t alignment, PagePool* upstream)
    : block_bytes_(block_bytes),
      alignment_(std::max(alignment, alignof(FreeBlock))),
      upstream_(upstream),
      stride_(RoundUp(block_bytes, alignment_)),
      next_slab_bytes_(kFirstSlabBytes) {
  assert(block_bytes > 0);
  assert((alignment & (alignment - 1)) == 0);
}

PagePool::~PagePool() { ReleaseAll(); }

PagePool::PagePool(PagePool&& other) noexcept
    : block_bytes_(other.block_bytes_),
      alignment_(other.alignment_),
      upstream_(other.upstream_),
      stride_(other.stride_),
      free_list_(std::exchange(other.free_list_, nullptr)),
      bump_(std::exchange(other.bump_, nullptr)),
      bump_end_(std::exchange(other.bump_end_, nullptr)),
      slabs_(std::exchange(other.slabs_, {})),
      next_slab_bytes_(std::exchange(other.next_slab_bytes_, kFirstSlabBytes)),
      live_blocks_(std::exchange(other.live_blocks_, 0)),
      reserved_bytes_(std::exchange(other.reserved_bytes_, 0)),
      system_bytes_(std::exchange(other.system_bytes_, 0)) {}

PagePool& PagePool::operator=(PagePool&& other) noexcept {
  if (this != &other) {
    ReleaseAll();
    block_bytes_ = other.block_bytes_;
    alignment_ = other.alignment_;
    upstream_ = other.upstream_;
    stride_ = other.stride_;
    free_list_ = std::exchange(other.free_list_, nullptr);
    bump_ = std::exchange(other.bump_, nullptr);
    bump_end_ = std::exchange(other.bump_end_, nullptr);
    slabs_ = std::exchange(other.slabs_, {});
    next_slab_bytes_ = std::exchange(other.next_slab_bytes_, kFirstSlabBytes);
    live_blocks_ = std::exchange(other.live_blocks_, 0);
    reserved_bytes_ = std::exchange(other.reserved_bytes_, 0);
    system_bytes_ = std::exchange(other.system_bytes_, 0);
  }
  return *this;
}

void PagePool::ReleaseAll() {
  for (const Slab& slab : slabs_) FreeSlab(slab);
  slabs_.clear();
  free_list_ = nullptr;
  bump_ = bump_end_ = nullptr;
  reserved_bytes_ = 0;
  system_bytes_ = 0;
}

void PagePool::FreeSlab(const Slab& slab) {
  ASAN_UNPOISON_MEMORY_REGION(slab.begin, slab.bytes);
  if (slab.from_upstream) {
    upstream_->Free(slab.begin);
  } else {
    DeallocateLarge(slab.begin, slab.bytes, SlabAlignment(alignment_));
  }
}

void* PagePool::AllocateFromNewSlab() {
  size_t bytes;
  std::byte* begin;
  const bool from_upstream = upstream_ != nullptr && stride_ <= upstream_->block_bytes() &&
                             SlabAlignment(alignment_) <= upstream_->alignment();
  if (from_upstream) {
    bytes = upstream_->block_bytes();
    begin = static_cast<std::byte*>(upstream_->Allocate());
  } else {
    // Sizes double from 16 KiB; past half a huge page they jump to a whole one, the
    // size AllocateLarge rounds to anyway. A block larger than that gets a slab of its
    // own size.
    bytes = next_slab_bytes_;
    if (bytes >= kHugePageAdviseBytes) bytes = kHugePageBytes;
    bytes = std::max(bytes, stride_);
    next_slab_bytes_ = std::min(bytes * 2, kHugePageBytes);
    begin = static_cast<std::byte*>(AllocateLarge(bytes, SlabAlignment(alignment_)));
    system_bytes_ += bytes;
  }
  ASAN_POISON_MEMORY_REGION(begin, bytes);
  slabs_.push_back({begin, bytes, from_upstream});
  reserved_bytes_ += bytes;
  bump_ = begin + stride_;
  bump_end_ = begin + bytes / stride_ * stride_;
  ASAN_UNPOISON_MEMORY_REGION(begin, block_bytes_);
  return begin;
}

size_t PagePool::ReleaseUnusedSlabs() {
  if (slabs_.empty()) return 0;
  // Count the free blocks of each slab, looked up by address.
  std::vector<size_t> order(slabs_.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(),
            [&](size_t a, size_t b) { return slabs_[a].begin < slabs_[b].begin; });
  auto slab_of = [&](const void* block) {
    auto it = std::upper_bound(order.begin(), order.end(), block,
                               [&](const void* p, size_t s) { return p < slabs_[s].begin; });
    assert(it != order.begin());
    return *(it - 1);
  };
  std::vector<size_t> free_blocks(slabs_.size(), 0);
  std::vector<FreeBlock*> free_nodes;
  for (FreeBlock* node = free_list_; node != nullptr;) {
    free_nodes.push_back(node);
    ++free_blocks[slab_of(node)];
    ASAN_UNPOISON_MEMORY_REGION(node, sizeof(FreeBlock));
    FreeBlock* next = node->next;
    ASAN_POISON_MEMORY_REGION(node, sizeof(FreeBlock));
    node = next;
  }
  // A slab is unused when all the blocks carved from it are free: all of them for
  // older slabs, those below bump_ for the newest.
  std::vector<bool> release(slabs_.size(), false);
  bool any = false;
  for (size_t s = 0; s < slabs_.size(); ++s) {
    const bool newest = bump_ != nullptr && s + 1 == slabs_.size();
    const size_t carved = newest ? static_cast<size_t>(bump_ - slabs_[s].begin) / stride_
                                 : slabs_[s].bytes / stride_;
    release[s] = free_blocks[s] == carved;
    any |= release[s];
  }
  if (!any) return 0;
  // Relink the kept slabs' free blocks, in their old order.
  FreeBlock* head = nullptr;
  for (size_t i = free_nodes.size(); i-- > 0;) {
    FreeBlock* node = free_nodes[i];
    if (release[slab_of(node)]) continue;
    ASAN_UNPOISON_MEMORY_REGION(node, sizeof(FreeBlock));
    node->next = head;
    ASAN_POISON_MEMORY_REGION(node, sizeof(FreeBlock));
    head = node;
  }
  free_list_ = head;
  if (bump_ != nullptr && release.back()) bump_ = bump_end_ = nullptr;  // the next Allocate makes a slab
  size_t released = 0;
  size_t kept = 0;
  for (size_t s = 0; s < slabs_.size(); ++s) {
    if (release[s]) {
      FreeSlab(slabs_[s]);
      released += slabs_[s].bytes;
      if (!slabs_[s].from_upstream) system_bytes_ -= slabs_[s].bytes;
    } else {
      slabs_[kept++] = slabs_[s];
    }
  }
  slabs_.resize(kept);
  reserved_bytes_ -= released;
  if (slabs_.empty()) next_slab_bytes_ = kFirstSlabBytes;
  return released;
}

}  // namespace iteration_internal
}  // namespace strata
