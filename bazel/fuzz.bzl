"""strata_fuzzer(): one fuzz entry point, two binaries from one target.

    load("//bazel:fuzz.bzl", "strata_fuzzer")

    strata_fuzzer(name = "level_compiler_fuzzer", lib = ":level_compiler_fuzzer_lib")

`lib` is an alwayslink cc_library defining LLVMFuzzerTestOneInput. Under
`--config=fuzz` (clang-14, which defines strata_fuzz=1) the binary links libFuzzer's
main; under the normal gcc build it links a main that replays the files and directories
named on its command line, so `bazel run //pkg:name -- crash-file` reproduces a finding
without clang. tools/run_fuzzer.sh runs the libFuzzer binary for a bounded time.
"""

load("@rules_cc//cc:defs.bzl", "cc_binary")

def strata_fuzzer(name, lib, **kwargs):
    cc_binary(
        name = name,
        linkopts = select({
            "//bazel:fuzzing": ["-fsanitize=fuzzer"],
            "//conditions:default": [],
        }),
        deps = [lib] + select({
            "//bazel:fuzzing": [],
            "//conditions:default": ["//resource:fuzz_replay_main"],
        }),
        **kwargs
    )
