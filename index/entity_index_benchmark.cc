// The synthetic test of "Rebuilding the Entity Index", new index vs legacy baseline.
//
// Workload (deterministic, one thread), for N = 10k, 20k, ..., 10.24m entities:
//  * 75 component compositions of 1 to 11 components (composition k has 1 + k % 11),
//    drawn once from a fixed seed over 8 managers and 20 component names. Most start
//    with "Transform"; render components (Fog, Vignette, Bloom, ...) are placed in one of
//    two "render data" managers, so equal names in different managers give different
//    prototypes, as in the article's entity_3.
//  * Each step creates one entity (handles from a generational FIFO pool, like
//    EntityManager's), picks a composition (uniformly, by a hash of the handle),
//    registers its components one by
//    one, then looks each one up by name.
//  * After each step a random live entity is deleted with probability 1/2, and always
//    when more than kMaxLive = 65536 are alive: the live population grows to ~N/2, then
//    holds at 65536 (from N ~ 131k on) while entities keep being created and deleted.
//    Before it is removed, each of the victim's components is looked up by name (as
//    its destroy handlers would), so lookups also hit old entities at random.
//  * Every 16384 steps CollectGarbage() runs.
// N is the total number of entities created, as in the article's tables.
//
// Counters: us_per_entity (CPU time of the benchmark thread in the workload loop / N;
// the test is single-threaded, so on a quiet machine it equals wall time, and on the
// shared 2-core build machine it is far less noisy), wall_us_per_entity (wall time / N),
// run_s (CPU seconds of one run, the article's "Test run time"),
// memory_mb (peak bytes the index held during the run, from the global counting
// allocator, //testing:global_allocation_counter: every allocation the index makes, with
// malloc's usable block size; the workload's own arrays are allocated before the
// baseline), prototypes and registry_kb (the prototype registry after the run; the
// legacy index has one lookup array per entity and no registry).
//
// Short mode for CI: STRATA_BENCH_SHORT=1 registers only N <= 160k.
// STRATA_BENCH_FLOOR=1 also registers BM_EntityIndex/Floor/<N>: the same loop on a
// no-op index (registers nothing, finds nothing), the cost of the harness alone (handle
// pool, composition choice, live list, random victim), a floor under New's figure.
#include <time.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "base/id_string.h"
#include "benchmark/benchmark.h"
#include "entity/entity.h"
#include "index/entity_index.h"
#include "index/legacy_entity_index.h"
#include "index/testing/render_data_manager.h"
#include "testing/counting_allocator.h"

namespace strata {
namespace {

using ::strata::testing::GlobalAllocationCounter;
using ::strata::testing::RenderDataManager;

constexpr size_t kMaxLive = 65536;
constexpr uint32_t kMinFreeHandles = 1024;
constexpr int kCompositions = 75;
constexpr uint64_t kGcInterval = 16384;

// SplitMix64: a tiny deterministic generator, cheap enough not to dominate the step.
class SplitMix {
 public:
  explicit SplitMix(uint64_t seed) : state_(seed) {}
  uint64_t Next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  // Below: uniform in [0, n) (Lemire's multiply-shift; bias negligible here).
  uint32_t Below(uint32_t n) {
    return static_cast<uint32_t>(((Next() >> 32) * uint64_t{n}) >> 32);
  }

 private:
  uint64_t state_;
};

double ThreadCpuSeconds() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

struct Component {
  ComponentManager* manager;
  IdString32 name;
};

// The 8 managers and the 75 compositions.
class World {
 public:
  World() {
    const char* kNames[] = {"Transform", "Fog",      "Vignette", "Bloom",   "Sky",
                            "Decal",     "Mesh",     "Shadow",   "Light",   "Body",
                            "Collider",  "Joint",    "Sound",    "Music",   "Script",
                            "Brain",     "Trigger",  "Camera",   "Particles", "Water"};
    // Home manager of each name; -1: either render data manager.
    const int kHome[] = {0, -1, -1, -1, -1, -1, 3, 3, 4, 5, 5, 5, 6, 6, 7, 7, 7, 4, -1, 3};
    SplitMix rng(75);
    for (int k = 0; k < kCompositions; ++k) {
      std::vector<Component> composition;
      const int size = 1 + k % 11;
      bool used[20] = {};
      if (rng.Below(10) != 0) {  // 90% start with the transform
        composition.push_back({&managers_[0], IdString32(kNames[0])});
        used[0] = true;
      }
      while (static_cast<int>(composition.size()) < size) {
        const uint32_t n = rng.Below(20);
        if (used[n]) continue;
        used[n] = true;
        const int home = kHome[n] >= 0 ? kHome[n] : 1 + static_cast<int>(rng.Below(2));
        composition.push_back({&managers_[home], IdString32(kNames[n])});
      }
      compositions_.push_back(std::move(composition));
    }
  }
  const std::vector<Component>& composition(uint32_t k) const { return compositions_[k]; }

 private:
  RenderDataManager managers_[8] = {
      RenderDataManager("transform"), RenderDataManager("render_data_1"),
      RenderDataManager("render_data_2"), RenderDataManager("mesh"),
      RenderDataManager("light"), RenderDataManager("physics"),
      RenderDataManager("audio"), RenderDataManager("script")};
  std::vector<std::vector<Component>> compositions_;
};

const World& TheWorld() {
  static const World* world = new World();
  return *world;
}

// Generational handles with delayed FIFO reuse, like EntityManager, but with all memory
// reserved up front so the allocation counter sees only the index. The free ring holds
// the next handle of each freed slot, so neither Create nor Destroy reads a per-slot
// table (the harness should cost as little as possible next to the index).
class HandlePool {
 public:
  HandlePool() : ring_(kRingSize) {}
  Entity Create() {
    if (free_count_ > kMinFreeHandles) {
      const Entity next = ring_[head_];
      head_ = (head_ + 1) & (kRingSize - 1);
      --free_count_;
      return next;
    }
    return Entity(next_index_++, 0);
  }
  void Destroy(Entity e) {
    ring_[(head_ + free_count_) & (kRingSize - 1)] = Entity(e.index(), e.generation() + 1);
    ++free_count_;
  }

 private:
  // NOTE: a power of two above kMaxLive + kMinFreeHandles + 1, the most slots ever free.
  static constexpr size_t kRingSize = 131072;
  static_assert(kRingSize > kMaxLive + kMinFreeHandles + 1);
  std::vector<Entity> ring_;
  size_t head_ = 0;
  size_t free_count_ = 0;
  uint32_t next_index_ = 0;
};

// CompositionOf: the composition an entity was created with, a hash of its handle (so
// the harness's live list holds bare handles: 8 bytes per live entity, not 16).
uint32_t CompositionOf(Entity e) {
  uint64_t z = e.bits() * 0x9e3779b97f4a7c15ull;
  z ^= z >> 29;
  z *= 0xbf58476d1ce4e5b9ull;
  return static_cast<uint32_t>(((z >> 32) * kCompositions) >> 32);
}

// NoOpIndex: the interface the loop uses, doing nothing (the Floor case).
class NoOpIndex {
 public:
  absl::Status AddInstance(Entity, ComponentManager*, IdString32) {
    return absl::OkStatus();
  }
  ComponentManager* FindComponentManager(Entity, IdString32) const { return nullptr; }
  bool RemoveEntity(Entity) { return true; }
  size_t CollectGarbage() { return 0; }
  size_t num_prototypes() const { return 0; }
};

template <typename Index>
void BM_EntityIndex(benchmark::State& state) {
  const uint64_t n = static_cast<uint64_t>(state.range(0));
  const World& world = TheWorld();
  int64_t peak_bytes = 0;
  size_t prototypes = 0;
  size_t registry_bytes = 0;
  uint64_t found = 0;
  uint64_t expected = 0;
  uint64_t registry_probes = 0;
  double seconds = 0;
  double wall_seconds = 0;
  for (auto _ : state) {
    state.PauseTiming();
    HandlePool pool;
    std::vector<Entity> live;
    live.reserve(kMaxLive + 1);
    SplitMix rng(2017);
    // The next victim's position, as a fraction of the live list (drawn one deletion
    // ahead so that its entry can be prefetched, see below).
    uint32_t victim_draw = static_cast<uint32_t>(rng.Next() >> 32);
    const int64_t baseline = GlobalAllocationCounter().live_bytes();
    GlobalAllocationCounter().ResetPeak();
    {
      Index index;
      state.ResumeTiming();
      const auto start = std::chrono::steady_clock::now();
      const double cpu_start = ThreadCpuSeconds();
      for (uint64_t step = 0; step < n; ++step) {
        const Entity e = pool.Create();
        const std::vector<Component>& composition = world.composition(CompositionOf(e));
        for (const Component& c : composition) {
          if (!index.AddInstance(e, c.manager, c.name).ok()) {
            state.SkipWithError("AddInstance failed");
            return;
          }
        }
        for (const Component& c : composition) {
          found += index.FindComponentManager(e, c.name) == c.manager;
        }
        expected += composition.size();
        live.push_back(e);
        while ((rng.Next() & 1) != 0 || live.size() > kMaxLive) {
          const uint32_t victim = static_cast<uint32_t>(
              (uint64_t{victim_draw} * live.size()) >> 32);  // uniform in [0, size)
          victim_draw = static_cast<uint32_t>(rng.Next() >> 32);
          // A last look at the victim's components (its destroy handlers would).
          const Entity dead = live[victim];
          const std::vector<Component>& victim_composition =
              world.composition(CompositionOf(dead));
          for (const Component& c : victim_composition) {
            found += index.FindComponentManager(dead, c.name) == c.manager;
          }
          expected += victim_composition.size();
          index.RemoveEntity(dead);
          pool.Destroy(dead);
          live[victim] = live.back();
          live.pop_back();
          // The live list is 512 KiB of harness state read at a random position once
          // per deletion; fetching the next victim's entry now keeps that miss out of
          // the index's time (perf: 20 % of New's samples at 640k stalled on it). The
          // list will have one more entity by then, hence size + 1.
          __builtin_prefetch(
              live.data() + ((uint64_t{victim_draw} * (live.size() + 1)) >> 32));
          if (live.size() <= kMaxLive) break;
        }
        if ((step + 1) % kGcInterval == 0) index.CollectGarbage();
      }
      seconds += ThreadCpuSeconds() - cpu_start;
      wall_seconds +=
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      state.PauseTiming();
      index.CollectGarbage();
      prototypes = index.num_prototypes();
      if constexpr (std::is_same_v<Index, EntityIndex>) {
        registry_bytes = index.RegistryMemoryUsage();
        registry_probes += index.registry_probes();
      }
    }
    peak_bytes = std::max(peak_bytes, GlobalAllocationCounter().peak_bytes() - baseline);
    state.ResumeTiming();
  }
  if (found != expected && !std::is_same_v<Index, NoOpIndex>) {
    state.SkipWithError(absl::StrCat("lookups found ", found, " of ", expected).c_str());
    return;
  }
  const double entities = static_cast<double>(n) * static_cast<double>(state.iterations());
  // Time of the workload loop only (setup and teardown excluded).
  state.counters["us_per_entity"] = seconds * 1e6 / entities;
  state.counters["wall_us_per_entity"] = wall_seconds * 1e6 / entities;
  state.counters["run_s"] = seconds / static_cast<double>(state.iterations());
  state.counters["memory_mb"] = static_cast<double>(peak_bytes) / (1024.0 * 1024.0);
  state.counters["prototypes"] = static_cast<double>(prototypes);
  state.counters["registry_kb"] = static_cast<double>(registry_bytes) / 1024.0;
  if constexpr (std::is_same_v<Index, EntityIndex>) {
    // Registrations that missed the transition cache, per entity created.
    state.counters["probes_per_entity"] = static_cast<double>(registry_probes) / entities;
  }
  state.SetItemsProcessed(static_cast<int64_t>(entities));
}

const bool kRegistered = [] {
  const char* short_mode = std::getenv("STRATA_BENCH_SHORT");
  const int64_t max_n =
      short_mode != nullptr && std::string(short_mode) == "1" ? 160000 : 10240000;
  for (int64_t n = 10000; n <= max_n; n *= 2) {
    benchmark::RegisterBenchmark("BM_EntityIndex/New", BM_EntityIndex<EntityIndex>)
        ->Arg(n)
        ->UseRealTime()
        ->Unit(benchmark::kMillisecond)
        ->MinTime(0.2);
  }
  for (int64_t n = 10000; n <= max_n; n *= 2) {
    benchmark::RegisterBenchmark("BM_EntityIndex/Legacy", BM_EntityIndex<LegacyEntityIndex>)
        ->Arg(n)
        ->UseRealTime()
        ->Unit(benchmark::kMillisecond)
        ->MinTime(0.2);
  }
  const char* floor = std::getenv("STRATA_BENCH_FLOOR");
  if (floor != nullptr && std::string(floor) == "1") {
    for (int64_t n = 10000; n <= max_n; n *= 2) {
      benchmark::RegisterBenchmark("BM_EntityIndex/Floor", BM_EntityIndex<NoOpIndex>)
          ->Arg(n)
          ->UseRealTime()
          ->Unit(benchmark::kMillisecond)
          ->MinTime(0.2);
    }
  }
  return true;
}();

}  // namespace
}  // namespace strata
