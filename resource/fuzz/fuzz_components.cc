#include "resource/fuzz/fuzz_components.h"

#include <cstdlib>
#include <cstring>
#include <vector>

#include "base/status_macros.h"

namespace strata::fuzz_internal {
namespace {

absl::Status CompileFixed(const nlohmann::json& config, ComponentDataWriter& out) {
  STRATA_RETURN_IF_ERROR(CheckComponentKeys(config, {"v"}));
  float v[3] = {0, 0, 0};
  STRATA_RETURN_IF_ERROR(ReadFloats(config, "v", absl::MakeSpan(v)));
  for (float f : v) out.WriteF32(f);
  return absl::OkStatus();
}

absl::Status CompileVar(const nlohmann::json& config, ComponentDataWriter& out) {
  STRATA_RETURN_IF_ERROR(CheckComponentKeys(config, {"n"}));
  uint32_t n = 0;
  STRATA_RETURN_IF_ERROR(ReadUint32(config, "n", &n));
  if (n > 64) return absl::InvalidArgumentError("\"n\": at most 64");
  out.WriteU32(n);
  for (uint32_t i = 0; i < n; ++i) out.WriteU32(i * 2654435761u);
  return absl::OkStatus();
}

absl::Status SpawnFixed(const ComponentSpawnBatch& batch) {
  if (batch.instance_stride != 12) return absl::DataLossError("fuzz_fixed: stride is not 12");
  auto* world = static_cast<FuzzWorld*>(batch.context);
  for (uint32_t i = 0; i < batch.num_instances; ++i) {
    float v[3];
    std::memcpy(v, batch.data.data() + 12 * size_t{i}, sizeof(v));
    world->checksum += batch.entity(i).bits() + batch.name(i).value();
    ++world->fixed_instances;
  }
  return absl::OkStatus();
}

absl::Status SpawnVar(const ComponentSpawnBatch& batch) {
  if (batch.instance_stride != 0) return absl::DataLossError("fuzz_var: expected variable size");
  auto* world = static_cast<FuzzWorld*>(batch.context);
  size_t at = 0;
  for (uint32_t i = 0; i < batch.num_instances; ++i) {
    uint32_t n;
    if (batch.data.size() - at < 4) return absl::DataLossError("fuzz_var: truncated count");
    std::memcpy(&n, batch.data.data() + at, 4);
    at += 4;
    if ((batch.data.size() - at) / 4 < n) return absl::DataLossError("fuzz_var: truncated values");
    for (uint32_t k = 0; k < n; ++k) {
      uint32_t v;
      std::memcpy(&v, batch.data.data() + at, 4);
      at += 4;
      world->checksum += v;
    }
    world->var_values += n;
    world->checksum += batch.entity(i).bits();
  }
  if (at != batch.data.size()) return absl::DataLossError("fuzz_var: trailing data");
  return absl::OkStatus();
}

}  // namespace

const EntityCompiler& Compiler() {
  static const EntityCompiler* compiler = [] {
    auto* c = new EntityCompiler;
    if (!c->RegisterComponentCompiler("fuzz_fixed", CompileFixed, 0, 12).ok() ||
        !c->RegisterComponentCompiler("fuzz_var", CompileVar, 10).ok()) {
      std::abort();
    }
    return c;
  }();
  return *compiler;
}

const EntitySpawner& Spawner() {
  static const EntitySpawner* spawner = [] {
    auto* s = new EntitySpawner;
    if (!s->RegisterComponentSpawner("fuzz_fixed", SpawnFixed).ok() ||
        !s->RegisterComponentSpawner("fuzz_var", SpawnVar).ok()) {
      std::abort();
    }
    return s;
  }();
  return *spawner;
}

}  // namespace strata::fuzz_internal
