#include "resource/entity_compiler.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "base/user_text.h"
#include "base/status_macros.h"
#include "resource/strict_json.h"

namespace strata {
namespace {

using json = nlohmann::json;

// Finds `key` in an object without nlohmann's throwing accessors; nullptr if absent.
const json* Find(const json& object, absl::string_view key) {
  auto it = object.find(std::string(key));
  return it == object.end() ? nullptr : &*it;
}

const char* TypeName(const json& value) { return value.type_name(); }

absl::Status FieldError(absl::string_view key, absl::string_view expected, const json& value) {
  return absl::InvalidArgumentError(
      absl::StrCat("\"", key, "\": expected ", expected, ", got ", TypeName(value)));
}

// ToFloat: the JSON number as a float; false when it lies outside float's range (the
// conversion would be undefined behaviour).
bool ToFloat(const json& value, float* out) {
  const double d = value.get<double>();
  if (!(d >= -std::numeric_limits<float>::max() && d <= std::numeric_limits<float>::max())) {
    return false;
  }
  *out = static_cast<float>(d);
  return true;
}

}  // namespace

absl::Status ReadFloat(const json& config, absl::string_view key, float* out) {
  const json* value = Find(config, key);
  if (value == nullptr) return absl::OkStatus();
  if (!value->is_number()) return FieldError(key, "a number", *value);
  if (!ToFloat(*value, out)) {
    return absl::InvalidArgumentError(absl::StrCat("\"", key, "\": number out of float range"));
  }
  return absl::OkStatus();
}

absl::Status ReadFloats(const json& config, absl::string_view key, absl::Span<float> out) {
  const json* value = Find(config, key);
  if (value == nullptr) return absl::OkStatus();
  const std::string expected = absl::StrCat("an array of ", out.size(), " numbers");
  if (!value->is_array()) return FieldError(key, expected, *value);
  if (value->size() != out.size()) {
    return absl::InvalidArgumentError(absl::StrCat("\"", key, "\": expected ", expected,
                                                   ", got ", value->size(), " elements"));
  }
  for (size_t i = 0; i < out.size(); ++i) {
    const json& element = (*value)[i];
    if (!element.is_number()) {
      return absl::InvalidArgumentError(absl::StrCat("\"", key, "\"[", i, "]: expected a number, got ",
                                                     TypeName(element)));
    }
    float f;
    if (!ToFloat(element, &f)) {
      return absl::InvalidArgumentError(
          absl::StrCat("\"", key, "\"[", i, "]: number out of float range"));
    }
  }
  // Written only once every element passed, so a failed read leaves `out` untouched.
  for (size_t i = 0; i < out.size(); ++i) ToFloat((*value)[i], &out[i]);
  return absl::OkStatus();
}

absl::Status ReadUint32(const json& config, absl::string_view key, uint32_t* out) {
  const json* value = Find(config, key);
  if (value == nullptr) return absl::OkStatus();
  if (!value->is_number_unsigned() && !(value->is_number_integer() && value->get<int64_t>() >= 0)) {
    return FieldError(key, "a non-negative integer", *value);
  }
  const uint64_t v = value->get<uint64_t>();
  if (v > 0xFFFFFFFFu) {
    return absl::InvalidArgumentError(absl::StrCat("\"", key, "\": ", v, " does not fit 32 bits"));
  }
  *out = static_cast<uint32_t>(v);
  return absl::OkStatus();
}

absl::Status ReadString(const json& config, absl::string_view key, std::string* out) {
  const json* value = Find(config, key);
  if (value == nullptr) return absl::OkStatus();
  if (!value->is_string()) return FieldError(key, "a string", *value);
  *out = value->get_ref<const std::string&>();
  return absl::OkStatus();
}

absl::Status CheckComponentKeys(const json& config, std::initializer_list<absl::string_view> allowed) {
  if (!config.is_object()) return absl::InvalidArgumentError("component: expected an object");
  for (auto it = config.begin(); it != config.end(); ++it) {
    const std::string& key = it.key();
    if (key == "type" || key == "name") continue;
    if (std::find(allowed.begin(), allowed.end(), absl::string_view(key)) == allowed.end()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "unknown key \"", UserText(key), "\" (this component reads: ", absl::StrJoin(allowed, ", "), ")"));
    }
  }
  return absl::OkStatus();
}

absl::Status EntityCompiler::RegisterComponentCompiler(absl::string_view type_name,
                                                       CompileFunction compile, int spawn_order,
                                                       uint32_t instance_size) {
  ComponentCompileInfo info;
  info.type_name = std::string(type_name);
  info.compile = std::move(compile);
  info.spawn_order = spawn_order;
  info.instance_size = instance_size;
  return RegisterComponentCompiler(std::move(info));
}

absl::Status EntityCompiler::RegisterComponentCompiler(ComponentCompileInfo info) {
  const std::string& type_name = info.type_name;
  if (type_name.empty()) return absl::InvalidArgumentError("component type name is empty");
  if (absl::StartsWith(type_name, "strata.")) {
    return absl::InvalidArgumentError(absl::StrCat(
        "component type \"", UserText(type_name), "\": names beginning with \"strata.\" are reserved"));
  }
  if (!info.compile) return absl::InvalidArgumentError("compile function is empty");
  if (by_name_.contains(type_name)) {
    return absl::AlreadyExistsError(
        absl::StrCat("component type \"", UserText(type_name), "\" is already registered"));
  }
  const IdString32 id(type_name);
  for (const Registration& r : registrations_) {
    if (r.id == id) {
      return absl::AlreadyExistsError(absl::StrCat("component type \"", UserText(type_name),
                                                   "\" has the same IdString32 ", id.DebugString(),
                                                   " as \"", r.info.type_name, "\""));
    }
  }
  const uint32_t fingerprint = info.layout.empty() ? 0 : IdString32::Hash(info.layout);
  by_name_.emplace(type_name, registrations_.size());
  registrations_.push_back(Registration{std::move(info), id, fingerprint});
  return absl::OkStatus();
}

uint32_t ParseNameId(absl::string_view name, bool* literal) {
  if (literal != nullptr) *literal = false;
  if (name.size() != 9 || name[0] != '#') return IdString32::Hash(name);
  uint32_t value = 0;
  for (size_t i = 1; i < 9; ++i) {
    const char c = name[i];
    uint32_t digit;
    if (c >= '0' && c <= '9') {
      digit = c - '0';
    } else if (c >= 'a' && c <= 'f') {
      digit = c - 'a' + 10;
    } else {
      return IdString32::Hash(name);
    }
    value = value << 4 | digit;
  }
  if (literal != nullptr) *literal = true;
  return value;
}

void ComponentDataWriter::WriteName(absl::string_view text) {
  bool literal = false;
  const uint32_t id = ParseNameId(text, &literal);
  if (!literal && name_texts_ != nullptr) name_texts_->emplace_back(text);
  WriteU32(id);
}

namespace {

// The level's entities as the compiler numbers them, for paths and references.
struct EntityTable {
  std::vector<uint32_t> parent;
  std::vector<uint32_t> position;          // index in the parent's children (or entities)
  std::vector<const std::string*> name;    // nullptr: unnamed

  // Path: `entities[3].children[1] ("wheel")`. O(depth): built only for messages.
  std::string Path(uint32_t k) const {
    std::vector<uint32_t> chain;
    for (uint32_t e = k; e != kNoParent; e = parent[e]) chain.push_back(e);
    std::string path;
    for (size_t i = chain.size(); i-- > 0;) {
      absl::StrAppend(&path, i + 1 == chain.size() ? "entities[" : ".children[",
                      position[chain[i]], "]");
    }
    if (name[k] != nullptr) absl::StrAppend(&path, " (\"", UserText(*name[k]), "\")");
    return path;
  }
  // ChildPath: the path of child `i` of `parent_entity` (or of root `i`), before it
  // has a number.
  std::string ChildPath(uint32_t parent_entity, size_t i) const {
    if (parent_entity == kNoParent) return absl::StrCat("entities[", i, "]");
    std::string path = Path(parent_entity);
    // Drop the parent's name: the child is what the message is about.
    if (name[parent_entity] != nullptr) path.resize(path.rfind(" (\""));
    return absl::StrCat(path, ".children[", i, "]");
  }
};

constexpr uint32_t kAmbiguous = 0xFFFFFFFEu;

// Resolves entity references by unique name, or by a path of names from a root.
class ReferenceResolver {
 public:
  explicit ReferenceResolver(const EntityTable& table) : table_(table) {
    for (uint32_t k = 0; k < table.name.size(); ++k) {
      if (table.name[k] == nullptr) continue;
      auto [it, inserted] = by_name_.emplace(*table.name[k], k);
      if (!inserted) it->second = kAmbiguous;
    }
  }

  absl::StatusOr<uint32_t> Resolve(absl::string_view reference) {
    auto it = by_name_.find(reference);
    if (it != by_name_.end() && it->second != kAmbiguous) return it->second;
    if (reference.find('/') != absl::string_view::npos) return ResolvePath(reference);
    uint32_t number = 0;
    if (reference.size() > 1 && reference[0] == '#' &&
        absl::SimpleAtoi(reference.substr(1), &number)) {
      if (number < table_.parent.size()) return number;
      return absl::InvalidArgumentError(absl::StrCat("entity number ", UserText(reference),
                                                     " is past the level's ", table_.parent.size(),
                                                     " entities"));
    }
    if (it != by_name_.end()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "several entities are named \"", UserText(reference),
          "\"; refer to one by its path of names from a root (\"a/b/c\")"));
    }
    return absl::InvalidArgumentError(
        absl::StrCat("no entity of this level is named \"", UserText(reference), "\""));
  }

 private:
  absl::StatusOr<uint32_t> ResolvePath(absl::string_view path) {
    if (by_parent_.empty()) {
      for (uint32_t k = 0; k < table_.name.size(); ++k) {
        if (table_.name[k] == nullptr) continue;
        auto [it, inserted] = by_parent_.emplace(std::make_pair(table_.parent[k],
                                                                absl::string_view(*table_.name[k])), k);
        if (!inserted) it->second = kAmbiguous;
      }
    }
    uint32_t at = kNoParent;
    for (absl::string_view part : absl::StrSplit(path, '/')) {
      auto it = by_parent_.find(std::make_pair(at, part));
      if (it == by_parent_.end()) {
        return absl::InvalidArgumentError(absl::StrCat("path \"", UserText(path), "\": no entity \"",
                                                       UserText(part), "\" there"));
      }
      if (it->second == kAmbiguous) {
        return absl::InvalidArgumentError(absl::StrCat("path \"", UserText(path), "\": several \"",
                                                       UserText(part), "\" there"));
      }
      at = it->second;
    }
    return at;
  }

  const EntityTable& table_;
  absl::flat_hash_map<absl::string_view, uint32_t> by_name_;
  absl::flat_hash_map<std::pair<uint32_t, absl::string_view>, uint32_t> by_parent_;
};

}  // namespace

absl::StatusOr<EntityCompiler::Result> EntityCompiler::Compile(absl::string_view json_text,
                                                               const Options& options) const {
  // Strict: UTF-8 throughout, no key twice in an object, syntax errors with line and column.
  json root;
  STRATA_RETURN_IF_ERROR(ParseStrictJson(json_text, &root));
  if (!root.is_object()) {
    return absl::InvalidArgumentError(
        absl::StrCat("level: expected an object {\"entities\": [...]}, got ", TypeName(root)));
  }
  for (auto it = root.begin(); it != root.end(); ++it) {
    if (it.key() != "entities") {
      return absl::InvalidArgumentError(absl::StrCat(
          "level: unknown key \"", UserText(it.key()), "\" (expected only \"entities\")"));
    }
  }
  const json* entities = Find(root, "entities");
  if (entities == nullptr || !entities->is_array()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "level: \"entities\": expected an array, got ",
        entities == nullptr ? "nothing" : TypeName(*entities)));
  }

  Result result;
  EntityResourceContents contents;
  EntityTable table;
  // One accumulator per registered type, indexed like registrations_, with the entity
  // references its instances hold (resolved once every entity is numbered).
  std::vector<ComponentTypeContents> types(registrations_.size());
  std::vector<std::vector<EntityRefFixup>> fixups(registrations_.size());
  struct FixupOwner {
    uint32_t entity;
    uint32_t component;
  };
  std::vector<std::vector<FixupOwner>> fixup_owners(registrations_.size());
  for (size_t r = 0; r < registrations_.size(); ++r) {
    types[r].type = registrations_[r].id;
    types[r].instance_stride = registrations_[r].info.instance_size;
    types[r].layout_fingerprint = registrations_[r].fingerprint;
  }
  // Instance names whose text differs from the type name, for the strata.names section.
  absl::flat_hash_map<uint32_t, std::string> name_text;

  // Depth-first with an explicit stack (hostile nesting cannot overflow the call stack),
  // numbering entities in pre-order so every parent precedes its children. Paths are
  // rebuilt from the table only for messages, so deep nesting stays linear.
  struct Pending {
    const json* entity;
    uint32_t parent;
    uint32_t position;
  };
  std::vector<Pending> stack;
  for (size_t i = entities->size(); i-- > 0;) {
    stack.push_back({&(*entities)[i], kNoParent, static_cast<uint32_t>(i)});
  }
  absl::flat_hash_set<std::string> names_in_entity;
  std::vector<uint32_t> per_entity_count(registrations_.size(), 0);
  std::vector<std::string> field_names;  // name-field texts of the current instance
  std::vector<size_t> counted;
  while (!stack.empty()) {
    const Pending pending = stack.back();
    stack.pop_back();
    const json& entity = *pending.entity;
    if (!entity.is_object()) {
      return absl::InvalidArgumentError(absl::StrCat(table.ChildPath(pending.parent, pending.position),
                                                     ": expected an entity object, got ",
                                                     TypeName(entity)));
    }
    if (contents.parent_index.size() >= kNoParent - 1) {
      return absl::ResourceExhaustedError("level: too many entities");
    }
    const uint32_t index = static_cast<uint32_t>(contents.parent_index.size());
    contents.parent_index.push_back(pending.parent);
    table.parent.push_back(pending.parent);
    table.position.push_back(pending.position);
    table.name.push_back(nullptr);
    const json* components = nullptr;
    const json* children = nullptr;
    for (auto it = entity.begin(); it != entity.end(); ++it) {
      const std::string& key = it.key();
      if (key == "name") {
        if (!it->is_string()) {
          return absl::InvalidArgumentError(
              absl::StrCat(table.Path(index), ": ", FieldError(key, "a string", *it).message()));
        }
        table.name[index] = &it->get_ref<const std::string&>();
      } else if (key == "components") {
        components = &*it;
      } else if (key == "children") {
        children = &*it;
      } else {
        return absl::InvalidArgumentError(absl::StrCat(
            table.Path(index), ": unknown key \"", UserText(key),
            "\" (expected \"name\", \"components\", \"children\")"));
      }
    }

    if (components != nullptr) {
      if (!components->is_array()) {
        return absl::InvalidArgumentError(absl::StrCat(
            table.Path(index), ": ", FieldError("components", "an array", *components).message()));
      }
      names_in_entity.clear();
      for (size_t r : counted) per_entity_count[r] = 0;
      counted.clear();
      for (size_t c = 0; c < components->size(); ++c) {
        const json& component = (*components)[c];
        auto where = [&] { return absl::StrCat(table.Path(index), ".components[", c, "]"); };
        if (!component.is_object()) {
          return absl::InvalidArgumentError(
              absl::StrCat(where(), ": expected a component object, got ", TypeName(component)));
        }
        const json* type = Find(component, "type");
        if (type == nullptr || !type->is_string()) {
          return absl::InvalidArgumentError(absl::StrCat(
              where(), ": \"type\": expected a string, got ",
              type == nullptr ? "nothing" : TypeName(*type)));
        }
        const std::string& type_name = type->get_ref<const std::string&>();
        const json* name_json = Find(component, "name");
        if (name_json != nullptr && !name_json->is_string()) {
          return absl::InvalidArgumentError(absl::StrCat(where(), " \"", UserText(type_name),
                                                         "\": \"name\": expected a string, got ",
                                                         TypeName(*name_json)));
        }
        const std::string& name =
            name_json != nullptr ? name_json->get_ref<const std::string&>() : type_name;
        if (!names_in_entity.insert(name).second) {
          return absl::InvalidArgumentError(absl::StrCat(
              where(), " \"", UserText(type_name), "\": component name \"", UserText(name),
              "\" is used twice in this entity (names must be unique within an entity)"));
        }
        auto reg = by_name_.find(type_name);
        if (reg == by_name_.end()) {
          if (options.unknown_components == UnknownComponents::kSkip) {
            result.warnings.push_back(absl::StrCat(where(), ": skipped component of unknown type \"",
                                                   UserText(type_name), "\""));
            continue;
          }
          return absl::InvalidArgumentError(absl::StrCat(where(), ": unknown component type \"",
                                                         UserText(type_name),
                                                         "\" (no compile function registered)"));
        }
        const size_t r = reg->second;
        const Registration& registration = registrations_[r];
        if (per_entity_count[r]++ == 0) counted.push_back(r);
        if (registration.info.max_per_entity != 0 &&
            per_entity_count[r] > registration.info.max_per_entity) {
          return absl::InvalidArgumentError(absl::StrCat(
              where(), " \"", UserText(type_name), "\": an entity has at most ",
              registration.info.max_per_entity, " component", registration.info.max_per_entity == 1 ? "" : "s",
              " of this type"));
        }
        ComponentTypeContents& out = types[r];
        ComponentDataWriter writer(options.endianness, &out.data, &fixups[r], &field_names);
        absl::Status status = registration.info.compile(component, writer);
        if (!status.ok()) {
          return absl::Status(status.code(), absl::StrCat(where(), " \"", UserText(type_name), "\" (",
                                                          UserText(name), "): ", status.message()));
        }
        if (registration.info.instance_size != 0 &&
            writer.size() != registration.info.instance_size) {
          return absl::InternalError(absl::StrCat(
              where(), " \"", UserText(type_name), "\": compile function wrote ", writer.size(),
              " bytes, but the type was registered with instance_size ",
              registration.info.instance_size));
        }
        fixup_owners[r].resize(fixups[r].size(), FixupOwner{index, static_cast<uint32_t>(c)});
        bool literal = false;
        const uint32_t name_id = ParseNameId(name, &literal);
        if (options.keep_names && name != type_name && !literal) name_text.try_emplace(name_id, name);
        if (options.keep_names) {
          for (std::string& text : field_names) name_text.try_emplace(IdString32::Hash(text), std::move(text));
        }
        field_names.clear();
        out.entity_index.push_back(index);
        out.names.push_back(name_id);
      }
    }
    if (children != nullptr) {
      if (!children->is_array()) {
        return absl::InvalidArgumentError(absl::StrCat(
            table.Path(index), ": ", FieldError("children", "an array", *children).message()));
      }
      for (size_t i = children->size(); i-- > 0;) {
        stack.push_back({&(*children)[i], index, static_cast<uint32_t>(i)});
      }
    }
  }

  // Entity references, now that every entity has its number.
  ReferenceResolver resolver(table);
  for (size_t r = 0; r < registrations_.size(); ++r) {
    for (size_t f = 0; f < fixups[r].size(); ++f) {
      const EntityRefFixup& fixup = fixups[r][f];
      absl::StatusOr<uint32_t> target = resolver.Resolve(fixup.reference);
      if (!target.ok()) {
        const FixupOwner owner = fixup_owners[r][f];
        return absl::InvalidArgumentError(absl::StrCat(
            table.Path(owner.entity), ".components[", owner.component, "] \"",
            registrations_[r].info.type_name, "\": \"", fixup.field, "\": ",
            target.status().message()));
      }
      uint32_t stored = *target;
      if (options.endianness != kNativeEndianness) stored = absl::gbswap_32(stored);
      std::memcpy(types[r].data.data() + fixup.offset, &stored, sizeof(stored));
    }
  }

  if (options.keep_names) {
    std::vector<uint32_t> named;
    std::vector<std::string> entity_names;
    for (uint32_t k = 0; k < table.name.size(); ++k) {
      if (table.name[k] == nullptr || table.name[k]->empty()) continue;
      named.push_back(k);
      entity_names.push_back(*table.name[k]);
    }
    if (!named.empty()) {
      contents.component_types.push_back(MakeStringSection(
          IdString32(kEntityNamesSection), std::move(named), {}, entity_names, options.endianness));
    }
    if (!name_text.empty()) {
      std::vector<std::pair<uint32_t, std::string>> sorted(name_text.begin(), name_text.end());
      std::sort(sorted.begin(), sorted.end());
      std::vector<std::string> strings;
      for (auto& [id, text] : sorted) strings.push_back(std::move(text));
      contents.component_types.push_back(
          MakeStringSection(IdString32(kNameStringsSection),
                            std::vector<uint32_t>(strings.size(), 0), {}, strings,
                            options.endianness));
    }
  }

  // Spawn order: ascending spawn_order, ties by name so the output is deterministic.
  std::vector<size_t> order(registrations_.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    const ComponentCompileInfo& ra = registrations_[a].info;
    const ComponentCompileInfo& rb = registrations_[b].info;
    return ra.spawn_order != rb.spawn_order ? ra.spawn_order < rb.spawn_order
                                            : ra.type_name < rb.type_name;
  });
  std::vector<uint32_t> layout_types;
  std::vector<std::string> layouts;
  for (size_t r : order) {
    if (types[r].entity_index.empty() || registrations_[r].info.layout.empty()) continue;
    layout_types.push_back(registrations_[r].id.value());
    layouts.push_back(registrations_[r].info.layout);
  }
  if (!layouts.empty()) {
    contents.component_types.push_back(MakeStringSection(
        IdString32(kLayoutsSection), std::vector<uint32_t>(layouts.size(), 0),
        std::move(layout_types), layouts, options.endianness));
  }
  for (size_t r : order) {
    if (!types[r].entity_index.empty()) contents.component_types.push_back(std::move(types[r]));
  }
  STRATA_ASSIGN_OR_RETURN(result.blob, WriteEntityResource(contents, options.endianness));
  result.num_entities = static_cast<uint32_t>(contents.parent_index.size());
  return result;
}

}  // namespace strata
