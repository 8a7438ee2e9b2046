#!/usr/bin/env bash
# Runs tools/plot_schedule on a Schedule::Describe() text and on a demo report holding
# one, and checks that it writes a PNG, and that bad input exits non-zero with a reason.
set -euo pipefail
tool="$1"
description="$2"
out="${TEST_TMPDIR:-$(mktemp -d)}"

"$tool" "$description" --out "$out/plan.png" --title "a plan" > "$out/list"
head -c 8 "$out/plan.png" | od -An -c | grep -q 'P   N   G' || { echo "not a PNG"; exit 1; }
grep -q "plan.png" "$out/list" || { echo "the output path is not printed"; exit 1; }

# A demo report (--report_json) carries the description in schedule.description.
python3 -c 'import json, sys; print(json.dumps({"schedule": {"description": open(sys.argv[1]).read()}}))' \
  "$description" > "$out/report.json"
"$tool" "$out/report.json" --out "$out/report.png" > /dev/null
[[ -s "$out/report.png" ]] || { echo "no picture from the report"; exit 1; }

# Bad input: a clear message, a non-zero exit.
expect_error() {
  local needle="$1"
  shift
  if "$tool" "$@" --out "$out/bad.png" 2> "$out/err"; then
    echo "accepted: $*"; exit 1
  fi
  grep -q "$needle" "$out/err" || { echo "unclear error for $*:"; cat "$out/err"; exit 1; }
}
expect_error "cannot read" /nonexistent.txt
echo '{"schedule": {}}' > "$out/no_description.json"
expect_error "not a demo report" "$out/no_description.json"
echo "hello" > "$out/not_a_plan.txt"
expect_error "not a Schedule::Describe() output" "$out/not_a_plan.txt"
echo "plot_schedule: ok"
