// Writes the fuzz seed corpus (resource/testdata/fuzz_corpus/): level JSON texts and
// the blobs the compiler makes of them (native and other-endian), using the fuzz
// component types, and two delta saves made from the prefab level (one carrying its
// prefabs, one naming them). Rerun after a format change:
//   bazel run //resource:make_fuzz_corpus -- resource/testdata/fuzz_corpus
#include <algorithm>
#include <cstdio>
#include <string>
#include <tuple>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "resource/format.h"
#include "resource/fuzz/fuzz_components.h"
#include "resource/metadata.h"
#include "resource/prefab.h"
#include "resource/tool_io.h"

namespace {

struct Level {
  const char* name;
  const char* json;
};

constexpr Level kLevels[] = {
    {"empty", R"({"entities": []})"},
    {"bare", R"({"entities": [{}, {"children": [{}, {"children": [{}]}]}]})"},
    {"fixed", R"({"entities": [{"name": "a", "components": [{"type": "fuzz_fixed", "v": [1, 2, 3]}]},
                  {"components": [{"type": "fuzz_fixed", "name": "x"}, {"type": "fuzz_fixed", "name": "y"}]}]})"},
    {"mixed", R"({"entities": [
       {"name": "car", "components": [{"type": "fuzz_fixed", "v": [0, 1, 0]}, {"type": "fuzz_var", "n": 3}],
        "children": [{"components": [{"type": "fuzz_var", "n": 0}]},
                     {"components": [{"type": "fuzz_fixed"}, {"type": "fuzz_var", "name": "V", "n": 5}],
                      "children": [{"components": [{"type": "fuzz_fixed", "v": [9, 9, 9]}]}]}]},
       {"name": "sun", "components": [{"type": "fuzz_var", "n": 1}]}]})"},
    {"unknown", R"({"entities": [{"components": [{"type": "fuzz_fixed"}, {"type": "mystery"}]}]})"},
    {"prefabs", R"({"prefabs": {
       "wheel": {"components": [{"type": "fuzz_fixed", "v": [1, 1, 1]}]},
       "car": {"components": [{"type": "fuzz_var", "n": 2}],
               "children": [{"name": "w", "components": [{"type": "fuzz_fixed"}]}]},
       "truck": {"prefab": "car", "components": [{"type": "fuzz_var", "n": 4}]}},
     "entities": [{"prefab": "car"}, {"prefab": "truck", "components": [{"type": "fuzz_fixed", "v": [2, 2, 2]}]},
                  {"prefab": "wheel", "components": [{"type": "fuzz_fixed", "v": [3, 3, 3]}]}]})"},
};

bool Write(const std::string& path, absl::Span<const std::byte> bytes) {
  absl::Status status = strata::WriteToolFileAtomically(path, bytes, {});
  if (!status.ok()) std::fprintf(stderr, "%s\n", status.ToString().c_str());
  return status.ok();
}

// WithLayout: `view`'s sections, its metadata kept but for a layout of fuzz_fixed
// (which the fuzz compiler does not declare) so that masks can merge it.
absl::StatusOr<std::vector<std::byte>> WithLayout(const strata::EntityResourceView& view) {
  absl::StatusOr<strata::ResourceMetadata> meta = strata::ReadResourceMetadata(view);
  if (!meta.ok()) return meta.status();
  strata::EntityResourceContents contents;
  contents.parent_index.assign(view.parent_index().begin(), view.parent_index().end());
  strata::MetadataSections metadata;
  for (uint32_t k = 0; k < view.num_entities(); ++k) {
    if (meta->EntityName(k).empty()) continue;
    metadata.named_entities.push_back(k);
    metadata.entity_names.emplace_back(meta->EntityName(k));
  }
  metadata.layout_types.push_back(strata::IdString32("fuzz_fixed").value());
  metadata.layouts.push_back("v:f32:12");
  std::move(metadata).AppendTo(contents.component_types, strata::kNativeEndianness);
  for (const strata::ComponentTypeView& s : view.component_types()) {
    if (strata::IsMetadataSection(s.type)) continue;
    strata::ComponentTypeContents& c = contents.component_types.emplace_back();
    c.type = s.type;
    c.instance_stride = s.instance_stride;
    c.layout_fingerprint = s.layout_fingerprint;
    c.entity_index.assign(s.entity_index.begin(), s.entity_index.end());
    c.names.assign(s.names.begin(), s.names.end());
    c.data.assign(s.data.begin(), s.data.end());
  }
  return strata::WriteEntityResource(contents);
}

// DeltaOf: the compiled prefab level `blob` rewritten as a delta save would write it:
// of the entities from prefabs only the components the level overrode (the others
// come from the prefabs), the car's fuzz_var removed, the truck's fuzz_fixed marked a
// value diff; a layout for fuzz_fixed so that masks merge; with or without copies.
absl::StatusOr<std::vector<std::byte>> DeltaOf(const std::vector<std::byte>& blob, bool carry) {
  absl::StatusOr<strata::EntityResourceView> view = strata::EntityResourceView::Create(blob);
  if (!view.ok()) return view.status();
  absl::StatusOr<strata::PrefabTable> table = strata::ReadPrefabTable(*view);
  if (!table.ok()) return table.status();
  absl::StatusOr<strata::ResourceMetadata> meta = strata::ReadResourceMetadata(*view);
  if (!meta.ok()) return meta.status();
  std::vector<strata::PrefabOverrideRecord> overrides = table->overrides;
  absl::flat_hash_set<std::tuple<uint32_t, uint32_t, uint32_t>> written;
  for (const strata::PrefabOverrideRecord& r : overrides) written.insert({r.type, r.entity, r.name});
  std::vector<bool> from_prefab(view->num_entities());
  for (const strata::PrefabEntityRecord& r : table->entities) from_prefab[r.entity] = true;
  const strata::IdString32 fixed("fuzz_fixed"), var("fuzz_var");
  strata::PrefabOverrideRecord removed;
  removed.type = removed.name = var.value();
  removed.entity = 0;  // the car's root
  removed.removed = true;
  overrides.push_back(removed);
  strata::PrefabOverrideRecord value_diff;
  value_diff.type = value_diff.name = fixed.value();
  value_diff.entity = table->entities.size() > 2 ? table->entities[2].entity : 0;
  value_diff.mask = {1};
  value_diff.value_diff = true;
  overrides.push_back(value_diff);
  strata::EntityResourceContents contents;
  contents.parent_index.assign(view->parent_index().begin(), view->parent_index().end());
  strata::MetadataSections metadata;
  metadata.layout_types.push_back(fixed.value());
  metadata.layouts.push_back("v:f32:12");
  std::move(metadata).AppendTo(contents.component_types, strata::kNativeEndianness);
  std::vector<strata::PrefabDefinition> definitions;
  for (const strata::PrefabTable::Prefab& p : table->prefabs) {
    strata::PrefabDefinition& d = definitions.emplace_back();
    d.name = std::string(p.name);
    if (carry) {
      absl::StatusOr<std::vector<std::byte>> with_layout = WithLayout(p.view);
      if (!with_layout.ok()) return with_layout.status();
      d.blob = *std::move(with_layout);
    }
  }
  contents.component_types.push_back(strata::MakePrefabSection(definitions, table->entities, overrides,
                                                               strata::kNativeEndianness, /*delta=*/true));
  for (const strata::ComponentTypeView& s : view->component_types()) {
    if (strata::IsMetadataSection(s.type) || s.type == strata::IdString32("strata.prefabs")) continue;
    strata::ComponentTypeContents& c = contents.component_types.emplace_back();
    c.type = s.type;
    c.instance_stride = s.instance_stride;
    c.layout_fingerprint = s.layout_fingerprint;
    if (s.instance_stride == 0) {  // varying sizes: kept whole
      c.entity_index.assign(s.entity_index.begin(), s.entity_index.end());
      c.names.assign(s.names.begin(), s.names.end());
      c.data.assign(s.data.begin(), s.data.end());
      continue;
    }
    for (uint32_t i = 0; i < s.num_instances; ++i) {
      const uint32_t k = s.entity_index[i];
      if (from_prefab[k] && !written.contains({s.type.value(), k, s.names[i]})) continue;
      c.entity_index.push_back(k);
      c.names.push_back(s.names[i]);
      c.data.insert(c.data.end(), s.data.begin() + size_t{i} * s.instance_stride,
                    s.data.begin() + size_t{i + 1} * s.instance_stride);
    }
    if (c.entity_index.empty()) contents.component_types.pop_back();
  }
  return strata::WriteEntityResource(contents);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s OUTPUT_DIR\n", argv[0]);
    return 2;
  }
  const std::string dir = strata::ResolveToolPath(argv[1]);
  for (const Level& level : kLevels) {
    const std::string json = level.json;
    if (!Write(absl::StrCat(dir, "/", level.name, ".json"),
               absl::MakeConstSpan(reinterpret_cast<const std::byte*>(json.data()), json.size()))) {
      return 1;
    }
    strata::EntityCompiler::Options options;
    options.unknown_components = strata::EntityCompiler::UnknownComponents::kSkip;
    for (strata::Endianness endianness : {strata::Endianness::kLittle, strata::Endianness::kBig}) {
      options.endianness = endianness;
      absl::StatusOr<strata::EntityCompiler::Result> result =
          strata::fuzz_internal::Compiler().Compile(json, options);
      if (!result.ok()) {
        std::fprintf(stderr, "%s: %s\n", level.name, result.status().ToString().c_str());
        return 1;
      }
      const bool native = endianness == strata::kNativeEndianness;
      if (!native && std::string(level.name) != "mixed") continue;  // one is enough
      if (!Write(absl::StrCat(dir, "/", level.name, native ? "" : "_other_endian", ".entities"),
                 result->blob)) {
        return 1;
      }
    }
  }
  absl::StatusOr<strata::EntityCompiler::Result> prefabs = strata::fuzz_internal::Compiler().Compile(
      kLevels[std::size(kLevels) - 1].json, strata::EntityCompiler::Options());
  if (!prefabs.ok()) {
    std::fprintf(stderr, "prefabs: %s\n", prefabs.status().ToString().c_str());
    return 1;
  }
  for (const bool carry : {true, false}) {
    absl::StatusOr<std::vector<std::byte>> delta = DeltaOf(prefabs->blob, carry);
    if (!delta.ok()) {
      std::fprintf(stderr, "delta: %s\n", delta.status().ToString().c_str());
      return 1;
    }
    if (!Write(absl::StrCat(dir, carry ? "/prefabs_delta.entities" : "/prefabs_delta_by_name.entities"), *delta)) {
      return 1;
    }
  }
  std::printf("wrote the corpus to %s\n", dir.c_str());
  return 0;
}
