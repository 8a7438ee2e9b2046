#!/bin/bash
# Builds //engine:level_compiler_fuzzer with libFuzzer (clang-14, --config=fuzz, ASan)
# and fuzzes the level JSON compiler, with every component the game-built tools know,
# for a bounded time on a scratch copy of the seed corpus (engine/fuzz/corpus) with
# the level-keyword dictionary (engine/fuzz/level.dict). Exits non-zero if the fuzzer
# finds a violation (the reproducer is kept and printed).
#
#   engine/fuzz/run_fuzz.sh [SECONDS]          (default 60; CI runs 60)
#   STRATA_FUZZ_CORPUS=DIR engine/fuzz/run_fuzz.sh 1800   (grow a corpus kept in DIR)
#
# Needs clang-14 and libclang-rt-14-dev. Shares resource/run_fuzz.sh's Bazel output
# base, so the clang toolchain never invalidates the gcc build's cache.
set -euo pipefail

seconds="${1:-60}"
workspace="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$workspace"
output_base="${STRATA_FUZZ_OUTPUT_BASE:-${XDG_CACHE_HOME:-$HOME/.cache}/strata/bazel-fuzz}"
bazel=(bazel "--output_base=$output_base")
flags=(--config=fuzz --experimental_convenience_symlinks=ignore)

"${bazel[@]}" build "${flags[@]}" //engine:level_compiler_fuzzer
bin="$("${bazel[@]}" info "${flags[@]}" bazel-bin 2>/dev/null)/engine/level_compiler_fuzzer"

scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
mkdir -p "$scratch/artifacts"
corpus="${STRATA_FUZZ_CORPUS:-$scratch/corpus}"
mkdir -p "$corpus"
cp engine/fuzz/corpus/* "$corpus/"
if compgen -G "engine/fuzz/regressions/*" >/dev/null; then cp engine/fuzz/regressions/* "$corpus/"; fi

echo "fuzzing the level compiler for ${seconds}s (corpus in $corpus)"
status=0
ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1}" "$bin" "$corpus" \
  -dict=engine/fuzz/level.dict -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
  -max_len=8192 -artifact_prefix="$scratch/artifacts/" -print_final_stats=1 || status=$?
if [[ $status -ne 0 ]]; then
  keep="$(mktemp -d /tmp/strata-level-fuzz-findings.XXXXXX)"
  cp -r "$scratch/artifacts/." "$keep/" || true
  echo "engine/fuzz/run_fuzz.sh: the fuzzer failed (exit $status); reproducers kept in $keep"
  echo "  replay: bazel run //engine:level_compiler_fuzzer -- $keep/<file>"
  exit 1
fi
echo "engine/fuzz/run_fuzz.sh: no finding in ${seconds}s"
