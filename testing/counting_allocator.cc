#include "testing/counting_allocator.h"

namespace strata::testing {

// constinit: usable from operator new before any dynamic initialisation has run.
constinit AllocationCounter global_allocation_counter;

AllocationCounter& GlobalAllocationCounter() { return global_allocation_counter; }

// Weak: //testing:global_allocation_counter provides the strong definition that
// returns true, so linking it is all a test has to do.
__attribute__((weak)) bool GlobalAllocationCountingEnabled() { return false; }

}  // namespace strata::testing
