// Behaviour SparseStore<T> and ContiguousStore<T> share, as a typed test suite.
//
//   using Stores = ::testing::Types<SparseStore<entity_internal::Payload>>;
//   INSTANTIATE_TYPED_TEST_SUITE_P(Sparse, StoreConformance, Stores);
//
// Testonly. The random test compares the store with a naive model (a hash map from
// handle to value and state) after every operation.
#ifndef STRATA_ENTITY_INTERNAL_STORE_CONFORMANCE_TEST_H_
#define STRATA_ENTITY_INTERNAL_STORE_CONFORMANCE_TEST_H_

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "entity/store_handle.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/random.h"
#include "testing/status_matchers.h"

namespace strata::entity_internal {

// Payload: a stored value that owns heap memory (so ASan sees leaks and double
// destruction) and counts live instances (so tests see destructors run).
struct Payload {
  static inline int live = 0;

  explicit Payload(int v) : value(v), name(std::string(40, 'a' + v % 26)) { ++live; }
  Payload(const Payload& other) : value(other.value), name(other.name) { ++live; }
  Payload(Payload&& other) noexcept : value(other.value), name(std::move(other.name)) {
    ++live;
  }
  Payload& operator=(const Payload&) = default;
  Payload& operator=(Payload&&) noexcept = default;
  ~Payload() { --live; }

  int value;
  std::string name;
};

template <typename Store>
class StoreConformance : public ::testing::Test {
 protected:
  static typename Store::Options WithMaxGeneration(uint32_t max_generation) {
    typename Store::Options options;
    options.max_generation = max_generation;
    return options;
  }
  static std::vector<int> ActiveValues(const Store& store) {
    std::vector<int> values;
    store.ForEach([&](const Payload& p) { values.push_back(p.value); });
    return values;
  }
  void TearDown() override { EXPECT_EQ(Payload::live, 0) << "leaked or double-freed"; }
};

TYPED_TEST_SUITE_P(StoreConformance);

using ::strata::testing::IsOk;
using ::strata::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::UnorderedElementsAre;

TYPED_TEST_P(StoreConformance, EmptyStore) {
  TypeParam store(16);
  EXPECT_EQ(store.capacity(), 16u);
  EXPECT_EQ(store.size(), 0u);
  EXPECT_TRUE(store.empty());
  EXPECT_THAT(this->ActiveValues(store), IsEmpty());
  EXPECT_EQ(store.TryGet(StoreHandle()), nullptr);
  EXPECT_EQ(store.TryGet(StoreHandle(0, 0)), nullptr);  // never issued
  EXPECT_FALSE(store.Contains(StoreHandle(3, 0)));
  EXPECT_THAT(store.Remove(StoreHandle(0, 0)), StatusIs(absl::StatusCode::kNotFound));
  EXPECT_THAT(store.Activate(StoreHandle()), StatusIs(absl::StatusCode::kNotFound));
  EXPECT_FALSE(store.HandleOf(nullptr).is_valid());
  EXPECT_GE(store.MemoryUsage(), 16 * sizeof(Payload));
}

TYPED_TEST_P(StoreConformance, AddGetRemove) {
  TypeParam store(8);
  STRATA_ASSERT_OK_AND_ASSIGN(const StoreHandle a, store.Add(1));
  STRATA_ASSERT_OK_AND_ASSIGN(const StoreHandle b, store.Add(2));
  EXPECT_NE(a, b);
  ASSERT_NE(store.TryGet(a), nullptr);
  EXPECT_EQ(store.TryGet(a)->value, 1);
  EXPECT_EQ(store.TryGet(b)->value, 2);
  EXPECT_TRUE(store.IsActive(a));
  EXPECT_FALSE(store.IsPending(a));
  EXPECT_EQ(store.HandleOf(store.TryGet(b)), b);
  EXPECT_EQ(store.size(), 2u);
  EXPECT_THAT(this->ActiveValues(store), UnorderedElementsAre(1, 2));
  EXPECT_EQ(Payload::live, 2);

  ASSERT_THAT(store.Remove(a), IsOk());
  EXPECT_EQ(Payload::live, 1);
  EXPECT_EQ(store.TryGet(a), nullptr);
  EXPECT_FALSE(store.Contains(a));
  EXPECT_EQ(store.TryGet(b)->value, 2);
  EXPECT_THAT(this->ActiveValues(store), ElementsAre(2));
  EXPECT_THAT(store.Remove(a), StatusIs(absl::StatusCode::kNotFound));
  EXPECT_EQ(store.size(), 1u);
}

TYPED_TEST_P(StoreConformance, StaleHandlesAreRejectedEverywhere) {
  TypeParam store(1);
  STRATA_ASSERT_OK_AND_ASSIGN(const StoreHandle old, store.Add(1));
  ASSERT_THAT(store.Remove(old), IsOk());
  STRATA_ASSERT_OK_AND_ASSIGN(const StoreHandle reused, store.AddPending(2));
  EXPECT_EQ(reused.index(), old.index());
  EXPECT_EQ(reused.generation(), old.generation() + 1);
  const StoreHandle bad[] = {old, StoreHandle(), StoreHandle(1, 0),
                             StoreHandle(0, reused.generation() + 1),
                             StoreHandle(0, reused.generation() | 0x80000000u)};
  for (StoreHandle h : bad) {
    SCOPED_TRACE(h.DebugString());
    EXPECT_FALSE(store.Contains(h));
    EXPECT_FALSE(store.IsActive(h));
    EXPECT_FALSE(store.IsPending(h));
    EXPECT_EQ(store.TryGet(h), nullptr);
    EXPECT_EQ(std::as_const(store).TryGet(h), nullptr);
    EXPECT_THAT(store.Activate(h), StatusIs(absl::StatusCode::kNotFound));
    EXPECT_THAT(store.Remove(h), StatusIs(absl::StatusCode::kNotFound));
  }
  EXPECT_EQ(store.TryGet(reused)->value, 2);
  EXPECT_TRUE(store.IsPending(reused));
  EXPECT_EQ(store.size(), 1u);
}

TYPED_TEST_P(StoreConformance, FullStoreIsAnErrorAndChangesNothing) {
  TypeParam store(3);
  std::vector<StoreHandle> handles;
  for (int i = 0; i < 3; ++i) {
    STRATA_ASSERT_OK_AND_ASSIGN(StoreHandle h, i == 1 ? store.AddPending(i) : store.Add(i));
    handles.push_back(h);
  }
  EXPECT_THAT(store.Add(9), StatusIs(absl::StatusCode::kResourceExhausted));
  EXPECT_THAT(store.AddPending(9), StatusIs(absl::StatusCode::kResourceExhausted));
  EXPECT_EQ(store.size(), 3u);
  EXPECT_EQ(Payload::live, 3);
  EXPECT_THAT(this->ActiveValues(store), UnorderedElementsAre(0, 2));
  for (int i = 0; i < 3; ++i) EXPECT_EQ(store.TryGet(handles[i])->value, i);
  ASSERT_THAT(store.Remove(handles[1]), IsOk());
  EXPECT_THAT(store.Add(3), IsOk());

  TypeParam none(0);
  EXPECT_THAT(none.Add(1), StatusIs(absl::StatusCode::kResourceExhausted));
  EXPECT_THAT(this->ActiveValues(none), IsEmpty());
}

TYPED_TEST_P(StoreConformance, PendingEntriesAreInvisibleUntilActivated) {
  TypeParam store(8);
  STRATA_ASSERT_OK_AND_ASSIGN(const StoreHandle a, store.Add(1));
  STRATA_ASSERT_OK_AND_ASSIGN(const StoreHandle p, store.AddPending(2));
  STRATA_ASSERT_OK_AND_ASSIGN(const StoreHandle q, store.AddPending(3));
  STRATA_ASSERT_OK_AND_ASSIGN(const StoreHandle b, store.Add(4));
  EXPECT_THAT(this->ActiveValues(store), UnorderedElementsAre(1, 4));
  EXPECT_EQ(store.active_size(), 2u);
  EXPECT_EQ(store.pending_size(), 2u);
  EXPECT_TRUE(store.IsPending(p));
  // A pending entry is reachable by handle, to finish initialising it.
  ASSERT_NE(store.TryGet(q), nullptr);
  store.TryGet(q)->value = 30;

  ASSERT_THAT(store.Activate(q), IsOk());
  EXPECT_TRUE(store.IsActive(q));
  EXPECT_THAT(this->ActiveValues(store), UnorderedElementsAre(1, 4, 30));
  EXPECT_THAT(store.Activate(q), StatusIs(absl::StatusCode::kFailedPrecondition));
  EXPECT_THAT(store.Activate(a), StatusIs(absl::StatusCode::kFailedPrecondition));

  ASSERT_THAT(store.Remove(p), IsOk());  // removing a pending entry
  EXPECT_EQ(store.pending_size(), 0u);
  ASSERT_THAT(store.Remove(a), IsOk());
  EXPECT_THAT(this->ActiveValues(store), UnorderedElementsAre(4, 30));
  EXPECT_EQ(store.TryGet(b)->value, 4);
  EXPECT_EQ(store.TryGet(q)->value, 30);
}

TYPED_TEST_P(StoreConformance, FreedSlotsAreReusedFifo) {
  TypeParam store(4);
  STRATA_ASSERT_OK_AND_ASSIGN(const StoreHandle a, store.Add(0));
  STRATA_ASSERT_OK_AND_ASSIGN(const StoreHandle b, store.Add(1));
  EXPECT_EQ(a.index(), 0u);
  EXPECT_EQ(b.index(), 1u);
  ASSERT_THAT(store.Remove(a), IsOk());
  ASSERT_THAT(store.Remove(b), IsOk());
  // Never-used slots first, then the freed ones in the order they were freed.
  std::vector<StoreHandle> next;
  for (int i = 0; i < 4; ++i) {
    STRATA_ASSERT_OK_AND_ASSIGN(StoreHandle h, store.Add(i));
    next.push_back(h);
  }
  EXPECT_THAT(next, ElementsAre(StoreHandle(2, 0), StoreHandle(3, 0), StoreHandle(0, 1),
                                StoreHandle(1, 1)));
}

TYPED_TEST_P(StoreConformance, SlotIsRetiredWhenItsGenerationRunsOut) {
  TypeParam store(2, this->WithMaxGeneration(1));
  for (uint32_t generation = 0; generation <= 1; ++generation) {
    STRATA_ASSERT_OK_AND_ASSIGN(const StoreHandle h0, store.Add(0));
    STRATA_ASSERT_OK_AND_ASSIGN(const StoreHandle h1, store.Add(1));
    EXPECT_EQ(h0, StoreHandle(0, generation));
    EXPECT_EQ(h1, StoreHandle(1, generation));
    ASSERT_THAT(store.Remove(h0), IsOk());
    ASSERT_THAT(store.Remove(h1), IsOk());
  }
  EXPECT_EQ(store.retired_slots(), 2u);
  EXPECT_THAT(store.Add(5), StatusIs(absl::StatusCode::kResourceExhausted));
  EXPECT_THAT(store.AddPending(5), StatusIs(absl::StatusCode::kResourceExhausted));
  EXPECT_EQ(store.size(), 0u);
}

TYPED_TEST_P(StoreConformance, DestroysEveryEntryItHolds) {
  {
    TypeParam store(8);
    ASSERT_THAT(store.Add(1), IsOk());
    ASSERT_THAT(store.AddPending(2), IsOk());
    STRATA_ASSERT_OK_AND_ASSIGN(const StoreHandle h, store.Add(3));
    ASSERT_THAT(store.Remove(h), IsOk());
    EXPECT_EQ(Payload::live, 2);
  }
  EXPECT_EQ(Payload::live, 0);
}

TYPED_TEST_P(StoreConformance, ForEachCanPassHandles) {
  TypeParam store(8);
  for (int i = 0; i < 5; ++i) ASSERT_THAT(store.Add(i), IsOk());
  ASSERT_THAT(store.AddPending(99), IsOk());
  int visited = 0;
  store.ForEach([&](StoreHandle h, Payload& p) {
    ++visited;
    EXPECT_EQ(store.TryGet(h), &p);
    EXPECT_EQ(store.HandleOf(&p), h);
    p.value += 100;
  });
  EXPECT_EQ(visited, 5);
  std::as_const(store).ForEach([&](StoreHandle h, const Payload& p) {
    EXPECT_GE(p.value, 100);
    EXPECT_TRUE(store.IsActive(h));
  });
  // HandleOf rejects pointers that are not entries.
  const Payload outside(0);
  EXPECT_FALSE(store.HandleOf(&outside).is_valid());
}

// Changing a store inside its own (non-const) ForEach aborts in every build mode: the
// walk would go on over destroyed or moved entries. Lookups and nested walks are fine
// inside, and once the walk (outer one included) ends the store changes freely.
TYPED_TEST_P(StoreConformance, ChangingTheStoreInsideForEachAborts) {
  TypeParam store(8);
  ASSERT_THAT(store.Add(1), IsOk());
  const absl::StatusOr<StoreHandle> b = store.Add(2);
  const absl::StatusOr<StoreHandle> pending = store.AddPending(3);
  ASSERT_THAT(b, IsOk());
  ASSERT_THAT(pending, IsOk());
  EXPECT_DEATH(store.ForEach([&](Payload&) { store.Remove(*b).IgnoreError(); }),
               "Remove: called inside this store's ForEach");
  EXPECT_DEATH(store.ForEach([&](Payload&) { store.Add(9).IgnoreError(); }),
               "Add: called inside this store's ForEach");
  EXPECT_DEATH(store.ForEach([&](Payload&) { store.AddPending(9).IgnoreError(); }),
               "AddPending: called inside this store's ForEach");
  EXPECT_DEATH(
      store.ForEach([&](StoreHandle, Payload&) { store.Activate(*pending).IgnoreError(); }),
      "Activate: called inside this store's ForEach");
  // A nested walk leaves the outer one marked.
  EXPECT_DEATH(store.ForEach([&](Payload&) {
    store.ForEach([](Payload&) {});
    store.Remove(*b).IgnoreError();
  }),
               "Remove: called inside this store's ForEach");
  int inner = 0;
  store.ForEach([&](StoreHandle h, Payload& p) {
    EXPECT_EQ(store.TryGet(h), &p);
    EXPECT_TRUE(store.IsPending(*pending));
    store.ForEach([&](Payload&) { ++inner; });
  });
  EXPECT_EQ(inner, 4);
  ASSERT_THAT(store.Remove(*b), IsOk());
  ASSERT_THAT(store.Activate(*pending), IsOk());
  ASSERT_THAT(store.Add(4), IsOk());
  ASSERT_THAT(store.AddPending(5), IsOk());
  EXPECT_THAT(this->ActiveValues(store), UnorderedElementsAre(1, 3, 4));
}

TYPED_TEST_P(StoreConformance, MatchesNaiveModelOnRandomSequences) {
  ::strata::testing::Random rng(::strata::testing::TestSeed());
  SCOPED_TRACE(rng.DescribeSeed());
  struct Entry {
    int value;
    bool active;
  };
  for (int round = 0; round < 10; ++round) {
    const auto capacity = static_cast<uint32_t>(rng.UniformInt(0, 40));
    TypeParam store(capacity, this->WithMaxGeneration(static_cast<uint32_t>(rng.UniformInt(0, 4))));
    absl::flat_hash_map<StoreHandle, Entry> model;
    std::vector<StoreHandle> issued;
    int next_value = 0;
    for (int step = 0; step < 500; ++step) {
      SCOPED_TRACE(step);
      const int op = static_cast<int>(rng.UniformInt(0, 4));
      if (op <= 1) {
        const bool pending = op == 1;
        const int value = next_value++;
        auto h = pending ? store.AddPending(value) : store.Add(value);
        if (h.ok()) {
          ASSERT_FALSE(model.contains(*h));
          for (const auto& [live, entry] : model) ASSERT_NE(live.index(), h->index());
          model[*h] = {value, !pending};
          issued.push_back(*h);
        } else {
          ASSERT_THAT(h, StatusIs(absl::StatusCode::kResourceExhausted));
          ASSERT_EQ(model.size() + store.retired_slots(), capacity);
        }
      } else if (!issued.empty()) {
        const StoreHandle h = issued[rng.UniformIndex(issued.size())];
        auto it = model.find(h);
        if (op == 2) {
          const absl::Status s = store.Activate(h);
          if (it == model.end()) {
            ASSERT_THAT(s, StatusIs(absl::StatusCode::kNotFound));
          } else if (it->second.active) {
            ASSERT_THAT(s, StatusIs(absl::StatusCode::kFailedPrecondition));
          } else {
            ASSERT_THAT(s, IsOk());
            it->second.active = true;
          }
        } else {
          const absl::Status s = store.Remove(h);
          if (it == model.end()) {
            ASSERT_THAT(s, StatusIs(absl::StatusCode::kNotFound));
          } else {
            ASSERT_THAT(s, IsOk());
            model.erase(it);
          }
        }
      }
      // Full comparison after every step.
      ASSERT_EQ(store.size(), model.size());
      ASSERT_EQ(Payload::live, static_cast<int>(model.size()));
      size_t active = 0;
      for (const auto& [h, entry] : model) active += entry.active;
      ASSERT_EQ(store.active_size(), active);
      ASSERT_EQ(store.pending_size(), model.size() - active);
      absl::flat_hash_set<StoreHandle> seen;
      store.ForEach([&](StoreHandle h, Payload& p) {
        auto it = model.find(h);
        ASSERT_NE(it, model.end()) << h;
        EXPECT_TRUE(it->second.active) << h;
        EXPECT_EQ(it->second.value, p.value);
        EXPECT_TRUE(seen.insert(h).second) << "visited twice: " << h;
      });
      ASSERT_EQ(seen.size(), active);
      for (const StoreHandle h : issued) {
        auto it = model.find(h);
        const Payload* p = store.TryGet(h);
        if (it == model.end()) {
          ASSERT_EQ(p, nullptr) << h;
        } else {
          ASSERT_NE(p, nullptr) << h;
          ASSERT_EQ(p->value, it->second.value);
          ASSERT_EQ(store.IsActive(h), it->second.active);
          ASSERT_EQ(store.HandleOf(p), h);
        }
      }
    }
  }
}

TYPED_TEST_P(StoreConformance, MakeRejectsSizesAndOptionsTheHandleCannotHold) {
  using Store = TypeParam;
  using ::strata::testing::IsOk;
  using ::strata::testing::StatusIs;
  // The largest values it accepts.
  absl::StatusOr<std::unique_ptr<Store>> made =
      Store::Make(/*capacity=*/3, this->WithMaxGeneration(0x7FFFFFFFu));
  ASSERT_THAT(made.status(), IsOk());
  EXPECT_EQ((*made)->capacity(), 3u);
  ASSERT_THAT((*made)->Add(7).status(), IsOk());
  made = Store::Make(/*capacity=*/0);
  ASSERT_THAT(made.status(), IsOk());
  EXPECT_THAT((*made)->Add(1).status(), StatusIs(absl::StatusCode::kResourceExhausted));
  // One past them. (A capacity of 2^32 - 2 is accepted but would allocate ~100 GB.)
  EXPECT_THAT(Store::Make(/*capacity=*/0xFFFFFFFFu).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, ::testing::HasSubstr("capacity")));
  for (uint32_t bad : {0x80000000u, 0xFFFFFFFFu}) {
    EXPECT_THAT(Store::Make(4, this->WithMaxGeneration(bad)).status(),
                StatusIs(absl::StatusCode::kInvalidArgument,
                         ::testing::HasSubstr("max_generation")));
  }
}

// The constructors refuse the same values in every build mode (this runs under -c opt
// too), before allocating anything.
TYPED_TEST_P(StoreConformance, ConstructorAbortsOnSizesTheHandleCannotHold) {
  using Store = TypeParam;
  EXPECT_DEATH(Store store(0xFFFFFFFFu), "capacity");
  EXPECT_DEATH(Store store(4, this->WithMaxGeneration(0x80000000u)), "max_generation");
}

REGISTER_TYPED_TEST_SUITE_P(StoreConformance, EmptyStore, AddGetRemove,
                            StaleHandlesAreRejectedEverywhere, FullStoreIsAnErrorAndChangesNothing,
                            PendingEntriesAreInvisibleUntilActivated, FreedSlotsAreReusedFifo,
                            SlotIsRetiredWhenItsGenerationRunsOut, DestroysEveryEntryItHolds,
                            ForEachCanPassHandles, ChangingTheStoreInsideForEachAborts,
                            MatchesNaiveModelOnRandomSequences,
                            MakeRejectsSizesAndOptionsTheHandleCannotHold,
                            ConstructorAbortsOnSizesTheHandleCannotHold);

}  // namespace strata::entity_internal

#endif  // STRATA_ENTITY_INTERNAL_STORE_CONFORMANCE_TEST_H_
