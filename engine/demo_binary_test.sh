#!/usr/bin/env bash
# Runs the //engine:demo binary itself: a short run that finds the default level in its
# runfiles and writes a JSON report, then bad flags and a bad level, each of which must
# exit non-zero with a clear message and never crash (exit status > 128 is a signal).
set -uo pipefail
demo_bin="$PWD/$1"  # absolute: one check runs from another directory
tmp="${TEST_TMPDIR:-$(mktemp -d)}"
source testing/tool_checks.sh

# demo WANT NEEDLE ARGS...: runs the demo; exit WANT (0 or nonzero), output has NEEDLE.
demo() {
  local want="$1" needle="$2"
  shift 2
  expect_text "$want" "$needle" "$demo_bin" "$@"
}

demo 0 "teardown: clean" --frames=3 --sparks_per_frame=100 --progress_every=1 \
  --report_json="$tmp/report.json"
python3 - "$tmp/report.json" <<'PY' || fail "report.json is not the expected JSON"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["level"]["entities"] == 4039, r["level"]
assert [s["name"] for s in r["systems"]][-1] == "frame"
assert r["teardown"]["clean"] is True
PY
# From another working directory, via its own runfiles.
pushd "$tmp" >/dev/null
demo 0 "teardown: clean" --frames=1 --sparks_per_frame=10
popd >/dev/null
demo nonzero "--frames must be >= 0" --frames=-1
demo nonzero "--threads must be in [0, 256]" --threads=-1
demo nonzero "--scale must be in" --scale=0
demo nonzero "frames" --frames=abc
demo nonzero "Unknown command line flag" --no_such_flag=1
demo nonzero "unexpected argument" stray
demo nonzero "cannot open level file" --level=/nonexistent/level.json
printf '{"entities": [\n  {"name": "a",,}\n]}' >"$tmp/bad.json"
demo nonzero "line 2" --level="$tmp/bad.json"
demo nonzero "cannot write the JSON report" --frames=1 --report_json=/nonexistent/dir/r.json

finish "demo binary checks"
