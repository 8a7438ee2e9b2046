// The half of //transform:transform_properties that talks to the property system.
// It must not include transform/matrix.h (see transform_properties.h's NOTE).
#include "transform/transform_properties.h"

#include <cmath>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "index/property_system.h"

namespace strata {
namespace {

absl::Status Gone() {
  return absl::NotFoundError("transform: the instance no longer exists");
}

struct Parts {
  float position[3];
  float rotation[4];
  float scale[3];
};

// The local matrix's parts, or identity parts when it cannot be read (the property
// system only calls getters for instances Lookup just returned, so this is a
// non-decomposable local matrix set through TransformComponent directly).
Parts ReadParts(const TransformComponentManager& m, Instance i) {
  Parts p = {{0, 0, 0}, {0, 0, 0, 1}, {1, 1, 1}};
  Parts read;
  if (m.LocalParts(i, read.position, read.rotation, read.scale)) p = read;
  return p;
}

bool AllFinite(std::initializer_list<float> v) {
  for (float f : v) {
    if (!std::isfinite(f)) return false;
  }
  return true;
}

// Edits one part of the local matrix and writes it back. A local matrix that does not
// decompose is an error rather than silently replaced.
template <typename Edit>
absl::Status EditParts(TransformComponentManager& m, Instance i, Edit edit) {
  Parts p;
  if (!m.LocalParts(i, p.position, p.rotation, p.scale)) {
    float world[16];
    if (!m.WorldMatrix(i, world)) return Gone();
    return absl::FailedPreconditionError(
        "transform: the local matrix has a zero scale or is not affine, so its parts "
        "cannot be edited one by one");
  }
  edit(p);
  if (!m.SetLocalParts(i, p.position, p.rotation, p.scale)) return Gone();
  return absl::OkStatus();
}

}  // namespace

absl::Status DescribeTransformProperties(PropertySystem& properties,
                                         TransformComponentManager& manager) {
  TransformComponentManager* m = &manager;
  std::vector<PropertyDescriptor> p;
  p.push_back(PropertyDescriptor::Make<Vector3>(
      "local_position",
      [m](Instance i) {
        const Parts parts = ReadParts(*m, i);
        return Vector3{parts.position[0], parts.position[1], parts.position[2]};
      },
      [m](Instance i, const Vector3& v) -> absl::Status {
        if (!AllFinite({v.x, v.y, v.z})) {
          return absl::InvalidArgumentError("transform local_position must be finite");
        }
        return EditParts(*m, i, [&v](Parts& parts) {
          parts.position[0] = v.x;
          parts.position[1] = v.y;
          parts.position[2] = v.z;
        });
      }));
  p.push_back(PropertyDescriptor::Make<Vector4>(
      "local_rotation",
      [m](Instance i) {
        const Parts parts = ReadParts(*m, i);
        return Vector4{parts.rotation[0], parts.rotation[1], parts.rotation[2],
                       parts.rotation[3]};
      },
      [m](Instance i, const Vector4& q) -> absl::Status {
        const float norm2 = q.x * q.x + q.y * q.y + q.z * q.z + q.w * q.w;
        if (!AllFinite({q.x, q.y, q.z, q.w}) || !(norm2 > 0.0f) || !std::isfinite(norm2)) {
          return absl::InvalidArgumentError(
              "transform local_rotation must be a finite, non-zero quaternion (x, y, z, w)");
        }
        return EditParts(*m, i, [&q](Parts& parts) {
          parts.rotation[0] = q.x;
          parts.rotation[1] = q.y;
          parts.rotation[2] = q.z;
          parts.rotation[3] = q.w;
        });
      }));
  p.push_back(PropertyDescriptor::Make<Vector3>(
      "local_scale",
      [m](Instance i) {
        const Parts parts = ReadParts(*m, i);
        return Vector3{parts.scale[0], parts.scale[1], parts.scale[2]};
      },
      [m](Instance i, const Vector3& v) -> absl::Status {
        if (!AllFinite({v.x, v.y, v.z}) || v.x == 0.0f || v.y == 0.0f || v.z == 0.0f) {
          return absl::InvalidArgumentError(
              "transform local_scale must be finite and non-zero in every axis");
        }
        return EditParts(*m, i, [&v](Parts& parts) {
          parts.scale[0] = v.x;
          parts.scale[1] = v.y;
          parts.scale[2] = v.z;
        });
      }));
  p.push_back(PropertyDescriptor::Make<Matrix4x4>("world", [m](Instance i) {
    Matrix4x4 world;
    float f[16] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1};
    m->WorldMatrix(i, f);
    std::memcpy(world.m.data(), f, sizeof(f));
    return world;
  }));
  return properties.Describe(&manager, std::move(p));
}

}  // namespace strata
