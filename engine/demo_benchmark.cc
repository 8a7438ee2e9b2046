// The demo's frame: the hand-written sequence of calls against the same frame as a
// Schedule, on one thread and on 2..N threads (N: the machine's cores), at the ordinary
// size and at --scale=8 (8x the sparks, and a pool of 800k smoke puffs whose systems
// touch none of the sparks' components).
//
//   bazel run -c opt //engine:demo_benchmark
//
// Each case runs the demo (120 frames) per iteration; its time is the best of the
// iterations' median frame (ms). Ratios are to cases measured earlier in the same
// process (each floor is registered before the cases that use it):
//   vs_hand      schedule on one thread / the hand-written frame (goal: <= 1.05)
//   serial_ms    the schedule on one thread: the floor of the thread rows
//   bound        that run's serial work / its critical path (the longest chain of
//                dependent systems and sync points, from the schedule and each
//                system's time): the speedup overlapping systems can give
//   speedup      serial_ms / this row's frame
//   of_bound     speedup / min(threads, bound) (goal: >= 0.8)
#include <algorithm>
#include <map>
#include <string>
#include <thread>

#include "absl/strings/str_cat.h"
#include "benchmark/benchmark.h"
#include "engine/demo.h"

namespace strata {
namespace {

struct Measured {
  double frame_ms = 0;
  double bound = 0;
};
std::map<std::string, Measured>& Results() {
  static auto* results = new std::map<std::string, Measured>;
  return *results;
}

int Cores() { return std::max(1, static_cast<int>(std::thread::hardware_concurrency())); }

void BM_DemoFrame(benchmark::State& state, bool hand, int scale, int threads) {
  DemoOptions options;
  options.level_path = "engine/levels/default.json";
  options.frames = 120;
  options.sparks_per_frame = 2000;
  options.scale = scale;
  options.threads = threads;
  options.hand_written_frame = hand;
  options.progress_every = 0;
  Measured m;
  for (auto _ : state) {
    absl::StatusOr<DemoReport> report = RunDemo(options, nullptr);
    if (!report.ok()) {
      state.SkipWithError(std::string(report.status().message()).c_str());
      return;
    }
    const double frame_ms = report->systems.back().median_ms;
    if (m.frame_ms == 0 || frame_ms < m.frame_ms) {
      m.frame_ms = frame_ms;
      m.bound = report->critical_path_ms > 0 ? report->serial_work_ms / report->critical_path_ms : 0;
    }
    state.SetIterationTime(frame_ms / 1e3);
  }
  state.counters["frame_ms"] = m.frame_ms;
  state.counters["threads"] = threads;
  state.counters["cores"] = Cores();
  Results()[absl::StrCat(hand ? "hand" : "schedule", "/", scale, "/", threads)] = m;
  if (!hand && threads == 1) {
    state.counters["bound"] = m.bound;
    if (auto it = Results().find(absl::StrCat("hand/", scale, "/1")); it != Results().end()) {
      state.counters["vs_hand"] = m.frame_ms / it->second.frame_ms;
    }
  }
  if (!hand && threads > 1) {
    if (auto it = Results().find(absl::StrCat("schedule/", scale, "/1")); it != Results().end()) {
      const double speedup = it->second.frame_ms / m.frame_ms;
      state.counters["serial_ms"] = it->second.frame_ms;
      state.counters["speedup"] = speedup;
      state.counters["bound"] = it->second.bound;
      state.counters["of_bound"] = speedup / std::min<double>(threads, it->second.bound);
    }
  }
}

// Registered in this order: each ratio's floor runs first.
[[maybe_unused]] const bool kRegistered = [] {
  for (const int scale : {1, 8}) {
    const int iterations = scale == 1 ? 3 : 2;
    auto add = [&](bool hand, int threads) {
      benchmark::RegisterBenchmark(
          absl::StrCat("BM_DemoFrame/", hand ? "hand" : "schedule", "/scale:", scale, "/threads:", threads)
              .c_str(),
          [=](benchmark::State& state) { BM_DemoFrame(state, hand, scale, threads); })
          ->UseManualTime()
          ->Iterations(iterations)
          ->Unit(benchmark::kMillisecond);
    };
    add(true, 1);
    add(false, 1);
    for (int threads = 2; threads <= std::max(2, Cores()); ++threads) add(false, threads);
  }
  return true;
}();

}  // namespace
}  // namespace strata
