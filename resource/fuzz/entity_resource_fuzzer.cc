// libFuzzer entry point for the entity-resource loader: arbitrary bytes go through
// EntityResourceView::Create (with and without the checksum, so mutations reach the
// structure checks), and every accepted blob is read completely and spawned (a delta
// save made whole with the prefabs it carries first); the same bytes are also compiled
// as level JSON, and every blob the compiler emits must load.
//
// Under --config=fuzz this links with -fsanitize=fuzzer (resource/run_fuzz.sh); under
// the normal build, //resource:entity_resource_fuzzer_test replays the seed corpus and
// deterministic mutations of it through the same function.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "entity/entity_manager.h"
#include "resource/entity_compiler.h"
#include "resource/entity_spawner.h"
#include "resource/format.h"
#include "resource/prefab.h"
#include "resource/prefab_delta.h"
#include "resource/fuzz/fuzz_components.h"

namespace {

// Reads every byte a spawn function may legally read, so ASan sees any overrun.
uint32_t TouchAll(const strata::EntityResourceView& view) {
  uint32_t sum = 0;
  for (uint32_t p : view.parent_index()) sum += p;
  for (const strata::ComponentTypeView& type : view.component_types()) {
    for (uint32_t i = 0; i < type.num_instances; ++i) {
      if (type.entity_index[i] >= view.num_entities()) std::abort();
      sum += type.entity_index[i] + type.names[i];
    }
    for (std::byte b : type.data) sum += static_cast<uint32_t>(b);
  }
  return sum;
}

void CheckBlob(const std::vector<std::byte>& blob, bool verify_checksum) {
  absl::StatusOr<strata::EntityResourceView> view =
      strata::EntityResourceView::Create(blob, {.verify_checksum = verify_checksum});
  if (!view.ok()) return;
  volatile uint32_t sink = TouchAll(*view);
  (void)sink;
  // The prefab section: refused or read within bounds, and its prefabs' blobs too.
  if (absl::StatusOr<strata::PrefabTable> prefabs = strata::ReadPrefabTable(*view); prefabs.ok()) {
    for (const strata::PrefabTable::Prefab& prefab : prefabs->prefabs) sink = TouchAll(prefab.view);
    for (const strata::PrefabOverrideRecord& r : prefabs->overrides) sink = r.entity + r.type;
    if (prefabs->delta) {
      // A delta is made whole with the prefabs it carries (one it only names has no
      // entities: NotFound); what comes out is a valid blob, checked as any other.
      std::vector<strata::EntityResourceView> bases;
      for (const strata::PrefabTable::Prefab& prefab : prefabs->prefabs) bases.push_back(prefab.view);
      absl::StatusOr<std::vector<std::byte>> whole = strata::ExpandPrefabDeltas(*view, *prefabs, bases);
      if (whole.ok()) {
        if (!strata::EntityResourceView::Create(*whole).ok()) std::abort();
        CheckBlob(*whole, /*verify_checksum=*/true);
      }
    }
  }
  strata::EntityManager manager;
  strata::fuzz_internal::FuzzWorld world;
  absl::StatusOr<std::vector<strata::Entity>> entities =
      strata::fuzz_internal::Spawner().Spawn(*view, manager, &world);
  if (entities.ok()) {
    if (manager.size() != view->num_entities()) std::abort();
    if (!manager.DestroyBatch(*entities).ok()) std::abort();
  } else if (manager.size() != 0) {
    std::abort();  // a failed spawn must roll back every entity
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // NOTE: std::vector storage is 16-byte aligned, as the view requires; libFuzzer's
  // buffer is not guaranteed to be.
  const std::vector<std::byte> blob(reinterpret_cast<const std::byte*>(data),
                                    reinterpret_cast<const std::byte*>(data) + size);
  CheckBlob(blob, /*verify_checksum=*/true);
  CheckBlob(blob, /*verify_checksum=*/false);

  // The same bytes as level JSON: whatever compiles must load and spawn.
  const absl::string_view text(reinterpret_cast<const char*>(data), size);
  for (auto unknown : {strata::EntityCompiler::UnknownComponents::kReject,
                       strata::EntityCompiler::UnknownComponents::kSkip}) {
    strata::EntityCompiler::Options options;
    options.unknown_components = unknown;
    absl::StatusOr<strata::EntityCompiler::Result> compiled =
        strata::fuzz_internal::Compiler().Compile(text, options);
    if (!compiled.ok()) continue;
    if (!strata::EntityResourceView::Create(compiled->blob).ok()) std::abort();
    CheckBlob(compiled->blob, /*verify_checksum=*/true);
  }
  return 0;
}
