"""readme_snippet_test: compiles and runs the C++ blocks of a package README.

Convention (docs/README-conventions.md says the same for README writers):

- Every fenced block whose info string is `cpp` (or `c++`, `cc`, `cxx`) is a test.
  Use `text` or `sh` for anything that is not C++ to compile (pseudo-code, shell).
- A block containing `int main()` (or `int main(int argc, char** argv)`) is a whole
  program: it is compiled as written, at file scope, and its main is run.
- Any other block is a fragment: its `#include` lines go to file scope, the rest
  becomes the body of a function returning `absl::Status` (an OK status is appended),
  so a fragment may use `STRATA_RETURN_IF_ERROR` / `STRATA_ASSIGN_OR_RETURN`, declare
  local types, and fail by returning an error. The fragment is run too.
- Every block gets `absl/status/status.h` and `base/status_macros.h`; everything else
  it uses, it includes itself (which also shows the reader the header to include).
- A line `// readme-snippet: compile-only` in a block compiles it without running it
  (for a block that needs a window, a file or a device).
- Compile errors point at README lines (`#line`), and the test prints
  `PASS|FAIL <README>:<line>` for each block.

Adoption in a package's BUILD (deps: the libraries the blocks include):

    load("//tools:readme_snippet_test.bzl", "readme_snippet_test")

    readme_snippet_test(
        name = "readme_snippet_test",
        deps = [":entity_manager", ":sparse_store"],
    )
"""

load("@rules_cc//cc:defs.bzl", "cc_test")

def readme_snippet_sources(name, readme, max_blocks = 8, testonly = True):
    """Generates the sources of readme_snippet_test; returns their labels.

    Used on its own by tools/ to build a snippet binary that must fail.
    """
    prefix = name + "_gen"
    outs = ["%s_%d.cc" % (prefix, i) for i in range(1, max_blocks + 1)]
    outs.append(prefix + "_main.cc")
    native.genrule(
        name = name + "_sources",
        srcs = [readme],
        outs = outs,
        tools = ["//tools:readme_snippets.py"],
        cmd = ("$(location //tools:readme_snippets.py) $(location %s) " +
               "--label %s/%s --out_dir $(@D) --prefix %s --max_blocks %d") % (
            readme,
            native.package_name(),
            readme,
            prefix,
            max_blocks,
        ),
        testonly = testonly,
    )
    return outs

SNIPPET_DEPS = [
    "//base:status_macros",
    "@com_google_absl//absl/status",
]

def readme_snippet_test(name, readme = "README.md", deps = [], max_blocks = 8, **kwargs):
    """Defines `name`, a cc_test that compiles and runs every C++ block of `readme`.

    Args:
      name: the test's name.
      readme: the Markdown file, in this package.
      deps: libraries the blocks include (the status macros are added).
      max_blocks: how many C++ blocks the README may hold; the extractor fails with a
        clear message when it holds more. Bazel must know the generated files before
        reading the README, so unused ones are generated empty.
      **kwargs: passed to the cc_test (size, tags, ...).
    """
    cc_test(
        name = name,
        srcs = readme_snippet_sources(name, readme, max_blocks),
        deps = deps + SNIPPET_DEPS,
        **kwargs
    )
