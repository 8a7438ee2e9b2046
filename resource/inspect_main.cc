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
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "resource/format.h"
#include "resource/metadata.h"
#include "resource/tool_commands.h"

namespace {

// The listing of a tool that knows no component type: counts, and each section by its
// type id and declared layout (a game's inspect tool prints fields by name).
absl::StatusOr<std::string> DescribeSections(const strata::EntityResourceView& view) {
  absl::StatusOr<strata::ResourceMetadata> meta = strata::ReadResourceMetadata(view);
  if (!meta.ok()) return meta.status();
  size_t roots = 0;
  for (uint32_t parent : view.parent_index()) roots += parent == strata::kNoParent;
  std::string out = absl::StrFormat("  entities         %u (%u roots, %u children)\n", view.num_entities(),
                                    roots, view.num_entities() - roots);
  absl::StrAppendFormat(&out, "  component types  %u (in spawn order)\n", view.num_component_types());
  for (const strata::ComponentTypeView& type : view.component_types()) {
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
    absl::StrAppendFormat(&out, "    %s %-16s %8u instances  %s  %u data bytes\n", type.type.DebugString(), what,
                          type.num_instances,
                          type.instance_stride != 0 ? absl::StrFormat("%4u bytes each", type.instance_stride)
                                                    : std::string("variable size  "),
                          type.data.size());
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  return strata::RunInspectCommand({.describe = DescribeSections, .export_json = nullptr}, argc, argv);
}
