#!/usr/bin/env bash
# A snippet binary built from a README whose blocks fail must exit non-zero and name
# each failing block with its README line; the passing block must still be reported.
set -euo pipefail
binary="$1"
if output=$("$binary" 2>&1); then
  echo "a README with failing blocks passed:"; echo "$output"; exit 1
fi
echo "$output"
grep -q '^PASS tools/testdata/failing_snippet_readme.md:4$' <<<"$output" \
  || { echo "first block not reported as passing"; exit 1; }
grep -q '^FAIL tools/testdata/failing_snippet_readme.md:9: NOT_FOUND: this block fails on purpose$' \
  <<<"$output" || { echo "failing fragment not reported"; exit 1; }
grep -q '^FAIL tools/testdata/failing_snippet_readme.md:13: main returned 3$' <<<"$output" \
  || { echo "failing main not reported"; exit 1; }
grep -q '^1 passed, 2 failed, 0 skipped$' <<<"$output" || { echo "wrong tally"; exit 1; }
echo "PASS"
