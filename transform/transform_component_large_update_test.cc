// TransformComponent: large updates (split across threads, streaming stores) are bit
// for bit the serial ones.
#include "transform/transform_component.h"

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/types/span.h"
#include "base/matrix.h"
#include "entity/entity.h"
#include "entity/entity_manager.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/random.h"
#include "testing/status_matchers.h"
#include "transform/internal/transform_test_util.h"

namespace strata {
namespace {

using ::strata::testing::IsOk;
using ::strata::testing::Random;
using ::strata::testing::StatusIs;
using ::strata::transform_internal::Mode;
using ::strata::transform_internal::ModeName;
using ::strata::transform_internal::TransformModes;
using ::strata::transform_internal::WithMode;
using ::testing::HasSubstr;
using ::strata::transform_internal::RandomRigid;
using ::strata::transform_internal::RefIsAncestorOrSelf;
using ::strata::transform_internal::RefNode;
using ::strata::transform_internal::RefWorld;

INSTANTIATE_TEST_SUITE_P(Modes, TransformModes,
                         ::testing::Values(Mode::kImmediate, Mode::kDeferred), ModeName);

// ---- Large updates: bit-identical to the serial path --------------------------------

// Two components fed the same calls: `fast` with the given thresholds, `serial` with
// parallel and streaming paths off. Every world must match bit for bit (same kernel,
// same arithmetic), and both the naive reference within rounding.
class LargeUpdates {
 public:
  LargeUpdates(Mode mode, size_t threshold) {
    TransformComponent::Options options = WithMode(mode);
    TransformComponent::Options serial = options;
    if (threshold > 0) {
      options.parallel_min_nodes = threshold;
      options.stream_min_nodes = threshold;
    }
    serial.parallel_min_nodes = SIZE_MAX;
    serial.stream_min_nodes = SIZE_MAX;
    fast_ = std::make_unique<TransformComponent>(options);
    serial_ = std::make_unique<TransformComponent>(serial);
  }

  // `families` roots, each followed by `children` children (some with a grandchild).
  void Build(Random& rng, size_t families, size_t children) {
    std::vector<Entity> entities;
    std::vector<Matrix4x4> locals;
    std::vector<Entity> kids, dads;
    for (size_t f = 0; f < families; ++f) {
      const Entity root(static_cast<uint32_t>(entities.size()), 0);
      entities.push_back(root);
      roots_.push_back(root);
      Entity previous = root;
      for (size_t c = 0; c < children; ++c) {
        const Entity kid(static_cast<uint32_t>(entities.size()), 0);
        entities.push_back(kid);
        kids.push_back(kid);
        // Every third child hangs below the previous one: depth up to 3 and families
        // whose children are not all leaves.
        dads.push_back(c % 3 == 2 ? previous : root);
        previous = kid;
      }
    }
    for (size_t k = 0; k < entities.size(); ++k) locals.push_back(RandomRigid(rng));
    for (TransformComponent* tc : {fast_.get(), serial_.get()}) {
      std::vector<TransformHandle> out(entities.size());
      ASSERT_THAT(tc->CreateBatch(entities, locals, absl::MakeSpan(out)), IsOk());
      std::vector<TransformHandle> c, p;
      for (size_t k = 0; k < kids.size(); ++k) {
        c.push_back(tc->Lookup(kids[k]));
        p.push_back(tc->Lookup(dads[k]));
      }
      ASSERT_THAT(tc->LinkBatch(c, p), IsOk());
    }
    for (size_t k = 0; k < entities.size(); ++k) ref_[entities[k]] = {locals[k], Entity()};
    for (size_t k = 0; k < kids.size(); ++k) ref_[kids[k]].parent = dads[k];
    all_ = entities;
  }

  enum class How { kSetLocal, kBatch, kPrepared };
  // Sets `which` (entities) to fresh matrices, by one SetLocal each, SetLocalBatch, or
  // (`fast` only) SetLocalBatch with a PreparedBatch, prepared, used, then used again
  // with other matrices: the second use skips the handle checks.
  void Set(Random& rng, const std::vector<Entity>& which, How how) {
    if (how == How::kPrepared) {
      std::vector<TransformHandle> instances;
      for (Entity e : which) instances.push_back(fast_->Lookup(e));
      STRATA_ASSERT_OK_AND_ASSIGN(TransformComponent::PreparedBatch batch,
                                  fast_->PrepareBatch(instances));
      std::vector<Matrix4x4> first(which.size());
      for (Matrix4x4& l : first) l = RandomRigid(rng);
      ASSERT_THAT(fast_->SetLocalBatch(batch, first), IsOk());
      fast_->UpdateWorld();
      std::vector<Matrix4x4> second;
      for (Entity e : which) {
        second.push_back(RandomRigid(rng));
        ref_[e].local = second.back();
      }
      ASSERT_THAT(fast_->SetLocalBatch(batch, second), IsOk());
      fast_->UpdateWorld();
      // The serial twin gets the same matrices the plain way.
      ASSERT_THAT(serial_->SetLocalBatch(Lookup(*serial_, which), first), IsOk());
      serial_->UpdateWorld();
      ASSERT_THAT(serial_->SetLocalBatch(Lookup(*serial_, which), second), IsOk());
      serial_->UpdateWorld();
      return;
    }
    const bool batch = how == How::kBatch;
    std::vector<Matrix4x4> locals;
    for (Entity e : which) {
      locals.push_back(RandomRigid(rng));
      ref_[e].local = locals.back();  // a repeat takes its last matrix
    }
    for (TransformComponent* tc : {fast_.get(), serial_.get()}) {
      std::vector<TransformHandle> instances;
      for (Entity e : which) instances.push_back(tc->Lookup(e));
      if (batch) {
        ASSERT_THAT(tc->SetLocalBatch(instances, locals), IsOk());
      } else {
        for (size_t k = 0; k < instances.size(); ++k) {
          ASSERT_TRUE(tc->SetLocal(instances[k], locals[k]));
        }
      }
      tc->UpdateWorld();
    }
  }

  void Check() {
    ASSERT_THAT(fast_->CheckInvariants(), IsOk());
    std::map<Entity, Matrix4x4> cache;
    for (Entity e : all_) {
      const Matrix4x4& world = fast_->World(fast_->Lookup(e));
      ASSERT_EQ(world, serial_->World(serial_->Lookup(e))) << e;
      ASSERT_EQ(fast_->Local(fast_->Lookup(e)), ref_.at(e).local) << e;
      const Matrix4x4 expected = RefWorld(ref_, e, cache);
      ASSERT_TRUE(NearlyEqual(world, expected, 2e-4f, 1e-4f))
          << e << " world " << world << " expected " << expected;
    }
  }

  static std::vector<TransformHandle> Lookup(const TransformComponent& tc,
                                      const std::vector<Entity>& which) {
    std::vector<TransformHandle> instances;
    for (Entity e : which) instances.push_back(tc.Lookup(e));
    return instances;
  }

  const std::vector<Entity>& roots() const { return roots_; }
  const std::vector<Entity>& all() const { return all_; }
  TransformComponent& fast() { return *fast_; }

 private:
  std::unique_ptr<TransformComponent> fast_, serial_;
  std::map<Entity, RefNode> ref_;
  std::vector<Entity> roots_, all_;
};

void RunLargeUpdates(Mode mode, size_t threshold, size_t families, size_t children) {
  Random rng(::strata::testing::TestSeed() + families * 31 + children);
  SCOPED_TRACE(rng.DescribeSeed());
  LargeUpdates t(mode, threshold);
  t.Build(rng, families, children);
  if (::testing::Test::HasFatalFailure()) return;
  // Every root moves (the Hierarchy and FlatAll shapes), in memory order: the
  // all-roots path.
  // Prepared: a run of lone roots when there are no children (a plain copy), else the
  // roots' walks.
  using How = LargeUpdates::How;
  for (How how : {How::kBatch, How::kSetLocal, How::kPrepared}) {
    t.Set(rng, t.roots(), how);
    t.Check();
    if (::testing::Test::HasFatalFailure()) return;
  }
  // Roots in random order with repeats: the marked path (parallel over its roots).
  std::vector<Entity> shuffled;
  for (size_t k = 0; k < t.roots().size() + t.roots().size() / 4; ++k) {
    shuffled.push_back(t.roots()[rng.UniformIndex(t.roots().size())]);
  }
  for (How how : {How::kBatch, How::kPrepared}) {
    t.Set(rng, shuffled, how);
    t.Check();
    if (::testing::Test::HasFatalFailure()) return;
  }
  if (::testing::Test::HasFatalFailure()) return;
  // Every node, parents and children mixed: roots of the walks are the families' roots.
  std::vector<Entity> everyone = t.all();
  for (size_t k = everyone.size(); k > 1; --k) {
    std::swap(everyone[k - 1], everyone[rng.UniformIndex(k)]);
  }
  for (How how : {How::kBatch, How::kPrepared}) {
    t.Set(rng, everyone, how);
    t.Check();
    if (::testing::Test::HasFatalFailure()) return;
  }
  if (::testing::Test::HasFatalFailure()) return;
  // A few nodes only (below every threshold), then idle updates that shrink the dirty
  // range in deferred mode.
  t.Set(rng, {t.all()[1], t.all()[t.all().size() / 2]}, How::kSetLocal);
  for (int frame = 0; frame < 7; ++frame) t.fast().UpdateWorld();
  t.Check();
}

TEST_P(TransformModes, LargeUpdatesAreBitIdenticalToSerialWithLowThresholds) {
  RunLargeUpdates(GetParam(), /*threshold=*/64, /*families=*/700, /*children=*/9);
  if (HasFatalFailure()) return;
  RunLargeUpdates(GetParam(), /*threshold=*/64, /*families=*/3000, /*children=*/0);
}

// Above the default thresholds (parallel_min_nodes 16384, stream_min_nodes 65536 of
// the written nodes for a batch).
TEST_P(TransformModes, LargeUpdatesAreBitIdenticalToSerialAtDefaultThresholds) {
  TransformComponent::Options defaults;
  ASSERT_LE(defaults.parallel_min_nodes, 20000u);
  ASSERT_LE(defaults.stream_min_nodes, 70000u);
  // 70,000 roots; then 66,000 roots with a child each (132,000 nodes).
  RunLargeUpdates(GetParam(), /*threshold=*/0, /*families=*/70000, /*children=*/0);
  if (HasFatalFailure()) return;
  RunLargeUpdates(GetParam(), /*threshold=*/0, /*families=*/66000, /*children=*/1);
}

}  // namespace
}  // namespace strata
