#include "iteration/internal/page_pool.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <set>
#include <utility>
#include <vector>

#include "absl/base/config.h"
#include "base/huge_page_allocator.h"
#include "gtest/gtest.h"
#include "testing/random.h"

namespace strata {
namespace iteration_internal {
namespace {

bool IsAligned(const void* p, size_t alignment) {
  return reinterpret_cast<uintptr_t>(p) % alignment == 0;
}

TEST(PagePoolTest, EmptyPoolHoldsNothing) {
  PagePool pool(384, 4);
  EXPECT_EQ(pool.live_blocks(), 0u);
  EXPECT_EQ(pool.reserved_bytes(), 0u);
  EXPECT_EQ(pool.ReleaseUnusedSlabs(), 0u);
}

TEST(PagePoolTest, OneBlockIsAlignedWritableAndReleasedWithItsSlab) {
  PagePool pool(32 * 12, 4);
  void* block = pool.Allocate();
  ASSERT_NE(block, nullptr);
  EXPECT_TRUE(IsAligned(block, 8));
  std::memset(block, 0x5a, 32 * 12);
  EXPECT_EQ(pool.live_blocks(), 1u);
  EXPECT_GT(pool.reserved_bytes(), 0u);
  EXPECT_EQ(pool.ReleaseUnusedSlabs(), 0u);  // in use
  pool.Free(block);
  EXPECT_EQ(pool.live_blocks(), 0u);
  const size_t reserved = pool.reserved_bytes();
  EXPECT_EQ(pool.ReleaseUnusedSlabs(), reserved);
  EXPECT_EQ(pool.reserved_bytes(), 0u);
  void* again = pool.Allocate();  // a fresh slab after releasing everything
  EXPECT_NE(again, nullptr);
  pool.Free(again);
}

TEST(PagePoolTest, HonoursLargeAlignment) {
  PagePool pool(32 * 64, 64);
  for (int i = 0; i < 100; ++i) EXPECT_TRUE(IsAligned(pool.Allocate(), 64));
  PagePool page_aligned(4096, 4096);
  EXPECT_TRUE(IsAligned(page_aligned.Allocate(), 4096));
}

TEST(PagePoolTest, ABatchIsHandedOutInAddressOrder) {
  PagePool pool(384, 4);
  constexpr int kFirstSlabBlocks = 16 * 1024 / 384;  // the first slab is 16 KiB
  std::vector<std::byte*> blocks;
  for (int i = 0; i < kFirstSlabBlocks; ++i) {
    blocks.push_back(static_cast<std::byte*>(pool.Allocate()));
  }
  for (int i = 1; i < kFirstSlabBlocks; ++i) EXPECT_EQ(blocks[i], blocks[i - 1] + 384);
}

TEST(PagePoolTest, FreedBlockIsReusedFirst) {
  PagePool pool(128, 4);
  void* a = pool.Allocate();
  void* b = pool.Allocate();
  pool.Free(a);
  EXPECT_EQ(pool.Allocate(), a);
  pool.Free(b);
  pool.Free(a);
  EXPECT_EQ(pool.Allocate(), a);
  EXPECT_EQ(pool.Allocate(), b);
}

TEST(PagePoolTest, BlockLargerThanAHugePageGetsASlabOfItsOwn) {
  const size_t big = kHugePageBytes + 4096;
  PagePool pool(big, 64);
  auto* a = static_cast<std::byte*>(pool.Allocate());
  auto* b = static_cast<std::byte*>(pool.Allocate());
  a[big - 1] = std::byte{1};
  b[big - 1] = std::byte{2};
  EXPECT_NE(a, b);
  EXPECT_GE(pool.reserved_bytes(), 2 * big);
  pool.Free(a);
  pool.Free(b);
  EXPECT_GT(pool.ReleaseUnusedSlabs(), 0u);
  EXPECT_EQ(pool.reserved_bytes(), 0u);
}

// Many blocks across many slabs, freed in random order with some kept: the blocks
// never overlap, keep their contents, and only slabs with no live block are released.
TEST(PagePoolTest, RandomChurnKeepsLiveBlocksIntactAndReleasesOnlyEmptySlabs) {
  constexpr size_t kBlock = 32 * 12;
  PagePool pool(kBlock, 4);
  testing::Random rng(7);
  std::vector<std::pair<std::byte*, uint8_t>> live;  // block, fill byte
  for (int round = 0; round < 20; ++round) {
    const int allocations = static_cast<int>(rng.UniformInt(0, 3000));
    for (int i = 0; i < allocations; ++i) {
      auto* block = static_cast<std::byte*>(pool.Allocate());
      const uint8_t fill = static_cast<uint8_t>(rng.UniformInt(0, 255));
      std::memset(block, fill, kBlock);
      live.push_back({block, fill});
    }
    rng.Shuffle(absl::MakeSpan(live));
    const size_t frees = static_cast<size_t>(rng.UniformInt(0, static_cast<int64_t>(live.size())));
    for (size_t i = 0; i < frees; ++i) {
      pool.Free(live.back().first);
      live.pop_back();
    }
    if (round % 3 == 0) pool.ReleaseUnusedSlabs();
    ASSERT_EQ(pool.live_blocks(), live.size());
    std::set<std::byte*> starts;
    for (const auto& [block, fill] : live) {
      ASSERT_TRUE(starts.insert(block).second);
      for (size_t k = 0; k < kBlock; k += 37) ASSERT_EQ(block[k], std::byte{fill});
    }
    // No two live blocks overlap.
    std::byte* previous_end = nullptr;
    for (std::byte* start : starts) {
      ASSERT_TRUE(previous_end == nullptr || start >= previous_end);
      previous_end = start + kBlock;
    }
  }
  for (const auto& entry : live) pool.Free(entry.first);
  pool.ReleaseUnusedSlabs();
  EXPECT_EQ(pool.reserved_bytes(), 0u);
  EXPECT_EQ(pool.live_blocks(), 0u);
}

TEST(PagePoolTest, SlabsComeFromTheUpstreamAndGoBackToIt) {
  PagePool chunks(16 * 1024, 4096);
  PagePool pool(384, 4, &chunks);
  std::vector<void*> blocks;
  for (int i = 0; i < 100; ++i) blocks.push_back(pool.Allocate());  // 42 per chunk
  EXPECT_EQ(chunks.live_blocks(), 3u);
  EXPECT_EQ(pool.reserved_bytes(), 3u * 16 * 1024);
  EXPECT_EQ(pool.system_bytes(), 0u);
  for (void* block : blocks) pool.Free(block);
  EXPECT_EQ(pool.ReleaseUnusedSlabs(), 3u * 16 * 1024);
  EXPECT_EQ(chunks.live_blocks(), 0u);
  EXPECT_GT(chunks.reserved_bytes(), 0u);  // the upstream keeps its slab until asked
  const size_t held = chunks.reserved_bytes();
  EXPECT_EQ(chunks.ReleaseUnusedSlabs(), held);
  EXPECT_EQ(chunks.reserved_bytes(), 0u);
}

TEST(PagePoolTest, BlocksTooLargeOrTooAlignedForTheUpstreamUseTheirOwnSlabs) {
  PagePool chunks(16 * 1024, 64);
  PagePool big(32 * 1024, 8, &chunks);
  PagePool aligned(256, 4096, &chunks);
  void* a = big.Allocate();
  void* b = aligned.Allocate();
  EXPECT_EQ(chunks.live_blocks(), 0u);
  EXPECT_EQ(big.system_bytes(), big.reserved_bytes());
  EXPECT_EQ(aligned.system_bytes(), aligned.reserved_bytes());
  EXPECT_TRUE(IsAligned(b, 4096));
  big.Free(a);
  aligned.Free(b);
}

// Two pools sharing an upstream, churned at random: blocks never overlap across the
// pools, keep their contents, and everything returns to the upstream and the system.
TEST(PagePoolTest, PoolsSharingAnUpstreamNeverOverlap) {
  PagePool chunks(16 * 1024, 4096);
  PagePool pools[2] = {PagePool(384, 4, &chunks), PagePool(1024, 32, &chunks)};
  testing::Random rng(11);
  std::vector<std::pair<std::byte*, int>> live;  // block, pool
  for (int round = 0; round < 30; ++round) {
    for (int i = static_cast<int>(rng.UniformInt(0, 400)); i > 0; --i) {
      const int which = static_cast<int>(rng.UniformInt(0, 1));
      auto* block = static_cast<std::byte*>(pools[which].Allocate());
      std::memset(block, which + 1, pools[which].block_bytes());
      live.push_back({block, which});
    }
    rng.Shuffle(absl::MakeSpan(live));
    for (size_t i = static_cast<size_t>(rng.UniformInt(0, static_cast<int64_t>(live.size())));
         i > 0; --i) {
      pools[live.back().second].Free(live.back().first);
      live.pop_back();
    }
    if (round % 4 == 0) {
      pools[0].ReleaseUnusedSlabs();
      pools[1].ReleaseUnusedSlabs();
      chunks.ReleaseUnusedSlabs();
    }
    std::vector<std::pair<std::byte*, std::byte*>> ranges;
    for (const auto& [block, which] : live) {
      const size_t bytes = pools[which].block_bytes();
      ASSERT_EQ(block[0], std::byte(which + 1));
      ASSERT_EQ(block[bytes - 1], std::byte(which + 1));
      ranges.push_back({block, block + bytes});
    }
    std::sort(ranges.begin(), ranges.end());
    for (size_t i = 1; i < ranges.size(); ++i) ASSERT_LE(ranges[i - 1].second, ranges[i].first);
  }
  for (const auto& [block, which] : live) pools[which].Free(block);
  pools[0].ReleaseUnusedSlabs();
  pools[1].ReleaseUnusedSlabs();
  EXPECT_EQ(chunks.live_blocks(), 0u);
  chunks.ReleaseUnusedSlabs();
  EXPECT_EQ(chunks.reserved_bytes(), 0u);
}

#ifdef ABSL_HAVE_ADDRESS_SANITIZER
// Only under ASan: a pointer kept into a freed block is caught, not silently read.
TEST(PagePoolDeathTest, ReadingAFreedBlockIsReported) {
  PagePool pool(384, 4);
  auto* block = static_cast<volatile std::byte*>(pool.Allocate());
  pool.Free(const_cast<std::byte*>(block));
  EXPECT_DEATH((void)block[100], "use-after-poison");
}
#endif

TEST(PagePoolTest, MoveTransfersTheBlocks) {
  PagePool a(256, 8);
  void* block = a.Allocate();
  PagePool b(std::move(a));
  EXPECT_EQ(b.live_blocks(), 1u);
  b.Free(block);
  PagePool c(64, 8);
  c = std::move(b);
  EXPECT_EQ(c.live_blocks(), 0u);
  EXPECT_EQ(c.Allocate(), block);
}

}  // namespace
}  // namespace iteration_internal
}  // namespace strata
