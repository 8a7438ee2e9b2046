// inspect: validates an entity resource blob and prints its header, entity count and
// per-component-type counts.
//
//   bazel run //resource:inspect -- level.entities
//
// Exit status 0 for a valid blob; 1 (with what is wrong on stderr) for a missing,
// truncated, corrupt, other-version or other-endian file; 2 on a usage error. It never
// reads outside the file: everything goes through EntityResourceView::Create first.
// A relative path is relative to the directory `bazel run` was started from
// (resource/tool_io.h).
#include <cstdio>
#include <cstring>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "resource/format.h"
#include "resource/metadata.h"
#include "resource/tool_io.h"

int main(int argc, char** argv) {
  if (argc != 2 || std::strncmp(argv[1], "--", 2) == 0) {
    std::fprintf(stderr, "usage: %s LEVEL.entities\n", argv[0]);
    return 2;
  }
  const std::string path = strata::ResolveToolPath(argv[1]);
  absl::StatusOr<std::vector<std::byte>> blob = strata::ReadToolFile(path);
  if (!blob.ok()) {
    std::fprintf(stderr, "inspect: %s\n", blob.status().ToString().c_str());
    return 1;
  }
  absl::StatusOr<strata::EntityResourceView> view = strata::EntityResourceView::Create(*blob);
  if (!view.ok()) {
    std::fprintf(stderr, "inspect: %s: invalid: %s\n", path.c_str(), view.status().ToString().c_str());
    return 1;
  }
  size_t roots = 0;
  for (uint32_t parent : view->parent_index()) roots += parent == strata::kNoParent;
  absl::PrintF("%s: valid entity resource\n", path);
  absl::PrintF("  format version   %u\n", strata::entity_resource_layout::kFormatVersion);
  absl::PrintF("  endianness       %s\n", strata::EndiannessName(strata::kNativeEndianness));
  absl::PrintF("  total size       %u bytes\n", blob->size());
  absl::PrintF("  entities         %u (%u roots, %u children)\n", view->num_entities(), roots,
               view->num_entities() - roots);
  absl::PrintF("  component types  %u (in spawn order)\n", view->num_component_types());
  absl::StatusOr<strata::ResourceMetadata> meta = strata::ReadResourceMetadata(*view);
  if (!meta.ok()) {
    std::fprintf(stderr, "inspect: %s: invalid: %s\n", path.c_str(), meta.status().ToString().c_str());
    return 1;
  }
  for (const strata::ComponentTypeView& type : view->component_types()) {
    // This tool knows no component type: a metadata section is named, a component
    // type shown by its id and declared layout (a game's inspect tool prints fields).
    std::string what = "";
    if (type.type == strata::IdString32(strata::kEntityNamesSection)) {
      what = "(entity names)";
    } else if (type.type == strata::IdString32(strata::kNameStringsSection)) {
      what = "(instance names)";
    } else if (type.type == strata::IdString32(strata::kLayoutsSection)) {
      what = "(layouts)";
    } else if (auto layout = meta->layouts.find(type.type.value()); layout != meta->layouts.end()) {
      what = absl::StrCat("layout ", layout->second);
    }
    absl::PrintF("    %s %-16s %8u instances  %s  %u data bytes\n", type.type.DebugString(),
                 what, type.num_instances,
                 type.instance_stride != 0 ? absl::StrFormat("%4u bytes each", type.instance_stride)
                                           : std::string("variable size  "),
                 type.data.size());
  }
  return 0;
}
