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
// Counters: ns_per_entity (per level entity).
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "benchmark/benchmark.h"
#include "component/component_type.h"
#include "engine/sample_components.h"
#include "engine/world.h"
#include "resource/entity_compiler.h"
#include "resource/entity_spawner.h"
#include "transform/transform_resource.h"

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

// A level of n entities in a flat hierarchy of chains of 4, each with a transform.
const std::vector<std::byte>& TransformLevel(int64_t n) {
  static auto* cache = new absl::flat_hash_map<int64_t, std::vector<std::byte>>();
  auto it = cache->find(n);
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
  absl::StatusOr<std::vector<std::byte>> blob = WriteEntityResource(contents);
  if (!blob.ok()) std::abort();
  return cache->emplace(n, *std::move(blob)).first->second;
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
    return world.sprites().Spawn(SpawnOwners(batch), batch.names, batch.data, &world.index());
  }));
  ok(spawner.RegisterComponentSpawner("spark", [&world, check](const ComponentSpawnBatch& batch) {
    STRATA_RETURN_IF_ERROR(check(batch, sizeof(Spark)));
    return world.sparks().Spawn(SpawnOwners(batch), batch.names, batch.data, &world.index());
  }));
  ok(spawner.RegisterComponentSpawner("spark_emitter", [&world, check](const ComponentSpawnBatch& batch) {
    STRATA_RETURN_IF_ERROR(check(batch, sizeof(SparkEmitter)));
    return world.emitters().Spawn(SpawnOwners(batch), batch.names, batch.data, &world.index());
  }));
  ok(spawner.RegisterComponentSpawner("render_data", [&world, check](const ComponentSpawnBatch& batch) {
    STRATA_RETURN_IF_ERROR(check(batch, sizeof(RenderData)));
    const auto* objects = reinterpret_cast<const RenderData*>(batch.data.data());
    const std::vector<Entity> owners = SpawnOwners(batch);
    STRATA_RETURN_IF_ERROR(world.render_data().Spawn(owners, batch.names,
                                                     absl::MakeConstSpan(objects, batch.num_instances)));
    return RegisterSpawnedByName(world.index(), &world.render_data(), owners, batch.names);
  }));
  return owned;
}

void SpawnLoop(benchmark::State& state, const std::vector<std::byte>& blob, bool declared) {
  absl::StatusOr<EntityResourceView> view = EntityResourceView::Create(blob);
  absl::StatusOr<std::unique_ptr<DemoWorld>> world = DemoWorld::Create();
  if (!view.ok() || !world.ok()) std::abort();
  std::unique_ptr<EntitySpawner> hand_written = HandWrittenSpawner(**world);
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
BENCHMARK(BM_SpawnTransforms)->Name("BM_Spawn/Transforms")->Arg(100000)->Arg(1000000)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace strata

BENCHMARK_MAIN();
