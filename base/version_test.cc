#include "base/version.h"

#include <algorithm>
#include <fstream>
#include <iterator>
#include <regex>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace strata {
namespace {

// The constant is the newest entry's number: the highest "**N**" or table "| N |" of
// CHANGELOG.md, each number used once, none skipped.
TEST(Version, IsTheNewestChangelogEntry) {
  std::ifstream in("CHANGELOG.md");
  ASSERT_TRUE(in) << "CHANGELOG.md is not in the test's data";
  const std::string text(std::istreambuf_iterator<char>(in), {});
  const std::regex entry(R"((?:^- \*\*(\d+)\*\*|^\| (\d+) \|))", std::regex::multiline);
  std::vector<int> seen(kVersion + 2, 0);
  int newest = 0;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), entry); it != std::sregex_iterator(); ++it) {
    const int n = std::stoi((*it)[1].matched ? (*it)[1].str() : (*it)[2].str());
    ASSERT_GE(n, 1);
    ASSERT_LE(n, kVersion) << "CHANGELOG.md has entry " << n << ": bump STRATA_VERSION in base/version.h";
    ++seen[n];
    newest = std::max(newest, n);
  }
  EXPECT_EQ(newest, kVersion);
  for (int n = 1; n <= kVersion; ++n) EXPECT_EQ(seen[n], 1) << "entry " << n;
  static_assert(STRATA_VERSION == kVersion);
}

}  // namespace
}  // namespace strata
