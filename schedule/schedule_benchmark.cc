// Scheduler overhead: a frame of 64 systems that do nothing, so the time is the
// schedule's own (run conditions, access scopes, timing, task dispatch, the tick).
// Cases: independent systems (one segment, every system a root), a chain (each system
// writes what the previous one wrote), and the floor: 64 std::function calls.
//
//   bazel run -c opt //schedule:schedule_benchmark
#include <functional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "benchmark/benchmark.h"
#include "entity/entity_manager.h"
#include "iteration/entity_pages.h"
#include "schedule/schedule.h"

namespace strata {
namespace {

constexpr int kSystems = 64;

struct Value {
  int v;
};

void BM_EmptySystems(benchmark::State& state, bool chain) {
  EntityManager manager;
  EntityPages pages(manager);
  const Component<Value> value = *pages.RegisterComponent<Value>("value");
  Schedule schedule(manager, pages, {.threads = static_cast<int>(state.range(0))});
  for (int i = 0; i < kSystems; ++i) {
    System s(absl::StrCat("s", i), [](SystemContext& ctx) { benchmark::DoNotOptimize(&ctx); });
    if (chain) s.Writes(value);
    schedule.Add(std::move(s));
  }
  if (!schedule.Build().ok()) state.SkipWithError("build failed");
  for (auto _ : state) {
    if (!schedule.Run().ok()) state.SkipWithError("run failed");
  }
  state.counters["ns_per_system"] = benchmark::Counter(
      static_cast<double>(state.iterations()) * kSystems,
      benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
  state.counters["threads"] = static_cast<double>(schedule.threads());
}

void BM_Independent(benchmark::State& state) { BM_EmptySystems(state, false); }
void BM_Chain(benchmark::State& state) { BM_EmptySystems(state, true); }
BENCHMARK(BM_Independent)->ArgName("threads")->Arg(1)->Arg(2)->Arg(0)->UseRealTime();
BENCHMARK(BM_Chain)->ArgName("threads")->Arg(1)->Arg(2)->Arg(0)->UseRealTime();

// The floor: the 64 calls alone.
void BM_Floor_PlainCalls(benchmark::State& state) {
  std::vector<std::function<void(int&)>> calls;
  for (int i = 0; i < kSystems; ++i) calls.push_back([](int& x) { benchmark::DoNotOptimize(&x); });
  int x = 0;
  for (auto _ : state) {
    for (auto& call : calls) call(x);
  }
  state.counters["ns_per_system"] = benchmark::Counter(
      static_cast<double>(state.iterations()) * kSystems,
      benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_Floor_PlainCalls);

}  // namespace
}  // namespace strata
