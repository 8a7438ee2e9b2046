#include "iteration/internal/page_range.h"

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <utility>

#include "absl/base/config.h"
#include "gtest/gtest.h"

#ifdef ABSL_HAVE_ADDRESS_SANITIZER
#include <sanitizer/asan_interface.h>
#endif

namespace strata {
namespace iteration_internal {
namespace {

constexpr size_t kBlock = 32 * 12;  // a page of 12-byte components

TEST(PageRange, EmptyRangeHoldsNothing) {
  PageRange range(kBlock);
  EXPECT_FALSE(range.reserved());
  EXPECT_EQ(range.blocks(), 0u);
  EXPECT_EQ(range.committed_bytes(), 0u);
  EXPECT_EQ(range.ReleaseUnused(), 0u);
}

TEST(PageRange, BlocksAreAtComputedAddresses) {
  PageRange range(kBlock);
  ASSERT_GT(range.Reserve(), 1000u);
  EXPECT_EQ(range.Reserve(), range.blocks());  // once only
  EXPECT_EQ(reinterpret_cast<uintptr_t>(range.base()) % (size_t{2} << 20), 0u);
  for (size_t i : {size_t{0}, size_t{1}, size_t{999}}) {
    std::byte* block = range.Allocate(i);
    EXPECT_EQ(block, range.base() + i * kBlock);
    std::memset(block, 0x5A, kBlock);  // writable, whole block
  }
  EXPECT_EQ(range.live_blocks(), 3u);
  EXPECT_EQ(static_cast<unsigned char>(range.base()[999 * kBlock + kBlock - 1]), 0x5Au);
}

TEST(PageRange, ReservationIsCappedForLargeBlocks) {
  // A 16 MiB component: 512 MiB pages, 8 of them in the largest reservation.
  PageRange range(size_t{512} << 20);
  EXPECT_EQ(range.Reserve(), PageRange::kMaxReservationBytes / (size_t{512} << 20));
  std::byte* last = range.Allocate(range.blocks() - 1);
  last[0] = std::byte{1};
  last[(size_t{512} << 20) - 1] = std::byte{2};
  EXPECT_EQ(range.committed_bytes(), size_t{512} << 20);
  range.Free(range.blocks() - 1);
  EXPECT_EQ(range.ReleaseUnused(), size_t{512} << 20);
  EXPECT_EQ(range.committed_bytes(), 0u);
}

TEST(PageRange, ReservationIsBoundedByTheBlocksAsked) {
  PageRange range(kBlock);
  EXPECT_EQ(range.Reserve(/*max_blocks=*/5), 5u);
}

TEST(PageRange, MemoryGoesBackOnlyWhenAGranuleIsFree) {
  PageRange range(kBlock);
  ASSERT_GT(range.Reserve(), 1000u);
  const size_t per_granule = PageRange::kGranuleBytes / kBlock;  // 170 whole blocks
  range.Allocate(0);
  range.Allocate(per_granule + 5);  // the second granule
  EXPECT_EQ(range.committed_bytes(), 2 * PageRange::kGranuleBytes);
  range.Free(0);
  // Freed blocks stay until asked; then the free granule goes, the used one stays.
  EXPECT_EQ(range.committed_bytes(), 2 * PageRange::kGranuleBytes);
  EXPECT_EQ(range.ReleaseUnused(), PageRange::kGranuleBytes);
  EXPECT_EQ(range.committed_bytes(), PageRange::kGranuleBytes);
  EXPECT_EQ(range.ReleaseUnused(), 0u);
  range.Free(per_granule + 5);
  EXPECT_EQ(range.ReleaseUnused(), PageRange::kGranuleBytes);
  EXPECT_EQ(range.committed_bytes(), 0u);
  EXPECT_EQ(range.live_blocks(), 0u);
}

TEST(PageRange, ReleasedBlockReadsZeroWhenTakenAgain) {
  PageRange range(kBlock);
  ASSERT_GT(range.Reserve(), 10u);
  std::byte* block = range.Allocate(3);
  std::memset(block, 0x7F, kBlock);
  range.Free(3);
  EXPECT_GT(range.ReleaseUnused(), 0u);
  block = range.Allocate(3);  // same address, memory given back and taken anew
  EXPECT_EQ(block, range.base() + 3 * kBlock);
  for (size_t i = 0; i < kBlock; ++i) ASSERT_EQ(block[i], std::byte{0}) << i;
}

TEST(PageRange, BlockStraddlingGranulesKeepsBothUntilFree) {
  // 384-byte blocks do not divide 64 KiB: block 170 spans the first two granules.
  PageRange range(kBlock);
  ASSERT_GT(range.Reserve(), 1000u);
  const size_t straddling = PageRange::kGranuleBytes / kBlock;
  ASSERT_GT((straddling + 1) * kBlock, PageRange::kGranuleBytes);
  range.Allocate(straddling);
  EXPECT_EQ(range.committed_bytes(), 2 * PageRange::kGranuleBytes);
  EXPECT_EQ(range.ReleaseUnused(), 0u);
  range.Free(straddling);
  EXPECT_EQ(range.ReleaseUnused(), 2 * PageRange::kGranuleBytes);
}

TEST(PageRange, ManyBlocksAllocatedFreedAndReused) {
  PageRange range(kBlock);
  ASSERT_GT(range.Reserve(), 20000u);
  for (int round = 0; round < 3; ++round) {
    for (size_t i = 0; i < 20000; ++i) {
      std::byte* block = range.Allocate(i);
      block[0] = static_cast<std::byte>(i);
    }
    EXPECT_EQ(range.live_blocks(), 20000u);
    const size_t committed = range.committed_bytes();
    EXPECT_GE(committed, 20000 * kBlock);
    for (size_t i = 0; i < 20000; ++i) {
      EXPECT_EQ(range.base()[i * kBlock], static_cast<std::byte>(i));
      range.Free(i);
    }
    EXPECT_EQ(range.ReleaseUnused(), committed);
  }
}

TEST(PageRange, MoveKeepsTheBlocks) {
  PageRange range(kBlock);
  ASSERT_GT(range.Reserve(), 10u);
  std::byte* block = range.Allocate(2);
  block[0] = std::byte{9};
  PageRange moved(std::move(range));
  EXPECT_FALSE(range.reserved());  // NOLINT(bugprone-use-after-move): moved-from is empty
  EXPECT_EQ(moved.base() + 2 * kBlock, block);
  EXPECT_EQ(moved.live_blocks(), 1u);
  PageRange assigned(kBlock);
  assigned = std::move(moved);
  EXPECT_EQ(assigned.base()[2 * kBlock], std::byte{9});
}

#ifdef ABSL_HAVE_ADDRESS_SANITIZER
TEST(PageRange, FreedBlockIsPoisoned) {
  PageRange range(kBlock);
  ASSERT_GT(range.Reserve(), 10u);
  std::byte* block = range.Allocate(4);
  EXPECT_FALSE(__asan_address_is_poisoned(block));
  range.Free(4);
  EXPECT_TRUE(__asan_address_is_poisoned(block));
  EXPECT_TRUE(__asan_address_is_poisoned(block + kBlock - 1));
  EXPECT_FALSE(__asan_address_is_poisoned(block + kBlock));  // the next block: unused
  range.Allocate(4);
  EXPECT_FALSE(__asan_address_is_poisoned(block));
}
#endif

}  // namespace
}  // namespace iteration_internal
}  // namespace strata
