#include "base/huge_page_allocator.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <numeric>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "testing/counting_allocator.h"

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

// VmFlagsOf: the VmFlags line of /proc/self/smaps for the mapping holding `p` (empty
// where there is no such file).
std::string VmFlagsOf(const void* p) {
  std::ifstream smaps("/proc/self/smaps");
  const uintptr_t address = reinterpret_cast<uintptr_t>(p);
  std::string line;
  bool inside = false;
  while (std::getline(smaps, line)) {
    uintptr_t begin = 0, end = 0;
    if (std::sscanf(line.c_str(), "%" SCNxPTR "-%" SCNxPTR " ", &begin, &end) == 2 &&
        line.find(':') > line.find(' ')) {
      inside = begin <= address && address < end;
    } else if (inside && line.rfind("VmFlags:", 0) == 0) {
      return line;
    }
  }
  return "";
}

// ThpAdvisable: the kernel honours MADV_HUGEPAGE ("always" or "madvise" mode).
bool ThpAdvisable() {
  std::ifstream mode("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string text;
  std::getline(mode, text);
  return text.find("[always]") != std::string::npos || text.find("[madvise]") != std::string::npos;
}

TEST(AdviseHugePagesTest, AdvisesTheWholePagesInsideAndKeepsTheContents) {
  const size_t bytes = 8 * kHugePageBytes;
  std::vector<unsigned char> block(bytes + 64);
  for (size_t i = 0; i < block.size(); ++i) block[i] = static_cast<unsigned char>(i * 7);
  AdviseHugePages(block.data() + 5, bytes);  // an unaligned start and end
  for (size_t i = 0; i < block.size(); ++i) {
    ASSERT_EQ(block[i], static_cast<unsigned char>(i * 7)) << i;
  }
  // Where the kernel honours the advice, smaps marks the range (elsewhere the advice
  // is rightly a no-op, and only the contents can be checked).
  if (ThpAdvisable()) {
    const std::string flags = VmFlagsOf(block.data() + kHugePageBytes);
    EXPECT_NE(flags.find(" hg"), std::string::npos) << flags;
  }
}

TEST(AdviseHugePagesTest, SmallBlocksAndNullAreLeftAlone) {
  AdviseHugePages(nullptr, kHugePageBytes);
  std::vector<unsigned char> small(kHugePageAdviseBytes - 1, 9);
  AdviseHugePages(small.data(), small.size());
  EXPECT_EQ(std::count(small.begin(), small.end(), 9), static_cast<ptrdiff_t>(small.size()));
  if (ThpAdvisable()) {
    const std::string flags = VmFlagsOf(small.data() + small.size() / 2);
    EXPECT_EQ(flags.find(" hg"), std::string::npos) << flags;
  }
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

// Uninitialised: resize() leaves elements for the caller to write; everything else is
// HugePageAllocator's.
using UninitVector = std::vector<uint32_t, UninitializedHugePageAllocator<uint32_t>>;

TEST(UninitializedHugePageAllocatorTest, SmallAndLargeSizesAndGrowthKeepContents) {
  UninitVector v;
  v.resize(10);  // below the threshold: ordinary memory
  for (uint32_t i = 0; i < 10; ++i) v[i] = i * 3;
  const size_t large = 2 * kHugePageBytes / sizeof(uint32_t) + 7;  // above it
  v.resize(large);
  EXPECT_TRUE(IsAligned(v.data(), kHugePageBytes));
  for (uint32_t i = 0; i < 10; ++i) EXPECT_EQ(v[i], i * 3) << i;  // growth moved them
  for (size_t i = 10; i < large; ++i) v[i] = static_cast<uint32_t>(i);
  v.resize(3 * large);  // grows again, past the first block's rounding
  EXPECT_TRUE(IsAligned(v.data(), kHugePageBytes));
  for (size_t i = 10; i < large; ++i) ASSERT_EQ(v[i], i);
  EXPECT_EQ(v[9], 27u);
  v[3 * large - 1] = 5;  // ASan checks the whole length is ours
  EXPECT_EQ(v[3 * large - 1], 5u);
}

TEST(UninitializedHugePageAllocatorTest, ValueArgumentsStillInitialise) {
  UninitVector v(kHugePageBytes / sizeof(uint32_t), 0xABCDu);  // construct with a value
  EXPECT_EQ(std::count(v.begin(), v.end(), 0xABCDu), static_cast<ptrdiff_t>(v.size()));
  v.resize(v.size() + 100, 7u);
  EXPECT_EQ(v.back(), 7u);
  v.push_back(9);
  EXPECT_EQ(v.back(), 9u);
  std::vector<std::pair<int, int>, UninitializedHugePageAllocator<std::pair<int, int>>> pairs;
  pairs.emplace_back(1, 2);  // construct with arguments forwards them
  EXPECT_EQ(pairs[0], std::make_pair(1, 2));
}

// UninitializedHugePageAllocator with every allocate/deallocate counted.
testing::AllocationCounter& UninitCounter() {
  static testing::AllocationCounter counter;
  return counter;
}
struct CountedUninit : UninitializedHugePageAllocator<uint64_t> {
  using value_type = uint64_t;
  template <typename U>
  struct rebind {
    using other = CountedUninit;  // std::vector rebinds to its own value_type only
  };
  CountedUninit() = default;
  uint64_t* allocate(size_t n) {
    UninitCounter().RecordAllocation(n * sizeof(uint64_t));
    return UninitializedHugePageAllocator<uint64_t>::allocate(n);
  }
  void deallocate(uint64_t* p, size_t n) noexcept {
    UninitCounter().RecordDeallocation(n * sizeof(uint64_t));
    UninitializedHugePageAllocator<uint64_t>::deallocate(p, n);
  }
  bool operator==(const CountedUninit&) const { return true; }
};

TEST(UninitializedHugePageAllocatorTest, ReleasesWhatItAllocates) {
  {
    std::vector<uint64_t, CountedUninit> v;
    for (size_t n : {size_t{100}, kHugePageBytes / 8, 3 * kHugePageBytes / 8}) v.resize(n);
    EXPECT_GE(UninitCounter().live_bytes(), static_cast<int64_t>(3 * kHugePageBytes));
    EXPECT_TRUE(IsAligned(v.data(), kHugePageBytes));
    v.clear();
    v.shrink_to_fit();
    EXPECT_EQ(UninitCounter().live_bytes(), 0);
    v.resize(kHugePageBytes / 4);
  }
  EXPECT_EQ(UninitCounter().live_bytes(), 0);  // LeakSanitizer checks the blocks went back too
}

}  // namespace
}  // namespace strata
