#include "resource/testing/level_generator.h"

#include "absl/strings/str_cat.h"

namespace strata::testing {
namespace {

std::string GridTransformLevel(size_t n, bool named) {
  std::string json = "{\"entities\": [\n";
  json.reserve((named ? 85 : 70) * n + 32);
  for (size_t i = 0; i < n; ++i) {
    absl::StrAppend(&json, i == 0 ? "" : ",\n", "{");
    if (named) absl::StrAppend(&json, "\"name\": \"entity_", i, "\", ");
    // Positions on a grid with a half-unit step: a mix of integers and decimals.
    absl::StrAppend(&json, "\"components\": [{\"type\": \"transform\", \"position\": [", i % 1000,
                    ".5, 0, ", -static_cast<int64_t>(i / 1000), "]}]}");
  }
  absl::StrAppend(&json, "\n]}\n");
  return json;
}

}  // namespace

std::string TransformLevel(size_t n) { return GridTransformLevel(n, /*named=*/false); }

std::string NamedTransformLevel(size_t n) { return GridTransformLevel(n, /*named=*/true); }

absl::StatusOr<std::string> RepeatedLevel(absl::string_view level, size_t copies) {
  const size_t open = level.find('[');
  const size_t close = level.rfind(']');
  if (open == absl::string_view::npos || close == absl::string_view::npos || close < open ||
      level.substr(0, open).find("\"entities\"") == absl::string_view::npos) {
    return absl::InvalidArgumentError("expected a level {\"entities\": [...]}");
  }
  const absl::string_view entities = level.substr(open + 1, close - open - 1);
  std::string json = "{\"entities\": [";
  json.reserve(entities.size() * copies + 32);
  for (size_t c = 0; c < copies; ++c) absl::StrAppend(&json, c == 0 ? "" : ",", entities);
  absl::StrAppend(&json, "]}\n");
  return json;
}

}  // namespace strata::testing
