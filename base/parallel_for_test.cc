#include "base/parallel_for.h"

#include <atomic>
#include <cstddef>
#include <vector>

#include "gtest/gtest.h"

namespace strata {
namespace {

// Every index of [0, n) is visited exactly once, in ranges that do not overlap, for
// empty, tiny and large n and any grain (grain 0 counts as 1).
TEST(ParallelForTest, VisitsEveryIndexOnce) {
  for (size_t n : {size_t{0}, size_t{1}, size_t{2}, size_t{5}, size_t{1000}, size_t{100000}}) {
    for (size_t grain : {size_t{0}, size_t{1}, size_t{7}, size_t{256}}) {
      SCOPED_TRACE(testing::Message() << "n " << n << " grain " << grain);
      std::vector<std::atomic<int>> visits(n);
      std::atomic<size_t> calls{0};
      ParallelFor(n, grain, [&](size_t begin, size_t end) {
        ASSERT_LE(begin, end);
        ASSERT_LE(end, n);
        for (size_t i = begin; i < end; ++i) visits[i].fetch_add(1, std::memory_order_relaxed);
        calls.fetch_add(1, std::memory_order_relaxed);
      });
      for (size_t i = 0; i < n; ++i) {
        ASSERT_EQ(visits[i].load(), 1) << i;
      }
      EXPECT_EQ(calls.load() > 0, n > 0);
    }
  }
}

// Plain (non-atomic) writes to disjoint elements are visible after the call: the
// happens-before edge the callers rely on (TSan checks it in the TSan build).
TEST(ParallelForTest, WritesAreVisibleAfterReturn) {
  std::vector<size_t> squares(50000, 0);
  ParallelFor(squares.size(), 64, [&](size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i) squares[i] = i * i;
  });
  for (size_t i = 0; i < squares.size(); ++i) {
    ASSERT_EQ(squares[i], i * i);
  }
}

}  // namespace
}  // namespace strata
