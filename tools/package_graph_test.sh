#!/usr/bin/env bash
# Runs tools/package_graph on saved query output: every package that exists gets a box
# (a new component/ included), test-only and cyclic edges are told apart, third_party/
# and tools/ are left out, and a PNG is written.
set -euo pipefail
tool="$1"
graph="$2"
testonly="$3"
out="${TEST_TMPDIR:-$(mktemp -d)}/packages.png"

"$tool" --graph "$graph" --testonly "$testonly" --out "$out" > "$out.txt"
expected="component -> entity
component -> testing (test-only)
index -> transform (cycle)
transform -> index (cycle)
$out"
[[ "$(cat "$out.txt")" == "$expected" ]] || { echo "unexpected edges:"; cat "$out.txt"; exit 1; }
head -c 8 "$out" | od -An -c | grep -q 'P   N   G' || { echo "not a PNG"; exit 1; }

# No Strata package at all: a clear error, non-zero exit.
echo 'digraph mygraph { "@x//:y" -> "@z//:w" }' > "$out.empty"
if "$tool" --graph "$out.empty" --out "$out" 2> "$out.err"; then
  echo "accepted a graph without packages"; exit 1
fi
grep -q "no Strata package" "$out.err" || { echo "unclear error"; cat "$out.err"; exit 1; }
if "$tool" --graph /nonexistent --out "$out" 2> /dev/null; then
  echo "accepted a missing file"; exit 1
fi
echo "PASS"
