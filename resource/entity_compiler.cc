#include "resource/entity_compiler.h"

#include <algorithm>
#include <limits>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"

namespace strata {
namespace {

using json = nlohmann::json;

// Finds `key` in an object without nlohmann's throwing accessors; nullptr if absent.
const json* Find(const json& object, absl::string_view key) {
  auto it = object.find(std::string(key));
  return it == object.end() ? nullptr : &*it;
}

const char* TypeName(const json& value) { return value.type_name(); }

// Records the first syntax error that nlohmann's SAX parser reports, without throwing.
class SyntaxErrorCatcher : public nlohmann::json_sax<json> {
 public:
  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t) override { return true; }
  bool number_unsigned(number_unsigned_t) override { return true; }
  bool number_float(number_float_t, const string_t&) override { return true; }
  bool string(string_t&) override { return true; }
  bool binary(binary_t&) override { return true; }
  bool start_object(std::size_t) override { return true; }
  bool key(string_t&) override { return true; }
  bool end_object() override { return true; }
  bool start_array(std::size_t) override { return true; }
  bool end_array() override { return true; }
  bool parse_error(std::size_t position, const std::string& last_token,
                   const nlohmann::detail::exception& ex) override {
    position_ = position;
    last_token_ = last_token;
    message_ = ex.what();
    return false;
  }

  size_t position() const { return position_; }
  const std::string& last_token() const { return last_token_; }
  // The reason without nlohmann's "[json.exception...] parse error at ...: " prefix;
  // we print our own line and column.
  std::string reason() const {
    const size_t colon = message_.find(": ");
    return colon == std::string::npos ? message_ : message_.substr(colon + 2);
  }

 private:
  size_t position_ = 0;
  std::string last_token_;
  std::string message_;
};

absl::Status SyntaxError(absl::string_view text) {
  SyntaxErrorCatcher catcher;
  json::sax_parse(text.begin(), text.end(), &catcher);
  // `position` counts the characters read, the offending one included; at the end of
  // the input it is size + 1, pointing just past the last character.
  const size_t offending = catcher.position() == 0 ? 0 : catcher.position() - 1;
  const size_t scanned = std::min(offending, text.size());
  size_t line = 1;
  size_t line_start = 0;
  for (size_t i = 0; i < scanned; ++i) {
    if (text[i] == '\n') {
      ++line;
      line_start = i + 1;
    }
  }
  const size_t column = offending - line_start + 1;
  return absl::InvalidArgumentError(
      absl::StrCat("JSON syntax error at line ", line, ", column ", column, ": ", catcher.reason()));
}

absl::Status FieldError(absl::string_view key, absl::string_view expected, const json& value) {
  return absl::InvalidArgumentError(
      absl::StrCat("\"", key, "\": expected ", expected, ", got ", TypeName(value)));
}

std::string EntityPath(absl::string_view path, const json& entity) {
  const json* name = entity.is_object() ? Find(entity, "name") : nullptr;
  if (name != nullptr && name->is_string()) {
    return absl::StrCat(path, " (\"", name->get_ref<const std::string&>(), "\")");
  }
  return std::string(path);
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
          "unknown key \"", key, "\" (this component reads: ", absl::StrJoin(allowed, ", "), ")"));
    }
  }
  return absl::OkStatus();
}

absl::Status EntityCompiler::RegisterComponentCompiler(absl::string_view type_name,
                                                       CompileFunction compile, int spawn_order,
                                                       uint32_t instance_size) {
  if (type_name.empty()) return absl::InvalidArgumentError("component type name is empty");
  if (!compile) return absl::InvalidArgumentError("compile function is empty");
  if (by_name_.contains(type_name)) {
    return absl::AlreadyExistsError(
        absl::StrCat("component type \"", type_name, "\" is already registered"));
  }
  const IdString32 id(type_name);
  for (const Registration& r : registrations_) {
    if (r.id == id) {
      return absl::AlreadyExistsError(absl::StrCat("component type \"", type_name,
                                                   "\" has the same IdString32 ", id.DebugString(),
                                                   " as \"", r.name, "\""));
    }
  }
  by_name_.emplace(std::string(type_name), registrations_.size());
  registrations_.push_back(
      Registration{std::string(type_name), id, std::move(compile), spawn_order, instance_size});
  return absl::OkStatus();
}

absl::StatusOr<EntityCompiler::Result> EntityCompiler::Compile(absl::string_view json_text,
                                                               const Options& options) const {
  const json root = json::parse(json_text.begin(), json_text.end(), /*cb=*/nullptr,
                                /*allow_exceptions=*/false);
  if (root.is_discarded()) return SyntaxError(json_text);
  if (!root.is_object()) {
    return absl::InvalidArgumentError(
        absl::StrCat("level: expected an object {\"entities\": [...]}, got ", TypeName(root)));
  }
  for (auto it = root.begin(); it != root.end(); ++it) {
    if (it.key() != "entities") {
      return absl::InvalidArgumentError(
          absl::StrCat("level: unknown key \"", it.key(), "\" (expected only \"entities\")"));
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
  // One accumulator per registered type, indexed like registrations_.
  std::vector<ComponentTypeContents> types(registrations_.size());
  for (size_t r = 0; r < registrations_.size(); ++r) {
    types[r].type = registrations_[r].id;
    types[r].instance_stride = registrations_[r].instance_size;
  }

  // Depth-first with an explicit stack (hostile nesting cannot overflow the call stack),
  // numbering entities in pre-order so every parent precedes its children.
  struct Pending {
    const json* entity;
    uint32_t parent;
    std::string path;
  };
  std::vector<Pending> stack;
  for (size_t i = entities->size(); i-- > 0;) {
    stack.push_back({&(*entities)[i], kNoParent, absl::StrCat("entities[", i, "]")});
  }
  absl::flat_hash_set<std::string> names_in_entity;
  while (!stack.empty()) {
    Pending pending = std::move(stack.back());
    stack.pop_back();
    const json& entity = *pending.entity;
    if (!entity.is_object()) {
      return absl::InvalidArgumentError(
          absl::StrCat(pending.path, ": expected an entity object, got ", TypeName(entity)));
    }
    const std::string path = EntityPath(pending.path, entity);
    const json* components = nullptr;
    const json* children = nullptr;
    for (auto it = entity.begin(); it != entity.end(); ++it) {
      const std::string& key = it.key();
      if (key == "name") {
        if (!it->is_string()) return absl::InvalidArgumentError(absl::StrCat(path, ": ", FieldError(key, "a string", *it).message()));
      } else if (key == "components") {
        components = &*it;
      } else if (key == "children") {
        children = &*it;
      } else {
        return absl::InvalidArgumentError(absl::StrCat(
            path, ": unknown key \"", key, "\" (expected \"name\", \"components\", \"children\")"));
      }
    }
    if (contents.parent_index.size() >= kNoParent) {
      return absl::ResourceExhaustedError("level: too many entities");
    }
    const uint32_t index = static_cast<uint32_t>(contents.parent_index.size());
    contents.parent_index.push_back(pending.parent);

    if (components != nullptr) {
      if (!components->is_array()) {
        return absl::InvalidArgumentError(
            absl::StrCat(path, ": ", FieldError("components", "an array", *components).message()));
      }
      names_in_entity.clear();
      for (size_t c = 0; c < components->size(); ++c) {
        const json& component = (*components)[c];
        const std::string where = absl::StrCat(path, ".components[", c, "]");
        if (!component.is_object()) {
          return absl::InvalidArgumentError(
              absl::StrCat(where, ": expected a component object, got ", TypeName(component)));
        }
        const json* type = Find(component, "type");
        if (type == nullptr || !type->is_string()) {
          return absl::InvalidArgumentError(absl::StrCat(
              where, ": \"type\": expected a string, got ",
              type == nullptr ? "nothing" : TypeName(*type)));
        }
        const std::string& type_name = type->get_ref<const std::string&>();
        const json* name_json = Find(component, "name");
        if (name_json != nullptr && !name_json->is_string()) {
          return absl::InvalidArgumentError(absl::StrCat(
              where, " \"", type_name, "\": \"name\": expected a string, got ", TypeName(*name_json)));
        }
        const std::string& name =
            name_json != nullptr ? name_json->get_ref<const std::string&>() : type_name;
        if (!names_in_entity.insert(name).second) {
          return absl::InvalidArgumentError(absl::StrCat(
              where, " \"", type_name, "\": component name \"", name,
              "\" is used twice in this entity (names must be unique within an entity)"));
        }
        auto reg = by_name_.find(type_name);
        if (reg == by_name_.end()) {
          if (options.unknown_components == UnknownComponents::kSkip) {
            result.warnings.push_back(
                absl::StrCat(where, ": skipped component of unknown type \"", type_name, "\""));
            continue;
          }
          return absl::InvalidArgumentError(absl::StrCat(
              where, ": unknown component type \"", type_name, "\" (no compile function registered)"));
        }
        const Registration& registration = registrations_[reg->second];
        ComponentTypeContents& out = types[reg->second];
        ComponentDataWriter writer(options.endianness, &out.data);
        absl::Status status = registration.compile(component, writer);
        if (!status.ok()) {
          return absl::Status(status.code(), absl::StrCat(where, " \"", type_name, "\" (", name,
                                                          "): ", status.message()));
        }
        if (registration.instance_size != 0 && writer.size() != registration.instance_size) {
          return absl::InternalError(absl::StrCat(
              where, " \"", type_name, "\": compile function wrote ", writer.size(),
              " bytes, but the type was registered with instance_size ", registration.instance_size));
        }
        out.entity_index.push_back(index);
        out.names.push_back(IdString32::Hash(name));
      }
    }
    if (children != nullptr) {
      if (!children->is_array()) {
        return absl::InvalidArgumentError(
            absl::StrCat(path, ": ", FieldError("children", "an array", *children).message()));
      }
      for (size_t i = children->size(); i-- > 0;) {
        stack.push_back({&(*children)[i], index, absl::StrCat(pending.path, ".children[", i, "]")});
      }
    }
  }

  // Spawn order: ascending spawn_order, ties by name so the output is deterministic.
  std::vector<size_t> order(registrations_.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    const Registration& ra = registrations_[a];
    const Registration& rb = registrations_[b];
    return ra.spawn_order != rb.spawn_order ? ra.spawn_order < rb.spawn_order : ra.name < rb.name;
  });
  for (size_t r : order) {
    if (!types[r].entity_index.empty()) contents.component_types.push_back(std::move(types[r]));
  }
  STRATA_ASSIGN_OR_RETURN(result.blob, WriteEntityResource(contents, options.endianness));
  result.num_entities = static_cast<uint32_t>(contents.parent_index.size());
  return result;
}

}  // namespace strata
