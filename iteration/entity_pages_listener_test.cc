// EntityPages' StructureListener: which calls report which entities, in which batches;
// and AddEach, the batch Add with a value per entity.
#include <cstddef>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "entity/entity.h"
#include "entity/entity_manager.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "iteration/entity_pages.h"
#include "testing/status_matchers.h"

namespace strata {
namespace {

using ::strata::testing::IsOk;
using ::strata::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

struct Value {
  float v = 0;
};
struct Tag {};

// Records each call as "+c:i,j" (added) or "-c:i,j" (removed), by entity index.
class Recorder final : public StructureListener {
 public:
  void OnAdded(ComponentId c, absl::Span<const Entity> entities) override {
    calls.push_back(Describe('+', c, entities));
  }
  void OnRemoved(ComponentId c, absl::Span<const Entity> entities) override {
    calls.push_back(Describe('-', c, entities));
  }
  std::vector<std::string> calls;

 private:
  static std::string Describe(char sign, ComponentId c, absl::Span<const Entity> entities) {
    std::string text = absl::StrCat(std::string(1, sign), c, ":");
    for (size_t i = 0; i < entities.size(); ++i) absl::StrAppend(&text, i ? "," : "", entities[i].index());
    return text;
  }
};

class Listened : public ::testing::Test {
 protected:
  void SetUp() override {
    value_ = *pages_.RegisterComponent<Value>("value");
    tag_ = *pages_.RegisterComponent<Tag>("tag");
    batch_.resize(8);
    manager_.CreateBatch(absl::MakeSpan(batch_));
    pages_.set_structure_listener(&recorder_);
  }
  EntityManager manager_;
  EntityPages pages_{manager_};
  Recorder recorder_;
  Component<Value> value_;
  Component<Tag> tag_;
  std::vector<Entity> batch_;
};

TEST_F(Listened, SingleCallsReportOneEntityEachAndFailuresNothing) {
  ASSERT_THAT(pages_.Add(batch_[0], value_, Value{1}), IsOk());
  ASSERT_THAT(pages_.Add(batch_[0], tag_, Tag{}), IsOk());
  ASSERT_THAT(pages_.Add(batch_[1], value_.id, nullptr), IsOk());  // the untyped form
  EXPECT_THAT(pages_.Add(batch_[0], value_, Value{2}), StatusIs(absl::StatusCode::kAlreadyExists));
  ASSERT_THAT(pages_.Remove(batch_[0], value_), IsOk());
  EXPECT_THAT(pages_.Remove(batch_[0], value_), StatusIs(absl::StatusCode::kNotFound));
  EXPECT_THAT(recorder_.calls, ElementsAre("+0:0", "+1:0", "+0:1", "-0:0"));
}

TEST_F(Listened, SpanCallsReportTheEntitiesThatChangedInOneCall) {
  ASSERT_THAT(pages_.Add(absl::MakeConstSpan(batch_).first(3), value_, Value{1}), IsOk());
  // Fails at position 2 (batch_[1] has it already): 3 and 4 took it, 1 did not.
  const std::vector<Entity> partial = {batch_[3], batch_[4], batch_[1], batch_[5]};
  EXPECT_THAT(pages_.Add(partial, value_, Value{1}), StatusIs(absl::StatusCode::kAlreadyExists));
  const std::vector<Entity> removal = {batch_[0], batch_[6], batch_[1]};
  EXPECT_THAT(pages_.Remove(removal, value_), StatusIs(absl::StatusCode::kNotFound));
  ASSERT_THAT(pages_.Remove(absl::Span<const Entity>(), value_), IsOk());
  ASSERT_THAT(pages_.Add(absl::Span<const Entity>(), value_, Value{1}), IsOk());
  EXPECT_THAT(recorder_.calls, ElementsAre("+0:0,1,2", "+0:3,4", "-0:0"));
}

TEST_F(Listened, CreateFromBundleReportsEachComponentOnlyOnSuccess) {
  ComponentBundle both;
  both.Set(value_, Value{5}).Set(tag_, Tag{});
  ASSERT_THAT(pages_.CreateFromBundle(absl::MakeConstSpan(batch_).first(2), both), IsOk());
  // All or nothing: batch_[1] already has components, so nothing is reported.
  EXPECT_THAT(pages_.CreateFromBundle(absl::MakeConstSpan(batch_).subspan(1, 2), both),
              StatusIs(absl::StatusCode::kAlreadyExists));
  EXPECT_THAT(recorder_.calls, ElementsAre("+0:0,1", "+1:0,1"));
}

TEST_F(Listened, DeleteDestroyAndCompactReportNothing) {
  ComponentBundle both;
  both.Set(value_, Value{5}).Set(tag_, Tag{});
  ASSERT_THAT(pages_.CreateFromBundle(batch_, both), IsOk());
  ASSERT_THAT(pages_.Remove(absl::MakeConstSpan(batch_).first(4), tag_), IsOk());
  recorder_.calls.clear();
  pages_.Compact();
  ASSERT_THAT(pages_.Delete(batch_[7]), IsOk());
  ASSERT_THAT(manager_.Destroy(batch_[6]), IsOk());
  EXPECT_THAT(recorder_.calls, IsEmpty());
  // Unset: nothing more is reported.
  pages_.set_structure_listener(nullptr);
  ASSERT_THAT(pages_.Remove(batch_[0], value_), IsOk());
  EXPECT_THAT(recorder_.calls, IsEmpty());
}

TEST(EntityPagesAddEach, GivesEachEntityItsOwnValue) {
  EntityManager manager;
  EntityPages pages(manager);
  const Component<Value> value = *pages.RegisterComponent<Value>("value");
  const Component<Tag> tag = *pages.RegisterComponent<Tag>("tag");
  std::vector<Entity> batch(100);
  manager.CreateBatch(absl::MakeSpan(batch));
  std::vector<Value> values(batch.size());
  for (size_t i = 0; i < values.size(); ++i) values[i].v = static_cast<float>(i);
  const auto bytes = absl::MakeConstSpan(reinterpret_cast<const std::byte*>(values.data()),
                                         values.size() * sizeof(Value));
  // The wrong number of bytes, or an unregistered id: nothing changes.
  EXPECT_THAT(pages.AddEach(batch, value.id, bytes.first(bytes.size() - 1)),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(pages.AddEach(batch, kNoComponent, bytes), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_EQ(pages.num_entities(), 0u);
  ASSERT_THAT(pages.AddEach(batch, value.id, bytes), IsOk());
  for (size_t i = 0; i < batch.size(); ++i) ASSERT_EQ(pages.TryGet(batch[i], value)->v, i);
  ASSERT_THAT(pages.AddEach(batch, tag.id, {}), IsOk());  // a tag takes no bytes
  EXPECT_TRUE(pages.Has(batch[99], tag.id));
  // Stops at the first failure; the ones before keep their values.
  Entity dead = manager.Create();
  ASSERT_THAT(manager.Destroy(dead), IsOk());
  std::vector<Entity> more = {manager.Create(), dead, manager.Create()};
  EXPECT_THAT(pages.AddEach(more, value.id, bytes.first(3 * sizeof(Value))),
              StatusIs(absl::StatusCode::kNotFound));
  EXPECT_EQ(pages.TryGet(more[0], value)->v, 0);
  EXPECT_EQ(pages.TryGet(more[2], value), nullptr);
}

}  // namespace
}  // namespace strata
