#include "component/field.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "base/status_macros.h"
#include "base/user_text.h"
#include "nlohmann/json.hpp"
#include "resource/strict_json.h"

namespace strata {
namespace {

using json = nlohmann::json;

uint32_t Load32(const std::byte* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}
void Store32(std::byte* p, uint32_t v) { std::memcpy(p, &v, 4); }
float LoadF(const std::byte* p) {
  float v;
  std::memcpy(&v, p, 4);
  return v;
}
template <typename T>
T LoadAs(const std::byte* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

// Inclusive bounds of an integer field type.
struct IntegerBounds {
  int64_t lo;
  uint64_t hi;
};
IntegerBounds BoundsOf(FieldType type) {
  switch (type) {
    case FieldType::kI8:
      return {INT8_MIN, INT8_MAX};
    case FieldType::kU8:
      return {0, UINT8_MAX};
    case FieldType::kI16:
      return {INT16_MIN, INT16_MAX};
    case FieldType::kU16:
      return {0, UINT16_MAX};
    case FieldType::kI32:
      return {INT32_MIN, INT32_MAX};
    case FieldType::kU32:
      return {0, UINT32_MAX};
    case FieldType::kI64:
      return {INT64_MIN, INT64_MAX};
    default:  // kU64
      return {0, UINT64_MAX};
  }
}

bool IsSignedInteger(FieldType type) {
  return type == FieldType::kI8 || type == FieldType::kI16 || type == FieldType::kI32 ||
         type == FieldType::kI64;
}

// An integer field's value as int64 (signed types) or uint64 bits (unsigned), from
// native bytes of its size.
int64_t LoadSigned(FieldType type, const std::byte* p) {
  switch (type) {
    case FieldType::kI8:
      return LoadAs<int8_t>(p);
    case FieldType::kI16:
      return LoadAs<int16_t>(p);
    case FieldType::kI32:
      return LoadAs<int32_t>(p);
    default:
      return LoadAs<int64_t>(p);
  }
}
uint64_t LoadUnsigned(FieldType type, const std::byte* p) {
  switch (type) {
    case FieldType::kU8:
      return LoadAs<uint8_t>(p);
    case FieldType::kU16:
      return LoadAs<uint16_t>(p);
    case FieldType::kU32:
      return LoadAs<uint32_t>(p);
    default:
      return LoadAs<uint64_t>(p);
  }
}
// IntegerBits: an integer's value in native bytes of `type`'s size, sign-extended for
// signed types (the convention of EnumValue::value and ToInteger).
uint64_t IntegerBits(FieldType type, const std::byte* p) {
  return IsSignedInteger(type) ? static_cast<uint64_t>(LoadSigned(type, p)) : LoadUnsigned(type, p);
}
// StoreIntegerBits: `bits` truncated to `type`'s size, in native bytes.
void StoreIntegerBits(FieldType type, uint64_t bits, std::byte* p) {
  switch (FieldBlobSize(type)) {
    case 1: {
      const uint8_t v = static_cast<uint8_t>(bits);
      std::memcpy(p, &v, 1);
      return;
    }
    case 2: {
      const uint16_t v = static_cast<uint16_t>(bits);
      std::memcpy(p, &v, 2);
      return;
    }
    case 4: {
      const uint32_t v = static_cast<uint32_t>(bits);
      std::memcpy(p, &v, 4);
      return;
    }
    default:
      std::memcpy(p, &bits, 8);
  }
}
// IntegerTypeOf: the integer type whose bounds and width an integer or enum field has.
FieldType IntegerTypeOf(const FieldInfo& field) {
  return field.type == FieldType::kEnum ? field.integer : field.type;
}
// IntegerText: the decimal text of an integer's bits.
std::string IntegerText(FieldType type, uint64_t bits) {
  return IsSignedInteger(type) ? absl::StrCat(static_cast<int64_t>(bits)) : absl::StrCat(bits);
}

// EnumNameOf / EnumValueOf: an enum field's name of `value` (nullptr: it has none) and
// value of `name`.
const std::string* EnumNameOf(const FieldInfo& field, uint64_t value) {
  for (const EnumValue& v : *field.enum_values) {
    if (v.value == value) return &v.name;
  }
  return nullptr;
}
std::optional<uint64_t> EnumValueOf(const FieldInfo& field, absl::string_view name) {
  for (const EnumValue& v : *field.enum_values) {
    if (v.name == name) return v.value;
  }
  return std::nullopt;
}
// EnumNames: "neutral, red, blue", for messages.
std::string EnumNames(const FieldInfo& field) {
  std::string names;
  for (const EnumValue& v : *field.enum_values) absl::StrAppend(&names, names.empty() ? "" : ", ", v.name);
  return names;
}

// StringText: a str's text, the bytes before its first NUL (or all of them).
absl::string_view StringText(const FieldInfo& field, const std::byte* p) {
  const auto* chars = reinterpret_cast<const char*>(p);
  const void* nul = std::memchr(chars, 0, field.capacity);
  return absl::string_view(chars, nul == nullptr ? field.capacity
                                                 : static_cast<size_t>(static_cast<const char*>(nul) - chars));
}
// IsCanonicalString: the bytes are UTF-8 text followed by zeros only, what a string in
// level JSON compiles to (FixedString's bytes always are, unless written raw).
bool IsCanonicalString(const FieldInfo& field, const std::byte* p) {
  const absl::string_view text = StringText(field, p);
  for (size_t i = text.size(); i < field.capacity; ++i) {
    if (p[i] != std::byte{0}) return false;
  }
  return CheckUtf8(text).ok();
}
// The value of a numeric field as a double (range checks; NaN stays NaN).
double NumericValue(FieldType type, const std::byte* p) {
  if (type == FieldType::kF32) return LoadF(p);
  if (type == FieldType::kF64) return LoadAs<double>(p);
  if (IsSignedInteger(type)) return static_cast<double>(LoadSigned(type, p));
  return static_cast<double>(LoadUnsigned(type, p));
}

// Number of floats of a vector-like field, 1 for a scalar f32, 0 otherwise.
uint32_t FloatCount(FieldType type) {
  switch (type) {
    case FieldType::kF32:
      return 1;
    case FieldType::kVec3:
      return 3;
    case FieldType::kVec4:
    case FieldType::kColor:
    case FieldType::kQuat:
      return 4;
    default:
      return 0;
  }
}

absl::Status Error(const FieldInfo& field, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat("\"", field.name, "\": ", what));
}

// CheckStringFits: `text` fits a str of the field's capacity (no NUL, at most capacity
// bytes).
absl::Status CheckStringFits(const FieldInfo& field, absl::string_view text) {
  if (const size_t nul = text.find('\0'); nul != absl::string_view::npos) {
    return Error(field, absl::StrCat("a NUL byte at ", nul, " (a str holds text without NULs)"));
  }
  if (text.size() > field.capacity) {
    return Error(field, absl::StrCat("\"", UserText(text), "\" is ", text.size(), " bytes, more than its ",
                                     field.capacity));
  }
  return absl::OkStatus();
}

// InRange: v lies in the field's declared range (NaN lies in none).
bool InRange(const FieldInfo& field, double v) {
  if (!field.min && !field.max) return true;
  return !std::isnan(v) && !(field.min && v < *field.min) && !(field.max && v > *field.max);
}

absl::Status CheckRange(const FieldInfo& field, double v) {
  if (!InRange(field, v)) {
    return Error(field, absl::StrFormat("%g is outside [%g, %g]", v,
                                        field.min.value_or(-std::numeric_limits<double>::infinity()),
                                        field.max.value_or(std::numeric_limits<double>::infinity())));
  }
  return absl::OkStatus();
}

// A float from JSON: a number within float's range (so the conversion is defined), or
// the spelling of a non-finite value (ParseNonFiniteF32). `element`: its index in a
// vector field's array, -1 for a scalar; the error's "[i]: " is built only on failure
// (a level compiles millions of elements).
absl::Status ToFloat(const FieldInfo& field, const json& value, int element, float* out) {
  auto where = [element] { return element < 0 ? std::string() : absl::StrCat("[", element, "]: "); };
  if (value.is_string()) {
    uint32_t bits;
    if (!ParseNonFiniteF32(value.get_ref<const std::string&>(), &bits)) {
      return Error(field, absl::StrCat(where(), "\"", UserText(value.get_ref<const std::string&>()),
                                       "\" is not a number (non-finite values are spelled \"inf\", "
                                       "\"-inf\", \"nan\", \"-nan\" or \"nan:0x\" and 8 hex digits)"));
    }
    std::memcpy(out, &bits, sizeof(bits));
    return absl::OkStatus();
  }
  if (!value.is_number()) {
    return Error(field, absl::StrCat(where(), "expected a number, got ", value.type_name()));
  }
  const double d = value.get<double>();
  if (!std::isfinite(d) || std::fabs(d) > std::numeric_limits<float>::max()) {
    return Error(field, absl::StrCat(where(), "number out of float range"));
  }
  *out = static_cast<float>(d);
  return absl::OkStatus();
}

// An integer from JSON for an integer field: integral numbers only (3.0 is fine, 3.5
// is not) within the type's bounds. Signed types give *out as int64, unsigned ones as
// its uint64 bits (exact to 2^64 - 1).
absl::Status ToInteger(const FieldInfo& field, const json& value, uint64_t* out) {
  const FieldType type = IntegerTypeOf(field);
  const IntegerBounds bounds = BoundsOf(type);
  const bool is_signed = IsSignedInteger(type);
  auto does_not_fit = [&](auto v) {
    return Error(field, absl::StrCat(v, " does not fit ", FieldTypeName(type)));
  };
  if (value.is_number_unsigned()) {
    const uint64_t u = value.get<uint64_t>();
    if (u > bounds.hi) return does_not_fit(u);
    *out = u;
    return absl::OkStatus();
  }
  if (value.is_number_integer()) {
    const int64_t i = value.get<int64_t>();
    if (i < bounds.lo || (i > 0 && static_cast<uint64_t>(i) > bounds.hi)) return does_not_fit(i);
    *out = static_cast<uint64_t>(i);
    return absl::OkStatus();
  }
  if (value.is_number_float()) {
    const double d = value.get<double>();
    // hi + 1 is a power of two, exact as a double: d < it keeps the cast defined.
    const double above = std::ldexp(1.0, bounds.hi == UINT64_MAX ? 64 : 64 - __builtin_clzll(bounds.hi));
    if (!(d >= static_cast<double>(bounds.lo) && d < above)) {
      return Error(field, absl::StrFormat("%g does not fit %s", d, FieldTypeName(type)));
    }
    if (d != std::trunc(d)) return Error(field, absl::StrFormat("%g is not an integer", d));
    *out = is_signed ? static_cast<uint64_t>(static_cast<int64_t>(d)) : static_cast<uint64_t>(d);
    return absl::OkStatus();
  }
  return Error(field, absl::StrCat("expected an integer, got ", value.type_name()));
}

// A double from JSON: any number, or the spelling of a non-finite value.
absl::Status ToDouble(const FieldInfo& field, const json& value, double* out) {
  if (value.is_string()) {
    uint64_t bits;
    if (!ParseNonFiniteF64(value.get_ref<const std::string&>(), &bits)) {
      return Error(field, absl::StrCat("\"", UserText(value.get_ref<const std::string&>()),
                                       "\" is not a number (non-finite values are spelled \"inf\", "
                                       "\"-inf\", \"nan\", \"-nan\" or \"nan:0x\" and 16 hex digits)"));
    }
    std::memcpy(out, &bits, sizeof(bits));
    return absl::OkStatus();
  }
  if (!value.is_number()) return Error(field, absl::StrCat("expected a number, got ", value.type_name()));
  *out = value.get<double>();
  if (!std::isfinite(*out)) return Error(field, "number out of double range");
  return absl::OkStatus();
}

// FloatToJson: a number, or the spelling of a non-finite value.
json FloatToJson(float v) {
  if (std::isfinite(v)) return v;
  uint32_t bits;
  std::memcpy(&bits, &v, sizeof(bits));
  return NonFiniteF32Spelling(bits);
}

json DoubleToJson(double v) {
  if (std::isfinite(v)) return v;
  uint64_t bits;
  std::memcpy(&bits, &v, sizeof(bits));
  return NonFiniteF64Spelling(bits);
}

std::string NameToJson(uint32_t id, const FieldTextLookup& lookup) {
  if (lookup.name_text) {
    if (const std::string* text = lookup.name_text(id)) return *text;
  }
  return absl::StrFormat("#%08x", id);
}

}  // namespace

namespace {
constexpr uint32_t kF32Sign = 0x80000000u;
constexpr uint32_t kF32Exponent = 0x7f800000u;
constexpr uint32_t kF32QuietNan = 0x7fc00000u;
}  // namespace

std::string NonFiniteF32Spelling(uint32_t bits) {
  const bool negative = (bits & kF32Sign) != 0;
  const uint32_t magnitude = bits & ~kF32Sign;
  if (magnitude == kF32Exponent) return negative ? "-inf" : "inf";
  if (magnitude == kF32QuietNan) return negative ? "-nan" : "nan";
  return absl::StrFormat("nan:0x%08x", bits);
}

bool ParseNonFiniteF32(absl::string_view text, uint32_t* bits) {
  if (text == "inf" || text == "-inf") {
    *bits = kF32Exponent | (text[0] == '-' ? kF32Sign : 0);
    return true;
  }
  if (text == "nan" || text == "-nan") {
    *bits = kF32QuietNan | (text[0] == '-' ? kF32Sign : 0);
    return true;
  }
  // "nan:0x" and exactly 8 lower-case hex digits, a NaN's bits (what export writes).
  if (text.size() != 14 || text.substr(0, 6) != "nan:0x") return false;
  uint32_t v = 0;
  for (char c : text.substr(6)) {
    const int digit = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
    if (digit < 0) return false;
    v = v << 4 | static_cast<uint32_t>(digit);
  }
  if ((v & kF32Exponent) != kF32Exponent || (v & ~(kF32Sign | kF32Exponent)) == 0) return false;
  *bits = v;
  return true;
}

namespace {
constexpr uint64_t kF64Sign = uint64_t{1} << 63;
constexpr uint64_t kF64Exponent = uint64_t{0x7ff} << 52;
constexpr uint64_t kF64QuietNan = uint64_t{0x7ff8} << 48;

// Parses "nan:0x" and exactly `digits` lower-case hex digits.
bool ParseNanBits(absl::string_view text, int digits, uint64_t* bits) {
  if (text.size() != size_t(6 + digits) || text.substr(0, 6) != "nan:0x") return false;
  uint64_t v = 0;
  for (char c : text.substr(6)) {
    const int digit = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
    if (digit < 0) return false;
    v = v << 4 | static_cast<uint64_t>(digit);
  }
  *bits = v;
  return true;
}
}  // namespace

std::string NonFiniteF64Spelling(uint64_t bits) {
  const bool negative = (bits & kF64Sign) != 0;
  const uint64_t magnitude = bits & ~kF64Sign;
  if (magnitude == kF64Exponent) return negative ? "-inf" : "inf";
  if (magnitude == kF64QuietNan) return negative ? "-nan" : "nan";
  return absl::StrFormat("nan:0x%016x", bits);
}

bool ParseNonFiniteF64(absl::string_view text, uint64_t* bits) {
  if (text == "inf" || text == "-inf") {
    *bits = kF64Exponent | (text[0] == '-' ? kF64Sign : 0);
    return true;
  }
  if (text == "nan" || text == "-nan") {
    *bits = kF64QuietNan | (text[0] == '-' ? kF64Sign : 0);
    return true;
  }
  uint64_t v;
  if (!ParseNanBits(text, 16, &v)) return false;
  if ((v & kF64Exponent) != kF64Exponent || (v & ~(kF64Sign | kF64Exponent)) == 0) return false;
  *bits = v;
  return true;
}

bool IsNumeric(FieldType type) {
  switch (type) {
    case FieldType::kF32:
    case FieldType::kI32:
    case FieldType::kU32:
    case FieldType::kF64:
    case FieldType::kI64:
    case FieldType::kU64:
    case FieldType::kI8:
    case FieldType::kU8:
    case FieldType::kI16:
    case FieldType::kU16:
      return true;
    default:
      return false;
  }
}

bool IsInteger(FieldType type) {
  return IsNumeric(type) && type != FieldType::kF32 && type != FieldType::kF64;
}

absl::string_view FieldTypeName(FieldType type) {
  switch (type) {
    case FieldType::kF32:
      return "f32";
    case FieldType::kI32:
      return "i32";
    case FieldType::kU32:
      return "u32";
    case FieldType::kBool:
      return "bool";
    case FieldType::kVec3:
      return "vec3";
    case FieldType::kVec4:
      return "vec4";
    case FieldType::kColor:
      return "color";
    case FieldType::kQuat:
      return "quat";
    case FieldType::kName:
      return "name";
    case FieldType::kEntity:
      return "entity";
    case FieldType::kF64:
      return "f64";
    case FieldType::kI64:
      return "i64";
    case FieldType::kU64:
      return "u64";
    case FieldType::kI8:
      return "i8";
    case FieldType::kU8:
      return "u8";
    case FieldType::kI16:
      return "i16";
    case FieldType::kU16:
      return "u16";
    case FieldType::kEnum:
      return "enum";
    case FieldType::kString:
      return "str";
  }
  return "unknown";
}

uint32_t FieldBlobSize(FieldType type) {
  switch (type) {
    case FieldType::kF64:
    case FieldType::kI64:
    case FieldType::kU64:
      return 8;
    case FieldType::kI8:
    case FieldType::kU8:
      return 1;
    case FieldType::kI16:
    case FieldType::kU16:
      return 2;
    case FieldType::kEnum:
    case FieldType::kString:
      return 0;  // the field's: its integer's, its capacity
    default:
      break;
  }
  const uint32_t floats = FloatCount(type);
  return floats != 0 ? 4 * floats : 4;
}

uint32_t FieldMemorySize(FieldType type) {
  switch (type) {
    case FieldType::kBool:
      return sizeof(bool);
    case FieldType::kEntity:
      return sizeof(Entity);
    default:
      return FieldBlobSize(type);
  }
}

uint32_t FieldBlobSize(const FieldInfo& field) {
  if (field.type == FieldType::kString) return field.capacity;
  return field.type == FieldType::kEnum ? FieldBlobSize(field.integer) : FieldBlobSize(field.type);
}

uint32_t FieldMemorySize(const FieldInfo& field) {
  if (field.type == FieldType::kString) return field.capacity;
  return field.type == FieldType::kEnum ? FieldMemorySize(field.integer) : FieldMemorySize(field.type);
}

absl::Status CheckStringCapacity(const FieldInfo& field) {
  if (field.capacity < 1 || field.capacity > kMaxFieldBytes) {
    return Error(field, absl::StrCat("a str holds 1 to ", kMaxFieldBytes, " bytes, not ", field.capacity));
  }
  return absl::OkStatus();
}

std::string FieldLayoutType(const FieldInfo& field) {
  if (field.type != FieldType::kEnum) return std::string(FieldTypeName(field.type));
  std::string text = absl::StrCat("enum.", FieldTypeName(field.integer), "{");
  const char* separator = "";
  for (const EnumValue& v : *field.enum_values) {
    absl::StrAppend(&text, separator, v.name, "=", IntegerText(field.integer, v.value));
    separator = ",";
  }
  return absl::StrCat(text, "}");
}

namespace {
// IsEnumName: a letter or '_', then letters, digits, '_' or '-' (nothing a layout
// description or a property's integer text uses).
bool IsEnumName(absl::string_view name) {
  if (name.empty() || !(absl::ascii_isalpha(name[0]) || name[0] == '_')) return false;
  for (char c : name) {
    if (!(absl::ascii_isalnum(c) || c == '_' || c == '-')) return false;
  }
  return true;
}

// ParseEnumLayout: the integer type and values of an enum's layout type
// ("enum.u8{neutral=0,red=1}"); false if it is not one.
bool ParseEnumLayout(absl::string_view text, FieldType* integer, std::vector<EnumValue>* values) {
  if (!absl::ConsumePrefix(&text, "enum.") || !absl::ConsumeSuffix(&text, "}")) return false;
  const size_t brace = text.find('{');
  if (brace == absl::string_view::npos) return false;
  const absl::string_view type_name = text.substr(0, brace);
  bool found = false;
  for (FieldType t : {FieldType::kI8, FieldType::kU8, FieldType::kI16, FieldType::kU16, FieldType::kI32,
                      FieldType::kU32, FieldType::kI64, FieldType::kU64}) {
    if (FieldTypeName(t) == type_name) {
      *integer = t;
      found = true;
    }
  }
  if (!found) return false;
  for (absl::string_view entry : absl::StrSplit(text.substr(brace + 1), ',', absl::SkipEmpty())) {
    const size_t equals = entry.find('=');
    if (equals == absl::string_view::npos) return false;
    EnumValue v;
    v.name = std::string(entry.substr(0, equals));
    const absl::string_view number = entry.substr(equals + 1);
    if (IsSignedInteger(*integer)) {
      int64_t i;
      if (!absl::SimpleAtoi(number, &i)) return false;
      v.value = static_cast<uint64_t>(i);
    } else if (!absl::SimpleAtoi(number, &v.value)) {
      return false;
    }
    values->push_back(std::move(v));
  }
  return true;
}
}  // namespace

absl::Status CheckEnumValues(const FieldInfo& field) {
  if (field.enum_values == nullptr || field.enum_values->empty()) return Error(field, "an enum needs named values");
  if (!IsInteger(field.integer)) {
    return Error(field, absl::StrCat("an enum is held in an integer type, not ", FieldTypeName(field.integer)));
  }
  const std::vector<EnumValue>& values = *field.enum_values;
  for (size_t i = 0; i < values.size(); ++i) {
    if (!IsEnumName(values[i].name)) {
      return Error(field, absl::StrCat("the value name \"", UserText(values[i].name),
                                       "\" is not a letter or '_' followed by letters, digits, '_' or '-'"));
    }
    for (size_t j = 0; j < i; ++j) {
      if (values[j].name == values[i].name) {
        return Error(field, absl::StrCat("the value name \"", values[i].name, "\" is given twice"));
      }
      if (values[j].value == values[i].value) {
        return Error(field, absl::StrCat("\"", values[j].name, "\" and \"", values[i].name, "\" have the same value ",
                                         IntegerText(field.integer, values[i].value)));
      }
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<FieldMigration> PlanFieldMigration(const FieldInfo& field, absl::string_view blob_type,
                                                  uint32_t blob_size) {
  FieldMigration migration;
  migration.blob_size = blob_size;
  const std::string declared_type = FieldLayoutType(field);
  const uint32_t declared_size = FieldBlobSize(field);
  if (declared_type == blob_type && declared_size == blob_size) return migration;
  auto differs = [&] {
    return absl::FailedPreconditionError(absl::StrCat("field \"", field.name, "\" is ", UserText(blob_type, 256), " (", blob_size,
                                                      " bytes) in the blob, ", declared_type, " (", declared_size,
                                                      " bytes) in the declaration"));
  };
  if (field.type == FieldType::kString && blob_type == declared_type && blob_size < declared_size) {
    return migration;  // a str that grew: its text, then zeros
  }
  FieldType blob_integer = FieldType::kI32;
  std::vector<EnumValue> blob_values;
  if (field.type != FieldType::kEnum || !ParseEnumLayout(blob_type, &blob_integer, &blob_values) ||
      blob_integer != field.integer || blob_size != declared_size) {
    return differs();
  }
  // The same integer type: read by name.
  for (const EnumValue& old : blob_values) {
    const std::optional<uint64_t> now = EnumValueOf(field, old.name);
    if (!now) {
      migration.lost.push_back(old);
    } else if (*now != old.value) {
      migration.renumber.emplace_back(old.value, *now);
    }
  }
  return migration;
}

const EnumValue* FindLostValue(const FieldInfo& field, const FieldMigration& migration,
                               const std::byte* blob_bytes) {
  if (migration.lost.empty()) return nullptr;
  const uint64_t v = IntegerBits(field.integer, blob_bytes);
  for (const EnumValue& lost : migration.lost) {
    if (lost.value == v) return &lost;
  }
  return nullptr;
}

namespace {
// WriteInteger: `bits` truncated to the integer `type`'s width, in the writer's order.
void WriteInteger(FieldType type, uint64_t bits, ComponentDataWriter& out) {
  switch (FieldBlobSize(type)) {
    case 1:
      out.WriteU8(static_cast<uint8_t>(bits));
      break;
    case 2:
      out.WriteU16(static_cast<uint16_t>(bits));
      break;
    case 4:
      out.WriteU32(static_cast<uint32_t>(bits));
      break;
    default:
      out.WriteU64(bits);
  }
}
}  // namespace

absl::Status CompileField(const FieldInfo& field, const json* value, const std::byte* defaults,
                          ComponentDataWriter& out) {
  const std::byte* member = defaults + field.offset;
  // {"unchecked": V}: V as written, without the value checks (range, a non-zero
  // quaternion); what export writes for a value a game reached outside them.
  bool checked = true;
  if (value != nullptr && value->is_object()) {
    auto inner = value->find(kUncheckedKey);
    if (value->size() != 1 || inner == value->end()) {
      return Error(field, absl::StrCat("an object value is {\"", kUncheckedKey, "\": value}"));
    }
    value = &*inner;
    checked = false;
  }
  const uint32_t floats = FloatCount(field.type);
  if (floats != 0) {
    float v[4];
    std::memcpy(v, member, 4 * floats);
    if (value != nullptr) {
      if (floats == 1) {
        STRATA_RETURN_IF_ERROR(ToFloat(field, *value, -1, &v[0]));
      } else {
        if (!value->is_array() || value->size() != floats) {
          return Error(field, absl::StrCat("expected an array of ", floats, " numbers, got ",
                                           value->is_array() ? absl::StrCat(value->size(), " elements")
                                                             : std::string(value->type_name())));
        }
        for (uint32_t i = 0; i < floats; ++i) {
          STRATA_RETURN_IF_ERROR(ToFloat(field, (*value)[i], static_cast<int>(i), &v[i]));
        }
      }
    }
    if (floats == 1 && checked) STRATA_RETURN_IF_ERROR(CheckRange(field, v[0]));
    if (checked && field.type == FieldType::kQuat && v[0] == 0 && v[1] == 0 && v[2] == 0 && v[3] == 0) {
      return Error(field, "a quaternion must not be all zero");
    }
    for (uint32_t i = 0; i < floats; ++i) out.WriteF32(v[i]);
    return absl::OkStatus();
  }
  switch (field.type) {
    case FieldType::kF64: {
      double v = LoadAs<double>(member);
      if (value != nullptr) STRATA_RETURN_IF_ERROR(ToDouble(field, *value, &v));
      if (checked) STRATA_RETURN_IF_ERROR(CheckRange(field, v));
      uint64_t bits;
      std::memcpy(&bits, &v, sizeof(bits));
      out.WriteU64(bits);
      return absl::OkStatus();
    }
    case FieldType::kI8:
    case FieldType::kU8:
    case FieldType::kI16:
    case FieldType::kU16:
    case FieldType::kI32:
    case FieldType::kU32:
    case FieldType::kI64:
    case FieldType::kU64: {
      const bool is_signed = IsSignedInteger(field.type);
      // The bits of the value, sign-extended for signed types; written truncated to
      // the field's width.
      uint64_t v = is_signed ? static_cast<uint64_t>(LoadSigned(field.type, member))
                             : LoadUnsigned(field.type, member);
      if (value != nullptr) STRATA_RETURN_IF_ERROR(ToInteger(field, *value, &v));
      if (checked) {
        STRATA_RETURN_IF_ERROR(CheckRange(field, is_signed ? static_cast<double>(static_cast<int64_t>(v))
                                                           : static_cast<double>(v)));
      }
      WriteInteger(field.type, v, out);
      return absl::OkStatus();
    }
    case FieldType::kEnum: {
      uint64_t v = IntegerBits(field.integer, member);
      if (value != nullptr) {
        if (value->is_string()) {
          const std::optional<uint64_t> named = EnumValueOf(field, value->get_ref<const std::string&>());
          if (!named) {
            return Error(field, absl::StrCat("\"", UserText(value->get_ref<const std::string&>()),
                                             "\" is none of its values (", EnumNames(field), ")"));
          }
          v = *named;
        } else if (!checked) {
          STRATA_RETURN_IF_ERROR(ToInteger(field, *value, &v));
        } else {
          return Error(field, absl::StrCat("expected one of ", EnumNames(field), " (a string), got ",
                                           value->type_name()));
        }
      } else if (checked && EnumNameOf(field, v) == nullptr) {
        return Error(field, absl::StrCat("the default ", IntegerText(field.integer, v), " is none of its values"));
      }
      WriteInteger(field.integer, v, out);
      return absl::OkStatus();
    }
    case FieldType::kString: {
      std::string bytes(reinterpret_cast<const char*>(member), field.capacity);
      if (value != nullptr && value->is_string()) {
        const std::string& text = value->get_ref<const std::string&>();
        STRATA_RETURN_IF_ERROR(CheckStringFits(field, text));
        bytes.assign(text);
        bytes.resize(field.capacity, '\0');
      } else if (value != nullptr && value->is_array() && !checked) {
        // {"unchecked": [b0, b1, ...]}: the bytes as they are (export's spelling of bytes
        // that are not text followed by zeros).
        if (value->size() != field.capacity) {
          return Error(field, absl::StrCat("expected ", field.capacity, " byte values, got ", value->size()));
        }
        for (uint32_t i = 0; i < field.capacity; ++i) {
          const json& b = (*value)[i];
          if (!b.is_number_unsigned() || b.get<uint64_t>() > 255) {
            return Error(field, absl::StrCat("[", i, "]: expected a byte value 0 to 255, got ", b.dump()));
          }
          bytes[i] = static_cast<char>(b.get<uint64_t>());
        }
      } else if (value != nullptr) {
        return Error(field, absl::StrCat("expected a string, got ", value->type_name()));
      }
      out.WriteBytes(absl::MakeConstSpan(reinterpret_cast<const std::byte*>(bytes.data()), bytes.size()));
      return absl::OkStatus();
    }
    case FieldType::kBool: {
      bool v;
      std::memcpy(&v, member, sizeof(bool));
      if (value != nullptr) {
        if (!value->is_boolean()) return Error(field, absl::StrCat("expected true or false, got ", value->type_name()));
        v = value->get<bool>();
      }
      out.WriteU32(v ? 1 : 0);
      return absl::OkStatus();
    }
    case FieldType::kName: {
      if (value == nullptr) {
        out.WriteU32(Load32(member));
        return absl::OkStatus();
      }
      if (!value->is_string()) return Error(field, absl::StrCat("expected a string, got ", value->type_name()));
      out.WriteName(value->get_ref<const std::string&>());
      return absl::OkStatus();
    }
    case FieldType::kEntity: {
      if (value == nullptr || value->is_null()) {
        out.WriteNoEntityRef();
        return absl::OkStatus();
      }
      if (!value->is_string()) {
        return Error(field, absl::StrCat("expected an entity name or path, or null, got ", value->type_name()));
      }
      out.WriteEntityRef(field.name, value->get_ref<const std::string&>());
      return absl::OkStatus();
    }
    default:
      return absl::InternalError(absl::StrCat("field type ", FieldTypeName(field.type)));
  }
}

bool PassesValueChecks(const FieldInfo& field, const std::byte* blob_bytes) {
  if (IsNumeric(field.type)) return InRange(field, NumericValue(field.type, blob_bytes));
  switch (field.type) {
    case FieldType::kQuat:
      return !(LoadF(blob_bytes) == 0 && LoadF(blob_bytes + 4) == 0 && LoadF(blob_bytes + 8) == 0 &&
               LoadF(blob_bytes + 12) == 0);
    case FieldType::kEnum:
      return EnumNameOf(field, IntegerBits(field.integer, blob_bytes)) != nullptr;
    case FieldType::kString:
      return IsCanonicalString(field, blob_bytes);
    default:
      return true;
  }
}

double NumericValue(const FieldInfo& field, const std::byte* blob_bytes) {
  return NumericValue(field.type, blob_bytes);
}

json ExportField(const FieldInfo& field, const std::byte* blob_bytes, const FieldTextLookup& lookup) {
  json value = ExportFieldValue(field, blob_bytes, lookup);
  if (PassesValueChecks(field, blob_bytes)) return value;
  json wrapped = json::object();
  wrapped[kUncheckedKey] = std::move(value);
  return wrapped;
}

json ExportFieldValue(const FieldInfo& field, const std::byte* blob_bytes, const FieldTextLookup& lookup) {
  const uint32_t floats = FloatCount(field.type);
  if (floats == 1) return FloatToJson(LoadF(blob_bytes));
  if (floats != 0) {
    json array = json::array();
    for (uint32_t i = 0; i < floats; ++i) array.push_back(FloatToJson(LoadF(blob_bytes + 4 * i)));
    return array;
  }
  if (field.type == FieldType::kF64) return DoubleToJson(LoadAs<double>(blob_bytes));
  if (IsNumeric(field.type) || field.type == FieldType::kEnum) {
    const FieldType type = IntegerTypeOf(field);
    if (field.type == FieldType::kEnum) {
      if (const std::string* name = EnumNameOf(field, IntegerBits(type, blob_bytes))) return *name;
    }
    if (IsSignedInteger(type)) return LoadSigned(type, blob_bytes);
    return LoadUnsigned(type, blob_bytes);
  }
  if (field.type == FieldType::kString) {
    if (IsCanonicalString(field, blob_bytes)) return std::string(StringText(field, blob_bytes));
    json bytes = json::array();
    for (uint32_t i = 0; i < field.capacity; ++i) bytes.push_back(static_cast<uint8_t>(blob_bytes[i]));
    return bytes;
  }
  const uint32_t v = Load32(blob_bytes);
  switch (field.type) {
    case FieldType::kBool:
      return v != 0;
    case FieldType::kName:
      return NameToJson(v, lookup);
    case FieldType::kEntity:
      if (v == kNoEntityRef || !lookup.entity_reference) return nullptr;
      return lookup.entity_reference(v);
    default:
      return nullptr;
  }
}

absl::Status DecodeField(const FieldInfo& field, const std::byte* blob_bytes,
                         absl::Span<const Entity> entities, std::byte* object,
                         const FieldMigration* migration) {
  std::byte* member = object + field.offset;
  switch (field.type) {
    case FieldType::kEnum: {
      uint64_t v = IntegerBits(field.integer, blob_bytes);
      if (migration != nullptr) {
        for (const auto& [from, to] : migration->renumber) {
          if (v == from) {
            v = to;
            break;
          }
        }
      }
      StoreIntegerBits(field.integer, v, member);
      return absl::OkStatus();
    }
    case FieldType::kString: {
      // A blob of smaller capacity (a migration): its bytes, then zeros.
      const uint32_t size = migration != nullptr ? std::min(migration->blob_size, field.capacity) : field.capacity;
      std::memcpy(member, blob_bytes, size);
      std::memset(member + size, 0, field.capacity - size);
      return absl::OkStatus();
    }
    case FieldType::kBool: {
      const uint32_t v = Load32(blob_bytes);
      if (v > 1) return absl::DataLossError(absl::StrCat("\"", field.name, "\": bool stored as ", v));
      const bool b = v != 0;
      std::memcpy(member, &b, sizeof(bool));
      return absl::OkStatus();
    }
    case FieldType::kEntity: {
      const uint32_t k = Load32(blob_bytes);
      Entity e;
      if (k != kNoEntityRef) {
        if (k >= entities.size()) {
          return absl::DataLossError(absl::StrCat("\"", field.name, "\": entity number ", k,
                                                  " is past the resource's ", entities.size()));
        }
        e = entities[k];
      }
      std::memcpy(member, &e, sizeof(Entity));
      return absl::OkStatus();
    }
    default:
      std::memcpy(member, blob_bytes, FieldBlobSize(field));
      return absl::OkStatus();
  }
}

void EncodeField(const FieldInfo& field, const std::byte* object,
                 const std::function<uint32_t(Entity)>& number_of, std::byte* blob_bytes) {
  const std::byte* member = object + field.offset;
  switch (field.type) {
    case FieldType::kBool: {
      bool b;
      std::memcpy(&b, member, sizeof(bool));
      Store32(blob_bytes, b ? 1 : 0);
      return;
    }
    case FieldType::kEntity: {
      Entity e;
      std::memcpy(&e, member, sizeof(Entity));
      Store32(blob_bytes, e.is_valid() ? number_of(e) : kNoEntityRef);
      return;
    }
    default:
      std::memcpy(blob_bytes, member, FieldBlobSize(field));
  }
}

namespace {

template <typename T>
PropertyDescriptor TypedProperty(const FieldInfo& field, std::function<std::byte*(Instance)> object_of,
                                 std::function<void(Instance)> after_set) {
  const uint32_t offset = field.offset;
  auto get = [object_of, offset](Instance i) {
    T v{};
    if (const std::byte* object = object_of(i)) std::memcpy(&v, object + offset, sizeof(T));
    return v;
  };
  if (field.read_only) return PropertyDescriptor::Make<T>(field.name, get);
  FieldInfo checked = field;
  return PropertyDescriptor::Make<T>(
      field.name, get, [object_of, checked, after_set](Instance i, const T& v) -> absl::Status {
        std::byte* object = object_of(i);
        if (object == nullptr) return absl::NotFoundError(absl::StrCat("\"", checked.name, "\": instance is gone"));
        // No value checks (range, finiteness): a set by name stores what a system's
        // write or a spawned blob may, so whatever it leaves saves and loads.
        std::memcpy(object + checked.offset, &v, sizeof(T));
        if (after_set) after_set(i);
        return absl::OkStatus();
      });
}

// NarrowProperty: a member of type M (i8, u8, i16, u16) as a property of type P
// (int32_t, uint32_t); a set refuses a value M cannot hold.
template <typename M, typename P>
PropertyDescriptor NarrowProperty(const FieldInfo& field, std::function<std::byte*(Instance)> object_of,
                                  std::function<void(Instance)> after_set) {
  const uint32_t offset = field.offset;
  auto get = [object_of, offset](Instance i) {
    M v{};
    if (const std::byte* object = object_of(i)) std::memcpy(&v, object + offset, sizeof(M));
    return static_cast<P>(v);
  };
  if (field.read_only) return PropertyDescriptor::Make<P>(field.name, get);
  FieldInfo checked = field;
  return PropertyDescriptor::Make<P>(
      field.name, get, [object_of, checked, after_set](Instance i, const P& v) -> absl::Status {
        std::byte* object = object_of(i);
        if (object == nullptr) return absl::NotFoundError(absl::StrCat("\"", checked.name, "\": instance is gone"));
        bool fits = v <= static_cast<P>(std::numeric_limits<M>::max());
        if constexpr (std::is_signed_v<P>) fits = fits && v >= static_cast<P>(std::numeric_limits<M>::min());
        if (!fits) {
          return Error(checked, absl::StrCat(v, " does not fit ", FieldTypeName(checked.type)));
        }
        const M narrow = static_cast<M>(v);
        std::memcpy(object + checked.offset, &narrow, sizeof(M));
        if (after_set) after_set(i);
        return absl::OkStatus();
      });
}

// EnumProperty: an enum member as a string property: its name, or the decimal integer
// of a value without one; a set takes either (any value of the integer type, as a
// system's write may store) and refuses other text naming the values.
PropertyDescriptor EnumProperty(const FieldInfo& field, std::function<std::byte*(Instance)> object_of,
                                std::function<void(Instance)> after_set) {
  auto get = [object_of, field](Instance i) -> std::string {
    uint64_t v = 0;
    if (const std::byte* object = object_of(i)) v = IntegerBits(field.integer, object + field.offset);
    if (const std::string* name = EnumNameOf(field, v)) return *name;
    return IntegerText(field.integer, v);
  };
  if (field.read_only) return PropertyDescriptor::Make<std::string>(field.name, get);
  return PropertyDescriptor::Make<std::string>(
      field.name, get, [object_of, field, after_set](Instance i, const std::string& text) -> absl::Status {
        std::byte* object = object_of(i);
        if (object == nullptr) return absl::NotFoundError(absl::StrCat("\"", field.name, "\": instance is gone"));
        std::optional<uint64_t> v = EnumValueOf(field, text);
        if (!v) {
          // An integer of the field's type: a value without a name.
          const json number = json::parse(text, nullptr, /*allow_exceptions=*/false);
          uint64_t bits;
          if (!number.is_number_integer() || !ToInteger(field, number, &bits).ok()) {
            return Error(field, absl::StrCat("\"", UserText(text), "\" is none of its values (", EnumNames(field),
                                             ") nor an integer of ", FieldTypeName(field.integer)));
          }
          v = bits;
        }
        StoreIntegerBits(field.integer, *v, object + field.offset);
        if (after_set) after_set(i);
        return absl::OkStatus();
      });
}

// StringProperty: a str member as a string property (its text); a set refuses text
// longer than the capacity or holding a NUL, and zeroes the bytes after the text.
PropertyDescriptor StringProperty(const FieldInfo& field, std::function<std::byte*(Instance)> object_of,
                                  std::function<void(Instance)> after_set) {
  auto get = [object_of, field](Instance i) -> std::string {
    const std::byte* object = object_of(i);
    return object == nullptr ? std::string() : std::string(StringText(field, object + field.offset));
  };
  if (field.read_only) return PropertyDescriptor::Make<std::string>(field.name, get);
  return PropertyDescriptor::Make<std::string>(
      field.name, get, [object_of, field, after_set](Instance i, const std::string& text) -> absl::Status {
        std::byte* object = object_of(i);
        if (object == nullptr) return absl::NotFoundError(absl::StrCat("\"", field.name, "\": instance is gone"));
        STRATA_RETURN_IF_ERROR(CheckStringFits(field, text));
        std::memset(object + field.offset, 0, field.capacity);
        std::memcpy(object + field.offset, text.data(), text.size());
        if (after_set) after_set(i);
        return absl::OkStatus();
      });
}

}  // namespace

PropertyDescriptor FieldProperty(const FieldInfo& field, std::function<std::byte*(Instance)> object_of,
                                 std::function<void(Instance)> after_set) {
  switch (field.type) {
    case FieldType::kF64:
      return TypedProperty<double>(field, std::move(object_of), std::move(after_set));
    case FieldType::kI64:
      return TypedProperty<int64_t>(field, std::move(object_of), std::move(after_set));
    case FieldType::kU64:
      return TypedProperty<uint64_t>(field, std::move(object_of), std::move(after_set));
    case FieldType::kI8:
      return NarrowProperty<int8_t, int32_t>(field, std::move(object_of), std::move(after_set));
    case FieldType::kU8:
      return NarrowProperty<uint8_t, uint32_t>(field, std::move(object_of), std::move(after_set));
    case FieldType::kI16:
      return NarrowProperty<int16_t, int32_t>(field, std::move(object_of), std::move(after_set));
    case FieldType::kU16:
      return NarrowProperty<uint16_t, uint32_t>(field, std::move(object_of), std::move(after_set));
    case FieldType::kF32:
      return TypedProperty<float>(field, std::move(object_of), std::move(after_set));
    case FieldType::kI32:
      return TypedProperty<int32_t>(field, std::move(object_of), std::move(after_set));
    case FieldType::kU32:
      return TypedProperty<uint32_t>(field, std::move(object_of), std::move(after_set));
    case FieldType::kBool:
      return TypedProperty<bool>(field, std::move(object_of), std::move(after_set));
    case FieldType::kVec3:
      return TypedProperty<Vector3>(field, std::move(object_of), std::move(after_set));
    case FieldType::kVec4:
    case FieldType::kColor:
      return TypedProperty<Vector4>(field, std::move(object_of), std::move(after_set));
    case FieldType::kQuat:
      return TypedProperty<Quaternion>(field, std::move(object_of), std::move(after_set));
    case FieldType::kName:
      return TypedProperty<IdString32>(field, std::move(object_of), std::move(after_set));
    case FieldType::kEntity:
      return TypedProperty<Entity>(field, std::move(object_of), std::move(after_set));
    case FieldType::kEnum:
      return EnumProperty(field, std::move(object_of), std::move(after_set));
    case FieldType::kString:
      return StringProperty(field, std::move(object_of), std::move(after_set));
  }
  return TypedProperty<float>(field, std::move(object_of), std::move(after_set));
}

}  // namespace strata
