#include "resource/entity_compiler.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <numeric>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "base/status_macros.h"
#include "base/user_text.h"
#include "nlohmann/json.hpp"
#include "resource/internal/entity_table.h"
#include "resource/internal/level_stream.h"
#include "resource/internal/prefab_resolve.h"
#include "resource/prefab.h"
#include "resource/strict_json.h"

namespace strata {

using json = nlohmann::json;

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
  // The declared fields' names, in layout order ("hp:f32:4;max:f32:4"), for the bits of
  // a prefab instance's overrides.
  std::vector<std::string> field_names;
  for (absl::string_view field : absl::StrSplit(info.layout, ';', absl::SkipEmpty())) {
    field_names.emplace_back(field.substr(0, field.find(':')));
  }
  by_name_.emplace(type_name, registrations_.size());
  registrations_.push_back(Registration{std::move(info), id, fingerprint, std::move(field_names)});
  return absl::OkStatus();
}

namespace {

std::string ExpectedMessage(absl::string_view key, absl::string_view expected,
                            absl::string_view got) {
  return absl::StrCat("\"", key, "\": expected ", expected, ", got ", got);
}

std::string UnknownEntityKeyMessage(absl::string_view key) {
  return absl::StrCat("unknown key \"", UserText(key),
                      "\" (expected \"name\", \"prefab\", \"components\", \"children\")");
}

constexpr size_t kNoSlot = ~size_t{0};

}  // namespace

using resource_internal::EntityTable;
using resource_internal::ReferenceResolver;

// One prefab, resolved and compiled on its own: what its instances copy.
struct EntityCompiler::CompiledPrefab {
  std::string name;
  json components;  // the root's resolved components, in order
  absl::flat_hash_map<std::string, size_t> component_by_name;
  // root_slot[c]: (type, instance number in parts[type]) of components[c]; the type is
  // kNoSlot when the component was skipped (unknown type).
  std::vector<std::pair<size_t, uint32_t>> root_slot;
  struct Part {
    std::vector<uint32_t> entity_index;
    std::vector<uint32_t> names;
    std::vector<std::byte> data;
    std::vector<size_t> begin;         // instance i is data[begin[i], begin[i + 1])
    std::vector<uint32_t> ref_begin;   // instance i's references: refs[ref_begin[i], [i + 1])
    std::vector<std::pair<size_t, uint32_t>> refs;  // (offset in data, prefab entity)
  };
  std::vector<Part> parts;          // indexed like registrations_
  std::vector<uint32_t> root_count;  // per type: instances on the prefab's root
  EntityTable table;                 // the prefab's entities: parents, positions, names
  absl::flat_hash_map<std::string, uint32_t> local_refs;  // reference text -> prefab entity
  std::vector<std::pair<uint32_t, std::string>> name_texts;
  std::vector<std::byte> blob;       // the prefab's own resource, for the prefab section
};

class EntityCompiler::PrefabLibrary {
 public:
  std::vector<CompiledPrefab> prefabs;  // sorted by name
  absl::flat_hash_map<std::string, uint32_t> by_name;
  std::vector<std::string> warnings;
};

// One compile's state: the entity table, one accumulator per registered type (indexed
// like registrations_) with the entity references its instances hold, and the instance
// names' text. Both front-ends feed it the same calls in the same order.
class EntityCompiler::LevelBuilder final : public resource_internal::LevelSink {
 public:
  // `prefabs`: the level's prefabs (nullptr: none). `parts`: compiling one prefab on its
  // own; Finish also fills `parts` with what instances copy.
  LevelBuilder(const EntityCompiler& compiler, const Options& options,
               const PrefabLibrary* prefabs = nullptr, CompiledPrefab* parts = nullptr)
      : compiler_(compiler), options_(options), prefabs_(prefabs), parts_(parts),
        types_(compiler.registrations_.size()),
        fixups_(types_.size()), fixup_owners_(types_.size()), instance_begin_(types_.size()),
        out_of_order_(types_.size(), false), per_entity_count_(types_.size(), 0) {
    for (size_t r = 0; r < types_.size(); ++r) {
      const Registration& registration = compiler.registrations_[r];
      types_[r].type = registration.id;
      types_[r].instance_stride = registration.info.instance_size;
      types_[r].layout_fingerprint = registration.fingerprint;
    }
    if (prefabs_ != nullptr && options_.keep_names) {
      for (const CompiledPrefab& prefab : prefabs_->prefabs) {
        for (const auto& [id, text] : prefab.name_texts) name_text_.try_emplace(id, text);
      }
    }
  }

  // NotAnEntity: the error for child `position` of `parent` that is not an object.
  absl::Status NotAnEntity(uint32_t parent, uint32_t position, absl::string_view got) const {
    return absl::InvalidArgumentError(
        absl::StrCat(table_.ChildPath(parent, position), ": expected an entity object, got ", got));
  }

  absl::StatusOr<uint32_t> AddEntity(uint32_t parent, uint32_t position) override {
    if (table_.size() >= kNoParent - 1) return absl::ResourceExhaustedError("level: too many entities");
    const uint32_t index = static_cast<uint32_t>(table_.size());
    table_.parent.push_back(parent);
    table_.position.push_back(position);
    table_.name_slot.push_back(EntityTable::kNoName);
    return index;
  }

  void SetName(uint32_t entity, absl::string_view name) override { table_.SetName(entity, name); }

  // EntityError: "<entity path>: <what>".
  absl::Status EntityError(uint32_t entity, absl::string_view what) const {
    return absl::InvalidArgumentError(absl::StrCat(table_.Path(entity), ": ", what));
  }

  void BeginComponents(uint32_t) override {
    names_in_entity_.clear();
    for (size_t r : counted_) per_entity_count_[r] = 0;
    counted_.clear();
  }

  absl::Status AddComponent(uint32_t index, uint32_t c, const json& component) override;
  // set_root_aliases: compiling a prefab based on others: references to their names
  // (or paths from them) mean this prefab's root.
  void set_root_aliases(const std::vector<std::string>* aliases, absl::string_view root) {
    aliases_ = aliases;
    root_name_ = std::string(root);
  }
  absl::Status SetPrefab(uint32_t entity, absl::string_view prefab) override;
  absl::Status EndEntity(uint32_t entity) override;

  // Append: the entities and instances of `slice`, a builder that compiled the next
  // slice of the entity array numbering its entities from 0, as if this builder had
  // compiled them. False if the level would have too many entities.
  bool Append(LevelBuilder& slice);

  absl::StatusOr<Result> Finish();

 private:
  struct FixupOwner {
    uint32_t entity;
    uint32_t component;
    uint32_t instance;  // number of the instance in its type, in the order compiled
  };
  // A skipped component, worded once the entity's name is surely known.
  struct Skipped {
    uint32_t entity;
    uint32_t component;
    std::string type;
  };

  // An instance of a prefab whose entity object is still open.
  struct OpenInstance {
    uint32_t entity;
    uint32_t prefab;
    std::vector<bool> overridden;  // per root component of the prefab
    // References an overridden component inherited from the prefab: fixups_[r][fixup]
    // points to the prefab's entity `local`, numbered once the instance is complete.
    struct LocalRef {
      size_t r;
      size_t fixup;
      uint32_t local;
    };
    std::vector<LocalRef> local_refs;
    absl::flat_hash_map<size_t, uint32_t> added;  // per type: components the prefab lacks
  };
  struct Override {
    size_t r;
    uint32_t entity;
    uint32_t name;
    std::vector<uint32_t> mask;
    bool added;
  };

  // CompileComponent: compiles `config` as component `c` of entity `index`. For a
  // component of a prefab instance, `instance` is the open instance, `slot` the prefab
  // component it overrides (kNoSlot: one the prefab lacks) and `keys` the fields the
  // level wrote.
  absl::Status CompileComponent(uint32_t index, uint32_t c, const json& config,
                                const std::string& type_name, const std::string& name,
                                OpenInstance* instance, size_t slot,
                                absl::Span<const std::string> keys);
  // CopyInstance: appends instance `i` of the prefab's part `r` to entity `entity`,
  // its references to the prefab's entities mapped by `to_level`.
  template <typename ToLevel>
  void CopyInstance(const CompiledPrefab& prefab, size_t r, uint32_t i, uint32_t entity,
                    const ToLevel& to_level);
  // Dealiased: `reference` with a leading alias of the root replaced by its name.
  std::string Dealiased(const std::string& reference) const {
    if (aliases_ != nullptr) {
      for (const std::string& alias : *aliases_) {
        if (reference == alias) return root_name_;
        if (absl::StartsWith(reference, alias) && reference.size() > alias.size() &&
            reference[alias.size()] == '/') {
          return absl::StrCat(root_name_, reference.substr(alias.size()));
        }
      }
    }
    return reference;
  }
  // KeepParts: in Finish, when compiling a prefab on its own.
  void KeepParts();

  // InEntityOrder: puts type r's instances in entity order (stable), as the DOM walk
  // compiles them, when a "children" array came before its parent's "components".
  void InEntityOrder(size_t r);

  const EntityCompiler& compiler_;
  const Options& options_;
  const PrefabLibrary* prefabs_;
  CompiledPrefab* parts_;
  const std::vector<std::string>* aliases_ = nullptr;
  std::string root_name_;
  std::vector<OpenInstance> open_;  // innermost last
  std::vector<PrefabEntityRecord> prefab_entities_;
  std::vector<Override> overrides_;
  Result result_;
  EntityTable table_;
  std::vector<ComponentTypeContents> types_;
  std::vector<std::vector<EntityRefFixup>> fixups_;
  std::vector<std::vector<FixupOwner>> fixup_owners_;
  // Variable-size types: where each instance begins in the type's data.
  std::vector<std::vector<size_t>> instance_begin_;
  std::vector<bool> out_of_order_;
  std::vector<Skipped> skipped_;
  // Instance names whose text differs from the type name, for the strata.names section.
  absl::flat_hash_map<uint32_t, std::string> name_text_;
  absl::flat_hash_set<std::string> names_in_entity_;
  std::vector<uint32_t> per_entity_count_;
  std::vector<std::string> field_names_;  // name-field texts of the current instance
  std::vector<size_t> counted_;
};

absl::Status EntityCompiler::LevelBuilder::AddComponent(uint32_t index, uint32_t c,
                                                        const json& component) {
  auto where = [&] { return absl::StrCat(table_.Path(index), ".components[", c, "]"); };
  if (!component.is_object()) {
    return absl::InvalidArgumentError(
        absl::StrCat(where(), ": expected a component object, got ", component.type_name()));
  }
  // One pass over the members for both keys: a component has a few, and two finds
  // cost twice the compares.
  const json* type = nullptr;
  const json* name_json = nullptr;
  for (auto it = component.begin(); it != component.end(); ++it) {
    const absl::string_view key = it.key();
    if (key == "type") {
      type = &*it;
    } else if (key == "name") {
      name_json = &*it;
    }
  }
  if (type == nullptr || !type->is_string()) {
    return absl::InvalidArgumentError(absl::StrCat(
        where(), ": \"type\": expected a string, got ", type == nullptr ? "nothing" : type->type_name()));
  }
  const std::string& type_name = type->get_ref<const std::string&>();
  if (name_json != nullptr && !name_json->is_string()) {
    return absl::InvalidArgumentError(absl::StrCat(where(), " \"", UserText(type_name),
                                                   "\": \"name\": expected a string, got ",
                                                   name_json->type_name()));
  }
  const std::string& name = name_json != nullptr ? name_json->get_ref<const std::string&>() : type_name;
  if (!names_in_entity_.insert(name).second) {
    return absl::InvalidArgumentError(absl::StrCat(
        where(), " \"", UserText(type_name), "\": component name \"", UserText(name),
        "\" is used twice in this entity (names must be unique within an entity)"));
  }
  if (!open_.empty() && open_.back().entity == index) {
    OpenInstance& instance = open_.back();
    const CompiledPrefab& prefab = prefabs_->prefabs[instance.prefab];
    auto match = prefab.component_by_name.find(name);
    if (match == prefab.component_by_name.end()) {
      return CompileComponent(index, c, component, type_name, name, &instance, kNoSlot, {});
    }
    const json& base = prefab.components[match->second];
    const std::string& base_type = base.find("type")->get_ref<const std::string&>();
    if (base_type != type_name) {
      return absl::InvalidArgumentError(absl::StrCat(
          where(), " \"", UserText(type_name), "\": component \"", UserText(name),
          "\" is of type \"", UserText(base_type), "\" in prefab \"", UserText(prefab.name), "\""));
    }
    std::vector<std::string> keys;
    for (auto it = component.begin(); it != component.end(); ++it) {
      if (it.key() != "type" && it.key() != "name") keys.push_back(it.key());
    }
    if (keys.empty()) return absl::OkStatus();  // the prefab's, copied when the entity ends
    instance.overridden[match->second] = true;
    json merged = base;
    for (const std::string& key : keys) merged[key] = component[key];
    return CompileComponent(index, c, merged, type_name, name, &instance, match->second, keys);
  }
  return CompileComponent(index, c, component, type_name, name, nullptr, kNoSlot, {});
}

absl::Status EntityCompiler::LevelBuilder::CompileComponent(
    uint32_t index, uint32_t c, const json& component, const std::string& type_name,
    const std::string& name, OpenInstance* instance, size_t slot,
    absl::Span<const std::string> keys) {
  auto where = [&] { return absl::StrCat(table_.Path(index), ".components[", c, "]"); };
  auto reg = compiler_.by_name_.find(type_name);
  if (reg == compiler_.by_name_.end()) {
    if (options_.unknown_components == UnknownComponents::kSkip) {
      skipped_.push_back(Skipped{index, c, type_name});
      return absl::OkStatus();
    }
    return absl::InvalidArgumentError(absl::StrCat(where(), ": unknown component type \"",
                                                   UserText(type_name),
                                                   "\" (no compile function registered)"));
  }
  const size_t r = reg->second;
  const Registration& registration = compiler_.registrations_[r];
  uint32_t count = 0;
  if (instance == nullptr) {
    if (per_entity_count_[r]++ == 0) counted_.push_back(r);
    count = per_entity_count_[r];
  } else if (slot == kNoSlot) {  // the prefab's own components count too
    count = prefabs_->prefabs[instance->prefab].root_count[r] + ++instance->added[r];
  }
  if (registration.info.max_per_entity != 0 && count > registration.info.max_per_entity) {
    return absl::InvalidArgumentError(absl::StrCat(
        where(), " \"", UserText(type_name), "\": an entity has at most ",
        registration.info.max_per_entity, " component", registration.info.max_per_entity == 1 ? "" : "s",
        " of this type"));
  }
  ComponentTypeContents& out = types_[r];
  if (!out.entity_index.empty() && out.entity_index.back() > index) out_of_order_[r] = true;
  if (registration.info.instance_size == 0) instance_begin_[r].push_back(out.data.size());
  const size_t fixups_before = fixups_[r].size();
  ComponentDataWriter writer(options_.endianness, &out.data, &fixups_[r], &field_names_);
  absl::Status status = registration.info.compile(component, writer);
  if (!status.ok()) {
    return absl::Status(status.code(), absl::StrCat(where(), " \"", UserText(type_name), "\" (",
                                                    UserText(name), "): ", status.message()));
  }
  if (registration.info.instance_size != 0 && writer.size() != registration.info.instance_size) {
    return absl::InternalError(absl::StrCat(
        where(), " \"", UserText(type_name), "\": compile function wrote ", writer.size(),
        " bytes, but the type was registered with instance_size ", registration.info.instance_size));
  }
  fixup_owners_[r].resize(fixups_[r].size(),
                          FixupOwner{index, c, static_cast<uint32_t>(out.entity_index.size())});
  if (parts_ != nullptr && index == 0) {
    if (parts_->root_slot.size() <= c) parts_->root_slot.resize(c + 1, {kNoSlot, 0});
    parts_->root_slot[c] = {r, static_cast<uint32_t>(out.entity_index.size())};
  }
  if (instance != nullptr) {
    const CompiledPrefab& prefab = prefabs_->prefabs[instance->prefab];
    Override record{r, index, 0, {}, slot == kNoSlot};
    if (slot != kNoSlot) {
      // A bit per declared field the level wrote; a key that is not a declared field (a
      // type with its own codec, such as the transform's "position") marks them all.
      const std::vector<std::string>& fields = registration.field_names;
      const size_t n = std::max<size_t>(fields.size(), 1);
      record.mask.assign((n + 31) / 32, 0);
      for (const std::string& key : keys) {
        // A key marks every field under it ("stats" marks "stats.hp", "stats.armor").
        bool any = false;
        for (size_t b = 0; b < fields.size(); ++b) {
          if (FieldUnderKey(fields[b], key)) {
            record.mask[b / 32] |= 1u << (b % 32);
            any = true;
          }
        }
        if (!any) {
          for (size_t b = 0; b < n; ++b) record.mask[b / 32] |= 1u << (b % 32);
        }
      }
      // References in fields the level did not write came from the prefab: they name
      // its entities, which are this instance's.
      for (size_t f = fixups_before; f < fixups_[r].size(); ++f) {
        EntityRefFixup& fixup = fixups_[r][f];
        if (std::any_of(keys.begin(), keys.end(),
                        [&](const std::string& key) { return FieldUnderKey(fixup.field, key); })) {
          continue;
        }
        auto local = prefab.local_refs.find(fixup.reference);
        if (local == prefab.local_refs.end()) continue;
        instance->local_refs.push_back(OpenInstance::LocalRef{r, f, local->second});
        fixup.resolved = index;  // numbered in EndEntity
      }
    }
    overrides_.push_back(std::move(record));
  }
  bool literal = false;
  const uint32_t name_id = ParseNameId(name, &literal);
  if (options_.keep_names && name != type_name && !literal) name_text_.try_emplace(name_id, name);
  if (options_.keep_names) {
    for (std::string& text : field_names_) name_text_.try_emplace(IdString32::Hash(text), std::move(text));
  }
  field_names_.clear();
  out.entity_index.push_back(index);
  out.names.push_back(name_id);
  if (instance != nullptr) overrides_.back().name = name_id;
  return absl::OkStatus();
}

absl::Status EntityCompiler::LevelBuilder::SetPrefab(uint32_t entity, absl::string_view prefab) {
  if (parts_ != nullptr) {
    return EntityError(entity, "the entities of a prefab cannot be instances of a prefab");
  }
  auto no_prefab = [&] {
    return EntityError(entity, absl::StrCat("\"prefab\": no prefab is named \"", UserText(prefab), "\""));
  };
  if (prefabs_ == nullptr) return no_prefab();
  auto it = prefabs_->by_name.find(prefab);
  if (it == prefabs_->by_name.end()) return no_prefab();
  const CompiledPrefab& compiled = prefabs_->prefabs[it->second];
  open_.push_back(OpenInstance{entity, it->second, std::vector<bool>(compiled.components.size(), false), {}, {}});
  return absl::OkStatus();
}

template <typename ToLevel>
void EntityCompiler::LevelBuilder::CopyInstance(const CompiledPrefab& prefab, size_t r, uint32_t i,
                                                uint32_t entity, const ToLevel& to_level) {
  const CompiledPrefab::Part& part = prefab.parts[r];
  ComponentTypeContents& out = types_[r];
  if (!out.entity_index.empty() && out.entity_index.back() > entity) out_of_order_[r] = true;
  const size_t base = out.data.size();
  if (compiler_.registrations_[r].info.instance_size == 0) instance_begin_[r].push_back(base);
  const size_t begin = part.begin[i];
  out.data.insert(out.data.end(), part.data.begin() + begin, part.data.begin() + part.begin[i + 1]);
  const uint32_t number = static_cast<uint32_t>(out.entity_index.size());
  for (uint32_t k = part.ref_begin[i]; k < part.ref_begin[i + 1]; ++k) {
    EntityRefFixup fixup;
    fixup.offset = base + (part.refs[k].first - begin);
    fixup.resolved = to_level(part.refs[k].second);
    fixups_[r].push_back(std::move(fixup));
    fixup_owners_[r].push_back(FixupOwner{entity, 0, number});
  }
  out.entity_index.push_back(entity);
  out.names.push_back(part.names[i]);
}

absl::Status EntityCompiler::LevelBuilder::EndEntity(uint32_t entity) {
  if (open_.empty() || open_.back().entity != entity) return absl::OkStatus();
  const OpenInstance instance = std::move(open_.back());
  open_.pop_back();
  const CompiledPrefab& prefab = prefabs_->prefabs[instance.prefab];
  // The instance's own children were numbered after it; the prefab's come after them.
  const uint32_t own = static_cast<uint32_t>(table_.size()) - entity - 1;
  const size_t n = prefab.table.size();
  if (n - 1 > size_t{kNoParent - 2} - table_.size()) {
    return absl::ResourceExhaustedError("level: too many entities");
  }
  auto to_level = [&](uint32_t local) { return local == 0 ? entity : entity + own + local; };
  for (size_t c = 0; c < instance.overridden.size(); ++c) {
    const auto [r, i] = prefab.root_slot[c];
    if (!instance.overridden[c] && r != kNoSlot) CopyInstance(prefab, r, i, entity, to_level);
  }
  for (const OpenInstance::LocalRef& ref : instance.local_refs) {
    fixups_[ref.r][ref.fixup].resolved = to_level(ref.local);
  }
  prefab_entities_.push_back(PrefabEntityRecord{entity, instance.prefab, 0});
  for (uint32_t k = 1; k < n; ++k) {
    const uint32_t parent = prefab.table.parent[k];
    STRATA_ASSIGN_OR_RETURN(const uint32_t added, AddEntity(to_level(parent), prefab.table.position[k]));
    if (prefab.table.HasName(k)) table_.SetName(added, prefab.table.Name(k));
    prefab_entities_.push_back(PrefabEntityRecord{added, instance.prefab, k});
  }
  for (size_t r = 0; r < prefab.parts.size(); ++r) {
    const CompiledPrefab::Part& part = prefab.parts[r];
    for (uint32_t i = 0; i < part.entity_index.size(); ++i) {
      if (part.entity_index[i] != 0) CopyInstance(prefab, r, i, to_level(part.entity_index[i]), to_level);
    }
  }
  return absl::OkStatus();
}

bool EntityCompiler::LevelBuilder::Append(LevelBuilder& slice) {
  EntityTable& from = slice.table_;
  const size_t n = from.size();
  const uint32_t base = static_cast<uint32_t>(table_.size());
  if (n > size_t{kNoParent - 1} - base) return false;
  const uint32_t slot_base = static_cast<uint32_t>(table_.name_begin.size() - 1);
  const size_t char_base = table_.name_chars.size();
  for (size_t k = 0; k < n; ++k) {
    table_.parent.push_back(from.parent[k] == kNoParent ? kNoParent : from.parent[k] + base);
    table_.name_slot.push_back(from.name_slot[k] == EntityTable::kNoName ? EntityTable::kNoName
                                                                       : from.name_slot[k] + slot_base);
  }
  table_.position.insert(table_.position.end(), from.position.begin(), from.position.end());
  table_.name_chars.append(from.name_chars);
  for (size_t i = 1; i < from.name_begin.size(); ++i) table_.name_begin.push_back(from.name_begin[i] + char_base);
  for (size_t r = 0; r < types_.size(); ++r) {
    ComponentTypeContents& to = types_[r];
    ComponentTypeContents& add = slice.types_[r];
    if (add.entity_index.empty()) continue;
    const size_t data_base = to.data.size();
    const uint32_t instance_base = static_cast<uint32_t>(to.entity_index.size());
    to.data.insert(to.data.end(), add.data.begin(), add.data.end());
    for (uint32_t e : add.entity_index) to.entity_index.push_back(e + base);
    to.names.insert(to.names.end(), add.names.begin(), add.names.end());
    if (slice.out_of_order_[r]) out_of_order_[r] = true;
    for (size_t begin : slice.instance_begin_[r]) instance_begin_[r].push_back(begin + data_base);
    for (size_t f = 0; f < slice.fixups_[r].size(); ++f) {
      EntityRefFixup& fixup = slice.fixups_[r][f];
      fixup.offset += data_base;
      if (fixup.resolved != kNoEntityRef) fixup.resolved += base;
      fixups_[r].push_back(std::move(fixup));
      FixupOwner owner = slice.fixup_owners_[r][f];
      owner.entity += base;
      owner.instance += instance_base;
      fixup_owners_[r].push_back(owner);
    }
  }
  for (Skipped& s : slice.skipped_) {
    s.entity += base;
    skipped_.push_back(std::move(s));
  }
  for (PrefabEntityRecord record : slice.prefab_entities_) {
    record.entity += base;
    prefab_entities_.push_back(record);
  }
  for (Override& record : slice.overrides_) {
    record.entity += base;
    overrides_.push_back(std::move(record));
  }
  // The first text met for a name wins, as in one walk: slices arrive in text order.
  for (auto& [id, text] : slice.name_text_) name_text_.try_emplace(id, std::move(text));
  return true;
}

void EntityCompiler::LevelBuilder::KeepParts() {
  CompiledPrefab& prefab = *parts_;
  prefab.table = table_;
  prefab.name_texts.assign(name_text_.begin(), name_text_.end());
  prefab.parts.resize(types_.size());
  prefab.root_count.assign(types_.size(), 0);
  for (size_t r = 0; r < types_.size(); ++r) {
    const ComponentTypeContents& type = types_[r];
    CompiledPrefab::Part& part = prefab.parts[r];
    const size_t n = type.entity_index.size();
    const size_t stride = compiler_.registrations_[r].info.instance_size;
    part.entity_index = type.entity_index;
    part.names = type.names;
    part.data = type.data;
    part.begin.resize(n + 1);
    for (size_t i = 0; i < n; ++i) part.begin[i] = stride != 0 ? i * stride : instance_begin_[r][i];
    part.begin[n] = type.data.size();
    for (uint32_t e : type.entity_index) prefab.root_count[r] += e == 0 ? 1 : 0;
    // Fixups are in instance order (the prefab compiles by the DOM walk, parents'
    // components first, so nothing was reordered).
    part.ref_begin.assign(n + 1, 0);
    for (size_t f = 0; f < fixups_[r].size(); ++f) {
      const EntityRefFixup& fixup = fixups_[r][f];
      part.refs.emplace_back(fixup.offset, fixup.resolved);
      ++part.ref_begin[fixup_owners_[r][f].instance + 1];
      prefab.local_refs.try_emplace(fixup.reference, fixup.resolved);
    }
    for (size_t i = 0; i < n; ++i) part.ref_begin[i + 1] += part.ref_begin[i];
  }
}

void EntityCompiler::LevelBuilder::InEntityOrder(size_t r) {
  ComponentTypeContents& type = types_[r];
  const size_t n = type.entity_index.size();
  const size_t stride = compiler_.registrations_[r].info.instance_size;
  auto begin = [&](size_t i) { return stride != 0 ? i * stride : instance_begin_[r][i]; };
  auto end = [&](size_t i) {
    return stride != 0 ? (i + 1) * stride : i + 1 < n ? instance_begin_[r][i + 1] : type.data.size();
  };
  std::vector<uint32_t> order(n);
  std::iota(order.begin(), order.end(), 0u);
  std::stable_sort(order.begin(), order.end(),
                   [&](uint32_t a, uint32_t b) { return type.entity_index[a] < type.entity_index[b]; });
  std::vector<std::byte> data;
  data.reserve(type.data.size());
  std::vector<size_t> moved_to(n);
  std::vector<uint32_t> entity_index(n), names(n);
  for (size_t k = 0; k < n; ++k) {
    const uint32_t i = order[k];
    moved_to[i] = data.size();
    data.insert(data.end(), type.data.begin() + begin(i), type.data.begin() + end(i));
    entity_index[k] = type.entity_index[i];
    names[k] = type.names[i];
  }
  for (size_t f = 0; f < fixups_[r].size(); ++f) {
    const uint32_t i = fixup_owners_[r][f].instance;
    fixups_[r][f].offset = moved_to[i] + (fixups_[r][f].offset - begin(i));
  }
  type.data = std::move(data);
  type.entity_index = std::move(entity_index);
  type.names = std::move(names);
}

absl::StatusOr<EntityCompiler::Result> EntityCompiler::LevelBuilder::Finish() {
  const std::vector<Registration>& registrations = compiler_.registrations_;
  // In entity order, as the DOM walk met them.
  std::stable_sort(skipped_.begin(), skipped_.end(),
                   [](const Skipped& a, const Skipped& b) { return a.entity < b.entity; });
  for (const Skipped& s : skipped_) {
    result_.warnings.push_back(absl::StrCat(table_.Path(s.entity), ".components[", s.component,
                                            "]: skipped component of unknown type \"",
                                            UserText(s.type), "\""));
  }
  for (size_t r = 0; r < types_.size(); ++r) {
    if (out_of_order_[r]) InEntityOrder(r);
  }
  // Entity references, now that every entity has its number.
  {
    ReferenceResolver resolver(table_);
    for (size_t r = 0; r < registrations.size(); ++r) {
      for (size_t f = 0; f < fixups_[r].size(); ++f) {
        EntityRefFixup& fixup = fixups_[r][f];
        absl::StatusOr<uint32_t> target =
            fixup.resolved != kNoEntityRef ? absl::StatusOr<uint32_t>(fixup.resolved)
            : aliases_ == nullptr       ? resolver.Resolve(fixup.reference)
                                        : resolver.Resolve(Dealiased(fixup.reference));
        if (!target.ok()) {
          const FixupOwner owner = fixup_owners_[r][f];
          return absl::InvalidArgumentError(absl::StrCat(
              table_.Path(owner.entity), ".components[", owner.component, "] \"",
              registrations[r].info.type_name, "\": \"", fixup.field, "\": ",
              target.status().message()));
        }
        fixup.resolved = *target;
        uint32_t stored = *target;
        if (options_.endianness != kNativeEndianness) stored = absl::gbswap_32(stored);
        std::memcpy(types_[r].data.data() + fixup.offset, &stored, sizeof(stored));
      }
    }
  }
  if (parts_ != nullptr) KeepParts();
  for (size_t r = 0; r < types_.size(); ++r) {
    std::vector<size_t>().swap(instance_begin_[r]);
    std::vector<EntityRefFixup>().swap(fixups_[r]);
  }

  EntityResourceContents contents;
  MetadataSections metadata;
  if (options_.keep_names) {
    for (uint32_t k = 0; k < table_.size(); ++k) {
      if (!table_.HasName(k) || table_.Name(k).empty()) continue;
      metadata.named_entities.push_back(k);
      metadata.entity_names.emplace_back(table_.Name(k));
    }
    metadata.name_texts.assign(std::make_move_iterator(name_text_.begin()),
                               std::make_move_iterator(name_text_.end()));
  }
  result_.num_entities = static_cast<uint32_t>(table_.size());
  contents.parent_index = std::move(table_.parent);
  table_ = EntityTable();

  // Spawn order: ascending spawn_order, ties by name so the output is deterministic.
  std::vector<size_t> order(registrations.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    const ComponentCompileInfo& ra = registrations[a].info;
    const ComponentCompileInfo& rb = registrations[b].info;
    return ra.spawn_order != rb.spawn_order ? ra.spawn_order < rb.spawn_order
                                            : ra.type_name < rb.type_name;
  });
  for (size_t r : order) {
    if (types_[r].entity_index.empty() || registrations[r].info.layout.empty()) continue;
    metadata.layout_types.push_back(registrations[r].id.value());
    metadata.layouts.push_back(registrations[r].info.layout);
  }
  std::move(metadata).AppendTo(contents.component_types, options_.endianness);
  if (prefabs_ != nullptr && !prefabs_->prefabs.empty()) {
    std::vector<PrefabDefinition> definitions;
    definitions.reserve(prefabs_->prefabs.size());
    for (const CompiledPrefab& prefab : prefabs_->prefabs) {
      definitions.push_back(PrefabDefinition{prefab.name, prefab.blob});
    }
    // Entity order; an entity's components in the order compiled (the same in both walks).
    std::sort(prefab_entities_.begin(), prefab_entities_.end(),
              [](const PrefabEntityRecord& a, const PrefabEntityRecord& b) { return a.entity < b.entity; });
    std::stable_sort(overrides_.begin(), overrides_.end(),
                     [](const Override& a, const Override& b) { return a.entity < b.entity; });
    std::vector<PrefabOverrideRecord> overrides;
    overrides.reserve(overrides_.size());
    for (Override& o : overrides_) {
      overrides.push_back(PrefabOverrideRecord{registrations[o.r].id.value(), o.entity, o.name,
                                               std::move(o.mask), o.added, /*removed=*/false});
    }
    contents.component_types.push_back(
        MakePrefabSection(definitions, prefab_entities_, overrides, options_.endianness));
  }
  for (size_t r : order) {
    if (!types_[r].entity_index.empty()) contents.component_types.push_back(std::move(types_[r]));
  }
  STRATA_ASSIGN_OR_RETURN(result_.blob, WriteEntityResource(contents, options_.endianness));
  return std::move(result_);
}

absl::StatusOr<std::unique_ptr<EntityCompiler::PrefabLibrary>> EntityCompiler::BuildPrefabs(
    const json& definitions, const Options& options) const {
  STRATA_ASSIGN_OR_RETURN(std::vector<resource_internal::ResolvedPrefab> resolved,
                          resource_internal::ResolvePrefabs(definitions));
  auto library = std::make_unique<PrefabLibrary>();
  library->prefabs.resize(resolved.size());
  Options own = options;
  own.threads = 1;
  for (size_t p = 0; p < resolved.size(); ++p) {
    CompiledPrefab& prefab = library->prefabs[p];
    prefab.name = resolved[p].name;
    prefab.components = resolved[p].entity["components"];
    for (size_t c = 0; c < prefab.components.size(); ++c) {
      prefab.component_by_name.emplace(resource_internal::ComponentName(prefab.components[c]), c);
    }
    prefab.root_slot.assign(prefab.components.size(), {kNoSlot, 0});
    auto in_prefab = [&](const absl::Status& status) {
      return absl::Status(status.code(), absl::StrCat("prefab \"", UserText(prefab.name), "\": ",
                                                      status.message()));
    };
    LevelBuilder builder(*this, own, nullptr, &prefab);
    builder.set_root_aliases(&resolved[p].aliases, prefab.name);
    const json entities = json::array({std::move(resolved[p].entity)});
    if (absl::Status walked = WalkDom(entities, builder); !walked.ok()) return in_prefab(walked);
    absl::StatusOr<Result> compiled = builder.Finish();
    if (!compiled.ok()) return in_prefab(compiled.status());
    prefab.blob = std::move(compiled->blob);
    for (const std::string& warning : compiled->warnings) {
      library->warnings.push_back(absl::StrCat("prefab \"", UserText(prefab.name), "\": ", warning));
    }
    library->by_name.emplace(prefab.name, static_cast<uint32_t>(p));
  }
  return library;
}

absl::StatusOr<EntityCompiler::Result> EntityCompiler::Compile(absl::string_view json_text,
                                                               const Options& options) const {
  if (options.threads < 0 || options.threads > kMaxThreads) {
    return absl::InvalidArgumentError(
        absl::StrCat("threads: expected 0 to ", kMaxThreads, ", got ", options.threads));
  }
  STRATA_RETURN_IF_ERROR(CheckUtf8(json_text));
  const size_t slice_bytes =
      options.slice_bytes != 0 ? options.slice_bytes : resource_internal::kDefaultSliceBytes;
  int threads = options.threads;
  if (threads == 0) threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  // Prefabs declared before the entities are compiled first; anywhere else (or with any
  // problem) the slow path below decides.
  std::unique_ptr<PrefabLibrary> prefabs;
  bool fast = true;
  if (const absl::string_view prefab_text = resource_internal::LeadingPrefabs(json_text);
      !prefab_text.empty()) {
    json definitions;
    absl::StatusOr<std::unique_ptr<PrefabLibrary>> built;
    fast = ParseStrictJson(prefab_text, &definitions).ok() &&
           (built = BuildPrefabs(definitions, options)).ok();
    if (fast) prefabs = *std::move(built);
  }
  if (fast) {
    LevelBuilder builder(*this, options, prefabs.get());
    // A text within one slice is one slice: no thread would have anything to do.
    const bool streamed =
        threads == 1 || json_text.size() <= slice_bytes
            ? resource_internal::StreamLevel(json_text, builder, slice_bytes)
            : resource_internal::StreamLevelParallel(
                  json_text, slice_bytes, threads,
                  [&] { return std::make_unique<LevelBuilder>(*this, options, prefabs.get()); },
                  [&](std::unique_ptr<resource_internal::LevelSink> slice) {
                    return builder.Append(static_cast<LevelBuilder&>(*slice));
                  });
    if (streamed) {
      absl::StatusOr<Result> result = builder.Finish();
      if (result.ok()) {
        if (prefabs != nullptr) {
          result->warnings.insert(result->warnings.begin(), prefabs->warnings.begin(),
                                  prefabs->warnings.end());
        }
        return result;
      }
    }
  }
  // The walk stopped (or a reference did not resolve): a syntax error or repeated key
  // anywhere in the text is the answer, as when the whole text was parsed before the
  // walk; else the DOM walk finds the first semantic error in its documented order
  // (prefabs, then keys, components and children) or compiles the rare shape the
  // stream left.
  STRATA_RETURN_IF_ERROR(CheckStrictJson(json_text));
  return CompileDom(json_text, options);
}

absl::StatusOr<EntityCompiler::Result> EntityCompiler::CompileDom(absl::string_view json_text,
                                                                  const Options& options) const {
  json root;
  STRATA_RETURN_IF_ERROR(ParseStrictJson(json_text, &root));
  if (!root.is_object()) {
    return absl::InvalidArgumentError(
        absl::StrCat("level: expected an object {\"entities\": [...]}, got ", root.type_name()));
  }
  for (auto it = root.begin(); it != root.end(); ++it) {
    if (it.key() != "entities" && it.key() != "prefabs") {
      return absl::InvalidArgumentError(absl::StrCat(
          "level: unknown key \"", UserText(it.key()), "\" (expected \"entities\", \"prefabs\")"));
    }
  }
  std::unique_ptr<PrefabLibrary> prefabs;
  if (auto definitions = root.find("prefabs"); definitions != root.end()) {
    STRATA_ASSIGN_OR_RETURN(prefabs, BuildPrefabs(*definitions, options));
  }
  auto entities = root.find("entities");
  if (entities == root.end() || !entities->is_array()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "level: \"entities\": expected an array, got ",
        entities == root.end() ? "nothing" : entities->type_name()));
  }
  LevelBuilder builder(*this, options, prefabs.get());
  STRATA_RETURN_IF_ERROR(WalkDom(*entities, builder));
  STRATA_ASSIGN_OR_RETURN(Result result, builder.Finish());
  if (prefabs != nullptr) {
    result.warnings.insert(result.warnings.begin(), prefabs->warnings.begin(), prefabs->warnings.end());
  }
  return result;
}

absl::Status EntityCompiler::WalkDom(const json& entities, LevelBuilder& builder) const {
  // Depth-first with an explicit stack (hostile nesting cannot overflow the call stack),
  // numbering entities in pre-order so every parent precedes its children. Paths are
  // rebuilt from the table only for messages, so deep nesting stays linear. A marker
  // (no entity) below an entity's children ends the entity once they are done.
  struct Pending {
    const json* entity;
    uint32_t parent;  // markers: the entity that ends
    uint32_t position;
  };
  std::vector<Pending> stack;
  for (size_t i = entities.size(); i-- > 0;) {
    stack.push_back({&entities[i], kNoParent, static_cast<uint32_t>(i)});
  }
  while (!stack.empty()) {
    const Pending pending = stack.back();
    stack.pop_back();
    if (pending.entity == nullptr) {
      STRATA_RETURN_IF_ERROR(builder.EndEntity(pending.parent));
      continue;
    }
    const json& entity = *pending.entity;
    if (!entity.is_object()) return builder.NotAnEntity(pending.parent, pending.position, entity.type_name());
    STRATA_ASSIGN_OR_RETURN(const uint32_t index, builder.AddEntity(pending.parent, pending.position));
    const json* components = nullptr;
    const json* children = nullptr;
    const json* prefab = nullptr;
    for (auto it = entity.begin(); it != entity.end(); ++it) {
      const std::string& key = it.key();
      if (key == "name") {
        if (!it->is_string()) {
          return builder.EntityError(index, ExpectedMessage(key, "a string", it->type_name()));
        }
        builder.SetName(index, it->get_ref<const std::string&>());
      } else if (key == "components") {
        components = &*it;
      } else if (key == "children") {
        children = &*it;
      } else if (key == "prefab") {
        if (!it->is_string()) {
          return builder.EntityError(index, ExpectedMessage(key, "a string", it->type_name()));
        }
        prefab = &*it;
      } else {
        return builder.EntityError(index, UnknownEntityKeyMessage(key));
      }
    }
    if (prefab != nullptr) {
      STRATA_RETURN_IF_ERROR(builder.SetPrefab(index, prefab->get_ref<const std::string&>()));
    }
    if (components != nullptr) {
      if (!components->is_array()) {
        return builder.EntityError(index, ExpectedMessage("components", "an array", components->type_name()));
      }
      builder.BeginComponents(index);
      for (size_t c = 0; c < components->size(); ++c) {
        STRATA_RETURN_IF_ERROR(builder.AddComponent(index, static_cast<uint32_t>(c), (*components)[c]));
      }
    }
    stack.push_back({nullptr, index, 0});
    if (children != nullptr) {
      if (!children->is_array()) {
        return builder.EntityError(index, ExpectedMessage("children", "an array", children->type_name()));
      }
      for (size_t i = children->size(); i-- > 0;) {
        stack.push_back({&(*children)[i], index, static_cast<uint32_t>(i)});
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace strata
