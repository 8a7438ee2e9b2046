# Shell helpers for tests that run Strata's command-line tools (sourced by sh_tests that
# depend on //testing:tool_checks):
#
#   source testing/tool_checks.sh
#   expect 1 "line 2, column 7" engine/compile bad.json out.entities
#   expect_text nonzero "--frames must be >= 0" engine/demo --frames=-1
#   check "the blobs are identical" cmp a.entities b.entities
#   finish "tool checks"
#
# expect CODE PATTERN COMMAND...: runs COMMAND; its exit status must be CODE (a number,
# or "nonzero") and its combined output must match the extended regular expression
# PATTERN. expect_text is the same with PATTERN taken as plain text. An exit status
# above 128 (a signal: a crash) always fails, naming the signal's status. Failures are
# counted; finish prints the count and exits 1 if there was any.

tool_check_failures=0

fail() {
  echo "FAIL: $*" >&2
  tool_check_failures=$((tool_check_failures + 1))
}

# _expect GREP_MODE CODE PATTERN COMMAND...
_expect() {
  local mode="$1" want="$2" pattern="$3"
  shift 3
  local out status
  out="$("$@" 2>&1)"
  status=$?
  if [[ $status -gt 128 ]]; then
    fail "$* crashed (exit $status): $(head -20 <<<"$out")"
  elif [[ $want == nonzero && $status -eq 0 ]] || [[ $want != nonzero && $status -ne $want ]]; then
    fail "$* -> exit $status (want $want), output: $(head -20 <<<"$out")"
  elif ! grep -q"$mode" -- "$pattern" <<<"$out"; then
    fail "$* -> output lacks /$pattern/: $(head -20 <<<"$out")"
  fi
}
expect() { _expect E "$@"; }
expect_text() { _expect F "$@"; }

# check WHAT COMMAND...: COMMAND must succeed.
check() {
  local what="$1"
  shift
  "$@" || fail "$what"
}

# finish NAME: the verdict of the test.
finish() {
  if [[ $tool_check_failures -ne 0 ]]; then
    echo "$tool_check_failures check(s) failed" >&2
    exit 1
  fi
  echo "all $1 passed"
}
