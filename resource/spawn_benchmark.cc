// Spawning a level: the article's batched spawn (one CreateBatch, then one call per
// component type with every instance) against its "before the pivot" order (create
// entity A, add A's components one at a time, create entity B, ...), on the same
// component managers and the same level; and the JSON compiler's throughput.
//
//   bazel run -c opt //resource:spawn_benchmark --
//       --benchmark_repetitions=5 --benchmark_report_aggregates_only=true   (one line)
//
// Level: N entities in groups of four (a root and three children), each with three
// components: "transform" (position, rotation, scale -> local and world matrix, linked
// to the parent's instance), "mesh" (mesh id and material id) and "actor" (health and
// team). The component managers are SoA arrays with an entity-index -> instance table,
// kept across restarts like a game's managers would be.
//
// The PerEntity baseline walks a per-entity layout built from the same blob outside the
// timed region (entity record: parent, component count, then per component: type id,
// name, size, data), looks up each component's spawn function by type id, and calls it
// with a batch of one: the same spawn functions, used one instance at a time.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "base/id_string.h"
#include "base/status_macros.h"
#include "benchmark/benchmark.h"
#include "entity/entity.h"
#include "entity/entity_manager.h"
#include "resource/entity_compiler.h"
#include "resource/entity_spawner.h"
#include "resource/format.h"

namespace strata {
namespace {

constexpr uint32_t kNone = 0xFFFFFFFFu;

struct Mat4 {
  float m[16];
};

// Row-major, row vectors: world = local * parent_world.
Mat4 Multiply(const Mat4& a, const Mat4& b) {
  Mat4 r;
  for (int i = 0; i < 4; ++i) {
    for (int j = 0; j < 4; ++j) {
      r.m[4 * i + j] = a.m[4 * i + 0] * b.m[0 + j] + a.m[4 * i + 1] * b.m[4 + j] +
                       a.m[4 * i + 2] * b.m[8 + j] + a.m[4 * i + 3] * b.m[12 + j];
    }
  }
  return r;
}

// NOTE: transform instance data: position[3], rotation[4] (x, y, z, w), scale[3].
constexpr uint32_t kTransformSize = 40;
constexpr uint32_t kMeshSize = 8;
constexpr uint32_t kActorSize = 8;

Mat4 FromTrs(const float* trs) {
  const float x = trs[3], y = trs[4], z = trs[5], w = trs[6];
  const float sx = trs[7], sy = trs[8], sz = trs[9];
  Mat4 r = {{
      (1 - 2 * (y * y + z * z)) * sx, 2 * (x * y + z * w) * sx, 2 * (x * z - y * w) * sx, 0,
      2 * (x * y - z * w) * sy, (1 - 2 * (x * x + z * z)) * sy, 2 * (y * z + x * w) * sy, 0,
      2 * (x * z + y * w) * sz, 2 * (y * z - x * w) * sz, (1 - 2 * (x * x + y * y)) * sz, 0,
      trs[0], trs[1], trs[2], 1,
  }};
  return r;
}

// Entity index -> instance table shared by the managers' shape.
struct Lookup {
  std::vector<uint32_t> instance_of;
  void Ensure(uint32_t entity_index) {
    if (entity_index >= instance_of.size()) instance_of.resize(entity_index + 1024, kNone);
  }
  void Clear() { std::fill(instance_of.begin(), instance_of.end(), kNone); }
};

struct TransformManager {
  std::vector<Entity> entity;
  std::vector<IdString32> name;
  std::vector<Mat4> local;
  std::vector<Mat4> world;
  std::vector<uint32_t> parent;
  Lookup lookup;

  uint32_t Add(Entity e, IdString32 n, const float* trs, uint32_t parent_instance) {
    const uint32_t i = static_cast<uint32_t>(entity.size());
    lookup.Ensure(e.index());
    lookup.instance_of[e.index()] = i;
    entity.push_back(e);
    name.push_back(n);
    local.push_back(FromTrs(trs));
    parent.push_back(parent_instance);
    world.push_back(parent_instance == kNone ? local.back()
                                             : Multiply(local.back(), world[parent_instance]));
    return i;
  }
  // Reserve: grows geometrically, so a batch of one (the per-entity path) stays
  // amortised O(1) while a large batch grows each column once.
  void Reserve(size_t n) {
    if (n <= entity.capacity()) return;
    n = std::max(n, 2 * entity.capacity());
    entity.reserve(n), name.reserve(n), local.reserve(n), world.reserve(n), parent.reserve(n);
  }
  void Clear() {
    entity.clear(), name.clear(), local.clear(), world.clear(), parent.clear();
    lookup.Clear();
  }
};

struct MeshManager {
  std::vector<Entity> entity;
  std::vector<IdString32> name;
  std::vector<uint32_t> mesh;
  std::vector<uint32_t> material;
  Lookup lookup;
  void Clear() {
    entity.clear(), name.clear(), mesh.clear(), material.clear();
    lookup.Clear();
  }
};

struct ActorManager {
  std::vector<Entity> entity;
  std::vector<IdString32> name;
  std::vector<float> health;
  std::vector<uint32_t> team;
  Lookup lookup;
  void Clear() {
    entity.clear(), name.clear(), health.clear(), team.clear();
    lookup.Clear();
  }
};

struct World {
  EntityManager entities;
  TransformManager transforms;
  MeshManager meshes;
  ActorManager actors;
  void Clear() {
    transforms.Clear();
    meshes.Clear();
    actors.Clear();
  }
};

uint32_t MaxIndex(const ComponentSpawnBatch& b) {
  uint32_t max_index = 0;
  for (uint32_t i = 0; i < b.num_instances; ++i) max_index = std::max(max_index, b.entity(i).index());
  return max_index;
}

absl::Status SpawnTransforms(const ComponentSpawnBatch& b) {
  if (b.instance_stride != kTransformSize) return absl::DataLossError("transform stride");
  TransformManager& tm = static_cast<World*>(b.context)->transforms;
  // Batch economy: grow every column and the lookup table once.
  tm.lookup.Ensure(MaxIndex(b));
  tm.Reserve(tm.entity.size() + b.num_instances);
  for (uint32_t i = 0; i < b.num_instances; ++i) {
    float trs[10];
    std::memcpy(trs, b.data.data() + size_t{i} * kTransformSize, sizeof(trs));
    const uint32_t parent_entity = b.parent_index[b.entity_index[i]];
    uint32_t parent_instance = kNone;
    if (parent_entity != kNoParent) {
      const uint32_t p = b.entities[parent_entity].index();
      if (p < tm.lookup.instance_of.size()) parent_instance = tm.lookup.instance_of[p];
    }
    tm.Add(b.entity(i), b.name(i), trs, parent_instance);
  }
  return absl::OkStatus();
}

absl::Status SpawnMeshes(const ComponentSpawnBatch& b) {
  if (b.instance_stride != kMeshSize) return absl::DataLossError("mesh stride");
  MeshManager& mm = static_cast<World*>(b.context)->meshes;
  mm.lookup.Ensure(MaxIndex(b));
  for (uint32_t i = 0; i < b.num_instances; ++i) {
    uint32_t v[2];
    std::memcpy(v, b.data.data() + size_t{i} * kMeshSize, sizeof(v));
    const Entity e = b.entity(i);
    mm.lookup.instance_of[e.index()] = static_cast<uint32_t>(mm.entity.size());
    mm.entity.push_back(e);
    mm.name.push_back(b.name(i));
    mm.mesh.push_back(v[0]);
    mm.material.push_back(v[1]);
  }
  return absl::OkStatus();
}

absl::Status SpawnActors(const ComponentSpawnBatch& b) {
  if (b.instance_stride != kActorSize) return absl::DataLossError("actor stride");
  ActorManager& am = static_cast<World*>(b.context)->actors;
  am.lookup.Ensure(MaxIndex(b));
  for (uint32_t i = 0; i < b.num_instances; ++i) {
    float health;
    uint32_t team;
    std::memcpy(&health, b.data.data() + size_t{i} * kActorSize, 4);
    std::memcpy(&team, b.data.data() + size_t{i} * kActorSize + 4, 4);
    const Entity e = b.entity(i);
    am.lookup.instance_of[e.index()] = static_cast<uint32_t>(am.entity.size());
    am.entity.push_back(e);
    am.name.push_back(b.name(i));
    am.health.push_back(health);
    am.team.push_back(team);
  }
  return absl::OkStatus();
}

struct Registry {
  EntitySpawner spawner;
  // The per-entity baseline's own dispatch table: type id -> the same functions.
  absl::flat_hash_map<uint32_t, SpawnFunction> by_type;

  Registry() {
    const std::pair<const char*, SpawnFunction> types[] = {
        {"transform", SpawnTransforms}, {"mesh", SpawnMeshes}, {"actor", SpawnActors}};
    for (const auto& [name, fn] : types) {
      if (!spawner.RegisterComponentSpawner(name, fn).ok()) std::abort();
      by_type[IdString32(name).value()] = fn;
    }
  }
};

// Compile functions for BM_Compile: the same three components from JSON.
absl::Status CompileTransform(const nlohmann::json& c, ComponentDataWriter& out) {
  STRATA_RETURN_IF_ERROR(CheckComponentKeys(c, {"position", "rotation", "scale"}));
  float trs[10] = {0, 0, 0, 0, 0, 0, 1, 1, 1, 1};
  STRATA_RETURN_IF_ERROR(ReadFloats(c, "position", absl::MakeSpan(trs, 3)));
  STRATA_RETURN_IF_ERROR(ReadFloats(c, "rotation", absl::MakeSpan(trs + 3, 4)));
  STRATA_RETURN_IF_ERROR(ReadFloats(c, "scale", absl::MakeSpan(trs + 7, 3)));
  for (float f : trs) out.WriteF32(f);
  return absl::OkStatus();
}

absl::Status CompileMesh(const nlohmann::json& c, ComponentDataWriter& out) {
  STRATA_RETURN_IF_ERROR(CheckComponentKeys(c, {"mesh", "material"}));
  std::string mesh, material;
  STRATA_RETURN_IF_ERROR(ReadString(c, "mesh", &mesh));
  STRATA_RETURN_IF_ERROR(ReadString(c, "material", &material));
  out.WriteU32(IdString32::Hash(mesh));
  out.WriteU32(IdString32::Hash(material));
  return absl::OkStatus();
}

absl::Status CompileActor(const nlohmann::json& c, ComponentDataWriter& out) {
  STRATA_RETURN_IF_ERROR(CheckComponentKeys(c, {"health", "team"}));
  float health = 100;
  uint32_t team = 0;
  STRATA_RETURN_IF_ERROR(ReadFloat(c, "health", &health));
  STRATA_RETURN_IF_ERROR(ReadUint32(c, "team", &team));
  out.WriteF32(health);
  out.WriteU32(team);
  return absl::OkStatus();
}

// The level as JSON: groups of a root with three children.
std::string LevelJson(int n) {
  std::string json = "{\"entities\": [";
  auto entity = [&](int i) {
    absl::StrAppend(&json, "{\"name\": \"e", i, "\", \"components\": [",
                    "{\"type\": \"transform\", \"position\": [", i % 97, ", 0, ", i % 13,
                    "], \"rotation\": [0, 0, 0.38268343, 0.9238795], \"scale\": [1, 1, 1]},",
                    "{\"type\": \"mesh\", \"mesh\": \"crate", i % 7, "\", \"material\": \"wood\"},",
                    "{\"type\": \"actor\", \"health\": ", 50 + i % 50, ", \"team\": ", i % 4, "}]");
  };
  for (int i = 0; i < n; i += 4) {
    absl::StrAppend(&json, i ? "," : "");
    entity(i);
    absl::StrAppend(&json, ", \"children\": [");
    for (int c = 1; c < 4 && i + c < n; ++c) {
      absl::StrAppend(&json, c > 1 ? "," : "");
      entity(i + c);
      absl::StrAppend(&json, "}");
    }
    absl::StrAppend(&json, "]}");
  }
  absl::StrAppend(&json, "]}");
  return json;
}

EntityCompiler& Compiler() {
  static EntityCompiler* compiler = [] {
    auto* c = new EntityCompiler;
    if (!c->RegisterComponentCompiler("transform", CompileTransform, 0, kTransformSize).ok() ||
        !c->RegisterComponentCompiler("mesh", CompileMesh, 10, kMeshSize).ok() ||
        !c->RegisterComponentCompiler("actor", CompileActor, 20, kActorSize).ok()) {
      std::abort();
    }
    return c;
  }();
  return *compiler;
}

std::vector<std::byte> LevelBlob(int n) {
  absl::StatusOr<EntityCompiler::Result> result = Compiler().Compile(LevelJson(n), {});
  if (!result.ok()) {
    std::fprintf(stderr, "%s\n", result.status().ToString().c_str());
    std::abort();
  }
  return std::move(result->blob);
}

// The "before the pivot" layout: per entity, its parent and its components inline.
// NOTE: records are 4-byte aligned; the spawn functions memcpy their fields.
std::vector<uint32_t> PerEntityLayout(const EntityResourceView& view) {
  struct Component {
    uint32_t type, name;
    absl::Span<const std::byte> data;
  };
  std::vector<std::vector<Component>> per_entity(view.num_entities());
  for (const ComponentTypeView& type : view.component_types()) {
    for (uint32_t i = 0; i < type.num_instances; ++i) {
      per_entity[type.entity_index[i]].push_back(
          {type.type.value(), type.names[i],
           type.data.subspan(size_t{i} * type.instance_stride, type.instance_stride)});
    }
  }
  std::vector<uint32_t> words;
  for (uint32_t e = 0; e < view.num_entities(); ++e) {
    words.push_back(view.parent_index()[e]);
    words.push_back(static_cast<uint32_t>(per_entity[e].size()));
    for (const Component& c : per_entity[e]) {
      words.push_back(c.type);
      words.push_back(c.name);
      words.push_back(static_cast<uint32_t>(c.data.size()));
      const size_t at = words.size();
      words.resize(at + (c.data.size() + 3) / 4);
      std::memcpy(words.data() + at, c.data.data(), c.data.size());
    }
  }
  return words;
}

// ns_per_entity: elapsed time / (iterations * n), in nanoseconds.
void SetCounters(benchmark::State& state, int n) {
  state.SetItemsProcessed(state.iterations() * n);
  state.counters["ns_per_entity"] = benchmark::Counter(
      n * 1e-9, benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}

void Restart(benchmark::State& state, World& world, absl::Span<const Entity> spawned) {
  state.PauseTiming();
  if (!world.entities.DestroyBatch(spawned).ok()) std::abort();
  world.Clear();
  state.ResumeTiming();
}

void BM_Spawn_Batched(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  const std::vector<std::byte> blob = LevelBlob(n);
  absl::StatusOr<EntityResourceView> view = EntityResourceView::Create(blob);
  if (!view.ok()) std::abort();
  Registry registry;
  World world;
  std::vector<Entity> entities(view->num_entities());
  for (auto _ : state) {
    absl::Status status =
        registry.spawner.Spawn(*view, world.entities, absl::MakeSpan(entities), &world, {});
    if (!status.ok()) {
      state.SkipWithError(std::string(status.message()).c_str());
      break;
    }
    benchmark::DoNotOptimize(world.transforms.world.data());
    Restart(state, world, entities);
  }
  SetCounters(state, n);
}

void BM_Spawn_PerEntity(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  const std::vector<std::byte> blob = LevelBlob(n);
  absl::StatusOr<EntityResourceView> view = EntityResourceView::Create(blob);
  if (!view.ok()) std::abort();
  const std::vector<uint32_t> layout = PerEntityLayout(*view);
  Registry registry;
  World world;
  std::vector<Entity> entities(view->num_entities());
  std::vector<uint32_t> parents(view->num_entities());
  for (auto _ : state) {
    const uint32_t* p = layout.data();
    for (uint32_t e = 0; e < entities.size(); ++e) {
      entities[e] = world.entities.Create();
      parents[e] = *p++;
      const uint32_t num_components = *p++;
      for (uint32_t c = 0; c < num_components; ++c) {
        const uint32_t type = p[0];
        const uint32_t size = p[2];
        ComponentSpawnBatch batch;
        batch.type = IdString32::FromValue(type);
        batch.entities = absl::MakeConstSpan(entities.data(), e + 1);
        batch.parent_index = parents;
        batch.num_instances = 1;
        batch.entity_index = absl::MakeConstSpan(&e, 1);
        batch.names = absl::MakeConstSpan(p + 1, 1);
        batch.instance_stride = size;
        batch.data = absl::MakeConstSpan(reinterpret_cast<const std::byte*>(p + 3), size);
        batch.context = &world;
        auto it = registry.by_type.find(type);
        if (it != registry.by_type.end() && !it->second(batch).ok()) std::abort();
        p += 3 + (size + 3) / 4;
      }
    }
    benchmark::DoNotOptimize(world.transforms.world.data());
    Restart(state, world, entities);
  }
  SetCounters(state, n);
}

void BM_Compile(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  const std::string json = LevelJson(n);
  size_t blob_size = 0;
  for (auto _ : state) {
    absl::StatusOr<EntityCompiler::Result> result = Compiler().Compile(json, {});
    if (!result.ok()) {
      state.SkipWithError(std::string(result.status().message()).c_str());
      break;
    }
    blob_size = result->blob.size();
    benchmark::DoNotOptimize(result->blob.data());
  }
  SetCounters(state, n);
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(json.size()));
  state.counters["blob_bytes"] = static_cast<double>(blob_size);
}

BENCHMARK(BM_Spawn_Batched)->Name("BM_Spawn/Batched")->Arg(1000)->Arg(10000)->Arg(100000)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Spawn_PerEntity)->Name("BM_Spawn/PerEntity")->Arg(1000)->Arg(10000)->Arg(100000)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Compile)->Arg(1000)->Arg(10000)->Arg(100000)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace strata
