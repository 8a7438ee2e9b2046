#!/usr/bin/python3
"""Turns the C++ blocks of a README into translation units a cc_test compiles and runs.

Used by readme_snippet_test() in tools/readme_snippet_test.bzl; see that file for the
mark-up convention. Usage:

  readme_snippets.py README.md --label entity/README.md --out_dir DIR --max_blocks 16

writes DIR/<prefix>_1.cc ... DIR/<prefix>_<max_blocks>.cc (one per block; the unused
ones stay empty, since Bazel needs the outputs known before the README is read) and
DIR/<prefix>_main.cc, which runs every block in README order and fails the test on the
first block that fails.
"""

import argparse
import os
import re
import sys

# Fence info strings that mark a C++ block. Anything else (text, sh, ...) is left alone.
CPP_LANGUAGES = {"cpp", "c++", "cc", "cxx"}
COMPILE_ONLY = "// readme-snippet: compile-only"
MAIN = re.compile(r"^\s*int\s+main\s*\(\s*(void)?\s*\)|^\s*int\s+main\s*\(\s*int\b",
                  re.MULTILINE)
MAIN_WITH_ARGS = re.compile(r"^\s*int\s+main\s*\(\s*int\b", re.MULTILINE)
INCLUDE = re.compile(r"^\s*#\s*include\b")


class SnippetError(Exception):
    pass


def extract_blocks(text):
    """Returns [(first_line_number, language, [lines])] for every fenced block."""
    blocks = []
    lines = text.split("\n")
    fence = None  # (marker, language, start line number, body lines)
    for number, line in enumerate(lines, start=1):
        stripped = line.strip()
        if fence is None:
            match = re.match(r"^(```+|~~~+)\s*([^\s`]*)", stripped)
            if match:
                fence = (match.group(1), match.group(2).lower(), number + 1, [])
            continue
        if stripped.startswith(fence[0]) and stripped.strip(fence[0][0]) == "":
            blocks.append((fence[2], fence[1], fence[3]))
            fence = None
            continue
        fence[3].append(line)
    if fence is not None:
        raise SnippetError(f"line {fence[2] - 1}: fenced block is never closed")
    return blocks


def cpp_blocks(text):
    return [b for b in extract_blocks(text) if b[1] in CPP_LANGUAGES]


def render_block(index, first_line, lines, label):
    """Returns (source, kind) with kind one of "fragment", "main", "main_args"."""
    body = "\n".join(lines)
    includes = []
    rest = []
    for offset, line in enumerate(lines):
        if INCLUDE.match(line):
            includes.append(f'#line {first_line + offset} "{label}"\n{line}')
        else:
            rest.append((first_line + offset, line))
    out = [f"// Generated from {label} by tools/readme_snippets.py. Do not edit.",
           '#include "absl/status/status.h"',
           '#include "base/status_macros.h"']
    out += includes
    if MAIN.search(body):
        kind = "main_args" if MAIN_WITH_ARGS.search(body) else "main"
        # The program keeps its file scope; only its main is renamed so that several
        # blocks can link into one test binary.
        out.append(f"#define main StrataReadmeSnippetMain{index}")
        for number, line in rest:
            out.append(f'#line {number} "{label}"\n{line}')
        out.append("#undef main")
        return "\n".join(out) + "\n", kind
    out.append(f"absl::Status StrataReadmeSnippet{index}() {{")
    for number, line in rest:
        out.append(f'#line {number} "{label}"\n{line}')
    out.append("  return absl::OkStatus();")
    out.append("}")
    return "\n".join(out) + "\n", "fragment"


def render_main(kinds, label):
    out = [f"// Generated from {label} by tools/readme_snippets.py. Do not edit.",
           "#include <cstdio>", "",
           '#include "absl/status/status.h"', ""]
    for index, (kind, _, _) in enumerate(kinds, start=1):
        if kind == "fragment":
            out.append(f"absl::Status StrataReadmeSnippet{index}();")
        elif kind == "main":
            out.append(f"int StrataReadmeSnippetMain{index}();")
        else:
            out.append(f"int StrataReadmeSnippetMain{index}(int argc, char** argv);")
    out += ["", "int main(int argc, char** argv) {",
            "  (void)argc;", "  (void)argv;", "  int passed = 0, failed = 0, skipped = 0;"]
    for index, (kind, line, compile_only) in enumerate(kinds, start=1):
        where = f"{label}:{line}"
        if compile_only:
            out.append(f'  std::printf("SKIP (compile-only) {where}\\n");')
            out.append("  ++skipped;")
            continue
        if kind == "fragment":
            out += ["  {",
                    f"    const absl::Status status = StrataReadmeSnippet{index}();",
                    "    if (!status.ok()) {",
                    f'      std::printf("FAIL {where}: %s\\n", status.ToString().c_str());',
                    "      ++failed;",
                    "    } else {",
                    f'      std::printf("PASS {where}\\n");',
                    "      ++passed;",
                    "    }", "  }"]
        else:
            call = (f"StrataReadmeSnippetMain{index}(argc, argv)" if kind == "main_args"
                    else f"StrataReadmeSnippetMain{index}()")
            out += ["  {",
                    f"    const int code = {call};",
                    "    if (code != 0) {",
                    f'      std::printf("FAIL {where}: main returned %d\\n", code);',
                    "      ++failed;",
                    "    } else {",
                    f'      std::printf("PASS {where}\\n");',
                    "      ++passed;",
                    "    }", "  }"]
    out += ['  std::printf("%d passed, %d failed, %d skipped\\n", passed, failed, skipped);',
            "  return failed == 0 ? 0 : 1;", "}"]
    return "\n".join(out) + "\n"


def generate(text, label, max_blocks):
    """Returns ([source of block 1..max_blocks], main source)."""
    blocks = cpp_blocks(text)
    if not blocks:
        raise SnippetError(f"{label} has no C++ block (```cpp); nothing to test")
    if len(blocks) > max_blocks:
        raise SnippetError(
            f"{label} has {len(blocks)} C++ blocks, more than max_blocks = {max_blocks}; "
            "raise max_blocks in the readme_snippet_test() call")
    sources = []
    kinds = []
    for index, (line, _, lines) in enumerate(blocks, start=1):
        source, kind = render_block(index, line, lines, label)
        compile_only = any(l.strip() == COMPILE_ONLY for l in lines)
        sources.append(source)
        kinds.append((kind, line, compile_only))
    while len(sources) < max_blocks:
        sources.append("// No README block for this file.\n")
    return sources, render_main(kinds, label)


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("readme")
    parser.add_argument("--label", help="name used in #line and messages")
    parser.add_argument("--out_dir", required=True)
    parser.add_argument("--prefix", default="readme_snippet")
    parser.add_argument("--max_blocks", type=int, default=16)
    args = parser.parse_args(argv)
    label = args.label or args.readme
    try:
        with open(args.readme, encoding="utf-8") as f:
            text = f.read()
        sources, main_source = generate(text, label, args.max_blocks)
    except (OSError, SnippetError) as error:
        print(f"readme_snippets: {label}: {error}", file=sys.stderr)
        return 1
    os.makedirs(args.out_dir, exist_ok=True)
    for index, source in enumerate(sources, start=1):
        with open(os.path.join(args.out_dir, f"{args.prefix}_{index}.cc"), "w",
                  encoding="utf-8") as f:
            f.write(source)
    with open(os.path.join(args.out_dir, f"{args.prefix}_main.cc"), "w",
              encoding="utf-8") as f:
        f.write(main_source)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
