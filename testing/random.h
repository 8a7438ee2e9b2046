// Seeded, deterministic random workloads for tests and benchmarks.
//
// The same seed gives the same sequence on every machine and standard library: the
// engine is std::mt19937_64 (its output is fixed by the C++ standard) and the range
// reductions below are our own, because std::uniform_int_distribution's are not fixed.
//
//   Random rng(TestSeed());              // STRATA_TEST_SEED overrides the default
//   SCOPED_TRACE(rng.DescribeSeed());     // failures print the seed to replay
//   int depth = rng.UniformInt(1, 11);    // inclusive range
//   if (rng.Bernoulli(0.1)) { ... }
//   rng.Shuffle(absl::MakeSpan(handles));
#ifndef STRATA_TESTING_RANDOM_H_
#define STRATA_TESTING_RANDOM_H_

#include <cstdint>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/types/span.h"

namespace strata::testing {

// kDefaultTestSeed: the seed used when STRATA_TEST_SEED is not set.
inline constexpr uint64_t kDefaultTestSeed = 0x5742A7A5EEDull;

// TestSeed: STRATA_TEST_SEED from the environment (decimal or 0x hex) if set and valid,
// otherwise kDefaultTestSeed.
uint64_t TestSeed();

// Random: a small deterministic generator. Not thread-safe; give each thread its own.
class Random {
 public:
  explicit Random(uint64_t seed) : seed_(seed), engine_(seed) {}

  uint64_t seed() const { return seed_; }
  // DescribeSeed: "seed=N (rerun with STRATA_TEST_SEED=N)", for SCOPED_TRACE.
  std::string DescribeSeed() const;

  // Next64: 64 uniformly random bits.
  uint64_t Next64() { return engine_(); }
  // Next32: 32 uniformly random bits.
  uint32_t Next32() { return static_cast<uint32_t>(engine_() >> 32); }

  // UniformInt: uniform in [lo, hi], inclusive; requires lo <= hi.
  int64_t UniformInt(int64_t lo, int64_t hi);
  // UniformIndex: uniform in [0, n); requires n > 0.
  uint64_t UniformIndex(uint64_t n);
  // UniformFloat: uniform in [lo, hi).
  float UniformFloat(float lo, float hi);
  // Bernoulli: true with probability p (clamped to [0, 1]).
  bool Bernoulli(double p);

  // Shuffle: Fisher-Yates, deterministic for a given seed.
  template <typename T>
  void Shuffle(absl::Span<T> items) {
    for (size_t i = items.size(); i > 1; --i) {
      std::swap(items[i - 1], items[UniformIndex(i)]);
    }
  }

  // Permutation: 0..n-1 in random order.
  std::vector<uint32_t> Permutation(uint32_t n);

 private:
  uint64_t seed_;
  std::mt19937_64 engine_;
};

}  // namespace strata::testing

#endif  // STRATA_TESTING_RANDOM_H_
