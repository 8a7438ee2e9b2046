#include "component/export.h"

#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/node_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "base/user_text.h"
#include "nlohmann/json.hpp"
#include "absl/strings/str_split.h"
#include "resource/metadata.h"
#include "resource/prefab.h"

namespace strata {
namespace {

using json = nlohmann::json;

// NOTE: `scratch` is a node map: the pointers name_text returns stay valid while it
// grows.
FieldTextLookup MakeLookup(const ResourceMetadata& meta, const std::vector<uint32_t>& number,
                           absl::node_hash_map<std::string, std::string>* scratch) {
  absl::flat_hash_map<absl::string_view, int> name_count;
  for (const auto& [k, name] : meta.entity_names) ++name_count[name];
  FieldTextLookup lookup;
  lookup.name_text = [&meta, scratch](uint32_t id) -> const std::string* {
    const absl::string_view* text = meta.NameText(id);
    if (text == nullptr) return nullptr;
    auto [it, inserted] = scratch->try_emplace(absl::StrCat(id), std::string(*text));
    return &it->second;
  };
  lookup.entity_reference = [&meta, &number, name_count = std::move(name_count)](uint32_t k) {
    const absl::string_view name = meta.EntityName(k);
    auto it = name_count.find(name);
    // A name that is unique and not itself of the "#N" form refers to its entity.
    if (!name.empty() && it != name_count.end() && it->second == 1 && name[0] != '#' &&
        name.find('/') == absl::string_view::npos) {
      return std::string(name);
    }
    return absl::StrCat("#", k < number.size() ? number[k] : k);
  };
  return lookup;
}

// The numbering the compiler gives the exported tree: pre-order, children in order.
std::vector<uint32_t> PreorderNumbers(absl::Span<const uint32_t> parent_index,
                                      std::vector<std::vector<uint32_t>>* children) {
  const uint32_t n = static_cast<uint32_t>(parent_index.size());
  children->assign(n, {});
  std::vector<uint32_t> roots;
  for (uint32_t k = 0; k < n; ++k) {
    if (parent_index[k] == kNoParent) {
      roots.push_back(k);
    } else {
      (*children)[parent_index[k]].push_back(k);
    }
  }
  std::vector<uint32_t> number(n);
  std::vector<uint32_t> stack(roots.rbegin(), roots.rend());
  uint32_t next = 0;
  while (!stack.empty()) {
    const uint32_t k = stack.back();
    stack.pop_back();
    number[k] = next++;
    for (size_t c = (*children)[k].size(); c-- > 0;) stack.push_back((*children)[k][c]);
  }
  return number;
}

std::string InstanceName(const ComponentTypeView& section, size_t i, const ResourceMetadata& meta,
                         absl::string_view type_name) {
  if (section.names[i] == IdString32(type_name).value()) return std::string(type_name);
  if (const absl::string_view* text = meta.NameText(section.names[i])) return std::string(*text);
  return absl::StrFormat("#%08x", section.names[i]);
}

}  // namespace

namespace {
// KeyOverridden: whether `record` overrides the level JSON key `key` of a type of
// layout `layout` ("hp:f32:4;stats.hp:f32:4"): a field under the key (FieldUnderKey)
// is overridden; a key that is no declared field's (a type with its own codec) stands
// for all of them, as the compiler marks it.
bool KeyOverridden(absl::string_view layout, absl::string_view key, const PrefabOverrideRecord& record) {
  size_t i = 0;
  bool found = false;
  for (absl::string_view field : absl::StrSplit(layout, ';', absl::SkipEmpty())) {
    if (FieldUnderKey(field.substr(0, field.find(':')), key)) {
      found = true;
      if (record.Overrides(i)) return true;
    }
    ++i;
  }
  return !found && record.Overrides(0);
}
}  // namespace

absl::StatusOr<json> ExportLevel(const EntityResourceView& view, const ComponentRegistry& registry) {
  STRATA_ASSIGN_OR_RETURN(const ResourceMetadata meta, ReadResourceMetadata(view));
  // Instances of prefabs are written as the prefab and what they override; the
  // prefab's own entities below an instance are not written (the compiler makes them).
  STRATA_ASSIGN_OR_RETURN(const PrefabTable prefabs, ReadPrefabTable(view));
  if (prefabs.delta) {
    // Level JSON cannot say what a delta can (a child's own field, a component an
    // instance lost): refused rather than written in part.
    return absl::FailedPreconditionError(
        "the resource is a delta save (entities from prefabs written as what differs from "
        "them): spawn it and save it with SaveOptions::prefab_deltas = false to export it");
  }
  json prefab_definitions = json::object();
  for (const PrefabTable::Prefab& prefab : prefabs.prefabs) {
    STRATA_ASSIGN_OR_RETURN(json level, ExportLevel(prefab.view, registry));
    json& root = level["entities"][0];
    root.erase("name");
    prefab_definitions[std::string(prefab.name)] = std::move(root);
  }
  absl::flat_hash_map<uint32_t, const PrefabEntityRecord*> from_prefab;
  for (const PrefabEntityRecord& record : prefabs.entities) from_prefab[record.entity] = &record;
  // (entity, type, name) -> override record
  absl::flat_hash_map<std::tuple<uint32_t, uint32_t, uint32_t>, const PrefabOverrideRecord*> overrides;
  for (const PrefabOverrideRecord& record : prefabs.overrides) {
    overrides[{record.entity, record.type, record.name}] = &record;
  }
  std::vector<std::vector<uint32_t>> children;
  const std::vector<uint32_t> number = PreorderNumbers(view.parent_index(), &children);
  absl::node_hash_map<std::string, std::string> scratch;
  const FieldTextLookup lookup = MakeLookup(meta, number, &scratch);

  const uint32_t n = view.num_entities();
  std::vector<json> nodes(n, json::object());
  for (uint32_t k = 0; k < n; ++k) {
    const absl::string_view name = meta.EntityName(k);
    if (!name.empty()) nodes[k]["name"] = std::string(name);
    if (auto it = from_prefab.find(k); it != from_prefab.end() && it->second->node == 0) {
      nodes[k]["prefab"] = std::string(prefabs.prefabs[it->second->prefab].name);
    }
  }
  for (const ComponentTypeView& section : view.component_types()) {
    if (IsMetadataSection(section.type)) continue;
    const ComponentType* type = registry.Find(section.type);
    if (type == nullptr) {
      return absl::FailedPreconditionError(absl::StrCat(
          "component type ", section.type.DebugString(), " (", section.num_instances,
          " instances) has no declaration in this tool's registry"));
    }
    if (section.layout_fingerprint != type->fingerprint() || section.instance_stride != type->instance_size()) {
      return absl::FailedPreconditionError(absl::StrCat(
          "component type \"", type->name(), "\": the blob's layout differs from the declaration \"",
          type->layout(), "\"; spawn it into a world and save it to migrate it first"));
    }
    for (uint32_t i = 0; i < section.num_instances; ++i) {
      const absl::Span<const std::byte> bytes =
          section.data.subspan(size_t{i} * section.instance_stride, section.instance_stride);
      absl::StatusOr<json> fields = type->Export(bytes, lookup);
      if (!fields.ok()) {
        return absl::Status(fields.status().code(), absl::StrCat("entity ", section.entity_index[i], " \"",
                                                                 type->name(), "\": ", fields.status().message()));
      }
      const uint32_t k = section.entity_index[i];
      const PrefabOverrideRecord* override_record = nullptr;
      if (auto it = from_prefab.find(k); it != from_prefab.end()) {
        if (it->second->node != 0) continue;  // the prefab's entity: made by the compiler
        auto o = overrides.find({k, section.type.value(), section.names[i]});
        if (o == overrides.end()) continue;  // the prefab's values
        override_record = o->second;
      }
      json component = json::object();
      component["type"] = type->name();
      const std::string instance_name = InstanceName(section, i, meta, type->name());
      if (instance_name != type->name()) component["name"] = instance_name;
      for (auto it = fields->begin(); it != fields->end(); ++it) {
        if (override_record != nullptr && !override_record->added) {
          // Only the keys the level overrode.
          if (!KeyOverridden(type->layout(), it.key(), *override_record)) continue;
        }
        component[it.key()] = std::move(it.value());
      }
      nodes[k]["components"].push_back(std::move(component));
    }
  }
  // Children have larger numbers than their parents: build bottom-up.
  json roots = json::array();
  auto made_by_prefab = [&](uint32_t k) {
    auto it = from_prefab.find(k);
    return it != from_prefab.end() && it->second->node != 0;
  };
  for (uint32_t k = n; k-- > 0;) {
    json list = json::array();
    for (uint32_t c : children[k]) {
      if (!made_by_prefab(c)) list.push_back(std::move(nodes[c]));
    }
    if (!list.empty()) nodes[k]["children"] = std::move(list);
  }
  for (uint32_t k = 0; k < n; ++k) {
    if (view.parent_index()[k] == kNoParent && !made_by_prefab(k)) roots.push_back(std::move(nodes[k]));
  }
  json out = {{"entities", std::move(roots)}};
  if (!prefabs.empty()) out["prefabs"] = std::move(prefab_definitions);
  return out;
}

absl::StatusOr<std::string> DescribeResource(const EntityResourceView& view,
                                             const ComponentRegistry& registry) {
  STRATA_ASSIGN_OR_RETURN(const ResourceMetadata meta, ReadResourceMetadata(view));
  std::vector<std::vector<uint32_t>> children;
  const std::vector<uint32_t> number = PreorderNumbers(view.parent_index(), &children);
  absl::node_hash_map<std::string, std::string> scratch;
  FieldTextLookup lookup = MakeLookup(meta, number, &scratch);
  // In a listing, references name the blob's own entity numbers.
  lookup.entity_reference = [&meta](uint32_t k) {
    const absl::string_view name = meta.EntityName(k);
    return name.empty() ? absl::StrCat("entity ", k) : absl::StrCat("entity ", k, " \"", UserText(name), "\"");
  };
  std::string out;
  size_t roots = 0;
  for (uint32_t p : view.parent_index()) roots += p == kNoParent;
  absl::StrAppendFormat(&out, "entities %u (%u roots)\n", view.num_entities(), roots);
  std::vector<std::vector<std::string>> lines(view.num_entities());
  for (const ComponentTypeView& section : view.component_types()) {
    if (IsMetadataSection(section.type)) continue;
    const ComponentType* type = registry.Find(section.type);
    const bool readable = type != nullptr && section.layout_fingerprint == type->fingerprint() &&
                          section.instance_stride == type->instance_size();
    const std::string type_name =
        type != nullptr ? type->name() : absl::StrCat("(unknown ", section.type.DebugString(), ")");
    absl::StrAppendFormat(&out, "  %-16s %8u instances %6u bytes each%s\n", type_name, section.num_instances,
                          section.instance_stride,
                          type == nullptr ? "" : readable ? "" : "  (layout differs from the declaration)");
    for (uint32_t i = 0; i < section.num_instances; ++i) {
      std::string line = absl::StrCat(type_name, " \"",
                                      UserText(InstanceName(section, i, meta, type != nullptr ? type->name() : "")), "\"");
      if (readable) {
        absl::StatusOr<json> fields = type->Export(
            section.data.subspan(size_t{i} * section.instance_stride, section.instance_stride), lookup);
        if (fields.ok()) {
          for (auto it = fields->begin(); it != fields->end(); ++it) {
            absl::StrAppend(&line, " ", it.key(), "=", it.value().dump());
          }
        }
      }
      lines[section.entity_index[i]].push_back(std::move(line));
    }
  }
  for (uint32_t k = 0; k < view.num_entities(); ++k) {
    const absl::string_view name = meta.EntityName(k);
    absl::StrAppend(&out, "entity ", k, name.empty() ? "" : absl::StrCat(" \"", UserText(name), "\""));
    if (view.parent_index()[k] != kNoParent) absl::StrAppend(&out, " (parent ", view.parent_index()[k], ")");
    absl::StrAppend(&out, "\n");
    for (const std::string& line : lines[k]) absl::StrAppend(&out, "  ", line, "\n");
  }
  return out;
}

}  // namespace strata
