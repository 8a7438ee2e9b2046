// Instantiating a prefab against creating the same values by hand, in the same
// iteration of the same run: each iteration times the floor (CreateBatch +
// CreateFromBundle of a bundle holding the prefab's values, or the per-entity and
// command-buffer forms of the same) and the instantiation in two fresh worlds, and
// reports their ratio ("ratio" counter: instantiation time / floor time, summed over
// iterations).
//
//   bazel run -c opt //engine:prefab_benchmark
#include <chrono>
#include <string>
#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "benchmark/benchmark.h"
#include "engine/sample_components.h"
#include "engine/world.h"
#include "iteration/command_buffer.h"
#include "resource/entity_compiler.h"
#include "resource/format.h"

namespace strata {
namespace {

constexpr char kLevel[] = R"({"prefabs": {"spark": {"components": [
    {"type": "spark", "velocity": [0, 3, 0], "lifetime": 0.5, "max_lifetime": 2},
    {"type": "sprite", "size": 0.25, "color": [1, 0.5, 0, 1]}]}}, "entities": []})";

const std::vector<std::byte>& LevelBlob() {
  static const std::vector<std::byte>* blob = [] {
    EntityCompiler compiler;
    if (!SampleRegistry().RegisterCompilers(compiler).ok()) std::abort();
    absl::StatusOr<EntityCompiler::Result> compiled = compiler.Compile(kLevel, {});
    if (!compiled.ok()) std::abort();
    return new std::vector<std::byte>(std::move(compiled->blob));
  }();
  return *blob;
}

std::unique_ptr<World> FreshWorld() {
  absl::StatusOr<std::unique_ptr<World>> world = World::Create(SampleRegistry());
  absl::StatusOr<EntityResourceView> view = EntityResourceView::Create(LevelBlob());
  if (!world.ok() || !view.ok() || !(*world)->Spawn(*view).ok()) std::abort();
  return *std::move(world);
}

// The prefab's values, set by hand.
ComponentBundle HandBundle(World& world) {
  Spark spark;
  spark.velocity = Vector3{0, 3, 0};
  spark.lifetime = 0.5f;
  spark.max_lifetime = 2;
  Sprite sprite;
  sprite.size = 0.25f;
  sprite.color = Vector4{1, 0.5f, 0, 1};
  ComponentBundle bundle;
  bundle.Set(world.Pages<Spark>().component(), spark)
      .Set(world.Pages<Sprite>().component(), sprite);
  return bundle;
}

enum class Form { kBatch, kEach, kCommands };

double Seconds(std::chrono::steady_clock::time_point begin) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
}

void BM_Instantiate(benchmark::State& state) {
  const Form form = static_cast<Form>(state.range(0));
  const size_t n = static_cast<size_t>(state.range(1));
  double floor_total = 0, instantiate_total = 0;
  int round = 0;
  for (auto _ : state) {
    std::unique_ptr<World> floor_world = FreshWorld();
    std::unique_ptr<World> prefab_world = FreshWorld();
    const ComponentBundle bundle = HandBundle(*floor_world);
    const PrefabId spark = *prefab_world->FindPrefab("spark");
    // The floor: the same values created by hand, in the same form.
    auto run_floor = [&] {
      const auto begin = std::chrono::steady_clock::now();
      if (form == Form::kBatch) {
        std::vector<Entity> batch(n);
        floor_world->entities().CreateBatch(absl::MakeSpan(batch));
        if (!floor_world->pages().CreateFromBundle(batch, bundle).ok()) std::abort();
        benchmark::DoNotOptimize(batch.data());
      } else if (form == Form::kEach) {
        for (size_t i = 0; i < n; ++i) {
          const Entity e = floor_world->entities().Create();
          if (!floor_world->pages().CreateFromBundle(absl::MakeConstSpan(&e, 1), bundle).ok())
            std::abort();
        }
      } else {
        CommandBuffer commands(floor_world->pages());
        for (size_t i = 0; i < n; ++i) commands.Create(bundle);
        if (!floor_world->Playback(commands).ok()) std::abort();
      }
      if (!floor_world->Flush().ok()) std::abort();
      return Seconds(begin);
    };
    // The prefab.
    auto run_prefab = [&] {
      const auto begin = std::chrono::steady_clock::now();
      if (form == Form::kBatch) {
        absl::StatusOr<std::vector<Entity>> made = prefab_world->Instantiate(spark, n);
        if (!made.ok() || made->size() != n) std::abort();
        benchmark::DoNotOptimize(made->data());
      } else if (form == Form::kEach) {
        for (size_t i = 0; i < n; ++i) {
          absl::StatusOr<std::vector<Entity>> made = prefab_world->Instantiate(spark, 1);
          if (!made.ok()) std::abort();
        }
      } else {
        CommandBuffer commands(prefab_world->pages());
        for (size_t i = 0; i < n; ++i) {
          if (!prefab_world->Instantiate(commands, spark).ok()) std::abort();
        }
        if (!prefab_world->Playback(commands).ok()) std::abort();
      }
      return Seconds(begin);
    };
    // Alternated, so neither always runs on a warmer heap.
    double floor_seconds, instantiate_seconds;
    if (++round % 2 == 0) {
      floor_seconds = run_floor();
      instantiate_seconds = run_prefab();
    } else {
      instantiate_seconds = run_prefab();
      floor_seconds = run_floor();
    }
    state.SetIterationTime(instantiate_seconds);
    floor_total += floor_seconds;
    instantiate_total += instantiate_seconds;
    if (prefab_world->entities().size() != floor_world->entities().size()) std::abort();
    state.PauseTiming();
    floor_world.reset();
    prefab_world.reset();
    state.ResumeTiming();
  }
  state.counters["floor_ms"] = 1e3 * floor_total / static_cast<double>(state.iterations());
  state.counters["ratio"] = instantiate_total / floor_total;
  state.counters["ns_per_entity"] =
      1e9 * instantiate_total / static_cast<double>(state.iterations() * n);
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * n));
}

BENCHMARK(BM_Instantiate)
    ->Name("BM_Instantiate")
    ->ArgNames({"form", "n"})
    ->Args({static_cast<int>(Form::kBatch), 1000000})
    ->Args({static_cast<int>(Form::kEach), 1000000})
    ->Args({static_cast<int>(Form::kCommands), 1000000})
    ->Iterations(10)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);

// A prefab-heavy level against a flat level of the same entities and values: n
// instances of a lamp (transform, sprite, emitter, a child with a spark) that each move
// its transform, one thread. ns per output entity for both in the same iteration
// ("ratio": prefab / flat).
std::string LampLevel(int n, bool prefab) {
  constexpr absl::string_view kLampComponents =
      R"({"type": "sprite", "size": 0.5, "color": [1, 0.8, 0.2, 1]},
         {"type": "spark_emitter", "speed": 1, "spread": 0.3, "lifetime": 2, "color": [1, 1, 0, 1]})";
  constexpr absl::string_view kGlow =
      R"({"name": "glow", "components": [{"type": "spark", "velocity": [0, 1, 0], "lifetime": 1}]})";
  std::string text = "{";
  if (prefab) {
    absl::StrAppend(&text, R"("prefabs": {"lamp": {"components": [{"type": "transform"}, )", kLampComponents,
                    R"(], "children": [)", kGlow, "]}}, ");
  }
  text += R"("entities": [)";
  for (int i = 0; i < n; ++i) {
    const std::string transform = absl::StrCat(R"({"type": "transform", "position": [)", i % 1000, ", 4, ",
                                               i / 1000, "]}");
    if (i > 0) text += ",\n";
    if (prefab) {
      absl::StrAppend(&text, R"({"prefab": "lamp", "components": [)", transform, "]}");
    } else {
      absl::StrAppend(&text, R"({"components": [)", transform, ", ", kLampComponents, R"(], "children": [)",
                      kGlow, "]}");
    }
  }
  text += "]}";
  return text;
}

void BM_CompilePrefabLevel(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  const std::string prefab_text = LampLevel(n, true);
  const std::string flat_text = LampLevel(n, false);
  EntityCompiler compiler;
  if (!SampleRegistry().RegisterCompilers(compiler).ok()) std::abort();
  double flat_total = 0, prefab_total = 0;
  int round = 0;
  for (auto _ : state) {
    auto run = [&](const std::string& text) {
      const auto begin = std::chrono::steady_clock::now();
      absl::StatusOr<EntityCompiler::Result> compiled = compiler.Compile(text, {});
      if (!compiled.ok() || compiled->num_entities != 2u * static_cast<uint32_t>(n)) std::abort();
      benchmark::DoNotOptimize(compiled->blob.data());
      return Seconds(begin);
    };
    double flat_seconds, prefab_seconds;
    if (++round % 2 == 0) {
      flat_seconds = run(flat_text);
      prefab_seconds = run(prefab_text);
    } else {
      prefab_seconds = run(prefab_text);
      flat_seconds = run(flat_text);
    }
    state.SetIterationTime(prefab_seconds);
    flat_total += flat_seconds;
    prefab_total += prefab_seconds;
  }
  const double entities = static_cast<double>(state.iterations()) * 2 * n;
  state.counters["flat_ns_per_entity"] = 1e9 * flat_total / entities;
  state.counters["prefab_ns_per_entity"] = 1e9 * prefab_total / entities;
  state.counters["ratio"] = prefab_total / flat_total;
  state.counters["prefab_MB"] = static_cast<double>(prefab_text.size()) / 1e6;
  state.counters["flat_MB"] = static_cast<double>(flat_text.size()) / 1e6;
}

BENCHMARK(BM_CompilePrefabLevel)
    ->Name("BM_Compile/lamps")
    ->Arg(100000)
    ->Iterations(5)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);

// A prefab-heavy level: `instances` instances of `prefabs` prefabs, each prefab a
// transform, a sprite and a spark emitter of its own values; every instance placed by
// the level (its transform), and one in ten overriding its sprite's size.
std::string PrefabHeavyLevel(int instances, int prefabs) {
  std::string text = R"({"prefabs": {)";
  for (int p = 0; p < prefabs; ++p) {
    absl::StrAppend(&text, p == 0 ? "" : ",", "\"kind", p, R"(": {"components": [{"type": "transform", "scale": [1, )",
                    1 + p, R"(, 1]}, {"type": "sprite", "size": )", 1 + p, R"(, "color": [0.5, 0.5, 0.)", p,
                    R"(, 1]}, {"type": "spark_emitter", "speed": )", 2 + p, R"(, "spread": 0.5, "lifetime": 1}]})");
  }
  text += R"(}, "entities": [)";
  for (int i = 0; i < instances; ++i) {
    absl::StrAppend(&text, i == 0 ? "" : ",", R"({"prefab": "kind)", i % prefabs,
                    R"(", "components": [{"type": "transform", "position": [)", i % 1000, ", 0, ", i / 1000, "]}");
    if (i % 10 == 0) absl::StrAppend(&text, R"(, {"type": "sprite", "size": 9})");
    text += "]}";
  }
  text += "]}";
  return text;
}

// SaveAll of that level spawned, as deltas (each instance its prefab plus what it
// overrides) against full copies, in the same iteration. The sizes are deterministic:
// "delta_bytes", "full_bytes" and their "size_ratio" are the figures; "time_ratio" is
// the delta save's time over the full save's.
void BM_SavePrefabLevel(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  EntityCompiler compiler;
  if (!SampleRegistry().RegisterCompilers(compiler).ok()) std::abort();
  absl::StatusOr<EntityCompiler::Result> compiled = compiler.Compile(PrefabHeavyLevel(n, 10), {});
  absl::StatusOr<std::unique_ptr<World>> world = World::Create(SampleRegistry());
  if (!compiled.ok() || !world.ok()) std::abort();
  absl::StatusOr<EntityResourceView> view = EntityResourceView::Create(compiled->blob);
  if (!view.ok() || !(*world)->Spawn(*view).ok()) std::abort();
  SaveOptions full;
  full.prefab_deltas = false;
  double delta_total = 0, full_total = 0;
  size_t delta_bytes = 0, full_bytes = 0;
  for (auto _ : state) {
    auto begin = std::chrono::steady_clock::now();
    absl::StatusOr<std::vector<std::byte>> delta = (*world)->SaveAll();
    const double delta_seconds = Seconds(begin);
    begin = std::chrono::steady_clock::now();
    absl::StatusOr<std::vector<std::byte>> whole = (*world)->SaveAll(full);
    const double full_seconds = Seconds(begin);
    if (!delta.ok() || !whole.ok()) std::abort();
    delta_bytes = delta->size();
    full_bytes = whole->size();
    state.SetIterationTime(delta_seconds);
    delta_total += delta_seconds;
    full_total += full_seconds;
  }
  state.counters["delta_bytes"] = static_cast<double>(delta_bytes);
  state.counters["full_bytes"] = static_cast<double>(full_bytes);
  state.counters["size_ratio"] = static_cast<double>(delta_bytes) / static_cast<double>(full_bytes);
  state.counters["time_ratio"] = delta_total / full_total;
}

BENCHMARK(BM_SavePrefabLevel)
    ->Name("BM_Save/prefab_instances")
    ->Arg(100000)
    ->Iterations(3)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace strata

BENCHMARK_MAIN();
