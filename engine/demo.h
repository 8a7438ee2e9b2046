// The Strata demo: compiles a level, spawns it into a World, runs a sparks pressure
// test ("Efficient Entity Page Iteration") for a number of frames and reports what it
// cost. //engine:demo is the command-line front end (engine/demo_main.cc); tests call
// RunDemo directly.
//
//   DemoOptions options;
//   options.level_path = "engine/levels/default.json";
//   options.frames = 600;
//   absl::StatusOr<DemoReport> report = RunDemo(options, &std::cout);  // progress lines
//   std::cout << FormatReport(*report);
//   nlohmann::json j = ReportToJson(*report);
//
// Every frame: emit sparks_per_frame sparks in one batch; move and fade every spark
// through page queries; destroy the burnt-out ones with one DestroyBatch; turn and bob
// the level's hierarchy roots with one SetLocalBatch (the transform component
// propagates to their descendants); copy world positions into sprites; gather the draw
// list; set the "Fog" render_data density of the level's environment by name through
// the property system (and read it back); let the page store regroup up to
// compact_budget entities (EntityPages::Compact), so that sparks, which come and go
// in the holes the dead ones leave, fill whole pages again. Each system is timed
// separately.
// At the end everything is destroyed and the report states whether every subsystem
// returned to empty.
#ifndef STRATA_ENGINE_DEMO_H_
#define STRATA_ENGINE_DEMO_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "engine/world.h"
#include "nlohmann/json_fwd.hpp"

namespace strata {

struct DemoOptions {
  // level_path: level JSON (compiled first) or a resource blob (spawned as it is).
  std::string level_path;
  // save_path: if set, the world is saved there (a resource blob) at the end of the
  // run, before the teardown.
  std::string save_path;
  int frames = 600;
  int sparks_per_frame = 2000;
  // threads: 1 runs every system on the calling thread; N > 1 runs the frame's
  // Schedule on N threads (systems overlap where their access allows, and the spark
  // systems split their page walks); 0: one per core.
  int threads = 1;
  // hand_written_frame: the frame as a plain sequence of calls (the systems in turn,
  // the spark walks split over `threads` TBB workers) instead of a Schedule; kept to
  // measure what the schedule costs.
  bool hand_written_frame = false;
  // scale: a heavier frame where several cores matter: sparks_per_frame * scale sparks
  // per frame and, from 2 on, scale * smoke_per_scale smoke puffs rising from the
  // chimneys, a second particle system on components of its own (smoke, puff) whose
  // systems run beside the sparks' (1: the ordinary demo, no smoke).
  int scale = 1;
  int smoke_per_scale = 100000;
  // progress_every: a progress line every this many frames (0: none).
  int progress_every = 60;
  // compact_budget: entity moves EntityPages::Compact may make per frame, after the
  // destroy system (0, the default: never compact, the page layout then follows entity
  // indices; engine/README.md says why the default is off).
  int compact_budget = 0;
  float dt = 1.0f / 60.0f;
  uint64_t seed = 1;
  // watch: between frames, when the level file changes on disk, read and compile it
  // again and patch the running world to it (World::Reload, through LevelWatcher),
  // printing to `progress` what changed and how long it took; a level that does not
  // compile or reload prints the error and the demo runs on with the level it has.
  // Before a reload the animated roots are put back at rest, so the file's positions
  // are what the reload compares and the animation restarts from them. Frames are then
  // paced to dt of wall time each, as a game's are.
  bool watch = false;
};

// SystemTiming: one system's per-frame wall time over the run, in milliseconds.
struct SystemTiming {
  std::string name;
  double median_ms = 0;
  double p99_ms = 0;
  double mean_ms = 0;
  double max_ms = 0;
};

struct DemoReport {
  DemoOptions options;
  std::string machine;  // CPU model name, when /proc/cpuinfo says
  // Level.
  size_t level_json_bytes = 0;  // 0 for a blob
  bool level_is_blob = false;
  uint32_t level_entities = 0;
  uint32_t level_component_types = 0;
  size_t blob_bytes = 0;
  double compile_ms = 0;
  double spawn_ms = 0;
  double save_ms = 0;      // with save_path
  size_t saved_bytes = 0;
  uint32_t instances_spawned = 0;
  // Frames.
  std::vector<SystemTiming> systems;  // in frame order, then "frame" (the sum)
  int threads_used = 1;               // options.threads, 0 resolved to the core count
  // With the schedule: Schedule::Describe(), and per frame (medians, ms) the work of
  // every system and sync point summed, the frame's critical path (its longest chain of
  // dependent work) and the time spent in sync points. serial / critical bounds the
  // speedup any thread count can give this frame.
  std::string schedule_description;
  double serial_work_ms = 0;
  double critical_path_ms = 0;
  double sync_ms = 0;
  size_t sparks_emitted = 0;
  size_t sparks_destroyed = 0;
  size_t entities_alive_end = 0;
  size_t entities_alive_peak = 0;
  size_t sparks_alive_end = 0;
  // Compaction: entity moves made over the run, frames that moved anything, and the
  // share of sparks in pages whose 32 slots all hold a spark, after the last frame.
  size_t compact_moves = 0;
  size_t compact_frames = 0;
  double spark_full_page_share_end = 0;
  size_t sprites_drawn_last_frame = 0;
  size_t smoke_puffs = 0;             // the smoke pool (--scale > 1)
  size_t puffs_drawn_last_frame = 0;
  // Sprites whose transform changed in the last frame (the sync's Changed query).
  size_t sprites_synced_last_frame = 0;
  size_t animated_roots = 0;
  size_t animated_nodes = 0;
  float fog_density_last = 0;
  double run_seconds = 0;
  // Memory (bytes) per subsystem at the peak entity count and at the end.
  size_t memory_entity_manager = 0;
  size_t memory_transforms = 0;
  size_t memory_entity_index = 0;
  size_t memory_index_prototypes = 0;
  size_t memory_pages = 0;
  size_t memory_components = 0;  // stores with their own data (render_data)
  size_t num_prototypes = 0;
  // With watch: reloads made, and edits refused (the level kept running).
  int reloads = 0;
  int reload_failures = 0;
  // Teardown: after destroying everything, did every subsystem return to empty?
  bool teardown_clean = false;
  std::string teardown_detail;
};

// LevelWatcher: the step `watch` takes between two frames, callable on its own. It
// keeps the level file's stamp (modification time, size, inode); Poll() looks at the
// file again and, when the stamp changed, reads it, compiles it (JSON; a resource blob
// is taken as it is) with the sample registry and reloads it into `world`
// (World::Reload). An editor that saves by renaming a new file over the old one is
// seen (a new inode), as is a rewrite in place (a new time or size). A second save
// within the file system's timestamp granularity that leaves the size and inode alike
// is not seen until the file changes again. A stamp that cannot be
// read (the file is being replaced) is looked at again at the next Poll. Cost: one
// stat() when nothing changed.
//
//   LevelWatcher watcher(path);                     // the file as it is now
//   if (std::optional<LevelWatcher::Outcome> o = watcher.Poll(world)) {
//     std::cout << o->Line(path, frame) << "\n";     // reloaded, or why not
//   }
class LevelWatcher {
 public:
  struct Outcome {
    // status: not OK when the edit was not applied (a compile error with its line and
    // column, or what World::Reload refused); the world is then as it was.
    absl::Status status;
    ReloadReport report;    // with an OK status
    double compile_ms = 0;  // the compile's share of total_ms (0 for a blob)
    double total_ms = 0;    // reading, compiling and reloading
    // Line: the line the demo prints for it, before frame `next_frame`.
    std::string Line(absl::string_view path, int next_frame) const;
  };

  explicit LevelWatcher(std::string path);

  // Poll: nullopt when the file is as last seen; else what became of the change.
  // `before_reload` (if any) runs once the level compiled, just before World::Reload.
  std::optional<Outcome> Poll(World& world, const std::function<void()>& before_reload = nullptr);

 private:
  struct Stamp {
    int64_t seconds = 0;
    int64_t nanoseconds = 0;
    uint64_t size = 0;
    uint64_t inode = 0;
    uint64_t device = 0;
    friend bool operator==(const Stamp&, const Stamp&) = default;
  };
  static std::optional<Stamp> StampOf(const std::string& path);

  std::string path_;
  std::optional<Stamp> stamp_;
};

// RunDemo: runs the demo. Progress lines go to `progress` if not null. Errors:
// InvalidArgument for bad options (frames < 0, sparks_per_frame < 0, threads < 0 or
// > 256, scale < 1, smoke_per_scale < 0, compact_budget < 0, dt not in (0, 1]); NotFound / PermissionDenied if the level cannot be
// read; the compiler's InvalidArgument (with entity path and JSON line/column) for a bad level;
// Internal if a subsystem misbehaves during the run.
absl::StatusOr<DemoReport> RunDemo(const DemoOptions& options, std::ostream* progress);

// FormatReport: the human-readable report (several lines).
std::string FormatReport(const DemoReport& report);

// ReportToJson: the machine-readable report.
nlohmann::json ReportToJson(const DemoReport& report);

}  // namespace strata

#endif  // STRATA_ENGINE_DEMO_H_
