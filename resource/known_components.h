// The component types the command-line tools know: their compile functions (for
// //resource:compile) and names (so //resource:inspect can print "transform" beside the
// stored IdString32). Today: the transform (//transform:transform_resource). A package
// that owns a component adds its Register*Compiler call here to make the tools know it.
#ifndef STRATA_RESOURCE_KNOWN_COMPONENTS_H_
#define STRATA_RESOURCE_KNOWN_COMPONENTS_H_

#include "absl/status/status.h"
#include "index/id_string.h"
#include "resource/entity_compiler.h"

namespace strata {

// RegisterKnownComponentCompilers: registers every known compile function.
absl::Status RegisterKnownComponentCompilers(EntityCompiler& compiler);

// KnownComponentName: the type name whose IdString32 is `type`, or "(unknown)".
const char* KnownComponentName(IdString32 type);

}  // namespace strata

#endif  // STRATA_RESOURCE_KNOWN_COMPONENTS_H_
