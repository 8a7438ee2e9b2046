#!/bin/bash
# Runs //resource:compile with --threads: a level of several slices compiles to the
# same bytes on 1, 2 and 3 threads, and bad thread counts are usage errors. Kept apart
# from tools_test.sh because it starts threads, so .ci/run runs it under
# ThreadSanitizer (tools_test.sh's file-size-limit case cannot: ThreadSanitizer's own
# start-up fails under `ulimit -f`).
set -u
COMPILE=resource/compile
LEVEL=resource/testdata/level.json
TMP="${TEST_TMPDIR:-$(mktemp -d)}"
source testing/tool_checks.sh

{
  echo '{"entities": ['
  for i in $(seq 0 4999); do
    echo "{\"name\": \"e$i\", \"components\": [{\"type\": \"x\", \"position\": [$i, 0, 0]}]},"
  done
  echo '{"children": [{"name": "last"}]}]}'
} >"$TMP/big.json"
expect 0 "5002 entities, .* 5000 warnings" $COMPILE --skip-unknown "$TMP/big.json" "$TMP/big1.entities"
expect 0 "5002 entities" $COMPILE --skip-unknown --threads=2 "$TMP/big.json" "$TMP/big2.entities"
expect 0 "5002 entities" $COMPILE --threads=3 --skip-unknown "$TMP/big.json" "$TMP/big3.entities"
check "2 threads wrote the bytes 1 thread wrote" cmp "$TMP/big1.entities" "$TMP/big2.entities"
check "3 threads wrote the bytes 1 thread wrote" cmp "$TMP/big1.entities" "$TMP/big3.entities"
for bad in --threads=-1 --threads=x --threads= --threads=257; do
  expect 2 "usage" $COMPILE $bad $LEVEL "$TMP/level.entities"
done

finish "compile --threads checks"
