#!/usr/bin/python3
"""Unit tests of tools/readme_snippets.py: block extraction, wrapping, and errors."""

import os
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import readme_snippets  # noqa: E402


def fence(language, body):
    return f"```{language}\n{body}\n```\n"


class ExtractTest(unittest.TestCase):
    def test_only_cpp_blocks_are_taken(self):
        text = ("intro\n" + fence("cpp", "int a = 1;") + fence("sh", "ls") +
                fence("", "plain") + fence("c++", "int b = 2;") + fence("CC", "int c;"))
        blocks = readme_snippets.cpp_blocks(text)
        self.assertEqual([b[2] for b in blocks], [["int a = 1;"], ["int b = 2;"],
                                                 ["int c;"]])
        self.assertEqual(blocks[0][0], 3)  # the block's first line, 1-based

    def test_tilde_fences_and_longer_fences(self):
        text = "~~~cpp\nint x;\n~~~\n````cpp\n```\n````\n"
        blocks = readme_snippets.cpp_blocks(text)
        self.assertEqual([b[2] for b in blocks], [["int x;"], ["```"]])

    def test_unclosed_fence_is_an_error(self):
        with self.assertRaisesRegex(readme_snippets.SnippetError, "line 2.*never closed"):
            readme_snippets.cpp_blocks("x\n```cpp\nint a;\n")

    def test_empty_readme_has_no_blocks(self):
        self.assertEqual(readme_snippets.cpp_blocks(""), [])


class GenerateTest(unittest.TestCase):
    def test_fragment_is_wrapped_with_includes_hoisted(self):
        text = fence("cpp", "#include <vector>\nstd::vector<int> v;")
        sources, main = readme_snippets.generate(text, "pkg/README.md", 2)
        self.assertEqual(len(sources), 2)
        first = sources[0]
        self.assertLess(first.index("#include <vector>"),
                        first.index("absl::Status StrataReadmeSnippet1() {"))
        self.assertIn('#line 3 "pkg/README.md"\nstd::vector<int> v;', first)
        self.assertIn("return absl::OkStatus();", first)
        self.assertNotIn("Snippet", sources[1])  # unused slot stays empty
        self.assertIn("StrataReadmeSnippet1();", main)
        self.assertIn("PASS pkg/README.md:2", main)

    def test_program_keeps_file_scope_and_main_is_renamed(self):
        for signature, call in (("int main()", "StrataReadmeSnippetMain1()"),
                                ("int main(int argc, char** argv)",
                                 "StrataReadmeSnippetMain1(argc, argv)")):
            text = fence("cpp", "struct S {};\n" + signature + " { return 0; }")
            sources, main = readme_snippets.generate(text, "R.md", 1)
            self.assertIn("#define main StrataReadmeSnippetMain1", sources[0])
            self.assertNotIn("absl::Status StrataReadmeSnippet1", sources[0])
            self.assertIn(call, main)

    def test_compile_only_block_is_not_run(self):
        text = fence("cpp", "// readme-snippet: compile-only\nint a = 0;")
        _, main = readme_snippets.generate(text, "R.md", 1)
        self.assertIn("SKIP (compile-only) R.md:2", main)
        self.assertNotIn("StrataReadmeSnippet1();\n    if", main)

    def test_too_many_blocks_is_an_error_naming_max_blocks(self):
        text = fence("cpp", "int a;") * 3
        with self.assertRaisesRegex(readme_snippets.SnippetError,
                                    "3 C\\+\\+ blocks, more than max_blocks = 2"):
            readme_snippets.generate(text, "R.md", 2)
        sources, _ = readme_snippets.generate(text, "R.md", 3)
        self.assertEqual(len(sources), 3)

    def test_readme_without_cpp_is_an_error(self):
        with self.assertRaisesRegex(readme_snippets.SnippetError, "no C\\+\\+ block"):
            readme_snippets.generate(fence("sh", "ls"), "R.md", 4)


class CommandLineTest(unittest.TestCase):
    def run_tool(self, text, *args):
        with tempfile.TemporaryDirectory() as tmp:
            readme = os.path.join(tmp, "README.md")
            with open(readme, "w", encoding="utf-8") as f:
                f.write(text)
            out = os.path.join(tmp, "out")
            result = subprocess.run(
                [sys.executable, readme_snippets.__file__, readme, "--out_dir", out,
                 "--prefix", "t", *args], capture_output=True, text=True)
            files = sorted(os.listdir(out)) if os.path.isdir(out) else []
            return result, files

    def test_writes_one_file_per_slot_and_a_main(self):
        result, files = self.run_tool(fence("cpp", "int a;"), "--max_blocks", "3")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(files, ["t_1.cc", "t_2.cc", "t_3.cc", "t_main.cc"])

    def test_error_exits_non_zero_and_writes_nothing(self):
        result, files = self.run_tool(fence("cpp", "int a;") * 2, "--max_blocks", "1")
        self.assertNotEqual(result.returncode, 0)
        self.assertIn("max_blocks", result.stderr)
        self.assertEqual(files, [])


if __name__ == "__main__":
    unittest.main()
