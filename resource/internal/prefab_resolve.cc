#include "resource/internal/prefab_resolve.h"

#include <map>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "base/user_text.h"

namespace strata::resource_internal {
namespace {

using json = nlohmann::json;

absl::Status PrefabError(absl::string_view prefab, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat("prefab \"", UserText(prefab), "\": ", what));
}

// CheckComponents: every element an object with a string "type" and optional string
// "name", names unique.
absl::Status CheckComponents(absl::string_view prefab, const json& components) {
  absl::flat_hash_set<std::string> names;
  for (size_t c = 0; c < components.size(); ++c) {
    const json& component = components[c];
    const std::string where = absl::StrCat("components[", c, "]");
    if (!component.is_object()) {
      return PrefabError(prefab, absl::StrCat(where, ": expected a component object, got ",
                                              component.type_name()));
    }
    auto type = component.find("type");
    if (type == component.end() || !type->is_string()) {
      return PrefabError(prefab, absl::StrCat(where, ": \"type\": expected a string"));
    }
    auto name = component.find("name");
    if (name != component.end() && !name->is_string()) {
      return PrefabError(prefab, absl::StrCat(where, ": \"name\": expected a string"));
    }
    if (!names.insert(ComponentName(component)).second) {
      return PrefabError(prefab, absl::StrCat(where, ": component name \"",
                                              UserText(ComponentName(component)),
                                              "\" is used twice in this prefab"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

const std::string& ComponentName(const json& component) {
  auto name = component.find("name");
  return name != component.end() ? name->get_ref<const std::string&>()
                                  : component.find("type")->get_ref<const std::string&>();
}

absl::StatusOr<std::vector<ResolvedPrefab>> ResolvePrefabs(const json& definitions) {
  if (!definitions.is_object()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "level: \"prefabs\": expected an object of prefab definitions, got ", definitions.type_name()));
  }
  // Check each definition's shape first, so every later step can rely on it.
  for (auto it = definitions.begin(); it != definitions.end(); ++it) {
    const std::string& name = it.key();
    const json& def = it.value();
    if (name.empty()) return absl::InvalidArgumentError("level: \"prefabs\": a prefab name is empty");
    if (!def.is_object()) {
      return PrefabError(name, absl::StrCat("expected an object, got ", def.type_name()));
    }
    for (auto field = def.begin(); field != def.end(); ++field) {
      const std::string& key = field.key();
      if (key == "prefab") {
        if (!field->is_string()) return PrefabError(name, "\"prefab\": expected a string");
      } else if (key == "components" || key == "children") {
        if (!field->is_array()) {
          return PrefabError(name, absl::StrCat("\"", key, "\": expected an array, got ",
                                                field->type_name()));
        }
      } else {
        return PrefabError(name, absl::StrCat("unknown key \"", UserText(key),
                                              "\" (expected \"prefab\", \"components\", \"children\")"));
      }
    }
    if (auto components = def.find("components"); components != def.end()) {
      STRATA_RETURN_IF_ERROR(CheckComponents(name, *components));
    }
  }

  // Resolve in dependency order: a prefab after its base. `state`: 1 on the chain being
  // followed, 2 resolved.
  std::map<std::string, json> resolved;  // name -> entity
  absl::flat_hash_map<std::string, std::vector<std::string>> aliases;
  absl::flat_hash_map<std::string, int> state;
  for (auto it = definitions.begin(); it != definitions.end(); ++it) {
    if (resolved.contains(it.key())) continue;
    // The chain from this prefab down to a resolved one (or the root of the chain).
    std::vector<std::string> chain{it.key()};
    state[it.key()] = 1;
    while (true) {
      const json& def = definitions[chain.back()];
      auto base = def.find("prefab");
      if (base == def.end()) break;
      const std::string& base_name = base->get_ref<const std::string&>();
      if (!definitions.contains(base_name)) {
        return PrefabError(chain.back(), absl::StrCat("\"prefab\": no prefab is named \"",
                                                      UserText(base_name), "\""));
      }
      if (resolved.contains(base_name)) break;
      if (state[base_name] == 1) {
        std::vector<std::string> cycle;
        bool in = false;
        for (const std::string& c : chain) {
          if (c == base_name) in = true;
          if (in) cycle.push_back(UserText(c));
        }
        cycle.push_back(UserText(base_name));
        return PrefabError(base_name, absl::StrCat("prefab cycle: ", absl::StrJoin(cycle, " -> ")));
      }
      if (chain.size() >= kMaxPrefabChain) {
        return PrefabError(it.key(), absl::StrCat("a chain of prefabs is longer than ", kMaxPrefabChain));
      }
      state[base_name] = 1;
      chain.push_back(base_name);
    }
    // Resolve from the base end of the chain up.
    for (size_t k = chain.size(); k-- > 0;) {
      const std::string& name = chain[k];
      const json& def = definitions[name];
      json entity = json::object();
      json components = json::array();
      json children = json::array();
      if (auto base = def.find("prefab"); base != def.end()) {
        const std::string& base_name = base->get_ref<const std::string&>();
        const json& base_entity = resolved.at(base_name);
        std::vector<std::string>& own_aliases = aliases[name];
        own_aliases.push_back(base_name);
        for (const std::string& a : aliases[base_name]) own_aliases.push_back(a);
        components = base_entity["components"];
        children = base_entity["children"];
      }
      if (auto own = def.find("components"); own != def.end()) {
        for (const json& component : *own) {
          const std::string& component_name = ComponentName(component);
          json* match = nullptr;
          for (json& existing : components) {
            if (ComponentName(existing) == component_name) match = &existing;
          }
          if (match == nullptr) {
            components.push_back(component);
            continue;
          }
          if ((*match)["type"] != component["type"]) {
            return PrefabError(name, absl::StrCat(
                "component \"", UserText(component_name), "\" is of type \"",
                UserText((*match)["type"].get_ref<const std::string&>()),
                "\" in the prefab it is based on, not \"",
                UserText(component["type"].get_ref<const std::string&>()), "\""));
          }
          for (auto field = component.begin(); field != component.end(); ++field) {
            (*match)[field.key()] = field.value();
          }
        }
      }
      if (auto own = def.find("children"); own != def.end()) {
        for (const json& child : *own) children.push_back(child);
      }
      entity["name"] = name;
      entity["components"] = std::move(components);
      entity["children"] = std::move(children);
      resolved.emplace(name, std::move(entity));
      state[name] = 2;
    }
  }
  std::vector<ResolvedPrefab> out;
  out.reserve(resolved.size());
  for (auto& [name, entity] : resolved) {
    out.push_back(ResolvedPrefab{name, std::move(entity), std::move(aliases[name])});
  }
  return out;
}

}  // namespace strata::resource_internal
