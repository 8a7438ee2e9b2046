#!/bin/bash
# Builds //resource:entity_resource_fuzzer with libFuzzer (clang-14, --config=fuzz, ASan)
# and fuzzes the entity-resource loader for a bounded time on a scratch copy of the
# checked-in seed corpus. Exits non-zero if the fuzzer finds a crash (the reproducer is
# left in the printed artifact directory).
#
#   resource/run_fuzz.sh [SECONDS]          (default 30)
#
# Needs clang-14 and libclang-rt-14-dev (libclang_rt.fuzzer*.a). Uses its own Bazel
# output base, so the clang toolchain never invalidates the gcc build's cache.
set -euo pipefail

seconds="${1:-30}"
workspace="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$workspace"
output_base="${STRATA_FUZZ_OUTPUT_BASE:-${XDG_CACHE_HOME:-$HOME/.cache}/strata/bazel-fuzz}"
bazel=(bazel "--output_base=$output_base")
flags=(--config=fuzz --experimental_convenience_symlinks=ignore)

"${bazel[@]}" build "${flags[@]}" //resource:entity_resource_fuzzer
bin="$("${bazel[@]}" info "${flags[@]}" bazel-bin 2>/dev/null)/resource/entity_resource_fuzzer"

scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
mkdir -p "$scratch/corpus" "$scratch/artifacts"
cp resource/testdata/fuzz_corpus/* "$scratch/corpus/"

echo "fuzzing the entity-resource loader for ${seconds}s (corpus copy in $scratch/corpus)"
status=0
ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1}" "$bin" "$scratch/corpus" \
  -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=4096 \
  -artifact_prefix="$scratch/artifacts/" -print_final_stats=1 || status=$?
if [[ $status -ne 0 ]]; then
  keep="$(mktemp -d /tmp/strata-fuzz-findings.XXXXXX)"
  cp -r "$scratch/artifacts/." "$keep/" || true
  echo "run_fuzz.sh: the fuzzer failed (exit $status); reproducers kept in $keep"
  echo "  replay: bazel run //resource:entity_resource_fuzzer -- $keep/<file>"
  exit 1
fi
echo "run_fuzz.sh: no crash in ${seconds}s"
