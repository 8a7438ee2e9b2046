// The demo's frame on its Schedule: the same world, byte for byte, for 1, 2 and 8
// threads and for the hand-written frame, over the demo's full 600 frames.
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/demo.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/status_matchers.h"

namespace strata {
namespace {

using ::testing::HasSubstr;

std::string TempFile(const std::string& name) {
  const char* dir = std::getenv("TEST_TMPDIR");
  return std::string(dir != nullptr ? dir : "/tmp") + "/" + name;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// The frame's Schedule gives the same world, byte for byte, for 1, 2 and 8 threads, and
// the same as the hand-written frame, over the demo's full run.
TEST(Demo, ScheduleSavesTheSameWorldForAnyThreadCount) {
  DemoOptions options;
  options.level_path = "engine/levels/default.json";
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
  options.frames = 60;  // the same check, in a sanitizer's time budget
#else
  options.frames = 600;
#endif
  options.sparks_per_frame = 2000;
  options.progress_every = 0;
  std::vector<std::string> saves;
  std::vector<DemoReport> reports;
  for (int threads : {1, 2, 8}) {
    options.threads = threads;
    options.save_path = TempFile("threads" + std::to_string(threads) + ".strata");
    STRATA_ASSERT_OK_AND_ASSIGN(DemoReport report, RunDemo(options, nullptr));
    EXPECT_TRUE(report.teardown_clean) << report.teardown_detail;
    saves.push_back(ReadFile(options.save_path));
    reports.push_back(report);
  }
  options.threads = 1;
  options.hand_written_frame = true;
  options.save_path = TempFile("hand.strata");
  STRATA_ASSERT_OK_AND_ASSIGN(DemoReport hand, RunDemo(options, nullptr));
  saves.push_back(ReadFile(options.save_path));
  ASSERT_GT(saves[0].size(), 100000u);
  for (size_t i = 1; i < saves.size(); ++i) {
    EXPECT_TRUE(saves[i] == saves[0]) << "run " << i << " saved another world";
  }
  for (const DemoReport& r : reports) {
    EXPECT_EQ(r.sparks_destroyed, hand.sparks_destroyed);
    EXPECT_EQ(r.sprites_drawn_last_frame, hand.sprites_drawn_last_frame);
    EXPECT_EQ(r.sprites_synced_last_frame, hand.sprites_synced_last_frame);
  }
  EXPECT_GT(hand.sparks_destroyed, 0u);
  // The report shows the schedule: its segments, the sync point and why.
  EXPECT_THAT(reports[1].schedule_description,
              HasSubstr("sync point: play back the commands of fade; \"compact\""));
  EXPECT_THAT(FormatReport(reports[1]), HasSubstr("critical path"));
  EXPECT_GT(reports[1].serial_work_ms, 0.0);
  EXPECT_GE(reports[1].serial_work_ms + 1e-9, reports[1].critical_path_ms);
  EXPECT_EQ(hand.schedule_description, "");
}

// The same with --scale: the smoke pool's systems run beside the sparks' on 2 and 8
// threads, and the world is the hand-written frame's, byte for byte.
TEST(Demo, ScaledScheduleSavesTheSameWorldForAnyThreadCount) {
  DemoOptions options;
  options.level_path = "engine/levels/default.json";
  options.frames = 60;
  options.sparks_per_frame = 300;
  options.scale = 2;
  options.smoke_per_scale = 5000;
  options.progress_every = 0;
  struct Run {
    int threads;
    bool hand_written_frame;
  };
  std::vector<std::string> saves;
  std::vector<DemoReport> reports;
  for (const Run run : {Run{1, false}, Run{2, false}, Run{8, false}, Run{1, true}}) {
    options.threads = run.threads;
    options.hand_written_frame = run.hand_written_frame;
    options.save_path = TempFile(absl::StrCat("scaled", run.threads, run.hand_written_frame ? "hand" : "",
                                              ".strata"));
    STRATA_ASSERT_OK_AND_ASSIGN(DemoReport report, RunDemo(options, nullptr));
    EXPECT_TRUE(report.teardown_clean) << report.teardown_detail;
    EXPECT_EQ(report.smoke_puffs, 10000u);
    saves.push_back(ReadFile(options.save_path));
    reports.push_back(report);
  }
  ASSERT_GT(saves[0].size(), 100000u);
  for (size_t i = 1; i < saves.size(); ++i) {
    EXPECT_TRUE(saves[i] == saves[0]) << "run " << i << " saved another world";
    EXPECT_EQ(reports[i].puffs_drawn_last_frame, reports[0].puffs_drawn_last_frame);
    EXPECT_EQ(reports[i].sparks_destroyed, reports[0].sparks_destroyed);
  }
  EXPECT_GT(reports[0].puffs_drawn_last_frame, 0u);
  // The smoke adds work beside the sparks' chain, not on it: the bound on the speedup
  // is above one.
  EXPECT_GT(reports[0].serial_work_ms, reports[0].critical_path_ms);
}

}  // namespace
}  // namespace strata
