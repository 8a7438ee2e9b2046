#!/bin/bash
# The demo's game-built tools and the save/load round trip, exactly as the README's
# commands run them:
#   compile default.json c.entities                          (every sample component)
#   demo --level=default.json --frames=0 --save=a.entities
#   demo --level=a.entities --frames=0 --save=b.entities     (a and b byte-identical)
#   inspect --json a.entities > a.json; compile a.json a2    (a and a2 byte-identical)
set -u
COMPILE=engine/compile
INSPECT=engine/inspect
DEMO=engine/demo
LEVEL=engine/levels/default.json
TMP="${TEST_TMPDIR:-$(mktemp -d)}"
failures=0

expect() {
  local code="$1" pattern="$2"
  shift 2
  local out
  out="$("$@" 2>&1)"
  local got=$?
  if [[ $got -ne $code ]] || ! grep -qE -- "$pattern" <<<"$out"; then
    echo "FAIL: $* -> exit $got (want $code), output:"
    echo "$out" | head -20
    echo "(wanted /$pattern/)"
    failures=$((failures + 1))
  fi
}
check() {
  local what="$1"
  shift
  if ! "$@"; then
    echo "FAIL: $what"
    failures=$((failures + 1))
  fi
}

expect 0 "4039 entities, .* 0 warnings" $COMPILE $LEVEL "$TMP/c.entities"
expect 0 "save: .* -> .*a.entities" $DEMO --level=$LEVEL --frames=0 --save="$TMP/a.entities"
expect 0 "level: .*a.entities \(a resource blob" $DEMO --level="$TMP/a.entities" --frames=0 \
  --save="$TMP/b.entities"
check "a save of a spawned save is byte-identical" cmp "$TMP/a.entities" "$TMP/b.entities"
check "the save of a compiled level is the compiled level" cmp "$TMP/a.entities" "$TMP/c.entities"
"$INSPECT" --json "$TMP/a.entities" >"$TMP/a.json" || { echo "FAIL: inspect --json"; failures=$((failures + 1)); }
expect 0 "4039 entities" $COMPILE "$TMP/a.json" "$TMP/a2.entities"
check "the export recompiles to the same bytes" cmp "$TMP/a.entities" "$TMP/a2.entities"

# The listing names every component and field.
expect 0 "render_data \"Fog\" color=\[0.5,.*density=0.0199" $INSPECT "$TMP/a.entities"
expect 0 "spark_emitter +84 instances +28 bytes each" $INSPECT "$TMP/a.entities"
# A run with frames saves the world as it ends; the save spawns again.
expect 0 "save: " $DEMO --level=$LEVEL --frames=5 --sparks_per_frame=10 --save="$TMP/run.entities"
expect 0 "teardown: clean" $DEMO --level="$TMP/run.entities" --frames=2 --sparks_per_frame=10

# Declared checks, with the entity path, component and field.
printf '{"entities": [{"name": "x", "components": [{"type": "sprite", "size": -1}]}]}' >"$TMP/bad.json"
expect 1 "entities\[0\] \(\"x\"\)\.components\[0\] \"sprite\" \(sprite\): \"size\": -1 is outside" \
  $COMPILE "$TMP/bad.json" "$TMP/bad.entities"
printf '{"entities": [{"components": [{"type": "spark", "lifetim": 1}]}]}' >"$TMP/typo.json"
expect 1 "unknown key \"lifetim\" \(spark has: velocity, lifetime, max_lifetime\)" \
  $COMPILE "$TMP/typo.json" "$TMP/typo.entities"
printf '{"entities": [{"components": [{"type": "transform"}, {"type": "transform", "name": "T2"}]}]}' >"$TMP/two.json"
expect 1 "components\[1\] \"transform\": an entity has at most 1 component of this type" \
  $COMPILE "$TMP/two.json" "$TMP/two.entities"
# The same file as input and output is refused, and the level survives.
cp $LEVEL "$TMP/own.json"
expect 1 "refusing to write" $COMPILE "$TMP/own.json" "$TMP/own.json"
check "the level survives" cmp -s $LEVEL "$TMP/own.json"
expect 2 "usage" $COMPILE
expect 2 "usage" $INSPECT

if [[ $failures -ne 0 ]]; then
  echo "$failures failures"
  exit 1
fi
echo "all tool checks passed"
