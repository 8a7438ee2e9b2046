#include "resource/known_components.h"

#include "transform/transform_resource.h"

namespace strata {

absl::Status RegisterKnownComponentCompilers(EntityCompiler& compiler) {
  return RegisterTransformCompiler(compiler);
}

const char* KnownComponentName(IdString32 type) {
  if (type == IdString32(kTransformTypeName)) return kTransformTypeName;
  return "(unknown)";
}

}  // namespace strata
