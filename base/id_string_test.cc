#include "base/id_string.h"

#include <sstream>

#include "absl/container/flat_hash_set.h"
#include "gtest/gtest.h"

namespace strata {
namespace {

TEST(IdString32, KnownValuesAreStable) {
  // XXH32 reference values (seed 0): resource files depend on these never changing.
  EXPECT_EQ(IdString32("").value(), 0x02CC5D05u);
  EXPECT_EQ(IdString32("a").value(), 0x550D7456u);
  EXPECT_EQ(IdString32("abc").value(), 0x32D153FFu);
}

TEST(IdString32, EqualNamesEqualIds) {
  EXPECT_EQ(IdString32("Transform"), IdString32(std::string("Transform")));
  EXPECT_NE(IdString32("Fog"), IdString32("Vignette"));
  EXPECT_NE(IdString32("fog"), IdString32("Fog"));  // case-sensitive
  EXPECT_EQ(IdString32("Fog").value(), IdString32::Hash("Fog"));
}

TEST(IdString32, DefaultAndFromValue) {
  EXPECT_EQ(IdString32().value(), 0u);
  EXPECT_EQ(IdString32::FromValue(IdString32("Fog").value()), IdString32("Fog"));
}

TEST(IdString32, EmbeddedNulIsPartOfTheName) {
  EXPECT_NE(IdString32(absl::string_view("a\0b", 3)), IdString32("a"));
}

TEST(IdString32, HashableAndPrintable) {
  absl::flat_hash_set<IdString32> ids = {IdString32("a"), IdString32("b"),
                                         IdString32("a")};
  EXPECT_EQ(ids.size(), 2u);
  std::ostringstream os;
  os << IdString32::FromValue(0x1a2b3c4d);
  EXPECT_EQ(os.str(), "#1a2b3c4d");
}

}  // namespace
}  // namespace strata
