#include "testing/counting_allocator.h"

#include <cstdint>
#include <map>
#include <memory>
#include <thread>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "gtest/gtest.h"

namespace strata::testing {
namespace {

TEST(AllocationCounter, TracksLivePeakAndCounts) {
  AllocationCounter counter;
  EXPECT_EQ(counter.live_bytes(), 0);
  counter.RecordAllocation(100);
  counter.RecordAllocation(50);
  counter.RecordDeallocation(100);
  EXPECT_EQ(counter.live_bytes(), 50);
  EXPECT_EQ(counter.peak_bytes(), 150);
  EXPECT_EQ(counter.allocations(), 2);
  EXPECT_EQ(counter.deallocations(), 1);
  EXPECT_EQ(counter.live_allocations(), 1);
  counter.ResetPeak();
  EXPECT_EQ(counter.peak_bytes(), 50);
}

TEST(AllocationCounter, ConcurrentUpdatesBalance) {
  AllocationCounter counter;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&counter] {
      for (int i = 0; i < 10000; ++i) {
        counter.RecordAllocation(8);
        counter.RecordDeallocation(8);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(counter.live_bytes(), 0);
  EXPECT_EQ(counter.allocations(), 40000);
  EXPECT_GE(counter.peak_bytes(), 8);
  EXPECT_LE(counter.peak_bytes(), 32);
}

TEST(CountingAllocator, CountsStdVector) {
  AllocationCounter counter;
  {
    std::vector<int64_t, CountingAllocator<int64_t>> v{
        CountingAllocator<int64_t>(&counter)};
    v.reserve(1000);
    EXPECT_EQ(counter.live_bytes(), 8000);
    v.shrink_to_fit();  // size 0: frees the block
  }
  EXPECT_EQ(counter.live_bytes(), 0);
  EXPECT_EQ(counter.peak_bytes(), 8000);
  EXPECT_EQ(counter.live_allocations(), 0);
}

TEST(CountingAllocator, CountsNodeContainerThroughRebind) {
  AllocationCounter counter;
  using Alloc = CountingAllocator<std::pair<const int, int>>;
  {
    std::map<int, int, std::less<int>, Alloc> m{Alloc(&counter)};
    for (int i = 0; i < 100; ++i) m[i] = i;
    EXPECT_EQ(counter.live_allocations(), 100);
    EXPECT_GT(counter.live_bytes(), static_cast<int64_t>(100 * sizeof(int) * 2));
  }
  EXPECT_EQ(counter.live_bytes(), 0);
}

TEST(CountingAllocator, CountsAbslFlatHashMap) {
  AllocationCounter counter;
  using Alloc = CountingAllocator<std::pair<const int, int>>;
  {
    absl::flat_hash_map<int, int, absl::Hash<int>, std::equal_to<int>, Alloc> m(
        0, absl::Hash<int>(), std::equal_to<int>(), Alloc(&counter));
    for (int i = 0; i < 1000; ++i) m[i] = i;
    EXPECT_GE(counter.live_bytes(), static_cast<int64_t>(1000 * sizeof(std::pair<int, int>)));
  }
  EXPECT_EQ(counter.live_bytes(), 0);
  EXPECT_GT(counter.allocations(), 1);  // it grew through several tables
}

TEST(CountingAllocator, EqualityFollowsCounter) {
  AllocationCounter a, b;
  EXPECT_TRUE(CountingAllocator<int>(&a) == CountingAllocator<char>(&a));
  EXPECT_FALSE(CountingAllocator<int>(&a) == CountingAllocator<int>(&b));
}

}  // namespace
}  // namespace strata::testing
