#!/usr/bin/env bash
# The "Your own component" code block of the top-level README.md is the code that
# readme_snippet_test compiles and runs (between its BEGIN/END README markers).
set -euo pipefail
readme="$1"
source="$2"
awk '/^## Your own component/{s=1} s&&/^```cpp/{if(!done){f=1;next}} f&&/^```/{f=0;done=1} f' \
  "$readme" >"${TEST_TMPDIR:-/tmp}/readme_block.cc"
awk '/BEGIN README/{f=1;next}/END README/{f=0}f' "$source" >"${TEST_TMPDIR:-/tmp}/source_block.cc"
if [[ ! -s "${TEST_TMPDIR:-/tmp}/readme_block.cc" ]]; then
  echo "FAIL: no cpp block under '## Your own component' in $readme" >&2
  exit 1
fi
if ! diff -u "${TEST_TMPDIR:-/tmp}/source_block.cc" "${TEST_TMPDIR:-/tmp}/readme_block.cc"; then
  echo "FAIL: the README snippet differs from $source" >&2
  exit 1
fi
lines=$(grep -cv '^\s*$' "${TEST_TMPDIR:-/tmp}/readme_block.cc")
if [[ $lines -ge 40 ]]; then
  echo "FAIL: the snippet has $lines lines of code, the README promises under 40" >&2
  exit 1
fi
echo "README snippet matches ($lines lines)"
