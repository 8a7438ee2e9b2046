// Fields of a declared component: the value types a component's data may hold, how
// each is laid out in a resource blob, and the conversions between a field's three
// forms: level JSON, blob bytes (packed, in the blob's byte order) and the C++ member.
//
//   FieldType    C++ member            blob bytes   level JSON
//   f32          float                 4            number, or "inf", "-inf", "nan",
//                                                   "-nan", "nan:0x7fc00001" (any NaN)
//   i32          int32_t               4            integer
//   u32          uint32_t              4            non-negative integer
//   bool         bool                  4 (0 or 1)   true / false
//   vec3         Vector3               12           [x, y, z]
//   vec4         Vector4               16           [x, y, z, w]
//   color        Vector4               16           [r, g, b, a]
//   quat         Quaternion            16           [x, y, z, w], not all zero
//   name         IdString32            4            string ("#" + 8 hex digits: that id)
//   entity       Entity                4            name or path of an entity of the same
//                                                   resource, or null; in the blob the
//                                                   entity's number (kNoEntityRef: none)
//   f64          double                8            number, or a non-finite spelling as
//                                                   f32's ("nan:0x" + 16 hex digits)
//   i64 / u64    int64_t / uint64_t    8            integer (exact past 2^53)
//   i8 / u8      int8_t / uint8_t      1            integer
//   i16 / u16    int16_t / uint16_t    2            integer
//   enum         an enum (class) of    its integer  one of its names; a value without a
//                8 to 64 bits          type's       name is {"unchecked": integer}
//   str          FixedString<N>        N            a string of at most N bytes of UTF-8,
//                                                   no NUL; other bytes (a system's raw
//                                                   write) {"unchecked": [N byte values]}
// Blob fields are packed without alignment and read with memcpy. Properties: f64,
// i64 and u64 as double, int64_t and uint64_t; the narrow integers as int32_t or
// uint32_t, and a set refuses a value the member cannot hold; an enum as a string
// (its name, or the decimal integer of a value without one); a str as a string, a set
// refusing one longer than N or holding a NUL.
//
// Most code uses these through ComponentDeclaration (component/component_type.h); this
// header is the per-field layer it is built on.
#ifndef STRATA_COMPONENT_FIELD_H_
#define STRATA_COMPONENT_FIELD_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "base/fixed_string.h"
#include "base/id_string.h"
#include "base/matrix.h"
#include "entity/entity.h"
#include "index/property_system.h"
#include "nlohmann/json_fwd.hpp"
#include "resource/entity_compiler.h"
#include "resource/format.h"

namespace strata {

enum class FieldType : uint8_t {
  kF32, kI32, kU32, kBool, kVec3, kVec4, kColor, kQuat, kName, kEntity,
  kF64, kI64, kU64, kI8, kU8, kI16, kU16,
  kEnum, kString,
};

// kMaxFieldBytes: the most bytes one field takes in a blob (a str's capacity).
inline constexpr uint32_t kMaxFieldBytes = 1024;

// IsNumeric: a scalar number field (f32, f64 and the integers), which may have a range.
bool IsNumeric(FieldType type);
// IsInteger: i8 .. u64 (the types an enum may be held in).
bool IsInteger(FieldType type);

// FieldTypeName: "f32", "i32", "u32", "bool", "vec3", "vec4", "color", "quat", "name",
// "entity", "f64", "i64", "u64", "i8", "u8", "i16", "u16", "enum", "str".
absl::string_view FieldTypeName(FieldType type);
// FieldBlobSize / FieldMemorySize (type): bytes of a field of `type` in a blob and of
// its C++ member, for the types of one size; an enum's are its integer's, a str's its
// capacity (use the FieldInfo overloads).
uint32_t FieldBlobSize(FieldType type);
uint32_t FieldMemorySize(FieldType type);

// IsFixedString<M>: M is a FixedString<N>.
template <typename M>
inline constexpr bool IsFixedString = false;
template <size_t N>
inline constexpr bool IsFixedString<FixedString<N>> = true;

// FieldTypeFor<M>: the FieldType of a C++ member type M (Vector4 is vec4; declare a
// color with ComponentDeclaration::Color, an enum with ComponentDeclaration::Enum).
template <typename M>
constexpr std::optional<FieldType> FieldTypeFor() {
  if constexpr (IsFixedString<M>) return FieldType::kString;
  if constexpr (std::is_same_v<M, float>) return FieldType::kF32;
  if constexpr (std::is_same_v<M, int32_t>) return FieldType::kI32;
  if constexpr (std::is_same_v<M, uint32_t>) return FieldType::kU32;
  if constexpr (std::is_same_v<M, bool>) return FieldType::kBool;
  if constexpr (std::is_same_v<M, Vector3>) return FieldType::kVec3;
  if constexpr (std::is_same_v<M, Vector4>) return FieldType::kVec4;
  if constexpr (std::is_same_v<M, Quaternion>) return FieldType::kQuat;
  if constexpr (std::is_same_v<M, IdString32>) return FieldType::kName;
  if constexpr (std::is_same_v<M, Entity>) return FieldType::kEntity;
  if constexpr (std::is_same_v<M, double>) return FieldType::kF64;
  if constexpr (std::is_same_v<M, int64_t>) return FieldType::kI64;
  if constexpr (std::is_same_v<M, uint64_t>) return FieldType::kU64;
  if constexpr (std::is_same_v<M, int8_t>) return FieldType::kI8;
  if constexpr (std::is_same_v<M, uint8_t>) return FieldType::kU8;
  if constexpr (std::is_same_v<M, int16_t>) return FieldType::kI16;
  if constexpr (std::is_same_v<M, uint16_t>) return FieldType::kU16;
  return std::nullopt;
}

// EnumValue: one named value of an enum field. `value` is the integer the member holds,
// sign-extended to 64 bits for a signed integer type (as a uint64_t's bits).
struct EnumValue {
  std::string name;
  uint64_t value = 0;
};

// FieldInfo: one declared field.
struct FieldInfo {
  std::string name;
  FieldType type = FieldType::kF32;
  // offset: of the member in the C++ struct. blob_offset: of the field in an instance
  // of the blob (fields are packed in declaration order).
  uint32_t offset = 0;
  uint32_t blob_offset = 0;
  // min / max: inclusive bounds of a numeric field (IsNumeric), checked when compiling
  // level JSON (an authoring check: see CompileField). Bounds are doubles: an i64 or
  // u64 bound past 2^53 is rounded to a double.
  std::optional<double> min;
  std::optional<double> max;
  // read_only: no property setter (the value still compiles, spawns and saves).
  bool read_only = false;
  // kEnum: the integer type holding it (IsInteger) and its named values in
  // declaration order (shared by copies of the field).
  FieldType integer = FieldType::kI32;
  std::shared_ptr<const std::vector<EnumValue>> enum_values;
  // kString: the most bytes of text (1 to kMaxFieldBytes), the member's and the blob's size.
  uint32_t capacity = 0;
};

// FieldBlobSize / FieldMemorySize: bytes of `field` in a blob and of its C++ member.
uint32_t FieldBlobSize(const FieldInfo& field);
uint32_t FieldMemorySize(const FieldInfo& field);
// FieldLayoutType: the field's type in a layout description ("name:type:bytes"):
// FieldTypeName, but an enum's holds its integer type and names with their values,
// "enum.u8{neutral=0,red=1}", so a blob's enum can be read by name.
std::string FieldLayoutType(const FieldInfo& field);
// CheckEnumValues: InvalidArgument naming the field for an enum without values, a
// name that is not an identifier (a letter or '_', then letters, digits, '_' or '-'),
// or a name or value given twice.
absl::Status CheckEnumValues(const FieldInfo& field);

// CheckStringCapacity: InvalidArgument naming the field for a str whose capacity is
// not 1 to kMaxFieldBytes.
absl::Status CheckStringCapacity(const FieldInfo& field);

// FieldMigration: how the bytes of a field in a blob written under another declaration
// become the declared field's. Made by PlanFieldMigration, used by DecodeField.
struct FieldMigration {
  // blob_size: bytes of the field in the blob (a str of smaller capacity: the rest of
  // the member is zero, the empty rest of a text).
  uint32_t blob_size = 0;
  // renumber: an enum's blob values whose name has another value now (by name).
  std::vector<std::pair<uint64_t, uint64_t>> renumber;
  // lost: an enum's blob values whose name the declaration no longer has.
  std::vector<EnumValue> lost;
};
// PlanFieldMigration: how to read `field` from a blob field of layout type `blob_type`
// (FieldLayoutType) and `blob_size` bytes. The same type is read as is; a str of at most
// the declared capacity is read as its text; an enum held in the same integer type is
// read by name (a value whose name has another number is
// renumbered; one whose name is gone is listed in `lost`, and FindLostValue refuses a
// blob that holds it). Anything else is FailedPrecondition saying what differs.
absl::StatusOr<FieldMigration> PlanFieldMigration(const FieldInfo& field, absl::string_view blob_type,
                                                  uint32_t blob_size);
// FindLostValue: the lost value (migration.lost) held by the field's bytes in the blob,
// or nullptr.
const EnumValue* FindLostValue(const FieldInfo& field, const FieldMigration& migration,
                               const std::byte* blob_bytes);

// FieldNames: lookups a field conversion needs beyond the bytes.
struct FieldTextLookup {
  // name_text(id): the text of a name id, or nullptr when unknown (then "#1a2b3c4d").
  std::function<const std::string*(uint32_t id)> name_text;
  // entity_reference(k): how level JSON refers to entity number k (its name or path).
  std::function<std::string(uint32_t k)> entity_reference;
};

// CompileField: writes `field`'s blob bytes for the JSON `value` (nullptr: absent, so
// the default member of `defaults`, the declared struct's default-constructed bytes,
// is written). InvalidArgument naming the field for a wrong JSON type or length, a
// number out of range for the type, a fractional integer, and, unless the value is
// written {"unchecked": value}, a value outside min/max (NaN included) or an all-zero
// quaternion.
//
// Ranges are authoring checks: they guard what people write in level JSON. A
// system's write, a property set by name and a spawned blob store any value the
// field's type can hold, and export spells one outside the checks so it compiles
// back to the same bytes.
absl::Status CompileField(const FieldInfo& field, const nlohmann::json* value,
                          const std::byte* defaults, ComponentDataWriter& out);

// ExportField: the level JSON of a field read from `blob_bytes` (native byte order),
// which CompileField turns back into the same bytes: a value the compile checks would
// refuse (outside the range, NaN in a ranged field, an all-zero quaternion) is
// wrapped as {"unchecked": value}; a non-finite float is spelled as a string
// (NonFiniteF32Spelling); -0.0 is written "-0.0".
nlohmann::json ExportField(const FieldInfo& field, const std::byte* blob_bytes,
                           const FieldTextLookup& lookup);
// ExportFieldValue: the same without the "unchecked" wrapper.
nlohmann::json ExportFieldValue(const FieldInfo& field, const std::byte* blob_bytes,
                                const FieldTextLookup& lookup);
// NumericValue: a numeric field's value (IsNumeric) in native blob bytes as a double
// (rounded past 2^53; NaN stays NaN).
double NumericValue(const FieldInfo& field, const std::byte* blob_bytes);
// PassesValueChecks: whether the field's value in `blob_bytes` passes the checks
// CompileField makes of a plain value (ranges, a non-zero quaternion).
bool PassesValueChecks(const FieldInfo& field, const std::byte* blob_bytes);

// kUncheckedKey: {"unchecked": value} in level JSON is `value` compiled without the
// value checks (range, a non-zero quaternion): how export spells a value a game
// reached outside them, so that every saved state recompiles to the same bytes.
inline constexpr char kUncheckedKey[] = "unchecked";

// NonFiniteF32Spelling: the level JSON string of a non-finite float's `bits`: "inf",
// "-inf", "nan" (0x7fc00000), "-nan" (0xffc00000), else "nan:0x" and the 8 hex digits
// of the bits (a NaN with another payload, sign included).
std::string NonFiniteF32Spelling(uint32_t bits);
// NonFiniteF64Spelling / ParseNonFiniteF64: the same for doubles ("nan" is
// 0x7ff8000000000000; other NaNs "nan:0x" and 16 hex digits).
std::string NonFiniteF64Spelling(uint64_t bits);
bool ParseNonFiniteF64(absl::string_view text, uint64_t* bits);
// ParseNonFiniteF32: the bits of one of those spellings; false for any other text
// (including "nan:0x..." bits that are not a NaN).
bool ParseNonFiniteF32(absl::string_view text, uint32_t* bits);

// DecodeField: the C++ member at `object + field.offset` from native blob bytes;
// entity numbers become entities[k] (the invalid Entity for kNoEntityRef). DataLoss for
// an entity number out of range or a bool that is not 0 or 1. With a `migration`, the
// bytes are the blob's field as it describes (an enum renumbered by name).
absl::Status DecodeField(const FieldInfo& field, const std::byte* blob_bytes,
                         absl::Span<const Entity> entities, std::byte* object,
                         const FieldMigration* migration = nullptr);

// EncodeField: native blob bytes of the member at `object + field.offset`; an entity
// becomes number_of(entity) (kNoEntityRef for none).
void EncodeField(const FieldInfo& field, const std::byte* object,
                 const std::function<uint32_t(Entity)>& number_of, std::byte* blob_bytes);

// FieldProperty: the property descriptor of `field`, reading and writing the member
// through `object_of(instance)` (nullptr: the instance is gone). The setter stores any
// value of the type, as a system's write or a spawn does (no range or finiteness
// check: see CompileField), and calls `after_set` (if any) after a write: a page store
// reports it as a set (EntityPages::NotifySet), which observers see.
PropertyDescriptor FieldProperty(const FieldInfo& field,
                                 std::function<std::byte*(Instance)> object_of,
                                 std::function<void(Instance)> after_set = nullptr);

}  // namespace strata

#endif  // STRATA_COMPONENT_FIELD_H_
