#include "iteration/parallel_query.h"

#include <atomic>
#include <cstdint>
#include <vector>

#include "entity/entity.h"
#include "entity/entity_manager.h"
#include "gtest/gtest.h"
#include "iteration/entity_pages.h"
#include "iteration/filter.h"
#include "testing/random.h"
#include "testing/status_matchers.h"

namespace strata {
namespace {

using ::strata::testing::IsOk;

struct Position {
  float x, y, z;
};
struct Velocity {
  float x, y, z;
};
struct Frozen {};

// The parallel walk visits exactly the entities the serial walk visits, once each,
// and leaves the same component values.
TEST(ParallelForEachMatch, SameResultsAsSerialWalk) {
  ::strata::testing::Random rng(::strata::testing::TestSeed());
  SCOPED_TRACE(rng.DescribeSeed());
  EntityManager manager;
  EntityPages pages(manager);
  STRATA_ASSERT_OK_AND_ASSIGN(Component<Position> pos,
                              pages.RegisterComponent<Position>("Position"));
  STRATA_ASSERT_OK_AND_ASSIGN(Component<Velocity> vel,
                              pages.RegisterComponent<Velocity>("Velocity"));
  STRATA_ASSERT_OK_AND_ASSIGN(Component<Frozen> frozen,
                              pages.RegisterComponent<Frozen>("Frozen"));
  // Enough pages for several TBB tasks (grain 256 pages).
  std::vector<Entity> entities(32 * 2000);
  manager.CreateBatch(absl::MakeSpan(entities));
  for (Entity e : entities) {
    const float f = static_cast<float>(e.index());
    if (rng.Bernoulli(0.9)) { ASSERT_THAT(pages.Add(e, pos, Position{f, 0, 0}), IsOk()); }
    if (rng.Bernoulli(0.7)) { ASSERT_THAT(pages.Add(e, vel, Velocity{1, 2, 3}), IsOk()); }
    if (rng.Bernoulli(0.2)) { ASSERT_THAT(pages.Add(e, frozen, Frozen{}), IsOk()); }
  }
  Filter moving;
  moving.Include(pos).Include(vel).Exclude(frozen);

  // Per-entity visit counts: each element written by the one thread visiting it.
  std::vector<uint8_t> parallel_visits(entities.size(), 0);
  std::vector<uint8_t> serial_visits(entities.size(), 0);
  std::atomic<size_t> parallel_count{0};
  ParallelForEachMatch(
      pages, moving,
      [&](Entity e, Position& p, const Velocity& v) {
        p.x += v.x;
        p.y += v.y;
        p.z += v.z;
        ++parallel_visits[e.index()];
        parallel_count.fetch_add(1, std::memory_order_relaxed);
      },
      pos, vel);
  size_t serial_count = 0;
  ForEachMatch(
      pages, moving,
      [&](Entity e, Position& p, Velocity&) {
        ++serial_visits[e.index()];
        ++serial_count;
        // The parallel pass already moved every match exactly once.
        EXPECT_EQ(p.x, static_cast<float>(e.index()) + 1.0f) << e;
        EXPECT_EQ(p.z, 3.0f) << e;
      },
      pos, vel);
  EXPECT_EQ(parallel_visits, serial_visits);
  EXPECT_EQ(parallel_count.load(), serial_count);
  EXPECT_GT(serial_count, entities.size() / 3);
  // Entities that did not match were not touched.
  for (Entity e : entities) {
    const Position* p = pages.TryGet(e, pos);
    if (p != nullptr && serial_visits[e.index()] == 0) {
      EXPECT_EQ(p->x, static_cast<float>(e.index())) << e;
      EXPECT_EQ(p->z, 0.0f) << e;
    }
  }
}

TEST(ParallelForEachMatch, EmptyStore) {
  EntityManager manager;
  EntityPages pages(manager);
  STRATA_ASSERT_OK_AND_ASSIGN(Component<Position> pos,
                              pages.RegisterComponent<Position>("Position"));
  Filter filter;
  filter.Include(pos);
  std::atomic<int> calls{0};
  ParallelForEachMatch(pages, filter, [&](Position&) { ++calls; }, pos);
  EXPECT_EQ(calls.load(), 0);
}

}  // namespace
}  // namespace strata
