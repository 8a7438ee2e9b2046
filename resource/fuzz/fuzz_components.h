// Component types for fuzzing and the seed corpus: "fuzz_fixed" (12-byte instances:
// three floats, spawn order 0) and "fuzz_var" (variable-size: a uint32 count, then that
// many uint32 values; spawn order 10), with compile and spawn functions. The spawn
// functions parse their data as defensively as a real component must, since the
// blob's author controls it.
#ifndef STRATA_RESOURCE_FUZZ_FUZZ_COMPONENTS_H_
#define STRATA_RESOURCE_FUZZ_FUZZ_COMPONENTS_H_

#include <cstdint>

#include "resource/entity_compiler.h"
#include "resource/entity_spawner.h"

namespace strata::fuzz_internal {

// FuzzWorld: where the fuzz spawn functions put instances (the spawn context).
struct FuzzWorld {
  uint64_t fixed_instances = 0;
  uint64_t var_values = 0;
  uint64_t checksum = 0;
};

// Compiler / Spawner: process-wide registries with both fuzz types registered.
const EntityCompiler& Compiler();
const EntitySpawner& Spawner();

}  // namespace strata::fuzz_internal

#endif  // STRATA_RESOURCE_FUZZ_FUZZ_COMPONENTS_H_
