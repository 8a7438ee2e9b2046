// Spawning and saving a World through component declarations, against hand-written
// spawn functions on the same stores (what a World did before components were
// declared), on the default level; and spawning levels of N entities with a transform
// each.
//
//   bazel run -c opt //engine:world_benchmark --
//       --benchmark_repetitions=5 --benchmark_report_aggregates_only=true   (one line)
//
// BM_Spawn/Declared vs BM_Spawn/HandWritten: the same blob, the same kind of World;
// only the spawn functions differ (and the World also keeps the entity names; the
// _without_names row spawns a blob compiled without them). BM_Save is World::SaveAll of the spawned level.
// Counters: ns_per_entity (per level entity), from wall time (UseRealTime): a large
// spawn faults its fresh storage in on a helper thread, which CPU time would not count.
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "benchmark/benchmark.h"
#include "component/component_type.h"
#include "component/transform_resource.h"
#include "engine/sample_components.h"
#include "engine/world.h"
#include "resource/entity_compiler.h"
#include "resource/entity_spawner.h"

namespace strata {
namespace {

std::vector<std::byte> CompileLevel(const std::string& json, bool keep_names) {
  EntityCompiler compiler;
  if (!SampleRegistry().RegisterCompilers(compiler).ok()) std::abort();
  EntityCompiler::Options options;
  options.keep_names = keep_names;
  absl::StatusOr<EntityCompiler::Result> result = compiler.Compile(json, options);
  if (!result.ok()) {
    std::fprintf(stderr, "%s\n", result.status().ToString().c_str());
    std::abort();
  }
  return std::move(result->blob);
}

// DefaultLevel: the default level compiled with (or without) its names metadata.
const std::vector<std::byte>& DefaultLevel(bool keep_names = true) {
  static const std::vector<std::byte>* blobs = [] {
    std::ifstream in("engine/levels/default.json");
    const std::string json((std::istreambuf_iterator<char>(in)), {});
    if (json.empty()) {
      std::fprintf(stderr, "run from the repository root (bazel run does)\n");
      std::abort();
    }
    return new std::vector<std::byte>[2]{CompileLevel(json, false), CompileLevel(json, true)};
  }();
  return blobs[keep_names ? 1 : 0];
}

// A level of n entities in a flat hierarchy of chains of 4, each with a transform;
// `named`: each entity also has a name ("entity_<k>", the names metadata the compiler
// keeps by default).
const std::vector<std::byte>& TransformLevel(int64_t n, bool named = false) {
  static auto* cache = new absl::flat_hash_map<int64_t, std::vector<std::byte>>();
  const int64_t key = named ? -n : n;
  auto it = cache->find(key);
  if (it != cache->end()) return it->second;
  EntityResourceContents contents;
  ComponentTypeContents& t = contents.component_types.emplace_back();
  t.type = IdString32("transform");
  t.instance_stride = kTransformInstanceSize;
  t.layout_fingerprint = SampleRegistry().Find("transform")->fingerprint();
  for (int64_t k = 0; k < n; ++k) {
    contents.parent_index.push_back(k % 4 == 0 ? kNoParent : static_cast<uint32_t>(k - 1));
    t.entity_index.push_back(static_cast<uint32_t>(k));
    t.names.push_back(IdString32("Transform").value());
    const Matrix4x4 local = Matrix4x4::Translation(static_cast<float>(k % 7), 1, 0);
    const auto* bytes = reinterpret_cast<const std::byte*>(local.m);
    t.data.insert(t.data.end(), bytes, bytes + sizeof(local.m));
  }
  // The layouts section, so the declared transform accepts the blob.
  contents.component_types.insert(
      contents.component_types.begin(),
      MakeStringSection(IdString32(kLayoutsSection), {0}, {IdString32("transform").value()},
                        {SampleRegistry().Find("transform")->layout()}, kNativeEndianness));
  if (named) {
    std::vector<uint32_t> entity_index(static_cast<size_t>(n));
    std::vector<std::string> names(static_cast<size_t>(n));
    for (int64_t k = 0; k < n; ++k) {
      entity_index[k] = static_cast<uint32_t>(k);
      names[k] = absl::StrCat("entity_", k);
    }
    contents.component_types.insert(
        contents.component_types.begin(),
        MakeStringSection(IdString32(kEntityNamesSection), std::move(entity_index), {}, names,
                          kNativeEndianness));
  }
  absl::StatusOr<std::vector<std::byte>> blob = WriteEntityResource(contents);
  if (!blob.ok()) std::abort();
  return cache->emplace(key, *std::move(blob)).first->second;
}

// The hand-written spawn functions: each checks the stride and hands the batch to its
// manager, as the World's own spawn functions did before declarations.
std::unique_ptr<EntitySpawner> HandWrittenSpawner(DemoWorld& world) {
  auto owned = std::make_unique<EntitySpawner>();
  EntitySpawner& spawner = *owned;
  auto check = [](const ComponentSpawnBatch& batch, size_t stride) {
    return batch.instance_stride == stride ? absl::OkStatus() : absl::DataLossError("stride");
  };
  auto ok = [](absl::Status s) {
    if (!s.ok()) std::abort();
  };
  ok(spawner.RegisterComponentSpawner("transform", [&world](const ComponentSpawnBatch& batch) {
    STRATA_RETURN_IF_ERROR(SpawnTransformBatch(world.transforms(), batch));
    return RegisterSpawnedByName(world.index(), &world.transform_manager(), SpawnOwners(batch), batch.names);
  }));
  ok(spawner.RegisterComponentSpawner("sprite", [&world, check](const ComponentSpawnBatch& batch) {
    STRATA_RETURN_IF_ERROR(check(batch, sizeof(Sprite)));
    return world.sprites().Spawn(SpawnOwners(batch), batch.names, batch.data);
  }));
  ok(spawner.RegisterComponentSpawner("spark", [&world, check](const ComponentSpawnBatch& batch) {
    STRATA_RETURN_IF_ERROR(check(batch, sizeof(Spark)));
    return world.sparks().Spawn(SpawnOwners(batch), batch.names, batch.data);
  }));
  ok(spawner.RegisterComponentSpawner("spark_emitter", [&world, check](const ComponentSpawnBatch& batch) {
    STRATA_RETURN_IF_ERROR(check(batch, sizeof(SparkEmitter)));
    return world.emitters().Spawn(SpawnOwners(batch), batch.names, batch.data);
  }));
  ok(spawner.RegisterComponentSpawner("render_data", [&world, check](const ComponentSpawnBatch& batch) {
    STRATA_RETURN_IF_ERROR(check(batch, sizeof(RenderData)));
    const auto* objects = reinterpret_cast<const RenderData*>(batch.data.data());
    // The manager tells the world's indexer, as every store does.
    return world.render_data().Spawn(SpawnOwners(batch), batch.names,
                                     absl::MakeConstSpan(objects, batch.num_instances));
  }));
  return owned;
}

void SpawnLoop(benchmark::State& state, const std::vector<std::byte>& blob, bool declared) {
  absl::StatusOr<EntityResourceView> view = EntityResourceView::Create(blob);
  absl::StatusOr<std::unique_ptr<DemoWorld>> world = DemoWorld::Create();
  if (!view.ok() || !world.ok()) std::abort();
  std::unique_ptr<EntitySpawner> hand_written = HandWrittenSpawner(**world);
  // One untimed spawn first: the rows measure a respawn into grown storage (a level
  // restart); BM_Spawn/FirstTransforms measures the first spawn into a new World.
  {
    absl::StatusOr<std::vector<Entity>> warm = (*world)->Spawn(*view);
    if (!warm.ok() || !(*world)->DestroyBatch(*warm).ok()) std::abort();
    (*world)->index().CollectGarbage();
  }
  for (auto _ : state) {
    absl::StatusOr<std::vector<Entity>> spawned =
        declared ? (*world)->Spawn(*view)
                 : hand_written->Spawn(*view, (*world)->entities(), nullptr);
    if (!spawned.ok()) {
      state.SkipWithError(spawned.status().ToString().c_str());
      return;
    }
    state.PauseTiming();
    if (!(*world)->DestroyBatch(*spawned).ok()) std::abort();
    (*world)->index().CollectGarbage();
    state.ResumeTiming();
  }
  state.counters["ns_per_entity"] = benchmark::Counter(
      static_cast<double>(state.iterations()) * view->num_entities(),
      benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

void BM_SpawnDeclared(benchmark::State& state) { SpawnLoop(state, DefaultLevel(), true); }
void BM_SpawnHandWritten(benchmark::State& state) { SpawnLoop(state, DefaultLevel(), false); }
// Without the names metadata: the declared spawn path alone, against the same
// hand-written functions (which never read names).
void BM_SpawnDeclaredNoNames(benchmark::State& state) { SpawnLoop(state, DefaultLevel(false), true); }
void BM_SpawnTransforms(benchmark::State& state) { SpawnLoop(state, TransformLevel(state.range(0)), true); }
void BM_SpawnNamedTransforms(benchmark::State& state) {
  SpawnLoop(state, TransformLevel(state.range(0), /*named=*/true), true);
}

// The first spawn into a new World: its storage grows and the new memory is faulted in
// (zeroed by the kernel) inside the timed spawn, as in the demo.
void FirstSpawnLoop(benchmark::State& state, const std::vector<std::byte>& blob) {
  absl::StatusOr<EntityResourceView> view = EntityResourceView::Create(blob);
  if (!view.ok()) {
    state.SkipWithError(view.status().ToString().c_str());
    return;
  }
  for (auto _ : state) {
    state.PauseTiming();
    absl::StatusOr<std::unique_ptr<DemoWorld>> world = DemoWorld::Create();
    if (!world.ok()) std::abort();
    state.ResumeTiming();
    absl::StatusOr<std::vector<Entity>> spawned = (*world)->Spawn(*view);
    if (!spawned.ok()) {
      state.SkipWithError(spawned.status().ToString().c_str());
      return;
    }
    state.PauseTiming();
    world->reset();
    state.ResumeTiming();
  }
  state.counters["ns_per_entity"] = benchmark::Counter(
      static_cast<double>(state.iterations()) * view->num_entities(),
      benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

void BM_SpawnFirstTransforms(benchmark::State& state) { FirstSpawnLoop(state, TransformLevel(state.range(0))); }

// BM_Spawn/FirstLevelFile: the first spawn of the blob at $STRATA_BENCHMARK_LEVEL_BLOB
// into a new World, a row only when that is set: tools/process_benchmark runs it beside
// the demo's spawn of the same file in a fresh process. The file is read once.
[[maybe_unused]] const bool kLevelFileRegistered = [] {
  const char* path = std::getenv("STRATA_BENCHMARK_LEVEL_BLOB");
  if (path == nullptr || *path == '\0') return false;
  benchmark::RegisterBenchmark("BM_Spawn/FirstLevelFile", [file = std::string(path)](benchmark::State& state) {
    static const std::vector<std::byte>* blob = nullptr;
    if (blob == nullptr) {
      std::ifstream in(file, std::ios::binary);
      if (!in) {
        state.SkipWithError(absl::StrCat("cannot read STRATA_BENCHMARK_LEVEL_BLOB=", file).c_str());
        return;
      }
      const std::string bytes((std::istreambuf_iterator<char>(in)), {});
      const auto* data = reinterpret_cast<const std::byte*>(bytes.data());
      blob = new std::vector<std::byte>(data, data + bytes.size());
    }
    FirstSpawnLoop(state, *blob);
  })->Iterations(5)->UseRealTime()->Unit(benchmark::kMillisecond);
  return true;
}();

// The stages of BM_Spawn/Transforms, each timed alone on the same level and World
// (the rest of the spawn runs untimed around it), so the README can say where the
// time goes; BM_Spawn/NamedTransforms minus BM_Spawn/Transforms is the names.
enum class Stage { kEntities, kTransformBatch, kIndex };

void SpawnStage(benchmark::State& state, Stage stage) {
  absl::StatusOr<EntityResourceView> view =
      EntityResourceView::Create(TransformLevel(state.range(0)));
  absl::StatusOr<std::unique_ptr<DemoWorld>> world = DemoWorld::Create();
  if (!view.ok() || !world.ok()) std::abort();
  World& w = (*world)->world();
  std::optional<ComponentTypeView> section;
  for (const ComponentTypeView& type : view->component_types()) {
    if (type.type == IdString32("transform")) section = type;
  }
  if (!section.has_value()) std::abort();
  std::vector<Entity> entities(view->num_entities());
  ComponentSpawnBatch batch;
  batch.type = section->type;
  batch.entities = entities;
  batch.parent_index = view->parent_index();
  batch.num_instances = section->num_instances;
  batch.entity_index = section->entity_index;
  batch.names = section->names;
  batch.instance_stride = section->instance_stride;
  batch.data = section->data;
  batch.layout_fingerprint = section->layout_fingerprint;
  batch.in_entity_order = InEntityOrder(section->entity_index, entities.size());
  {  // Untimed: grow the storage first, as SpawnLoop does.
    absl::StatusOr<std::vector<Entity>> warm = w.Spawn(*view);
    if (!warm.ok() || !w.DestroyBatch(*warm).ok()) std::abort();
    w.index().CollectGarbage();
  }
  auto ok = [&state](const absl::Status& s) {
    if (!s.ok()) {
      state.SkipWithError(s.ToString().c_str());
      return false;
    }
    return true;
  };
  for (auto _ : state) {
    if (stage != Stage::kEntities) {
      state.PauseTiming();
      w.entities().CreateBatch(absl::MakeSpan(entities));
      state.ResumeTiming();
    }
    switch (stage) {
      case Stage::kEntities:
        w.entities().CreateBatch(absl::MakeSpan(entities));
        break;
      case Stage::kTransformBatch:
        if (!ok(SpawnTransformBatch(w.transforms(), batch))) return;
        break;
      case Stage::kIndex:
        if (!ok(RegisterSpawnedByName(w.index(), &w.transform_manager(), batch))) {
          return;
        }
        break;
    }
    state.PauseTiming();
    if (!w.DestroyBatch(entities).ok()) std::abort();
    w.index().CollectGarbage();
    state.ResumeTiming();
  }
  state.counters["ns_per_entity"] = benchmark::Counter(
      static_cast<double>(state.iterations()) * view->num_entities(),
      benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

void BM_StageEntities(benchmark::State& state) { SpawnStage(state, Stage::kEntities); }
void BM_StageTransformBatch(benchmark::State& state) { SpawnStage(state, Stage::kTransformBatch); }
void BM_StageIndex(benchmark::State& state) { SpawnStage(state, Stage::kIndex); }

void BM_Save(benchmark::State& state) {
  absl::StatusOr<EntityResourceView> view = EntityResourceView::Create(DefaultLevel());
  absl::StatusOr<std::unique_ptr<DemoWorld>> world = DemoWorld::Create();
  if (!view.ok() || !world.ok() || !(*world)->Spawn(*view).ok()) std::abort();
  size_t bytes = 0;
  for (auto _ : state) {
    absl::StatusOr<std::vector<std::byte>> saved = (*world)->world().SaveAll();
    if (!saved.ok()) std::abort();
    bytes = saved->size();
    benchmark::DoNotOptimize(saved->data());
  }
  state.counters["bytes"] = static_cast<double>(bytes);
  state.counters["ns_per_entity"] = benchmark::Counter(
      static_cast<double>(state.iterations()) * view->num_entities(),
      benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

BENCHMARK(BM_SpawnDeclared)->Name("BM_Spawn/Declared/default_level")->Unit(benchmark::kMillisecond);
BENCHMARK(BM_SpawnHandWritten)->Name("BM_Spawn/HandWritten/default_level")->Unit(benchmark::kMillisecond);
BENCHMARK(BM_SpawnDeclaredNoNames)->Name("BM_Spawn/Declared/default_level_without_names")->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Save)->Name("BM_Save/default_level")->Unit(benchmark::kMillisecond);
BENCHMARK(BM_SpawnTransforms)->Name("BM_Spawn/Transforms")->Arg(100000)->Arg(1000000)->Iterations(10)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_SpawnNamedTransforms)->Name("BM_Spawn/NamedTransforms")->Arg(1000000)->Iterations(10)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_SpawnFirstTransforms)->Name("BM_Spawn/FirstTransforms")->Arg(1000000)->Iterations(5)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_StageEntities)->Name("BM_SpawnStage/EntityCreation")->Arg(1000000)->Iterations(10)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_StageTransformBatch)->Name("BM_SpawnStage/TransformBatch")->Arg(1000000)->Iterations(10)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_StageIndex)->Name("BM_SpawnStage/IndexRegistration")->Arg(1000000)->Iterations(10)->UseRealTime()->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace strata

BENCHMARK_MAIN();
