// The demo's run loop and report.
#include "engine/demo.h"

#include <algorithm>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstring>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>
#include <thread>

#include <sys/stat.h>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "base/id_string.h"
#include "base/status_macros.h"
#include "engine/sample_components.h"
#include "engine/systems.h"
#include "engine/world.h"
#include "engine/world_schedule.h"
#include "iteration/filter.h"
#include "nlohmann/json.hpp"
#include "oneapi/tbb/global_control.h"
#include "resource/entity_compiler.h"
#include "resource/format.h"
#include "resource/tool_io.h"
#include "schedule/schedule.h"
#include "transform/transform_component.h"

namespace strata {
namespace {

using Clock = std::chrono::steady_clock;

double MillisecondsSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// ReadLevel: the level file's bytes, read as every Strata tool reads a file
// (resource/tool_io.h: one buffer of the file's size, huge-page backed), so a blob is
// then used as it is, not copied.
absl::StatusOr<std::vector<std::byte>> ReadLevel(const std::string& path) {
  if (path.empty()) return absl::InvalidArgumentError("no level file given");
  absl::StatusOr<std::vector<std::byte>> bytes = ReadToolFile(path);
  if (!bytes.ok()) {
    return absl::Status(bytes.status().code(),
                        absl::StrCat("cannot open level file ", bytes.status().message()));
  }
  return bytes;
}

// IsBlob: `bytes` start with the resource format's magic (else they are level JSON).
bool IsBlob(absl::Span<const std::byte> bytes) {
  return bytes.size() >= 4 && std::memcmp(bytes.data(), entity_resource_layout::kMagic, 4) == 0;
}

// LevelBlob: the blob of a level file's `bytes`: compiled when they are JSON, moved
// out as they are when they are a resource blob. The compiler's errors, prefixed with
// the path; `compile_ms`: the compile's time (0 for a blob).
absl::StatusOr<std::vector<std::byte>> LevelBlob(const std::string& path, std::vector<std::byte> bytes,
                                                 bool* is_blob, double* compile_ms) {
  *compile_ms = 0;
  *is_blob = IsBlob(bytes);
  if (*is_blob) return bytes;
  const absl::string_view text(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  const auto start = std::chrono::steady_clock::now();
  EntityCompiler compiler;
  STRATA_RETURN_IF_ERROR(SampleRegistry().RegisterCompilers(compiler));
  absl::StatusOr<EntityCompiler::Result> compiled = compiler.Compile(text, {});
  *compile_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  if (!compiled.ok()) {
    return absl::Status(compiled.status().code(),
                        absl::StrCat("level '", path, "': ", compiled.status().message()));
  }
  return std::move(compiled->blob);
}

std::string MachineName() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line)) {
    if (line.rfind("model name", 0) == 0) {
      const size_t colon = line.find(':');
      if (colon != std::string::npos) return line.substr(line.find_first_not_of(' ', colon + 1));
    }
  }
  return "unknown";
}

// The timed systems, in frame order, then the whole frame: indices into the samples.
enum SystemSlot : size_t {
  kEmit,
  kMove,
  kFade,
  kDestroy,
  kCompact,
  kTransforms,
  kSpriteSync,
  kRender,
  kFogProperty,
  kSmoke,
  kSmokeRender,
  kClock,
  kFrame,
};

// Per-frame samples of one system.
struct Samples {
  std::string name;
  std::vector<double> ms;
};

SystemTiming Summarise(const Samples& samples) {
  SystemTiming t;
  t.name = samples.name;
  if (samples.ms.empty()) return t;
  std::vector<double> v = samples.ms;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  t.median_ms = n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
  const size_t p99 = static_cast<size_t>(std::ceil(0.99 * static_cast<double>(n)));
  t.p99_ms = v[std::min(n - 1, p99 == 0 ? 0 : p99 - 1)];
  double sum = 0;
  for (double x : v) sum += x;
  t.mean_ms = sum / static_cast<double>(n);
  t.max_ms = v.back();
  return t;
}

absl::Status CheckOptions(const DemoOptions& o) {
  if (o.frames < 0) return absl::InvalidArgumentError(absl::StrCat("--frames must be >= 0, got ", o.frames));
  if (o.sparks_per_frame < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("--sparks_per_frame must be >= 0, got ", o.sparks_per_frame));
  }
  if (o.threads < 0 || o.threads > 256) {
    return absl::InvalidArgumentError(
        absl::StrCat("--threads must be in [0, 256] (0: one per core), got ", o.threads));
  }
  if (o.scale < 1 || o.scale > 1000) {
    return absl::InvalidArgumentError(absl::StrCat("--scale must be in [1, 1000], got ", o.scale));
  }
  if (o.smoke_per_scale < 0 || o.smoke_per_scale > 1000000) {
    return absl::InvalidArgumentError(
        absl::StrCat("--smoke_per_scale must be in [0, 1000000], got ", o.smoke_per_scale));
  }
  if (!(o.dt > 0.0f && o.dt <= 1.0f)) {
    return absl::InvalidArgumentError(absl::StrCat("dt must be in (0, 1] seconds, got ", o.dt));
  }
  if (o.compact_budget < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("--compact_budget must be >= 0, got ", o.compact_budget));
  }
  if (o.progress_every < 0) {
    return absl::InvalidArgumentError("progress_every must be >= 0");
  }
  return absl::OkStatus();
}

// Every live entity of the world: the level's survivors, every spark and every puff.
std::vector<Entity> LiveEntities(DemoWorld& world, const std::vector<Entity>& level) {
  std::vector<Entity> live;
  for (Entity e : level) {
    if (world.entities().Alive(e)) live.push_back(e);
  }
  Filter sparks;
  sparks.Include(world.sparks().component());
  ForEachMatch(
      world.pages(), sparks,
      [&](Entity e, Spark&) { live.push_back(e); },
      world.sparks().component());
  Filter smoke;
  smoke.Include(world.smoke().component());
  ForEachMatch(
      world.pages(), smoke,
      [&](Entity e, Smoke&) { live.push_back(e); },
      world.smoke().component());
  // Level embers are in both lists.
  std::sort(live.begin(), live.end());
  live.erase(std::unique(live.begin(), live.end()), live.end());
  return live;
}

// The share of `c`'s entities that sit in full pages of `c` (all 32 slots have it):
// the pages a query over `c` walks with its unrolled full-page loop.
double FullPageShare(const EntityPages& pages, ComponentId c) {
  const uint32_t* masks = pages.page_masks(c);
  size_t total = 0, in_full = 0;
  for (size_t page = 0; page < pages.page_capacity(); ++page) {
    const int n = std::popcount(masks[page]);
    total += static_cast<size_t>(n);
    if (n == 32) in_full += 32;
  }
  return total == 0 ? 0.0 : static_cast<double>(in_full) / static_cast<double>(total);
}

// Destroys everything and checks that every subsystem is back to empty.
void Teardown(DemoWorld& world, const std::vector<Entity>& level, DemoReport* report) {
  const std::vector<Entity> live = LiveEntities(world, level);
  std::vector<std::string> problems;
  if (live.size() != world.entities().size()) {
    problems.push_back(absl::StrCat("found ", live.size(), " live entities, the manager has ",
                                    world.entities().size()));
  }
  if (absl::Status s = world.DestroyBatch(live); !s.ok()) {
    problems.push_back(absl::StrCat("DestroyBatch: ", s.ToString()));
  }
  world.pages().ReleaseEmptyPages();
  world.index().CollectGarbage();
  auto check = [&problems](absl::string_view what, size_t value) {
    if (value != 0) problems.push_back(absl::StrCat(what, " = ", value));
  };
  check("entities alive", world.entities().size());
  check("transforms", world.transforms().size());
  check("entity index entities", world.index().num_entities());
  check("entity index prototypes", world.index().num_prototypes());
  check("render_data instances", world.render_data().size());
  check("allocated data pages", world.pages().allocated_data_pages());
  check("allocated entity pages", world.pages().allocated_entity_pages());
  report->teardown_clean = problems.empty();
  report->teardown_detail =
      problems.empty() ? absl::StrCat("destroyed ", live.size(),
                                      " entities; every subsystem is empty")
                       : absl::StrJoin(problems, "; ");
}

}  // namespace

LevelWatcher::LevelWatcher(std::string path) : path_(std::move(path)), stamp_(StampOf(path_)) {}

std::optional<LevelWatcher::Stamp> LevelWatcher::StampOf(const std::string& path) {
  struct stat s;
  if (::stat(path.c_str(), &s) != 0) return std::nullopt;
  Stamp stamp;
  stamp.seconds = s.st_mtim.tv_sec;
  stamp.nanoseconds = s.st_mtim.tv_nsec;
  stamp.size = static_cast<uint64_t>(s.st_size);
  stamp.inode = static_cast<uint64_t>(s.st_ino);
  stamp.device = static_cast<uint64_t>(s.st_dev);
  return stamp;
}

std::optional<LevelWatcher::Outcome> LevelWatcher::Poll(World& world, const std::function<void()>& before_reload) {
  const std::optional<Stamp> now = StampOf(path_);
  if (!now.has_value() || now == stamp_) return std::nullopt;
  stamp_ = now;
  Outcome outcome;
  const Clock::time_point start = Clock::now();
  absl::StatusOr<ReloadReport> reloaded = [&]() -> absl::StatusOr<ReloadReport> {
    STRATA_ASSIGN_OR_RETURN(std::vector<std::byte> bytes, ReadLevel(path_));
    bool is_blob = false;
    STRATA_ASSIGN_OR_RETURN(std::vector<std::byte> blob,
                            LevelBlob(path_, std::move(bytes), &is_blob, &outcome.compile_ms));
    if (before_reload) before_reload();
    absl::StatusOr<ReloadReport> report = world.Reload(std::move(blob));
    if (!report.ok()) {
      return absl::Status(report.status().code(), absl::StrCat("level '", path_, "': ", report.status().message()));
    }
    return report;
  }();
  outcome.total_ms = MillisecondsSince(start);
  if (reloaded.ok()) {
    outcome.report = *std::move(reloaded);
  } else {
    outcome.status = reloaded.status();
  }
  return outcome;
}

std::string LevelWatcher::Outcome::Line(absl::string_view path, int next_frame) const {
  if (!status.ok()) {
    return absl::StrCat("watch: '", path, "' not reloaded, still running the previous level: ", status.message());
  }
  return absl::StrFormat("watch: reloaded '%s' before frame %d in %.2f ms (compile %.2f ms, reload %.2f ms): %s", path,
                         next_frame, total_ms, compile_ms, total_ms - compile_ms, report.Summary());
}

absl::StatusOr<DemoReport> RunDemo(const DemoOptions& options, std::ostream* progress) {
  STRATA_RETURN_IF_ERROR(CheckOptions(options));
  DemoReport report;
  report.options = options;
  report.machine = MachineName();
  const Clock::time_point run_start = Clock::now();
  const int threads =
      options.threads > 0 ? options.threads
                          : std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  report.threads_used = threads;
  std::optional<tbb::global_control> thread_limit;
  if (options.hand_written_frame && threads > 1) {
    thread_limit.emplace(tbb::global_control::max_allowed_parallelism,
                         static_cast<size_t>(threads));
  }
  const bool parallel = threads > 1;
  const uint32_t sparks_per_frame =
      static_cast<uint32_t>(options.sparks_per_frame) * static_cast<uint32_t>(options.scale);

  // Load: level JSON is compiled; a resource blob (it starts with the format's magic)
  // is used as it is.
  // The watcher takes the file's stamp before reading it: a save during the read is
  // seen at the first Poll.
  std::optional<LevelWatcher> watcher;
  if (options.watch) watcher.emplace(options.level_path);
  STRATA_ASSIGN_OR_RETURN(std::vector<std::byte> bytes, ReadLevel(options.level_path));
  if (!IsBlob(bytes)) report.level_json_bytes = bytes.size();
  STRATA_ASSIGN_OR_RETURN(std::vector<std::byte> blob, LevelBlob(options.level_path, std::move(bytes),
                                                                 &report.level_is_blob, &report.compile_ms));
  report.blob_bytes = blob.size();
  absl::StatusOr<EntityResource> loaded = EntityResource::Create(std::move(blob));
  if (!loaded.ok()) {
    return absl::Status(loaded.status().code(), absl::StrCat("level '", options.level_path, "': ",
                                                             loaded.status().message()));
  }
  report.level_entities = loaded->view().num_entities();
  report.level_component_types = loaded->view().num_component_types();

  // Spawn, keeping the level for --watch's reloads.
  STRATA_ASSIGN_OR_RETURN(std::unique_ptr<DemoWorld> demo_world, DemoWorld::Create());
  DemoWorld& world = *demo_world;
  SpawnStats stats;
  Clock::time_point start = Clock::now();
  STRATA_ASSIGN_OR_RETURN(const std::vector<Entity> level,
                          world.world().SpawnLevel(*std::move(loaded), &stats));
  report.spawn_ms = MillisecondsSince(start);
  report.instances_spawned = stats.instances_spawned;

  // The entity whose "Fog" the property system changes every frame.
  auto find_fog = [&world](absl::Span<const Entity> entities) {
    for (Entity e : entities) {
      if (world.entities().Alive(e) && world.index().FindComponentManager(e, IdString32("Fog")) != nullptr) {
        return e;
      }
    }
    return Entity();
  };
  Entity fog_owner = find_fog(level);
  // Sprite sync reads only sprites whose transform moved since its last run.
  STRATA_RETURN_IF_ERROR(world.world().TrackTransformChanges());
  uint32_t sprites_synced_at = EntityPages::kNeverRan;
  auto animator = std::make_unique<TransformAnimator>(world, level);
  report.animated_roots = animator->num_roots();
  report.animated_nodes = animator->num_nodes();

  // In SystemSlot order.
  std::vector<Samples> samples = {{"emit", {}},        {"move", {}},    {"fade", {}},
                                  {"destroy", {}},     {"compact", {}}, {"transforms", {}},
                                  {"sprite_sync", {}}, {"render", {}},  {"fog_property", {}},
                                  {"smoke", {}},       {"smoke_render", {}},
                                  {"clock", {}},       {"frame", {}}};
  for (Samples& s : samples) s.ms.reserve(static_cast<size_t>(options.frames));
  std::vector<Entity> created;
  ParallelCommands commands(world.pages());
  // The dead are counted by an observer of spark removals (told after each playback).
  ComponentEvents::Subscription deaths = world.world().OnRemove<Spark>(
      [&report](absl::Span<const Entity> dead, absl::Span<const Spark>, CommandBuffer&) {
        report.sparks_destroyed += dead.size();
      });
  std::vector<SpriteVertex> vertices;
  std::vector<PuffVertex> puff_vertices;
  // --scale: the chimneys smoke, a pool made once.
  if (options.scale > 1) {
    STRATA_ASSIGN_OR_RETURN(
        const std::vector<Entity> puffs,
        SpawnSmoke(world, static_cast<uint32_t>(options.scale) * static_cast<uint32_t>(options.smoke_per_scale),
                   options.seed));
    report.smoke_puffs = puffs.size();
  }
  auto timed = [&samples](SystemSlot system, auto&& body) {
    const Clock::time_point t0 = Clock::now();
    body();
    samples[system].ms.push_back(MillisecondsSince(t0));
  };
  absl::Status status;
  auto fail = [&status](absl::Status s) {
    if (status.ok() && !s.ok()) status = std::move(s);
  };
  std::optional<World::MemoryReport> peak;  // at the highest entity count

  // The systems' bodies, shared by the two frames. `frame` is the loop's; the systems
  // read the frame's number, step and time from the FrameClock world resource, which
  // the clock system writes first.
  int frame = 0;
  size_t dying = 0;
  auto tick_clock = [&] {
    FrameClock& c = world.world().Resource<FrameClock>();
    c.dt = options.dt;
    c.frame = static_cast<uint32_t>(frame);
    c.seconds = static_cast<float>(frame) * options.dt;
  };
  auto frame_clock = [&]() -> const FrameClock& { return world.world().ReadResource<FrameClock>(); };
  auto emit = [&]() -> absl::Status {
    STRATA_RETURN_IF_ERROR(EmitSparks(world, sparks_per_frame,
                                      options.seed * 1000003u + static_cast<uint64_t>(frame_clock().frame),
                                      &created));
    report.sparks_emitted += created.size();
    return absl::OkStatus();
  };
  auto compact = [&] {
    if (options.compact_budget == 0) return;
    const size_t moved = world.pages().Compact(static_cast<size_t>(options.compact_budget));
    report.compact_moves += moved;
    report.compact_frames += moved > 0 ? 1 : 0;
  };
  auto fog = [&]() -> absl::Status {
    if (!fog_owner.is_valid()) return absl::OkStatus();
    const float density = 0.02f + 0.015f * (1.0f + std::sin(frame_clock().seconds));
    STRATA_RETURN_IF_ERROR(world.SetFloatProperty(fog_owner, "Fog", "density", density));
    STRATA_ASSIGN_OR_RETURN(const float read, world.GetFloatProperty(fog_owner, "Fog", "density"));
    if (read != density) {
      return absl::InternalError(absl::StrCat("Fog density reads back ", read, ", set ", density));
    }
    report.fog_density_last = density;
    return absl::OkStatus();
  };
  auto check_destroys = [&](const CommandBuffer::Result& played) {
    if (played.skipped_dead + played.skipped_conflict != 0 || played.applied != dying) {
      fail(absl::InternalError("a spark's destroy command was skipped"));
    }
  };

  // The frame as a Schedule: what each system touches, declared; the schedule finds
  // what may overlap (the transform animation with the spark walks; the fog with the
  // sprite sync) and plays the fade's destroys back before the compaction.
  std::unique_ptr<Schedule> schedule;
  std::vector<SystemSlot> slot_of_system;
  if (!options.hand_written_frame) {
    schedule = MakeSchedule(world.world(), {.threads = threads, .strict_order = true});
    const Component<Sprite> sprite = world.sprites().component();
    const Component<Spark> spark = world.sparks().component();
    const Component<HasTransform> has_transform = world.world().has_transform();
    const Component<Smoke> smoke = world.smoke().component();
    const Component<Puff> puff = world.puffs().component();
    const Resource clock_key = WorldResource<FrameClock>(world.world());
    const Resource rules_key = WorldResource<SparkRules>(world.world());
    auto add = [&](SystemSlot slot, System system) {
      slot_of_system.push_back(slot);
      schedule->Add(std::move(system));
    };
    schedule->Stage("spawn");
    add(kClock, System("clock", [&](SystemContext&) { tick_clock(); }).Writes(clock_key));
    // Creates entities directly (one batch): exclusive.
    add(kEmit, System("emit", [&](SystemContext&) { return emit(); })
                       .Exclusive()
                       .Reads(clock_key)
                       .After("clock"));
    schedule->Stage("simulate");
    add(kMove, System("move", [&](SystemContext& ctx) {
                 MoveSparks(world, frame_clock().dt, ctx.parallel());
               }).Writes(spark, sprite).Reads(clock_key, rules_key));
    add(kFade, System("fade", [&](SystemContext& ctx) {
                 dying = FadeSparks(world, frame_clock().dt, ctx.parallel(), &ctx.commands());
               })
                   .Writes(spark, sprite)
                   .Reads(clock_key)
                   .Commands(spark, sprite)
                   .After("move"));
    // The transform graph, and the change marks of its page mirror (no entity gains or
    // loses a transform during the frames, so the mirror only marks).
    add(kTransforms, System("transforms", [&](SystemContext&) {
                       return animator->Step(world, frame_clock().seconds);
                     }).Writes(Resource("transform"), has_transform).Reads(clock_key));
    // The smoke: components of its own, so it runs beside the sparks.
    add(kSmoke, System("smoke", [&](SystemContext& ctx) {
                  DriftSmoke(world, frame_clock().dt, frame_clock().seconds, ctx.parallel());
                }).Writes(smoke, puff).Reads(clock_key));
    schedule->Stage("maintain");
    add(kCompact, System("compact", [&](SystemContext&) {
                    compact();
                    world.pages().ReleaseEmptyPages();
                  }).Exclusive());
    schedule->Stage("present");
    add(kSpriteSync, System("sprite_sync", [&](SystemContext& ctx) {
                       report.sprites_synced_last_frame = SyncChangedSprites(world, ctx.last_run());
                     })
                         .Writes(sprite)
                         .ReadsChanged(has_transform)
                         .Reads(Resource("transform")));
    add(kRender, System("render", [&](SystemContext&) {
                   report.sprites_drawn_last_frame = RenderSprites(world, &vertices);
                 })
                     .Reads(sprite)
                     .Writes(Resource("draw_list"))
                     .After("sprite_sync")
                     .MainThread());
    add(kFogProperty, System("fog_property", [&](SystemContext&) { return fog(); })
                          .Writes(Resource("render_data"))
                          .Reads(clock_key)
                          .MainThread());
    add(kSmokeRender, System("smoke_render", [&](SystemContext&) {
                        report.puffs_drawn_last_frame = RenderSmoke(world, &puff_vertices);
                      })
                          .Reads(puff)
                          .Writes(Resource("smoke_draw_list")));
    STRATA_RETURN_IF_ERROR(schedule->Build());
    report.schedule_description = schedule->Describe();
  }
  std::vector<double> serial_samples, critical_samples, sync_samples;

  // --watch: between frames, a changed level file is compiled and reloaded; a bad one
  // is reported and the run goes on.
  auto reload_if_changed = [&] {
    // The animated roots go back to rest first: a root the edit did not move then
    // keeps its rest, not a frame of the motion, as the new animator's base.
    std::optional<LevelWatcher::Outcome> outcome =
        watcher->Poll(world.world(), [&] { fail(animator->Rest(world)); });
    if (!outcome.has_value()) return;
    if (progress != nullptr) {
      *progress << outcome->Line(options.level_path, frame + 1) << "\n";
      progress->flush();
    }
    if (!outcome->status.ok()) {
      ++report.reload_failures;
      return;
    }
    ++report.reloads;
    std::vector<Entity> alive;
    for (const Entity e : world.world().LevelEntities()) {
      if (world.entities().Alive(e)) alive.push_back(e);
    }
    animator = std::make_unique<TransformAnimator>(world, alive);
    fog_owner = find_fog(alive);
  };
  if (options.watch && progress != nullptr) {
    *progress << "watch: watching '" << options.level_path << "'\n";
    progress->flush();
  }

  for (frame = 0; frame < options.frames && status.ok(); ++frame) {
    if (options.watch) reload_if_changed();
    const Clock::time_point frame_start = Clock::now();
    if (schedule != nullptr) {
      dying = 0;
      fail(schedule->Run());
      const FrameTimes& t = schedule->last_frame();
      for (size_t i = 0; i < slot_of_system.size(); ++i) {
        samples[slot_of_system[i]].ms.push_back(t.system_ns[i] / 1e6);
      }
      samples[kDestroy].ms.push_back(t.sync_ns / 1e6);  // the fade's destroys, played back
      serial_samples.push_back((t.systems_ns + t.sync_ns) / 1e6);
      critical_samples.push_back(t.critical_ns / 1e6);
      sync_samples.push_back(t.sync_ns / 1e6);
      if (status.ok()) check_destroys(t.played);
    } else {
      timed(kClock, tick_clock);
      timed(kEmit, [&] { fail(emit()); });
      timed(kMove, [&] { MoveSparks(world, frame_clock().dt, parallel); });
      timed(kFade, [&] { dying = FadeSparks(world, frame_clock().dt, parallel, &commands); });
      timed(kDestroy, [&] {
        absl::StatusOr<CommandBuffer::Result> played = PlayCommands(world, &commands);
        if (!played.ok()) return fail(played.status());
        check_destroys(*played);
      });
      timed(kCompact, compact);
      timed(kTransforms, [&] { fail(animator->Step(world, frame_clock().seconds)); });
      timed(kSpriteSync, [&] {
        report.sprites_synced_last_frame = SyncChangedSprites(world, sprites_synced_at);
        sprites_synced_at = world.pages().tick();
        world.pages().AdvanceTick();
      });
      timed(kRender, [&] { report.sprites_drawn_last_frame = RenderSprites(world, &vertices); });
      timed(kFogProperty, [&] { fail(fog()); });
      timed(kSmoke, [&] {
        DriftSmoke(world, frame_clock().dt, frame_clock().seconds, parallel);
      });
      timed(kSmokeRender, [&] { report.puffs_drawn_last_frame = RenderSmoke(world, &puff_vertices); });
    }
    samples[kFrame].ms.push_back(MillisecondsSince(frame_start));
    if (options.watch) {
      // Paced as a game's frames are, dt of wall time each, leaving time to edit.
      std::this_thread::sleep_until(frame_start + std::chrono::duration_cast<Clock::duration>(
                                                      std::chrono::duration<double>(options.dt)));
    }
    if (world.entities().size() > report.entities_alive_peak) {
      report.entities_alive_peak = world.entities().size();
      peak = world.Memory();
    }
    if (progress != nullptr && options.progress_every > 0 &&
        ((frame + 1) % options.progress_every == 0 || frame + 1 == options.frames)) {
      const std::vector<double>& f = samples[kFrame].ms;
      const size_t window = std::min<size_t>(f.size(), static_cast<size_t>(options.progress_every));
      Samples recent{"frame", std::vector<double>(f.end() - static_cast<std::ptrdiff_t>(window), f.end())};
      const SystemTiming t = Summarise(recent);
      Filter sparks;
      sparks.Include(world.sparks().component());
      *progress << absl::StrFormat(
                       "frame %5d/%d  entities %7zu  sparks %7zu  drawn %7zu  frame %6.3f ms "
                       "(median of last %zu, max %.3f)",
                       frame + 1, options.frames, world.entities().size(),
                       CountMatches(world.pages(), sparks), report.sprites_drawn_last_frame,
                       t.median_ms, window, t.max_ms)
                << "\n";
      progress->flush();
    }
  }
  if (!status.ok()) {
    return absl::InternalError(absl::StrCat("frame loop: ", status.ToString()));
  }
  for (const Samples& s : samples) report.systems.push_back(Summarise(s));
  report.serial_work_ms = Summarise({"", serial_samples}).median_ms;
  report.critical_path_ms = Summarise({"", critical_samples}).median_ms;
  report.sync_ms = Summarise({"", sync_samples}).median_ms;
  report.entities_alive_end = world.entities().size();
  {
    Filter sparks;
    sparks.Include(world.sparks().component());
    report.sparks_alive_end = CountMatches(world.pages(), sparks);
  }
  report.spark_full_page_share_end = FullPageShare(world.pages(), world.sparks().component().id);
  const World::MemoryReport memory = peak.has_value() ? *peak : world.Memory();
  report.memory_entity_manager = memory.entity_manager;
  report.memory_transforms = memory.transforms;
  report.memory_entity_index = memory.entity_index;
  report.memory_index_prototypes = world.index().RegistryMemoryUsage();
  report.memory_pages = memory.pages;
  report.memory_components = memory.components;
  report.num_prototypes = world.index().num_prototypes();
  if (!options.save_path.empty()) {
    start = Clock::now();
    absl::StatusOr<std::vector<std::byte>> saved = world.world().SaveAll();
    report.save_ms = MillisecondsSince(start);
    if (!saved.ok()) return saved.status();
    report.saved_bytes = saved->size();
    STRATA_RETURN_IF_ERROR(WriteToolFileAtomically(options.save_path, *saved, {options.level_path}));
  }
  // The level's entities now (a reload may have added and removed some).
  Teardown(world, std::vector<Entity>(world.world().LevelEntities().begin(), world.world().LevelEntities().end()),
           &report);
  report.run_seconds = MillisecondsSince(run_start) / 1000.0;
  return report;
}

std::string FormatReport(const DemoReport& r) {
  std::ostringstream out;
  const DemoOptions& o = r.options;
  out << "Strata demo report\n";
  out << absl::StrFormat("  machine: %s; %u cores; threads %d; frame: %s%s\n", r.machine,
                         std::thread::hardware_concurrency(), r.threads_used,
                         o.hand_written_frame ? "hand-written calls" : "a Schedule",
                         o.scale > 1 ? absl::StrCat("; scale ", o.scale) : "");
  if (r.level_is_blob) {
    out << absl::StrFormat("  level: %s (a resource blob of %zu bytes, %u entities, %u sections)\n",
                           o.level_path, r.blob_bytes, r.level_entities, r.level_component_types);
  } else {
    out << absl::StrFormat("  level: %s (%zu bytes of JSON)\n", o.level_path, r.level_json_bytes);
    out << absl::StrFormat(
        "  compile: %.2f ms (%.1f MB/s of JSON, %.0f ns per entity) -> blob of %zu bytes (%u "
        "entities, %u sections)\n",
        r.compile_ms, r.compile_ms > 0 ? r.level_json_bytes / (r.compile_ms * 1e3) : 0.0,
        r.level_entities == 0 ? 0.0 : r.compile_ms * 1e6 / r.level_entities, r.blob_bytes,
        r.level_entities, r.level_component_types);
  }
  out << absl::StrFormat("  spawn: %.3f ms for %u entities and %u components (%.1f ns per entity)\n",
                         r.spawn_ms, r.level_entities, r.instances_spawned,
                         r.level_entities == 0 ? 0.0 : r.spawn_ms * 1e6 / r.level_entities);
  if (!o.save_path.empty()) {
    out << absl::StrFormat("  save: %.3f ms -> %s (%zu bytes, %.2fx the spawn time)\n", r.save_ms,
                           o.save_path, r.saved_bytes, r.spawn_ms > 0 ? r.save_ms / r.spawn_ms : 0.0);
  }
  out << absl::StrFormat(
      "  frames: %d x %.4f s, %d sparks per frame; %zu roots animated (%zu transform nodes)\n",
      o.frames, o.dt, o.sparks_per_frame, r.animated_roots, r.animated_nodes);
  out << "  per-frame update time (ms):     median      p99     mean      max\n";
  for (const SystemTiming& t : r.systems) {
    out << absl::StrFormat("    %-14s            %8.4f %8.4f %8.4f %8.4f\n", t.name, t.median_ms,
                           t.p99_ms, t.mean_ms, t.max_ms);
  }
  if (!o.hand_written_frame) {
    out << absl::StrFormat(
        "  schedule per frame (medians): serial work %.4f ms, critical path %.4f ms (bound on "
        "the speedup: %.2fx), sync points %.4f ms\n",
        r.serial_work_ms, r.critical_path_ms,
        r.critical_path_ms > 0 ? r.serial_work_ms / r.critical_path_ms : 0.0, r.sync_ms);
    out << "  the frame's schedule:\n";
    for (absl::string_view line : absl::StrSplit(r.schedule_description, '\n', absl::SkipEmpty())) {
      out << "    " << line << "\n";
    }
  }
  out << absl::StrFormat(
      "  entities alive: %zu at the end (peak %zu); sparks alive %zu; emitted %zu, destroyed "
      "%zu; sprites drawn in the last frame %zu, synced (transform changed) %zu\n",
      r.entities_alive_end, r.entities_alive_peak, r.sparks_alive_end, r.sparks_emitted,
      r.sparks_destroyed, r.sprites_drawn_last_frame, r.sprites_synced_last_frame);
  if (r.smoke_puffs > 0) {
    out << absl::StrFormat("  smoke: %zu puffs rising from the chimneys; %zu drawn in the last frame\n",
                           r.smoke_puffs, r.puffs_drawn_last_frame);
  }
  if (o.compact_budget > 0) {
    out << absl::StrFormat(
        "  compaction: budget %d moves per frame; %zu moves in %zu of %d frames; %.1f%% of "
        "sparks in full spark pages at the end\n",
        o.compact_budget, r.compact_moves, r.compact_frames, o.frames,
        100.0 * r.spark_full_page_share_end);
  } else {
    out << absl::StrFormat("  compaction: off; %.1f%% of sparks in full spark pages at the end\n",
                           100.0 * r.spark_full_page_share_end);
  }
  out << absl::StrFormat("  Fog density (set by name every frame): %.4f at the end\n",
                         r.fog_density_last);
  const size_t total = r.memory_entity_manager + r.memory_transforms + r.memory_entity_index +
                       r.memory_pages + r.memory_components;
  out << "  memory at the peak entity count (KiB):\n";
  out << absl::StrFormat("    entity manager %10.1f\n", r.memory_entity_manager / 1024.0);
  out << absl::StrFormat("    transforms     %10.1f\n", r.memory_transforms / 1024.0);
  out << absl::StrFormat("    entity index   %10.1f  (prototype registry %.1f KiB, %zu prototypes)\n",
                         r.memory_entity_index / 1024.0, r.memory_index_prototypes / 1024.0,
                         r.num_prototypes);
  out << absl::StrFormat("    entity pages   %10.1f\n", r.memory_pages / 1024.0);
  out << absl::StrFormat("    other stores   %10.1f\n", r.memory_components / 1024.0);
  out << absl::StrFormat("    total          %10.1f\n", total / 1024.0);
  if (o.watch) {
    out << absl::StrFormat("  watch: %d reloads, %d edits refused\n", r.reloads, r.reload_failures);
  }
  out << absl::StrFormat("  teardown: %s (%s)\n", r.teardown_clean ? "clean" : "NOT CLEAN",
                         r.teardown_detail);
  out << absl::StrFormat("  run time: %.2f s\n", r.run_seconds);
  return out.str();
}

nlohmann::json ReportToJson(const DemoReport& r) {
  nlohmann::json j;
  j["machine"] = r.machine;
  j["options"] = {{"level", r.options.level_path},
                  {"frames", r.options.frames},
                  {"sparks_per_frame", r.options.sparks_per_frame},
                  {"threads", r.options.threads},
                  {"hand_written_frame", r.options.hand_written_frame},
                  {"scale", r.options.scale},
                  {"smoke_per_scale", r.options.smoke_per_scale},
                  {"compact_budget", r.options.compact_budget},
                  {"dt", r.options.dt}};
  j["level"] = {{"json_bytes", r.level_json_bytes},
                {"entities", r.level_entities},
                {"component_types", r.level_component_types},
                {"blob_bytes", r.blob_bytes},
                {"compile_ms", r.compile_ms},
                {"spawn_ms", r.spawn_ms},
                {"save_ms", r.save_ms},
                {"saved_bytes", r.saved_bytes},
                {"instances_spawned", r.instances_spawned}};
  nlohmann::json systems = nlohmann::json::array();
  for (const SystemTiming& t : r.systems) {
    systems.push_back({{"name", t.name},
                       {"median_ms", t.median_ms},
                       {"p99_ms", t.p99_ms},
                       {"mean_ms", t.mean_ms},
                       {"max_ms", t.max_ms}});
  }
  j["systems"] = systems;
  j["threads_used"] = r.threads_used;
  j["schedule"] = {{"description", r.schedule_description},
                   {"serial_work_ms", r.serial_work_ms},
                   {"critical_path_ms", r.critical_path_ms},
                   {"sync_ms", r.sync_ms}};
  j["entities"] = {{"alive_end", r.entities_alive_end},
                   {"alive_peak", r.entities_alive_peak},
                   {"sparks_alive_end", r.sparks_alive_end},
                   {"sparks_emitted", r.sparks_emitted},
                   {"sparks_destroyed", r.sparks_destroyed},
                   {"sprites_drawn_last_frame", r.sprites_drawn_last_frame},
                   {"smoke_puffs", r.smoke_puffs},
                   {"puffs_drawn_last_frame", r.puffs_drawn_last_frame},
                   {"sprites_synced_last_frame", r.sprites_synced_last_frame},
                   {"animated_roots", r.animated_roots},
                   {"animated_nodes", r.animated_nodes}};
  j["compaction"] = {{"moves", r.compact_moves},
                     {"frames_moving", r.compact_frames},
                     {"spark_full_page_share_end", r.spark_full_page_share_end}};
  j["fog_density_last"] = r.fog_density_last;
  j["memory_bytes_at_peak"] = {{"entity_manager", r.memory_entity_manager},
                               {"transforms", r.memory_transforms},
                               {"entity_index", r.memory_entity_index},
                               {"entity_index_prototypes", r.memory_index_prototypes},
                               {"entity_pages", r.memory_pages},
                               {"components", r.memory_components}};
  j["num_prototypes"] = r.num_prototypes;
  j["teardown"] = {{"clean", r.teardown_clean}, {"detail", r.teardown_detail}};
  j["run_seconds"] = r.run_seconds;
  return j;
}

}  // namespace strata
