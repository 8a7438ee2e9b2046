// The helpers compile functions use (ReadFloat, CheckComponentKeys, ...) and the
// ComponentDataWriter's name handling; see entity_compiler.h.
#include <algorithm>
#include <limits>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/user_text.h"
#include "nlohmann/json.hpp"
#include "resource/entity_compiler.h"

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
  // Worded only on the error path: this runs for every instance.
  auto expected = [&] { return absl::StrCat("an array of ", out.size(), " numbers"); };
  if (!value->is_array()) return FieldError(key, expected(), *value);
  if (value->size() != out.size()) {
    return absl::InvalidArgumentError(absl::StrCat("\"", key, "\": expected ", expected(),
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

}  // namespace strata
