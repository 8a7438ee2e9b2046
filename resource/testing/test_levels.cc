#include "resource/testing/test_levels.h"

#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "gtest/gtest.h"

namespace strata::testing {

absl::Status CompilePosition(const nlohmann::json& config, ComponentDataWriter& out) {
  STRATA_RETURN_IF_ERROR(CheckComponentKeys(config, {"position"}));
  float position[3] = {0, 0, 0};
  STRATA_RETURN_IF_ERROR(ReadFloats(config, "position", absl::MakeSpan(position)));
  for (float f : position) out.WriteF32(f);
  return absl::OkStatus();
}

void ExpectSameOutput(const absl::StatusOr<EntityCompiler::Result>& actual,
                      const absl::StatusOr<EntityCompiler::Result>& expected) {
  ASSERT_EQ(actual.ok(), expected.ok());
  if (!actual.ok()) return;
  EXPECT_EQ(actual->blob, expected->blob);
  EXPECT_EQ(actual->warnings, expected->warnings);
  EXPECT_EQ(actual->num_entities, expected->num_entities);
}

namespace {

// Variable size: a count, a label's bytes, a name.
absl::Status CompileLabelled(const nlohmann::json& config, ComponentDataWriter& out) {
  STRATA_RETURN_IF_ERROR(CheckComponentKeys(config, {"count", "label", "tag"}));
  uint32_t count = 0;
  std::string label, tag = "none";
  STRATA_RETURN_IF_ERROR(ReadUint32(config, "count", &count));
  STRATA_RETURN_IF_ERROR(ReadString(config, "label", &label));
  STRATA_RETURN_IF_ERROR(ReadString(config, "tag", &tag));
  out.WriteU32(count);
  out.WriteBytes(absl::MakeConstSpan(reinterpret_cast<const std::byte*>(label.data()), label.size()));
  out.WriteName(tag);
  return absl::OkStatus();
}

// An entity reference.
absl::Status CompileLink(const nlohmann::json& config, ComponentDataWriter& out) {
  STRATA_RETURN_IF_ERROR(CheckComponentKeys(config, {"to"}));
  std::string to;
  STRATA_RETURN_IF_ERROR(ReadString(config, "to", &to));
  out.WriteEntityRef("to", to);
  return absl::OkStatus();
}

}  // namespace

const EntityCompiler& TestLevelCompiler() {
  static const EntityCompiler* compiler = [] {
    auto* c = new EntityCompiler;
    if (!c->RegisterComponentCompiler("transform", CompilePosition, 0, 12).ok() ||
        !c->RegisterComponentCompiler("labelled", CompileLabelled, 10).ok() ||
        !c->RegisterComponentCompiler("link", CompileLink, 20, 4).ok()) {
      std::abort();
    }
    return c;
  }();
  return *compiler;
}

void RandomEntity(Random& random, int depth, int* budget, std::string* out) {
  std::vector<std::string> fields;
  if (random.Bernoulli(0.7)) fields.push_back(absl::StrCat("\"name\": \"e", random.UniformInt(0, 40), "\""));
  if (random.Bernoulli(0.9)) {
    std::string components = "\"components\": [";
    const int n = static_cast<int>(random.UniformInt(0, 4));
    for (int c = 0; c < n; ++c) {
      absl::StrAppend(&components, c ? ", " : "");
      switch (random.UniformInt(0, 3)) {
        case 0:
          absl::StrAppend(&components, "{\"type\": \"transform\", \"name\": \"t", c, "\", \"position\": [",
                          random.UniformInt(-5, 5), ", ", random.UniformFloat(-1, 1), ", 1e", random.UniformInt(-3, 3), "]}");
          break;
        case 1:
          absl::StrAppend(&components, "{\"label\": \"x", std::string(random.UniformInt(0, 20), 'y'),
                          "\\u00e9\", \"name\": \"l", c, "\", \"type\": \"labelled\", \"count\": ",
                          random.UniformInt(0, 100000), random.Bernoulli(0.3) ? ", \"tag\": \"red\"" : "", "}");
          break;
        case 2:
          absl::StrAppend(&components, "{\"type\": \"link\", \"name\": \"k", c, "\", \"to\": \"#",
                          random.UniformInt(0, 3), "\"}");
          break;
        default:
          absl::StrAppend(&components, "{\"type\": \"unknown", random.UniformInt(0, 2), "\", \"name\": \"u", c, "\"}");
      }
    }
    fields.push_back(components + "]");
  }
  if (depth < 6 && *budget > 0 && random.Bernoulli(0.5)) {
    std::string children = "\"children\": [";
    const int n = static_cast<int>(random.UniformInt(1, 3));
    for (int c = 0; c < n && *budget > 0; ++c) {
      --*budget;
      absl::StrAppend(&children, c ? ", " : "");
      RandomEntity(random, depth + 1, budget, &children);
    }
    fields.push_back(children + "]");
  }
  for (size_t i = fields.size(); i > 1; --i) std::swap(fields[i - 1], fields[random.UniformIndex(i)]);
  absl::StrAppend(out, "{", absl::StrJoin(fields, ", "), "}");
}

std::string RandomLevel(Random& random, int max_roots, int max_entities) {
  int budget = static_cast<int>(random.UniformInt(0, max_entities));
  std::string level = "{\"entities\": [";
  const int roots = static_cast<int>(random.UniformInt(0, max_roots));
  for (int r = 0; r < roots; ++r) {
    absl::StrAppend(&level, r ? ",\n" : "\n");
    RandomEntity(random, 0, &budget, &level);
  }
  level += "]}";
  return level;
}

}  // namespace strata::testing
