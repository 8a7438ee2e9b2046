#!/usr/bin/python3
"""No #include runs back up Strata's package layering.

The layers, lowest first (a package may include itself and the packages its row
allows; a test, benchmark or fixture file may also include testing/):

    base        vocabulary types, status macros, checks, allocators
    entity      handles, the entity manager, stores
    transform   the hierarchy graph        (siblings: none includes another)
    index       the entity index, properties
    iteration   the page store, filters
    resource    the blob format, compiler, spawner (knows no component)
    component   declarations, one door for every component
    schedule    systems and the frame scheduler (over the page store, not the World)
    engine      the World, the demo
    examples    games built on the public targets

Run by `bazel test //tools:layering_test` over every package's sources; with no
arguments outside Bazel it checks the working tree.
"""

import os
import re
import sys
import tempfile
import unittest

ALLOWED = {
    "base": {"base"},
    "entity": {"base", "entity"},
    "transform": {"base", "entity", "transform"},
    "index": {"base", "entity", "index"},
    "iteration": {"base", "entity", "iteration"},
    "resource": {"base", "entity", "resource"},
    "component": {"base", "entity", "transform", "index", "iteration", "resource", "component"},
    "schedule": {"base", "entity", "iteration", "schedule"},
    "engine": {"base", "entity", "transform", "index", "iteration", "resource", "component",
               "schedule", "engine"},
    "examples": {"base", "entity", "transform", "index", "iteration", "resource", "component",
                 "schedule", "engine", "examples"},
    "testing": {"base", "entity", "testing"},
}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([a-z_]+)/[^"]+"', re.MULTILINE)


def is_test_file(path):
    name = os.path.basename(path)
    return (re.search(r"_(test|benchmark|fuzzer)(_[a-z_]+)?\.(cc|h)$", name) is not None
            or "/testing/" in path or name.startswith("test_") or "fuzz" in path)


def violations(root):
    """Every (file, line, included package) of `root`'s sources that breaks a layer."""
    found = []
    for package in sorted(ALLOWED):
        top = os.path.join(root, package)
        for directory, _, names in os.walk(top):
            for name in sorted(names):
                if not name.endswith((".h", ".cc")):
                    continue
                path = os.path.join(directory, name)
                relative = os.path.relpath(path, root)
                allowed = set(ALLOWED[package])
                if is_test_file(relative):
                    allowed.add("testing")
                with open(path, encoding="utf-8") as f:
                    text = f.read()
                for match in INCLUDE.finditer(text):
                    target = match.group(1)
                    if target in ALLOWED and target not in allowed:
                        line = text.count("\n", 0, match.start()) + 1
                        found.append((relative, line, match.group(0).strip()))
    return found


class LayeringTest(unittest.TestCase):
    def test_no_include_runs_back_up(self):
        root = os.path.join(os.environ["TEST_SRCDIR"], "strata") if "TEST_SRCDIR" in os.environ \
            else os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        checked = sum(len(files) for package in ALLOWED
                      for _, _, files in os.walk(os.path.join(root, package)))
        self.assertGreater(checked, 100, f"too few sources under {root}: a filegroup is missing")
        found = violations(root)
        self.assertEqual(found, [], "includes that run back up the layering:\n" +
                         "\n".join(f"  {f}:{n}: {inc}" for f, n, inc in found))

    def test_a_back_up_include_is_reported(self):
        with tempfile.TemporaryDirectory() as root:
            for path, text in {
                "index/property_system.h": '#include "transform/matrix.h"\n',
                "transform/graph.cc": '#include "base/matrix.h"\n#include "entity/entity.h"\n',
                "resource/spawn_benchmark.cc": '#include "testing/random.h"\n',
                "resource/format.cc": '#include "testing/random.h"\n',
            }.items():
                os.makedirs(os.path.join(root, os.path.dirname(path)), exist_ok=True)
                with open(os.path.join(root, path), "w", encoding="utf-8") as f:
                    f.write(text)
            self.assertEqual(violations(root), [
                ("index/property_system.h", 1, '#include "transform/matrix.h"'),
                ("resource/format.cc", 1, '#include "testing/random.h"'),
            ])


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1])
