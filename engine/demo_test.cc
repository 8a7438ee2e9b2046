// RunDemo in process: a short run of the default level, bad options, bad level files.
#include "engine/demo.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "engine/sample_components.h"
#include "engine/world.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "resource/entity_compiler.h"
#include "testing/status_matchers.h"

namespace strata {
namespace {

using ::strata::testing::IsOk;
using ::strata::testing::StatusIs;
using ::testing::AllOf;
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

// Replaces `path` as an editor saves (a new file renamed over it), and sets its
// modification time a second past the previous edit's, so every edit is a new stamp
// whatever the file system's timestamp granularity (no sleeping, no timing).
void SaveAs(const std::string& path, const std::string& text) {
  static int edits = 0;
  const std::string next = path + ".next";
  { std::ofstream(next, std::ios::binary) << text; }
  ASSERT_EQ(std::rename(next.c_str(), path.c_str()), 0);
  std::filesystem::last_write_time(path,
                                   std::filesystem::file_time_type::clock::now() + std::chrono::seconds(++edits));
}

constexpr char kLamp[] =
    R"({"entities": [{"name": "lamp", "components": [{"type": "transform"}, {"type": "sprite", "size": 1}]}]})";

TEST(LevelWatcher, ReloadsEachEditOnceAndKeepsTheLevelOnABadOne) {
  const std::string path = TempFile("watched.json", kLamp);
  STRATA_ASSERT_OK_AND_ASSIGN(std::unique_ptr<DemoWorld> demo, DemoWorld::Create());
  World& world = demo->world();
  EntityCompiler compiler;
  ASSERT_THAT(SampleRegistry().RegisterCompilers(compiler), IsOk());
  STRATA_ASSERT_OK_AND_ASSIGN(EntityCompiler::Result first, compiler.Compile(kLamp, {}));
  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<Entity> spawned, world.SpawnLevel(std::move(first.blob)));
  const Entity lamp = spawned[0];
  auto size_of_lamp = [&] { return world.pages().TryGet(lamp, demo->sprites().component())->size; };
  int rested = 0;
  auto rest = [&] { ++rested; };

  LevelWatcher watcher(path);
  EXPECT_FALSE(watcher.Poll(world, rest).has_value());  // as spawned

  // A bench inserted before the lamp, whose size changes: one add, one field.
  SaveAs(path, R"({"entities": [{"name": "bench"}, {"name": "lamp", "components": [{"type": "transform"},
                                                                                    {"type": "sprite", "size": 2}]}]})");
  std::optional<LevelWatcher::Outcome> edit = watcher.Poll(world, rest);
  ASSERT_TRUE(edit.has_value());
  ASSERT_THAT(edit->status, IsOk());
  EXPECT_EQ(edit->report.entities_added, 1u);
  EXPECT_EQ(edit->report.fields_written, 1u);
  EXPECT_EQ(rested, 1);
  EXPECT_EQ(size_of_lamp(), 2);
  EXPECT_GT(edit->compile_ms, 0);
  EXPECT_GE(edit->total_ms, edit->compile_ms);
  EXPECT_THAT(edit->Line(path, 7),
              AllOf(HasSubstr("watch: reloaded '"), HasSubstr("' before frame 7 in "),
                    HasSubstr("1 added, 0 removed, 1 kept; 1 fields written in 1 instances (sprite.size x1)")));
  EXPECT_FALSE(watcher.Poll(world, rest).has_value());  // seen once

  // A bad edit: the compiler's error with its line and column; the world as it was,
  // the level it diffs against too (the next good edit is diffed against the bench's).
  STRATA_ASSERT_OK_AND_ASSIGN(const std::vector<std::byte> before, world.SaveAll());
  SaveAs(path, R"({"entities": [{"name": "lamp",,}]})");
  std::optional<LevelWatcher::Outcome> bad = watcher.Poll(world, rest);
  ASSERT_TRUE(bad.has_value());
  EXPECT_THAT(bad->status, StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("line 1, column")));
  EXPECT_THAT(bad->Line(path, 9), HasSubstr("not reloaded, still running the previous level: level '"));
  EXPECT_EQ(rested, 1);  // it did not compile: the animation was not stopped
  STRATA_ASSERT_OK_AND_ASSIGN(const std::vector<std::byte> after_bad, world.SaveAll());
  EXPECT_EQ(before, after_bad);
  EXPECT_FALSE(watcher.Poll(world, rest).has_value());  // reported once

  // The file gone for a moment (an editor between delete and write): nothing, and the
  // next save is seen.
  ASSERT_EQ(std::remove(path.c_str()), 0);
  EXPECT_FALSE(watcher.Poll(world, rest).has_value());
  SaveAs(path, kLamp);
  std::optional<LevelWatcher::Outcome> back = watcher.Poll(world, rest);
  ASSERT_TRUE(back.has_value());
  ASSERT_THAT(back->status, IsOk());
  EXPECT_EQ(back->report.entities_removed, 1u);  // the bench
  EXPECT_EQ(back->report.fields_written, 1u);    // the size, back to 1
  EXPECT_EQ(size_of_lamp(), 1);
  EXPECT_TRUE(world.entities().Alive(lamp));

  // A resource blob saved over it is reloaded as it is.
  STRATA_ASSERT_OK_AND_ASSIGN(
      EntityCompiler::Result blob,
      compiler.Compile(R"({"entities": [{"name": "lamp", "components": [{"type": "transform"}, {"type": "sprite", "size": 3}]}]})",
                       {}));
  SaveAs(path, std::string(reinterpret_cast<const char*>(blob.blob.data()), blob.blob.size()));
  std::optional<LevelWatcher::Outcome> from_blob = watcher.Poll(world, rest);
  ASSERT_TRUE(from_blob.has_value());
  ASSERT_THAT(from_blob->status, IsOk());
  EXPECT_EQ(from_blob->compile_ms, 0);
  EXPECT_EQ(size_of_lamp(), 3);

  // A blob the reload refuses (corrupt): the error names the level; nothing changed.
  std::string corrupt(reinterpret_cast<const char*>(blob.blob.data()), blob.blob.size());
  corrupt[corrupt.size() / 2] ^= 1;
  SaveAs(path, corrupt);
  std::optional<LevelWatcher::Outcome> refused = watcher.Poll(world, rest);
  ASSERT_TRUE(refused.has_value());
  EXPECT_THAT(refused->status, StatusIs(absl::StatusCode::kDataLoss, HasSubstr("level '")));
  EXPECT_EQ(size_of_lamp(), 3);
}

}  // namespace
}  // namespace strata
