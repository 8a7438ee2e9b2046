// A plain main for the level compiler fuzzer under the normal build: runs every file
// named on the command line (directories are walked) through the fuzz entry point, so
// `bazel run //engine:level_compiler_fuzzer -- crash-file` reproduces a finding
// without clang. Relative paths are relative to where `bazel run` was started.
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "resource/tool_io.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

int main(int argc, char** argv) {
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = strata::ResolveToolPath(argv[i]);
    std::error_code error;
    if (std::filesystem::is_directory(arg, error)) {
      for (const auto& entry : std::filesystem::directory_iterator(arg, error)) {
        if (entry.is_regular_file()) files.push_back(entry.path().string());
      }
    } else {
      files.push_back(arg);
    }
  }
  if (files.empty()) {
    std::fprintf(stderr, "usage: %s FILE_OR_DIR...\n", argv[0]);
    return 2;
  }
  for (const std::string& file : files) {
    absl::StatusOr<std::vector<std::byte>> bytes = strata::ReadToolFile(file);
    if (!bytes.ok()) {
      std::fprintf(stderr, "%s\n", bytes.status().ToString().c_str());
      return 1;
    }
    LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(bytes->data()), bytes->size());
  }
  std::printf("ran %zu inputs\n", files.size());
  return 0;
}
