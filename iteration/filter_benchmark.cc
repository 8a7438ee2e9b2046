// Benchmarks of the page store and its filters against the article's figures (seed 004,
// "Efficient Entity Page Iteration"): filtering with scheme 1, scheme 2 and the SIMD
// kernel, iteration, queries, compaction and page operations, each beside a flat-array
// floor.
//
//   bazel run -c opt //iteration:filter_benchmark -- --benchmark_min_time=0.1
//       --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
// (one command line; with --benchmark_min_time=0.1 a full run takes about one minute,
// with the default 0.5 s about four).
//
// BM_Filter/<Scheme>/<DensityPercent>/<Includes>/<Excludes>: 1M entity slots, 16
//   component types (includes first, then excludes). A slot matches with probability
//   density; a non-matching slot has each filter component with probability 1/2,
//   redrawn until it does not match, so pages are never trivially empty. Each match
//   reads one uint32_t of the first include and adds it to a sum. Schemes:
//   EntityRows (scheme 1, RowMaskPages), PageMasks (scheme 2, scalar per-page filter),
//   PageMasksSimd (scheme 2, Highway kernel), DenseMaskBaseline (a flat array of
//   64-bit per-entity masks checked one by one).
// BM_Iterate/{PageMasksSimd,DenseArrays}/N: position += velocity over N entities.
// BM_Query/Sparse10/N: position += velocity where a random 10% of N have Velocity.
// BM_Query/Exclude50/N: the same over Position+Velocity, excluding a random 50% Frozen.
// BM_Query/{Sparse10,Exclude50}Compacted/N: the same setups, then one
//   EntityPages::Compact() outside the timing; ...CompactedEntity: the callback also
//   takes each match's Entity.
// BM_Pages/{AddRemove,AddRemoveBatch,CreateFromBundle,RandomGet,Compact,CompactReserved}/N.
// BM_Pages/RandomGet{Compacted,NotCompacted}/N: RandomGet's reads (every entity's
//   Position, in a shuffled order) on the Sparse10 world, compacted once outside the
//   timing or never.
// BM_Pages/RandomGetMany{Compacted,NotCompacted}/N: the same through TryGetMany, 256
//   handles per call.
// BM_Pages/CompactFresh/N: Compact on a Sparse10 store built per iteration, with the
//   heap's freed memory handed back to the system before it is built, so its tables,
//   the plan's buffers and any page the pass takes are memory the process must fault
//   in, as after a level load (BM_Pages/Compact reuses what the last store freed).
// BM_Pages/CreateFromBundleFresh/N: CreateFromBundle of N entities with Position and
//   Velocity into a new store on returned memory, the same way (BM_Pages/
//   CreateFromBundle reuses one store's pages).
// BM_Floor/{Sparse10Flat,Exclude50Flat,RandomGetFlat,AddRemoveFlat}/N: the same
//   work on flat arrays with the matches known in advance: a lower bound (see there).
// BM_Floor/{Sparse10,Exclude50}Packed/N: the query's work on plain arrays holding only
//   the matches, the floor of the compacted queries.
// BM_Floor/CompactFlat/N: Compact's Sparse10 swaps on plain arrays by slot, found by
//   two cursors over a presence bitmap: the floor of BM_Pages/Compact.
// BM_Floor/CreateFlat/N: CreateFromBundle's values and generations written by entity
//   index into pre-faulted plain arrays: the floor of the CreateFromBundle rows.
// The rows the store's goals name (random get, creation, compaction and their floors)
// are also registered at N = 10M.
// The BM_Floor cases are in filter_benchmark_floors.cc; this file registers them all.
//
// Counters are ns per slot / match / entity / pair / access / move, computed from the
// measured time.
#include "iteration/filter_benchmark.h"

#include <malloc.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/types/span.h"
#include "benchmark/benchmark.h"
#include "entity/entity.h"
#include "entity/entity_manager.h"
#include "iteration/entity_pages.h"
#include "iteration/filter.h"
#include "iteration/row_mask_pages.h"
#include "iteration/testing/test_components.h"
#include "testing/random.h"

namespace strata::filter_benchmark {
namespace {

using ::strata::testing::MovingWorld;
using ::strata::testing::Position;
using ::strata::testing::Velocity;

// ---------------------------------------------------------------------------------
// BM_Filter

enum Scheme { kEntityRows, kPageMasks, kPageMasksSimd, kDenseMaskBaseline };
constexpr uint32_t kFilterSlots = 1u << 20;
constexpr int kFilterComponents = 16;

// One workload shared by the four schemes of a (density, includes, excludes) case;
// the cases are registered scheme-innermost, so it is built once per case.
struct FilterWorkload {
  int density = -1, includes = -1, excludes = -1;
  std::vector<uint64_t> masks;    // per slot
  std::vector<uint32_t> values;   // per slot: the first include's value
  size_t matches = 0;
  std::unique_ptr<EntityManager> manager;
  std::unique_ptr<EntityPages> pages;
  std::vector<ComponentId> ids;
  std::unique_ptr<RowMaskPages> rows;
};

FilterWorkload& GetFilterWorkload(int density, int includes, int excludes) {
  static FilterWorkload* workload = new FilterWorkload();
  FilterWorkload& w = *workload;
  if (w.density == density && w.includes == includes && w.excludes == excludes) return w;
  w = FilterWorkload();
  w.density = density;
  w.includes = includes;
  w.excludes = excludes;
  testing::Random rng(kSeed + density * 100 + includes * 10 + excludes);
  const uint64_t include_mask = (uint64_t{1} << includes) - 1;
  const uint64_t exclude_mask = ((uint64_t{1} << excludes) - 1) << includes;
  w.masks.resize(kFilterSlots);
  w.values.resize(kFilterSlots);
  for (uint32_t i = 0; i < kFilterSlots; ++i) {
    uint64_t m;
    if (rng.Bernoulli(density / 100.0)) {
      m = include_mask;
    } else {
      do {
        m = rng.Next64() & (include_mask | exclude_mask);
      } while ((m & include_mask) == include_mask && (m & exclude_mask) == 0);
    }
    w.masks[i] = m;
    w.values[i] = rng.Next32() >> 8;
    if ((m & include_mask) == include_mask && (m & exclude_mask) == 0) ++w.matches;
  }
  w.manager = std::make_unique<EntityManager>();
  std::vector<Entity> entities(kFilterSlots);
  w.manager->CreateBatch(absl::MakeSpan(entities));
  w.pages = std::make_unique<EntityPages>(*w.manager);
  // Component 0 carries the value read per match; the others are tags.
  for (int c = 0; c < kFilterComponents; ++c) {
    w.ids.push_back(*w.pages->RegisterComponent("c" + std::to_string(c), c == 0 ? 4 : 0,
                                                4));
  }
  w.rows = std::make_unique<RowMaskPages>();
  for (uint32_t i = 0; i < kFilterSlots; ++i) {
    for (int c = 0; c < kFilterComponents; ++c) {
      if (w.masks[i] & (uint64_t{1} << c)) {
        (void)w.pages->Add(entities[i], w.ids[c], c == 0 ? &w.values[i] : nullptr);
        w.rows->Add(i, c);
      }
    }
  }
  w.rows->UpdateDirtyPages();
  return w;
}

void BM_Filter(benchmark::State& state, Scheme scheme, int density, int includes,
               int excludes) {
  FilterWorkload& w = GetFilterWorkload(density, includes, excludes);
  const uint64_t include_mask = (uint64_t{1} << includes) - 1;
  const uint64_t exclude_mask = ((uint64_t{1} << excludes) - 1) << includes;
  Filter filter;
  for (int c = 0; c < includes; ++c) filter.Include(w.ids[c]);
  for (int c = 0; c < excludes; ++c) filter.Exclude(w.ids[includes + c]);
  const Component<uint32_t> first{w.ids[0]};
  size_t found = 0;
  for (auto _ : state) {
    uint64_t sum = 0;
    size_t count = 0;
    switch (scheme) {
      case kEntityRows:
        w.rows->ForEachMatch(include_mask, exclude_mask, [&](uint32_t i) {
          sum += w.values[i];
          ++count;
        });
        break;
      case kPageMasks:
        ForEachMatchScalar(
            *w.pages, filter,
            [&](uint32_t& v) {
              sum += v;
              ++count;
            },
            first);
        break;
      case kPageMasksSimd:
        ForEachMatch(
            *w.pages, filter,
            [&](uint32_t& v) {
              sum += v;
              ++count;
            },
            first);
        break;
      case kDenseMaskBaseline: {
        const uint64_t* masks = w.masks.data();
        for (uint32_t i = 0; i < kFilterSlots; ++i) {
          const uint64_t m = masks[i];
          if ((m & include_mask) != include_mask || (m & exclude_mask) != 0) continue;
          sum += w.values[i];
          ++count;
        }
        break;
      }
    }
    benchmark::DoNotOptimize(sum);
    found = count;
  }
  if (found != w.matches) state.SkipWithError("scheme found a different match count");
  state.SetItemsProcessed(state.iterations() * int64_t{kFilterSlots});
  state.counters["ns_per_slot"] = NsPer(kFilterSlots);
  state.counters["ns_per_match"] = NsPer(static_cast<double>(w.matches));
  state.counters["matches"] = static_cast<double>(w.matches);
}

// ---------------------------------------------------------------------------------
// Page store cases, on testing::MovingWorld

// ReturnFreedMemory: hands the memory the heap holds freed back to the system
// (malloc_trim), so that a store built next faults its pages in as in a process that
// never had one. Without it glibc serves the next store's tables from the last one's
// (its mmap threshold rises past them once they are freed), already faulted in.
void ReturnFreedMemory() { malloc_trim(0); }

void BM_IteratePageMasksSimd(benchmark::State& state, size_t n) {
  MovingWorld world(n);
  ComponentBundle bundle;
  bundle.Set(world.pos, Position{0, 0, 0}).Set(world.vel, Velocity{1, 2, 3});
  if (!world.pages.CreateFromBundle(world.entities, bundle).ok()) {
    state.SkipWithError("create failed");
    return;
  }
  Filter filter;
  filter.Include(world.pos).Include(world.vel);
  for (auto _ : state) {
    ForEachMatch(
        world.pages, filter,
        kMove,
        world.pos, world.vel);
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(n));
  state.counters["ns_per_entity"] = NsPer(static_cast<double>(n));
}

void BM_IterateDenseArrays(benchmark::State& state, size_t n) {
  std::vector<Position> positions(n, Position{0, 0, 0});
  std::vector<Velocity> velocities(n, Velocity{1, 2, 3});
  for (auto _ : state) {
    Position* p = positions.data();
    const Velocity* v = velocities.data();
    for (size_t i = 0; i < n; ++i) {
      p[i].x += v[i].x;
      p[i].y += v[i].y;
      p[i].z += v[i].z;
    }
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(n));
  state.counters["ns_per_entity"] = NsPer(static_cast<double>(n));
}

// The query cases; `compacted`: one Compact() after the setup, outside the timing;
// `with_entity`: the callback also takes each match's Entity (what systems that name
// entities do), folded into a checksum so the handle is built.
void BM_Query(benchmark::State& state, size_t n, bool exclude50, bool compacted,
              bool with_entity = false) {
  MovingWorld world(n);
  const size_t matches = FillQueryWorld(world, exclude50);
  if (compacted) world.pages.Compact();
  Filter filter;
  filter.Include(world.pos).Include(world.vel);
  if (exclude50) filter.Exclude(world.frozen);
  if (CountMatches(world.pages, filter) != matches) {
    state.SkipWithError("wrong match count");
    return;
  }
  for (auto _ : state) {
    if (with_entity) {
      uint64_t checksum = 0;
      ForEachMatch(
          world.pages, filter,
          [&checksum](Entity e, Position& p, const Velocity& v) {
            checksum += e.bits();
            kMove(p, v);
          },
          world.pos, world.vel);
      benchmark::DoNotOptimize(checksum);
    } else {
      ForEachMatch(
          world.pages, filter,
          kMove,
          world.pos, world.vel);
    }
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(matches));
  state.counters["ns_per_match"] = NsPer(static_cast<double>(matches));
}
void BM_QuerySparse10(benchmark::State& state, size_t n) {
  BM_Query(state, n, false, false);
}
void BM_QueryExclude50(benchmark::State& state, size_t n) {
  BM_Query(state, n, true, false);
}
void BM_QuerySparse10Compacted(benchmark::State& state, size_t n) {
  BM_Query(state, n, false, true);
}
void BM_QueryExclude50Compacted(benchmark::State& state, size_t n) {
  BM_Query(state, n, true, true);
}
void BM_QuerySparse10CompactedEntity(benchmark::State& state, size_t n) {
  BM_Query(state, n, false, true, /*with_entity=*/true);
}
void BM_QueryExclude50CompactedEntity(benchmark::State& state, size_t n) {
  BM_Query(state, n, true, true, /*with_entity=*/true);
}

// BM_Pages/Compact/N: the Sparse10 setup compacted from scratch (a fresh store each
// iteration, built outside the timing). ns_per_move is per entity moved (a swap
// moves two); `moved` is how many a compaction moved.
// BM_Pages/CompactReserved/N: the same, the store having called
// ReserveForCompaction() at setup (outside the timing), so the first Compact finds
// its slot table's memory already there instead of paying the kernel for it.
// BM_Pages/CompactFresh/N: the same with ReturnFreedMemory() before each store is
// built (see there).
void BM_PagesCompactWith(benchmark::State& state, size_t n, bool reserved,
                         bool fresh = false) {
  size_t moved = 0;
  for (auto _ : state) {
    state.PauseTiming();
    if (fresh) ReturnFreedMemory();
    auto world = std::make_unique<MovingWorld>(n);
    FillQueryWorld(*world, /*exclude50=*/false);
    if (reserved && !world->pages.ReserveForCompaction().ok()) {
      state.SkipWithError("ReserveForCompaction failed");
      return;
    }
    state.ResumeTiming();
    moved = world->pages.Compact();
    benchmark::DoNotOptimize(moved);
    state.PauseTiming();
    world.reset();
    state.ResumeTiming();
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(moved));
  state.counters["ns_per_move"] = NsPer(static_cast<double>(moved));
  state.counters["moved"] = static_cast<double>(moved);
}
void BM_PagesCompact(benchmark::State& state, size_t n) {
  BM_PagesCompactWith(state, n, /*reserved=*/false);
}
void BM_PagesCompactReserved(benchmark::State& state, size_t n) {
  BM_PagesCompactWith(state, n, /*reserved=*/true);
}
void BM_PagesCompactFresh(benchmark::State& state, size_t n) {
  BM_PagesCompactWith(state, n, /*reserved=*/false, /*fresh=*/true);
}

void BM_PagesAddRemove(benchmark::State& state, size_t n) {
  MovingWorld world(n);
  ComponentBundle bundle;
  bundle.Set(world.pos, Position{0, 0, 0});
  (void)world.pages.CreateFromBundle(world.entities, bundle);
  const Velocity v{1, 2, 3};
  for (auto _ : state) {
    bool ok = true;
    for (Entity e : world.entities) ok &= world.pages.Add(e, world.vel, v).ok();
    for (Entity e : world.entities) ok &= world.pages.Remove(e, world.vel).ok();
    world.pages.ReleaseEmptyPages();  // the per-frame dirty pass is part of the cost
    if (!ok) state.SkipWithError("add/remove failed");
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(n));
  state.counters["ns_per_pair"] = NsPer(static_cast<double>(n));
}

// BM_Pages/AddRemoveBatch/N: AddRemove's work through the batch calls.
void BM_PagesAddRemoveBatch(benchmark::State& state, size_t n) {
  MovingWorld world(n);
  ComponentBundle bundle;
  bundle.Set(world.pos, Position{0, 0, 0});
  (void)world.pages.CreateFromBundle(world.entities, bundle);
  const Velocity v{1, 2, 3};
  for (auto _ : state) {
    bool ok = world.pages.Add(world.entities, world.vel, v).ok();
    ok &= world.pages.Remove(world.entities, world.vel).ok();
    world.pages.ReleaseEmptyPages();
    if (!ok) state.SkipWithError("add/remove failed");
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(n));
  state.counters["ns_per_pair"] = NsPer(static_cast<double>(n));
}

void BM_PagesCreateFromBundle(benchmark::State& state, size_t n) {
  MovingWorld world(n);
  ComponentBundle bundle;
  bundle.Set(world.pos, Position{1, 2, 3}).Set(world.vel, Velocity{4, 5, 6});
  // One round outside the timing, so that every timed one reuses the store's pages
  // (at 10M a run has a single iteration, which was otherwise the first creation).
  if (!world.pages.CreateFromBundle(world.entities, bundle).ok()) {
    state.SkipWithError("create failed");
    return;
  }
  world.pages.DeleteEntities(world.entities);
  for (auto _ : state) {
    if (!world.pages.CreateFromBundle(world.entities, bundle).ok()) {
      state.SkipWithError("create failed");
      break;
    }
    state.PauseTiming();
    world.pages.DeleteEntities(world.entities);
    state.ResumeTiming();
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(n));
  state.counters["ns_per_entity"] = NsPer(static_cast<double>(n));
}

// BM_Pages/CreateFromBundleFresh/N: CreateFromBundle's work on a new store whose memory
// the process has to fault in (ReturnFreedMemory before it is built): the first
// creation of a level, page faults and table growth included. The manager's entities
// are created outside the timing, as in CreateFromBundle.
void BM_PagesCreateFromBundleFresh(benchmark::State& state, size_t n) {
  ComponentBundle bundle;
  std::unique_ptr<MovingWorld> world;
  for (auto _ : state) {
    state.PauseTiming();
    world.reset();
    ReturnFreedMemory();
    world = std::make_unique<MovingWorld>(n);
    bundle = ComponentBundle();
    bundle.Set(world->pos, Position{1, 2, 3}).Set(world->vel, Velocity{4, 5, 6});
    state.ResumeTiming();
    if (!world->pages.CreateFromBundle(world->entities, bundle).ok()) {
      state.SkipWithError("create failed");
      break;
    }
  }
  if (world != nullptr && world->pages.num_entities() != n) {
    state.SkipWithError("wrong entity count");
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(n));
  state.counters["ns_per_entity"] = NsPer(static_cast<double>(n));
}

// ReadPositionsShuffled: the timed loop of the RandomGet rows: every entity's
// Position read through its handle, in a shuffled order.
void ReadPositionsShuffled(benchmark::State& state, MovingWorld& world, size_t n) {
  const std::vector<Entity> shuffled = Shuffled(world.entities);
  for (auto _ : state) {
    float sum = 0;
    for (Entity e : shuffled) {
      const Position* p = world.pages.TryGet(e, world.pos);
      sum += p->x;
    }
    benchmark::DoNotOptimize(sum);
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(n));
  state.counters["ns_per_access"] = NsPer(static_cast<double>(n));
}

// ReadPositionsShuffledMany: ReadPositionsShuffled's reads through TryGetMany, 256
// handles per call.
void ReadPositionsShuffledMany(benchmark::State& state, MovingWorld& world, size_t n) {
  const std::vector<Entity> shuffled = Shuffled(world.entities);
  constexpr size_t kChunk = 256;
  const Position* chunk[kChunk];
  for (auto _ : state) {
    float sum = 0;
    const absl::Span<const Entity> all(shuffled);
    for (size_t first = 0; first < all.size(); first += kChunk) {
      const absl::Span<const Entity> part = all.subspan(first, kChunk);
      std::as_const(world.pages).TryGetMany(part, world.pos, absl::MakeSpan(chunk, part.size()));
      for (size_t k = 0; k < part.size(); ++k) sum += chunk[k]->x;
    }
    benchmark::DoNotOptimize(sum);
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(n));
  state.counters["ns_per_access"] = NsPer(static_cast<double>(n));
}

void BM_PagesRandomGet(benchmark::State& state, size_t n) {
  MovingWorld world(n);
  ComponentBundle bundle;
  bundle.Set(world.pos, Position{1, 2, 3});
  (void)world.pages.CreateFromBundle(world.entities, bundle);
  ReadPositionsShuffled(state, world, n);
}

// BM_Pages/RandomGet{Compacted,NotCompacted}/N: the random reads of RandomGet on the
// Sparse10 world (every entity has Position, a random 10% Velocity), after one
// Compact() outside the timing (slots found through the slot table) or never (slot =
// index): what a game that compacts every frame reads through handles, and the same
// store before. Every entity's Position is read, in the shuffled order.
// BM_Pages/RandomGetMany{Compacted,NotCompacted}/N: the same reads through TryGetMany,
// 256 handles per call (what a caller that reads many handles does).
void BM_PagesRandomGetSparse10(benchmark::State& state, size_t n, bool compacted,
                               bool many = false) {
  MovingWorld world(n);
  FillQueryWorld(world, /*exclude50=*/false);
  if (compacted && (world.pages.Compact() == 0 || !world.pages.compacted())) {
    state.SkipWithError("the compaction moved nothing");
    return;
  }
  if (many) {
    ReadPositionsShuffledMany(state, world, n);
  } else {
    ReadPositionsShuffled(state, world, n);
  }
}
void BM_PagesRandomGetManyCompacted(benchmark::State& state, size_t n) {
  BM_PagesRandomGetSparse10(state, n, /*compacted=*/true, /*many=*/true);
}
void BM_PagesRandomGetManyNotCompacted(benchmark::State& state, size_t n) {
  BM_PagesRandomGetSparse10(state, n, /*compacted=*/false, /*many=*/true);
}
void BM_PagesRandomGetCompacted(benchmark::State& state, size_t n) {
  BM_PagesRandomGetSparse10(state, n, /*compacted=*/true);
}
void BM_PagesRandomGetNotCompacted(benchmark::State& state, size_t n) {
  BM_PagesRandomGetSparse10(state, n, /*compacted=*/false);
}

void RegisterAll() {
  static const char* const kSchemeNames[] = {"EntityRows", "PageMasks", "PageMasksSimd",
                                             "DenseMaskBaseline"};
  for (int density : {1, 10, 50, 100}) {
    for (auto [inc, exc] : {std::pair{2, 0}, std::pair{4, 4}, std::pair{8, 8}}) {
      for (int scheme : {kEntityRows, kPageMasks, kPageMasksSimd, kDenseMaskBaseline}) {
        const std::string name = std::string("BM_Filter/") + kSchemeNames[scheme] + "/" +
                                 std::to_string(density) + "/" + std::to_string(inc) +
                                 "x" + std::to_string(exc);
        benchmark::RegisterBenchmark(name.c_str(),
                                     [scheme, density, inc = inc, exc = exc](
                                         benchmark::State& state) {
                                       BM_Filter(state, static_cast<Scheme>(scheme),
                                                 density, inc, exc);
                                     })
            ->Unit(benchmark::kMicrosecond);
      }
    }
  }
  for (int n : {10000, 100000, 1000000, 10000000}) {
    const std::string suffix = "/" + std::to_string(n);
    auto reg = [&](const char* base, void (*fn)(benchmark::State&, size_t)) {
      benchmark::RegisterBenchmark((std::string(base) + suffix).c_str(),
                                   [fn, n](benchmark::State& state) {
                                     fn(state, static_cast<size_t>(n));
                                   })
          ->Unit(benchmark::kMicrosecond);
    };
    if (n == 10000000) {
      // 10M: only the rows of the store's goals, each with its floor (a few GiB at
      // most: one world at a time, about 0.6 GiB).
      reg("BM_Pages/RandomGet", BM_PagesRandomGet);
      reg("BM_Pages/RandomGetCompacted", BM_PagesRandomGetCompacted);
      reg("BM_Pages/RandomGetNotCompacted", BM_PagesRandomGetNotCompacted);
      reg("BM_Pages/RandomGetManyCompacted", BM_PagesRandomGetManyCompacted);
      reg("BM_Pages/Compact", BM_PagesCompact);
      reg("BM_Pages/CompactFresh", BM_PagesCompactFresh);
      reg("BM_Pages/CreateFromBundle", BM_PagesCreateFromBundle);
      reg("BM_Pages/CreateFromBundleFresh", BM_PagesCreateFromBundleFresh);
      reg("BM_Floor/RandomGetFlat", BM_FloorRandomGet);
      reg("BM_Floor/CompactFlat", BM_FloorCompactFlat);
      reg("BM_Floor/CreateFlat", BM_FloorCreateFlat);
      continue;
    }
    reg("BM_Iterate/PageMasksSimd", BM_IteratePageMasksSimd);
    reg("BM_Iterate/DenseArrays", BM_IterateDenseArrays);
    reg("BM_Query/Sparse10", BM_QuerySparse10);
    reg("BM_Query/Exclude50", BM_QueryExclude50);
    reg("BM_Query/Sparse10Compacted", BM_QuerySparse10Compacted);
    reg("BM_Query/Exclude50Compacted", BM_QueryExclude50Compacted);
    reg("BM_Query/Sparse10CompactedEntity", BM_QuerySparse10CompactedEntity);
    reg("BM_Query/Exclude50CompactedEntity", BM_QueryExclude50CompactedEntity);
    reg("BM_Pages/Compact", BM_PagesCompact);
    reg("BM_Pages/CompactReserved", BM_PagesCompactReserved);
    reg("BM_Pages/CompactFresh", BM_PagesCompactFresh);
    reg("BM_Pages/AddRemove", BM_PagesAddRemove);
    reg("BM_Pages/AddRemoveBatch", BM_PagesAddRemoveBatch);
    reg("BM_Pages/CreateFromBundle", BM_PagesCreateFromBundle);
    reg("BM_Pages/CreateFromBundleFresh", BM_PagesCreateFromBundleFresh);
    reg("BM_Pages/RandomGet", BM_PagesRandomGet);
    reg("BM_Pages/RandomGetCompacted", BM_PagesRandomGetCompacted);
    reg("BM_Pages/RandomGetNotCompacted", BM_PagesRandomGetNotCompacted);
    reg("BM_Pages/RandomGetManyCompacted", BM_PagesRandomGetManyCompacted);
    reg("BM_Pages/RandomGetManyNotCompacted", BM_PagesRandomGetManyNotCompacted);
    reg("BM_Floor/Sparse10Flat", BM_FloorSparse10);
    reg("BM_Floor/Exclude50Flat", BM_FloorExclude50);
    reg("BM_Floor/Sparse10Packed", BM_FloorSparse10Packed);
    reg("BM_Floor/Exclude50Packed", BM_FloorExclude50Packed);
    reg("BM_Floor/RandomGetFlat", BM_FloorRandomGet);
    reg("BM_Floor/AddRemoveFlat", BM_FloorAddRemove);
    reg("BM_Floor/CompactFlat", BM_FloorCompactFlat);
    reg("BM_Floor/CreateFlat", BM_FloorCreateFlat);
  }
}

const bool kRegistered = (RegisterAll(), true);

}  // namespace
}  // namespace strata::filter_benchmark
