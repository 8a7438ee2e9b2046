// The floors of //iteration:filter_benchmark: the store's work done on plain arrays,
// the lower bounds its rows are read against (the list of rows is at the top of
// filter_benchmark.cc, which registers these beside the store's cases).
//
// *Flat floors: the ideal layout for data keyed by entity index, flat arrays indexed
// by the entity index with no pages, masks or pointers, and the match list given in
// advance. Nothing that keeps components at their entity's index can touch less
// memory, so these bound what BM_Query and RandomGet can reach here.
// *Packed floors: plain arrays holding only the matches, as an archetype table does.
#include <bit>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "benchmark/benchmark.h"
#include "entity/entity.h"
#include "iteration/filter_benchmark.h"
#include "iteration/testing/test_components.h"
#include "testing/random.h"

namespace strata::filter_benchmark {

using ::strata::testing::MovingWorld;
using ::strata::testing::Position;
using ::strata::testing::Velocity;

namespace {

// The matched indices of a query case, ascending, drawn as BM_Query draws them.
std::vector<uint32_t> FloorMatches(size_t n, double fraction) {
  testing::Random rng(kSeed);
  std::vector<uint32_t> matches;
  for (uint32_t i = 0; i < n; ++i) {
    if (rng.Bernoulli(fraction)) matches.push_back(i);
  }
  return matches;
}

// BM_Floor/{Sparse10,Exclude50}Flat/N: position += velocity over the matched indices.
void BM_FloorQuery(benchmark::State& state, size_t n, double fraction) {
  std::vector<Position> positions(n, Position{0, 0, 0});
  std::vector<Velocity> velocities(n, Velocity{1, 2, 3});
  const std::vector<uint32_t> matches = FloorMatches(n, fraction);
  for (auto _ : state) {
    Position* p = positions.data();
    const Velocity* v = velocities.data();
    for (const uint32_t i : matches) kMove(p[i], v[i]);
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(matches.size()));
  state.counters["ns_per_match"] = NsPer(static_cast<double>(matches.size()));
}
// BM_Floor/{Sparse10,Exclude50}Packed/N: position += velocity over plain arrays
// holding only the query's matches (as many as BM_Query has): the floor of the
// compacted queries, and what an archetype table's walk does.
void BM_FloorPacked(benchmark::State& state, size_t n, bool exclude50) {
  size_t matches;
  {
    MovingWorld world(n);
    matches = FillQueryWorld(world, exclude50);
  }
  std::vector<Position> positions(matches, Position{0, 0, 0});
  std::vector<Velocity> velocities(matches, Velocity{1, 2, 3});
  for (auto _ : state) {
    Position* p = positions.data();
    const Velocity* v = velocities.data();
    for (size_t i = 0; i < matches; ++i) kMove(p[i], v[i]);
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(matches));
  state.counters["ns_per_match"] = NsPer(static_cast<double>(matches));
}

}  // namespace

void BM_FloorSparse10Packed(benchmark::State& state, size_t n) { BM_FloorPacked(state, n, false); }
void BM_FloorExclude50Packed(benchmark::State& state, size_t n) { BM_FloorPacked(state, n, true); }

void BM_FloorSparse10(benchmark::State& state, size_t n) {
  BM_FloorQuery(state, n, kSparse10Fraction);
}
void BM_FloorExclude50(benchmark::State& state, size_t n) {
  BM_FloorQuery(state, n, kExclude50Fraction);
}

// BM_Floor/AddRemoveFlat/N: AddRemove's per-entity work on flat arrays: the manager's
// alive check, a presence bit, a per-entity component count and the value for Add; the
// bit and generation checks and the count for Remove. No pages, no Status, no release.
void BM_FloorAddRemove(benchmark::State& state, size_t n) {
  MovingWorld world(n);
  std::vector<uint32_t> generations(n);
  for (Entity e : world.entities) generations[e.index()] = e.generation();
  std::vector<uint32_t> has_velocity((n + 31) / 32, 0);
  std::vector<uint16_t> counts(n, 1);  // Position
  std::vector<Velocity> velocities(n);
  const Velocity v{1, 2, 3};
  for (auto _ : state) {
    bool ok = true;
    for (Entity e : world.entities) {
      const uint32_t i = e.index();
      const uint32_t flag = uint32_t{1} << (i & 31);
      if (world.manager.Alive(e) && (has_velocity[i >> 5] & flag) == 0) {
        has_velocity[i >> 5] |= flag;
        ++counts[i];
        velocities[i] = v;
      } else {
        ok = false;
      }
    }
    for (Entity e : world.entities) {
      const uint32_t i = e.index();
      const uint32_t flag = uint32_t{1} << (i & 31);
      if ((has_velocity[i >> 5] & flag) != 0 && generations[i] == e.generation()) {
        has_velocity[i >> 5] &= ~flag;
        --counts[i];
      } else {
        ok = false;
      }
    }
    if (!ok) state.SkipWithError("add/remove failed");
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(n));
  state.counters["ns_per_pair"] = NsPer(static_cast<double>(n));
}

// BM_Floor/RandomGetFlat/N: RandomGet's generation check and read on a flat
// generation array and a flat Position array: two independent random reads per access.
void BM_FloorRandomGet(benchmark::State& state, size_t n) {
  MovingWorld world(n);  // for the same handles and generations as RandomGet
  std::vector<uint32_t> generations(n);
  for (Entity e : world.entities) generations[e.index()] = e.generation();
  std::vector<Position> positions(n, Position{1, 2, 3});
  const std::vector<Entity> shuffled = Shuffled(world.entities);
  for (auto _ : state) {
    float sum = 0;
    for (Entity e : shuffled) {
      const Position* p =
          generations[e.index()] == e.generation() ? &positions[e.index()] : nullptr;
      sum += p->x;
    }
    benchmark::DoNotOptimize(sum);
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(n));
  state.counters["ns_per_access"] = NsPer(static_cast<double>(n));
}

// BM_Floor/CreateFlat/N: CreateFromBundle's data on plain arrays by entity index,
// allocated and written once outside the timing (pre-faulted): per entity its Position,
// its Velocity and its generation (what a flat layout needs to answer a handle), the
// entities of MovingWorld in their order. No validation, pages, masks or records.
void BM_FloorCreateFlat(benchmark::State& state, size_t n) {
  MovingWorld world(n);  // the same handles as CreateFromBundle
  std::vector<Position> positions(n, Position{0, 0, 0});
  std::vector<Velocity> velocities(n, Velocity{0, 0, 0});
  std::vector<uint32_t> generations(n, 0);
  const Position p{1, 2, 3};
  const Velocity v{4, 5, 6};
  for (auto _ : state) {
    Position* const pos = positions.data();
    Velocity* const vel = velocities.data();
    uint32_t* const gen = generations.data();
    for (const Entity e : world.entities) {
      const uint32_t i = e.index();
      pos[i] = p;
      vel[i] = v;
      gen[i] = e.generation();
    }
    benchmark::ClobberMemory();
  }
  if (positions[n - 1].x != 1 || velocities[0].z != 6) state.SkipWithError("floor wrote nothing");
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(n));
  state.counters["ns_per_entity"] = NsPer(static_cast<double>(n));
}

namespace {

// BM_Floor/CompactFlat/N: BM_Pages/Compact's unavoidable work on plain arrays: what an
// bundle-style flat layout does to reach the same end state from the same Sparse10
// world (the same entities have Velocity), entities without Velocity in slots
// [0, N - V), those with it in [N - V, N), the store's order (its sets in signature
// order, {Position} first; the store rounds the boundary up to a page, so its moved
// count may differ from this one by a few tens).
// Layout, by slot, allocated once outside the timing: Position[N], Velocity[N], a
// Velocity presence bit per slot (uint32_t words), the entity record per slot
// (Entity::bits()), and the slot of each entity index (uint32_t).
// Timed: two cursors scan the presence words in slot order, one for Velocity entities
// below the boundary, one for entities without Velocity at or above it; each pair
// found swaps its Position, its records and its presence bits, moves the Velocity to
// the other slot (one way, as the store does: the other entity has none), and writes
// both entities' slot-table entries (the index read from the moved record). A pair is
// found kCompactFlatAhead pairs before it is swapped, and its lines are prefetched then
// (the records' slot-table entries half as far ahead, once the records are in), as a
// tuned loop on plain arrays would.
// Left out, all of which Compact pays: planning (grouping slots by component set,
// ranges for any number of sets, trades across many pairs of sets), the slot table's
// and records' allocation and first writes, masks per type and data pages, releasing
// emptied pages, budgets. Each iteration rebuilds the arrays outside the timing, as
// BM_Pages/Compact builds a fresh store; `moved` counts two per swap, as Compact does.
constexpr size_t kCompactFlatAhead = 16;  // a power of two: the ring's size

// Slots in [begin, end) whose presence bit is `want`, ascending.
class PresenceCursor {
 public:
  PresenceCursor(const uint32_t* words, uint32_t begin, uint32_t end, bool want)
      : words_(words), flip_(want ? 0 : ~uint32_t{0}), end_(end), word_(begin >> 5) {
    bits_ = begin < end ? (words_[word_] ^ flip_) & (~uint32_t{0} << (begin & 31)) : 0;
    last_word_ = begin < end ? (end - 1) >> 5 : word_;
  }

  // Next: the next such slot, or false when there is none left.
  bool Next(uint32_t& slot) {
    while (bits_ == 0) {
      if (word_ >= last_word_) return false;
      bits_ = words_[++word_] ^ flip_;
    }
    slot = (word_ << 5) | static_cast<uint32_t>(std::countr_zero(bits_));
    bits_ &= bits_ - 1;
    return slot < end_;
  }

 private:
  const uint32_t* words_;
  uint32_t flip_, end_, word_, last_word_, bits_;
};

struct FlatCompactWorld {
  std::vector<Position> positions;
  std::vector<Velocity> velocities;
  std::vector<uint32_t> has_velocity;  // bit slot % 32 of word slot / 32
  std::vector<uint64_t> records;       // by slot: Entity::bits()
  std::vector<uint32_t> slot_of;       // by entity index
};

// Swaps the entities of slots a (with Velocity) and b (without), as described above.
inline void SwapFlat(FlatCompactWorld& w, uint32_t a, uint32_t b) {
  std::swap(w.positions[a], w.positions[b]);
  w.velocities[b] = w.velocities[a];
  w.has_velocity[a >> 5] ^= uint32_t{1} << (a & 31);
  w.has_velocity[b >> 5] ^= uint32_t{1} << (b & 31);
  const uint64_t record_a = w.records[a];
  const uint64_t record_b = w.records[b];
  w.records[a] = record_b;
  w.records[b] = record_a;
  w.slot_of[Entity::FromBits(record_a).index()] = b;
  w.slot_of[Entity::FromBits(record_b).index()] = a;
}

// Compacts `w` (entities without Velocity below `boundary`, with it from there) and
// returns the number of entities moved.
size_t CompactFlat(FlatCompactWorld& w, uint32_t boundary, uint32_t n) {
  PresenceCursor with(w.has_velocity.data(), 0, boundary, /*want=*/true);
  PresenceCursor without(w.has_velocity.data(), boundary, n, /*want=*/false);
  uint32_t ring[kCompactFlatAhead][2];
  size_t found = 0, swapped = 0;
  auto find = [&] {
    uint32_t a, b;
    if (!with.Next(a) || !without.Next(b)) return false;
    ring[found % kCompactFlatAhead][0] = a;
    ring[found % kCompactFlatAhead][1] = b;
    ++found;
    for (uint32_t slot : {a, b}) {
      __builtin_prefetch(&w.positions[slot], 1);
      __builtin_prefetch(&w.velocities[slot], 1);
      __builtin_prefetch(&w.records[slot], 1);
    }
    return true;
  };
  while (found < kCompactFlatAhead && find()) {
  }
  while (swapped < found) {
    if (swapped + kCompactFlatAhead / 2 < found) {
      const uint32_t* next = ring[(swapped + kCompactFlatAhead / 2) % kCompactFlatAhead];
      for (int side = 0; side < 2; ++side) {
        __builtin_prefetch(&w.slot_of[Entity::FromBits(w.records[next[side]]).index()], 1);
      }
    }
    const uint32_t* pair = ring[swapped % kCompactFlatAhead];
    SwapFlat(w, pair[0], pair[1]);
    ++swapped;
    find();
  }
  return 2 * swapped;
}

}  // namespace

void BM_FloorCompactFlat(benchmark::State& state, size_t n) {
  // The Sparse10 world itself, so the same entities have Velocity.
  std::vector<Entity> entities;
  std::vector<uint32_t> initial_presence((n + 31) / 32, 0);
  uint32_t with_velocity = 0;
  {
    MovingWorld world(n);
    FillQueryWorld(world, /*exclude50=*/false);
    entities = world.entities;
    for (uint32_t i = 0; i < n; ++i) {
      if (world.pages.TryGet(entities[i], world.vel) != nullptr) {
        initial_presence[i >> 5] |= uint32_t{1} << (i & 31);
        ++with_velocity;
      }
    }
  }
  const uint32_t slots = static_cast<uint32_t>(n);
  const uint32_t boundary = slots - with_velocity;
  FlatCompactWorld w;
  w.positions.resize(n);
  w.velocities.resize(n);
  w.records.resize(n);
  w.slot_of.resize(n);
  size_t moved = 0;
  for (auto _ : state) {
    state.PauseTiming();
    // Slot i holds entities[i]; an element's x is its entity's index, so the check
    // below can tell where each one went.
    w.has_velocity = initial_presence;
    for (uint32_t i = 0; i < slots; ++i) {
      const float x = static_cast<float>(entities[i].index());
      w.positions[i] = Position{x, 0, 0};
      w.velocities[i] = Velocity{x, 2, 3};
      w.records[i] = entities[i].bits();
      w.slot_of[entities[i].index()] = i;
    }
    state.ResumeTiming();
    moved = CompactFlat(w, boundary, slots);
    benchmark::DoNotOptimize(moved);
    benchmark::ClobberMemory();
  }
  // The last iteration's end state: every entity in its set's slots, its elements and
  // its slot-table entry with it.
  for (uint32_t slot = 0; slot < slots; ++slot) {
    const Entity e = Entity::FromBits(w.records[slot]);
    const bool has = (w.has_velocity[slot >> 5] >> (slot & 31)) & 1;
    const float x = static_cast<float>(e.index());
    if (has != (slot >= boundary) || w.slot_of[e.index()] != slot || w.positions[slot].x != x ||
        (has && w.velocities[slot].x != x)) {
      state.SkipWithError("CompactFlat left a wrong state");
      return;
    }
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(moved));
  state.counters["ns_per_move"] = NsPer(static_cast<double>(moved));
  state.counters["moved"] = static_cast<double>(moved);
}

}  // namespace strata::filter_benchmark
