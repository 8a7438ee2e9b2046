// //engine:demo: compiles a level, spawns it into a World and runs the sparks pressure
// test, printing a progress line per frame group and a final report (engine/demo.h).
//
//   bazel run -c opt //engine:demo
//   bazel run -c opt //engine:demo -- --frames=1200 --sparks_per_frame=5000 --threads=2
//   bazel run -c opt //engine:demo -- --scale=10 --threads=1   (then without --threads)
//   bazel-bin/engine/demo --level=my_level.json --report_json=report.json
//
// With no --level it finds engine/levels/default.json in its runfiles (bazel run,
// bazel test, bazel-bin/engine/demo from anywhere) or in the workspace. Relative
// --level and --report_json paths are relative to the directory `bazel run` was started
// from (BUILD_WORKING_DIRECTORY), else to the current directory.
// Exit status: 0 on success; 1 for a bad flag, an unreadable or invalid level, an
// unwritable report, or a teardown that left something behind.
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "engine/demo.h"
#include "nlohmann/json.hpp"
#include "resource/tool_io.h"

ABSL_FLAG(std::string, level, "",
          "level JSON to compile and spawn, or a resource blob to spawn "
          "(default: engine/levels/default.json)");
ABSL_FLAG(std::string, save, "", "save the world to this resource blob at the end of the run");
ABSL_FLAG(int, frames, 600, "frames to simulate");
ABSL_FLAG(int, sparks_per_frame, 2000, "sparks emitted per frame");
ABSL_FLAG(int, threads, 0,
          "threads for the frame's schedule (1: every system on the main thread; 0: one per core)");
ABSL_FLAG(bool, hand_written_frame, false,
          "run the frame as plain calls in turn instead of a Schedule (for comparison)");
ABSL_FLAG(int, scale, 1,
          "a heavier frame: sparks_per_frame * scale sparks per frame and, from 2 on, "
          "scale * smoke_per_scale smoke puffs whose systems run beside the sparks'");
ABSL_FLAG(int, smoke_per_scale, 100000, "smoke puffs per unit of --scale (from --scale=2)");
ABSL_FLAG(int, compact_budget, 0,
          "entity moves the page store's Compact may make per frame (0, the default: never "
          "compact; compaction does not pay in this frame, engine/README.md)");
ABSL_FLAG(std::string, report_json, "", "also write the report as JSON to this path");
ABSL_FLAG(int, progress_every, 60, "a progress line every N frames (0: none)");
ABSL_FLAG(bool, watch, false,
          "reload the level between frames when its file changes (a bad edit is reported and "
          "the run goes on)");

namespace {

bool Exists(const std::string& path) { return std::ifstream(path).good(); }

std::string Env(const char* name) {
  const char* value = std::getenv(name);
  return value == nullptr ? std::string() : std::string(value);
}

std::string DefaultLevel(const char* argv0, std::vector<std::string>* tried) {
  const std::string rel = "engine/levels/default.json";
  std::vector<std::string> candidates;
  if (const std::string dir = Env("RUNFILES_DIR"); !dir.empty()) {
    candidates.push_back(absl::StrCat(dir, "/strata/", rel));
  }
  if (const std::string dir = Env("TEST_SRCDIR"); !dir.empty()) {
    candidates.push_back(absl::StrCat(dir, "/strata/", rel));
  }
  candidates.push_back(absl::StrCat(argv0, ".runfiles/strata/", rel));
  candidates.push_back(rel);  // bazel run's working directory is the runfiles root
  if (const std::string ws = Env("BUILD_WORKSPACE_DIRECTORY"); !ws.empty()) {
    candidates.push_back(absl::StrCat(ws, "/", rel));
  }
  for (const std::string& c : candidates) {
    tried->push_back(c);
    if (Exists(c)) return c;
  }
  return "";
}

}  // namespace

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "Strata demo: compiles a level, spawns it and runs a sparks pressure test.\n"
      "Usage: demo [--level=PATH] [--frames=N] [--sparks_per_frame=N] [--threads=N] "
      "[--compact_budget=N] [--scale=N] [--smoke_per_scale=N] [--hand_written_frame] [--save=PATH] "
      "[--report_json=PATH] [--watch]");
  const std::vector<char*> rest = absl::ParseCommandLine(argc, argv);
  if (rest.size() > 1) {
    std::cerr << "demo: unexpected argument '" << rest[1]
              << "' (flags take the form --name=value; see --help)\n";
    return 1;
  }
  strata::DemoOptions options;
  options.frames = absl::GetFlag(FLAGS_frames);
  options.sparks_per_frame = absl::GetFlag(FLAGS_sparks_per_frame);
  options.threads = absl::GetFlag(FLAGS_threads);
  options.hand_written_frame = absl::GetFlag(FLAGS_hand_written_frame);
  options.scale = absl::GetFlag(FLAGS_scale);
  options.smoke_per_scale = absl::GetFlag(FLAGS_smoke_per_scale);
  options.compact_budget = absl::GetFlag(FLAGS_compact_budget);
  options.progress_every = absl::GetFlag(FLAGS_progress_every);
  options.watch = absl::GetFlag(FLAGS_watch);
  if (const std::string save = absl::GetFlag(FLAGS_save); !save.empty()) {
    options.save_path = strata::ResolveToolPath(save);
  }
  if (const std::string level = absl::GetFlag(FLAGS_level); !level.empty()) {
    options.level_path = strata::ResolveToolPath(level);
  } else {
    std::vector<std::string> tried;
    options.level_path = DefaultLevel(argv[0], &tried);
    if (options.level_path.empty()) {
      std::cerr << "demo: cannot find the default level; tried:\n  "
                << absl::StrJoin(tried, "\n  ") << "\npass --level=PATH\n";
      return 1;
    }
  }
  absl::StatusOr<strata::DemoReport> report = strata::RunDemo(options, &std::cout);
  if (!report.ok()) {
    std::cerr << "demo: " << report.status().message() << "\n";
    return 1;
  }
  std::cout << strata::FormatReport(*report);
  if (const std::string path = absl::GetFlag(FLAGS_report_json); !path.empty()) {
    std::ofstream out(strata::ResolveToolPath(path));
    out << strata::ReportToJson(*report).dump(2) << "\n";
    out.close();
    if (!out) {
      std::cerr << "demo: cannot write the JSON report to '" << strata::ResolveToolPath(path) << "'\n";
      return 1;
    }
    std::cout << "  JSON report: " << strata::ResolveToolPath(path) << "\n";
  }
  return report->teardown_clean ? 0 : 1;
}
