// compile: the entity compiler with every sample component (component/tools.h):
//   bazel run //engine:compile -- engine/levels/default.json out.entities
#include "component/tools.h"
#include "engine/sample_components.h"

int main(int argc, char** argv) { return strata::RunCompileTool(strata::SampleRegistry(), argc, argv); }
