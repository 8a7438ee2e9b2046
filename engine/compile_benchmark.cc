// Compile speed and memory of the entity compiler on generated levels:
//
//   BM_Compile/transforms/1000000   1M root entities, one transform each (~66 MB)
//   BM_Compile/default_mix/64       engine/levels/default.json's entities 64 times over
//   BM_CompileThreads/<level>/<N>/<threads>
//                                   the same on 1 and 2 threads (Options::threads),
//                                   wall-clock time (the other rows measure the calling
//                                   thread's CPU time, which a parallel compile hides)
//   BM_CompileDom/...               the same through the whole-document DOM path (the
//                                   compiler's error path, and what it did before)
//   BM_Floor/memcpy/...             copying the text once: the floor the others are
//                                   reported against
//   BM_Compile/level_file           the level JSON at $STRATA_BENCHMARK_LEVEL_JSON, a
//                                   row only when that is set: tools/process_benchmark
//                                   runs it beside the compile tool's process on the
//                                   same file
//   BM_CompilePeakMemory/.../<threads>
//                                   one compile in a forked child: peak RSS growth
//                                   (VmHWM after /proc/self/clear_refs); the heap's
//                                   peak is checked by compile_memory_test
//
// Counters: MB/s of JSON (10^6 bytes), ns per entity, and for the memory rows the peak
// growth over the input size and over the budget 3 x input + output.
//
//   bazel build -c opt //engine:compile_benchmark
//   tools/strata-bench bazel-bin/engine/compile_benchmark --benchmark_repetitions=5
//   (from the workspace root, which holds engine/levels/default.json)
#include <malloc.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "benchmark/benchmark.h"
#include "component/registry.h"
#include "engine/sample_components.h"
#include "resource/entity_compiler.h"
#include "resource/testing/level_generator.h"

namespace strata {
namespace {

const EntityCompiler& Compiler() {
  static const EntityCompiler* compiler = [] {
    auto* c = new EntityCompiler;
    if (!SampleRegistry().RegisterCompilers(*c).ok()) std::abort();
    return c;
  }();
  return *compiler;
}

// Level(kind, n): the generated level, cached across benchmarks.
const std::string& Level(int kind, int64_t n) {
  static auto* cache = new std::map<std::pair<int, int64_t>, std::string>;
  std::string& level = (*cache)[{kind, n}];
  if (!level.empty()) return level;
  if (kind == 0) {
    level = testing::TransformLevel(static_cast<size_t>(n));
  } else {
    std::ifstream in("engine/levels/default.json");
    const std::string text((std::istreambuf_iterator<char>(in)), {});
    absl::StatusOr<std::string> repeated = testing::RepeatedLevel(text, static_cast<size_t>(n));
    if (text.empty() || !repeated.ok()) {
      std::fprintf(stderr, "run from the workspace root: engine/levels/default.json not found\n");
      std::abort();
    }
    level = *std::move(repeated);
  }
  return level;
}

// The same level with the root key escaped: the streaming walk leaves that to the DOM.
std::string DomOnly(const std::string& level) {
  return absl::StrReplaceAll(level.substr(0, 64), {{"\"entities\"", "\"\\u0065ntities\""}}) +
         level.substr(64);
}

void SetCounters(benchmark::State& state, size_t bytes, uint32_t entities) {
  const double iterations = static_cast<double>(state.iterations());
  state.counters["MB/s"] = benchmark::Counter(bytes * iterations / 1e6, benchmark::Counter::kIsRate);
  state.counters["ns/entity"] = benchmark::Counter(
      entities * iterations, benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
  state.counters["entities"] = entities;
  state.counters["input_MB"] = bytes / 1e6;
  state.SetItemsProcessed(static_cast<int64_t>(entities) * state.iterations());
}

void RunCompile(benchmark::State& state, const std::string& text,
                const EntityCompiler::Options& options = {}) {
  uint32_t entities = 0;
  for (auto _ : state) {
    absl::StatusOr<EntityCompiler::Result> result = Compiler().Compile(text, options);
    if (!result.ok()) {
      state.SkipWithError(std::string(result.status().message()).c_str());
      return;
    }
    entities = result->num_entities;
    benchmark::DoNotOptimize(result->blob.data());
  }
  SetCounters(state, text.size(), entities);
}

void BM_Compile(benchmark::State& state, int kind) { RunCompile(state, Level(kind, state.range(0))); }

// range(1): the thread count.
void BM_CompileThreads(benchmark::State& state, int kind) {
  EntityCompiler::Options options;
  options.threads = static_cast<int>(state.range(1));
  RunCompile(state, Level(kind, state.range(0)), options);
  state.counters["threads"] = static_cast<double>(options.threads);
}

void BM_CompileDom(benchmark::State& state, int kind) {
  RunCompile(state, DomOnly(Level(kind, state.range(0))));
}

void BM_Floor(benchmark::State& state, int kind) {
  const std::string& text = Level(kind, state.range(0));
  std::string copy(text.size(), ' ');
  for (auto _ : state) {
    std::memcpy(copy.data(), text.data(), text.size());
    benchmark::DoNotOptimize(copy.data());
    benchmark::ClobberMemory();
  }
  state.counters["MB/s"] =
      benchmark::Counter(text.size() * static_cast<double>(state.iterations()) / 1e6,
                         benchmark::Counter::kIsRate);
}

// ProcKb: a "Name:   123 kB" line of /proc/self/status.
int64_t ProcKb(const char* name) {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(name, 0) == 0) return std::atoll(line.c_str() + std::strlen(name));
  }
  return -1;
}

// One compile in a child process, so the peak belongs to it alone; range(1): threads.
void BM_CompilePeakMemory(benchmark::State& state, int kind) {
  const std::string& text = Level(kind, state.range(0));
  EntityCompiler::Options options;
  options.threads = static_cast<int>(state.range(1));
  (void)Compiler();
  int64_t figures[3] = {-1, -1, -1};  // rss growth, output bytes, entities
  for (auto _ : state) {
    int fds[2];
    if (pipe(fds) != 0) std::abort();
    const pid_t pid = fork();
    if (pid == 0) {
      close(fds[0]);
      int64_t out[3] = {-1, -1, -1};
      // Hands the heap the parent freed back to the system first: otherwise the compile
      // reuses pages already counted in VmRSS and the growth depends on which rows ran
      // before.
      malloc_trim(0);
      {
        std::ofstream("/proc/self/clear_refs") << "5";  // resets VmHWM to VmRSS
      }
      const int64_t rss_before = ProcKb("VmRSS:");
      absl::StatusOr<EntityCompiler::Result> result = Compiler().Compile(text, options);
      if (result.ok()) {
        out[0] = (ProcKb("VmHWM:") - rss_before) * 1024;
        out[1] = static_cast<int64_t>(result->blob.size());
        out[2] = result->num_entities;
      }
      if (write(fds[1], out, sizeof(out)) != sizeof(out)) _exit(1);
      _exit(0);
    }
    close(fds[1]);
    if (read(fds[0], figures, sizeof(figures)) != sizeof(figures)) figures[0] = -1;
    close(fds[0]);
    int status = 0;
    waitpid(pid, &status, 0);
  }
  if (figures[0] < 0) {
    state.SkipWithError("the child's compile failed");
    return;
  }
  const double input = static_cast<double>(text.size());
  const double budget = 3 * input + static_cast<double>(figures[1]);
  state.counters["input_MB"] = input / 1e6;
  state.counters["output_MB"] = figures[1] / 1e6;
  state.counters["peak_rss_MB"] = figures[0] / 1e6;
  state.counters["rss/input"] = figures[0] / input;
  state.counters["rss/budget"] = figures[0] / budget;
}

// BM_Compile/level_file: registered when $STRATA_BENCHMARK_LEVEL_JSON names a file; the
// file is read once, before the first timed run, and a missing one is the row's error.
[[maybe_unused]] const bool kLevelFileRegistered = [] {
  const char* path = std::getenv("STRATA_BENCHMARK_LEVEL_JSON");
  if (path == nullptr || *path == '\0') return false;
  benchmark::RegisterBenchmark("BM_Compile/level_file", [file = std::string(path)](benchmark::State& state) {
    static const std::string* text = nullptr;
    if (text == nullptr) {
      std::ifstream in(file, std::ios::binary);
      if (!in) {
        state.SkipWithError(absl::StrCat("cannot read STRATA_BENCHMARK_LEVEL_JSON=", file).c_str());
        return;
      }
      text = new std::string(std::istreambuf_iterator<char>(in), {});
    }
    RunCompile(state, *text);
  })->Unit(benchmark::kMillisecond);
  return true;
}();

BENCHMARK_CAPTURE(BM_Floor, memcpy_transforms, 0)->Arg(1000000)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Compile, transforms, 0)->Arg(1000000)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_CompileDom, transforms, 0)->Arg(1000000)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Floor, memcpy_default_mix, 1)->Arg(64)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Compile, default_mix, 1)->Arg(1)->Arg(64)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_CompileDom, default_mix, 1)->Arg(64)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_CompileThreads, transforms, 0)
    ->Args({1000000, 1})
    ->Args({1000000, 2})
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_CompileThreads, default_mix, 1)
    ->Args({64, 1})
    ->Args({64, 2})
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_CompilePeakMemory, transforms, 0)
    ->Args({1000000, 1})
    ->Args({1000000, 2})
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_CompilePeakMemory, default_mix, 1)
    ->Args({64, 1})
    ->Args({64, 2})
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace strata
