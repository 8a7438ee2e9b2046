#include "base/fixed_string.h"

#include <cstring>
#include <string>
#include <type_traits>

#include "gtest/gtest.h"

namespace strata {
namespace {

static_assert(sizeof(FixedString<24>) == 24 && alignof(FixedString<24>) == 1);
static_assert(std::is_trivially_copyable_v<FixedString<24>>);

TEST(FixedString, EmptyLiteralAndFull) {
  const FixedString<4> empty;
  EXPECT_TRUE(empty.empty());
  EXPECT_EQ(empty.size(), 0u);
  EXPECT_EQ(empty.view(), "");
  const FixedString<4> orc = "orc";
  EXPECT_EQ(orc.view(), "orc");
  EXPECT_EQ(orc.size(), 3u);
  const FixedString<4> full = "abcd";  // no terminator needed
  EXPECT_EQ(full.view(), "abcd");
  EXPECT_EQ(full.size(), 4u);
  EXPECT_EQ(FixedString<4>::capacity(), 4u);
}

TEST(FixedString, AssignRefusesWhatDoesNotFitAndLeavesTheTextUnchanged) {
  FixedString<4> s = "ab";
  EXPECT_TRUE(s.Assign("wxyz"));
  EXPECT_EQ(s.view(), "wxyz");
  EXPECT_FALSE(s.Assign("vwxyz"));
  EXPECT_EQ(s.view(), "wxyz");
  EXPECT_FALSE(s.Assign(std::string("a\0b", 3)));
  EXPECT_EQ(s.view(), "wxyz");
  EXPECT_TRUE(s.Assign("q"));
  EXPECT_EQ(s.view(), "q");
  EXPECT_TRUE(s.Assign(""));
  EXPECT_TRUE(s.empty());
}

TEST(FixedString, TheBytesAfterTheTextAreZeroSoEqualTextsAreEqualBytes) {
  FixedString<8> a = "longer!";
  FixedString<8> b = "hi";
  ASSERT_TRUE(a.Assign("hi"));
  EXPECT_EQ(a, b);
  EXPECT_EQ(std::memcmp(&a, &b, sizeof(a)), 0);
  ASSERT_TRUE(b.Assign("ho"));
  EXPECT_NE(a, b);
}

}  // namespace
}  // namespace strata
