// The component types of the iteration article's benchmark, shared by the iteration
// tests and filter_benchmark: Position{x,y,z}, Velocity{x,y,z} and the empty tag Frozen.
//
//   auto position = pages.RegisterComponent<testing::Position>("Position");
#ifndef STRATA_ITERATION_TESTING_TEST_COMPONENTS_H_
#define STRATA_ITERATION_TESTING_TEST_COMPONENTS_H_

namespace strata::testing {

struct Position {
  float x, y, z;
};

struct Velocity {
  float x, y, z;
};

// Frozen: a tag; EntityPages stores no data for empty types.
struct Frozen {};

}  // namespace strata::testing

#endif  // STRATA_ITERATION_TESTING_TEST_COMPONENTS_H_
