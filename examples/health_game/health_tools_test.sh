#!/usr/bin/env bash
# The health game's own tools, as its developers run them: compile the level, inspect
# the blob (listing and --json export), recompile the export and compare the bytes;
# then the errors a level author meets, each a clear message and a non-zero exit.
set -uo pipefail
compile="$1"
inspect="$2"
level="$3"
tmp="${TEST_TMPDIR:-$(mktemp -d)}"
failures=0

fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }

# expect WANT(0|1|2) NEEDLE TOOL ARGS...: runs TOOL, checks its exit status and output.
expect() {
  local want="$1" needle="$2" tool="$3"
  shift 3
  local out status
  out=$("$tool" "$@" 2>&1)
  status=$?
  if [[ $status -ne $want ]]; then fail "$(basename "$tool") $* exited $status, want $want: $out"; return; fi
  if ! grep -qF -- "$needle" <<<"$out"; then fail "$(basename "$tool") $*: output lacks '$needle': $out"; fi
}

expect 0 "" "$compile" "$level" "$tmp/arena.entities"
[[ -s "$tmp/arena.entities" ]] || fail "compile wrote no blob"

# The listing shows the game's fields by name, and the reference by its target.
"$inspect" "$tmp/arena.entities" >"$tmp/listing.txt" 2>&1 || fail "inspect exited $?"
for needle in health burning hp attacker knight orc campfire; do
  grep -qF -- "$needle" "$tmp/listing.txt" || fail "inspect listing lacks '$needle'"
done
if grep -qF "(unknown)" "$tmp/listing.txt"; then fail "inspect does not know a game type"; fi

# Export and recompile: the same bytes.
"$inspect" --json "$tmp/arena.entities" >"$tmp/exported.json" || fail "inspect --json exited $?"
python3 - "$tmp/exported.json" <<'PY' || fail "the export is not the expected level JSON"
import json, sys
level = json.load(open(sys.argv[1]))
def walk(entities):
    for e in entities:
        yield e
        yield from walk(e.get("children", []))
by_name = {e.get("name"): e for e in walk(level["entities"])}
health = lambda n: next(c for c in by_name[n]["components"] if c["type"] == "health")
assert health("knight")["attacker"] == "orc", health("knight")
assert health("orc")["attacker"] == "knight", health("orc")
assert health("knight")["hp"] == 80, health("knight")
assert any(c["type"] == "burning" for c in by_name["campfire"]["components"])
PY
expect 0 "" "$compile" "$tmp/exported.json" "$tmp/recompiled.entities"
cmp "$tmp/arena.entities" "$tmp/recompiled.entities" || fail "export does not recompile to the same bytes"

# A big-endian blob (for a big-endian target) compiles; this little-endian machine's
# inspect refuses it with a clear message rather than misreading it.
expect 0 "" "$compile" --endian=big "$level" "$tmp/arena_be.entities"
if [[ "$(python3 -c 'import sys; print(sys.byteorder)')" == little ]]; then
  expect 1 "big-endian" "$inspect" "$tmp/arena_be.entities"
  cmp -s "$tmp/arena.entities" "$tmp/arena_be.entities" && fail "big- and little-endian blobs are equal"
fi

# Errors a level author meets.
printf '{"entities": [{"name": "knight", "components": [{"type": "health", "attacker": "goblin"}]}]}' \
  >"$tmp/missing.json"
expect 1 "goblin" "$compile" "$tmp/missing.json" "$tmp/missing.entities"
[[ -e "$tmp/missing.entities" ]] && fail "a failed compile left a file behind"
printf '{"entities": [{"components": [{"type": "health", "hp": -5}]}]}' >"$tmp/negative.json"
expect 1 "hp" "$compile" "$tmp/negative.json" "$tmp/negative.entities"
printf '{"entities": [{"components": [{"type": "health", "armour": 1}]}]}' >"$tmp/typo.json"
expect 1 "armour" "$compile" "$tmp/typo.json" "$tmp/typo.entities"
expect 2 "" "$compile" "$level"
expect 1 "" "$compile" "$level" /nonexistent/dir/arena.entities
head -c 100 "$tmp/arena.entities" >"$tmp/truncated.entities"
expect 1 "" "$inspect" "$tmp/truncated.entities"
expect 1 "" "$inspect" --json "$tmp/truncated.entities"
expect 1 "" "$inspect" "$level"
expect 1 "" "$inspect" /nonexistent/arena.entities

if [[ $failures -ne 0 ]]; then
  echo "$failures check(s) failed" >&2
  exit 1
fi
echo "all health tool checks passed"
