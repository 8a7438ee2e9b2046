#!/usr/bin/env bash
# Runs tools/plot_benchmarks on a small Google Benchmark JSON file and checks that it
# writes one PNG per counter, ignores non-median aggregates, and rejects bad input.
set -euo pipefail
tool="$1"
sample="$2"
out="${TEST_TMPDIR:-$(mktemp -d)}/plots"

"$tool" "$sample" --out "$out" > "$out.list"
[[ -s "$out/BM_EntityIndex_us_per_entity.png" ]] || { echo "missing us_per_entity chart"; exit 1; }
[[ -s "$out/BM_EntityIndex_memory_mb.png" ]] || { echo "missing memory_mb chart"; exit 1; }
[[ $(wc -l < "$out.list") -eq 2 ]] || { echo "expected 2 charts"; cat "$out.list"; exit 1; }
head -c 8 "$out/BM_EntityIndex_memory_mb.png" | od -An -c | grep -q 'P   N   G' \
  || { echo "not a PNG"; exit 1; }

# One counter only.
rm -rf "$out"
"$tool" "$sample" --counter us_per_entity --out "$out" > "$out.list"
[[ $(wc -l < "$out.list") -eq 1 ]] || { echo "--counter not honoured"; exit 1; }

# Bad input: clear message, non-zero exit.
if "$tool" /nonexistent.json --out "$out" 2> "$out.err"; then
  echo "accepted a missing file"; exit 1
fi
grep -q "cannot read benchmark JSON" "$out.err" || { echo "unclear error"; cat "$out.err"; exit 1; }
echo "{not json" > "$out.bad"
if "$tool" "$out.bad" --out "$out" 2> "$out.err"; then
  echo "accepted malformed JSON"; exit 1
fi
echo "PASS"
