#include "resource/prefab_delta.h"

#include <algorithm>
#include <cstring>
#include <numeric>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "base/status_macros.h"
#include "resource/metadata.h"

namespace strata {
namespace {

constexpr uint32_t kNone = 0xFFFFFFFFu;
using InstanceKey = std::tuple<uint32_t, uint32_t, uint32_t>;  // type, entity, name

struct LayoutField {
  absl::string_view type;
  uint32_t offset = 0;
  uint32_t size = 0;
};

// Fields: the fields of a layout text ("hp:f32:4;target:entity:4"), packed in order as
// PlanSpawn reads them. DataLoss unless they fill `stride` exactly, so that every field
// of an instance lies inside it.
absl::StatusOr<std::vector<LayoutField>> Fields(absl::string_view layout, uint32_t stride, IdString32 type) {
  std::vector<LayoutField> fields;
  uint64_t offset = 0;
  for (absl::string_view part : absl::StrSplit(layout, ';', absl::SkipEmpty())) {
    std::vector<absl::string_view> pieces = absl::StrSplit(part, ':');
    LayoutField f;
    if (pieces.size() != 3 || !absl::SimpleAtoi(pieces[2], &f.size) || f.size == 0) {
      return absl::DataLossError(absl::StrCat("component type ", type.DebugString(), ": malformed layout entry \"",
                                              part.substr(0, 64), "\""));
    }
    f.type = pieces[1];
    f.offset = static_cast<uint32_t>(std::min<uint64_t>(offset, kNone));
    offset += f.size;
    fields.push_back(f);
  }
  if (offset != stride) {
    return absl::DataLossError(absl::StrCat("component type ", type.DebugString(), ": layout of ", offset,
                                            " bytes, stride ", stride));
  }
  return fields;
}

// A section of the whole resource being built.
struct OutSection {
  IdString32 type;
  uint32_t stride = 0;
  uint32_t fingerprint = 0;
  absl::string_view layout;
  bool parsed = false;
  std::vector<LayoutField> fields;
  std::vector<uint32_t> entity_index;
  std::vector<uint32_t> names;
  std::vector<std::byte> data;

  absl::Status Parse() {
    if (parsed) return absl::OkStatus();
    STRATA_ASSIGN_OR_RETURN(fields, Fields(layout, stride, type));
    parsed = true;
    return absl::OkStatus();
  }
};

// A base prefab's component sections, and its instances by (type, node, name) and by node.
struct Base {
  explicit Base(const EntityResourceView& v) : view(v) {}

  EntityResourceView view;
  ResourceMetadata meta;
  std::vector<ComponentTypeView> sections;
  absl::flat_hash_map<InstanceKey, std::pair<uint32_t, uint32_t>> instance;  // -> (section, i)
  std::vector<std::vector<std::pair<uint32_t, uint32_t>>> by_node;

  absl::string_view Layout(IdString32 type) const {
    auto it = meta.layouts.find(type.value());
    return it == meta.layouts.end() ? absl::string_view() : it->second;
  }
};

}  // namespace

absl::StatusOr<std::vector<std::byte>> ExpandPrefabDeltas(const EntityResourceView& view,
                                                          const PrefabTable& table,
                                                          absl::Span<const EntityResourceView> bases) {
  if (!table.delta) return absl::InvalidArgumentError("ExpandPrefabDeltas: the prefab section is not a delta");
  if (bases.size() != table.prefabs.size()) {
    return absl::InvalidArgumentError(absl::StrCat("ExpandPrefabDeltas: ", bases.size(), " bases for ",
                                                   table.prefabs.size(), " prefabs"));
  }
  for (size_t p = 0; p < bases.size(); ++p) {
    if (bases[p].num_entities() == 0) {
      return absl::NotFoundError(absl::StrCat(
          "prefab \"", table.prefabs[p].name, "\" is not known here",
          table.prefabs[p].by_name ? " and the delta names it without carrying it" : "",
          ": load the prefab before the delta that uses it"));
    }
  }
  STRATA_ASSIGN_OR_RETURN(const ResourceMetadata meta, ReadResourceMetadata(view));
  std::vector<Base> base;
  base.reserve(bases.size());
  for (size_t p = 0; p < bases.size(); ++p) {
    Base& b = base.emplace_back(bases[p]);
    STRATA_ASSIGN_OR_RETURN(b.meta, ReadResourceMetadata(b.view));
    b.by_node.resize(b.view.num_entities());
    for (const ComponentTypeView& s : b.view.component_types()) {
      if (IsMetadataSection(s.type)) continue;
      const uint32_t at = static_cast<uint32_t>(b.sections.size());
      b.sections.push_back(s);
      for (uint32_t i = 0; i < s.num_instances; ++i) {
        b.instance.try_emplace(InstanceKey{s.type.value(), s.entity_index[i], s.names[i]}, at, i);
        b.by_node[s.entity_index[i]].emplace_back(at, i);
      }
    }
  }
  const uint32_t n = view.num_entities();
  const absl::Span<const uint32_t> parents = view.parent_index();
  // Each entity's record, and the root of the instance it belongs to: that of its
  // nearest ancestor with a record, when that one is from the same prefab (an
  // instance's entities are a subtree; entities the game added may sit between).
  // Parents precede children, so one pass in entity order finds every root: O(n),
  // whatever the depth of a hostile chain.
  std::vector<uint32_t> record_of(n, kNone);
  for (uint32_t r = 0; r < table.entities.size(); ++r) record_of[table.entities[r].entity] = r;
  std::vector<uint32_t> nearest_recorded(n, kNone);  // the nearest ancestor with a record
  for (uint32_t k = 0; k < n; ++k) {
    const uint32_t p = parents[k];
    if (p != kNoParent) nearest_recorded[k] = record_of[p] != kNone ? p : nearest_recorded[p];
  }
  std::vector<uint32_t> root_of(n, kNone);
  absl::flat_hash_map<uint64_t, uint32_t> entity_of;  // (root << 32 | node) -> entity
  for (const PrefabEntityRecord& r : table.entities) {
    uint32_t root = kNone;
    if (r.node == 0) {
      root = r.entity;
    } else if (const uint32_t a = nearest_recorded[r.entity];
               a != kNone && table.entities[record_of[a]].prefab == r.prefab) {
      root = root_of[a];  // a < r.entity: known
    }
    root_of[r.entity] = root;
    if (root != kNone) entity_of.try_emplace(uint64_t{root} << 32 | r.node, r.entity);
  }
  // The merge masks (and removed records), and the value diffs, by component.
  absl::flat_hash_map<InstanceKey, uint32_t> record_at;
  absl::flat_hash_map<InstanceKey, uint32_t> value_diff_at;
  for (uint32_t o = 0; o < table.overrides.size(); ++o) {
    const PrefabOverrideRecord& r = table.overrides[o];
    (r.value_diff ? value_diff_at : record_at).try_emplace(InstanceKey{r.type, r.entity, r.name}, o);
  }
  // The whole resource's override records: of each component the resource wrote for
  // an entity from a prefab, the fields the level overrode (its own fields but the
  // value diffs), which a spawn of it keeps overridden.
  std::vector<PrefabOverrideRecord> overrides;
  // A reference held by a prefab's component (a number among the base's entities)
  // made one to the same instance's entity.
  auto remap = [&](OutSection& section, std::byte* instance, uint32_t entity, uint32_t base_entities) -> absl::Status {
    STRATA_RETURN_IF_ERROR(section.Parse());
    for (const LayoutField& f : section.fields) {
      if (f.type != "entity" || f.size != 4) continue;
      uint32_t v;
      std::memcpy(&v, instance + f.offset, 4);
      if (v == kNoEntityRef) continue;
      uint32_t to = kNoEntityRef;
      if (root_of[entity] != kNone && v < base_entities) {
        auto it = entity_of.find(uint64_t{root_of[entity]} << 32 | v);
        if (it != entity_of.end()) to = it->second;
      }
      std::memcpy(instance + f.offset, &to, 4);
    }
    return absl::OkStatus();
  };
  std::vector<OutSection> out;
  absl::flat_hash_map<uint32_t, size_t> out_of_type;
  auto mismatch = [&](IdString32 type, uint32_t p) {
    return absl::FailedPreconditionError(absl::StrCat(
        "component type ", type.DebugString(), " has another layout in prefab \"", table.prefabs[p].name,
        "\" than in the delta resource (", meta.layouts.contains(type.value()) ? meta.layouts.at(type.value()) : "",
        " against ", base[p].Layout(type), "): a delta is merged in one layout"));
  };
  auto same_layout = [](const OutSection& o, const ComponentTypeView& s, absl::string_view layout) {
    return o.stride == s.instance_stride && o.fingerprint == s.layout_fingerprint && o.layout == layout;
  };
  // The components the resource writes, merged with the prefab's where a mask says so.
  absl::flat_hash_set<InstanceKey> present;
  for (const ComponentTypeView& s : view.component_types()) {
    if (IsMetadataSection(s.type)) continue;
    OutSection& o = out.emplace_back();
    out_of_type[s.type.value()] = out.size() - 1;
    o.type = s.type;
    o.stride = s.instance_stride;
    o.fingerprint = s.layout_fingerprint;
    if (auto it = meta.layouts.find(s.type.value()); it != meta.layouts.end()) o.layout = it->second;
    o.entity_index.assign(s.entity_index.begin(), s.entity_index.end());
    o.names.assign(s.names.begin(), s.names.end());
    o.data.assign(s.data.begin(), s.data.end());
    for (uint32_t i = 0; i < s.num_instances; ++i) {
      const uint32_t k = s.entity_index[i];
      const InstanceKey key{s.type.value(), k, s.names[i]};
      present.insert(key);
      if (record_of[k] == kNone) continue;
      const PrefabEntityRecord& entity = table.entities[record_of[k]];
      auto r = record_at.find(key);
      const PrefabOverrideRecord* record = r == record_at.end() ? nullptr : &table.overrides[r->second];
      const bool merged = record != nullptr && !record->added && !record->removed;
      {
        auto v = value_diff_at.find(key);
        PrefabOverrideRecord level;
        level.type = s.type.value();
        level.entity = k;
        level.name = s.names[i];
        if (v == value_diff_at.end()) {
          if (merged) {
            level.mask = record->mask;
          } else {
            level.added = true;
          }
        } else {
          size_t num_fields = 1;  // a custom layout: one
          if (merged) {
            level.mask = record->mask;
          } else {
            if (!o.layout.empty()) {
              STRATA_RETURN_IF_ERROR(o.Parse());
              num_fields = o.fields.size();
            }
            level.mask.assign((num_fields + 31) / 32, 0u);
            for (size_t f = 0; f < num_fields; ++f) level.mask[f / 32] |= uint32_t{1} << (f % 32);
          }
          const std::vector<uint32_t>& value_mask = table.overrides[v->second].mask;
          for (size_t w = 0; w < level.mask.size() && w < value_mask.size(); ++w) level.mask[w] &= ~value_mask[w];
        }
        if (level.added || std::any_of(level.mask.begin(), level.mask.end(), [](uint32_t w) { return w != 0; })) {
          overrides.push_back(std::move(level));
        }
      }
      // All of it is the entity's, unless a mask says which fields are.
      if (merged) {
        const Base& b = base[entity.prefab];
        auto found = b.instance.find(InstanceKey{s.type.value(), entity.node, s.names[i]});
        if (found != b.instance.end() && o.stride > 0) {
          const ComponentTypeView& bs = b.sections[found->second.first];
          if (!same_layout(o, bs, b.Layout(s.type))) return mismatch(s.type, entity.prefab);
          STRATA_RETURN_IF_ERROR(o.Parse());
          std::byte* mine = o.data.data() + size_t{i} * o.stride;
          const std::byte* theirs = bs.data.data() + size_t{found->second.second} * o.stride;
          bool copied_reference = false;
          for (size_t f = 0; f < o.fields.size(); ++f) {
            if (record->Overrides(f)) continue;
            std::memcpy(mine + o.fields[f].offset, theirs + o.fields[f].offset, o.fields[f].size);
            copied_reference |= o.fields[f].type == "entity";
          }
          if (copied_reference) {
            // Only the copied references are the base's numbers: remap those alone.
            std::vector<std::byte> keep(mine, mine + o.stride);
            STRATA_RETURN_IF_ERROR(remap(o, mine, k, b.view.num_entities()));
            for (size_t f = 0; f < o.fields.size(); ++f) {
              if (record->Overrides(f)) {
                std::memcpy(mine + o.fields[f].offset, keep.data() + o.fields[f].offset, o.fields[f].size);
              }
            }
          }
        }
      }
    }
  }
  // The prefab's components the resource left out.
  for (const PrefabEntityRecord& entity : table.entities) {
    const Base& b = base[entity.prefab];
    if (entity.node >= b.by_node.size()) continue;  // the current prefab has fewer entities
    for (const auto& [at, i] : b.by_node[entity.node]) {
      const ComponentTypeView& bs = b.sections[at];
      const InstanceKey key{bs.type.value(), entity.entity, bs.names[i]};
      if (present.contains(key)) continue;
      if (auto r = record_at.find(key); r != record_at.end() && table.overrides[r->second].removed) continue;
      if (bs.instance_stride == 0 && !bs.data.empty()) {
        return absl::DataLossError(absl::StrCat("component type ", bs.type.DebugString(), " of prefab \"",
                                                table.prefabs[entity.prefab].name,
                                                "\" has instances of varying size: it cannot be copied alone"));
      }
      auto it = out_of_type.find(bs.type.value());
      if (it == out_of_type.end()) {
        OutSection& o = out.emplace_back();
        it = out_of_type.emplace(bs.type.value(), out.size() - 1).first;
        o.type = bs.type;
        o.stride = bs.instance_stride;
        o.fingerprint = bs.layout_fingerprint;
        o.layout = b.Layout(bs.type);
      }
      OutSection& o = out[it->second];
      if (!same_layout(o, bs, b.Layout(bs.type))) return mismatch(bs.type, entity.prefab);
      o.entity_index.push_back(entity.entity);
      o.names.push_back(bs.names[i]);
      const size_t start = o.data.size();
      const std::byte* theirs = bs.data.data() + size_t{i} * o.stride;
      o.data.insert(o.data.end(), theirs, theirs + o.stride);
      if (o.stride > 0 && absl::StrContains(o.layout, ":entity:")) {
        STRATA_RETURN_IF_ERROR(remap(o, o.data.data() + start, entity.entity, b.view.num_entities()));
      }
    }
  }

  EntityResourceContents contents;
  contents.parent_index.assign(parents.begin(), parents.end());
  MetadataSections metadata;
  std::vector<uint32_t> named;
  for (const auto& [k, name] : meta.entity_names) named.push_back(k);
  std::sort(named.begin(), named.end());
  for (uint32_t k : named) {
    metadata.named_entities.push_back(k);
    metadata.entity_names.emplace_back(meta.entity_names.at(k));
  }
  absl::flat_hash_map<uint32_t, absl::string_view> texts(meta.names.begin(), meta.names.end());
  for (const Base& b : base) texts.insert(b.meta.names.begin(), b.meta.names.end());
  for (const auto& [id, text] : texts) metadata.name_texts.emplace_back(id, std::string(text));
  for (const OutSection& o : out) {
    if (o.layout.empty() || o.entity_index.empty()) continue;
    metadata.layout_types.push_back(o.type.value());
    metadata.layouts.emplace_back(o.layout);
  }
  std::move(metadata).AppendTo(contents.component_types, kNativeEndianness);
  std::vector<PrefabDefinition> definitions;
  for (size_t p = 0; p < table.prefabs.size(); ++p) {
    definitions.push_back(PrefabDefinition{std::string(table.prefabs[p].name),
                                           std::vector<std::byte>(bases[p].blob().begin(), bases[p].blob().end())});
  }
  contents.component_types.push_back(MakePrefabSection(definitions, table.entities, overrides, kNativeEndianness));
  for (OutSection& o : out) {
    if (o.entity_index.empty()) continue;
    // In entity order (the resource's, then what the prefabs added), so that a
    // section with one instance per entity spawns without copies.
    std::vector<uint32_t> order(o.entity_index.size());
    std::iota(order.begin(), order.end(), 0u);
    std::stable_sort(order.begin(), order.end(),
                     [&](uint32_t a, uint32_t b) { return o.entity_index[a] < o.entity_index[b]; });
    ComponentTypeContents& section = contents.component_types.emplace_back();
    section.type = o.type;
    section.instance_stride = o.stride;
    section.layout_fingerprint = o.fingerprint;
    if (o.stride == 0) {
      section.entity_index = std::move(o.entity_index);  // varying sizes: as written
      section.names = std::move(o.names);
      section.data = std::move(o.data);
      continue;
    }
    section.entity_index.reserve(order.size());
    section.names.reserve(order.size());
    section.data.reserve(o.data.size());
    for (uint32_t i : order) {
      section.entity_index.push_back(o.entity_index[i]);
      section.names.push_back(o.names[i]);
      section.data.insert(section.data.end(), o.data.begin() + size_t{i} * o.stride,
                          o.data.begin() + size_t{i + 1} * o.stride);
    }
  }
  return WriteEntityResource(contents);
}

}  // namespace strata
