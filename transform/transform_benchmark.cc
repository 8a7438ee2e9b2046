// Benchmarks of TransformComponent, the cases of seed 002 part 3:
//
//   BM_Transform/<Case>/<Mode>/<N>, counter ns_per_node = frame time / nodes whose world
//   matrix the frame recomputes (for FlatOnePercent: the 1% that move).
//
// Cases: MovingChain (one chain of N, every node set each frame), MovingRoot (the root
// of a 5-level tree of N nodes moves), FlatOnePercent (1M roots, 1% set each frame),
// FlatAll (1M roots, all set), Hierarchy (100k parents with 9 children each, every
// parent set: all 1M worlds recomputed). Modes: Immediate (SetLocal per node), Batch
// (one SetLocalBatch), Deferred (SetLocal per node + UpdateWorld), Prepared (one
// SetLocalBatch with a PreparedBatch made with the scene; immediate mode).
//
// BM_Transform/MemoryFloor/{Copy192,Copy192Stream,Copy192Stream2T,Hierarchy} are
// baselines: FlatAll's and Hierarchy's bytes moved by plain loops over flat arrays (see
// BM_TransformMemoryFloor).
//
// Run: bazel run -c opt //transform:transform_benchmark -- --benchmark_repetitions=5
//      --benchmark_report_aggregates_only=true   (about 2 minutes)
// Subset: --benchmark_filter=FlatAll
#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include <new>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "absl/types/span.h"
#include "base/huge_page_allocator.h"
#include "base/matrix.h"
#include "benchmark/benchmark.h"
#include "entity/entity.h"
#include "testing/random.h"
#include "transform/transform_component.h"

namespace strata {
namespace {

using TransformHandle = TransformHandle;

// kPrepared: immediate mode, SetLocalBatch with a PreparedBatch made once with the scene
// (outside the timed frames), as a system that moves the same instances every frame
// would keep it; each frame still checks it is current.
enum class Mode { kImmediate, kBatch, kDeferred, kPrepared };

constexpr uint32_t kMillion = 1000000;

// Two alternating sets of local matrices, shared by every scene (generated once), so a
// frame writes different values than the frame before.
const std::vector<Matrix4x4>& Pose(int frame) {
  static const auto* poses = [] {
    auto* p = new std::vector<Matrix4x4>[2];
    testing::Random rng(0xBE7C4);
    for (int f = 0; f < 2; ++f) {
      p[f].resize(kMillion);
      for (Matrix4x4& m : p[f]) {
        m = Matrix4x4::Compose(
            {rng.UniformFloat(-1, 1), rng.UniformFloat(-1, 1), rng.UniformFloat(-1, 1)},
            Quaternion::FromAxisAngle({0.3f, 1.0f, rng.UniformFloat(-1, 1)},
                                      rng.UniformFloat(-0.2f, 0.2f)),
            {1, 1, 1});
      }
    }
    return p;
  }();
  return poses[frame & 1];
}

struct Scene {
  std::unique_ptr<TransformComponent> tc;
  std::vector<TransformHandle> nodes;
  std::vector<TransformHandle> moving;  // set every frame, in this order
  TransformComponent::PreparedBatch prepared;  // of `moving` (Mode::kPrepared)
  size_t updated = 0;            // world matrices recomputed per frame
};

Scene MakeNodes(Mode mode, uint32_t n) {
  Scene s;
  TransformComponent::Options options;
  options.mode = mode == Mode::kDeferred ? TransformComponent::Mode::kDeferred
                                         : TransformComponent::Mode::kImmediate;
  options.initial_capacity = n;
  s.tc = std::make_unique<TransformComponent>(options);
  std::vector<Entity> entities(n);
  for (uint32_t k = 0; k < n; ++k) entities[k] = Entity(k, 0);
  s.nodes.resize(n);
  const std::vector<Matrix4x4>& pose = Pose(0);
  const absl::Span<const Matrix4x4> locals(pose.data(), n);
  if (!s.tc->CreateBatch(entities, locals, absl::MakeSpan(s.nodes)).ok()) std::abort();
  return s;
}

void LinkOrDie(Scene& s, absl::Span<const TransformHandle> children, absl::Span<const TransformHandle> parents) {
  if (!s.tc->LinkBatch(children, parents).ok()) std::abort();
}

// One chain of n: node k is the child of node k - 1; every node moves.
Scene MakeChain(Mode mode, uint32_t n) {
  Scene s = MakeNodes(mode, n);
  LinkOrDie(s, absl::MakeSpan(s.nodes).subspan(1), absl::MakeSpan(s.nodes).subspan(0, n - 1));
  s.moving = s.nodes;
  s.updated = n;
  return s;
}

// A complete b-ary tree of n nodes with 5 levels (b the smallest branching that fits n
// in 5 levels), in breadth-first order; the root moves.
Scene MakeTree5(Mode mode, uint32_t n) {
  uint32_t b = 1;
  while (1 + b + b * b + b * b * b + b * b * b * b < n) ++b;
  Scene s = MakeNodes(mode, n);
  std::vector<TransformHandle> children, parents;
  for (uint32_t k = 1; k < n; ++k) {
    children.push_back(s.nodes[k]);
    parents.push_back(s.nodes[(k - 1) / b]);
  }
  LinkOrDie(s, children, parents);
  s.moving = {s.nodes[0]};
  s.updated = n;
  return s;
}

// n roots; `percent` of them (a fixed random set, in memory order) move.
Scene MakeFlat(Mode mode, uint32_t n, uint32_t percent) {
  Scene s = MakeNodes(mode, n);
  if (percent >= 100) {
    s.moving = s.nodes;
  } else {
    testing::Random rng(0xF1A7);
    std::vector<uint32_t> order = rng.Permutation(n);
    order.resize(size_t{n} * percent / 100);
    std::sort(order.begin(), order.end());
    for (uint32_t k : order) s.moving.push_back(s.nodes[k]);
  }
  s.updated = s.moving.size();
  return s;
}

// `parents` families, each a parent followed by its `children` (so a family is
// contiguous); every parent moves, every node's world is recomputed.
Scene MakeHierarchy(Mode mode, uint32_t parents, uint32_t children) {
  const uint32_t family = children + 1;
  Scene s = MakeNodes(mode, parents * family);
  std::vector<TransformHandle> kids, dads;
  for (uint32_t p = 0; p < parents; ++p) {
    for (uint32_t c = 1; c <= children; ++c) {
      kids.push_back(s.nodes[p * family + c]);
      dads.push_back(s.nodes[p * family]);
    }
    s.moving.push_back(s.nodes[p * family]);
  }
  LinkOrDie(s, kids, dads);
  s.updated = s.nodes.size();
  return s;
}

void Frame(Mode mode, Scene& s, int frame) {
  const std::vector<Matrix4x4>& pose = Pose(frame);
  TransformComponent& tc = *s.tc;
  switch (mode) {
    case Mode::kImmediate:
      for (size_t k = 0; k < s.moving.size(); ++k) tc.SetLocal(s.moving[k], pose[k]);
      break;
    case Mode::kBatch:
      if (!tc.SetLocalBatch(s.moving, absl::MakeConstSpan(pose.data(), s.moving.size())).ok()) {
        std::abort();
      }
      break;
    case Mode::kDeferred:
      for (size_t k = 0; k < s.moving.size(); ++k) tc.SetLocal(s.moving[k], pose[k]);
      tc.UpdateWorld();
      break;
    case Mode::kPrepared:
      if (!tc.SetLocalBatch(s.prepared, absl::MakeConstSpan(pose.data(), s.moving.size()))
               .ok()) {
        std::abort();
      }
      break;
  }
}

template <typename MakeScene>
void RunFrames(benchmark::State& state, Mode mode, MakeScene make) {
  Scene s = make();
  if (mode == Mode::kPrepared) {
    auto prepared = s.tc->PrepareBatch(s.moving);
    if (!prepared.ok()) std::abort();
    s.prepared = *std::move(prepared);
  }
  // Warm up: deferred mode moves the movers into the dirty range on the first frame.
  Frame(mode, s, 0);
  Frame(mode, s, 1);
  int frame = 0;
  double ns = 0;
  for (auto _ : state) {
    const auto start = std::chrono::steady_clock::now();
    Frame(mode, s, frame++);
    const auto stop = std::chrono::steady_clock::now();
    ns += std::chrono::duration<double, std::nano>(stop - start).count();
  }
  benchmark::DoNotOptimize(s.tc->World(s.nodes.back()));
  const double nodes = static_cast<double>(state.iterations()) * static_cast<double>(s.updated);
  state.counters["ns_per_node"] = ns / nodes;
  state.counters["nodes"] = static_cast<double>(s.updated);
  state.SetItemsProcessed(static_cast<int64_t>(nodes));
}

const char* ModeName(Mode mode) {
  switch (mode) {
    case Mode::kImmediate:
      return "Immediate";
    case Mode::kBatch:
      return "Batch";
    case Mode::kDeferred:
      return "Deferred";
    case Mode::kPrepared:
      return "Prepared";
  }
  return "?";
}

// Memory floors: the bytes a case must move, moved by plain loops over flat arrays, with
// no handles, links or calls. Not modes of the component; they show how close the cases
// above are to what this machine's memory can do.
//
// FlatAll's per node: read the new 64-byte local, write the local and the world (192
// bytes). Copy192 does that with ordinary stores, which also read each written line
// first (read for ownership); Copy192Stream with non-temporal stores, which do not;
// Copy192Stream2T splits the nodes over two threads (this machine's two cores).
#if defined(__x86_64__)
// Streams with one 64-byte store per matrix (a whole cache line per instruction) when
// the CPU has AVX-512: measured on this machine, 16-byte streaming stores left the
// floor where ordinary stores had it (16.5 vs 17.0 ns per node), 64-byte ones did not.
__attribute__((target("avx512f"))) void StreamRangeAvx512(const Matrix4x4* pose,
                                                           Matrix4x4* local,
                                                           Matrix4x4* world, size_t begin,
                                                           size_t end) {
  for (size_t i = begin; i < end; ++i) {
    const __m512 v = _mm512_loadu_ps(pose[i].m);
    _mm512_stream_ps(local[i].m, v);  // needs 64-byte alignment: see BM_TransformMemoryFloor
    _mm512_stream_ps(world[i].m, v);
  }
  _mm_sfence();
}
#endif

void CopyRange(const Matrix4x4* pose, Matrix4x4* local, Matrix4x4* world, size_t begin,
               size_t end, bool stream) {
#if defined(__x86_64__)
  if (stream && __builtin_cpu_supports("avx512f")) {
    StreamRangeAvx512(pose, local, world, begin, end);
    return;
  }
  if (stream) {
    for (size_t i = begin; i < end; ++i) {
      for (int q = 0; q < 4; ++q) {
        const __m128 row = _mm_loadu_ps(pose[i].m + 4 * q);
        _mm_stream_ps(local[i].m + 4 * q, row);
        _mm_stream_ps(world[i].m + 4 * q, row);
      }
    }
    _mm_sfence();
    return;
  }
#endif
  (void)stream;
  for (size_t i = begin; i < end; ++i) {
    local[i] = pose[i];
    world[i] = pose[i];
  }
}

// A 64-byte aligned array of n matrices (std::vector<Matrix4x4> aligns to 16 only),
// allocated as the component allocates its columns (huge pages from 1 MiB), so the
// floor is not slowed by TLB misses the component no longer has.
struct AlignedMatrices {
  explicit AlignedMatrices(size_t n)
      : data(static_cast<Matrix4x4*>(AllocateLarge(n * sizeof(Matrix4x4), 64))), size(n) {
    std::fill(data, data + n, Matrix4x4::Identity());
  }
  ~AlignedMatrices() { DeallocateLarge(data, size * sizeof(Matrix4x4), 64); }
  AlignedMatrices(const AlignedMatrices&) = delete;
  AlignedMatrices& operator=(const AlignedMatrices&) = delete;
  Matrix4x4* data;
  size_t size;
};

void BM_TransformMemoryFloor(benchmark::State& state, bool stream, int threads) {
  const size_t n = static_cast<size_t>(state.range(0));
  AlignedMatrices local(n), world(n);
  int frame = 0;
  double ns = 0;
  for (auto _ : state) {
    const Matrix4x4* pose = Pose(frame++).data();
    const auto start = std::chrono::steady_clock::now();
    if (threads == 1) {
      CopyRange(pose, local.data, world.data, 0, n, stream);
    } else {
      std::thread helper(CopyRange, pose, local.data, world.data, 0, n / 2, stream);
      CopyRange(pose, local.data, world.data, n / 2, n, stream);
      helper.join();
    }
    const auto stop = std::chrono::steady_clock::now();
    benchmark::DoNotOptimize(world.data);
    benchmark::ClobberMemory();
    ns += std::chrono::duration<double, std::nano>(stop - start).count();
  }
  state.counters["ns_per_node"] = ns / (static_cast<double>(state.iterations()) * n);
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * n));
}

// Hierarchy's floor, single thread: per family, the parent reads its new local and
// writes local and world; each of the 9 children reads its local, multiplies it by the
// parent's world (in cache) and writes its world. Ordinary stores, as the component
// uses. 134.4 bytes of matrices per node on average; no links are read.
void BM_TransformHierarchyFloor(benchmark::State& state) {
  const size_t parents = static_cast<size_t>(state.range(0));
  constexpr size_t kFamily = 10;
  const size_t n = parents * kFamily;
  using HugeMatrices = std::vector<Matrix4x4, HugePageAllocator<Matrix4x4>>;  // as above
  HugeMatrices local(Pose(0).begin(), Pose(0).begin() + n), world(n);
  int frame = 0;
  double ns = 0;
  for (auto _ : state) {
    const Matrix4x4* pose = Pose(frame++).data();
    const auto start = std::chrono::steady_clock::now();
    for (size_t p = 0; p < parents; ++p) {
      const size_t root = p * kFamily;
      local[root] = pose[p];
      world[root] = pose[p];
      for (size_t c = root + 1; c < root + kFamily; ++c) world[c] = local[c] * world[root];
    }
    const auto stop = std::chrono::steady_clock::now();
    benchmark::DoNotOptimize(world.data());
    benchmark::ClobberMemory();
    ns += std::chrono::duration<double, std::nano>(stop - start).count();
  }
  state.counters["ns_per_node"] = ns / (static_cast<double>(state.iterations()) * n);
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * n));
}

void RegisterAll() {
  for (auto [name, stream, threads] : {std::tuple{"Copy192", false, 1},
                                        std::tuple{"Copy192Stream", true, 1},
                                        std::tuple{"Copy192Stream2T", true, 2}}) {
    benchmark::RegisterBenchmark(
        (std::string("BM_Transform/MemoryFloor/") + name).c_str(),
        [stream = stream, threads = threads](benchmark::State& st) {
          BM_TransformMemoryFloor(st, stream, threads);
        })
        ->Arg(kMillion)
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime();
  }
  benchmark::RegisterBenchmark("BM_Transform/MemoryFloor/Hierarchy",
                               BM_TransformHierarchyFloor)
      ->Arg(100000)
      ->Unit(benchmark::kMillisecond);
  for (Mode mode : {Mode::kImmediate, Mode::kBatch, Mode::kDeferred, Mode::kPrepared}) {
    const std::string m = ModeName(mode);
    benchmark::RegisterBenchmark(
        ("BM_Transform/MovingChain/" + m).c_str(),
        [mode](benchmark::State& st) {
          RunFrames(st, mode, [&] { return MakeChain(mode, static_cast<uint32_t>(st.range(0))); });
        })
        ->Arg(8)->Arg(64)->Arg(512);
    benchmark::RegisterBenchmark(
        ("BM_Transform/MovingRoot/" + m).c_str(),
        [mode](benchmark::State& st) {
          RunFrames(st, mode, [&] { return MakeTree5(mode, static_cast<uint32_t>(st.range(0))); });
        })
        ->Arg(781)->Arg(97656);
    benchmark::RegisterBenchmark(
        ("BM_Transform/FlatOnePercent/" + m).c_str(),
        [mode](benchmark::State& st) {
          RunFrames(st, mode, [&] { return MakeFlat(mode, static_cast<uint32_t>(st.range(0)), 1); });
        })
        ->Arg(kMillion)->Unit(benchmark::kMicrosecond);
    benchmark::RegisterBenchmark(
        ("BM_Transform/FlatAll/" + m).c_str(),
        [mode](benchmark::State& st) {
          RunFrames(st, mode, [&] { return MakeFlat(mode, static_cast<uint32_t>(st.range(0)), 100); });
        })
        ->Arg(kMillion)->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark(
        ("BM_Transform/Hierarchy/" + m).c_str(),
        [mode](benchmark::State& st) {
          RunFrames(st, mode, [&] { return MakeHierarchy(mode, static_cast<uint32_t>(st.range(0)), 9); });
        })
        ->Arg(100000)->Unit(benchmark::kMillisecond);
  }
}

const int kRegistered = (RegisterAll(), 0);

}  // namespace
}  // namespace strata
