// Shared by the two source files of //iteration:filter_benchmark: the seed, the query
// cases' per-entity work, the counter helper, the query worlds' setup, and the floor
// cases (filter_benchmark_floors.cc), which filter_benchmark.cc registers beside the
// store's cases. Benchmark-local: nothing else includes it.
#ifndef STRATA_ITERATION_FILTER_BENCHMARK_H_
#define STRATA_ITERATION_FILTER_BENCHMARK_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/types/span.h"
#include "benchmark/benchmark.h"
#include "entity/entity.h"
#include "iteration/components.h"
#include "iteration/entity_pages.h"
#include "iteration/testing/test_components.h"
#include "testing/random.h"

namespace strata::filter_benchmark {

inline constexpr uint64_t kSeed = 0x1D0C5EEDull;

// kMove: the iterate and query cases' per-entity work, position += velocity.
inline constexpr auto kMove = [](testing::Position& p, const testing::Velocity& v) {
  p.x += v.x;
  p.y += v.y;
  p.z += v.z;
};

// Counter in nanoseconds per `units` units of work per iteration.
inline benchmark::Counter NsPer(double units) {
  return benchmark::Counter(
      units * 1e-9, benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}

// The fraction of entities with Velocity in Sparse10 and with Frozen in Exclude50.
inline constexpr double kSparse10Fraction = 0.1;
inline constexpr double kExclude50Fraction = 0.5;

// Sparse10: all N have Position, a random 10% also Velocity.
// Exclude50: all N have Position+Velocity, a random 50% also Frozen.
// Fills `world` that way and returns the number of matches of the query. The random
// draws go in the order of world.entities, one per entity, from Random(kSeed): the
// floors draw the same sequence to pick the same entities.
inline size_t FillQueryWorld(testing::MovingWorld& world, bool exclude50) {
  testing::Random rng(kSeed);
  ComponentBundle bundle;
  bundle.Set(world.pos, testing::Position{0, 0, 0});
  if (exclude50) bundle.Set(world.vel, testing::Velocity{1, 2, 3});
  (void)world.pages.CreateFromBundle(world.entities, bundle);
  size_t matches = 0;
  for (Entity e : world.entities) {
    if (exclude50) {
      if (rng.Bernoulli(kExclude50Fraction)) {
        (void)world.pages.Add(e, world.frozen, testing::Frozen{});
      } else {
        ++matches;
      }
    } else if (rng.Bernoulli(kSparse10Fraction)) {
      (void)world.pages.Add(e, world.vel, testing::Velocity{1, 2, 3});
      ++matches;
    }
  }
  return matches;
}

// The random-get cases' access order: the handles in a seeded random order.
inline std::vector<Entity> Shuffled(std::vector<Entity> entities) {
  testing::Random rng(kSeed);
  rng.Shuffle(absl::MakeSpan(entities));
  return entities;
}

// The floor cases (filter_benchmark_floors.cc; what each does is commented there).
void BM_FloorSparse10(benchmark::State& state, size_t n);
void BM_FloorExclude50(benchmark::State& state, size_t n);
void BM_FloorSparse10Packed(benchmark::State& state, size_t n);
void BM_FloorExclude50Packed(benchmark::State& state, size_t n);
void BM_FloorRandomGet(benchmark::State& state, size_t n);
void BM_FloorAddRemove(benchmark::State& state, size_t n);
void BM_FloorCompactFlat(benchmark::State& state, size_t n);
void BM_FloorCreateFlat(benchmark::State& state, size_t n);

}  // namespace strata::filter_benchmark

#endif  // STRATA_ITERATION_FILTER_BENCHMARK_H_
