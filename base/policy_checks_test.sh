#!/bin/bash
# Checks that Strata's headers refuse a language standard older than C++20 with exactly
# one error naming C++20, and compile cleanly under C++20. Uses the system g++ (the
# compiler Bazel's auto-configured toolchain wraps) on the headers in the runfiles tree.
set -uo pipefail

root="${TEST_SRCDIR}/${TEST_WORKSPACE}"
cxx="${CXX:-g++}"
failures=0

for header in base/policy_checks.h entity/entity.h; do
  for std in c++14 c++17; do
    output=$(echo "#include \"${header}\"" |
      "$cxx" "-std=${std}" -fsyntax-only -x c++ -I "$root" - 2>&1)
    status=$?
    errors=$(grep -c 'error:' <<<"$output")
    if [[ $status -eq 0 || $errors -ne 1 ]] || ! grep -q 'error: .*requires C++20' <<<"$output"; then
      echo "FAIL: ${header} with -std=${std}: exit ${status}, ${errors} errors, want exactly one naming C++20:"
      echo "$output"
      failures=$((failures + 1))
    fi
  done
  if ! output=$(echo "#include \"${header}\"" |
      "$cxx" -std=c++20 -fsyntax-only -Wall -Wextra -Werror -x c++ -I "$root" - 2>&1); then
    echo "FAIL: ${header} with -std=c++20:"
    echo "$output"
    failures=$((failures + 1))
  fi
done

if [[ $failures -ne 0 ]]; then
  exit 1
fi
echo "PASS"
