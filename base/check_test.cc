#include "base/check.h"

#include "gtest/gtest.h"

namespace strata {
namespace {

int Evaluations(int& count) { return ++count; }

TEST(StrataCheck, PassesWithoutSideEffectsBeyondTheCondition) {
  int count = 0;
  STRATA_CHECK(Evaluations(count) == 1, "evaluated once");
  EXPECT_EQ(count, 1);
}

// The check must hold whatever NDEBUG says: this test runs in every build mode.
TEST(StrataCheckDeathTest, AbortsWithTheConditionAndMessage) {
  EXPECT_DEATH(STRATA_CHECK(1 + 1 == 3, "arithmetic is broken"),
               "check failed: 1 \\+ 1 == 3: arithmetic is broken");
}

}  // namespace
}  // namespace strata
