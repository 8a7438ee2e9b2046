#include "entity/store_handle.h"

#include <sstream>

#include "absl/container/flat_hash_set.h"
#include "absl/hash/hash.h"
#include "gtest/gtest.h"

namespace strata {
namespace {

TEST(StoreHandle, DefaultIsInvalid) {
  constexpr StoreHandle e;
  static_assert(!e.is_valid());
  EXPECT_FALSE(e.is_valid());
  EXPECT_EQ(e.index(), StoreHandle::kInvalidIndex);
  EXPECT_EQ(e.generation(), StoreHandle::kInvalidGeneration);
}

TEST(StoreHandle, FieldsAndValidity) {
  const StoreHandle e(17, 3);
  EXPECT_TRUE(e.is_valid());
  EXPECT_EQ(e.index(), 17u);
  EXPECT_EQ(e.generation(), 3u);
  EXPECT_TRUE(StoreHandle(0, 0).is_valid());
  EXPECT_TRUE(StoreHandle(StoreHandle::kInvalidIndex - 1, 0xFFFFFFFFu).is_valid());
  EXPECT_FALSE(StoreHandle(StoreHandle::kInvalidIndex, 0).is_valid());
}

TEST(StoreHandle, EqualityComparesBothHalves) {
  EXPECT_EQ(StoreHandle(1, 2), StoreHandle(1, 2));
  EXPECT_NE(StoreHandle(1, 2), StoreHandle(1, 3));
  EXPECT_NE(StoreHandle(1, 2), StoreHandle(2, 2));
  EXPECT_FALSE(StoreHandle(1, 2) != StoreHandle(1, 2));
}

TEST(StoreHandle, BitsRoundTripWithGenerationHigh) {
  const StoreHandle e(0x12345678u, 0x9ABCDEF0u);
  EXPECT_EQ(e.bits(), 0x9ABCDEF012345678ull);
  EXPECT_EQ(StoreHandle::FromBits(e.bits()), e);
  EXPECT_EQ(StoreHandle::FromBits(StoreHandle().bits()), StoreHandle());
  EXPECT_EQ(StoreHandle::FromBits(0), StoreHandle(0, 0));
}

TEST(StoreHandle, OrderIsStrictAndFollowsBits) {
  EXPECT_LT(StoreHandle(5, 0), StoreHandle(0, 1));  // generation is the high half
  EXPECT_LT(StoreHandle(1, 1), StoreHandle(2, 1));
  EXPECT_FALSE(StoreHandle(2, 1) < StoreHandle(2, 1));
}

TEST(StoreHandle, HashesDistinguishHandles) {
  absl::flat_hash_set<StoreHandle> set;
  for (uint32_t i = 0; i < 100; ++i) {
    set.insert(StoreHandle(i, 0));
    set.insert(StoreHandle(i, 1));
  }
  EXPECT_EQ(set.size(), 200u);
  EXPECT_TRUE(set.contains(StoreHandle(42, 1)));
  EXPECT_FALSE(set.contains(StoreHandle(42, 2)));
  using H = absl::Hash<StoreHandle>;
  EXPECT_EQ(H()(StoreHandle(3, 4)), H()(StoreHandle(3, 4)));
  EXPECT_NE(H()(StoreHandle(3, 4)), H()(StoreHandle(4, 3)));
}

TEST(StoreHandle, Prints) {
  EXPECT_EQ(StoreHandle(17, 3).DebugString(), "StoreHandle(17:3)");
  EXPECT_EQ(StoreHandle().DebugString(), "StoreHandle(invalid)");
  std::ostringstream os;
  os << StoreHandle(0, 4294967295u);
  EXPECT_EQ(os.str(), "StoreHandle(0:4294967295)");
}

}  // namespace
}  // namespace strata
