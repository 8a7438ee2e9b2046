#include "component/component_type.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/container/inlined_vector.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "base/check.h"
#include "base/status_macros.h"
#include "base/user_text.h"
#include "nlohmann/json.hpp"

namespace strata {

absl::StatusOr<size_t> ComponentStore::Write(const FieldWrites&) {
  return absl::UnimplementedError(
      absl::StrCat("component type \"", manager().type_name(), "\": its store cannot write fields in place"));
}

absl::StatusOr<ComponentType> ComponentType::FromCustom(Custom custom) {
  if (custom.name.empty()) return absl::InvalidArgumentError("component type name is empty");
  if (!custom.compile || !custom.export_instance || !custom.make_store) {
    return absl::InvalidArgumentError(
        absl::StrCat("component type \"", custom.name, "\": compile, export and store are required"));
  }
  ComponentType type;
  type.name_ = std::move(custom.name);
  type.id_ = IdString32(type.name_);
  type.spawn_order_ = custom.spawn_order;
  type.storage_ = ComponentStorage::kCustom;
  type.instance_size_ = custom.instance_size;
  type.max_per_entity_ = custom.max_per_entity;
  type.layout_ = std::move(custom.layout);
  type.fingerprint_ = type.layout_.empty() ? 0 : IdString32::Hash(type.layout_);
  type.compile_ = std::move(custom.compile);
  type.export_ = std::move(custom.export_instance);
  type.make_store_ = std::move(custom.make_store);
  return type;
}

absl::Status ComponentType::Compile(const nlohmann::json& config, ComponentDataWriter& out) const {
  return compile_ ? compile_(config, out) : component_internal::CompileDeclared(*this, config, out);
}

absl::StatusOr<nlohmann::json> ComponentType::Export(absl::Span<const std::byte> instance,
                                                     const FieldTextLookup& lookup) const {
  return export_ ? export_(instance, lookup)
                 : component_internal::ExportDeclared(*this, instance, lookup);
}

absl::Status ComponentType::RegisterCompiler(EntityCompiler& compiler) const {
  EntityCompiler::ComponentCompileInfo info;
  info.type_name = name_;
  info.compile = [this](const nlohmann::json& config, ComponentDataWriter& out) {
    return Compile(config, out);
  };
  info.spawn_order = spawn_order_;
  info.instance_size = instance_size_;
  info.max_per_entity = max_per_entity_;
  info.layout = layout_;
  return compiler.RegisterComponentCompiler(std::move(info));
}

namespace component_internal {

namespace {

// MemberNames: "hp, max, attacker", the keys of an object shape, for messages.
std::string MemberNames(const FieldShape& object) {
  std::string names;
  for (const FieldShape& member : object.children) {
    absl::StrAppend(&names, names.empty() ? "" : ", ", member.key);
  }
  return names.empty() ? "no fields" : names;
}

bool HasMember(const FieldShape& object, absl::string_view key) {
  for (const FieldShape& member : object.children) {
    if (member.key == key) return true;
  }
  return false;
}

// The values `object`'s members are given in `value` (nullptr: absent), in member
// order, and how many were given: fewer than `value`'s own keys (less the ones the
// caller allows besides) means an unknown key, which only then is looked for by name.
using GivenMembers = absl::InlinedVector<const nlohmann::json*, 16>;
size_t FindMembers(const FieldShape& object, const nlohmann::json& value, GivenMembers* given) {
  size_t found = 0;
  given->clear();
  for (const FieldShape& member : object.children) {
    auto it = value.find(member.key);
    given->push_back(it == value.end() ? nullptr : &*it);
    found += it != value.end();
  }
  return found;
}

// CompileShape: the blob bytes of `node`'s fields from `value` (nullptr: absent, every
// field below takes its default), in field order.
absl::Status CompileShape(const ComponentType& type, const FieldShape& node, const nlohmann::json* value,
                          ComponentDataWriter& out) {
  auto error = [&](absl::string_view what) {
    return absl::InvalidArgumentError(absl::StrCat("\"", node.path, "\": ", what));
  };
  switch (node.kind) {
    case FieldShape::Kind::kField:
      return CompileField(type.fields()[node.field], value, type.defaults().data(), out);
    case FieldShape::Kind::kArray:
      if (value != nullptr && !value->is_array()) {
        return error(absl::StrCat("expected an array of at most ", node.children.size(), " elements, got ",
                                  value->type_name()));
      }
      if (value != nullptr && value->size() > node.children.size()) {
        return error(absl::StrCat(value->size(), " elements, more than its ", node.children.size()));
      }
      for (size_t i = 0; i < node.children.size(); ++i) {
        // Elements past the given ones take their defaults.
        const nlohmann::json* element = value != nullptr && i < value->size() ? &(*value)[i] : nullptr;
        STRATA_RETURN_IF_ERROR(CompileShape(type, node.children[i], element, out));
      }
      return absl::OkStatus();
    case FieldShape::Kind::kObject:
    {
      GivenMembers given;
      if (value == nullptr) {
        given.assign(node.children.size(), nullptr);
      } else {
        if (!value->is_object()) return error(absl::StrCat("expected an object, got ", value->type_name()));
        if (FindMembers(node, *value, &given) != value->size()) {
          for (auto it = value->begin(); it != value->end(); ++it) {
            if (!HasMember(node, it.key())) {
              return error(absl::StrCat("unknown key \"", UserText(it.key()), "\" (", node.path, " has: ",
                                        MemberNames(node), ")"));
            }
          }
        }
      }
      for (size_t i = 0; i < node.children.size(); ++i) {
        STRATA_RETURN_IF_ERROR(CompileShape(type, node.children[i], given[i], out));
      }
      return absl::OkStatus();
    }
  }
  return absl::InternalError("field shape");
}

nlohmann::json ExportShape(const ComponentType& type, const FieldShape& node, const std::byte* instance,
                           const FieldTextLookup& lookup) {
  switch (node.kind) {
    case FieldShape::Kind::kField: {
      const FieldInfo& f = type.fields()[node.field];
      return ExportField(f, instance + f.blob_offset, lookup);
    }
    case FieldShape::Kind::kArray: {
      nlohmann::json array = nlohmann::json::array();
      for (const FieldShape& element : node.children) array.push_back(ExportShape(type, element, instance, lookup));
      return array;
    }
    case FieldShape::Kind::kObject: {
      nlohmann::json object = nlohmann::json::object();
      for (const FieldShape& member : node.children) {
        object[member.key] = ExportShape(type, member, instance, lookup);
      }
      return object;
    }
  }
  return nullptr;
}

}  // namespace

absl::Status CompileDeclared(const ComponentType& type, const nlohmann::json& config,
                             ComponentDataWriter& out) {
  if (!config.is_object()) return absl::InvalidArgumentError("component: expected an object");
  const FieldShape& root = type.shape();
  // Besides the members: "type", and "name", which a page-stored type or a world
  // resource (one instance per entity, or per World) may only give as the type's name.
  size_t allowed = 0;
  for (auto it = config.begin(); it != config.end(); ++it) {
    const absl::string_view key = it.key();
    if (key == "type") {
      ++allowed;
    } else if (key == "name") {
      ++allowed;
      if ((type.storage() == ComponentStorage::kPages ||
           type.storage() == ComponentStorage::kResource) &&
          (!it->is_string() || it->get_ref<const std::string&>() != type.name())) {
        return absl::InvalidArgumentError(absl::StrCat(
            "\"name\": a ", type.name(), " is always named \"", type.name(), "\" (one per entity)"));
      }
    }
  }
  GivenMembers given;
  if (FindMembers(root, config, &given) + allowed != config.size()) {
    for (auto it = config.begin(); it != config.end(); ++it) {
      const absl::string_view key = it.key();
      if (key != "type" && key != "name" && !HasMember(root, key)) {
        return absl::InvalidArgumentError(absl::StrCat("unknown key \"", UserText(key), "\" (", type.name(),
                                                       " has: ", MemberNames(root), ")"));
      }
    }
  }
  for (size_t i = 0; i < root.children.size(); ++i) {
    STRATA_RETURN_IF_ERROR(CompileShape(type, root.children[i], given[i], out));
  }
  return absl::OkStatus();
}

absl::StatusOr<nlohmann::json> ExportDeclared(const ComponentType& type,
                                              absl::Span<const std::byte> instance,
                                              const FieldTextLookup& lookup) {
  if (instance.size() != type.instance_size()) {
    return absl::DataLossError(absl::StrCat("component type \"", type.name(), "\": instance of ",
                                            instance.size(), " bytes, declared ",
                                            type.instance_size()));
  }
  return ExportShape(type, type.shape(), instance.data(), lookup);
}

absl::Status CheckDeclaredFields(absl::string_view type_name, absl::Span<const FieldInfo> fields,
                                 size_t struct_size) {
  auto error = [&](const FieldInfo& f, absl::string_view what) {
    return absl::InvalidArgumentError(
        absl::StrCat("component type \"", type_name, "\": field \"", UserText(f.name), "\": ", what));
  };
  if (absl::StartsWith(type_name, "strata.")) {
    return absl::InvalidArgumentError(absl::StrCat("component type \"", UserText(type_name),
                                                   "\": names beginning with \"strata.\" are reserved"));
  }
  if (fields.size() > kMaxDeclaredFields) {
    return absl::InvalidArgumentError(absl::StrCat("component type \"", type_name, "\": ", fields.size(),
                                                   " fields, more than ", kMaxDeclaredFields,
                                                   " (each array element is one)"));
  }
  absl::flat_hash_set<absl::string_view> names;
  for (const FieldInfo& f : fields) {
    if (f.name.empty()) return error(f, "empty field name");
    if (f.name == "type" || f.name == "name") return error(f, "\"type\" and \"name\" are the component's own keys");
    if (f.name.find_first_of(":;") != std::string::npos) return error(f, "field names may not contain ':' or ';'");
    if (!names.insert(f.name).second) return error(f, "declared twice");
    if (f.type == FieldType::kEnum || f.type == FieldType::kString) {
      absl::Status values = f.type == FieldType::kEnum ? CheckEnumValues(f) : CheckStringCapacity(f);
      if (!values.ok()) {
        // Its message begins with the quoted field name.
        return absl::InvalidArgumentError(absl::StrCat("component type \"", type_name, "\": field ", values.message()));
      }
    }
    const size_t size = FieldMemorySize(f);
    if (f.offset + size > struct_size) {
      return error(f, absl::StrCat(FieldTypeName(f.type), " needs ", size, " bytes at offset ",
                                   f.offset, ", but the struct has ", struct_size));
    }
    if ((f.min && std::isnan(*f.min)) || (f.max && std::isnan(*f.max))) {
      return error(f, "a bound is NaN");
    }
    if (f.min && f.max && *f.min > *f.max) return error(f, "min is greater than max");
    if ((f.min || f.max) && !IsNumeric(f.type)) {
      return error(f, absl::StrCat("a range needs a numeric field, not ", FieldTypeName(f.type)));
    }
  }
  // Overlaps: in offset order, a field that starts before the furthest end so far.
  std::vector<size_t> by_offset(fields.size());
  for (size_t i = 0; i < fields.size(); ++i) by_offset[i] = i;
  std::stable_sort(by_offset.begin(), by_offset.end(),
                   [&](size_t a, size_t b) { return fields[a].offset < fields[b].offset; });
  const FieldInfo* furthest = nullptr;
  for (size_t i : by_offset) {
    const FieldInfo& f = fields[i];
    if (furthest != nullptr && f.offset < furthest->offset + FieldMemorySize(*furthest)) {
      // Name the one declared later as overlapping the earlier.
      const bool f_later = &f > furthest;
      return error(f_later ? f : *furthest, absl::StrCat("overlaps field \"", (f_later ? *furthest : f).name, "\""));
    }
    if (furthest == nullptr || f.offset + FieldMemorySize(f) > furthest->offset + FieldMemorySize(*furthest)) {
      furthest = &f;
    }
  }
  return absl::OkStatus();
}

absl::Status CheckShape(absl::string_view type_name, const FieldShape& shape) {
  for (const FieldShape& member : shape.children) {
    if (shape.kind == FieldShape::Kind::kObject) {
      // An object's members are named; the root's are the component's keys.
      auto error = [&](absl::string_view what) {
        return absl::InvalidArgumentError(absl::StrCat("component type \"", type_name, "\": field \"",
                                                       UserText(member.path), "\": ", what));
      };
      if (member.key.empty()) return error("empty field name");
      if (member.key.find_first_of(".[]") != std::string::npos) {
        return error("field names may not contain '.', '[' or ']' (a nested field's path uses them)");
      }
      if (shape.path.empty() && (member.key == "type" || member.key == "name")) {
        return error("\"type\" and \"name\" are the component's own keys");
      }
    }
    STRATA_RETURN_IF_ERROR(CheckShape(type_name, member));
  }
  return absl::OkStatus();
}

absl::Status CheckEveryByteDeclared(absl::string_view type_name, absl::Span<const FieldInfo> fields,
                                    absl::Span<const ByteRange> transients, size_t struct_size,
                                    absl::Span<const uint8_t> value_bytes, size_t alignment) {
  std::vector<uint8_t> covered(struct_size, 0);
  // CheckDeclaredFields has kept every field inside the struct.
  for (const FieldInfo& f : fields) {
    std::fill_n(covered.begin() + f.offset, FieldMemorySize(f), 1);
  }
  for (const ByteRange& t : transients) {
    if (t.offset > struct_size || t.size > struct_size - t.offset) {
      return absl::InvalidArgumentError(absl::StrCat(
          "component type \"", type_name, "\": transient bytes [", t.offset, ", ",
          t.offset + t.size, ") lie outside the struct's ", struct_size));
    }
    std::fill_n(covered.begin() + t.offset, t.size, 1);
  }
  // must_cover(i): byte i holds part of a member's value. Without a padding map, every
  // byte does; gaps are then judged by width below.
  const bool exact = value_bytes.size() == struct_size && struct_size != 0;
  for (size_t i = 0; i < struct_size; ++i) {
    if (covered[i] != 0 || (exact && value_bytes[i] == 0)) continue;
    size_t end = i + 1;
    while (end < struct_size && covered[end] == 0 && (!exact || value_bytes[end] != 0)) ++end;
    // Without a padding map a gap narrower than the struct's alignment passes as
    // padding: a member at least as wide as the alignment would not fit in it (a
    // weaker check, made only by compilers without __builtin_clear_padding).
    if (!exact && end - i < alignment) {
      i = end - 1;
      continue;
    }
    return absl::InvalidArgumentError(absl::StrCat(
        "component type \"", type_name, "\": bytes [", i, ", ", end,
        ") of the struct belong to no field; save would drop the member there: declare it "
        "as a field, or Transient if it is run-time state only"));
  }
  return absl::OkStatus();
}

absl::Status CheckDefaultsInRange(absl::string_view type_name, absl::Span<const FieldInfo> fields,
                                  absl::Span<const std::byte> defaults) {
  for (const FieldInfo& f : fields) {
    // The default as the field's blob bytes (native order).
    std::vector<std::byte> bytes(FieldBlobSize(f));
    EncodeField(f, defaults.data(), [](Entity) { return kNoEntityRef; }, bytes.data());
    if (f.type == FieldType::kEnum && !PassesValueChecks(f, bytes.data())) {
      return absl::InvalidArgumentError(absl::StrCat(
          "component type \"", type_name, "\": field \"", UserText(f.name), "\": the default ",
          ExportFieldValue(f, bytes.data(), {}).dump(), " is none of its named values"));
    }
    if (!f.min && !f.max) continue;
    if (!IsNumeric(f.type)) continue;  // CheckDeclaredFields refuses a range on others
    const double value = NumericValue(f, bytes.data());
    // NaN compares false both ways: refused as outside.
    if (!(value >= f.min.value_or(value)) || !(value <= f.max.value_or(value))) {
      return absl::InvalidArgumentError(absl::StrCat(
          "component type \"", type_name, "\": field \"", UserText(f.name), "\": the default ",
          value, " is outside its range [", f.min ? absl::StrCat(*f.min) : "-inf", ", ",
          f.max ? absl::StrCat(*f.max) : "inf", "]"));
    }
  }
  return absl::OkStatus();
}

}  // namespace component_internal

std::string LayoutText(absl::Span<const FieldInfo> fields) {
  std::string text;
  for (const FieldInfo& f : fields) {
    absl::StrAppend(&text, text.empty() ? "" : ";", f.name, ":", FieldLayoutType(f), ":",
                    FieldBlobSize(f));
  }
  return text;
}

namespace {

struct BlobField {
  absl::string_view name;
  absl::string_view type;
  uint32_t size = 0;
  uint32_t offset = 0;
};

absl::StatusOr<std::vector<BlobField>> ParseLayout(absl::string_view layout) {
  std::vector<BlobField> fields;
  uint32_t offset = 0;
  for (absl::string_view part : absl::StrSplit(layout, ';', absl::SkipEmpty())) {
    std::vector<absl::string_view> pieces = absl::StrSplit(part, ':');
    BlobField f;
    if (pieces.size() != 3 || !absl::SimpleAtoi(pieces[2], &f.size) || f.size == 0 ||
        f.size > kMaxFieldBytes) {
      return absl::DataLossError(absl::StrCat("malformed layout entry \"", part, "\""));
    }
    f.name = pieces[0];
    f.type = pieces[1];
    f.offset = offset;
    offset += f.size;
    fields.push_back(f);
  }
  return fields;
}

}  // namespace

absl::StatusOr<SpawnPlan> PlanSpawn(const ComponentType& type, const ComponentSpawnBatch& batch) {
  SpawnPlan plan;
  const absl::Span<const FieldInfo> fields = type.fields();
  if (batch.layout_fingerprint == type.fingerprint() && batch.instance_stride == type.instance_size()) {
    // A validated view is always in this machine's byte order.
    plan.identity = true;
    uint32_t expected = 0;
    for (const FieldInfo& f : fields) {
      plan.blob_offset.push_back(f.blob_offset);
      plan.identity = plan.identity && f.offset == expected && f.type != FieldType::kBool &&
                      f.type != FieldType::kEntity;
      expected += FieldBlobSize(f);
    }
    plan.identity = plan.identity && expected == type.cpp_size();
    return plan;
  }
  auto mismatch = [&](absl::string_view what) {
    return absl::FailedPreconditionError(
        absl::StrCat("component type \"", type.name(), "\": the blob's layout differs from the "
                     "declaration: ", what));
  };
  // A tag's blob (no layout, no bytes) holds no field the declaration could lose: a
  // tag that gained fields since spawns with their defaults (a migration).
  const bool tag_blob = batch.layout.empty() && batch.layout_fingerprint == 0 && batch.instance_stride == 0;
  if (batch.layout.empty() && !tag_blob) {
    return mismatch(absl::StrCat("the blob declares no layout (fingerprint ", batch.layout_fingerprint,
                                 ", declared \"", type.layout(), "\")"));
  }
  if (!tag_blob && IdString32::Hash(batch.layout) != batch.layout_fingerprint) {
    return absl::DataLossError(absl::StrCat("component type \"", type.name(),
                                            "\": the blob's layout text does not match its fingerprint"));
  }
  STRATA_ASSIGN_OR_RETURN(std::vector<BlobField> blob_fields, ParseLayout(batch.layout));
  uint32_t blob_size = 0;
  absl::flat_hash_map<absl::string_view, const BlobField*> by_name;
  for (const BlobField& f : blob_fields) {
    blob_size += f.size;
    by_name[f.name] = &f;
  }
  if (blob_size != batch.instance_stride) {
    return absl::DataLossError(absl::StrCat("component type \"", type.name(), "\": layout of ",
                                            blob_size, " bytes, stride ", batch.instance_stride));
  }
  // The first blob field the declaration cannot take, in blob order.
  absl::flat_hash_map<absl::string_view, size_t> declared_by_name;
  for (size_t f = 0; f < fields.size(); ++f) declared_by_name[fields[f].name] = f;
  std::vector<std::optional<FieldMigration>> migrations(fields.size());
  for (const BlobField& b : blob_fields) {
    auto declared = declared_by_name.find(b.name);
    if (declared == declared_by_name.end()) {
      return mismatch(absl::StrCat("field \"", b.name, "\" (", b.type,
                                   ") is not declared; spawning would lose it"));
    }
    absl::StatusOr<FieldMigration> migration = PlanFieldMigration(fields[declared->second], b.type, b.size);
    if (!migration.ok()) return mismatch(migration.status().message());
    migrations[declared->second] = *std::move(migration);
  }
  if (batch.data.size() < uint64_t{batch.num_instances} * batch.instance_stride) {
    return absl::DataLossError(absl::StrCat("component type \"", type.name(), "\": ", batch.num_instances,
                                            " instances of ", batch.instance_stride, " bytes in ",
                                            batch.data.size()));
  }
  for (size_t f = 0; f < fields.size(); ++f) {
    auto it = by_name.find(fields[f].name);
    plan.blob_offset.push_back(it == by_name.end() ? -1 : int64_t{it->second->offset});
    plan.migrations.push_back(migrations[f] ? *std::move(migrations[f]) : FieldMigration{});
    // A value whose name the declaration lost would be read as no value: refused
    // before any instance is made.
    if (plan.blob_offset[f] < 0 || plan.migrations[f].lost.empty()) continue;
    for (uint32_t i = 0; i < batch.num_instances; ++i) {
      const std::byte* bytes = batch.data.data() + size_t{i} * batch.instance_stride + plan.blob_offset[f];
      if (const EnumValue* lost = FindLostValue(fields[f], plan.migrations[f], bytes)) {
        return mismatch(absl::StrCat("field \"", fields[f].name, "\": instance ", i, " holds \"", UserText(lost->name),
                                     "\", a value the declaration no longer has"));
      }
    }
  }
  return plan;
}

namespace {
// BlobSizeIn: bytes of field f in the plan's blob.
uint32_t BlobSizeIn(const SpawnPlan& plan, absl::Span<const FieldInfo> fields, size_t f) {
  return plan.migrations.empty() ? FieldBlobSize(fields[f]) : plan.migrations[f].blob_size;
}
}  // namespace

absl::Status DecodeInstances(const ComponentType& type, const SpawnPlan& plan,
                             const ComponentSpawnBatch& batch, std::vector<std::byte>* out) {
  const size_t size = type.cpp_size();
  const absl::Span<const FieldInfo> fields = type.fields();
  // Once per batch, not per instance: the plan and the batch must be of this type, so
  // every read below stays inside batch.data.
  STRATA_CHECK(plan.blob_offset.size() == fields.size() &&
                   (plan.migrations.empty() || plan.migrations.size() == fields.size()),
               "DecodeInstances: the plan was made for another type");
  STRATA_CHECK(batch.data.size() >= uint64_t{batch.num_instances} * batch.instance_stride,
               "DecodeInstances: the batch has less data than num_instances * instance_stride");
  if (plan.identity) {
    STRATA_CHECK(batch.instance_stride == size,
                 "DecodeInstances: an identity plan needs the batch's stride to be the struct's "
                 "size (the plan was made for another type or batch)");
  } else {
    for (size_t f = 0; f < fields.size(); ++f) {
      STRATA_CHECK(plan.blob_offset[f] < 0 ||
                       uint64_t(plan.blob_offset[f]) + BlobSizeIn(plan, fields, f) <=
                           batch.instance_stride,
                   "DecodeInstances: a field of the plan lies outside the batch's instances");
    }
  }
  out->resize(size * batch.num_instances);
  for (uint32_t i = 0; i < batch.num_instances; ++i) {
    std::byte* object = out->data() + i * size;
    const std::byte* instance = batch.data.data() + size_t{i} * batch.instance_stride;
    if (plan.identity) {
      std::memcpy(object, instance, size);
      continue;
    }
    std::memcpy(object, type.defaults().data(), size);
    for (size_t f = 0; f < fields.size(); ++f) {
      if (plan.blob_offset[f] < 0) continue;
      absl::Status status =
          DecodeField(fields[f], instance + plan.blob_offset[f], batch.entities, object,
                      plan.migrations.empty() ? nullptr : &plan.migrations[f]);
      if (!status.ok()) {
        return absl::Status(status.code(), absl::StrCat("instance ", i, ": ", status.message()));
      }
    }
  }
  return absl::OkStatus();
}

void EncodeInstance(const ComponentType& type, const std::byte* object,
                    const std::function<uint32_t(Entity)>& number_of, std::vector<std::byte>* out) {
  const size_t start = out->size();
  if (type.identity_layout()) {
    out->insert(out->end(), object, object + type.instance_size());
    return;
  }
  out->resize(start + type.instance_size());
  for (const FieldInfo& f : type.fields()) {
    EncodeField(f, object, number_of, out->data() + start + f.blob_offset);
  }
}

void EncodeInstance(const ComponentType& type, const std::byte* object, Entity holder,
                    const SaveContext& context, std::vector<std::byte>* out) {
  if (!context.reference || type.identity_layout()) {
    EncodeInstance(type, object, context.number_of, out);
    return;
  }
  const size_t start = out->size();
  out->resize(start + type.instance_size());
  for (const FieldInfo& f : type.fields()) {
    if (f.type == FieldType::kEntity) {
      EncodeField(
          f, object,
          [&](Entity target) { return context.reference(target, holder, type.name(), f.name); },
          out->data() + start + f.blob_offset);
    } else {
      EncodeField(f, object, context.number_of, out->data() + start + f.blob_offset);
    }
  }
}

absl::Status RegisterSpawnedByName(EntityIndex& index, ComponentManager* manager,
                                   absl::Span<const Entity> owners,
                                   absl::Span<const uint32_t> names) {
  if (names.size() != owners.size()) {
    return absl::InvalidArgumentError(absl::StrCat("RegisterSpawnedByName: ", owners.size(),
                                                   " owners, ", names.size(), " names"));
  }
  // One batch call per distinct name (one call when all share the type's name).
  return ForEachNameGroup(owners, names, [&](InstanceId name, absl::Span<const Entity> group) {
    return index.AddInstance(group, manager, name);
  });
}

absl::Status RegisterSpawnedByName(EntityIndex& index, ComponentManager* manager,
                                   const ComponentSpawnBatch& batch) {
  if (batch.in_entity_order) return RegisterSpawnedByName(index, manager, batch.entities, batch.names);
  return RegisterSpawnedByName(index, manager, SpawnOwners(batch), batch.names);
}

std::vector<Entity> SpawnOwners(const ComponentSpawnBatch& batch) {
  std::vector<Entity> owners(batch.num_instances);
  for (uint32_t i = 0; i < batch.num_instances; ++i) owners[i] = batch.entity(i);
  return owners;
}

}  // namespace strata
