// Change detection's cost, against the same work without it, in one binary and run:
//
//   bazel run -c opt //iteration:changes_benchmark
//
// BM_Changes/IterateTracked/N vs BM_Changes/IterateUntracked/N: p += v over N entities
// with Position and Velocity (a T& walk), with Position's changes tracked or not (the
// tracked walk marks every page it writes).
// BM_Changes/ChangedQuery/N vs BM_Changes/FullQuery/N: a const walk summing x over the
// positions written since the last frame, where a frame wrote one page in a hundred,
// against the same walk over every position.
#include <cstddef>
#include <vector>

#include "absl/types/span.h"
#include "benchmark/benchmark.h"
#include "entity/entity.h"
#include "entity/entity_manager.h"
#include "iteration/entity_pages.h"
#include "iteration/filter.h"

namespace strata {
namespace {

struct Position {
  float x = 0, y = 0, z = 0;
};
struct Velocity {
  float x = 1, y = 2, z = 3;
};

struct Setup {
  EntityManager manager;
  EntityPages pages{manager};
  Component<Position> pos;
  Component<Velocity> vel;
  std::vector<Entity> entities;

  Setup(size_t n, bool tracked) : entities(n) {
    pos = *pages.RegisterComponent<Position>("position");
    vel = *pages.RegisterComponent<Velocity>("velocity");
    manager.CreateBatch(absl::MakeSpan(entities));
    ComponentBundle bundle;
    bundle.Set(pos, Position{}).Set(vel, Velocity{});
    if (!pages.CreateFromBundle(entities, bundle).ok()) std::abort();
    if (tracked && !pages.TrackChanges(pos.id).ok()) std::abort();
  }
};

void Iterate(benchmark::State& state, bool tracked) {
  Setup s(static_cast<size_t>(state.range(0)), tracked);
  Filter moving;
  moving.Include(s.pos).Include(s.vel);
  for (auto _ : state) {
    ForEachMatch(s.pages, moving, [](Position& p, const Velocity& v) {
      p.x += v.x;
      p.y += v.y;
      p.z += v.z;
    }, s.pos, s.vel);
    s.pages.AdvanceTick();
    benchmark::ClobberMemory();
  }
  state.counters["ns_per_entity"] = benchmark::Counter(
      static_cast<double>(state.iterations() * s.entities.size()),
      benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
void BM_IterateTracked(benchmark::State& state) { Iterate(state, true); }
void BM_IterateUntracked(benchmark::State& state) { Iterate(state, false); }

void Query(benchmark::State& state, bool changed_only) {
  Setup s(static_cast<size_t>(state.range(0)), true);
  // A frame that wrote one page in a hundred (one entity each), then the query.
  const uint32_t since = s.pages.tick();
  s.pages.AdvanceTick();
  size_t written_pages = 0;
  for (size_t i = 0; i < s.entities.size(); i += 100 * kEntityPageSize) {
    s.pages.MarkChanged(s.entities[i], s.pos.id);
    ++written_pages;
  }
  Filter filter;
  filter.Include(s.pos);
  if (changed_only) filter.Changed(s.pos, since);
  size_t visited = 0;
  for (auto _ : state) {
    float sum = 0;
    visited = 0;
    ForEachMatch(s.pages, filter, [&](const Position& p) {
      sum += p.x;
      ++visited;
    }, s.pos);
    benchmark::DoNotOptimize(sum);
  }
  if (changed_only && visited != written_pages) std::abort();
  state.counters["visited"] = static_cast<double>(visited);
}
void BM_ChangedQuery(benchmark::State& state) { Query(state, true); }
void BM_FullQuery(benchmark::State& state) { Query(state, false); }

BENCHMARK(BM_IterateTracked)->Name("BM_Changes/IterateTracked")->Arg(1 << 20)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_IterateUntracked)->Name("BM_Changes/IterateUntracked")->Arg(1 << 20)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_ChangedQuery)->Name("BM_Changes/ChangedQuery")->Arg(1 << 20)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_FullQuery)->Name("BM_Changes/FullQuery")->Arg(1 << 20)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace strata
