"""Repository rules that wrap Debian-installed C++ libraries as Bazel repositories.

Nothing here downloads: each rule symlinks headers that tools/setup.sh installed and
writes BUILD files whose target labels match the upstream projects' own Bazel labels.
"""

def _symlink_includes(rctx):
    for name, path in rctx.attr.include_dirs.items():
        if not rctx.path(path).exists:
            fail("%s not found: run tools/setup.sh to install Strata's dependencies" % path)
        rctx.symlink(path, name)
    for name, path in rctx.attr.include_files.items():
        if not rctx.path(path).exists:
            fail("%s not found: run tools/setup.sh to install Strata's dependencies" % path)
        rctx.symlink(path, name)

def _system_library_impl(rctx):
    _symlink_includes(rctx)
    rctx.file("WORKSPACE", 'workspace(name = "%s")\n' % rctx.name)
    rctx.symlink(rctx.attr.build_file, "BUILD.bazel")

system_library = repository_rule(
    implementation = _system_library_impl,
    local = True,
    attrs = {
        "build_file": attr.label(mandatory = True, allow_single_file = True),
        "include_dirs": attr.string_dict(doc = "directory in the repository -> system directory"),
        "include_files": attr.string_dict(doc = "file in the repository -> system file"),
    },
    doc = "A system-installed library: symlinked headers plus a hand-written BUILD file.",
)

# Upstream Abseil targets per absl/ package: name -> (pkg-config module, its headers as
# upstream Abseil 20220623's BUILD.bazel lists them). Only the targets listed here exist
# in the wrapper; add one (with its upstream `hdrs`) when a package starts to use it.
#
# Each target exposes only its own headers, so a Strata target that includes a header
# without depending on its target fails to compile, naming the header, instead of
# compiling and then failing to link. Headers no listed target owns (the internal ones)
# are reachable only through the targets whose headers include them.
_ABSL_TARGETS = {
    "algorithm": {
        "algorithm": ("absl_algorithm", ["algorithm.h"]),
        "container": ("absl_algorithm_container", ["container.h"]),
    },
    "base": {
        "base": ("absl_base", [
            "call_once.h",
            "casts.h",
            "internal/cycleclock.h",
            "internal/low_level_scheduling.h",
            "internal/per_thread_tls.h",
            "internal/spinlock.h",
            "internal/sysinfo.h",
            "internal/thread_identity.h",
            "internal/tsan_mutex_interface.h",
            "internal/unscaledcycleclock.h",
        ]),
        "config": ("absl_config", ["config.h", "options.h", "policy_checks.h"]),
        "core_headers": ("absl_core_headers", [
            "attributes.h",
            "const_init.h",
            "macros.h",
            "optimization.h",
            "port.h",
            "thread_annotations.h",
        ]),
        "dynamic_annotations": ("absl_dynamic_annotations", ["dynamic_annotations.h"]),
        "endian": ("absl_endian", ["internal/endian.h", "internal/unaligned_access.h"]),
        "log_severity": ("absl_log_severity", ["log_severity.h"]),
        "prefetch": ("absl_prefetch", ["internal/prefetch.h"]),
        "raw_logging_internal": ("absl_raw_logging_internal", ["internal/raw_logging.h"]),
    },
    "cleanup": {
        "cleanup": ("absl_cleanup", ["cleanup.h"]),
    },
    "container": {
        "btree": ("absl_btree", ["btree_map.h", "btree_set.h"]),
        "fixed_array": ("absl_fixed_array", ["fixed_array.h"]),
        "flat_hash_map": ("absl_flat_hash_map", ["flat_hash_map.h"]),
        "flat_hash_set": ("absl_flat_hash_set", ["flat_hash_set.h"]),
        "inlined_vector": ("absl_inlined_vector", ["inlined_vector.h"]),
        "node_hash_map": ("absl_node_hash_map", ["node_hash_map.h"]),
        "node_hash_set": ("absl_node_hash_set", ["node_hash_set.h"]),
    },
    "debugging": {
        "failure_signal_handler": ("absl_failure_signal_handler", [
            "failure_signal_handler.h",
        ]),
        "stacktrace": ("absl_stacktrace", ["stacktrace.h"]),
        "symbolize": ("absl_symbolize", ["internal/symbolize.h", "symbolize.h"]),
    },
    "flags": {
        "flag": ("absl_flags", ["declare.h", "flag.h"]),
        "marshalling": ("absl_flags_marshalling", ["marshalling.h"]),
        "parse": ("absl_flags_parse", ["internal/parse.h", "parse.h"]),
        "usage": ("absl_flags_usage", ["usage.h"]),
    },
    "functional": {
        "any_invocable": ("absl_any_invocable", ["any_invocable.h"]),
        "bind_front": ("absl_bind_front", ["bind_front.h"]),
        "function_ref": ("absl_function_ref", ["function_ref.h"]),
    },
    "hash": {
        "hash": ("absl_hash", ["hash.h"]),
    },
    "memory": {
        "memory": ("absl_memory", ["memory.h"]),
    },
    "meta": {
        "type_traits": ("absl_type_traits", ["type_traits.h"]),
    },
    "numeric": {
        "bits": ("absl_bits", ["bits.h", "internal/bits.h"]),
        "int128": ("absl_int128", ["int128.h"]),
    },
    "random": {
        "bit_gen_ref": ("absl_random_bit_gen_ref", ["bit_gen_ref.h"]),
        "distributions": ("absl_random_distributions", [
            "bernoulli_distribution.h",
            "beta_distribution.h",
            "discrete_distribution.h",
            "distributions.h",
            "exponential_distribution.h",
            "gaussian_distribution.h",
            "log_uniform_int_distribution.h",
            "poisson_distribution.h",
            "uniform_int_distribution.h",
            "uniform_real_distribution.h",
            "zipf_distribution.h",
        ]),
        "random": ("absl_random_random", ["random.h"]),
    },
    "status": {
        "status": ("absl_status", ["status.h", "status_payload_printer.h"]),
        "statusor": ("absl_statusor", ["statusor.h"]),
    },
    "strings": {
        "cord": ("absl_cord", ["cord.h", "cord_buffer.h"]),
        "str_format": ("absl_str_format", ["str_format.h"]),
        "strings": ("absl_strings", [
            "ascii.h",
            "charconv.h",
            "escaping.h",
            "internal/string_constant.h",
            "match.h",
            "numbers.h",
            "str_cat.h",
            "str_join.h",
            "str_replace.h",
            "str_split.h",
            "string_view.h",
            "strip.h",
            "substitute.h",
        ]),
    },
    "synchronization": {
        "synchronization": ("absl_synchronization", [
            "barrier.h",
            "blocking_counter.h",
            "internal/create_thread_identity.h",
            "internal/futex.h",
            "internal/per_thread_sem.h",
            "internal/waiter.h",
            "mutex.h",
            "notification.h",
        ]),
    },
    "time": {
        "time": ("absl_time", ["civil_time.h", "clock.h", "time.h"]),
    },
    "types": {
        "compare": ("absl_compare", ["compare.h"]),
        "optional": ("absl_optional", ["optional.h"]),
        "span": ("absl_span", ["span.h"]),
        "variant": ("absl_variant", ["variant.h"]),
    },
    "utility": {
        "utility": ("absl_utility", ["utility.h"]),
    },
}

def _pkg_config_libs(rctx, module):
    result = rctx.execute(["pkg-config", "--libs", module])
    if result.return_code != 0:
        fail("pkg-config --libs %s failed (run tools/setup.sh): %s" % (module, result.stderr))
    return [flag for flag in result.stdout.strip().split(" ") if flag]

def _abseil_includes(rctx, root):
    """Returns {"absl/x/y.h": ["absl/...", ...]}: the Abseil headers each header includes."""
    result = rctx.execute([
        "grep",
        "-r",
        "-o",
        "-H",
        "--include=*.h",
        "--include=*.inc",
        '^#include "absl/[^"]*"',
        str(root),
    ])
    if result.return_code != 0:
        fail("could not scan %s: %s" % (root, result.stderr))
    prefix = str(root)[:-len("absl")]
    includes = {}
    for line in result.stdout.splitlines():
        path, _, directive = line.partition(":")
        header = path[len(prefix):]
        includes.setdefault(header, []).append(directive.split('"')[1])
    return includes

def _abseil_headers(rctx, root):
    """Every header under root, as "absl/<package>/<path>", grouped by package."""
    result = rctx.execute(
        ["find", str(root), "-type", "f", "(", "-name", "*.h", "-o", "-name", "*.inc", ")"],
    )
    if result.return_code != 0:
        fail("could not list %s: %s" % (root, result.stderr))
    prefix = str(root)[:-len("absl")]
    by_package = {}
    for path in sorted(result.stdout.splitlines()):
        header = path[len(prefix):]
        by_package.setdefault(header.split("/")[1], []).append(header)
    return by_package

def _starlark_list(items, indent):
    if not items:
        return "[]"
    pad = " " * indent
    return "[\n" + "".join(["%s    %r,\n" % (pad, item) for item in items]) + pad + "]"

def _system_absl_impl(rctx):
    root = rctx.path(rctx.attr.include_dir)
    if not root.exists:
        fail("%s not found: run tools/setup.sh to install libabsl-dev" % root)
    rctx.file("WORKSPACE", 'workspace(name = "%s")\n' % rctx.name)

    headers_by_package = _abseil_headers(rctx, root)
    includes = _abseil_includes(rctx, root)
    known = {}
    for headers in headers_by_package.values():
        for header in headers:
            known[header] = True

    # header -> the listed target that owns it.
    owner = {}
    for package, targets in _ABSL_TARGETS.items():
        for target, (_, hdrs) in targets.items():
            for hdr in hdrs:
                owner["absl/%s/%s" % (package, hdr)] = "//absl/%s:%s" % (package, target)

    # libabsl-dev installs the headers in /usr/include, which the compiler searches
    # last, so a header of a target missing from deps would be found there and the
    # mistake would surface only at link time. Every target below puts a directory
    # in front of /usr/include that holds, for every Abseil header, a stub that fails
    # the compile naming the header and the target to depend on; a header the target's
    # deps provide is found first, in the repository itself.
    for headers in headers_by_package.values():
        for header in headers:
            if header in owner:
                message = "%s is not in this target's deps: add @%s%s" % (
                    header,
                    rctx.name,
                    owner[header],
                )
            else:
                message = ("%s is internal to Abseil: include the public header and " +
                           "depend on its target") % header
            rctx.file("missing_dep/" + header, "#error \"%s\"\n" % message)
    rctx.file("BUILD.bazel", "\n".join([
        "# Generated by @strata//third_party:system_repos.bzl; see missing_dep_guard there.",
        "cc_library(",
        '    name = "missing_dep_guard",',
        '    hdrs = glob(["missing_dep/**"]),',
        '    includes = ["missing_dep"],',
        '    visibility = ["//:__subpackages__"],',
        ")",
        "",
    ]))

    for package in root.readdir():
        # A real directory per package so it can hold a BUILD file; its contents are
        # symlinks into the system headers.
        for child in package.readdir():
            rctx.symlink(child, "absl/%s/%s" % (package.basename, child.basename))

    for package in root.readdir():
        name = package.basename
        own = [h for h in headers_by_package.get(name, []) if h not in owner]
        lines = [
            "# Generated by @strata//third_party:system_repos.bzl from %s." % root,
            'package(default_visibility = ["//visibility:public"])',
            "",
            "# Headers no listed target owns, for the targets of this repository only.",
            "cc_library(",
            '    name = "headers_internal",',
            "    hdrs = %s," % _starlark_list([h[len("absl/%s/" % name):] for h in own], 4),
            '    visibility = ["//:__subpackages__"],',
            ")",
        ]
        for target, (module, hdrs) in sorted(_ABSL_TARGETS.get(name, {}).items()):
            # Every Abseil header this target's headers reach through headers no target
            # owns; an owned header on the way makes its target a dependency.
            queue = ["absl/%s/%s" % (name, hdr) for hdr in hdrs]
            seen = {h: True for h in queue}
            deps = {}
            i = 0
            for _ in range(100000):
                if i >= len(queue):
                    break
                header = queue[i]
                i += 1
                for included in includes.get(header, []):
                    if included not in known or included in seen:
                        continue
                    seen[included] = True
                    if included in owner:
                        deps[owner[included]] = True
                    else:
                        deps["//absl/%s:headers_internal" % included.split("/")[1]] = True
                        queue.append(included)
            deps.pop("//absl/%s:%s" % (name, target), None)
            deps["//:missing_dep_guard"] = True
            lines += [
                "",
                "cc_library(",
                '    name = "%s",' % target,
                "    hdrs = %s," % _starlark_list(hdrs, 4),
                "    linkopts = %r," % _pkg_config_libs(rctx, module),
                "    deps = %s," % _starlark_list(sorted(deps.keys()), 4),
                ")",
            ]
        rctx.file("absl/%s/BUILD.bazel" % name, "\n".join(lines) + "\n")

system_absl = repository_rule(
    implementation = _system_absl_impl,
    local = True,
    attrs = {"include_dir": attr.string(default = "/usr/include/absl")},
    doc = "Abseil from libabsl-dev, with upstream labels such as //absl/container:flat_hash_map.",
)

def _strata_directory_impl(rctx):
    directory = rctx.path(rctx.attr.anchor).dirname.get_child(rctx.attr.path)
    if not directory.exists:
        fail("%s not found" % directory)
    for child in directory.readdir():
        rctx.symlink(child, child.basename)

strata_directory = repository_rule(
    implementation = _strata_directory_impl,
    local = True,
    attrs = {
        "anchor": attr.label(mandatory = True, allow_single_file = True),
        "path": attr.string(mandatory = True, doc = "directory, relative to anchor's"),
    },
    doc = """A directory of Strata's source tree as a repository. Unlike local_repository's
    path, which is relative to the main workspace, this works when Strata is itself an
    external repository.""",
)
