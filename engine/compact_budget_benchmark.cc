// The demo's frame at about 100k and 1M live sparks, with the page store compacting a
// budget of entity moves per frame: what compaction costs a frame and what it gives
// the walks back. The demo's default --compact_budget is chosen from it
// (engine/README.md says why).
//
//   bazel run -c opt //engine:compact_budget_benchmark
//
// Sparks live about a second (60 frames), so sparks_per_frame 1,700 keeps about 100k
// alive and 17,000 about 1M; each run is 180 frames on one thread, and the medians are
// over its frames (the first 60 are the pool filling up). Counters, per row:
//   frame_ms       median frame (every system, the compaction included)
//   compact_ms     median of the compact system alone
//   walk_ms        medians of the walks over every spark: move + fade + render
//   full_pages     share of sparks in pages whose 32 slots all hold a spark, at the end
//   sparks         sparks alive at the end
//   vs_off         frame_ms / the same size's frame with compaction off (budget 0,
//                  registered first: the floor of its size)
#include <algorithm>
#include <map>
#include <string>

#include "absl/strings/str_cat.h"
#include "benchmark/benchmark.h"
#include "engine/demo.h"

namespace strata {
namespace {

double MedianOf(const DemoReport& report, absl::string_view system) {
  for (const SystemTiming& t : report.systems) {
    if (t.name == system) return t.median_ms;
  }
  return 0;
}

std::map<int, double>& FrameWithoutCompaction() {
  static auto* frames = new std::map<int, double>;
  return *frames;
}

void BM_CompactBudget(benchmark::State& state, int sparks_per_frame, int budget) {
  DemoOptions options;
  options.level_path = "engine/levels/default.json";
  options.frames = 180;
  options.sparks_per_frame = sparks_per_frame;
  options.compact_budget = budget;
  options.threads = 1;
  options.progress_every = 0;
  DemoReport best;
  double best_frame = 0;
  for (auto _ : state) {
    absl::StatusOr<DemoReport> report = RunDemo(options, nullptr);
    if (!report.ok()) {
      state.SkipWithError(std::string(report.status().message()).c_str());
      return;
    }
    const double frame_ms = MedianOf(*report, "frame");
    state.SetIterationTime(frame_ms / 1e3);
    if (best_frame == 0 || frame_ms < best_frame) {
      best_frame = frame_ms;
      best = *std::move(report);
    }
  }
  state.counters["frame_ms"] = best_frame;
  state.counters["compact_ms"] = MedianOf(best, "compact");
  state.counters["walk_ms"] = MedianOf(best, "move") + MedianOf(best, "fade") + MedianOf(best, "render");
  state.counters["full_pages"] = best.spark_full_page_share_end;
  state.counters["sparks"] = static_cast<double>(best.sparks_alive_end);
  if (budget == 0) FrameWithoutCompaction()[sparks_per_frame] = best_frame;
  if (auto it = FrameWithoutCompaction().find(sparks_per_frame); it != FrameWithoutCompaction().end()) {
    state.counters["vs_off"] = best_frame / it->second;
  }
}

// Registered in this order: budget 0 (the floor) first for each size.
[[maybe_unused]] const bool kRegistered = [] {
  for (const int sparks_per_frame : {1700, 17000}) {
    for (const int budget : {0, 1024, 4096, 16384, 65536}) {
      benchmark::RegisterBenchmark(
          absl::StrCat("BM_CompactBudget/sparks_per_frame:", sparks_per_frame, "/budget:", budget).c_str(),
          [=](benchmark::State& state) { BM_CompactBudget(state, sparks_per_frame, budget); })
          ->UseManualTime()
          ->Iterations(sparks_per_frame > 10000 ? 1 : 3)
          ->Unit(benchmark::kMillisecond);
    }
  }
  return true;
}();

}  // namespace
}  // namespace strata
