#include "engine/sample_components.h"

#include <cmath>
#include <string>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "index/property_system.h"

namespace strata {
namespace {

// The optional "name" must be the type name: the page store holds one per entity.
absl::Status CheckName(const nlohmann::json& config, absl::string_view type_name) {
  std::string name(type_name);
  STRATA_RETURN_IF_ERROR(ReadString(config, "name", &name));
  if (name != type_name) {
    return absl::InvalidArgumentError(absl::StrCat("\"name\": a ", type_name,
                                                   " is always named \"", type_name,
                                                   "\" (one per entity), got \"", name, "\""));
  }
  return absl::OkStatus();
}

absl::Status CheckFinite(absl::string_view key, absl::Span<const float> v) {
  for (float f : v) {
    if (!std::isfinite(f)) {
      return absl::InvalidArgumentError(absl::StrCat("\"", key, "\": must be finite"));
    }
  }
  return absl::OkStatus();
}

void WriteFloats(absl::Span<const float> v, ComponentDataWriter& out) {
  for (float f : v) out.WriteF32(f);
}

absl::Status NonNegative(absl::string_view what, float v) {
  if (!std::isfinite(v) || v < 0.0f) {
    return absl::InvalidArgumentError(absl::StrCat(what, " must be finite and >= 0, got ", v));
  }
  return absl::OkStatus();
}

// The compile functions' form of NonNegative: names the JSON key.
absl::Status CheckNonNegative(absl::string_view key, float v) {
  return NonNegative(absl::StrCat("\"", key, "\":"), v);
}

Vector3 ToVector3(const float* f) { return Vector3{f[0], f[1], f[2]}; }
Vector4 ToVector4(const float* f) { return Vector4{f[0], f[1], f[2], f[3]}; }
void FromVector3(const Vector3& v, float* f) {
  f[0] = v.x;
  f[1] = v.y;
  f[2] = v.z;
}
void FromVector4(const Vector4& v, float* f) {
  f[0] = v.x;
  f[1] = v.y;
  f[2] = v.z;
  f[3] = v.w;
}

}  // namespace

absl::Status CompileSprite(const nlohmann::json& config, ComponentDataWriter& out) {
  STRATA_RETURN_IF_ERROR(CheckComponentKeys(config, {"position", "size", "color"}));
  STRATA_RETURN_IF_ERROR(CheckName(config, kSpriteTypeName));
  Sprite s;
  STRATA_RETURN_IF_ERROR(ReadFloats(config, "position", absl::MakeSpan(s.position)));
  STRATA_RETURN_IF_ERROR(CheckFinite("position", s.position));
  STRATA_RETURN_IF_ERROR(ReadFloat(config, "size", &s.size));
  STRATA_RETURN_IF_ERROR(CheckNonNegative("size", s.size));
  STRATA_RETURN_IF_ERROR(ReadFloats(config, "color", absl::MakeSpan(s.color)));
  STRATA_RETURN_IF_ERROR(CheckFinite("color", s.color));
  WriteFloats(s.position, out);
  out.WriteF32(s.size);
  WriteFloats(s.color, out);
  return absl::OkStatus();
}

absl::Status CompileSpark(const nlohmann::json& config, ComponentDataWriter& out) {
  STRATA_RETURN_IF_ERROR(CheckComponentKeys(config, {"velocity", "lifetime"}));
  STRATA_RETURN_IF_ERROR(CheckName(config, kSparkTypeName));
  Spark s;
  STRATA_RETURN_IF_ERROR(ReadFloats(config, "velocity", absl::MakeSpan(s.velocity)));
  STRATA_RETURN_IF_ERROR(CheckFinite("velocity", s.velocity));
  STRATA_RETURN_IF_ERROR(ReadFloat(config, "lifetime", &s.lifetime));
  STRATA_RETURN_IF_ERROR(CheckNonNegative("lifetime", s.lifetime));
  s.max_lifetime = s.lifetime;
  WriteFloats(s.velocity, out);
  out.WriteF32(s.lifetime);
  out.WriteF32(s.max_lifetime);
  return absl::OkStatus();
}

absl::Status CompileSparkEmitter(const nlohmann::json& config, ComponentDataWriter& out) {
  STRATA_RETURN_IF_ERROR(
      CheckComponentKeys(config, {"speed", "spread", "lifetime", "color"}));
  STRATA_RETURN_IF_ERROR(CheckName(config, kSparkEmitterTypeName));
  SparkEmitter e;
  STRATA_RETURN_IF_ERROR(ReadFloat(config, "speed", &e.speed));
  STRATA_RETURN_IF_ERROR(CheckNonNegative("speed", e.speed));
  STRATA_RETURN_IF_ERROR(ReadFloat(config, "spread", &e.spread));
  STRATA_RETURN_IF_ERROR(CheckNonNegative("spread", e.spread));
  STRATA_RETURN_IF_ERROR(ReadFloat(config, "lifetime", &e.lifetime));
  STRATA_RETURN_IF_ERROR(CheckNonNegative("lifetime", e.lifetime));
  STRATA_RETURN_IF_ERROR(ReadFloats(config, "color", absl::MakeSpan(e.color)));
  STRATA_RETURN_IF_ERROR(CheckFinite("color", e.color));
  out.WriteF32(e.speed);
  out.WriteF32(e.spread);
  out.WriteF32(e.lifetime);
  WriteFloats(e.color, out);
  return absl::OkStatus();
}

std::vector<PropertyDescriptor> DescribeSpriteProperties(SpriteManager& sprites) {
  SpriteManager* m = &sprites;
  std::vector<PropertyDescriptor> p;
  p.push_back(PropertyDescriptor::Make<Vector3>(
      "position", [m](Instance i) { return ToVector3(m->Get(i).position); },
      [m](Instance i, const Vector3& v) { FromVector3(v, m->Get(i).position); }));
  p.push_back(PropertyDescriptor::Make<float>(
      "size", [m](Instance i) { return m->Get(i).size; },
      [m](Instance i, float v) -> absl::Status {
        STRATA_RETURN_IF_ERROR(NonNegative("sprite size", v));
        m->Get(i).size = v;
        return absl::OkStatus();
      }));
  p.push_back(PropertyDescriptor::Make<Vector4>(
      "color", [m](Instance i) { return ToVector4(m->Get(i).color); },
      [m](Instance i, const Vector4& v) { FromVector4(v, m->Get(i).color); }));
  return p;
}

std::vector<PropertyDescriptor> DescribeSparkProperties(SparkManager& sparks) {
  SparkManager* m = &sparks;
  std::vector<PropertyDescriptor> p;
  p.push_back(PropertyDescriptor::Make<Vector3>(
      "velocity", [m](Instance i) { return ToVector3(m->Get(i).velocity); },
      [m](Instance i, const Vector3& v) { FromVector3(v, m->Get(i).velocity); }));
  p.push_back(PropertyDescriptor::Make<float>(
      "lifetime", [m](Instance i) { return m->Get(i).lifetime; },
      [m](Instance i, float v) -> absl::Status {
        STRATA_RETURN_IF_ERROR(NonNegative("spark lifetime", v));
        m->Get(i).lifetime = v;
        return absl::OkStatus();
      }));
  p.push_back(PropertyDescriptor::Make<float>(
      "max_lifetime", [m](Instance i) { return m->Get(i).max_lifetime; }));
  return p;
}

std::vector<PropertyDescriptor> DescribeSparkEmitterProperties(SparkEmitterManager& emitters) {
  SparkEmitterManager* m = &emitters;
  std::vector<PropertyDescriptor> p;
  auto non_negative = [m](const char* name, float SparkEmitter::*field) {
    return PropertyDescriptor::Make<float>(
        name, [m, field](Instance i) { return m->Get(i).*field; },
        [m, field, name](Instance i, float v) -> absl::Status {
          STRATA_RETURN_IF_ERROR(NonNegative(absl::StrCat("spark_emitter ", name), v));
          m->Get(i).*field = v;
          return absl::OkStatus();
        });
  };
  p.push_back(non_negative("speed", &SparkEmitter::speed));
  p.push_back(non_negative("spread", &SparkEmitter::spread));
  p.push_back(non_negative("lifetime", &SparkEmitter::lifetime));
  p.push_back(PropertyDescriptor::Make<Vector4>(
      "color", [m](Instance i) { return ToVector4(m->Get(i).color); },
      [m](Instance i, const Vector4& v) { FromVector4(v, m->Get(i).color); }));
  return p;
}

}  // namespace strata
