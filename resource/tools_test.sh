#!/bin/bash
# Runs //resource:compile and //resource:inspect on good and bad inputs and checks exit
# codes and messages: bad files are reported with exit 1, never a crash.
set -u
COMPILE=resource/compile
INSPECT=resource/inspect
LEVEL=resource/testdata/level.json
TMP="${TEST_TMPDIR:-$(mktemp -d)}"
failures=0

# expect CODE PATTERN COMMAND...: runs COMMAND, checks its exit code and that its
# combined output matches PATTERN (grep -E).
expect() {
  local code="$1" pattern="$2"
  shift 2
  local out
  out="$("$@" 2>&1)"
  local got=$?
  if [[ $got -ne $code ]] || ! grep -qE -- "$pattern" <<<"$out"; then
    echo "FAIL: $* -> exit $got (want $code), output:"
    echo "$out"
    echo "(wanted /$pattern/)"
    failures=$((failures + 1))
  fi
}

expect 2 "usage" $COMPILE
expect 2 "usage" $INSPECT
expect 1 "entities\[0\] \(\"car\"\)\.components\[1\]: unknown component type \"render_data\"" \
  $COMPILE $LEVEL "$TMP/level.entities"
expect 0 "4 entities, .* 1 warnings" $COMPILE --skip-unknown $LEVEL "$TMP/level.entities"
expect 0 "warning: .*skipped component of unknown type \"render_data\"" \
  $COMPILE --skip-unknown $LEVEL "$TMP/level.entities"
expect 0 "entities +4 \(2 roots, 2 children\)" $INSPECT "$TMP/level.entities"
expect 0 "transform +4 instances +64 bytes each" $INSPECT "$TMP/level.entities"

# Other endianness: compiles, and inspect explains why it cannot load it.
expect 0 "big-endian|little-endian" $COMPILE --skip-unknown --endian=big $LEVEL "$TMP/big.entities"
expect 0 "" $COMPILE --skip-unknown --endian=little $LEVEL "$TMP/little.entities"
if cmp -s "$TMP/big.entities" "$TMP/level.entities"; then other="$TMP/little.entities"; else other="$TMP/big.entities"; fi
expect 1 "blob is (big|little)-endian but this machine reads" $INSPECT "$other"

# Bad files.
expect 1 "No such file|NOT_FOUND" $INSPECT "$TMP/missing.entities"
head -c 40 "$TMP/level.entities" >"$TMP/truncated.entities"
expect 1 "invalid: .*truncated" $INSPECT "$TMP/truncated.entities"
: >"$TMP/empty.entities"
expect 1 "invalid" $INSPECT "$TMP/empty.entities"
expect 1 "invalid: .*magic" $INSPECT $LEVEL
printf '{"entities": [\n  {"name": tru}\n]}' >"$TMP/bad.json"
expect 1 "line 2, column 15" $COMPILE "$TMP/bad.json" "$TMP/bad.entities"
expect 1 "\"position\": expected an array of 3 numbers" $COMPILE \
  <(echo '{"entities": [{"components": [{"type": "transform", "position": [1]}]}]}') "$TMP/x.entities"

if [[ $failures -ne 0 ]]; then
  echo "$failures check(s) failed"
  exit 1
fi
echo "all tool checks passed"
