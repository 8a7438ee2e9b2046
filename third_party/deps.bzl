"""strata_dependencies(): every external repository Strata needs, in one call.

Strata's own WORKSPACE and every engine that consumes Strata call this, so the two cannot
drift:

    local_repository(name = "strata", path = "/path/to/strata")
    load("@strata//third_party:deps.bzl", "strata_dependencies")
    strata_dependencies()

Nothing here downloads: each repository is a shim shipped by Debian's
bazel-bootstrap-source or a wrapper over a Debian package that tools/setup.sh installs.
The names and target labels are the upstream projects' own, and a repository the
WORKSPACE declared before the call is left alone, so an engine that brings its own
Abseil, GoogleTest, ... keeps it (declare it before calling strata_dependencies()).
"""

load(":system_repos.bzl", "strata_directory", "system_absl", "system_library")

# Debian's bazel-bootstrap-source ships rules_cc and rules_java shims that forward to the
# native rules.
_BAZEL_SHIMS = "/usr/src/bazel-bootstrap/mock_repos"

def _maybe(repository_rule, name, **kwargs):
    if not native.existing_rule(name):
        repository_rule(name = name, **kwargs)

def strata_dependencies():
    """Declares every repository Strata needs that the WORKSPACE has not declared yet."""

    # --- Bazel's own rule sets -------------------------------------------------------
    _maybe(native.local_repository, "rules_cc", path = _BAZEL_SHIMS + "/rules_cc")
    _maybe(native.local_repository, "rules_java", path = _BAZEL_SHIMS + "/rules_java")

    # Bazel 4 fetches this for `bazel test` (coverage support) unless it exists; a stub.
    _maybe(
        strata_directory,
        "remote_coverage_tools",
        anchor = Label("//third_party:BUILD"),
        path = "remote_coverage_tools",
    )

    # --- C++ libraries -----------------------------------------------------------------
    # Abseil 20220623 (libabsl-dev): one BUILD package per absl/ directory, link flags
    # from its pkg-config files.
    _maybe(system_absl, "com_google_absl")

    # GoogleTest 1.12 is compiled from Debian's sources so it uses the build's flags.
    _maybe(
        native.new_local_repository,
        "com_google_googletest",
        build_file = str(Label("//third_party:googletest.BUILD")),
        path = "/usr/src/googletest",
    )

    _maybe(
        system_library,
        "com_github_google_benchmark",
        build_file = Label("//third_party:benchmark.BUILD"),
        include_dirs = {"benchmark": "/usr/include/benchmark"},
    )

    _maybe(
        system_library,
        "com_github_google_highway",
        build_file = Label("//third_party:highway.BUILD"),
        include_dirs = {"hwy": "/usr/include/hwy"},
    )

    _maybe(
        system_library,
        "nlohmann_json",
        build_file = Label("//third_party:nlohmann_json.BUILD"),
        include_dirs = {"nlohmann": "/usr/include/nlohmann"},
    )

    _maybe(
        system_library,
        "xxhash",
        build_file = Label("//third_party:xxhash.BUILD"),
        include_files = {"xxhash.h": "/usr/include/xxhash.h"},
    )

    _maybe(
        system_library,
        "oneTBB",
        build_file = Label("//third_party:tbb.BUILD"),
        include_dirs = {
            "oneapi": "/usr/include/oneapi",
            "tbb": "/usr/include/tbb",
        },
    )
