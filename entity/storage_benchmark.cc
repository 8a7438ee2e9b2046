// The storage benchmark of "Entity Memory Contiguity", plus EntityManager throughput.
//
// BM_Storage/<Case>/<Layout>/<Work>: one pass over 4096 entities of 128 bytes, as the
// article: Case is Empty (no entity), Full (4096 active) or HalfFullWorstCase (every
// other slot active; the contiguous store just holds 2048); Layout is Contiguous
// (ContiguousStore, dense loop), Sparse (SparseStore::ForEachScan, the plain loop over
// every slot's active flag) or SparseWithIterationList (SparseStore::ForEach); Work is
// Piggy (reads all 128 bytes through a serial FNV-1a + xor-shift chain and writes 3
// bytes: ~770 cycles, see DoEntityWorkPiggy) or Slim (reads one byte). Counter
// cycles_per_pass: __rdtsc() read before and after each pass, summed, divided by the
// passes, as the article's "cycles (average)" (TSC ticks, i.e. cycles at the nominal
// clock).
//
// BM_StorageFloor/HalfFullWorstCase/EveryOtherSlot/Slim: diagnostic, not in the
// article: HalfFullWorstCase's entity addresses without any list or flag, see
// BM_HalfFullLayoutFloor. BM_StorageIrregular/HalfFullRandom/SparseWithIterationList/
// Slim: diagnostic, a random half of the slots active, so no list block is evenly
// spaced and ForEach walks every block by index (see BM_HalfFullRandom). The list rows
// report stepped_blocks: SparseStore::evenly_spaced_blocks(), the 16-entry blocks
// ForEach walks by pointer steps.
//
// BM_EntityManager/<Op>/<N>, N = 10k, 100k, 1M: CreateBatch into a fresh manager
// (includes growing its tables); DestroyBatch of N live entities in a manager in
// steady state (its free queue already sized by earlier rounds); CreateDestroy: both,
// in steady state. Counter ns_per_entity: steady_clock time of the measured calls
// only, divided by the entities.
//
//   bazel run -c opt //entity:storage_benchmark -- --benchmark_repetitions=5
//       --benchmark_report_aggregates_only=true   (one command line)
#include <chrono>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

#include "absl/types/span.h"
#include "benchmark/benchmark.h"
#include "entity/contiguous_store.h"
#include "entity/entity.h"
#include "entity/entity_manager.h"
#include "entity/sparse_store.h"
#include "testing/random.h"

namespace strata {
namespace {

constexpr uint32_t kMaxEntities = 4096;

// NOTE: 128 bytes, cache-line aligned: two cache lines per entity, as the article.
struct alignas(64) GameEntity {
  uint8_t data[128];
};
static_assert(sizeof(GameEntity) == 128);

inline uint64_t CycleCount() {
#if defined(__x86_64__) || defined(__i386__)
  return __rdtsc();
#else
  // Not cycles: a monotonic tick count, so the benchmark still builds elsewhere.
  return static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
#endif
}

// Piggy: reads every byte through an FNV-1a chain with an extra xor-shift per byte.
// Each step depends on the previous one (xor, 3-cycle multiply, shift, xor: ~6 core
// cycles a byte, ~770 an entity), so it cannot be vectorised or shortened, and the
// bytes it writes feed the next pass's reads, so no pass can be skipped or hoisted.
inline uint32_t DoEntityWorkPiggy(GameEntity& entity) {
  uint32_t hash = 2166136261u;
  for (int i = 0; i < 128; ++i) {
    hash = (hash ^ entity.data[i]) * 16777619u;
    hash ^= hash >> 13;
  }
  entity.data[0] = static_cast<uint8_t>(hash);
  entity.data[66] = static_cast<uint8_t>(hash >> 8);
  entity.data[119] = static_cast<uint8_t>(hash >> 16);
  return hash;
}

// Slim: the article's one-byte read.
inline uint32_t DoEntityWorkSlim(GameEntity& entity) { return entity.data[0] + 25u; }

GameEntity MakeEntity(uint32_t seed) {
  GameEntity e;
  for (int i = 0; i < 128; ++i) e.data[i] = static_cast<uint8_t>(seed * 131 + i * 7);
  return e;
}

enum class Case { kEmpty, kFull, kHalfFullWorstCase };
enum class Layout { kContiguous, kSparse, kSparseWithIterationList };
enum class Work { kPiggy, kSlim };

template <Work kWork>
inline uint32_t DoWork(GameEntity& e) {
  if constexpr (kWork == Work::kPiggy) {
    return DoEntityWorkPiggy(e);
  } else {
    return DoEntityWorkSlim(e);
  }
}

// Runs passes of `pass` (returns a checksum) and reports the mean TSC cycles per pass.
template <typename Pass>
void MeasurePasses(benchmark::State& state, size_t active, Pass&& pass) {
  uint64_t cycles = 0;
  for (auto _ : state) {
    const uint64_t start = CycleCount();
    uint32_t checksum = pass();
    const uint64_t end = CycleCount();
    benchmark::DoNotOptimize(checksum);
    cycles += end - start;
  }
  state.counters["cycles_per_pass"] =
      static_cast<double>(cycles) / static_cast<double>(state.iterations());
  state.counters["active"] = static_cast<double>(active);
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * active));
}

template <Work kWork>
void BM_Contiguous(benchmark::State& state, Case c) {
  ContiguousStore<GameEntity> store(kMaxEntities);
  const uint32_t count = c == Case::kEmpty ? 0
                         : c == Case::kFull ? kMaxEntities
                                            : kMaxEntities / 2;
  for (uint32_t i = 0; i < count; ++i) {
    if (!store.Add(MakeEntity(i)).ok()) state.SkipWithError("Add failed");
  }
  MeasurePasses(state, store.active_size(), [&] {
    uint32_t sum = 0;
    store.ForEach([&](GameEntity& e) { sum += DoWork<kWork>(e); });
    return sum;
  });
}

// Fills every slot of an empty `store` in order (slot i holds MakeEntity(i)) and
// returns the handles; on a failed Add, skips the benchmark with an error and returns
// the handles so far.
std::vector<StoreHandle> FillSparse(SparseStore<GameEntity>& store,
                                    benchmark::State& state) {
  std::vector<StoreHandle> handles;
  for (uint32_t i = 0; i < kMaxEntities; ++i) {
    auto h = store.Add(MakeEntity(i));
    if (!h.ok()) {
      state.SkipWithError("Add failed");
      break;
    }
    handles.push_back(*h);
  }
  return handles;
}

template <Work kWork, bool kIterationList>
void BM_Sparse(benchmark::State& state, Case c) {
  SparseStore<GameEntity> store(kMaxEntities);
  if (c != Case::kEmpty) {
    const std::vector<StoreHandle> handles = FillSparse(store, state);
    if (c == Case::kHalfFullWorstCase) {
      for (uint32_t i = 1; i < handles.size(); i += 2) {
        if (!store.Remove(handles[i]).ok()) state.SkipWithError("Remove failed");
      }
      // The removals reordered the list; restore address order once, as a game would
      // after a load (the article's list is rebuilt when the batch changes).
      store.SortIterationList();
    }
  }
  if constexpr (kIterationList) {
    state.counters["stepped_blocks"] = static_cast<double>(store.evenly_spaced_blocks());
  }
  MeasurePasses(state, store.active_size(), [&] {
    uint32_t sum = 0;
    if constexpr (kIterationList) {
      store.ForEach([&](GameEntity& e) { sum += DoWork<kWork>(e); });
    } else {
      store.ForEachScan([&](GameEntity& e) { sum += DoWork<kWork>(e); });
    }
    return sum;
  });
}

// Not one of the article's rows: the address pattern of HalfFullWorstCase's active
// entries (every other 128-byte slot of 4096) walked by the contiguous store's loop
// shape, with no iteration list and no active flags. It isolates what the sparse
// layout itself costs over Contiguous (2048 entities spread over 512 KiB instead of
// packed into 256 KiB), the floor under SparseWithIterationList in that case.
template <Work kWork>
void BM_HalfFullLayoutFloor(benchmark::State& state) {
  std::vector<GameEntity> slots(kMaxEntities);
  for (uint32_t i = 0; i < kMaxEntities; ++i) slots[i] = MakeEntity(i);
  GameEntity* const data = slots.data();
  MeasurePasses(state, kMaxEntities / 2, [&] {
    uint32_t sum = 0;
    for (uint32_t i = 0; i < kMaxEntities; i += 2) sum += DoWork<kWork>(data[i]);
    return sum;
  });
}

// Not one of the article's rows: 2048 of the 4096 slots active, chosen at random (fixed
// seed) and listed in address order. Its list blocks are never evenly spaced, so this
// is the iteration list's index walk on its own; compare with HalfFullWorstCase /
// Contiguous (also 2048 entries) and with HalfFullWorstCase / SparseWithIterationList
// (the same count, every block stepped).
template <Work kWork>
void BM_HalfFullRandom(benchmark::State& state) {
  SparseStore<GameEntity> store(kMaxEntities);
  std::vector<StoreHandle> handles = FillSparse(store, state);
  testing::Random rng(/*seed=*/3);
  rng.Shuffle(absl::MakeSpan(handles));
  for (uint32_t i = 0; i < handles.size() / 2; ++i) {
    if (!store.Remove(handles[i]).ok()) state.SkipWithError("Remove failed");
  }
  store.SortIterationList();
  state.counters["stepped_blocks"] = static_cast<double>(store.evenly_spaced_blocks());
  MeasurePasses(state, store.active_size(), [&] {
    uint32_t sum = 0;
    store.ForEach([&](GameEntity& e) { sum += DoWork<kWork>(e); });
    return sum;
  });
}

void RegisterStorageBenchmarks() {
  const std::pair<Case, const char*> cases[] = {
      {Case::kEmpty, "Empty"}, {Case::kFull, "Full"},
      {Case::kHalfFullWorstCase, "HalfFullWorstCase"}};
  for (const auto& [c, case_name] : cases) {
    const std::string prefix = std::string("BM_Storage/") + case_name + "/";
    benchmark::RegisterBenchmark((prefix + "Contiguous/Piggy").c_str(),
                                 BM_Contiguous<Work::kPiggy>, c);
    benchmark::RegisterBenchmark((prefix + "Sparse/Piggy").c_str(),
                                 BM_Sparse<Work::kPiggy, false>, c);
    benchmark::RegisterBenchmark((prefix + "SparseWithIterationList/Piggy").c_str(),
                                 BM_Sparse<Work::kPiggy, true>, c);
    benchmark::RegisterBenchmark((prefix + "Contiguous/Slim").c_str(),
                                 BM_Contiguous<Work::kSlim>, c);
    benchmark::RegisterBenchmark((prefix + "Sparse/Slim").c_str(),
                                 BM_Sparse<Work::kSlim, false>, c);
    benchmark::RegisterBenchmark((prefix + "SparseWithIterationList/Slim").c_str(),
                                 BM_Sparse<Work::kSlim, true>, c);
  }
  benchmark::RegisterBenchmark("BM_StorageFloor/HalfFullWorstCase/EveryOtherSlot/Slim",
                               BM_HalfFullLayoutFloor<Work::kSlim>);
  benchmark::RegisterBenchmark(
      "BM_StorageIrregular/HalfFullRandom/SparseWithIterationList/Slim",
      BM_HalfFullRandom<Work::kSlim>);
}

// ---- EntityManager throughput ----

using Clock = std::chrono::steady_clock;

void ReportPerEntity(benchmark::State& state, Clock::duration measured, size_t n) {
  const double ns = std::chrono::duration<double, std::nano>(measured).count();
  state.counters["ns_per_entity"] =
      ns / (static_cast<double>(state.iterations()) * static_cast<double>(n));
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * n));
}

void BM_EntityManagerCreateBatch(benchmark::State& state) {
  const auto n = static_cast<size_t>(state.range(0));
  std::vector<Entity> out(n);
  Clock::duration measured{};
  for (auto _ : state) {
    state.PauseTiming();
    auto manager = std::make_unique<EntityManager>();
    state.ResumeTiming();
    const auto start = Clock::now();
    manager->CreateBatch(absl::MakeSpan(out));
    measured += Clock::now() - start;
    benchmark::DoNotOptimize(out.data());
    state.PauseTiming();
    manager.reset();
    state.ResumeTiming();
  }
  ReportPerEntity(state, measured, n);
}

void BM_EntityManagerDestroyBatch(benchmark::State& state) {
  const auto n = static_cast<size_t>(state.range(0));
  std::vector<Entity> batch(n);
  EntityManager manager;
  // One untimed round sizes the free queue: the steady state of a running game.
  manager.CreateBatch(absl::MakeSpan(batch));
  if (!manager.DestroyBatch(batch).ok()) state.SkipWithError("DestroyBatch failed");
  Clock::duration measured{};
  for (auto _ : state) {
    state.PauseTiming();
    manager.CreateBatch(absl::MakeSpan(batch));
    state.ResumeTiming();
    const auto start = Clock::now();
    const bool ok = manager.DestroyBatch(batch).ok();
    measured += Clock::now() - start;
    if (!ok) state.SkipWithError("DestroyBatch failed");
  }
  ReportPerEntity(state, measured, n);
}

void BM_EntityManagerCreateDestroy(benchmark::State& state) {
  const auto n = static_cast<size_t>(state.range(0));
  std::vector<Entity> batch(n);
  EntityManager manager;
  manager.CreateBatch(absl::MakeSpan(batch));
  if (!manager.DestroyBatch(batch).ok()) state.SkipWithError("DestroyBatch failed");
  Clock::duration measured{};
  for (auto _ : state) {
    const auto start = Clock::now();
    manager.CreateBatch(absl::MakeSpan(batch));
    const bool ok = manager.DestroyBatch(batch).ok();
    measured += Clock::now() - start;
    if (!ok) state.SkipWithError("DestroyBatch failed");
  }
  ReportPerEntity(state, measured, n);
}

void RegisterEntityManagerBenchmarks() {
  for (const auto& [name, fn] :
       {std::pair{"BM_EntityManager/CreateBatch", &BM_EntityManagerCreateBatch},
        std::pair{"BM_EntityManager/DestroyBatch", &BM_EntityManagerDestroyBatch},
        std::pair{"BM_EntityManager/CreateDestroy", &BM_EntityManagerCreateDestroy}}) {
    benchmark::RegisterBenchmark(name, fn)->Arg(10000)->Arg(100000)->Arg(1000000);
  }
}

const bool registered = [] {
  RegisterStorageBenchmarks();
  RegisterEntityManagerBenchmarks();
  return true;
}();

}  // namespace
}  // namespace strata
