// EntityPages::ReserveForCompaction: the slot table's memory held ahead of the first
// Compact. What it must not change (values, layouts, what a never-compacting store
// pays) and where its memory goes (with the store, back to the system).
#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "entity/entity.h"
#include "entity/entity_manager.h"
#include "gtest/gtest.h"
#include "iteration/entity_pages.h"
#include "iteration/testing/test_components.h"
#include "testing/status_matchers.h"

namespace strata {
namespace {

using ::strata::testing::IsOk;
using ::strata::testing::MovingWorld;
using ::strata::testing::Position;
using ::strata::testing::StatusIs;
using ::strata::testing::Velocity;

// Every entity: Position{index, 1, 2}; every third also Velocity{index, 3, 4}: two
// component sets interleaved over every page.
void Fill(MovingWorld& world) {
  for (Entity e : world.entities) {
    const float x = static_cast<float>(e.index());
    ASSERT_THAT(world.pages.Add(e, world.pos, Position{x, 1, 2}), IsOk());
    if (e.index() % 3 == 0) {
      ASSERT_THAT(world.pages.Add(e, world.vel, Velocity{x, 3, 4}), IsOk());
    }
  }
}

void ExpectValues(MovingWorld& world) {
  for (Entity e : world.entities) {
    const float x = static_cast<float>(e.index());
    const Position* p = world.pages.TryGet(e, world.pos);
    ASSERT_NE(p, nullptr) << e.index();
    ASSERT_EQ(p->x, x);
    ASSERT_EQ(p->z, 2.0f);
    const Velocity* v = world.pages.TryGet(e, world.vel);
    if (e.index() % 3 == 0) {
      ASSERT_NE(v, nullptr) << e.index();
      ASSERT_EQ(v->x, x);
      ASSERT_EQ(v->z, 4.0f);
    } else {
      ASSERT_EQ(v, nullptr) << e.index();
    }
  }
}

// Each occupied page holds one component set (the compaction's promise, the
// detailed layout is checked in entity_pages_compact_test.cc).
void ExpectPagesOfOneSet(const MovingWorld& world) {
  const EntityPages& pages = world.pages;
  for (size_t p = 0; p < pages.page_capacity(); ++p) {
    const uint32_t occupied = pages.occupied_masks()[p];
    const uint32_t vel = pages.page_masks(world.vel.id)[p];
    ASSERT_TRUE(vel == 0 || vel == occupied) << "page " << p << " mixes sets";
    ASSERT_EQ(pages.page_masks(world.pos.id)[p], occupied) << "page " << p;
  }
}

TEST(EntityPagesReserve, NeverCompactedStoreBehavesAsWithout) {
  MovingWorld reserved(1000);
  MovingWorld plain(1000);
  ASSERT_THAT(reserved.pages.ReserveForCompaction(), IsOk());
  EXPECT_TRUE(reserved.pages.compaction_reserved());
  EXPECT_FALSE(plain.pages.compaction_reserved());
  ASSERT_NO_FATAL_FAILURE(Fill(reserved));
  ASSERT_NO_FATAL_FAILURE(Fill(plain));
  // Add, Remove, Delete: the identity layout throughout, values as without.
  ASSERT_THAT(reserved.pages.Remove(reserved.entities[3], reserved.vel), IsOk());
  ASSERT_THAT(reserved.pages.Add(reserved.entities[3], reserved.vel, Velocity{3, 3, 4}),
              IsOk());
  EXPECT_FALSE(reserved.pages.compacted());
  for (Entity e : reserved.entities) ASSERT_EQ(reserved.pages.SlotOf(e), e.index());
  ASSERT_NO_FATAL_FAILURE(ExpectValues(reserved));
  // The reservation is the only difference in memory: 4 bytes per index held.
  EXPECT_GE(reserved.pages.MemoryUsage(),
            plain.pages.MemoryUsage() + 1000 * sizeof(uint32_t));
  EXPECT_EQ(reserved.pages.page_bytes(), plain.pages.page_bytes());
}

TEST(EntityPagesReserve, OnAnEmptyStoreThenGrowPastIt) {
  MovingWorld world(100);
  const size_t empty = world.pages.MemoryUsage();
  ASSERT_THAT(world.pages.ReserveForCompaction(100), IsOk());  // no entity in the store
  EXPECT_GE(world.pages.MemoryUsage(), empty + 100 * sizeof(uint32_t));
  // More entities than the store reserved for: the table grows with the store.
  std::vector<Entity> more(3000);
  world.manager.CreateBatch(absl::MakeSpan(more));
  world.entities.insert(world.entities.end(), more.begin(), more.end());
  ASSERT_NO_FATAL_FAILURE(Fill(world));
  EXPECT_FALSE(world.pages.compacted());
  ASSERT_GT(world.pages.Compact(), 0u);
  EXPECT_TRUE(world.pages.compacted());
  EXPECT_EQ(world.pages.Compact(), 0u);
  ASSERT_NO_FATAL_FAILURE(ExpectValues(world));
  ASSERT_NO_FATAL_FAILURE(ExpectPagesOfOneSet(world));
  // Entities created after the compaction: indices past the table so far.
  std::vector<Entity> late(200);
  world.manager.CreateBatch(absl::MakeSpan(late));
  world.entities.insert(world.entities.end(), late.begin(), late.end());
  for (Entity e : late) {
    const float x = static_cast<float>(e.index());
    ASSERT_THAT(world.pages.Add(e, world.pos, Position{x, 1, 2}), IsOk());
    if (e.index() % 3 == 0) {
      ASSERT_THAT(world.pages.Add(e, world.vel, Velocity{x, 3, 4}), IsOk());
    }
  }
  ASSERT_NO_FATAL_FAILURE(ExpectValues(world));
  ASSERT_GT(world.pages.Compact(), 0u);
  ASSERT_NO_FATAL_FAILURE(ExpectValues(world));
  ASSERT_NO_FATAL_FAILURE(ExpectPagesOfOneSet(world));
}

TEST(EntityPagesReserve, EmptiedStoreKeepsItUntilReleaseUnusedMemory) {
  MovingWorld world(2000);
  ASSERT_THAT(world.pages.ReserveForCompaction(), IsOk());
  for (int round = 0; round < 2; ++round) {
    SCOPED_TRACE(round);
    ASSERT_NO_FATAL_FAILURE(Fill(world));
    ASSERT_GT(world.pages.Compact(), 0u);
    ASSERT_NO_FATAL_FAILURE(ExpectValues(world));
    ASSERT_NO_FATAL_FAILURE(ExpectPagesOfOneSet(world));
    // Everything deleted: back to the identity, the table's memory kept for the next
    // round's compaction (which finds it again).
    world.pages.DeleteEntities(world.entities);
    world.pages.ReleaseEmptyPages();
    EXPECT_FALSE(world.pages.compacted());
    EXPECT_TRUE(world.pages.compaction_reserved());
    EXPECT_EQ(world.pages.page_bytes(), 0u);
  }
  // ReleaseUnusedMemory on the empty store: the pools' memory and the table's.
  const size_t before = world.pages.MemoryUsage();
  const size_t released = world.pages.ReleaseUnusedMemory();
  EXPECT_GE(released, 2000 * sizeof(uint32_t));
  EXPECT_EQ(world.pages.MemoryUsage(), before - released);
  EXPECT_EQ(world.pages.reserved_page_bytes(), 0u);
  EXPECT_FALSE(world.pages.compaction_reserved());
  EXPECT_EQ(world.pages.ReleaseUnusedMemory(), 0u);
  // Without the reservation the store still compacts (the table is allocated then).
  ASSERT_NO_FATAL_FAILURE(Fill(world));
  ASSERT_GT(world.pages.Compact(), 0u);
  ASSERT_NO_FATAL_FAILURE(ExpectValues(world));
  ASSERT_NO_FATAL_FAILURE(ExpectPagesOfOneSet(world));
}

TEST(EntityPagesReserve, ReleaseUnusedMemoryKeepsItWhileEntitiesRemain) {
  MovingWorld world(500);
  ASSERT_THAT(world.pages.ReserveForCompaction(), IsOk());
  ASSERT_NO_FATAL_FAILURE(Fill(world));
  world.pages.ReleaseUnusedMemory();
  EXPECT_TRUE(world.pages.compaction_reserved());
  ASSERT_GT(world.pages.Compact(), 0u);
  // Compacted: the table is in use, reserving again changes nothing.
  world.pages.ReleaseUnusedMemory();
  EXPECT_TRUE(world.pages.compaction_reserved());
  const size_t bytes = world.pages.MemoryUsage();
  ASSERT_THAT(world.pages.ReserveForCompaction(500), IsOk());
  EXPECT_EQ(world.pages.MemoryUsage(), bytes);
  ASSERT_NO_FATAL_FAILURE(ExpectValues(world));
}

TEST(EntityPagesReserve, RejectsMoreEntitiesThanIndices) {
  MovingWorld world(10);
  EXPECT_THAT(world.pages.ReserveForCompaction(size_t{Entity::kInvalidIndex} + 1),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_FALSE(world.pages.compaction_reserved());
  EXPECT_EQ(world.pages.Compact(), 0u);  // an empty store: nothing to do
}

}  // namespace
}  // namespace strata
