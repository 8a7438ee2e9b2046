// RunDemo in process: a short run of the default level, bad options, bad level files.
#include "engine/demo.h"

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "testing/status_matchers.h"

namespace strata {
namespace {

using ::strata::testing::StatusIs;
using ::testing::HasSubstr;

DemoOptions Short() {
  DemoOptions options;
  options.level_path = "engine/levels/default.json";
  options.frames = 5;
  options.sparks_per_frame = 300;
  options.progress_every = 2;
  return options;
}

std::string TempFile(const std::string& name, const std::string& contents) {
  const char* dir = std::getenv("TEST_TMPDIR");
  const std::string path = std::string(dir != nullptr ? dir : "/tmp") + "/" + name;
  std::ofstream(path) << contents;
  return path;
}

TEST(Demo, ShortRunReportsEverySystemAndTearsDownClean) {
  std::ostringstream progress;
  STRATA_ASSERT_OK_AND_ASSIGN(DemoReport report, RunDemo(Short(), &progress));
  EXPECT_EQ(report.level_entities, 4039u);
  // Five component types plus the entity names, instance names and layouts sections.
  EXPECT_EQ(report.level_component_types, 8u);
  EXPECT_GT(report.blob_bytes, 0u);
  EXPECT_EQ(report.sparks_emitted, 5u * 300u);
  ASSERT_EQ(report.systems.size(), 13u);
  EXPECT_EQ(report.systems[4].name, "compact");
  EXPECT_EQ(report.systems.back().name, "frame");
  for (const SystemTiming& t : report.systems) {
    EXPECT_LE(t.median_ms, t.p99_ms) << t.name;
    EXPECT_LE(t.p99_ms, t.max_ms) << t.name;
  }
  EXPECT_EQ(report.entities_alive_end, 4039u + 1500u - report.sparks_destroyed);
  EXPECT_GE(report.entities_alive_peak, report.entities_alive_end);
  EXPECT_GT(report.memory_pages, 0u);
  EXPECT_GT(report.memory_transforms, 0u);
  EXPECT_TRUE(report.teardown_clean) << report.teardown_detail;
  // Progress lines at frames 2, 4 and the last.
  EXPECT_THAT(progress.str(), HasSubstr("frame     2/5"));
  EXPECT_THAT(progress.str(), HasSubstr("frame     5/5"));
  const std::string text = FormatReport(report);
  EXPECT_THAT(text, HasSubstr("teardown: clean"));
  EXPECT_THAT(text, HasSubstr("fog_property"));
  const nlohmann::json j = ReportToJson(report);
  EXPECT_EQ(j["level"]["entities"], 4039);
  EXPECT_EQ(j["systems"].size(), 13u);
  EXPECT_EQ(j["compaction"]["moves"], report.compact_moves);
  EXPECT_EQ(j["teardown"]["clean"], true);
}

// --scale adds a smoke pool whose systems touch none of the sparks' components: the
// schedule runs them beside the spark chain (same segment, no edge to it).
TEST(Demo, ScaleAddsSmokeThatRunsBesideTheSparks) {
  DemoOptions options = Short();
  options.scale = 2;
  options.smoke_per_scale = 1500;
  options.progress_every = 0;
  STRATA_ASSERT_OK_AND_ASSIGN(DemoReport report, RunDemo(options, nullptr));
  EXPECT_EQ(report.smoke_puffs, 3000u);
  EXPECT_GT(report.puffs_drawn_last_frame, 2000u);
  EXPECT_LE(report.puffs_drawn_last_frame, 3000u);
  EXPECT_TRUE(report.teardown_clean) << report.teardown_detail;
  EXPECT_EQ(report.entities_alive_end, 4039u + 3000u + 2u * 1500u - report.sparks_destroyed);
  bool smoke_line = false, smoke_render_line = false;
  for (absl::string_view line : absl::StrSplit(report.schedule_description, '\n')) {
    if (absl::StartsWith(line, "    smoke ")) {
      smoke_line = true;
      EXPECT_THAT(std::string(line), HasSubstr("writes smoke, puff"));
      EXPECT_THAT(std::string(line), ::testing::Not(HasSubstr("after")));
    }
    if (absl::StartsWith(line, "    smoke_render ")) {
      smoke_render_line = true;
      EXPECT_THAT(std::string(line), ::testing::Not(HasSubstr("after")));
    }
  }
  EXPECT_TRUE(smoke_line && smoke_render_line) << report.schedule_description;
  EXPECT_THAT(FormatReport(report), HasSubstr("smoke: 3000 puffs"));
  // Without --scale, no smoke.
  options.scale = 1;
  STRATA_ASSERT_OK_AND_ASSIGN(DemoReport plain, RunDemo(options, nullptr));
  EXPECT_EQ(plain.smoke_puffs, 0u);
  EXPECT_EQ(plain.puffs_drawn_last_frame, 0u);
}

TEST(Demo, ParallelRunMatchesCounts) {
  DemoOptions options = Short();
  options.threads = 2;
  options.progress_every = 0;
  STRATA_ASSERT_OK_AND_ASSIGN(DemoReport parallel, RunDemo(options, nullptr));
  options.threads = 1;
  STRATA_ASSERT_OK_AND_ASSIGN(DemoReport serial, RunDemo(options, nullptr));
  EXPECT_EQ(parallel.sparks_destroyed, serial.sparks_destroyed);
  EXPECT_EQ(parallel.entities_alive_end, serial.entities_alive_end);
  EXPECT_EQ(parallel.sprites_drawn_last_frame, serial.sprites_drawn_last_frame);
  EXPECT_TRUE(parallel.teardown_clean) << parallel.teardown_detail;
}

// Sparks die in random order and new ones refill the holes, so without compaction
// their pages are mixed with level entities; per-frame Compact regroups them. The
// spark systems' results must not depend on where the sparks sit.
TEST(Demo, PerFrameCompactionRegroupsSparksWithoutChangingResults) {
  DemoOptions options = Short();
  options.frames = 40;
  options.progress_every = 0;
  options.compact_budget = 0;
  STRATA_ASSERT_OK_AND_ASSIGN(DemoReport off, RunDemo(options, nullptr));
  EXPECT_EQ(off.compact_moves, 0u);
  EXPECT_EQ(off.compact_frames, 0u);
  options.compact_budget = 1;
  STRATA_ASSERT_OK_AND_ASSIGN(DemoReport one, RunDemo(options, nullptr));
  options.compact_budget = 4096;
  STRATA_ASSERT_OK_AND_ASSIGN(DemoReport on, RunDemo(options, nullptr));
  // A budget of one moves at most one entity per frame.
  EXPECT_LE(one.compact_moves, one.compact_frames);
  EXPECT_GT(one.compact_moves, 0u);
  EXPECT_GT(on.compact_moves, one.compact_moves);
  EXPECT_GT(on.spark_full_page_share_end, off.spark_full_page_share_end);
  for (const DemoReport* r : {&one, &on}) {
    EXPECT_EQ(r->sparks_destroyed, off.sparks_destroyed);
    EXPECT_EQ(r->entities_alive_end, off.entities_alive_end);
    EXPECT_EQ(r->sparks_alive_end, off.sparks_alive_end);
    EXPECT_EQ(r->sprites_drawn_last_frame, off.sprites_drawn_last_frame);
    EXPECT_TRUE(r->teardown_clean) << r->teardown_detail;
  }
  EXPECT_THAT(FormatReport(on), HasSubstr("compaction: budget 4096"));
  EXPECT_THAT(FormatReport(off), HasSubstr("compaction: off"));
}

TEST(Demo, ZeroFramesAndZeroSparksWork) {
  DemoOptions options = Short();
  options.frames = 0;
  STRATA_ASSERT_OK_AND_ASSIGN(DemoReport report, RunDemo(options, nullptr));
  EXPECT_EQ(report.entities_alive_end, 4039u);
  EXPECT_TRUE(report.teardown_clean);
  options.frames = 3;
  options.sparks_per_frame = 0;
  STRATA_ASSERT_OK_AND_ASSIGN(report, RunDemo(options, nullptr));
  EXPECT_EQ(report.sparks_emitted, 0u);
  EXPECT_TRUE(report.teardown_clean);
}

TEST(Demo, BadOptionsAreRejected) {
  DemoOptions options = Short();
  options.frames = -1;
  EXPECT_THAT(RunDemo(options, nullptr).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("--frames")));
  options = Short();
  options.sparks_per_frame = -5;
  EXPECT_THAT(RunDemo(options, nullptr).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("--sparks_per_frame")));
  options = Short();
  options.threads = -1;
  EXPECT_THAT(RunDemo(options, nullptr).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("--threads")));
  options = Short();
  options.scale = 0;
  EXPECT_THAT(RunDemo(options, nullptr).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("--scale")));
  options = Short();
  options.compact_budget = -1;
  EXPECT_THAT(RunDemo(options, nullptr).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("--compact_budget")));
}

TEST(Demo, BadLevelFilesAreRejectedWithTheReason) {
  DemoOptions options = Short();
  options.level_path = "/nonexistent/level.json";
  EXPECT_THAT(RunDemo(options, nullptr).status(),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("/nonexistent/level.json")));

  options.level_path = TempFile("syntax.json", "{\"entities\": [\n  {\"name\": \"a\",,}\n]}");
  EXPECT_THAT(RunDemo(options, nullptr).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("line 2")));

  options.level_path = TempFile(
      "unknown.json", R"({"entities": [{"name": "x", "components": [{"type": "mesh"}]}]})");
  EXPECT_THAT(RunDemo(options, nullptr).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("mesh")));

  options.level_path = TempFile(
      "types.json",
      R"({"entities": [{"name": "x", "components": [{"type": "render_data", "density": "thick"}]}]})");
  EXPECT_THAT(RunDemo(options, nullptr).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("density")));

  options.level_path = TempFile("empty.json", "");
  EXPECT_THAT(RunDemo(options, nullptr).status(),
              StatusIs(absl::StatusCode::kInvalidArgument));

  options.level_path = TempFile("binary.json", std::string("\x00\xff\x13garbage", 10));
  EXPECT_THAT(RunDemo(options, nullptr).status(),
              StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST(Demo, EmptyLevelRunsWithDefaultEmitter) {
  DemoOptions options = Short();
  options.level_path = TempFile("empty_level.json", R"({"entities": []})");
  STRATA_ASSERT_OK_AND_ASSIGN(DemoReport report, RunDemo(options, nullptr));
  EXPECT_EQ(report.level_entities, 0u);
  EXPECT_EQ(report.sparks_emitted, 1500u);
  EXPECT_TRUE(report.teardown_clean) << report.teardown_detail;
}

}  // namespace
}  // namespace strata
