#include "testing/random.h"

#include <cstdlib>
#include <numeric>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace strata::testing {

uint64_t TestSeed() {
  const char* text = std::getenv("STRATA_TEST_SEED");
  uint64_t seed;
  if (text != nullptr && absl::SimpleAtoi(text, &seed)) return seed;
  if (text != nullptr && absl::SimpleHexAtoi(text, &seed)) return seed;
  return kDefaultTestSeed;
}

std::string Random::DescribeSeed() const {
  return absl::StrCat("seed=", seed_, " (rerun with STRATA_TEST_SEED=", seed_, ")");
}

uint64_t Random::UniformIndex(uint64_t n) {
  // Rejection sampling on the top bits: exact and platform independent.
  const uint64_t limit = ~uint64_t{0} - (~uint64_t{0} % n + 1) % n;
  uint64_t x;
  do {
    x = engine_();
  } while (x > limit);
  return x % n;
}

int64_t Random::UniformInt(int64_t lo, int64_t hi) {
  const uint64_t span = static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo);
  if (span == ~uint64_t{0}) return static_cast<int64_t>(engine_());
  return static_cast<int64_t>(static_cast<uint64_t>(lo) + UniformIndex(span + 1));
}

float Random::UniformFloat(float lo, float hi) {
  // 24 random bits: every value is exactly representable and < 1.
  const float unit = static_cast<float>(Next32() >> 8) * (1.0f / 16777216.0f);
  return lo + (hi - lo) * unit;
}

bool Random::Bernoulli(double p) {
  if (p <= 0.0) return false;
  if (p >= 1.0) return true;
  return static_cast<double>(engine_() >> 11) * (1.0 / 9007199254740992.0) < p;
}

std::vector<uint32_t> Random::Permutation(uint32_t n) {
  std::vector<uint32_t> result(n);
  std::iota(result.begin(), result.end(), 0u);
  Shuffle(absl::MakeSpan(result));
  return result;
}

}  // namespace strata::testing
