#include "iteration/parallel_query.h"

#include <atomic>
#include <cstdint>
#include <cstring>
#include <thread>
#include <vector>

#if !defined(__SANITIZE_THREAD__)
#include "oneapi/tbb/task_arena.h"
#endif

#include "entity/entity.h"
#include "entity/entity_manager.h"
#include "gtest/gtest.h"
#include "iteration/command_buffer.h"
#include "iteration/entity_pages.h"
#include "iteration/filter.h"
#include "iteration/testing/test_components.h"
#include "testing/random.h"
#include "testing/status_matchers.h"

namespace strata {
namespace {

using ::strata::testing::IsOk;

using ::strata::testing::Frozen;
using ::strata::testing::Position;
using ::strata::testing::Velocity;

// A store with clustered random components spanning many TBB tasks (grain 256 pages).
struct World : ::strata::testing::MovingWorld {
  Filter moving;

  explicit World(::strata::testing::Random& rng) : MovingWorld(32 * 2000) {
    for (Entity e : entities) {
      const float f = static_cast<float>(e.index());
      if (rng.Bernoulli(0.9)) {
        EXPECT_THAT(pages.Add(e, pos, Position{f, 0, 0}), IsOk());
      }
      if (rng.Bernoulli(0.7)) {
        EXPECT_THAT(pages.Add(e, vel, Velocity{1, 2, 3}), IsOk());
      }
      if (rng.Bernoulli(0.2)) {
        EXPECT_THAT(pages.Add(e, frozen, Frozen{}), IsOk());
      }
    }
    moving.Include(pos).Include(vel).Exclude(frozen);
  }

  // After one parallel pass, checks with the serial walk that exactly the matching
  // entities were visited, once each, and moved once; the others were not touched.
  void CheckAgainstSerialWalk(const std::vector<uint8_t>& parallel_visits,
                              size_t parallel_count) {
    std::vector<uint8_t> serial_visits(entities.size(), 0);
    size_t serial_count = 0;
    ForEachMatch(
        pages, moving,
        [&](Entity e, Position& p, Velocity&) {
          ++serial_visits[e.index()];
          ++serial_count;
          EXPECT_EQ(p.x, static_cast<float>(e.index()) + 1.0f) << e;
          EXPECT_EQ(p.z, 3.0f) << e;
        },
        pos, vel);
    EXPECT_EQ(parallel_visits, serial_visits);
    EXPECT_EQ(parallel_count, serial_count);
    EXPECT_GT(serial_count, entities.size() / 3);
    for (Entity e : entities) {
      const Position* p = pages.TryGet(e, pos);
      if (p != nullptr && serial_visits[e.index()] == 0) {
        EXPECT_EQ(p->x, static_cast<float>(e.index())) << e;
        EXPECT_EQ(p->z, 0.0f) << e;
      }
    }
  }
};

auto MoveAndCount(std::vector<uint8_t>& visits, std::atomic<size_t>& count) {
  // visits[i] is written only by the one thread that visits entity i.
  return [&visits, &count](Entity e, Position& p, const Velocity& v) {
    p.x += v.x;
    p.y += v.y;
    p.z += v.z;
    ++visits[e.index()];
    count.fetch_add(1, std::memory_order_relaxed);
  };
}

// The parallel walk visits exactly the entities of the serial walk, once each. (On
// TBB; under TSan on std::threads over the same ranges, see parallel_query.h.)
TEST(ParallelForEachMatch, SameResultsAsSerialWalk) {
  ::strata::testing::Random rng(::strata::testing::TestSeed());
  SCOPED_TRACE(rng.DescribeSeed());
  World world(rng);
  std::vector<uint8_t> visits(world.entities.size(), 0);
  std::atomic<size_t> count{0};
  ParallelForEachMatch(world.pages, world.moving, MoveAndCount(visits, count), world.pos,
                       world.vel);
  world.CheckAgainstSerialWalk(visits, count.load());
}

// The same per-range walk ParallelForEachMatch runs in each TBB task, on plain
// threads over disjoint page ranges: what TSan checks for races in our code.
TEST(ParallelForEachMatch, DisjointPageRangesOnThreadsAreRaceFree) {
  ::strata::testing::Random rng(::strata::testing::TestSeed());
  SCOPED_TRACE(rng.DescribeSeed());
  World world(rng);
  std::vector<uint8_t> visits(world.entities.size(), 0);
  std::atomic<size_t> count{0};
  auto fn = MoveAndCount(visits, count);
  constexpr size_t kThreads = 4;
  const size_t pages = world.pages.page_capacity();
  std::vector<std::thread> threads;
  for (size_t t = 0; t < kThreads; ++t) {
    // Ranges not aligned to chunks or vectors, and adjacent pages on different threads.
    const size_t begin = pages * t / kThreads + (t == 0 ? 0 : 3);
    const size_t end = t + 1 == kThreads ? pages : pages * (t + 1) / kThreads + 3;
    threads.emplace_back([&, begin, end] {
      ForEachMatchInPageRange(world.pages, world.moving, begin, end, fn, world.pos,
                              world.vel);
    });
  }
  for (std::thread& thread : threads) thread.join();
  world.CheckAgainstSerialWalk(visits, count.load());
}

// After a compaction (which moves almost every entity: the components were drawn at
// random), the parallel walk still visits every match exactly once, with its own
// values; plain threads over disjoint page ranges too, so TSan checks them.
TEST(ParallelForEachMatch, EveryMatchOnceAfterCompaction) {
  ::strata::testing::Random rng(::strata::testing::TestSeed());
  SCOPED_TRACE(rng.DescribeSeed());
  World world(rng);
  ASSERT_GT(world.pages.Compact(), world.entities.size() / 4);
  ASSERT_FALSE(world.pages.compaction_in_progress());
  {
    std::vector<uint8_t> visits(world.entities.size(), 0);
    std::atomic<size_t> count{0};
    ParallelForEachMatch(world.pages, world.moving, MoveAndCount(visits, count),
                         world.pos, world.vel);
    world.CheckAgainstSerialWalk(visits, count.load());
  }
  // Undo the move, compact again with new holes punched, and split by hand.
  ForEachMatch(world.pages, world.moving, [](Position& p, const Velocity& v) {
    p.x -= v.x; p.y -= v.y; p.z -= v.z;
  }, world.pos, world.vel);
  for (size_t i = 0; i < world.entities.size(); i += 7) {
    (void)world.pages.Remove(world.entities[i], world.frozen);
  }
  ASSERT_GT(world.pages.Compact(), 0u);
  std::vector<uint8_t> visits(world.entities.size(), 0);
  std::atomic<size_t> count{0};
  auto fn = MoveAndCount(visits, count);
  constexpr size_t kThreads = 3;
  const size_t pages = world.pages.page_capacity();
  std::vector<std::thread> threads;
  for (size_t t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      ForEachMatchInPageRange(world.pages, world.moving, pages * t / kThreads,
                              pages * (t + 1) / kThreads, fn, world.pos, world.vel);
    });
  }
  for (std::thread& thread : threads) thread.join();
  world.CheckAgainstSerialWalk(visits, count.load());
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

// The state a parallel walk with commands leaves: every live entity's handle and its
// components' bytes, in index order.
std::vector<uint32_t> Snapshot(World& w) {
  std::vector<uint32_t> out;
  for (uint32_t index = 0; index < w.manager.slots_used(); ++index) {
    for (uint32_t generation = 0; generation < 4; ++generation) {
      const Entity e(index, generation);
      if (!w.manager.Alive(e)) continue;
      out.push_back(index);
      out.push_back(generation);
      if (const auto* p = static_cast<const Position*>(w.pages.TryGet(e, w.pos.id))) {
        uint32_t bits;
        std::memcpy(&bits, &p->x, 4);
        out.push_back(bits);
      }
      out.push_back(w.pages.Has(e, w.frozen.id) ? 1 : 0);
    }
  }
  return out;
}

// One frame of commands from a parallel walk: destroy some, freeze some, spawn a child
// per destroyed entity that refers to its pending sibling.
std::vector<uint32_t> RunWithCommands(int threads) {
  ::strata::testing::Random rng(11);
  World w(rng);
  ParallelCommands commands(w.pages);
  auto walk = [&] {
    ParallelForEachMatchWithCommands(
        w.pages, w.moving, commands,
        [&](CommandBuffer& out, Entity e, Position& p, const Velocity&) {
          if (e.index() % 7 == 0) {
            out.Destroy(e);
            ComponentBundle bundle;
            bundle.Set(w.pos, Position{p.x, 1, 0});
            const Entity child = out.Create(bundle);
            out.Add(child, w.frozen, Frozen{});
          } else if (e.index() % 5 == 0) {
            out.Add(e, w.frozen, Frozen{});
          }
        },
        w.pos, w.vel);
  };
#if defined(__SANITIZE_THREAD__)
  (void)threads;
  walk();
#else
  tbb::task_arena arena(threads);
  arena.execute(walk);
#endif
  EXPECT_GT(commands.size(), 0u);
  const CommandBuffer::Result result = commands.Playback(w.manager, w.pages);
  EXPECT_GT(result.applied, 0u);
  return Snapshot(w);
}

TEST(ParallelCommands, PlaybackIsTheSameForAnyThreadCount) {
  const std::vector<uint32_t> one = RunWithCommands(1);
  ASSERT_FALSE(one.empty());
  EXPECT_EQ(RunWithCommands(2), one);
  EXPECT_EQ(RunWithCommands(8), one);
}

TEST(ParallelCommands, PendingHandlesResolveThroughTheirBuffer) {
  ::strata::testing::Random rng(3);
  World w(rng);
  ParallelCommands commands(w.pages);
  std::vector<Entity> pending(w.manager.slots_used());
  std::atomic<size_t> recorded{0};
  ParallelForEachMatchWithCommands(
      w.pages, w.moving, commands,
      [&](CommandBuffer& out, Entity e, Position&, const Velocity&) {
        if (e.index() % 1000 == 0) {
          pending[e.index()] = out.Create();  // one writer per index: no race
          recorded.fetch_add(1, std::memory_order_relaxed);
        }
      },
      w.pos, w.vel);
  const size_t before = w.manager.size();
  commands.Playback(w.manager, w.pages);
  EXPECT_EQ(w.manager.size(), before + recorded.load());
  for (Entity p : pending) {
    if (!p.is_valid()) continue;
    EXPECT_TRUE(w.manager.Alive(commands.Resolve(p)));
  }
}

}  // namespace
}  // namespace strata
