#include "base/user_text.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace strata {
namespace {

TEST(UserTextTest, PlainTextIsUnchanged) {
  EXPECT_EQ(UserText(""), "");
  EXPECT_EQ(UserText("wheel_1"), "wheel_1");
}

TEST(UserTextTest, ControlCharactersAreEscaped) {
  const std::string with_nul("a\0b", 3);
  EXPECT_EQ(UserText(with_nul), "a\\x00b");
  EXPECT_EQ(UserText("x\ny\tz\x1b[31m"), "x\\ny\\tz\\x1b[31m");
  EXPECT_EQ(UserText("q\"\\"), "q\\\"\\\\");
  EXPECT_EQ(UserText("\xc3\xa9"), "\\xc3\\xa9");
}

TEST(UserTextTest, LongTextIsCutWithItsLength) {
  const std::string huge(16 << 20, 'a');
  const std::string shown = UserText(huge);
  // StrCat, not operator+: GCC 12 at -O2 warns falsely (-Warray-bounds) on the latter.
  EXPECT_EQ(shown, absl::StrCat(std::string(kUserTextPrefix, 'a'), "... (16777216 bytes)"));
  EXPECT_EQ(UserText(std::string(kUserTextPrefix, 'b')), std::string(kUserTextPrefix, 'b'));
  EXPECT_EQ(UserText("abcdef", 3), "abc... (6 bytes)");
}

}  // namespace
}  // namespace strata
