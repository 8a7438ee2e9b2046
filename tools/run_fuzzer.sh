#!/bin/bash
# Builds a strata_fuzzer() target (bazel/fuzz.bzl) with libFuzzer (clang-14,
# --config=fuzz, ASan) and fuzzes it for a bounded time on a scratch copy of its seed
# corpus. Exits non-zero if the fuzzer finds a crash or a violated check; the
# reproducers are kept and the command that replays one is printed.
#
#   tools/run_fuzzer.sh TARGET SECONDS CORPUS_DIR... [-- LIBFUZZER_FLAGS...]
#   STRATA_FUZZ_CORPUS=DIR ...   keeps the (growing) corpus in DIR instead of a scratch copy
#
# Needs clang-14 and libclang-rt-14-dev. Uses its own Bazel output base, so the clang
# toolchain never invalidates the gcc build's cache. resource/run_fuzz.sh and
# engine/fuzz/run_fuzz.sh call it with their targets, corpora and flags.
set -euo pipefail

if [[ $# -lt 3 ]]; then
  echo "usage: $0 TARGET SECONDS CORPUS_DIR... [-- LIBFUZZER_FLAGS...]" >&2
  exit 2
fi
target="$1"
seconds="$2"
shift 2
seeds=()
while [[ $# -gt 0 && "$1" != "--" ]]; do seeds+=("$1"); shift; done
[[ $# -gt 0 ]] && shift
extra=("$@")

cd "$(dirname "${BASH_SOURCE[0]}")/.."
output_base="${STRATA_FUZZ_OUTPUT_BASE:-${XDG_CACHE_HOME:-$HOME/.cache}/strata/bazel-fuzz}"
bazel=(bazel "--output_base=$output_base")
flags=(--config=fuzz --experimental_convenience_symlinks=ignore)

"${bazel[@]}" build "${flags[@]}" "$target"
package="${target#//}"
package="${package%%:*}"
bin="$("${bazel[@]}" info "${flags[@]}" bazel-bin 2>/dev/null)/$package/${target##*:}"

scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
mkdir -p "$scratch/artifacts"
corpus="${STRATA_FUZZ_CORPUS:-$scratch/corpus}"
mkdir -p "$corpus"
for dir in "${seeds[@]}"; do
  if compgen -G "$dir/*" >/dev/null; then cp "$dir"/* "$corpus/"; fi
done

echo "fuzzing $target for ${seconds}s (corpus in $corpus)"
status=0
ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1}" "$bin" "$corpus" \
  -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
  -artifact_prefix="$scratch/artifacts/" -print_final_stats=1 "${extra[@]}" || status=$?
if [[ $status -ne 0 ]]; then
  keep="$(mktemp -d /tmp/strata-fuzz-findings.XXXXXX)"
  cp -r "$scratch/artifacts/." "$keep/" || true
  echo "$target: the fuzzer failed (exit $status); reproducers kept in $keep"
  echo "  replay: bazel run $target -- $keep/<file>"
  exit 1
fi
echo "$target: no finding in ${seconds}s"
