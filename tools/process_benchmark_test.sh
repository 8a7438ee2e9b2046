#!/usr/bin/env bash
# Runs tools/process_benchmark on a small level (one run of each process) and checks
# that it measures every figure and writes them as JSON, and that bad input exits
# non-zero with a reason. The figures of a test build mean nothing; their presence does.
set -euo pipefail
tool="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"  # absolute: one check runs elsewhere
out="${TEST_TMPDIR:-$(mktemp -d)}"

"$tool" --entities=3000 --runs=1 --json="$out/figures.json" --workdir="$out/levels" \
  > "$out/report.txt" || { echo "process_benchmark failed"; cat "$out/report.txt"; exit 1; }
for needle in "load average" "3000 named entities" "compile tool (fresh process)" \
  "BM_Compile/level_file (in process)" "its floor: simdjson On-Demand (in process)" \
  "BM_Spawn/FirstLevelFile (in process)" "compile_tool_wall/in_process_real" \
  "compile_in_process_cpu/ondemand_floor_cpu" "compile_peak_rss/(input+output)" \
  "compile_peak_rss/(3*input+output)" \
  "demo_spawn/in_process_first_spawn" "demo_spawn/first_transforms_per_entity"; do
  grep -qF "$needle" "$out/report.txt" || { echo "missing: $needle"; cat "$out/report.txt"; exit 1; }
done
# Every figure measured, none zero; the levels are removed afterwards (no --keep).
/usr/bin/python3 - "$out/figures.json" <<'PY'
import json, sys
f = json.load(open(sys.argv[1]))
(level,) = f["levels"]
assert level["entities"] == 3000, level["entities"]
assert level["json_bytes"] > 3000 * 60 and level["blob_bytes"] > 3000 * 16, level
for part in ("compile_tool", "demo_process"):
    for key in ("wall_ms", "cpu_ms", "peak_rss_bytes"):
        assert level[part][key] > 0, (part, key, level[part])
assert level["demo_process"]["spawn_ms"] > 0
for part in ("compile_in_process", "ondemand_floor", "spawn_in_process"):
    assert level[part]["real_ms"] > 0 and level[part]["cpu_ms"] > 0, level[part]
assert set(level["ratios"]) == {
    "compile_tool_wall/in_process_real", "compile_tool_cpu/in_process_cpu",
    "compile_in_process_cpu/ondemand_floor_cpu",
    "compile_peak_rss/(input+output)", "compile_peak_rss/(3*input+output)",
    "demo_spawn/in_process_first_spawn",
    "demo_spawn/first_transforms_per_entity"}, level["ratios"]
assert all(v > 0 for v in level["ratios"].values()), level["ratios"]
assert f["first_transforms_1m"]["real_ms"] > 0
assert f["cores"] >= 1 and f["runs"] == 1
PY
if ls "$out/levels"/level_3000.* 2> /dev/null; then echo "levels left behind"; exit 1; fi

# Bad input: a clear message, a non-zero exit.
expect_error() {
  local needle="$1"
  shift
  if "$tool" "$@" > /dev/null 2> "$out/err"; then
    echo "accepted: $*"; exit 1
  fi
  grep -qF -- "$needle" "$out/err" || { echo "unclear error for $*:"; cat "$out/err"; exit 1; }
}
expect_error "--entities must be in [1, 100000000], got 0" --entities=0
expect_error "--runs must be in [1, 100], got 0" --runs=0
# Outside bazel's runfiles the binaries are not there: say how to run it.
(cd "$out" && expect_error "run it with bazel run //tools:process_benchmark" --entities=10)

# The level generator it runs: named entities, and its own usage errors.
engine/generate_level --entities=5 --names "$out/five.json" > /dev/null
[[ $(grep -c '"name": "entity_' "$out/five.json") -eq 5 ]] || { echo "not 5 named entities"; exit 1; }
grep -q '"name": "entity_4", "components": \[{"type": "transform"' "$out/five.json" \
  || { echo "unexpected entity layout"; head -3 "$out/five.json"; exit 1; }
engine/generate_level --entities=5 "$out/unnamed.json" > /dev/null
if grep -q '"name"' "$out/unnamed.json"; then echo "names without --names"; exit 1; fi
status=0
engine/generate_level --entities=0 "$out/none.json" 2> "$out/err" || status=$?
[[ $status -eq 2 ]] && grep -qF -- "--entities must be in [1, 100000000], got 0" "$out/err" \
  || { echo "generate_level --entities=0: exit $status"; cat "$out/err"; exit 1; }
status=0
engine/generate_level --entities=5 "$out/no/such/dir/x.json" 2> "$out/err" || status=$?
[[ $status -eq 1 ]] && grep -qF "cannot write" "$out/err" \
  || { echo "generate_level to a bad path: exit $status"; cat "$out/err"; exit 1; }
echo "process_benchmark: ok"
