#include "resource/metadata.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "absl/base/internal/endian.h"
#include "absl/base/optimization.h"
#include "absl/strings/str_cat.h"
#include "base/check.h"
#include "resource/prefab.h"
#include "resource/strict_json.h"

namespace strata {
namespace {

const IdString32& EntityNamesId() {
  static const IdString32 id(kEntityNamesSection);
  return id;
}
const IdString32& NameStringsId() {
  static const IdString32 id(kNameStringsSection);
  return id;
}
const IdString32& LayoutsId() {
  static const IdString32 id(kLayoutsSection);
  return id;
}
const IdString32& PrefabsId() {
  static const IdString32 id(kPrefabsSection);
  return id;
}

}  // namespace

bool IsMetadataSection(IdString32 type) {
  return type == EntityNamesId() || type == NameStringsId() || type == LayoutsId() ||
         type == PrefabsId();
}

ComponentTypeContents MakeStringSection(IdString32 type, std::vector<uint32_t> entity_index,
                                        std::vector<uint32_t> names,
                                        absl::Span<const std::string> strings,
                                        Endianness endianness) {
  STRATA_CHECK(
      entity_index.size() == strings.size() && (names.empty() || names.size() == strings.size()),
      "MakeStringSection: entity_index, names and strings differ in size");
  ComponentTypeContents section;
  section.type = type;
  section.instance_stride = 0;
  section.entity_index = std::move(entity_index);
  if (names.empty()) {
    names.reserve(strings.size());
    for (const std::string& s : strings) names.push_back(IdString32::Hash(s));
  }
  section.names = std::move(names);
  size_t bytes = 0;
  for (const std::string& s : strings) bytes += s.size();
  section.data.resize(4 * strings.size() + bytes);
  std::byte* ends = section.data.data();
  std::byte* text = ends + 4 * strings.size();
  uint32_t end = 0;
  for (size_t i = 0; i < strings.size(); ++i) {
    std::memcpy(text + end, strings[i].data(), strings[i].size());
    end += static_cast<uint32_t>(strings[i].size());
    const uint32_t stored = endianness == kNativeEndianness ? end : absl::gbswap_32(end);
    std::memcpy(ends + 4 * i, &stored, 4);
  }
  return section;
}

void MetadataSections::AppendTo(std::vector<ComponentTypeContents>& sections, Endianness endianness) && {
  if (!named_entities.empty()) {
    sections.push_back(MakeStringSection(IdString32(kEntityNamesSection), std::move(named_entities), {},
                                         entity_names, endianness));
  }
  if (!name_texts.empty()) {
    std::sort(name_texts.begin(), name_texts.end());
    std::vector<std::string> texts;
    texts.reserve(name_texts.size());
    for (auto& [id, text] : name_texts) texts.push_back(std::move(text));
    sections.push_back(MakeStringSection(IdString32(kNameStringsSection), std::vector<uint32_t>(texts.size(), 0),
                                         {}, texts, endianness));
  }
  if (!layouts.empty()) {
    sections.push_back(MakeStringSection(IdString32(kLayoutsSection), std::vector<uint32_t>(layouts.size(), 0),
                                         std::move(layout_types), layouts, endianness));
  }
}

absl::StatusOr<std::vector<absl::string_view>> ReadStringSection(const ComponentTypeView& section) {
  auto corrupt = [&](absl::string_view what) {
    return absl::DataLossError(absl::StrCat("string section ", section.type.DebugString(),
                                            " at offset ", section.offset, ": ", what));
  };
  if (section.instance_stride != 0) return corrupt("stride is not 0");
  const uint64_t n = section.num_instances;
  if (section.data.size() < 4 * n) return corrupt("shorter than its end offsets");
  const size_t text_size = section.data.size() - 4 * n;
  const char* text = reinterpret_cast<const char*>(section.data.data()) + 4 * n;
  // Names and layouts are text that tools put in JSON and messages: a string that is
  // not UTF-8 could not be written as JSON. The strings are the text cut at their end
  // offsets, so each is UTF-8 exactly when the whole text is and no cut falls inside a
  // character (before a continuation byte): one pass over the text, one byte test per
  // string. A CheckUtf8 call per string cost 3.6 ns per name, 13 % of spawning 1M
  // named transforms. On failure the strings are checked one by one, to name the bad
  // one.
  const bool text_is_utf8 = CheckUtf8(absl::string_view(text, text_size)).ok();
  auto cuts_a_character = [&](uint32_t offset) {
    return offset < text_size && (static_cast<uint8_t>(text[offset]) & 0xC0) == 0x80;
  };
  std::vector<absl::string_view> strings;
  strings.reserve(n);
  uint32_t begin = 0;
  for (uint64_t i = 0; i < n; ++i) {
    uint32_t end;
    std::memcpy(&end, section.data.data() + 4 * i, 4);
    if (end < begin || end > text_size) {
      return corrupt(absl::StrCat("string ", i, " out of bounds"));
    }
    const absl::string_view s(text + begin, end - begin);
    if (ABSL_PREDICT_FALSE(!text_is_utf8 || cuts_a_character(end))) {
      if (absl::Status utf8 = CheckUtf8(s); !utf8.ok()) {
        return corrupt(absl::StrCat("string ", i, ": ", utf8.message()));
      }
    }
    strings.push_back(s);
    begin = end;
  }
  if (begin != text_size) return corrupt("bytes after the last string");
  return strings;
}

absl::string_view ResourceMetadata::EntityName(uint32_t k) const {
  auto it = entity_names.find(k);
  return it == entity_names.end() ? absl::string_view() : it->second;
}

const absl::string_view* ResourceMetadata::NameText(uint32_t id) const {
  auto it = names.find(id);
  return it == names.end() ? nullptr : &it->second;
}

absl::StatusOr<ResourceMetadata> ReadResourceMetadata(const EntityResourceView& view) {
  ResourceMetadata meta;
  for (const ComponentTypeView& section : view.component_types()) {
    // The prefab section is not a string section: resource/prefab.h reads it.
    if (!IsMetadataSection(section.type) || section.type == PrefabsId()) continue;
    absl::StatusOr<std::vector<absl::string_view>> strings = ReadStringSection(section);
    if (!strings.ok()) return strings.status();
    for (size_t i = 0; i < strings->size(); ++i) {
      const absl::string_view s = (*strings)[i];
      const uint32_t id = section.names[i];
      if (section.type == LayoutsId()) {
        meta.layouts[id] = s;
        continue;
      }
      if (IdString32::Hash(s) != id) {
        return absl::DataLossError(absl::StrCat("metadata section ", section.type.DebugString(),
                                                ": string ", i, " does not hash to its id"));
      }
      if (section.type == EntityNamesId()) {
        meta.entity_names[section.entity_index[i]] = s;
      } else {
        meta.names[id] = s;
      }
    }
  }
  return meta;
}

}  // namespace strata
