// The entity match against a reference model: identities spelled out as path strings
// ("/" parent path, name, "#" occurrence) and matched through a map, on random trees
// edited at random (inserts, removals, renames, sibling swaps, repeated and empty names).
#include "resource/entity_match.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "resource/format.h"
#include "resource/metadata.h"
#include "testing/random.h"
#include "testing/status_matchers.h"

namespace strata {
namespace {

using ::strata::testing::Random;
using ::strata::testing::StatusIs;

struct Node {
  std::string name;
  std::vector<Node> children;
};

// Flat: a forest in blob order (depth-first, parents first).
struct Flat {
  std::vector<uint32_t> parents;
  std::vector<std::string> names;

  std::vector<absl::string_view> Views() const {
    return std::vector<absl::string_view>(names.begin(), names.end());
  }
};

void Flatten(const Node& node, uint32_t parent, Flat* out) {
  const uint32_t me = static_cast<uint32_t>(out->parents.size());
  out->parents.push_back(parent);
  out->names.push_back(node.name);
  for (const Node& c : node.children) Flatten(c, me, out);
}

Flat FlattenForest(const std::vector<Node>& roots) {
  Flat flat;
  for (const Node& r : roots) Flatten(r, kNoParent, &flat);
  return flat;
}

// ReferenceMatch: before_of_after by identity strings.
std::vector<uint32_t> ReferenceMatch(const Flat& before, const Flat& after) {
  auto identities = [](const Flat& f) {
    std::vector<std::string> id(f.parents.size());
    absl::flat_hash_map<std::string, uint32_t> seen;  // parent identity + name -> count
    for (size_t k = 0; k < f.parents.size(); ++k) {
      const std::string parent = f.parents[k] == kNoParent ? std::string("") : id[f.parents[k]];
      // Lengths make the spelling unambiguous whatever the names hold.
      const std::string stem = absl::StrCat(parent, "/", f.names[k].size(), ":", f.names[k]);
      id[k] = absl::StrCat(stem, "#", seen[stem]++);
    }
    return id;
  };
  const std::vector<std::string> b = identities(before);
  const std::vector<std::string> a = identities(after);
  absl::flat_hash_map<std::string, uint32_t> number;
  for (uint32_t j = 0; j < b.size(); ++j) number[b[j]] = j;
  std::vector<uint32_t> result(a.size(), EntityMatch::kNone);
  for (size_t k = 0; k < a.size(); ++k) {
    auto it = number.find(a[k]);
    if (it != number.end()) result[k] = it->second;
  }
  return result;
}

std::string RandomName(Random& rng, int* unique) {
  // Mostly unique names, some repeated ones and some unnamed, so that occurrences matter.
  const int pick = static_cast<int>(rng.UniformInt(0, 9));
  if (pick == 0) return "";
  if (pick == 1) return "dup";
  if (pick == 2) return "b";
  return absl::StrCat("e", (*unique)++);
}

Node RandomTree(Random& rng, int depth, int* unique) {
  Node n{RandomName(rng, unique), {}};
  if (depth > 0) {
    const int children = static_cast<int>(rng.UniformInt(0, 3));
    for (int c = 0; c < children; ++c) n.children.push_back(RandomTree(rng, depth - 1, unique));
  }
  return n;
}

// A random node's children list (the roots included), for edits.
std::vector<Node>* RandomList(Random& rng, std::vector<Node>* roots) {
  std::vector<Node>* list = roots;
  while (!list->empty() && rng.Bernoulli(0.5)) {
    Node& n = (*list)[rng.UniformIndex(list->size())];
    list = &n.children;
  }
  return list;
}

void RandomEdit(Random& rng, std::vector<Node>* roots, int* unique) {
  std::vector<Node>* list = RandomList(rng, roots);
  switch (rng.UniformInt(0, 3)) {
    case 0:  // insert
      list->insert(list->begin() + static_cast<ptrdiff_t>(rng.UniformIndex(list->size() + 1)),
                   RandomTree(rng, 2, unique));
      break;
    case 1:  // remove a subtree
      if (!list->empty()) list->erase(list->begin() + static_cast<ptrdiff_t>(rng.UniformIndex(list->size())));
      break;
    case 2:  // rename
      if (!list->empty()) (*list)[rng.UniformIndex(list->size())].name = RandomName(rng, unique);
      break;
    default:  // swap two siblings
      if (list->size() >= 2) {
        std::swap((*list)[rng.UniformIndex(list->size())], (*list)[rng.UniformIndex(list->size())]);
      }
      break;
  }
}

void ExpectMatches(const Flat& before, const Flat& after) {
  const EntityMatch m = MatchEntities(before.parents, before.Views(), after.parents, after.Views());
  const std::vector<uint32_t> expected = ReferenceMatch(before, after);
  ASSERT_EQ(m.before_of_after, expected);
  ASSERT_EQ(m.after_of_before.size(), before.parents.size());
  uint32_t kept = 0;
  for (uint32_t k = 0; k < expected.size(); ++k) {
    if (expected[k] == EntityMatch::kNone) continue;
    ++kept;
    ASSERT_EQ(m.after_of_before[expected[k]], k);
  }
  for (uint32_t j = 0; j < m.after_of_before.size(); ++j) {
    if (m.after_of_before[j] != EntityMatch::kNone) {
      ASSERT_EQ(m.before_of_after[m.after_of_before[j]], j);
    }
  }
  ASSERT_EQ(m.kept, kept);
}

TEST(EntityMatch, AgreesWithTheReferenceOnRandomEdits) {
  Random rng(::strata::testing::TestSeed());
  SCOPED_TRACE(rng.DescribeSeed());
  for (int round = 0; round < 300; ++round) {
    SCOPED_TRACE(absl::StrCat("round ", round));
    int unique = 0;
    std::vector<Node> roots;
    const int n = static_cast<int>(rng.UniformInt(0, 12));
    for (int i = 0; i < n; ++i) roots.push_back(RandomTree(rng, 3, &unique));
    const Flat before = FlattenForest(roots);
    const int edits = static_cast<int>(rng.UniformInt(0, 6));
    for (int e = 0; e < edits; ++e) RandomEdit(rng, &roots, &unique);
    const Flat after = FlattenForest(roots);
    ExpectMatches(before, after);
    ExpectMatches(after, before);
  }
}

TEST(EntityMatch, EmptyOneAndUnchanged) {
  const Flat empty;
  ExpectMatches(empty, empty);
  const Flat one{{kNoParent}, {"a"}};
  ExpectMatches(empty, one);
  ExpectMatches(one, empty);
  const EntityMatch same = MatchEntities(one.parents, one.Views(), one.parents, one.Views());
  EXPECT_TRUE(same.same_structure);
  EXPECT_EQ(same.kept, 1u);
}

TEST(EntityMatch, AnInsertionAtTheTopIsOneAddAndTheRestKeptInOrder) {
  Flat before;
  for (int i = 0; i < 100000; ++i) {
    before.parents.push_back(kNoParent);
    before.names.push_back(absl::StrCat("e", i));
  }
  Flat after;
  after.parents.push_back(kNoParent);
  after.names.push_back("new");
  for (size_t i = 0; i < before.parents.size(); ++i) {
    after.parents.push_back(before.parents[i]);
    after.names.push_back(before.names[i]);
  }
  const EntityMatch m = MatchEntities(before.parents, before.Views(), after.parents, after.Views());
  EXPECT_FALSE(m.same_structure);
  EXPECT_EQ(m.kept, 100000u);
  EXPECT_EQ(m.before_of_after[0], EntityMatch::kNone);
  for (uint32_t k = 1; k < after.parents.size(); ++k) ASSERT_EQ(m.before_of_after[k], k - 1);
  ExpectMatches(before, after);
}

TEST(EntityMatch, ARenamedOrMovedEntityIsAnother) {
  // a(b, c) -> a(c), d(b): b moved to another parent; c keeps its identity.
  const Flat before{{kNoParent, 0, 0}, {"a", "b", "c"}};
  const Flat after{{kNoParent, 0, kNoParent, 2}, {"a", "c", "d", "b"}};
  const EntityMatch m = MatchEntities(before.parents, before.Views(), after.parents, after.Views());
  EXPECT_EQ(m.before_of_after, (std::vector<uint32_t>{0, 2, EntityMatch::kNone, EntityMatch::kNone}));
  EXPECT_EQ(m.after_of_before, (std::vector<uint32_t>{0, EntityMatch::kNone, 1}));
}

TEST(EntityMatch, UnnamedSiblingsAreMatchedByTheirOrder) {
  // Removing the first of three unnamed roots: by identity the first two are kept
  // (occurrences 0 and 1) and the third removed.
  const Flat before{{kNoParent, kNoParent, kNoParent}, {"", "", ""}};
  const Flat after{{kNoParent, kNoParent}, {"", ""}};
  const EntityMatch m = MatchEntities(before.parents, before.Views(), after.parents, after.Views());
  EXPECT_EQ(m.before_of_after, (std::vector<uint32_t>{0, 1}));
  EXPECT_EQ(m.after_of_before[2], EntityMatch::kNone);
}

std::vector<std::byte> Blob(const Flat& f) {
  EntityResourceContents contents;
  contents.parent_index = f.parents;
  MetadataSections meta;
  for (uint32_t k = 0; k < f.names.size(); ++k) {
    if (f.names[k].empty()) continue;
    meta.named_entities.push_back(k);
    meta.entity_names.push_back(f.names[k]);
  }
  std::move(meta).AppendTo(contents.component_types, kNativeEndianness);
  absl::StatusOr<std::vector<std::byte>> blob = WriteEntityResource(contents);
  EXPECT_TRUE(blob.ok()) << blob.status();
  return *blob;
}

TEST(EntityMatch, FromViews) {
  const Flat before{{kNoParent, 0, kNoParent}, {"a", "b", ""}};
  const Flat after{{kNoParent, kNoParent, 1, kNoParent}, {"z", "a", "b", ""}};
  const std::vector<std::byte> b = Blob(before);
  const std::vector<std::byte> a = Blob(after);
  STRATA_ASSERT_OK_AND_ASSIGN(EntityResourceView bv, EntityResourceView::Create(b));
  STRATA_ASSERT_OK_AND_ASSIGN(EntityResourceView av, EntityResourceView::Create(a));
  STRATA_ASSERT_OK_AND_ASSIGN(EntityMatch m, MatchEntities(bv, av));
  EXPECT_EQ(m.before_of_after, (std::vector<uint32_t>{EntityMatch::kNone, 0, 1, 2}));
  STRATA_ASSERT_OK_AND_ASSIGN(EntityMatch same, MatchEntities(bv, bv));
  EXPECT_TRUE(same.same_structure);
  EXPECT_EQ(same.kept, 3u);
  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<absl::string_view> names, EntityNames(av));
  EXPECT_EQ(names, (std::vector<absl::string_view>{"z", "a", "b", ""}));
}

TEST(EntityMatch, AnEntityNamedTwiceIsDataLoss) {
  EntityResourceContents contents;
  contents.parent_index = {kNoParent};
  contents.component_types.push_back(MakeStringSection(IdString32(kEntityNamesSection), {0, 0}, {},
                                                       std::vector<std::string>{"a", "b"}, kNativeEndianness));
  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<std::byte> blob, WriteEntityResource(contents));
  STRATA_ASSERT_OK_AND_ASSIGN(EntityResourceView view, EntityResourceView::Create(blob));
  EXPECT_THAT(EntityNames(view), StatusIs(absl::StatusCode::kDataLoss));
}

}  // namespace
}  // namespace strata
