#include "entity/generation_table.h"

#include <cstdint>
#include <deque>
#include <utility>
#include <vector>

#include "absl/types/span.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/random.h"
#include "testing/status_matchers.h"

namespace strata {
namespace {

using ::strata::testing::IsOk;
using ::strata::testing::StatusIs;
using ::testing::HasSubstr;

GenerationTable::Options Opts(uint32_t min_free, uint32_t max_generation = 0x7FFFFFFFu,
                              uint32_t max_slots = GenerationTable::kMaxSlots) {
  GenerationTable::Options options;
  options.min_free_indices = min_free;
  options.max_generation = max_generation;
  options.max_slots = max_slots;
  return options;
}

struct Handle {
  uint32_t i, g;
  uint32_t index() const { return i; }
  uint32_t generation() const { return g; }
  bool operator==(const Handle& o) const { return i == o.i && g == o.g; }
};

Handle Acquire(GenerationTable& table) {
  Handle h{0xFFFFFFFFu, 0xFFFFFFFFu};
  EXPECT_TRUE(table.Acquire(&h.i, &h.g));
  return h;
}

TEST(GenerationTable, StartsEmpty) {
  GenerationTable table;
  EXPECT_EQ(table.size(), 0u);
  EXPECT_EQ(table.live(), 0u);
  EXPECT_EQ(table.free_slots(), 0u);
  EXPECT_EQ(table.retired_slots(), 0u);
  EXPECT_EQ(table.available(), size_t{GenerationTable::kMaxSlots});
  EXPECT_FALSE(table.Contains(0, 0));
  EXPECT_FALSE(table.in_use(0));
  EXPECT_FALSE(table.in_use(0xFFFFFFFFu));
}

TEST(GenerationTable, OneSlotLifecycle) {
  GenerationTable table(Opts(/*min_free=*/0));
  const Handle h = Acquire(table);
  EXPECT_EQ(h, (Handle{0, 0}));
  EXPECT_TRUE(table.Contains(0, 0));
  EXPECT_TRUE(table.in_use(0));
  EXPECT_EQ(table.generation(0), 0u);
  EXPECT_EQ(table.live(), 1u);
  table.Release(0);
  EXPECT_FALSE(table.Contains(0, 0));
  EXPECT_FALSE(table.in_use(0));
  EXPECT_FALSE(table.Contains(0, 1));  // the next generation is not issued yet
  EXPECT_EQ(table.live(), 0u);
  EXPECT_EQ(table.free_slots(), 1u);
  // min_free 0: the freed slot comes back at the next generation.
  EXPECT_EQ(Acquire(table), (Handle{0, 1}));
  EXPECT_TRUE(table.Contains(0, 1));
  EXPECT_FALSE(table.Contains(0, 0));  // the stale handle stays stale
}

TEST(GenerationTable, ForgedFreeMarkedGenerationNeverMatches) {
  GenerationTable table(Opts(/*min_free=*/0));
  Acquire(table);
  table.Release(0);
  // The free slot's word is 1 | kFreeBit; a handle carrying it must not match.
  EXPECT_FALSE(table.Contains(0, 1u | GenerationTable::kFreeBit));
}

TEST(GenerationTable, ManyFreshSlotsAreDenseAtGenerationZero) {
  GenerationTable table;
  constexpr uint32_t kCount = 100000;
  for (uint32_t i = 0; i < kCount; ++i) ASSERT_EQ(Acquire(table), (Handle{i, 0}));
  EXPECT_EQ(table.size(), kCount);
  EXPECT_EQ(table.live(), kCount);
  for (uint32_t i = 0; i < kCount; ++i) ASSERT_TRUE(table.Contains(i, 0));
  EXPECT_FALSE(table.Contains(kCount, 0));
}

TEST(GenerationTable, ReuseIsDelayedByMinFreeIndices) {
  GenerationTable table(Opts(/*min_free=*/3));
  std::vector<Handle> hs;
  for (int i = 0; i < 5; ++i) hs.push_back(Acquire(table));
  table.Release(hs[0].i);
  table.Release(hs[1].i);
  table.Release(hs[2].i);
  // Three wait, not more than min_free: the table grows instead.
  EXPECT_EQ(Acquire(table), (Handle{5, 0}));
  table.Release(hs[3].i);
  // Four wait: the front (slot 0, released first) is reused.
  EXPECT_EQ(Acquire(table), (Handle{0, 1}));
  EXPECT_EQ(Acquire(table), (Handle{6, 0}));
}

TEST(GenerationTable, ReusesInFifoOrder) {
  GenerationTable table(Opts(/*min_free=*/0));
  std::vector<Handle> hs;
  for (int i = 0; i < 8; ++i) hs.push_back(Acquire(table));
  const uint32_t order[] = {5, 2, 7, 0, 3};
  for (uint32_t i : order) table.Release(i);
  for (uint32_t i : order) EXPECT_EQ(Acquire(table), (Handle{i, 1}));
  EXPECT_EQ(Acquire(table), (Handle{8, 0}));
}

TEST(GenerationTable, RetiresASlotInsteadOfWrappingItsGeneration) {
  GenerationTable table(Opts(/*min_free=*/0, /*max_generation=*/2));
  Handle h = Acquire(table);
  for (uint32_t g = 0; g < 2; ++g) {
    ASSERT_EQ(h, (Handle{0, g}));
    table.Release(0);
    h = Acquire(table);
  }
  ASSERT_EQ(h, (Handle{0, 2}));
  table.Release(0);  // at max_generation: retired
  EXPECT_EQ(table.retired_slots(), 1u);
  EXPECT_EQ(table.free_slots(), 0u);
  for (uint32_t g = 0; g <= 3; ++g) EXPECT_FALSE(table.Contains(0, g));
  // Never reissued: the next slot is fresh.
  EXPECT_EQ(Acquire(table), (Handle{1, 0}));
  EXPECT_EQ(table.live(), 1u);
}

TEST(GenerationTable, MaxGenerationZeroRetiresOnFirstRelease) {
  GenerationTable table(Opts(/*min_free=*/0, /*max_generation=*/0));
  Acquire(table);
  Acquire(table);
  const Handle batch[] = {{0, 0}, {1, 0}};
  EXPECT_EQ(table.ReleaseBatch(absl::MakeConstSpan(batch)), 2u);
  EXPECT_EQ(table.retired_slots(), 2u);
  EXPECT_EQ(table.free_slots(), 0u);
  EXPECT_EQ(Acquire(table), (Handle{2, 0}));
}

TEST(GenerationTable, FixedCapacityUsesEverySlotOnceThenReusesFifo) {
  // The stores' configuration: min_free = max_slots = capacity.
  GenerationTable table(Opts(/*min_free=*/4, 0x7FFFFFFFu, /*max_slots=*/4));
  table.Reserve(4);
  const size_t memory = table.MemoryUsage();
  Acquire(table);
  table.Release(0);
  EXPECT_EQ(Acquire(table), (Handle{1, 0}));  // fresh slots first
  EXPECT_EQ(Acquire(table), (Handle{2, 0}));
  EXPECT_EQ(Acquire(table), (Handle{3, 0}));
  EXPECT_EQ(table.available(), 1u);
  EXPECT_EQ(Acquire(table), (Handle{0, 1}));  // at max_slots the queue gives way
  EXPECT_EQ(table.available(), 0u);
  uint32_t index = 77, generation = 77;
  EXPECT_FALSE(table.Acquire(&index, &generation));
  EXPECT_EQ(index, 77u);  // nothing changed
  EXPECT_EQ(table.live(), 4u);
  table.Release(2);
  table.Release(1);
  EXPECT_EQ(Acquire(table), (Handle{2, 1}));
  EXPECT_EQ(Acquire(table), (Handle{1, 1}));
  EXPECT_EQ(table.MemoryUsage(), memory);  // Reserve covered everything
}

TEST(GenerationTable, EmptyCapacityHandsOutNothing) {
  GenerationTable table(Opts(/*min_free=*/0, 0x7FFFFFFFu, /*max_slots=*/0));
  uint32_t index, generation;
  EXPECT_FALSE(table.Acquire(&index, &generation));
  EXPECT_TRUE(table.AcquireBatch(0, [](size_t, uint32_t, uint32_t) { FAIL(); }));
  EXPECT_FALSE(table.AcquireBatch(1, [](size_t, uint32_t, uint32_t) { FAIL(); }));
  EXPECT_EQ(table.ReleaseBatch(absl::Span<const Handle>()), 0u);
  EXPECT_EQ(table.size(), 0u);
}

TEST(GenerationTable, AcquireBatchMatchesRepeatedAcquire) {
  ::strata::testing::Random random(::strata::testing::TestSeed());
  SCOPED_TRACE(random.DescribeSeed());
  for (int round = 0; round < 50; ++round) {
    const uint32_t min_free = static_cast<uint32_t>(random.UniformInt(0, 6));
    const uint32_t max_slots = static_cast<uint32_t>(random.UniformInt(0, 40));
    GenerationTable batched(Opts(min_free, 3, max_slots));
    GenerationTable single(Opts(min_free, 3, max_slots));
    std::vector<Handle> live;
    for (int step = 0; step < 60; ++step) {
      if (!live.empty() && random.UniformInt(0, 2) == 0) {
        const size_t k = random.UniformIndex(live.size());
        batched.Release(live[k].i);
        single.Release(live[k].i);
        live[k] = live.back();
        live.pop_back();
        continue;
      }
      const size_t n = static_cast<size_t>(random.UniformInt(0, 8));
      std::vector<Handle> got(n, Handle{0xFFFFFFFFu, 0});
      const bool ok = batched.AcquireBatch(
          n, [&](size_t k, uint32_t i, uint32_t g) { got[k] = Handle{i, g}; });
      ASSERT_EQ(ok, n <= single.available());
      if (!ok) continue;
      for (size_t k = 0; k < n; ++k) {
        ASSERT_EQ(got[k], Acquire(single)) << "round " << round << " step " << step;
        live.push_back(got[k]);
      }
      ASSERT_EQ(batched.size(), single.size());
      ASSERT_EQ(batched.free_slots(), single.free_slots());
    }
  }
}

TEST(GenerationTable, ReleaseBatchIsAllOrNothing) {
  GenerationTable table(Opts(/*min_free=*/0));
  for (int i = 0; i < 4; ++i) Acquire(table);
  table.Release(3);
  const Handle stale[] = {{0, 0}, {1, 0}, {3, 0}};
  EXPECT_EQ(table.ReleaseBatch(absl::MakeConstSpan(stale)), 2u);
  const Handle repeated[] = {{0, 0}, {1, 0}, {0, 0}};
  EXPECT_EQ(table.ReleaseBatch(absl::MakeConstSpan(repeated)), 2u);
  const Handle unknown[] = {{9, 0}};
  EXPECT_EQ(table.ReleaseBatch(absl::MakeConstSpan(unknown)), 0u);
  EXPECT_TRUE(table.Contains(0, 0));
  EXPECT_TRUE(table.Contains(1, 0));
  EXPECT_EQ(table.free_slots(), 1u);
  const Handle good[] = {{1, 0}, {0, 0}};
  EXPECT_EQ(table.ReleaseBatch(absl::MakeConstSpan(good)), 2u);
  // FIFO: 3 (released first), then the batch in order.
  EXPECT_EQ(Acquire(table), (Handle{3, 1}));
  EXPECT_EQ(Acquire(table), (Handle{1, 1}));
  EXPECT_EQ(Acquire(table), (Handle{0, 1}));
}

// The documented policy written the obvious way, as the oracle.
class NaiveTable {
 public:
  explicit NaiveTable(GenerationTable::Options o) : o_(o) {}
  bool Acquire(Handle* h) {
    if (free_.size() > o_.min_free_indices || (gen_.size() >= o_.max_slots && !free_.empty())) {
      const uint32_t i = free_.front();
      free_.pop_front();
      live_[i] = true;
      *h = {i, gen_[i]};
      return true;
    }
    if (gen_.size() >= o_.max_slots) return false;
    gen_.push_back(0);
    live_.push_back(true);
    *h = {static_cast<uint32_t>(gen_.size() - 1), 0};
    return true;
  }
  void Release(uint32_t i) {
    live_[i] = false;
    if (gen_[i] >= o_.max_generation) return;
    ++gen_[i];
    free_.push_back(i);
  }
  bool Contains(Handle h) const {
    return h.i < gen_.size() && live_[h.i] && gen_[h.i] == h.g;
  }

 private:
  GenerationTable::Options o_;
  std::vector<uint32_t> gen_;
  std::vector<bool> live_;
  std::deque<uint32_t> free_;
};

TEST(GenerationTable, MatchesNaiveModelUnderRandomChurn) {
  ::strata::testing::Random random(::strata::testing::TestSeed() + 1);
  SCOPED_TRACE(random.DescribeSeed());
  const GenerationTable::Options options = Opts(/*min_free=*/5, /*max_generation=*/4,
                                                /*max_slots=*/64);
  GenerationTable table(options);
  NaiveTable model(options);
  std::vector<Handle> live, dead;
  for (int step = 0; step < 20000; ++step) {
    if (!live.empty() && random.Bernoulli(0.5)) {
      const size_t k = random.UniformIndex(live.size());
      table.Release(live[k].i);
      model.Release(live[k].i);
      dead.push_back(live[k]);
      live[k] = live.back();
      live.pop_back();
    } else {
      Handle expected, got;
      const bool ok = model.Acquire(&expected);
      ASSERT_EQ(table.Acquire(&got.i, &got.g), ok) << "step " << step;
      if (ok) {
        ASSERT_EQ(got, expected) << "step " << step;
        live.push_back(got);
      }
    }
    if (step % 97 == 0) {
      for (const Handle& h : live) ASSERT_TRUE(table.Contains(h.i, h.g));
      for (const Handle& h : dead) ASSERT_EQ(table.Contains(h.i, h.g), model.Contains(h));
    }
  }
  EXPECT_GT(table.retired_slots(), 0u);  // the run reached retirement
}

TEST(GenerationTable, ValidateRejectsWhatAHandleCannotHold) {
  EXPECT_THAT(Opts(0).Validate("T"), IsOk());
  EXPECT_THAT(Opts(0, GenerationTable::kMaxGeneration, GenerationTable::kMaxSlots).Validate("T"),
              IsOk());
  EXPECT_THAT(Opts(0, GenerationTable::kMaxGeneration + 1).Validate("T"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("max_generation")));
  EXPECT_THAT(Opts(0, 0xFFFFFFFFu).Validate("T"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("T: ")));
  EXPECT_THAT(Opts(0, 1, 0xFFFFFFFFu).Validate("T"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("capacity")));
}

TEST(GenerationTableDeathTest, ConstructorAbortsOnInvalidOptions) {
  EXPECT_DEATH(GenerationTable t(Opts(0, 0x80000000u)), "max_generation");
  EXPECT_DEATH(GenerationTable t(Opts(0, 1, 0xFFFFFFFFu)), "capacity");
}

// Release and generation take a slot the caller holds: one out of range, free or
// retired aborts in every build mode (this test also runs under -c opt), before any
// write: Release would write past the table or count a free slot twice.
TEST(GenerationTableDeathTest, SlotsNotInUseAbort) {
  GenerationTable table(Opts(0, /*max_generation=*/1));
  const Handle a = Acquire(table);
  const Handle b = Acquire(table);
  table.Release(b.i);  // free
  EXPECT_DEATH(table.Release(2), "Release: the slot is not in use");
  EXPECT_DEATH(table.Release(0xFFFFFFFFu), "Release: the slot is not in use");
  EXPECT_DEATH(table.Release(b.i), "Release: the slot is not in use");
  EXPECT_DEATH(table.generation(2), "generation: the slot is not in use");
  EXPECT_DEATH(table.generation(b.i), "generation: the slot is not in use");
  EXPECT_EQ(table.generation(a.i), 0u);
  table.Release(a.i);
  const Handle again = Acquire(table);  // slot 1 or 0 at generation 1
  EXPECT_EQ(again.g, 1u);
  table.Release(again.i);  // retired at max_generation
  EXPECT_EQ(table.retired_slots(), 1u);
  EXPECT_DEATH(table.Release(again.i), "Release: the slot is not in use");
  EXPECT_EQ(table.live(), 0u);
  EXPECT_EQ(table.free_slots(), 1u);
}

TEST(GenerationTable, LargestBatchesChurnAMillionSlots) {
  // The sizes the benchmarks use: a million slots, released and reacquired as batches,
  // with the default reuse delay.
  constexpr uint32_t kCount = 1 << 20;
  GenerationTable table;
  std::vector<Handle> hs(kCount);
  ASSERT_TRUE(table.AcquireBatch(
      kCount, [&](size_t k, uint32_t i, uint32_t g) { hs[k] = Handle{i, g}; }));
  for (uint32_t k = 0; k < kCount; ++k) ASSERT_EQ(hs[k], (Handle{k, 0}));
  ASSERT_EQ(table.ReleaseBatch(absl::MakeConstSpan(hs)), size_t{kCount});
  EXPECT_EQ(table.free_slots(), kCount);
  EXPECT_EQ(table.live(), 0u);
  std::vector<Handle> again(kCount);
  ASSERT_TRUE(table.AcquireBatch(
      kCount, [&](size_t k, uint32_t i, uint32_t g) { again[k] = Handle{i, g}; }));
  // All but the last min_free_indices come from the queue in release order, at
  // generation 1; the rest are fresh.
  const uint32_t reused = kCount - table.options().min_free_indices;
  for (uint32_t k = 0; k < reused; ++k) ASSERT_EQ(again[k], (Handle{k, 1}));
  for (uint32_t k = reused; k < kCount; ++k) {
    ASSERT_EQ(again[k], (Handle{kCount + (k - reused), 0}));
  }
  for (uint32_t k = 0; k < reused; ++k) ASSERT_FALSE(table.Contains(k, 0));
  EXPECT_EQ(table.size(), size_t{kCount} + table.options().min_free_indices);
  EXPECT_EQ(table.free_slots(), table.options().min_free_indices);
}

TEST(GenerationTable, LargestMaxGenerationIsAccepted) {
  // The top generation stays below the free bit, so every issued one is matchable.
  GenerationTable table(Opts(/*min_free=*/0, GenerationTable::kMaxGeneration));
  const Handle h = Acquire(table);
  EXPECT_TRUE(table.Contains(h.i, h.g));
  EXPECT_FALSE(table.Contains(h.i, GenerationTable::kMaxGeneration));
  EXPECT_FALSE(table.Contains(h.i, GenerationTable::kFreeBit));
}

}  // namespace
}  // namespace strata
