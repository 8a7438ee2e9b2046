"""cc_test() for Strata's packages: rules_cc's cc_test plus the precompiled test header.

Load it in place of rules_cc's:

    load("//bazel:cc_test.bzl", "cc_test")

In plain builds, a test that depends on GoogleTest is compiled with
`-include testing/test_pch.h`, the precompiled GoogleTest, GoogleMock, Abseil and
standard headers of //testing:test_pch: about 1.6 s less per test file, 83 of 534 s of
CPU for a cold `bazel build //...`. Sanitizer builds (--config=asan, tsan, ubsan, fuzz
define strata_test_pch=off) do without it: at -O1 code generation dominates and the
header saved nothing measurable (710 against 686 s for a cold ASan build), and GCC
then reported a warning inside a standard header that it otherwise keeps quiet.
Everything else is passed to rules_cc's cc_test unchanged.
"""

load("@rules_cc//cc:defs.bzl", _cc_test = "cc_test")

_GTEST = [
    "@com_google_googletest//:gtest",
    "@com_google_googletest//:gtest_main",
]

def cc_test(name, deps = [], copts = [], **kwargs):
    """A cc_test whose GoogleTest sources use the precompiled test header."""
    if [d for d in deps if d in _GTEST]:
        sanitized = str(Label("//bazel:test_pch_off"))
        deps = deps + select({
            sanitized: [],
            "//conditions:default": [str(Label("//testing:test_pch"))],
        })
        copts = select({
            sanitized: [],
            "//conditions:default": ["-include", "testing/test_pch.h"],
        }) + copts
    _cc_test(name = name, deps = deps, copts = copts, **kwargs)
