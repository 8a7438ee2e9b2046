"""cc_test() for Strata's packages: rules_cc's cc_test plus the precompiled test header.

Load it in place of rules_cc's:

    load("//bazel:cc_test.bzl", "cc_test")

A test that depends on GoogleTest is compiled with `-include testing/test_pch.h`, the
precompiled GoogleTest, GoogleMock, Abseil and standard headers of //testing:test_pch,
which saves about 1.6 s of each such test file's compile in every configuration.
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
        deps = deps + [Label("//testing:test_pch")]
        copts = ["-include", "testing/test_pch.h"] + copts
    _cc_test(name = name, deps = deps, copts = copts, **kwargs)
