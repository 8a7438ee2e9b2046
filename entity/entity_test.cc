#include "entity/entity.h"

#include <sstream>

#include "absl/container/flat_hash_set.h"
#include "absl/hash/hash.h"
#include "gtest/gtest.h"

namespace strata {
namespace {

TEST(Entity, DefaultIsInvalid) {
  constexpr Entity e;
  static_assert(!e.is_valid());
  EXPECT_FALSE(e.is_valid());
  EXPECT_EQ(e, Entity::Invalid());
  EXPECT_EQ(e.index(), Entity::kInvalidIndex);
  EXPECT_EQ(e.generation(), Entity::kInvalidGeneration);
}

TEST(Entity, FieldsAndValidity) {
  const Entity e(17, 3);
  EXPECT_TRUE(e.is_valid());
  EXPECT_EQ(e.index(), 17u);
  EXPECT_EQ(e.generation(), 3u);
  EXPECT_TRUE(Entity(0, 0).is_valid());
  EXPECT_TRUE(Entity(Entity::kInvalidIndex - 1, 0xFFFFFFFFu).is_valid());
  EXPECT_FALSE(Entity(Entity::kInvalidIndex, 0).is_valid());
}

TEST(Entity, EqualityComparesBothHalves) {
  EXPECT_EQ(Entity(1, 2), Entity(1, 2));
  EXPECT_NE(Entity(1, 2), Entity(1, 3));
  EXPECT_NE(Entity(1, 2), Entity(2, 2));
  EXPECT_FALSE(Entity(1, 2) != Entity(1, 2));
}

TEST(Entity, BitsRoundTripWithGenerationHigh) {
  const Entity e(0x12345678u, 0x9ABCDEF0u);
  EXPECT_EQ(e.bits(), 0x9ABCDEF012345678ull);
  EXPECT_EQ(Entity::FromBits(e.bits()), e);
  EXPECT_EQ(Entity::FromBits(Entity().bits()), Entity());
  EXPECT_EQ(Entity::FromBits(0), Entity(0, 0));
}

TEST(Entity, OrderIsStrictAndFollowsBits) {
  EXPECT_LT(Entity(5, 0), Entity(0, 1));  // generation is the high half
  EXPECT_LT(Entity(1, 1), Entity(2, 1));
  EXPECT_FALSE(Entity(2, 1) < Entity(2, 1));
}

TEST(Entity, HashesDistinguishHandles) {
  absl::flat_hash_set<Entity> set;
  for (uint32_t i = 0; i < 100; ++i) {
    set.insert(Entity(i, 0));
    set.insert(Entity(i, 1));
  }
  EXPECT_EQ(set.size(), 200u);
  EXPECT_TRUE(set.contains(Entity(42, 1)));
  EXPECT_FALSE(set.contains(Entity(42, 2)));
  using H = absl::Hash<Entity>;
  EXPECT_EQ(H()(Entity(3, 4)), H()(Entity(3, 4)));
  EXPECT_NE(H()(Entity(3, 4)), H()(Entity(4, 3)));
}

TEST(Entity, Prints) {
  EXPECT_EQ(Entity(17, 3).DebugString(), "Entity(17:3)");
  EXPECT_EQ(Entity().DebugString(), "Entity(invalid)");
  std::ostringstream os;
  os << Entity(0, 4294967295u);
  EXPECT_EQ(os.str(), "Entity(0:4294967295)");
}

}  // namespace
}  // namespace strata
