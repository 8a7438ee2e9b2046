// inspect: lists or exports (--json) a resource blob with every sample component
// (component/tools.h):
//   bazel run //engine:inspect -- [--json] out.entities
#include "component/tools.h"
#include "engine/sample_components.h"

int main(int argc, char** argv) { return strata::RunInspectTool(strata::SampleRegistry(), argc, argv); }
