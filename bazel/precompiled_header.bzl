"""precompiled_header(): a GCC precompiled header that cc targets can force-include.

Bazel 4's C++ rules have no precompiled headers. Every test translation unit parses
GoogleTest, GoogleMock and the same few Abseil and standard headers, about 1.6 s of a
2 s compile, three times over in CI (plain, ASan, TSan). This rule compiles those
headers once per configuration with exactly the flags of that configuration (the
toolchain's features, --copt and --cxxopt, the deps' include paths and defines), so a
test that starts with `-include <out>` loads the result instead of parsing them.

    precompiled_header(
        name = "test_pch",
        src = "test_pch_src.h",   # the headers to precompile, as #includes
        out = "test_pch.h",       # generated beside `out.gch` in the output tree
        deps = ["@com_google_googletest//:gtest", ...],
    )

A target depending on it and compiled with `copts = ["-include", "<package>/test_pch.h"]`
gets both files as inputs. The header is generated under bazel-out (not in the source
tree) so GCC, searching the quote include path, finds the copy that has the .gch beside
it. If the flags of a translation unit differ from the header's in a way GCC cares
about, GCC silently parses the header instead: slower, never wrong (-Winvalid-pch shows
when that happens).
"""

load("@bazel_tools//tools/build_defs/cc:action_names.bzl", "ACTION_NAMES")
load("@bazel_tools//tools/cpp:toolchain_utils.bzl", "find_cpp_toolchain")

def _precompiled_header_impl(ctx):
    cc_toolchain = find_cpp_toolchain(ctx)
    features = cc_common.configure_features(
        ctx = ctx,
        cc_toolchain = cc_toolchain,
        requested_features = ctx.features,
        unsupported_features = ctx.disabled_features,
    )
    deps_info = cc_common.merge_cc_infos(cc_infos = [d[CcInfo] for d in ctx.attr.deps])
    deps_context = deps_info.compilation_context

    header = ctx.actions.declare_file(ctx.attr.out)
    ctx.actions.expand_template(template = ctx.file.src, output = header, substitutions = {})
    gch = ctx.actions.declare_file(ctx.attr.out + ".gch")

    variables = cc_common.create_compile_variables(
        cc_toolchain = cc_toolchain,
        feature_configuration = features,
        source_file = header.path,
        output_file = gch.path,
        user_compile_flags = ctx.fragments.cpp.copts + ctx.fragments.cpp.cxxopts,
        include_directories = deps_context.includes,
        quote_include_directories = depset(
            [".", ctx.bin_dir.path],
            transitive = [deps_context.quote_includes],
        ),
        system_include_directories = deps_context.system_includes,
        preprocessor_defines = deps_context.defines,
        # -fPIC must match the test's objects for GCC to accept the header. Bazel
        # compiles binaries and tests position independent (.pic.o) in every mode but
        # opt (without --force_pic), as its usePicForBinaries does.
        # (--force_pic comes in through the `force_pic` attribute: the cpp fragment
        # does not show it to Starlark in this Bazel.)
        use_pic = ctx.attr.force_pic or ctx.var["COMPILATION_MODE"] != "opt",
    )
    command_line = cc_common.get_memory_inefficient_command_line(
        feature_configuration = features,
        action_name = ACTION_NAMES.cpp_compile,
        variables = variables,
    )
    env = cc_common.get_environment_variables(
        feature_configuration = features,
        action_name = ACTION_NAMES.cpp_compile,
        variables = variables,
    )
    compiler = cc_common.get_tool_for_action(
        feature_configuration = features,
        action_name = ACTION_NAMES.cpp_compile,
    )
    ctx.actions.run(
        executable = compiler,
        arguments = ["-x", "c++-header"] + command_line,
        env = env,
        inputs = depset([header], transitive = [deps_context.headers, cc_toolchain.all_files]),
        outputs = [gch],
        mnemonic = "CppPrecompileHeader",
        progress_message = "Precompiling %s" % header.short_path,
    )

    own = CcInfo(compilation_context = cc_common.create_compilation_context(
        headers = depset([header, gch]),
    ))
    return [
        DefaultInfo(files = depset([header, gch])),
        cc_common.merge_cc_infos(cc_infos = [own, deps_info]),
    ]

precompiled_header = rule(
    implementation = _precompiled_header_impl,
    attrs = {
        "src": attr.label(allow_single_file = [".h"], mandatory = True),
        "out": attr.string(mandatory = True),
        "deps": attr.label_list(providers = [CcInfo]),
        "force_pic": attr.bool(default = False),
        "_cc_toolchain": attr.label(
            default = Label("@bazel_tools//tools/cpp:current_cc_toolchain"),
        ),
    },
    fragments = ["cpp"],
    toolchains = ["@bazel_tools//tools/cpp:toolchain_type"],
    incompatible_use_toolchain_transition = True,
)
