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

# Upstream Abseil target name -> pkg-config module, per absl/ package. Only the targets
# listed here exist in the wrapper; add one when a package starts to use it.
_ABSL_TARGETS = {
    "algorithm": {"algorithm": "absl_algorithm", "container": "absl_algorithm_container"},
    "base": {
        "base": "absl_base",
        "config": "absl_config",
        "core_headers": "absl_core_headers",
        "dynamic_annotations": "absl_dynamic_annotations",
        "endian": "absl_endian",
        "log_severity": "absl_log_severity",
        "prefetch": "absl_prefetch",
        "raw_logging_internal": "absl_raw_logging_internal",
    },
    "cleanup": {"cleanup": "absl_cleanup"},
    "container": {
        "btree": "absl_btree",
        "fixed_array": "absl_fixed_array",
        "flat_hash_map": "absl_flat_hash_map",
        "flat_hash_set": "absl_flat_hash_set",
        "inlined_vector": "absl_inlined_vector",
        "node_hash_map": "absl_node_hash_map",
        "node_hash_set": "absl_node_hash_set",
    },
    "debugging": {
        "failure_signal_handler": "absl_failure_signal_handler",
        "stacktrace": "absl_stacktrace",
        "symbolize": "absl_symbolize",
    },
    "flags": {
        "flag": "absl_flags",
        "marshalling": "absl_flags_marshalling",
        "parse": "absl_flags_parse",
        "usage": "absl_flags_usage",
    },
    "functional": {
        "any_invocable": "absl_any_invocable",
        "bind_front": "absl_bind_front",
        "function_ref": "absl_function_ref",
    },
    "hash": {"hash": "absl_hash"},
    "memory": {"memory": "absl_memory"},
    "meta": {"type_traits": "absl_type_traits"},
    "numeric": {"bits": "absl_bits", "int128": "absl_int128"},
    "random": {
        "bit_gen_ref": "absl_random_bit_gen_ref",
        "distributions": "absl_random_distributions",
        "random": "absl_random_random",
    },
    "status": {"status": "absl_status", "statusor": "absl_statusor"},
    "strings": {
        "cord": "absl_cord",
        "str_format": "absl_str_format",
        "strings": "absl_strings",
    },
    "synchronization": {"synchronization": "absl_synchronization"},
    "time": {"time": "absl_time"},
    "types": {
        "compare": "absl_compare",
        "optional": "absl_optional",
        "span": "absl_span",
        "variant": "absl_variant",
    },
    "utility": {"utility": "absl_utility"},
}

def _pkg_config_libs(rctx, module):
    result = rctx.execute(["pkg-config", "--libs", module])
    if result.return_code != 0:
        fail("pkg-config --libs %s failed (run tools/setup.sh): %s" % (module, result.stderr))
    return [flag for flag in result.stdout.strip().split(" ") if flag]

def _system_absl_impl(rctx):
    root = rctx.path(rctx.attr.include_dir)
    if not root.exists:
        fail("%s not found: run tools/setup.sh to install libabsl-dev" % root)
    rctx.file("WORKSPACE", 'workspace(name = "%s")\n' % rctx.name)
    rctx.file("BUILD.bazel", "")
    for package in root.readdir():
        # A real directory per package so it can hold a BUILD file; its contents are
        # symlinks into the system headers.
        for child in package.readdir():
            rctx.symlink(child, "absl/%s/%s" % (package.basename, child.basename))
        lines = [
            'package(default_visibility = ["//visibility:public"])',
            "",
            "cc_library(",
            '    name = "headers_internal",',
            '    hdrs = glob(["**/*.h", "**/*.inc"]),',
            '    visibility = ["//visibility:private"],',
            ")",
        ]
        for target, module in sorted(_ABSL_TARGETS.get(package.basename, {}).items()):
            lines += [
                "",
                "cc_library(",
                '    name = "%s",' % target,
                '    deps = [":headers_internal"],',
                "    linkopts = %s," % repr(_pkg_config_libs(rctx, module)),
                ")",
            ]
        rctx.file("absl/%s/BUILD.bazel" % package.basename, "\n".join(lines) + "\n")

system_absl = repository_rule(
    implementation = _system_absl_impl,
    local = True,
    attrs = {"include_dir": attr.string(default = "/usr/include/absl")},
    doc = "Abseil from libabsl-dev, with upstream labels such as //absl/container:flat_hash_map.",
)
