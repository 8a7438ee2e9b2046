#include "engine/transform_resource_functions.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/types/span.h"

#include "base/status_macros.h"
#include "transform/matrix.h"

namespace strata {
namespace {

absl::Status CheckFinite(absl::string_view key, absl::Span<const float> v) {
  for (float f : v) {
    if (!std::isfinite(f)) {
      return absl::InvalidArgumentError(absl::StrCat("\"", key, "\": must be finite"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status CompileTransform(const nlohmann::json& config, ComponentDataWriter& out) {
  STRATA_RETURN_IF_ERROR(CheckComponentKeys(config, {"position", "rotation", "scale"}));
  float position[3] = {0, 0, 0};
  float rotation[4] = {0, 0, 0, 1};
  float scale[3] = {1, 1, 1};
  STRATA_RETURN_IF_ERROR(ReadFloats(config, "position", absl::MakeSpan(position)));
  STRATA_RETURN_IF_ERROR(CheckFinite("position", position));
  STRATA_RETURN_IF_ERROR(ReadFloats(config, "rotation", absl::MakeSpan(rotation)));
  STRATA_RETURN_IF_ERROR(CheckFinite("rotation", rotation));
  if (rotation[0] == 0 && rotation[1] == 0 && rotation[2] == 0 && rotation[3] == 0) {
    return absl::InvalidArgumentError("\"rotation\": the zero quaternion is not a rotation");
  }
  STRATA_RETURN_IF_ERROR(ReadFloats(config, "scale", absl::MakeSpan(scale)));
  STRATA_RETURN_IF_ERROR(CheckFinite("scale", scale));
  if (scale[0] == 0 || scale[1] == 0 || scale[2] == 0) {
    return absl::InvalidArgumentError("\"scale\": must be non-zero in every axis");
  }
  const Matrix4x4 local = Matrix4x4::Compose(
      Vector3{position[0], position[1], position[2]},
      Quaternion{rotation[0], rotation[1], rotation[2], rotation[3]},
      Vector3{scale[0], scale[1], scale[2]});
  for (float f : local.m) out.WriteF32(f);
  return absl::OkStatus();
}

}  // namespace strata
