#include "base/huge_page_allocator.h"

#include <cstdint>
#include <cstring>
#include <numeric>
#include <vector>

#include "gtest/gtest.h"

namespace strata {
namespace {

bool IsAligned(const void* p, size_t alignment) {
  return reinterpret_cast<uintptr_t>(p) % alignment == 0;
}

TEST(AllocateLargeTest, SmallBlocksKeepTheirAlignmentOnly) {
  for (size_t alignment : {size_t{1}, size_t{8}, size_t{64}, size_t{4096}}) {
    void* p = AllocateLarge(100, alignment);
    ASSERT_NE(p, nullptr);
    EXPECT_TRUE(IsAligned(p, alignment));
    std::memset(p, 0xab, 100);
    DeallocateLarge(p, 100, alignment);
  }
}

TEST(AllocateLargeTest, LargeBlocksAreHugePageAlignedAndWritableToTheEnd) {
  for (size_t bytes : {kHugePageAdviseBytes, kHugePageBytes, kHugePageBytes + 1,
                       3 * kHugePageBytes + 12345}) {
    auto* p = static_cast<unsigned char*>(AllocateLarge(bytes, alignof(float)));
    ASSERT_NE(p, nullptr);
    EXPECT_TRUE(IsAligned(p, kHugePageBytes)) << bytes;
    p[0] = 1;
    p[bytes - 1] = 2;  // ASan checks the whole requested length is ours
    EXPECT_EQ(p[0] + p[bytes - 1], 3);
    DeallocateLarge(p, bytes, alignof(float));
  }
}

TEST(AllocateLargeTest, AlignmentAboveAHugePageIsHonoured) {
  const size_t alignment = 2 * kHugePageBytes;
  void* p = AllocateLarge(kHugePageBytes, alignment);
  EXPECT_TRUE(IsAligned(p, alignment));
  DeallocateLarge(p, kHugePageBytes, alignment);
}

TEST(AllocateLargeTest, NullIsIgnored) {
  DeallocateLarge(nullptr, 0, 8);
  DeallocateLarge(nullptr, kHugePageBytes, 8);
}

TEST(HugePageAllocatorTest, VectorGrowsAcrossTheThresholdAndKeepsItsValues) {
  std::vector<uint32_t, HugePageAllocator<uint32_t>> v;
  const size_t n = 3 * kHugePageBytes / sizeof(uint32_t);  // crosses the threshold
  for (size_t i = 0; i < n; ++i) v.push_back(static_cast<uint32_t>(i));
  EXPECT_TRUE(IsAligned(v.data(), kHugePageBytes));
  uint64_t sum = std::accumulate(v.begin(), v.end(), uint64_t{0});
  EXPECT_EQ(sum, uint64_t{n} * (n - 1) / 2);
  v.clear();
  v.shrink_to_fit();
  EXPECT_EQ(v.capacity(), 0u);
}

TEST(HugePageAllocatorTest, InstancesCompareEqualAcrossTypes) {
  EXPECT_TRUE(HugePageAllocator<int>() == HugePageAllocator<double>());
}

}  // namespace
}  // namespace strata
