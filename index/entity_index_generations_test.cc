// EntityIndex's handling of generations (stale, newer, wider than the 16 bits a slot
// holds inline), the largest indices and prototype counts, the entity manager's
// destroy listener, and memory use measured against the allocator, for EntityIndex and
// the legacy baseline. The behaviour both share is in entity_index_test.cc.
#include <optional>
#include <vector>

#include "absl/types/span.h"
#include "base/id_string.h"
#include "entity/entity.h"
#include "entity/entity_manager.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "index/entity_index.h"
#include "index/legacy_entity_index.h"
#include "index/testing/article_example.h"
#include "testing/counting_allocator.h"
#include "testing/status_matchers.h"

namespace strata {
namespace {

using Managers = ::strata::testing::ArticleManagers;
using ::strata::testing::GlobalAllocationCounter;
using ::strata::testing::IsOk;
using ::strata::testing::kBloom;
using ::strata::testing::kFog;
using ::strata::testing::kTransform;
using ::strata::testing::kVignette;
using ::strata::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(EntityIndex, StaleAndNewerGenerations) {
  Managers m;
  EntityIndex index;
  ASSERT_THAT(index.AddInstance(Entity(7, 3), &m.render_data_1, kFog), IsOk());
  // An older generation is stale: rejected, nothing changes.
  EXPECT_THAT(index.AddInstance(Entity(7, 2), &m.render_data_1, kBloom),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("stale")));
  const std::vector<Entity> batch = {Entity(8, 0), Entity(7, 1)};
  EXPECT_THAT(index.AddInstance(absl::MakeConstSpan(batch), &m.render_data_1, kBloom),
              StatusIs(absl::StatusCode::kFailedPrecondition));
  EXPECT_FALSE(index.Contains(Entity(8, 0)));
  EXPECT_EQ(index.FindComponentManager(Entity(7, 3), kFog), &m.render_data_1);
  // A newer generation replaces one that was destroyed without RemoveEntity.
  ASSERT_THAT(index.AddInstance(Entity(7, 4), &m.render_data_2, kBloom), IsOk());
  EXPECT_EQ(index.FindComponentManager(Entity(7, 3), kFog), nullptr);
  EXPECT_EQ(index.FindComponentManager(Entity(7, 4), kFog), nullptr);
  EXPECT_EQ(index.FindComponentManager(Entity(7, 4), kBloom), &m.render_data_2);
  EXPECT_EQ(index.num_entities(), 1u);
  // The replaced entity's prototype is no longer used.
  EXPECT_EQ(index.CollectGarbage(), 1u);
}

// A batch over a mix of slots (free, holding this generation with other components,
// holding an older generation left behind, holding a generation above 16 bits) ends
// as registering one entity at a time would: the batch moves reference counts per run.
TEST(EntityIndex, BatchOverMixedSlotsEqualsOneByOne) {
  Managers m;
  EntityIndex batched, single;
  std::vector<Entity> batch;
  for (EntityIndex* index : {&batched, &single}) {
    ASSERT_THAT(index->AddInstance(Entity(1, 0), &m.render_data_1, kFog), IsOk());
    ASSERT_THAT(index->AddInstance(Entity(2, 0), &m.render_data_1, kFog), IsOk());
    ASSERT_THAT(index->AddInstance(Entity(3, 5), &m.render_data_1, kFog), IsOk());  // left behind
    ASSERT_THAT(index->AddInstance(Entity(4, 0x12345), &m.render_data_1, kFog), IsOk());
  }
  // Runs: fresh, fresh, has Fog, has Fog, older generation, fresh, wide, fresh.
  batch = {Entity(10, 0), Entity(11, 0), Entity(1, 0),       Entity(2, 0),
           Entity(3, 6),  Entity(12, 0), Entity(4, 0x12345), Entity(13, 0)};
  ASSERT_THAT(batched.AddInstance(absl::MakeConstSpan(batch), &m.transform, kTransform), IsOk());
  for (Entity e : batch) ASSERT_THAT(single.AddInstance(e, &m.transform, kTransform), IsOk());
  for (Entity e : batch) EXPECT_EQ(batched.Components(e), single.Components(e)) << e;
  EXPECT_FALSE(batched.Contains(Entity(3, 5)));
  EXPECT_EQ(batched.num_entities(), single.num_entities());
  EXPECT_EQ(batched.num_entities(), 8u);
  // Same reference counts: dropping every entity frees the same prototypes.
  for (Entity e : batch) {
    EXPECT_TRUE(batched.RemoveEntity(e));
    EXPECT_TRUE(single.RemoveEntity(e));
  }
  EXPECT_EQ(batched.num_entities(), 0u);
  EXPECT_EQ(batched.CollectGarbage(), single.CollectGarbage());
  EXPECT_EQ(batched.num_prototypes(), 0u);
}

// A batch holding two generations of one slot ends as registering one entity at a time
// would. Newer then older: the older is stale once the newer is in, so the batch
// fails with FailedPrecondition and is rolled back, every slot as before it (an older
// generation left behind included). Older then newer: the newer replaces the older.
TEST(EntityIndex, BatchWithTwoGenerationsOfOneSlotEqualsOneByOne) {
  Managers m;
  EntityIndex index;
  ASSERT_THAT(index.AddInstance(Entity(3, 1), &m.render_data_1, kFog), IsOk());  // left behind
  ASSERT_THAT(index.AddInstance(Entity(5, 0), &m.render_data_1, kFog), IsOk());
  const std::vector<EntityIndex::ComponentEntry> fog = {{kFog, &m.render_data_1}};
  std::vector<Entity> batch = {Entity(8, 0), Entity(9, 70001), Entity(7, 3), Entity(7, 2)};
  EXPECT_THAT(index.AddInstance(absl::MakeConstSpan(batch), &m.transform, kTransform),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("stale")));
  batch = {Entity(3, 3), Entity(5, 0), Entity(3, 2)};
  EXPECT_THAT(index.AddInstance(absl::MakeConstSpan(batch), &m.transform, kTransform),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("stale")));
  batch = {Entity(9, 70000), Entity(9, 70001), Entity(9, 70000)};
  EXPECT_THAT(index.AddInstance(absl::MakeConstSpan(batch), &m.transform, kTransform),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("stale")));
  // The same entity twice over a slot it replaces: rolled back as well.
  batch = {Entity(3, 2), Entity(3, 2)};
  EXPECT_THAT(index.AddInstance(absl::MakeConstSpan(batch), &m.transform, kTransform),
              StatusIs(absl::StatusCode::kAlreadyExists, HasSubstr("twice")));
  for (const Entity e : {Entity(8, 0), Entity(9, 70000), Entity(9, 70001), Entity(7, 3),
                         Entity(7, 2), Entity(3, 3), Entity(3, 2)}) {
    EXPECT_FALSE(index.Contains(e)) << e;
  }
  EXPECT_EQ(index.Components(Entity(3, 1)), fog);
  EXPECT_EQ(index.Components(Entity(5, 0)), fog);
  EXPECT_EQ(index.num_entities(), 2u);

  batch = {Entity(7, 2), Entity(7, 3), Entity(3, 2), Entity(3, 3)};
  ASSERT_THAT(index.AddInstance(absl::MakeConstSpan(batch), &m.transform, kTransform), IsOk());
  EXPECT_EQ(index.FindComponentManager(Entity(7, 3), kTransform), &m.transform);
  EXPECT_EQ(index.FindComponentManager(Entity(3, 3), kTransform), &m.transform);
  EXPECT_FALSE(index.Contains(Entity(7, 2)));
  EXPECT_FALSE(index.Contains(Entity(3, 1)));
  EXPECT_EQ(index.num_entities(), 3u);
  // Same reference counts as one by one: dropping every entity frees every prototype.
  EXPECT_EQ(index.RemoveEntity(absl::MakeConstSpan({Entity(7, 3), Entity(3, 3), Entity(5, 0)})),
            3u);
  EXPECT_EQ(index.num_entities(), 0u);
  // {rd1 Fog}, {rd1 Fog, transform Transform}, {transform Transform}.
  EXPECT_EQ(index.CollectGarbage(), 3u);
  EXPECT_EQ(index.num_prototypes(), 0u);
}

// A slot holds 16 bits of generation inline; a larger one is kept whole on the side,
// so handles that agree only in the low 16 bits are still told apart.
TEST(EntityIndex, GenerationsAbove16BitsStayExact) {
  Managers m;
  EntityIndex index;
  const Entity e(7, 70000);
  const Entity low_bits_alias(7, 70000 - 65536);
  ASSERT_THAT(index.AddInstance(e, &m.render_data_1, kFog), IsOk());
  ASSERT_THAT(index.AddInstance(e, &m.render_data_1, kVignette), IsOk());
  EXPECT_EQ(index.FindComponentManager(e, kVignette), &m.render_data_1);
  EXPECT_EQ(index.FindComponentManager(low_bits_alias, kFog), nullptr);
  EXPECT_EQ(index.FindComponentManager(Entity(7, 70000 + 65536), kFog), nullptr);
  EXPECT_FALSE(index.RemoveEntity(low_bits_alias));
  EXPECT_THAT(index.AddInstance(low_bits_alias, &m.render_data_1, kBloom),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("70000")));
  EXPECT_THAT(index.AddInstance(Entity(7, 69999), &m.render_data_1, kBloom),
              StatusIs(absl::StatusCode::kFailedPrecondition));
  const std::vector<Entity> batch = {Entity(8, 0), low_bits_alias};
  EXPECT_THAT(index.AddInstance(absl::MakeConstSpan(batch), &m.transform, kTransform),
              StatusIs(absl::StatusCode::kFailedPrecondition));
  EXPECT_THAT(index.Components(e),
              ElementsAre(EntityIndex::ComponentEntry{kFog, &m.render_data_1},
                          EntityIndex::ComponentEntry{kVignette, &m.render_data_1}));
  // The index is reused after a destroy: the old handle finds nothing, and is stale.
  ASSERT_TRUE(index.RemoveEntity(e));
  EXPECT_FALSE(index.Contains(e));
  const Entity next(7, 70001);
  ASSERT_THAT(index.AddInstance(next, &m.render_data_2, kFog), IsOk());
  EXPECT_EQ(index.FindComponentManager(next, kFog), &m.render_data_2);
  EXPECT_EQ(index.FindComponentManager(e, kFog), nullptr);
  EXPECT_THAT(index.AddInstance(e, &m.render_data_1, kFog),
              StatusIs(absl::StatusCode::kFailedPrecondition));
  ASSERT_THAT(index.RemoveInstance(next, kFog), IsOk());
  EXPECT_FALSE(index.Contains(next));
  EXPECT_EQ(index.num_entities(), 0u);
  // A narrow slot next to it is unaffected, and a slot can go from wide to narrow and
  // back through batches.
  std::vector<Entity> mixed = {Entity(6, 3), Entity(7, 70002), Entity(9, 0xFFFF)};
  ASSERT_THAT(index.AddInstance(absl::MakeConstSpan(mixed), &m.transform, kTransform), IsOk());
  for (const Entity x : mixed) {
    EXPECT_EQ(index.FindComponentManager(x, kTransform), &m.transform) << x;
    EXPECT_EQ(index.FindComponentManager(Entity(x.index(), x.generation() + 1), kTransform),
              nullptr)
        << x;
  }
  EXPECT_EQ(index.RemoveEntity(absl::MakeConstSpan(mixed)), 3u);
  // {rd1 Fog}, {rd1 Fog, rd1 Vignette}, {rd2 Fog}, {transform Transform}.
  EXPECT_EQ(index.CollectGarbage(), 4u);
  EXPECT_EQ(index.num_prototypes(), 0u);
}

// Prototype handles from 0xFFFF up do not fit a slot's 16 bits: those entities' slots
// are kept whole on the side, and behave exactly like the others.
TEST(EntityIndex, MoreThan16BitsOfPrototypes) {
  Managers m;
  EntityIndex index;
  constexpr uint32_t kEntities = 70000;
  for (uint32_t i = 0; i < kEntities; ++i) {
    ASSERT_TRUE(index.AddInstance(Entity(i, 1), &m.render_data_1, IdString32::FromValue(i)).ok());
  }
  ASSERT_EQ(index.num_prototypes(), kEntities);
  for (uint32_t i : {0u, 65533u, 65534u, 65535u, 65536u, kEntities - 1}) {
    const Entity e(i, 1);
    EXPECT_EQ(index.FindComponentManager(e, IdString32::FromValue(i)), &m.render_data_1) << i;
    EXPECT_EQ(index.FindComponentManager(e, IdString32::FromValue(i + 1)), nullptr) << i;
    EXPECT_EQ(index.FindComponentManager(Entity(i, 0), IdString32::FromValue(i)), nullptr);
    EXPECT_THAT(index.AddInstance(Entity(i, 0), &m.transform, kTransform),
                StatusIs(absl::StatusCode::kFailedPrecondition));
    ASSERT_THAT(index.AddInstance(e, &m.transform, kTransform), IsOk());
    EXPECT_THAT(index.Components(e),
                ElementsAre(EntityIndex::ComponentEntry{IdString32::FromValue(i), &m.render_data_1},
                            EntityIndex::ComponentEntry{kTransform, &m.transform}));
    ASSERT_THAT(index.RemoveInstance(e, IdString32::FromValue(i)), IsOk());
    EXPECT_EQ(index.FindComponentManager(e, kTransform), &m.transform);
  }
  EXPECT_EQ(index.num_entities(), kEntities);
  for (uint32_t i = 0; i < kEntities; ++i) ASSERT_TRUE(index.RemoveEntity(Entity(i, 1))) << i;
  EXPECT_EQ(index.num_entities(), 0u);
  index.CollectGarbage();
  EXPECT_EQ(index.num_prototypes(), 0u);
}

TEST(EntityIndex, LargestEntityIndexWorks) {
  Managers m;
  EntityIndex index;
  const Entity far(Entity::kInvalidIndex - 1, 0);
  ASSERT_THAT(index.AddInstance(far, &m.render_data_1, kFog), IsOk());
  EXPECT_EQ(index.FindComponentManager(far, kFog), &m.render_data_1);
  EXPECT_EQ(index.FindComponentManager(Entity(0, 0), kFog), nullptr);
  EXPECT_TRUE(index.RemoveEntity(far));
}

TEST(EntityIndex, DrivenByTheEntityManagersDestroyListener) {
  Managers m;
  EntityIndex index;
  EntityManager entities;
  const EntityManager::Subscription listening = entities.AddDestroyListener(
      [&index](absl::Span<const Entity> dead) { index.RemoveEntity(dead); });
  std::vector<Entity> level(100);
  entities.CreateBatch(absl::MakeSpan(level));
  ASSERT_THAT(index.AddInstance(absl::MakeConstSpan(level), &m.transform, kTransform), IsOk());
  ASSERT_THAT(entities.Destroy(level[0]), IsOk());
  EXPECT_FALSE(index.Contains(level[0]));
  EXPECT_EQ(index.num_entities(), 99u);
  ASSERT_THAT(entities.DestroyBatch(absl::MakeConstSpan(level).subspan(1)), IsOk());
  EXPECT_EQ(index.num_entities(), 0u);
  EXPECT_EQ(index.CollectGarbage(), 1u);
}

// MemoryUsage() counts requested bytes; the global counter sees malloc's usable block
// sizes (up to 16 bytes more per block).
void ExpectMemoryUsageMatches(size_t reported, int64_t allocated) {
  EXPECT_LE(static_cast<int64_t>(reported), allocated);
  EXPECT_LE(allocated, static_cast<int64_t>(reported + reported / 8 + 1024));
}

TEST(EntityIndex, MemoryUsageMatchesTheAllocator) {
  ASSERT_TRUE(::strata::testing::GlobalAllocationCountingEnabled());
  Managers m;
  std::vector<Entity> entities;
  for (uint32_t i = 0; i < 20000; ++i) entities.push_back(Entity(i, 0));
  const int64_t before = GlobalAllocationCounter().live_bytes();
  {
    EntityIndex index;
    for (Entity e : entities) {
      ASSERT_TRUE(index.AddInstance(e, &m.transform, kTransform).ok());
      ASSERT_TRUE(
          index.AddInstance(e, &m.render_data_1, IdString32::FromValue(e.index() % 100)).ok());
    }
    EXPECT_EQ(index.num_prototypes(), 101u);
    ExpectMemoryUsageMatches(index.MemoryUsage(), GlobalAllocationCounter().live_bytes() - before);
    // 20 pages of 4 KiB (4-byte slots) and the registry (records, hash set, the
    // 16 KiB transition cache and the 16 KiB lookup cache).
    EXPECT_LT(index.RegistryMemoryUsage(), 40u * 1024);
    EXPECT_LT(index.MemoryUsage(), index.RegistryMemoryUsage() + 20u * 4096 + 1024);
  }
  EXPECT_EQ(GlobalAllocationCounter().live_bytes(), before);
}

TEST(LegacyEntityIndex, StoresTheInstanceIdAndMemoryMatchesTheAllocator) {
  ASSERT_TRUE(::strata::testing::GlobalAllocationCountingEnabled());
  Managers m;
  const int64_t before = GlobalAllocationCounter().live_bytes();
  {
    LegacyEntityIndex index;
    ASSERT_THAT(index.AddInstance(Entity(1, 0), &m.render_data_1, kFog, IdString32::FromValue(4)),
                IsOk());
    EXPECT_EQ(index.FindInstanceId(Entity(1, 0), kFog), IdString32::FromValue(4));
    EXPECT_EQ(index.FindInstanceId(Entity(1, 0), kBloom), std::nullopt);
    for (uint32_t i = 2; i < 3000; ++i) {
      ASSERT_TRUE(index.AddInstance(Entity(i, 0), &m.transform, kTransform).ok());
      ASSERT_TRUE(index.AddInstance(Entity(i, 0), &m.render_data_1, kFog).ok());
      ASSERT_TRUE(index.AddInstance(Entity(i, 0), &m.render_data_1, kVignette).ok());
    }
    ExpectMemoryUsageMatches(index.MemoryUsage(), GlobalAllocationCounter().live_bytes() - before);
  }
  EXPECT_EQ(GlobalAllocationCounter().live_bytes(), before);
}

}  // namespace
}  // namespace strata
