#include "resource/prefab.h"

#include <cstring>
#include <utility>

#include "absl/base/internal/endian.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "resource/strict_json.h"

namespace strata {

bool FieldUnderKey(absl::string_view field, absl::string_view key) {
  if (field.size() < key.size() || field.substr(0, key.size()) != key) return false;
  return field.size() == key.size() || field[key.size()] == '.' || field[key.size()] == '[';
}

namespace {

constexpr size_t kHeaderWords = 8;
constexpr size_t kPrefabWords = 4;
constexpr size_t kEntityWords = 3;
constexpr size_t kOverrideWords = 6;
constexpr uint32_t kDeltaFlag = 1;

class WordWriter {
 public:
  WordWriter(std::vector<std::byte>* out, Endianness endianness)
      : out_(out), swap_(endianness != kNativeEndianness) {}
  void Put(uint32_t v) {
    if (swap_) v = absl::gbswap_32(v);
    const size_t at = out_->size();
    out_->resize(at + 4);
    std::memcpy(out_->data() + at, &v, 4);
  }

 private:
  std::vector<std::byte>* out_;
  bool swap_;
};

uint64_t AlignUp(uint64_t n) { return entity_resource_layout::AlignUp(n); }

// NoEntities: a view of a resource without entities (what a prefab named by name only
// has for a view).
EntityResourceView NoEntities() {
  // NOTE: std::vector's storage is 16-byte aligned (operator new), as a view requires.
  static const std::vector<std::byte>* const blob =
      new std::vector<std::byte>(*WriteEntityResource(EntityResourceContents()));
  static const EntityResourceView view = *EntityResourceView::Create(*blob);
  return view;
}

}  // namespace

ComponentTypeContents MakePrefabSection(absl::Span<const PrefabDefinition> prefabs,
                                        absl::Span<const PrefabEntityRecord> entities,
                                        absl::Span<const PrefabOverrideRecord> overrides,
                                        Endianness endianness, bool delta) {
  ComponentTypeContents section;
  section.type = IdString32(kPrefabsSection);
  section.instance_stride = 0;
  std::vector<std::byte>& data = section.data;
  WordWriter out(&data, endianness);
  uint32_t mask_words = 0;
  for (const PrefabOverrideRecord& r : overrides) mask_words += static_cast<uint32_t>(r.mask.size());
  uint32_t string_bytes = 0;
  for (const PrefabDefinition& p : prefabs) string_bytes += static_cast<uint32_t>(p.name.size());
  for (uint32_t v : {kPrefabSectionVersion, static_cast<uint32_t>(prefabs.size()),
                     static_cast<uint32_t>(entities.size()), static_cast<uint32_t>(overrides.size()),
                     mask_words, string_bytes, delta ? kDeltaFlag : 0u, 0u}) {
    out.Put(v);
  }
  const uint64_t tables = 4 * (kHeaderWords + kPrefabWords * prefabs.size() +
                               kEntityWords * entities.size() + kOverrideWords * overrides.size() +
                               mask_words);
  uint64_t blob_at = AlignUp(tables + string_bytes);
  uint32_t name_end = 0;
  for (const PrefabDefinition& p : prefabs) {
    name_end += static_cast<uint32_t>(p.name.size());
    out.Put(name_end);
    out.Put(static_cast<uint32_t>(blob_at));
    out.Put(static_cast<uint32_t>(p.blob.size()));
    out.Put(0);
    blob_at = AlignUp(blob_at + p.blob.size());
  }
  for (const PrefabEntityRecord& r : entities) {
    out.Put(r.entity);
    out.Put(r.prefab);
    out.Put(r.node);
  }
  uint32_t mask_begin = 0;
  for (const PrefabOverrideRecord& r : overrides) {
    for (uint32_t v : {r.type, r.entity, r.name, mask_begin, static_cast<uint32_t>(r.mask.size()),
                       r.value_diff ? 3u : r.removed ? 2u : r.added ? 1u : 0u}) {
      out.Put(v);
    }
    mask_begin += static_cast<uint32_t>(r.mask.size());
  }
  for (const PrefabOverrideRecord& r : overrides) {
    for (uint32_t word : r.mask) out.Put(word);
  }
  for (const PrefabDefinition& p : prefabs) {
    const auto* bytes = reinterpret_cast<const std::byte*>(p.name.data());
    data.insert(data.end(), bytes, bytes + p.name.size());
  }
  for (const PrefabDefinition& p : prefabs) {
    data.resize(AlignUp(data.size()));
    data.insert(data.end(), p.blob.begin(), p.blob.end());
  }
  data.resize(AlignUp(data.size()));
  return section;
}

int PrefabTable::Find(absl::string_view name) const {
  for (size_t p = 0; p < prefabs.size(); ++p) {
    if (prefabs[p].name == name) return static_cast<int>(p);
  }
  return -1;
}

absl::StatusOr<PrefabTable> ReadPrefabTable(const EntityResourceView& view) {
  PrefabTable table;
  const IdString32 prefabs_id(kPrefabsSection);
  const ComponentTypeView* found = nullptr;
  ComponentTypeView section;
  for (const ComponentTypeView& s : view.component_types()) {
    if (s.type == prefabs_id) {
      section = s;
      found = &section;
      break;
    }
  }
  if (found == nullptr) return table;
  auto corrupt = [&](absl::string_view what) {
    return absl::DataLossError(
        absl::StrCat("prefab section at offset ", section.offset, ": ", what));
  };
  if (section.instance_stride != 0 || section.num_instances != 0) {
    return corrupt("expected no instances and stride 0");
  }
  const absl::Span<const std::byte> data = section.data;
  const uint64_t size = data.size();
  auto word = [&](uint64_t i) {
    uint32_t v;
    std::memcpy(&v, data.data() + 4 * i, 4);
    return v;  // validated views are in this machine's byte order
  };
  if (size < 4 * kHeaderWords) return corrupt("shorter than its header");
  if (word(0) != kPrefabSectionVersion) {
    return corrupt(absl::StrCat("version ", word(0), ", this build reads ", kPrefabSectionVersion));
  }
  const uint64_t num_prefabs = word(1), num_entities = word(2), num_overrides = word(3),
                 num_mask_words = word(4), string_bytes = word(5);
  if (word(6) > kDeltaFlag) return corrupt(absl::StrCat("unknown flags ", word(6)));
  if (word(7) != 0) return corrupt("reserved header word is not 0");
  table.delta = word(6) == kDeltaFlag;
  // Every count is below 2^32, so these sums cannot overflow 64 bits.
  const uint64_t prefabs_at = kHeaderWords;
  const uint64_t entities_at = prefabs_at + kPrefabWords * num_prefabs;
  const uint64_t overrides_at = entities_at + kEntityWords * num_entities;
  const uint64_t masks_at = overrides_at + kOverrideWords * num_overrides;
  const uint64_t strings_at = 4 * (masks_at + num_mask_words);
  if (strings_at + string_bytes > size) {
    return corrupt(absl::StrCat("its counts need ", strings_at + string_bytes, " bytes, it has ", size));
  }
  if (num_prefabs == 0) return corrupt("no prefabs");
  // Prefabs: names, then blobs at the offsets the sizes imply.
  uint64_t name_begin = 0;
  uint64_t blob_at = AlignUp(strings_at + string_bytes);
  absl::flat_hash_set<absl::string_view> names;
  table.prefabs.reserve(num_prefabs);
  for (uint64_t p = 0; p < num_prefabs; ++p) {
    const uint64_t at = prefabs_at + kPrefabWords * p;
    const uint64_t name_end = word(at), offset = word(at + 1), blob_size = word(at + 2);
    if (word(at + 3) != 0) return corrupt(absl::StrCat("prefab ", p, ": reserved word is not 0"));
    if (name_end < name_begin || name_end > string_bytes) {
      return corrupt(absl::StrCat("prefab ", p, ": name out of bounds"));
    }
    const absl::string_view name(reinterpret_cast<const char*>(data.data()) + strings_at + name_begin,
                                 name_end - name_begin);
    name_begin = name_end;
    if (name.empty()) return corrupt(absl::StrCat("prefab ", p, ": empty name"));
    if (absl::Status utf8 = CheckUtf8(name); !utf8.ok()) {
      return corrupt(absl::StrCat("prefab ", p, ": name: ", utf8.message()));
    }
    if (!names.insert(name).second) return corrupt(absl::StrCat("prefab ", p, ": name repeated"));
    if (offset != blob_at || blob_size > size - std::min(size, offset)) {
      return corrupt(absl::StrCat("prefab ", p, ": blob at ", offset, " (", blob_size,
                                  " bytes) out of place"));
    }
    if (blob_size == 0) {
      if (!table.delta) return corrupt(absl::StrCat("prefab ", p, ": no blob"));
      table.prefabs.push_back(PrefabTable::Prefab{name, NoEntities(), /*by_name=*/true});
      continue;  // blob_at stays
    }
    absl::StatusOr<EntityResourceView> nested =
        EntityResourceView::Create(data.subspan(offset, blob_size));
    if (!nested.ok()) {
      return corrupt(absl::StrCat("prefab ", p, ": ", nested.status().message()));
    }
    if (nested->num_entities() == 0) return corrupt(absl::StrCat("prefab ", p, ": no entities"));
    for (const ComponentTypeView& s : nested->component_types()) {
      if (s.type == prefabs_id) return corrupt(absl::StrCat("prefab ", p, ": has prefabs of its own"));
    }
    table.prefabs.push_back(PrefabTable::Prefab{name, *nested});
    blob_at = AlignUp(offset + blob_size);
  }
  if (name_begin != string_bytes) return corrupt("bytes after the last prefab name");
  if (blob_at != size) return corrupt("bytes after the last prefab blob");
  table.entities.reserve(num_entities);
  for (uint64_t i = 0; i < num_entities; ++i) {
    const uint64_t at = entities_at + kEntityWords * i;
    PrefabEntityRecord r{word(at), word(at + 1), word(at + 2)};
    if (r.entity >= view.num_entities() || r.prefab >= num_prefabs ||
        (!table.prefabs[r.prefab].by_name && r.node >= table.prefabs[r.prefab].view.num_entities())) {
      return corrupt(absl::StrCat("entity record ", i, " out of range"));
    }
    if (!table.entities.empty() && r.entity <= table.entities.back().entity) {
      return corrupt(absl::StrCat("entity record ", i, " out of order"));
    }
    table.entities.push_back(r);
  }
  uint64_t mask_begin = 0;
  table.overrides.reserve(num_overrides);
  for (uint64_t i = 0; i < num_overrides; ++i) {
    const uint64_t at = overrides_at + kOverrideWords * i;
    PrefabOverrideRecord r;
    r.type = word(at);
    r.entity = word(at + 1);
    r.name = word(at + 2);
    const uint64_t begin = word(at + 3), words = word(at + 4), flags = word(at + 5);
    if (r.entity >= view.num_entities() || begin != mask_begin || words > num_mask_words - begin ||
        flags > 3 || (flags >= 2 && !table.delta) || (flags == 2 && words != 0)) {
      return corrupt(absl::StrCat("override record ", i, " out of range"));
    }
    r.added = flags == 1;
    r.removed = flags == 2;
    r.value_diff = flags == 3;
    r.mask.reserve(words);
    for (uint64_t w = 0; w < words; ++w) r.mask.push_back(word(masks_at + begin + w));
    mask_begin += words;
    table.overrides.push_back(std::move(r));
  }
  if (mask_begin != num_mask_words) return corrupt("mask words no record uses");
  return table;
}

}  // namespace strata
