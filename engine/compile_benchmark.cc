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
//   BM_Floor/simdjson_ondemand_...  parsing the same text with simdjson's On-Demand API
//                                   and visiting every value (numbers parsed as
//                                   doubles, strings and keys unescaped): what any
//                                   compile of the text must at least do, on one
//                                   thread; a compile row over its floor row is the
//                                   compile's cost beyond parsing
//   BM_Compile/level_file           the level JSON at $STRATA_BENCHMARK_LEVEL_JSON, a
//   BM_Floor/simdjson_ondemand_level_file
//                                   row only when that is set: tools/process_benchmark
//                                   runs it beside the compile tool's process on the
//                                   same file
//   BM_CompilePeakMemory/.../<threads>
//                                   one compile in a forked child: peak RSS growth
//                                   (VmHWM after /proc/self/clear_refs); the heap's
//                                   peak is checked by compile_memory_test
//
// Counters: MB/s of JSON (10^6 bytes; also bytes_per_second), ns per entity, and for
// the memory rows the peak growth over the input size and over the budget
// 3 x input + output.
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
#include "simdjson.h"
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
  state.SetBytesProcessed(static_cast<int64_t>(bytes) * state.iterations());
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

// What the floor's visit saw: a checksum of every value, so none of it can be skipped,
// and the counts one iteration met (reported, so a reader can check the whole level
// was visited).
struct Visited {
  uint64_t checksum = 0;
  int64_t numbers = 0;
  int64_t strings = 0;  // keys included
};

// VisitOnDemand: every value under `value`, depth first: numbers parsed as doubles,
// strings and keys unescaped. On-Demand values are forward-only cursors: each is
// consumed once.
simdjson::error_code VisitOnDemand(simdjson::ondemand::value value, Visited& visited) {
  uint64_t& checksum = visited.checksum;
  namespace od = simdjson::ondemand;
  od::json_type type;
  if (simdjson::error_code e = value.type().get(type)) return e;
  switch (type) {
    case od::json_type::array: {
      od::array array;
      if (simdjson::error_code e = value.get_array().get(array)) return e;
      for (simdjson::simdjson_result<od::value> element : array) {
        od::value v;
        if (simdjson::error_code e = std::move(element).get(v)) return e;
        if (simdjson::error_code e = VisitOnDemand(v, visited)) return e;
      }
      return simdjson::SUCCESS;
    }
    case od::json_type::object: {
      od::object object;
      if (simdjson::error_code e = value.get_object().get(object)) return e;
      for (simdjson::simdjson_result<od::field> member : object) {
        od::field field;
        std::string_view key;
        if (simdjson::error_code e = std::move(member).get(field)) return e;
        if (simdjson::error_code e = field.unescaped_key().get(key)) return e;
        checksum = checksum * 31 + key.size();
        ++visited.strings;
        if (simdjson::error_code e = VisitOnDemand(field.value(), visited)) return e;
      }
      return simdjson::SUCCESS;
    }
    case od::json_type::number: {
      double number = 0;
      if (simdjson::error_code e = value.get_double().get(number)) return e;
      uint64_t bits;
      std::memcpy(&bits, &number, sizeof(bits));
      checksum = checksum * 31 + bits;
      ++visited.numbers;
      return simdjson::SUCCESS;
    }
    case od::json_type::string: {
      std::string_view text;
      if (simdjson::error_code e = value.get_string().get(text)) return e;
      checksum = checksum * 31 + text.size() + (text.empty() ? 0 : static_cast<uint8_t>(text.back()));
      ++visited.strings;
      return simdjson::SUCCESS;
    }
    case od::json_type::boolean: {
      bool b = false;
      if (simdjson::error_code e = value.get_bool().get(b)) return e;
      checksum = checksum * 31 + (b ? 1 : 2);
      return simdjson::SUCCESS;
    }
    case od::json_type::null: {
      bool null = false;
      if (simdjson::error_code e = value.is_null().get(null)) return e;
      checksum = checksum * 31 + 3;
      return simdjson::SUCCESS;
    }
  }
  return simdjson::INCORRECT_TYPE;
}

// RunOnDemandFloor: the floor of a one-thread compile of `text`. The padded copy and
// the parser's buffers are made once, outside the timed loop (a floor leaves out what
// a real compile might avoid); each iteration parses and visits the whole document.
void RunOnDemandFloor(benchmark::State& state, const std::string& text) {
  const simdjson::padded_string padded(text);
  simdjson::ondemand::parser parser;
  if (parser.allocate(padded.size()) != simdjson::SUCCESS) {
    state.SkipWithError("simdjson: cannot allocate the parser");
    return;
  }
  Visited visited;
  for (auto _ : state) {
    visited.numbers = visited.strings = 0;
    simdjson::ondemand::document doc;
    simdjson::ondemand::value root;
    simdjson::error_code e = parser.iterate(padded).get(doc);
    if (e == simdjson::SUCCESS) e = doc.get_value().get(root);
    if (e == simdjson::SUCCESS) e = VisitOnDemand(root, visited);
    if (e != simdjson::SUCCESS) {
      state.SkipWithError(absl::StrCat("simdjson: ", simdjson::error_message(e)).c_str());
      return;
    }
    benchmark::DoNotOptimize(visited.checksum);
  }
  state.counters["MB/s"] =
      benchmark::Counter(text.size() * static_cast<double>(state.iterations()) / 1e6,
                         benchmark::Counter::kIsRate);
  state.counters["input_MB"] = text.size() / 1e6;
  state.counters["numbers"] = static_cast<double>(visited.numbers);
  state.counters["strings"] = static_cast<double>(visited.strings);
  state.SetBytesProcessed(static_cast<int64_t>(text.size()) * state.iterations());
}

void RunMemcpyFloor(benchmark::State& state, const std::string& text) {
  std::string copy(text.size(), ' ');
  for (auto _ : state) {
    std::memcpy(copy.data(), text.data(), text.size());
    benchmark::DoNotOptimize(copy.data());
    benchmark::ClobberMemory();
  }
  state.counters["MB/s"] =
      benchmark::Counter(text.size() * static_cast<double>(state.iterations()) / 1e6,
                         benchmark::Counter::kIsRate);
  state.SetBytesProcessed(static_cast<int64_t>(text.size()) * state.iterations());
}

enum class Floor { kMemcpy, kOnDemand };

void BM_Floor(benchmark::State& state, int kind, Floor floor) {
  const std::string& text = Level(kind, state.range(0));
  if (floor == Floor::kMemcpy) {
    RunMemcpyFloor(state, text);
  } else {
    RunOnDemandFloor(state, text);
  }
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

// LevelFileText: the file at $STRATA_BENCHMARK_LEVEL_JSON, read once (nullptr when it
// cannot be read).
const std::string* LevelFileText(const std::string& file) {
  static const std::string* text = [&file]() -> const std::string* {
    std::ifstream in(file, std::ios::binary);
    if (!in) return nullptr;
    return new std::string(std::istreambuf_iterator<char>(in), {});
  }();
  return text;
}

// BM_Compile/level_file and BM_Floor/simdjson_ondemand_level_file: registered when
// $STRATA_BENCHMARK_LEVEL_JSON names a file; the file is read once, before the first
// timed run, and a missing one is the rows' error.
[[maybe_unused]] const bool kLevelFileRegistered = [] {
  const char* path = std::getenv("STRATA_BENCHMARK_LEVEL_JSON");
  if (path == nullptr || *path == '\0') return false;
  const std::string file = path;
  auto with_text = [file](void (*run)(benchmark::State&, const std::string&)) {
    return [file, run](benchmark::State& state) {
      const std::string* text = LevelFileText(file);
      if (text == nullptr) {
        state.SkipWithError(absl::StrCat("cannot read STRATA_BENCHMARK_LEVEL_JSON=", file).c_str());
        return;
      }
      run(state, *text);
    };
  };
  benchmark::RegisterBenchmark("BM_Floor/simdjson_ondemand_level_file", with_text(RunOnDemandFloor))
      ->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("BM_Compile/level_file",
                               with_text([](benchmark::State& state, const std::string& text) {
                                 RunCompile(state, text);
                               }))
      ->Unit(benchmark::kMillisecond);
  return true;
}();

BENCHMARK_CAPTURE(BM_Floor, memcpy_transforms, 0, Floor::kMemcpy)->Arg(1000000)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Floor, simdjson_ondemand_transforms, 0, Floor::kOnDemand)
    ->Arg(1000000)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Compile, transforms, 0)->Arg(1000000)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_CompileDom, transforms, 0)->Arg(1000000)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Floor, memcpy_default_mix, 1, Floor::kMemcpy)->Arg(64)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Floor, simdjson_ondemand_default_mix, 1, Floor::kOnDemand)
    ->Arg(64)
    ->Unit(benchmark::kMillisecond);
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
