// World::Reload of a 1M-entity level against a full respawn of the same level, in the
// same iteration of the same run. The level: 250k groups of a named root and three
// named children, each entity with a transform and an "hp" page component. Cases:
//   ChangedField: the new blob differs in one field (hp) of 1% of the entities;
//   InsertedAtTop: the new blob has one entity more, before all the others (so every
//     entity's number moves by one).
// Each iteration times, from the new blob validated (an EntityResource, as a game's
// loader hands it on): Reload in one world, and the floor in another: a DestroyBatch
// of the level's entities and a SpawnLevel of the new blob. "ratio" is
// reload / respawn, summed over iterations; "level_bytes_per_entity" what the world
// keeps for the next reload.
//
//   bazel run -c opt //engine:reload_benchmark
#include <chrono>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/matrix.h"
#include "benchmark/benchmark.h"
#include "component/declare.h"
#include "component/registry.h"
#include "engine/world.h"
#include "resource/format.h"
#include "resource/metadata.h"

namespace strata {
namespace {

struct Hp {
  float hp = 10;
  float max = 10;
};

const ComponentRegistry& Registry() {
  static const ComponentRegistry* registry = [] {
    auto* r = new ComponentRegistry();
    if (!r->Add(ComponentDeclaration<Hp>("hp").Field("hp", &Hp::hp).Field("max", &Hp::max).Build()).ok()) {
      std::abort();
    }
    return r;
  }();
  return *registry;
}

// Level: `groups` groups; with `inserted`, one more root before them; entity k of the
// groups has hp 10 + `salt` where k % 100 == 0.
std::vector<std::byte> Level(uint32_t groups, bool inserted, float salt) {
  const ComponentType& transform = *Registry().Find("transform");
  const ComponentType& hp = *Registry().Find("hp");
  EntityResourceContents contents;
  MetadataSections meta;
  ComponentTypeContents transforms;
  transforms.type = transform.id();
  transforms.instance_stride = transform.instance_size();
  transforms.layout_fingerprint = transform.fingerprint();
  ComponentTypeContents hps;
  hps.type = hp.id();
  hps.instance_stride = hp.instance_size();
  hps.layout_fingerprint = hp.fingerprint();
  const uint32_t n = groups * 4 + (inserted ? 1 : 0);
  contents.parent_index.reserve(n);
  transforms.data.reserve(size_t{n} * 64);
  hps.data.reserve(size_t{n} * 8);
  auto add = [&](uint32_t parent, std::string name, uint32_t k) {
    const uint32_t number = static_cast<uint32_t>(contents.parent_index.size());
    contents.parent_index.push_back(parent);
    meta.named_entities.push_back(number);
    meta.entity_names.push_back(std::move(name));
    const Matrix4x4 local = Matrix4x4::Translation(static_cast<float>(k % 1000), 0, 0);
    const auto* bytes = reinterpret_cast<const std::byte*>(local.m);
    transforms.data.insert(transforms.data.end(), bytes, bytes + 64);
    transforms.entity_index.push_back(number);
    transforms.names.push_back(transform.id().value());
    const Hp value{k % 100 == 0 ? 10 + salt : 10, 10};
    const auto* hp_bytes = reinterpret_cast<const std::byte*>(&value);
    hps.data.insert(hps.data.end(), hp_bytes, hp_bytes + sizeof(Hp));
    hps.entity_index.push_back(number);
    hps.names.push_back(hp.id().value());
    return number;
  };
  if (inserted) add(kNoParent, "inserted", 1);
  uint32_t k = 0;
  for (uint32_t g = 0; g < groups; ++g) {
    const uint32_t root = add(kNoParent, absl::StrCat("g", g), k++);
    add(root, "a", k++);
    add(root, "b", k++);
    add(root, "c", k++);
  }
  meta.layout_types = {transform.id().value(), hp.id().value()};
  meta.layouts = {transform.layout(), hp.layout()};
  std::move(meta).AppendTo(contents.component_types, kNativeEndianness);
  contents.component_types.push_back(std::move(transforms));
  contents.component_types.push_back(std::move(hps));
  absl::StatusOr<std::vector<std::byte>> blob = WriteEntityResource(contents);
  if (!blob.ok()) std::abort();
  return *std::move(blob);
}

double Seconds(std::chrono::steady_clock::time_point begin) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
}

std::unique_ptr<World> SpawnedWorld(const std::vector<std::byte>& blob) {
  absl::StatusOr<std::unique_ptr<World>> world = World::Create(Registry());
  if (!world.ok() || !(*world)->SpawnLevel(blob).ok()) std::abort();
  return *std::move(world);
}

enum class Case { kChangedField, kInsertedAtTop };

void BM_Reload(benchmark::State& state) {
  const Case edit = static_cast<Case>(state.range(0));
  const uint32_t groups = static_cast<uint32_t>(state.range(1)) / 4;
  const std::vector<std::byte> base = Level(groups, false, 0);
  std::unique_ptr<World> reloaded = SpawnedWorld(base);
  std::unique_ptr<World> respawned = SpawnedWorld(base);
  // Warm-up, untimed: both worlds once through the largest level, so that neither pays
  // for growing its stores (the transform store copies itself when it grows) in the
  // timed part, as a running game would not.
  if (!reloaded->Reload(Level(groups, true, 0)).ok() || !reloaded->Reload(base).ok()) std::abort();
  {
    const std::vector<Entity> old(respawned->LevelEntities().begin(), respawned->LevelEntities().end());
    if (!respawned->DestroyBatch(old).ok() || !respawned->SpawnLevel(Level(groups, true, 0)).ok()) std::abort();
  }
  double reload_total = 0, respawn_total = 0;
  size_t level_bytes = 0;
  int round = 0;
  for (auto _ : state) {
    ++round;
    // The edited level; for InsertedAtTop the next iteration goes back to the base
    // level first (untimed), so each timed reload inserts one entity.
    std::vector<std::byte> edited =
        edit == Case::kChangedField ? Level(groups, false, static_cast<float>(round)) : Level(groups, true, 0);
    // Both start from the validated blob, as a game has it from its loader.
    absl::StatusOr<EntityResource> for_reload = EntityResource::Create(edited);
    absl::StatusOr<EntityResource> for_respawn = EntityResource::Create(std::move(edited));
    if (!for_reload.ok() || !for_respawn.ok()) std::abort();
    const auto begin_reload = std::chrono::steady_clock::now();
    absl::StatusOr<ReloadReport> report = reloaded->Reload(*std::move(for_reload));
    const double reload = Seconds(begin_reload);
    if (!report.ok()) std::abort();
    const uint32_t expect_written = edit == Case::kChangedField ? groups * 4 / 100 : 0;
    if (report->fields_written != expect_written ||
        report->entities_added != (edit == Case::kInsertedAtTop ? 1u : 0u)) {
      std::abort();
    }
    level_bytes = report->level_bytes;

    const std::vector<Entity> old(respawned->LevelEntities().begin(), respawned->LevelEntities().end());
    const auto begin_respawn = std::chrono::steady_clock::now();
    if (!respawned->DestroyBatch(old).ok()) std::abort();
    // SpawnLevel: the spawn, and the blob and handles kept (as Reload keeps them).
    if (!respawned->SpawnLevel(*std::move(for_respawn)).ok()) std::abort();
    const double respawn = Seconds(begin_respawn);
    state.SetIterationTime(reload);
    reload_total += reload;
    respawn_total += respawn;
    // For InsertedAtTop, the reloaded world goes back to the base level (untimed).
    if (edit == Case::kInsertedAtTop && !reloaded->Reload(base).ok()) std::abort();
  }
  state.counters["reload_ms"] = benchmark::Counter(1e3 * reload_total / round);
  state.counters["respawn_ms"] = benchmark::Counter(1e3 * respawn_total / round);
  state.counters["ratio"] = benchmark::Counter(reload_total / respawn_total);
  state.counters["level_bytes_per_entity"] =
      benchmark::Counter(static_cast<double>(level_bytes) / (groups * 4));
}
BENCHMARK(BM_Reload)
    ->ArgNames({"case", "entities"})
    ->Args({static_cast<int>(Case::kChangedField), 1000000})
    ->Args({static_cast<int>(Case::kInsertedAtTop), 1000000})
    ->Args({static_cast<int>(Case::kChangedField), 10000})
    ->Args({static_cast<int>(Case::kInsertedAtTop), 10000})
    ->Iterations(5)  // each iteration builds a 1M-entity level: a bounded run
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace strata
