#!/usr/bin/env bash
# Runs the //engine:demo binary itself: a short run that finds the default level in its
# runfiles and writes a JSON report, then bad flags and a bad level, each of which must
# exit non-zero with a clear message and never crash (exit status > 128 is a signal).
set -uo pipefail
demo="$1"
tmp="${TEST_TMPDIR:-$(mktemp -d)}"
failures=0

fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }

# expect_exit WANT(0|nonzero) NEEDLE ARGS...: runs the demo, checks status and output.
expect() {
  local want="$1" needle="$2"
  shift 2
  local out status
  out=$("$demo" "$@" 2>&1)
  status=$?
  if [[ $status -gt 128 ]]; then fail "demo $* crashed (status $status): $out"; return; fi
  if [[ $want == 0 && $status -ne 0 ]]; then fail "demo $* exited $status: $out"; return; fi
  if [[ $want != 0 && $status -eq 0 ]]; then fail "demo $* succeeded, expected an error"; return; fi
  if ! grep -qF -- "$needle" <<<"$out"; then fail "demo $*: output lacks '$needle': $out"; fi
}

expect 0 "teardown: clean" --frames=3 --sparks_per_frame=100 --progress_every=1 \
  --report_json="$tmp/report.json"
python3 - "$tmp/report.json" <<'PY' || fail "report.json is not the expected JSON"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["level"]["entities"] == 4039, r["level"]
assert [s["name"] for s in r["systems"]][-1] == "frame"
assert r["teardown"]["clean"] is True
PY
# From another working directory, via its own runfiles.
(cd "$tmp" && expect 0 "teardown: clean" --frames=1 --sparks_per_frame=10)
expect 1 "--frames must be >= 0" --frames=-1
expect 1 "--threads must be in [1, 256]" --threads=0
expect 1 "frames" --frames=abc
expect 1 "Unknown command line flag" --no_such_flag=1
expect 1 "unexpected argument" stray
expect 1 "cannot open level file" --level=/nonexistent/level.json
printf '{"entities": [\n  {"name": "a",,}\n]}' >"$tmp/bad.json"
expect 1 "line 2" --level="$tmp/bad.json"
expect 1 "cannot write the JSON report" --frames=1 --report_json=/nonexistent/dir/r.json

if [[ $failures -ne 0 ]]; then
  echo "$failures check(s) failed" >&2
  exit 1
fi
echo "all demo binary checks passed"
