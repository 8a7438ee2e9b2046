// World::SpawnLevel and World::Reload: a live level patched to its recompiled blob.
//
// Reload works in two halves. The first reads both blobs and decides everything, with
// nothing changed: the entity match (resource/entity_match.h), then per component
// type which instances are added, removed or written and which of their fields, and
// it decodes every value it will write or spawn, so that whatever a spawn would refuse
// is refused here. The second half applies it: create and spawn the added, write the
// changed fields, remove, destroy, name; then one flush tells the observers.
#include <algorithm>
#include <cstring>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "component/field.h"
#include "engine/world.h"
#include "resource/entity_match.h"
#include "resource/metadata.h"
#include "resource/prefab.h"

namespace strata {
namespace {

constexpr uint32_t kNone = EntityMatch::kNone;

using Layouts = absl::flat_hash_map<uint32_t, absl::string_view>;

// ReadLayouts: the strata.layouts section of `view`: type id -> layout text.
absl::StatusOr<Layouts> ReadLayouts(const EntityResourceView& view) {
  Layouts layouts;
  for (const ComponentTypeView& section : view.component_types()) {
    if (section.type != IdString32(kLayoutsSection)) continue;
    STRATA_ASSIGN_OR_RETURN(std::vector<absl::string_view> texts, ReadStringSection(section));
    for (size_t i = 0; i < texts.size(); ++i) layouts[section.names[i]] = texts[i];
  }
  return layouts;
}

absl::string_view LayoutOf(const Layouts& layouts, IdString32 type) {
  auto it = layouts.find(type.value());
  return it == layouts.end() ? absl::string_view() : it->second;
}

// BatchOf: the spawn batch of `section` (all of its instances).
ComponentSpawnBatch BatchOf(const ComponentTypeView& section, const EntityResourceView& view,
                            absl::Span<const Entity> entities, absl::string_view layout) {
  ComponentSpawnBatch batch;
  batch.type = section.type;
  batch.entities = entities;
  batch.parent_index = view.parent_index();
  batch.num_instances = section.num_instances;
  batch.entity_index = section.entity_index;
  batch.names = section.names;
  batch.instance_stride = section.instance_stride;
  batch.data = section.data;
  batch.layout_fingerprint = section.layout_fingerprint;
  batch.layout = layout;
  return batch;
}

// Gathered: some instances of a section, copied into arrays of their own (16-byte
// aligned data, as a view's).
struct Gathered {
  std::vector<uint32_t> entity_index;
  std::vector<uint32_t> names;
  std::vector<std::byte> data;
};

Gathered Gather(const ComponentTypeView& section, absl::Span<const uint32_t> instances) {
  Gathered g;
  const size_t stride = section.instance_stride;
  g.entity_index.reserve(instances.size());
  g.names.reserve(instances.size());
  g.data.reserve(instances.size() * stride);
  for (const uint32_t i : instances) {
    g.entity_index.push_back(section.entity_index[i]);
    g.names.push_back(section.names[i]);
    const std::byte* at = section.data.data() + size_t{i} * stride;
    g.data.insert(g.data.end(), at, at + stride);
  }
  return g;
}

ComponentSpawnBatch SubBatch(const ComponentSpawnBatch& whole, const Gathered& g) {
  ComponentSpawnBatch batch = whole;
  batch.num_instances = static_cast<uint32_t>(g.entity_index.size());
  batch.entity_index = g.entity_index;
  batch.names = g.names;
  batch.data = g.data;
  batch.in_entity_order = false;
  return batch;
}

// Sorted: whether `v` never decreases.
bool Sorted(absl::Span<const uint32_t> v) {
  for (size_t i = 1; i < v.size(); ++i) {
    if (v[i] < v[i - 1]) return false;
  }
  return true;
}

// FieldLabel: "type.field" for the report; a custom type's one field is named by its
// layout ("local:matrix4x4:64" -> "local").
std::string FieldLabel(const ComponentType& type, size_t field) {
  if (!type.fields().empty()) return absl::StrCat(type.name(), ".", type.fields()[field].name);
  const absl::string_view layout = type.layout();
  const size_t colon = layout.find(':');
  return colon == absl::string_view::npos ? type.name() : absl::StrCat(type.name(), ".", layout.substr(0, colon));
}

// TypePatch: what a reload does to one component type.
struct TypePatch {
  const ComponentType* type = nullptr;
  ComponentStore* store = nullptr;
  bool custom = false;  // no declared fields: one field, the whole instance
  size_t num_fields = 1;
  size_t mask_words = 1;
  bool has_after = false;
  ComponentTypeView after;
  absl::string_view after_layout;
  SpawnPlan after_plan;
  bool has_before = false;
  ComponentTypeView before;
  SpawnPlan before_plan;
  std::vector<uint32_t> adds;     // after instances to spawn
  std::vector<uint32_t> writes;   // after instances of kept instances that changed
  std::vector<uint32_t> write_of; // the before instance of each write
  std::vector<uint32_t> masks;    // mask_words per write
  std::vector<uint32_t> removes;  // before instances of kept entities to remove
};

// InstanceDiff: which fields of an instance changed in the file.
class InstanceDiff {
 public:
  InstanceDiff(const TypePatch& p, const EntityMatch& match) : p_(p), match_(match) {
    const ComponentType& type = *p.type;
    if (p.custom) {
      raw_ = true;
      return;
    }
    bool entity_fields = false;
    for (const FieldInfo& f : type.fields()) entity_fields |= f.type == FieldType::kEntity;
    raw_ = p.after.layout_fingerprint == p.before.layout_fingerprint &&
           p.after.instance_stride == p.before.instance_stride &&
           (!entity_fields || match.same_structure);
    // The blob bytes of the defaults: what a field the blob lacks stands for.
    EncodeInstance(type, type.defaults().data(), [](Entity) { return kNoEntityRef; }, &defaults_);
    // A field either blob holds in another form than the declared one (a str of
    // smaller capacity, an enum numbered otherwise) is compared by value: both sides
    // decoded into the declared member, as a spawn decodes them. Its blob bytes have
    // another size or meaning, so reading them at the declared size would compare the
    // wrong bytes and could read past the instance.
    decoded_.assign(type.fields().size(), 0);
    for (size_t f = 0; f < type.fields().size(); ++f) {
      decoded_[f] = Migrated(p.after_plan, f) || Migrated(p.before_plan, f);
      any_decoded_ |= decoded_[f] != 0;
    }
    if (any_decoded_) {
      scratch_a_.assign(type.defaults().begin(), type.defaults().end());
      scratch_b_.assign(type.defaults().begin(), type.defaults().end());
    }
  }

  // raw: equal instance bytes mean equal values.
  bool raw() const { return raw_; }

  // Diff: sets the mask bits (p.mask_words words at `mask`, zeroed by the caller) of
  // the fields of after instance `a` that differ from before instance `b`; whether any.
  bool Diff(uint32_t a, uint32_t b, uint32_t* mask) const {
    const size_t sa = p_.after.instance_stride;
    const size_t sb = p_.before.instance_stride;
    const std::byte* ia = p_.after.data.data() + a * sa;
    const std::byte* ib = p_.before.data.data() + b * sb;
    if (p_.custom) {
      if (sa == sb && std::memcmp(ia, ib, sa) == 0) return false;
      mask[0] = 1;
      return true;
    }
    if (raw_ && std::memcmp(ia, ib, sa) == 0) return false;
    bool any = false;
    const absl::Span<const FieldInfo> fields = p_.type->fields();
    for (size_t f = 0; f < fields.size(); ++f) {
      const int64_t oa = p_.after_plan.blob_offset[f];
      const int64_t ob = p_.before_plan.blob_offset[f];
      const std::byte* fa = oa >= 0 ? ia + oa : defaults_.data() + fields[f].blob_offset;
      const std::byte* fb = ob >= 0 ? ib + ob : defaults_.data() + fields[f].blob_offset;
      bool same;
      if (fields[f].type == FieldType::kEntity) {
        uint32_t ra;
        uint32_t rb;
        std::memcpy(&ra, fa, 4);
        std::memcpy(&rb, fb, 4);
        // The same entity, whatever its number now (NOTE: kNone == kNoEntityRef, so a
        // reference to an added entity is told apart from none explicitly).
        same = rb == kNoEntityRef ? ra == kNoEntityRef
                                  : ra != kNoEntityRef && ra < match_.before_of_after.size() &&
                                        match_.before_of_after[ra] == rb;
      } else if (decoded_[f]) {
        same = SameDecoded(f, oa >= 0 ? ia + oa : nullptr, ob >= 0 ? ib + ob : nullptr);
      } else {
        same = std::memcmp(fa, fb, FieldBlobSize(fields[f])) == 0;
      }
      if (!same) {
        mask[f / 32] |= uint32_t{1} << (f % 32);
        any = true;
      }
    }
    return any;
  }

 private:
  // Migrated: whether `plan` reads field f from bytes other than the declared field's
  // (another size, or enum values renumbered by name).
  bool Migrated(const SpawnPlan& plan, size_t f) const {
    if (plan.migrations.empty() || plan.blob_offset[f] < 0) return false;
    const FieldMigration& m = plan.migrations[f];
    return m.blob_size != FieldBlobSize(p_.type->fields()[f]) || !m.renumber.empty();
  }

  // SameDecoded: whether field f of the two instances holds the same value, each read
  // through its own plan (nullptr: the blob lacks the field, so its default). A value
  // the after blob cannot decode counts as changed: the decode of the writes that
  // follows refuses the reload with the spawn's message.
  bool SameDecoded(size_t f, const std::byte* fa, const std::byte* fb) const {
    const FieldInfo& field = p_.type->fields()[f];
    const size_t size = FieldMemorySize(field);
    const std::byte* defaults = p_.type->defaults().data();
    auto read = [&](const SpawnPlan& plan, const std::byte* bytes, std::vector<std::byte>& scratch) {
      if (bytes == nullptr) {
        std::memcpy(scratch.data() + field.offset, defaults + field.offset, size);
        return true;
      }
      const FieldMigration* migration = plan.migrations.empty() ? nullptr : &plan.migrations[f];
      return DecodeField(field, bytes, {}, scratch.data(), migration).ok();
    };
    if (!read(p_.after_plan, fa, scratch_a_) || !read(p_.before_plan, fb, scratch_b_)) return false;
    return std::memcmp(scratch_a_.data() + field.offset, scratch_b_.data() + field.offset, size) == 0;
  }

  const TypePatch& p_;
  const EntityMatch& match_;
  bool raw_ = false;
  std::vector<std::byte> defaults_;
  std::vector<uint8_t> decoded_;  // per field: compared by decoded value
  bool any_decoded_ = false;
  // One declared struct per side, to decode a field into (Diff runs on one thread).
  mutable std::vector<std::byte> scratch_a_;
  mutable std::vector<std::byte> scratch_b_;
};

// DiffInstances: fills p.adds, p.writes (+ masks) and p.removes from the two sections.
void DiffInstances(TypePatch& p, const EntityMatch& match) {
  if (!p.has_after) {
    // The type is gone from the file: its instances on kept entities go.
    for (uint32_t b = 0; b < p.before.num_instances; ++b) {
      if (match.after_of_before[p.before.entity_index[b]] != kNone) p.removes.push_back(b);
    }
    return;
  }
  if (!p.has_before) {
    for (uint32_t a = 0; a < p.after.num_instances; ++a) p.adds.push_back(a);
    return;
  }
  const InstanceDiff diff(p, match);
  std::vector<uint32_t> mask(p.mask_words);
  auto compare = [&](uint32_t a, uint32_t b) {
    std::fill(mask.begin(), mask.end(), 0u);
    if (!diff.Diff(a, b, mask.data())) return;
    p.writes.push_back(a);
    p.write_of.push_back(b);
    p.masks.insert(p.masks.end(), mask.begin(), mask.end());
  };
  const ComponentTypeView& after = p.after;
  const ComponentTypeView& before = p.before;
  const auto same = [](auto x, auto y) {
    return x.size() == y.size() && std::equal(x.begin(), x.end(), y.begin());
  };
  // The same instances of the same entities: instance k is instance k. Runs of
  // instances whose bytes are equal are passed over with one comparison.
  if (match.same_structure && same(after.entity_index, before.entity_index) && same(after.names, before.names)) {
    const size_t stride = after.instance_stride;
    constexpr uint32_t kRun = 64;
    const bool runs = diff.raw() && stride == before.instance_stride && stride > 0;
    for (uint32_t k = 0; k < after.num_instances;) {
      const uint32_t end = std::min(after.num_instances, k + kRun);
      if (runs && std::memcmp(after.data.data() + k * stride, before.data.data() + k * stride,
                              (end - k) * stride) == 0) {
        k = end;
        continue;
      }
      for (; k < end; ++k) compare(k, k);
    }
    return;
  }
  // Otherwise groups: the instances of one entity in `after` against those of its
  // match in `before`, paired by instance name.
  std::vector<uint8_t> paired(before.num_instances, 0);
  // before_first[j] .. before_first[j + 1]: the instances of before entity j, in
  // `before_order`: when both sections are sorted by entity and the match keeps the
  // order, a cursor walks `before` instead.
  bool monotonic = Sorted(after.entity_index) && Sorted(before.entity_index);
  uint32_t last = 0;
  for (uint32_t k = 0; k < match.before_of_after.size() && monotonic; ++k) {
    const uint32_t j = match.before_of_after[k];
    if (j == kNone) continue;
    monotonic = j >= last;
    last = j;
  }
  std::vector<uint32_t> before_first;
  std::vector<uint32_t> before_order;
  if (!monotonic) {
    const size_t nb = match.after_of_before.size();
    before_first.assign(nb + 1, 0);
    for (uint32_t b = 0; b < before.num_instances; ++b) ++before_first[before.entity_index[b] + 1];
    for (size_t j = 0; j < nb; ++j) before_first[j + 1] += before_first[j];
    before_order.resize(before.num_instances);
    std::vector<uint32_t> fill(before_first.begin(), before_first.end() - 1);
    for (uint32_t b = 0; b < before.num_instances; ++b) before_order[fill[before.entity_index[b]]++] = b;
  }
  uint32_t cursor = 0;
  // Instance indices of before entity j, in order.
  std::vector<uint32_t> group;
  auto before_group = [&](uint32_t j) {
    group.clear();
    if (!monotonic) {
      for (uint32_t x = before_first[j]; x < before_first[j + 1]; ++x) group.push_back(before_order[x]);
      return;
    }
    while (cursor < before.num_instances && before.entity_index[cursor] < j) ++cursor;
    while (cursor < before.num_instances && before.entity_index[cursor] == j) group.push_back(cursor++);
  };
  // With unsorted sections the instances of one entity need not be adjacent: take
  // each after instance on its own (its group is found again; groups are small).
  for (uint32_t a = 0; a < after.num_instances;) {
    const uint32_t e = after.entity_index[a];
    uint32_t a_end = a + 1;
    if (monotonic) {
      while (a_end < after.num_instances && after.entity_index[a_end] == e) ++a_end;
    }
    const uint32_t j = match.before_of_after[e];
    if (j == kNone) {
      for (; a < a_end; ++a) p.adds.push_back(a);
      continue;
    }
    before_group(j);
    for (; a < a_end; ++a) {
      uint32_t found = kNone;
      for (const uint32_t b : group) {
        if (!paired[b] && before.names[b] == after.names[a]) {
          found = b;
          break;
        }
      }
      if (found == kNone) {
        p.adds.push_back(a);
      } else {
        paired[found] = 1;
        compare(a, found);
      }
    }
  }
  for (uint32_t b = 0; b < before.num_instances; ++b) {
    if (!paired[b] && match.after_of_before[before.entity_index[b]] != kNone) p.removes.push_back(b);
  }
}

}  // namespace

std::string ReloadReport::Summary() const {
  std::string s = absl::StrCat(entities_added, " added, ", entities_removed, " removed, ", entities_kept,
                               " kept; ", fields_written, " fields written in ", instances_written,
                               " instances");
  if (!written.empty()) {
    absl::StrAppend(&s, " (",
                    absl::StrJoin(written, ", ",
                                  [](std::string* out, const std::pair<std::string, uint32_t>& w) {
                                    absl::StrAppend(out, w.first, " x", w.second);
                                  }),
                    ")");
  }
  if (components_added + components_removed > 0) {
    absl::StrAppend(&s, "; components ", components_added, " added, ", components_removed, " removed");
  }
  if (skipped > 0) absl::StrAppend(&s, "; ", skipped, " changes to what the game destroyed or removed skipped");
  return s;
}

absl::StatusOr<std::vector<Entity>> World::SpawnLevel(EntityResource level, SpawnStats* stats) {
  STRATA_ASSIGN_OR_RETURN(std::vector<Entity> spawned, Spawn(level.view(), stats));
  auto live = std::make_unique<LiveLevel>();
  live->resource.emplace(std::move(level));
  live->entities = spawned;
  level_ = std::move(live);
  return spawned;
}

absl::StatusOr<std::vector<Entity>> World::SpawnLevel(std::vector<std::byte> blob, SpawnStats* stats) {
  STRATA_ASSIGN_OR_RETURN(EntityResource level, EntityResource::Create(std::move(blob)));
  return SpawnLevel(std::move(level), stats);
}

absl::StatusOr<ReloadReport> World::Reload(std::vector<std::byte> blob) {
  STRATA_ASSIGN_OR_RETURN(EntityResource level, EntityResource::Create(std::move(blob)));
  return Reload(std::move(level));
}

absl::Span<const Entity> World::LevelEntities() const {
  return level_ == nullptr ? absl::Span<const Entity>() : absl::MakeConstSpan(level_->entities);
}

absl::StatusOr<ReloadReport> World::Reload(EntityResource level) {
  if (level_ == nullptr) {
    return absl::FailedPreconditionError("Reload: this world has no live level (spawn one with SpawnLevel)");
  }
  const EntityResourceView after = level.view();
  const EntityResourceView before = level_->resource->view();
  const absl::Span<const Entity> before_entities = level_->entities;

  // ---- Decide everything; nothing changes in this half. ----
  STRATA_ASSIGN_OR_RETURN(const EntityMatch match, MatchEntities(before, after));
  STRATA_ASSIGN_OR_RETURN(const PrefabTable prefabs, ReadPrefabTable(after));
  if (prefabs.delta) {
    return absl::FailedPreconditionError(
        "Reload: the blob is a delta save, not a level (spawn it, or reload the level it came from)");
  }
  STRATA_ASSIGN_OR_RETURN(const Layouts after_layouts, ReadLayouts(after));
  STRATA_ASSIGN_OR_RETURN(const Layouts before_layouts, ReadLayouts(before));
  std::vector<std::pair<uint32_t, absl::string_view>> name_texts;
  for (const ComponentTypeView& section : after.component_types()) {
    if (section.type != IdString32(kNameStringsSection)) continue;
    STRATA_ASSIGN_OR_RETURN(std::vector<absl::string_view> texts, ReadStringSection(section));
    for (size_t i = 0; i < texts.size(); ++i) {
      if (IdString32::Hash(texts[i]) == section.names[i]) name_texts.emplace_back(section.names[i], texts[i]);
    }
  }
  const uint32_t na = after.num_entities();
  // after_entities[k]: the entity of after entity k: a kept one's handle now, an added
  // one's once it is created (until then invalid: decoding only checks numbers).
  std::vector<Entity> after_entities(na);
  uint32_t num_added = 0;
  for (uint32_t k = 0; k < na; ++k) {
    const uint32_t j = match.before_of_after[k];
    if (j == kNone) {
      ++num_added;
    } else {
      after_entities[k] = before_entities[j];
    }
  }

  // Per type this world knows, in the after blob's (spawn) order, then the types only
  // the before blob has.
  std::vector<TypePatch> patches;
  auto start_patch = [&](IdString32 id) -> TypePatch* {
    const ComponentType* type = registry_->Find(id);
    if (type == nullptr) return nullptr;
    auto store = store_by_id_.find(id.value());
    if (store == store_by_id_.end()) return nullptr;
    TypePatch& p = patches.emplace_back();
    p.type = type;
    p.store = store->second;
    p.custom = type->storage() == ComponentStorage::kCustom;
    p.num_fields = p.custom ? 1 : std::max<size_t>(type->fields().size(), 1);
    p.mask_words = (p.num_fields + 31) / 32;
    return &p;
  };
  for (const ComponentTypeView& section : after.component_types()) {
    if (IsMetadataSection(section.type)) continue;
    TypePatch* p = start_patch(section.type);
    if (p == nullptr) continue;
    p->has_after = true;
    p->after = section;
    p->after_layout = LayoutOf(after_layouts, section.type);
  }
  for (const ComponentTypeView& section : before.component_types()) {
    if (IsMetadataSection(section.type)) continue;
    TypePatch* p = nullptr;
    for (TypePatch& q : patches) {
      if (q.type->id() == section.type) p = &q;
    }
    if (p == nullptr) p = start_patch(section.type);
    if (p == nullptr) continue;
    p->has_before = true;
    p->before = section;
  }
  for (TypePatch& p : patches) {
    const ComponentType& type = *p.type;
    if (p.has_after) {
      if (p.custom) {
        if (p.after.layout_fingerprint != type.fingerprint()) {
          return absl::FailedPreconditionError(absl::StrCat(
              "Reload: component type \"", type.name(), "\": the blob's layout differs from the declaration (\"",
              p.after_layout, "\", declared \"", type.layout(), "\")"));
        }
      } else {
        STRATA_ASSIGN_OR_RETURN(p.after_plan, PlanSpawn(type, BatchOf(p.after, after, after_entities, p.after_layout)));
      }
    }
    if (p.has_before && !p.custom) {
      // It spawned, so it plans (the declaration has not changed while the world ran).
      STRATA_ASSIGN_OR_RETURN(p.before_plan, PlanSpawn(type, BatchOf(p.before, before, before_entities,
                                                                     LayoutOf(before_layouts, p.before.type))));
    }
    DiffInstances(p, match);
    if (!p.writes.empty() && !p.store->writable()) {
      return absl::FailedPreconditionError(absl::StrCat(
          "Reload: component type \"", type.name(), "\" changed in the file, and its store cannot write fields"));
    }
    if (p.custom && p.after.instance_stride == 0 && (!p.writes.empty() || !p.adds.empty())) {
      return absl::FailedPreconditionError(absl::StrCat(
          "Reload: component type \"", type.name(), "\" has instances of varying size: it cannot be patched"));
    }
    // Everything a spawn of the changed instances would decode, decoded now.
    if (!p.custom) {
      for (const std::vector<uint32_t>* list : {&p.adds, &p.writes}) {
        if (list->empty()) continue;
        const Gathered g = Gather(p.after, *list);
        std::vector<std::byte> objects;
        const absl::Status decoded =
            DecodeInstances(type, p.after_plan, SubBatch(BatchOf(p.after, after, after_entities, p.after_layout), g),
                            &objects);
        if (!decoded.ok()) {
          return absl::Status(decoded.code(), absl::StrCat("Reload: component type \"", type.name(), "\": ",
                                                           decoded.message()));
        }
      }
    }
  }
  // Adds to kept entities the game destroyed, or that have the instance already (the
  // game gave it): skipped, as the game left them.
  ReloadReport report;
  for (TypePatch& p : patches) {
    std::vector<uint32_t> adds;
    for (const uint32_t a : p.adds) {
      const uint32_t k = p.after.entity_index[a];
      if (match.before_of_after[k] != kNone) {
        const Entity e = after_entities[k];
        if (!entities_->Alive(e) || p.store->manager().Lookup(e, p.after.name(a)).is_valid()) {
          ++report.skipped;
          continue;
        }
      }
      adds.push_back(a);
    }
    p.adds = std::move(adds);
  }

  // ---- Apply. Only the spawn of added instances can still fail (a store refusing
  // what it was not checked for): then what it added goes again. ----
  std::vector<Entity> created(num_added);
  entities_->CreateBatch(absl::MakeSpan(created));
  {
    size_t c = 0;
    for (uint32_t k = 0; k < na; ++k) {
      if (match.before_of_after[k] == kNone) after_entities[k] = created[c++];
    }
  }
  std::vector<std::pair<ComponentStore*, std::pair<Entity, uint32_t>>> added_to_kept;
  bool transforms_added = false;
  for (TypePatch& p : patches) {
    if (p.adds.empty()) continue;
    const Gathered g = Gather(p.after, p.adds);
    const ComponentSpawnBatch batch = SubBatch(BatchOf(p.after, after, after_entities, p.after_layout), g);
    absl::Status spawned = p.store->Spawn(batch);
    if (!spawned.ok()) {
      for (const auto& [store, instance] : added_to_kept) {
        store->manager().Destroy(instance.first, IdString32::FromValue(instance.second));
      }
      (void)entities_->DestroyBatch(created);
      (void)events_->Flush();
      return absl::Status(spawned.code(),
                          absl::StrCat("Reload: component type \"", p.type->name(), "\": ", spawned.message()));
    }
    for (size_t i = 0; i < g.entity_index.size(); ++i) {
      if (match.before_of_after[g.entity_index[i]] != kNone) {
        added_to_kept.push_back({p.store, {after_entities[g.entity_index[i]], g.names[i]}});
        ++report.components_added;
      }
    }
    if (p.store->typed() == transform_manager_.get()) transforms_added = true;
  }
  // An added transform whose nearest ancestor with one is an entity that was there
  // before: the batch could not link it (its parent was not in it), so link it here.
  if (transforms_added) {
    for (const TypePatch& p : patches) {
      if (p.store->typed() != transform_manager_.get() || p.adds.empty()) continue;
      std::vector<uint8_t> has(na, 0);  // 1: has a transform in the file; 2: just added
      for (uint32_t i = 0; i < p.after.num_instances; ++i) has[p.after.entity_index[i]] = 1;
      for (const uint32_t a : p.adds) has[p.after.entity_index[a]] = 2;
      const absl::Span<const uint32_t> parents = after.parent_index();
      // Each entity's nearest ancestor with a transform, in one pass in entity order
      // (parents first): walking up per add would be quadratic below a long chain.
      std::vector<uint32_t> nearest(na, kNoParent);
      for (uint32_t k = 0; k < na; ++k) {
        const uint32_t up = parents[k];
        if (up != kNoParent) nearest[k] = has[up] != 0 ? up : nearest[up];
      }
      for (const uint32_t a : p.adds) {
        const uint32_t k = p.after.entity_index[a];
        const uint32_t up = nearest[k];
        if (up == kNoParent || has[up] == 2) continue;  // a root, or linked by the batch
        const TransformHandle child = transforms_->Lookup(after_entities[k]);
        const TransformHandle parent = transforms_->Lookup(after_entities[up]);
        // A parent the game took away leaves the child a root. A cycle cannot form:
        // the child is new, so nothing is below it.
        if (child.is_valid() && parent.is_valid()) transforms_->Link(child, parent).IgnoreError();
      }
    }
  }
  // Writes, to the instances that still exist.
  std::map<std::string, uint32_t> written;
  for (TypePatch& p : patches) {
    if (p.writes.empty()) continue;
    std::vector<uint32_t> keep;
    std::vector<uint32_t> masks;
    for (size_t w = 0; w < p.writes.size(); ++w) {
      const uint32_t a = p.writes[w];
      const Entity e = after_entities[p.after.entity_index[a]];
      if (!entities_->Alive(e) || !p.store->manager().Lookup(e, p.after.name(a)).is_valid()) {
        ++report.skipped;
        continue;
      }
      keep.push_back(a);
      masks.insert(masks.end(), p.masks.begin() + w * p.mask_words, p.masks.begin() + (w + 1) * p.mask_words);
    }
    if (keep.empty()) continue;
    const Gathered g = Gather(p.after, keep);
    std::vector<Entity> owners(keep.size());
    for (size_t i = 0; i < keep.size(); ++i) owners[i] = after_entities[g.entity_index[i]];
    std::vector<std::byte> objects;
    if (p.custom) {
      objects = g.data;
    } else {
      // Decoded above with the same numbers: cannot fail now.
      STRATA_RETURN_IF_ERROR(DecodeInstances(*p.type, p.after_plan,
                                             SubBatch(BatchOf(p.after, after, after_entities, p.after_layout), g),
                                             &objects));
    }
    FieldWrites writes;
    writes.entities = owners;
    writes.names = g.names;
    writes.objects = objects;
    writes.masks = masks;
    writes.mask_words = p.mask_words;
    STRATA_ASSIGN_OR_RETURN(const size_t n, p.store->Write(writes));
    report.instances_written += static_cast<uint32_t>(n);
    for (size_t f = 0; f < p.num_fields; ++f) {
      uint32_t count = 0;
      for (size_t i = 0; i < keep.size(); ++i) count += writes.Writes(i, f) ? 1 : 0;
      if (count == 0) continue;
      written[FieldLabel(*p.type, f)] += count;
      report.fields_written += count;
    }
  }
  // Instances the file took from kept entities.
  for (const TypePatch& p : patches) {
    for (const uint32_t b : p.removes) {
      const Entity e = before_entities[p.before.entity_index[b]];
      if (entities_->Alive(e) && p.store->manager().Destroy(e, p.before.name(b))) {
        ++report.components_removed;
      } else {
        ++report.skipped;
      }
    }
  }
  // Entities the file removed (with what hangs below them, as World::Destroy).
  std::vector<Entity> removed;
  for (uint32_t j = 0; j < before.num_entities(); ++j) {
    if (match.after_of_before[j] != kNone) continue;
    ++report.entities_removed;
    if (entities_->Alive(before_entities[j])) removed.push_back(before_entities[j]);
  }
  if (!removed.empty()) STRATA_RETURN_IF_ERROR(DestroyBatch(removed));
  // Names of the added entities, name texts, prefabs.
  if (num_added > 0) {
    STRATA_ASSIGN_OR_RETURN(const std::vector<absl::string_view> names, EntityNames(after));
    for (uint32_t k = 0; k < na; ++k) {
      if (match.before_of_after[k] == kNone && !names[k].empty()) SetEntityName(after_entities[k], names[k]);
    }
  }
  for (const auto& [id, text] : name_texts) name_texts_.try_emplace(id, std::string(text));
  for (const PrefabTable::Prefab& prefab : prefabs.prefabs) {
    STRATA_RETURN_IF_ERROR(LoadPrefab(prefab.name, prefab.view));
  }
  // Where the level's entities came from and what the level overrides, as the file
  // says now (for delta saves).
  for (const Entity e : after_entities) level_overrides_.erase(e);
  RecordPrefabOrigins(prefabs, after_entities);
  report.entities_added = num_added;
  report.entities_kept = match.kept;
  report.written.assign(written.begin(), written.end());
  // The new blob is the live level now.
  level_->resource.emplace(std::move(level));
  level_->entities = std::move(after_entities);
  report.level_bytes = level_->resource->size() + level_->entities.size() * sizeof(Entity);
  SyncTransformMirror();
  STRATA_RETURN_IF_ERROR(events_->Flush());
  return report;
}

}  // namespace strata
