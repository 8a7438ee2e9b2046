#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "testing/counting_allocator.h"

namespace strata::testing {
namespace {

TEST(GlobalAllocationCounter, EnabledWhenLinked) {
  EXPECT_TRUE(GlobalAllocationCountingEnabled());
}

TEST(GlobalAllocationCounter, SeesNewAndDeleteOfAllForms) {
  AllocationCounter& counter = GlobalAllocationCounter();
  const int64_t before = counter.live_bytes();
  const int64_t before_blocks = counter.live_allocations();
  {
    auto one = std::make_unique<int64_t>(7);
    auto many = std::make_unique<char[]>(4096);
    std::vector<std::string> strings(10, std::string(100, 'x'));
    struct alignas(64) Aligned {
      char bytes[64];
    };
    auto aligned = std::make_unique<Aligned>();
    EXPECT_EQ(reinterpret_cast<uintptr_t>(aligned.get()) % 64, 0u);
    EXPECT_GE(counter.live_bytes() - before, 4096 + 8 + 64 + 1000);
    EXPECT_GE(counter.live_allocations() - before_blocks, 14);
  }
  EXPECT_EQ(counter.live_bytes(), before);
  EXPECT_EQ(counter.live_allocations(), before_blocks);
}

TEST(GlobalAllocationCounter, PeakCoversTemporaryBlocks) {
  AllocationCounter& counter = GlobalAllocationCounter();
  counter.ResetPeak();
  const int64_t before = counter.live_bytes();
  { std::vector<char> big(1 << 20); }
  EXPECT_GE(counter.peak_bytes() - before, 1 << 20);
  EXPECT_EQ(counter.live_bytes(), before);
}

}  // namespace
}  // namespace strata::testing
