#!/usr/bin/env bash
# Runs //engine:demo --watch on a level in a temporary directory and edits the level
# while the demo runs: a good edit is reloaded between frames (the line says what
# changed and how long it took), a bad one prints the compiler's error and the run goes
# on with the level it had, and a later good edit is reloaded again; the run then ends
# with a clean teardown and counts the reloads.
set -uo pipefail
demo_bin="$PWD/$1"
tmp="${TEST_TMPDIR:-$(mktemp -d)}"
source testing/tool_checks.sh

level="$tmp/level.json"
out="$tmp/out.txt"
# write_level TEXT: replaces the level at once (a rename), as editors save.
write_level() {
  printf '%s' "$1" >"$tmp/next.json" && mv "$tmp/next.json" "$level"
}
# wait_for TEXT: until the demo's output has TEXT (60 s at most, or until it exits).
wait_for() {
  for _ in $(seq 600); do
    grep -qF -- "$1" "$out" && return 0
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  fail "the demo's output lacks '$1': $(tail -20 "$out")"
  return 1
}

write_level '{"entities": [{"name": "lamp", "components": [{"type": "transform"}, {"type": "sprite", "size": 1}]}]}'
# 60 frames per second of wall time with --watch: 1800 frames give 30 s to edit.
"$demo_bin" --level="$level" --watch --frames=1800 --sparks_per_frame=10 --progress_every=0 \
  --threads=1 >"$out" 2>&1 &
pid=$!
wait_for "watch: watching" || { kill "$pid"; finish "demo --watch checks"; }
sleep 0.2
# A bench inserted before the lamp, whose size changes: one add, one field.
write_level '{"entities": [{"name": "bench"}, {"name": "lamp", "components": [{"type": "transform"}, {"type": "sprite", "size": 2}]}]}'
wait_for "1 added, 0 removed, 1 kept; 1 fields written in 1 instances (sprite.size x1)"
grep -qE "watch: reloaded '.*level.json' before frame [0-9]+ in [0-9.]+ ms \(compile [0-9.]+ ms, reload [0-9.]+ ms\)" "$out" ||
  fail "the reload line lacks its times: $(grep 'watch:' "$out")"
sleep 0.2
# A bad edit: the compiler's error (with line and column), and the run goes on.
write_level '{"entities": [{"name": "lamp",,}]}'
wait_for "not reloaded, still running the previous level"
grep -qF "line 1" "$out" || fail "the compiler's error lacks its line: $(grep 'watch:' "$out")"
sleep 0.2
# The bench removed again: reloaded from the last good level.
write_level '{"entities": [{"name": "lamp", "components": [{"type": "transform"}, {"type": "sprite", "size": 2}]}]}'
wait_for "0 added, 1 removed, 1 kept; 0 fields written"
kill -0 "$pid" 2>/dev/null || fail "the demo stopped early: $(tail -20 "$out")"
wait "$pid"
status=$?
[[ $status -eq 0 ]] || fail "the demo exited $status: $(tail -20 "$out")"
grep -qF "watch: 2 reloads, 1 edits refused" "$out" || fail "no reload count: $(tail -20 "$out")"
grep -qF "teardown: clean" "$out" || fail "teardown not clean: $(tail -20 "$out")"
finish "demo --watch checks"
