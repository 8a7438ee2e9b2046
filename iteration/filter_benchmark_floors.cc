// The floors of //iteration:filter_benchmark: the store's work done on plain arrays,
// the lower bounds its rows are read against (the list of rows is at the top of
// filter_benchmark.cc, which registers these beside the store's cases).
//
// *Flat floors: the ideal layout for data keyed by entity index, flat arrays indexed
// by the entity index with no pages, masks or pointers, and the match list given in
// advance. Nothing that keeps components at their entity's index can touch less
// memory, so these bound what BM_Query and RandomGet can reach here.
// *Packed floors: plain arrays holding only the matches, as an archetype table does.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "benchmark/benchmark.h"
#include "entity/entity.h"
#include "iteration/filter_benchmark.h"
#include "iteration/testing/test_components.h"
#include "testing/random.h"

namespace strata::filter_benchmark {

using ::strata::testing::MovingWorld;
using ::strata::testing::Position;
using ::strata::testing::Velocity;

namespace {

// The matched indices of a query case, ascending, drawn as BM_Query draws them.
std::vector<uint32_t> FloorMatches(size_t n, double fraction) {
  testing::Random rng(kSeed);
  std::vector<uint32_t> matches;
  for (uint32_t i = 0; i < n; ++i) {
    if (rng.Bernoulli(fraction)) matches.push_back(i);
  }
  return matches;
}

// BM_Floor/{Sparse10,Exclude50}Flat/N: position += velocity over the matched indices.
void BM_FloorQuery(benchmark::State& state, size_t n, double fraction) {
  std::vector<Position> positions(n, Position{0, 0, 0});
  std::vector<Velocity> velocities(n, Velocity{1, 2, 3});
  const std::vector<uint32_t> matches = FloorMatches(n, fraction);
  for (auto _ : state) {
    Position* p = positions.data();
    const Velocity* v = velocities.data();
    for (const uint32_t i : matches) kMove(p[i], v[i]);
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(matches.size()));
  state.counters["ns_per_match"] = NsPer(static_cast<double>(matches.size()));
}
// BM_Floor/{Sparse10,Exclude50}Packed/N: position += velocity over plain arrays
// holding only the query's matches (as many as BM_Query has): the floor of the
// compacted queries, and what an archetype table's walk does.
void BM_FloorPacked(benchmark::State& state, size_t n, bool exclude50) {
  size_t matches;
  {
    MovingWorld world(n);
    matches = FillQueryWorld(world, exclude50);
  }
  std::vector<Position> positions(matches, Position{0, 0, 0});
  std::vector<Velocity> velocities(matches, Velocity{1, 2, 3});
  for (auto _ : state) {
    Position* p = positions.data();
    const Velocity* v = velocities.data();
    for (size_t i = 0; i < matches; ++i) kMove(p[i], v[i]);
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(matches));
  state.counters["ns_per_match"] = NsPer(static_cast<double>(matches));
}

}  // namespace

void BM_FloorSparse10Packed(benchmark::State& state, size_t n) { BM_FloorPacked(state, n, false); }
void BM_FloorExclude50Packed(benchmark::State& state, size_t n) { BM_FloorPacked(state, n, true); }

void BM_FloorSparse10(benchmark::State& state, size_t n) {
  BM_FloorQuery(state, n, kSparse10Fraction);
}
void BM_FloorExclude50(benchmark::State& state, size_t n) {
  BM_FloorQuery(state, n, kExclude50Fraction);
}

// BM_Floor/AddRemoveFlat/N: AddRemove's per-entity work on flat arrays: the manager's
// alive check, a presence bit, a per-entity component count and the value for Add; the
// bit and generation checks and the count for Remove. No pages, no Status, no release.
void BM_FloorAddRemove(benchmark::State& state, size_t n) {
  MovingWorld world(n);
  std::vector<uint32_t> generations(n);
  for (Entity e : world.entities) generations[e.index()] = e.generation();
  std::vector<uint32_t> has_velocity((n + 31) / 32, 0);
  std::vector<uint16_t> counts(n, 1);  // Position
  std::vector<Velocity> velocities(n);
  const Velocity v{1, 2, 3};
  for (auto _ : state) {
    bool ok = true;
    for (Entity e : world.entities) {
      const uint32_t i = e.index();
      const uint32_t flag = uint32_t{1} << (i & 31);
      if (world.manager.Alive(e) && (has_velocity[i >> 5] & flag) == 0) {
        has_velocity[i >> 5] |= flag;
        ++counts[i];
        velocities[i] = v;
      } else {
        ok = false;
      }
    }
    for (Entity e : world.entities) {
      const uint32_t i = e.index();
      const uint32_t flag = uint32_t{1} << (i & 31);
      if ((has_velocity[i >> 5] & flag) != 0 && generations[i] == e.generation()) {
        has_velocity[i >> 5] &= ~flag;
        --counts[i];
      } else {
        ok = false;
      }
    }
    if (!ok) state.SkipWithError("add/remove failed");
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(n));
  state.counters["ns_per_pair"] = NsPer(static_cast<double>(n));
}

// BM_Floor/RandomGetFlat/N: RandomGet's generation check and read on a flat
// generation array and a flat Position array: two independent random reads per access.
void BM_FloorRandomGet(benchmark::State& state, size_t n) {
  MovingWorld world(n);  // for the same handles and generations as RandomGet
  std::vector<uint32_t> generations(n);
  for (Entity e : world.entities) generations[e.index()] = e.generation();
  std::vector<Position> positions(n, Position{1, 2, 3});
  const std::vector<Entity> shuffled = Shuffled(world.entities);
  for (auto _ : state) {
    float sum = 0;
    for (Entity e : shuffled) {
      const Position* p =
          generations[e.index()] == e.generation() ? &positions[e.index()] : nullptr;
      sum += p->x;
    }
    benchmark::DoNotOptimize(sum);
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(n));
  state.counters["ns_per_access"] = NsPer(static_cast<double>(n));
}

}  // namespace strata::filter_benchmark
