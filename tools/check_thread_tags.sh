#!/bin/bash
# Checks that exactly the tests that start threads carry tags = ["threads"], the tag
# .ci/run selects the ThreadSanitizer step by. Runs every test once (plain build, not
# cached) under strace, which records each clone(2) with CLONE_THREAD, and compares.
#
#   tools/check_thread_tags.sh        exit 0 if the tags match, 1 with the differences
#
# Needs strace and ptrace permission, so it is a maintainer's check, not a CI step.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

census="$(mktemp -d)"
trap 'rm -rf "$census"' EXIT
cat >"$census/run_under.sh" <<WRAP
#!/bin/bash
exec strace -f -qq -e trace=clone,clone3 -o "$census/\$(echo "\$TEST_TARGET" | tr '/:' '__')" "\$@"
WRAP
chmod +x "$census/run_under.sh"

tests=$(bazel query --noshow_progress 'tests(//...) - attr(tags, "\bheader_check\b", tests(//...))')
tagged=$(bazel query --noshow_progress 'attr(tags, "\bthreads\b", tests(//...))')
# shellcheck disable=SC2086  # one label per word
bazel test --spawn_strategy=local --nocache_test_results \
  --run_under="$census/run_under.sh" $tests >"$census/bazel.log" 2>&1 ||
  { cat "$census/bazel.log"; exit 1; }

status=0
for t in $tests; do
  log="$census/$(echo "$t" | tr '/:' '__')"
  starts=no
  if [[ -f $log ]] && grep -q CLONE_THREAD "$log"; then starts=yes; fi
  has_tag=no
  if grep -qxF "$t" <<<"$tagged"; then has_tag=yes; fi
  if [[ $starts == yes && $has_tag == no ]]; then
    echo "$t starts threads but has no \"threads\" tag"
    status=1
  elif [[ $starts == no && $has_tag == yes ]]; then
    echo "$t has the \"threads\" tag but starts no thread"
    status=1
  fi
done
[[ $status -eq 0 ]] && echo "thread tags match: $(wc -w <<<"$tagged") tests start threads"
exit $status
