// CommandBuffer's cost against its floors, in one binary and one run:
//
//   bazel run -c opt //iteration:command_buffer_benchmark
//
// BM_Commands/Record/N: recording N Add commands (entity + a 12-byte value), against
// BM_Floor/RecordVector/N: appending the same bytes (an Entity and a value per
// command) to a plain std::vector, reserved, as the buffer's arrays are after a frame.
// BM_Commands/Playback/N: playing those N Adds back, against BM_Floor/SpanAdd/N: the
// span-form Add of the same entities and values (EntityPages::AddEach). Both then
// remove the component again, untimed.
// BM_Commands/PlaybackObserved/N: the same playback with an OnAdd observer
// (ComponentEvents) that sums the added entities' indices, played back and flushed by
// ComponentEvents::Playback as a World does; against Playback plus
// BM_Floor/ObserverWork/N (the observer's own work on a span of N entities). Counter bytes_per_command: the buffer's bytes
// (targets, values and run records) divided by the commands, computed from its sizes.
#include <cstddef>
#include <cstring>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "benchmark/benchmark.h"
#include "entity/entity.h"
#include "entity/entity_manager.h"
#include "iteration/command_buffer.h"
#include "iteration/component_events.h"
#include "iteration/entity_pages.h"

namespace strata {
namespace {

struct Velocity {
  float x = 0;
  float y = 0;
  float z = 0;
};

struct Setup {
  EntityManager manager;
  EntityPages pages{manager};
  Component<Velocity> vel;
  std::vector<Entity> entities;
  std::vector<Velocity> values;

  explicit Setup(size_t n) : entities(n), values(n) {
    vel = *pages.RegisterComponent<Velocity>("velocity");
    manager.CreateBatch(absl::MakeSpan(entities));
    // The entities are in the store (another component), as a game's are.
    const Component<float> other = *pages.RegisterComponent<float>("other");
    if (!pages.Add(absl::MakeConstSpan(entities), other, 1.0f).ok()) std::abort();
    for (size_t i = 0; i < n; ++i) values[i] = Velocity{float(i), 1, 2};
  }
};

// ns_per_command: time per command, from the iterations of n commands each.
void ReportNsPerCommand(benchmark::State& state, size_t n) {
  state.counters["ns_per_command"] =
      benchmark::Counter(static_cast<double>(state.iterations() * n),
                         benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

void BM_CommandsRecord(benchmark::State& state) {
  const size_t n = static_cast<size_t>(state.range(0));
  Setup s(n);
  CommandBuffer commands(s.pages);
  for (size_t i = 0; i < n; ++i) commands.Add(s.entities[i], s.vel, s.values[i]);
  commands.Clear();  // memory kept, as from frame to frame
  for (auto _ : state) {
    for (size_t i = 0; i < n; ++i) commands.Add(s.entities[i], s.vel, s.values[i]);
    benchmark::DoNotOptimize(commands.size());
    state.PauseTiming();
    commands.Clear();
    state.ResumeTiming();
  }
  for (size_t i = 0; i < n; ++i) commands.Add(s.entities[i], s.vel, s.values[i]);
  state.counters["bytes_per_command"] =
      static_cast<double>(commands.RecordedBytes()) / static_cast<double>(commands.size());
  ReportNsPerCommand(state, n);
}

void BM_FloorRecordVector(benchmark::State& state) {
  const size_t n = static_cast<size_t>(state.range(0));
  Setup s(n);
  std::vector<std::byte> bytes;
  bytes.reserve(n * (sizeof(Entity) + sizeof(Velocity)));
  for (auto _ : state) {
    for (size_t i = 0; i < n; ++i) {
      const size_t at = bytes.size();
      bytes.resize(at + sizeof(Entity) + sizeof(Velocity));
      std::memcpy(bytes.data() + at, &s.entities[i], sizeof(Entity));
      std::memcpy(bytes.data() + at + sizeof(Entity), &s.values[i], sizeof(Velocity));
    }
    benchmark::DoNotOptimize(bytes.data());
    state.PauseTiming();
    bytes.clear();
    state.ResumeTiming();
  }
  ReportNsPerCommand(state, n);
}

void BM_CommandsPlayback(benchmark::State& state) {
  const size_t n = static_cast<size_t>(state.range(0));
  Setup s(n);
  CommandBuffer commands(s.pages);
  for (auto _ : state) {
    state.PauseTiming();
    for (size_t i = 0; i < n; ++i) commands.Add(s.entities[i], s.vel, s.values[i]);
    state.ResumeTiming();
    const CommandBuffer::Result result = commands.Playback(s.manager, s.pages);
    state.PauseTiming();
    if (result.applied != n) std::abort();
    if (!s.pages.Remove(absl::MakeConstSpan(s.entities), s.vel.id).ok()) std::abort();
    state.ResumeTiming();
  }
  ReportNsPerCommand(state, n);
}

void BM_CommandsPlaybackObserved(benchmark::State& state) {
  const size_t n = static_cast<size_t>(state.range(0));
  Setup s(n);
  ComponentEvents events(s.manager, s.pages);
  uint64_t sum = 0;
  ComponentEvents::Subscription observer =
      events.OnAdd(s.vel, [&sum](absl::Span<const Entity> added, CommandBuffer&) {
        for (Entity e : added) sum += e.index();
      });
  CommandBuffer commands(s.pages);
  for (auto _ : state) {
    state.PauseTiming();
    for (size_t i = 0; i < n; ++i) commands.Add(s.entities[i], s.vel, s.values[i]);
    state.ResumeTiming();
    const absl::StatusOr<CommandBuffer::Result> result = events.Playback(commands);
    state.PauseTiming();
    if (!result.ok() || result->applied != n) std::abort();
    if (!s.pages.Remove(absl::MakeConstSpan(s.entities), s.vel.id).ok()) std::abort();
    state.ResumeTiming();
  }
  benchmark::DoNotOptimize(sum);
  ReportNsPerCommand(state, n);
}

void BM_FloorObserverWork(benchmark::State& state) {
  const size_t n = static_cast<size_t>(state.range(0));
  Setup s(n);
  uint64_t sum = 0;
  for (auto _ : state) {
    for (Entity e : s.entities) sum += e.index();
    benchmark::DoNotOptimize(sum);
  }
  ReportNsPerCommand(state, n);
}

void BM_FloorSpanAdd(benchmark::State& state) {
  const size_t n = static_cast<size_t>(state.range(0));
  Setup s(n);
  const auto bytes = absl::MakeConstSpan(reinterpret_cast<const std::byte*>(s.values.data()),
                                         n * sizeof(Velocity));
  for (auto _ : state) {
    if (!s.pages.AddEach(s.entities, s.vel.id, bytes).ok()) std::abort();
    state.PauseTiming();
    if (!s.pages.Remove(absl::MakeConstSpan(s.entities), s.vel.id).ok()) std::abort();
    state.ResumeTiming();
  }
  ReportNsPerCommand(state, n);
}

BENCHMARK(BM_CommandsRecord)->Name("BM_Commands/Record")->Arg(1 << 20)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_FloorRecordVector)->Name("BM_Floor/RecordVector")->Arg(1 << 20)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_CommandsPlayback)->Name("BM_Commands/Playback")->Arg(1 << 20)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_CommandsPlaybackObserved)->Name("BM_Commands/PlaybackObserved")->Arg(1 << 20)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_FloorObserverWork)->Name("BM_Floor/ObserverWork")->Arg(1 << 20)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_FloorSpanAdd)->Name("BM_Floor/SpanAdd")->Arg(1 << 20)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace strata
