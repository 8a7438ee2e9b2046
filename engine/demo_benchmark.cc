// The demo's frame: the hand-written sequence of calls against the same frame as a
// Schedule, on one thread and on several, at the ordinary size and at --scale.
//
//   bazel run -c opt //engine:demo_benchmark
//
// Each case runs the demo (120 frames) and reports the median frame time (ms) as its
// time. Ratios are to cases measured earlier in the same process:
//   vs_hand      schedule / the hand-written frame, one thread (goal: <= 1.05)
//   speedup      the schedule on one thread / on `threads`
//   bound        the one-thread schedule's serial work / its critical path (the
//                speedup the frame's dependencies allow), and of_bound = speedup /
//                min(threads, bound) (goal: >= 0.8)
#include <algorithm>
#include <map>
#include <string>
#include <utility>

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
    m.frame_ms = report->systems.back().median_ms;
    m.bound = report->critical_path_ms > 0 ? report->serial_work_ms / report->critical_path_ms : 0;
    state.SetIterationTime(m.frame_ms / 1e3);
  }
  state.counters["frame_ms"] = m.frame_ms;
  state.counters["threads"] = threads;
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
      state.counters["speedup"] = speedup;
      state.counters["bound"] = it->second.bound;
      state.counters["of_bound"] = speedup / std::min<double>(threads, it->second.bound);
    }
  }
}

// Registered in this order: each ratio's floor runs first.
BENCHMARK_CAPTURE(BM_DemoFrame, hand/scale:1/threads:1, true, 1, 1)->UseManualTime()->Iterations(3);
BENCHMARK_CAPTURE(BM_DemoFrame, schedule/scale:1/threads:1, false, 1, 1)->UseManualTime()->Iterations(3);
BENCHMARK_CAPTURE(BM_DemoFrame, schedule/scale:1/threads:2, false, 1, 2)->UseManualTime()->Iterations(3);
BENCHMARK_CAPTURE(BM_DemoFrame, hand/scale:8/threads:1, true, 8, 1)->UseManualTime()->Iterations(2);
BENCHMARK_CAPTURE(BM_DemoFrame, schedule/scale:8/threads:1, false, 8, 1)->UseManualTime()->Iterations(2);
BENCHMARK_CAPTURE(BM_DemoFrame, schedule/scale:8/threads:2, false, 8, 2)->UseManualTime()->Iterations(2);

}  // namespace
}  // namespace strata
