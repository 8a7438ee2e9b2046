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

# Option suffixes (min_time:, real_time) are not part of the series or of N.
cat > "$out.suffixed.json" <<'JSON'
{"context": {"date": "2026-01-01T00:00:00+00:00", "num_cpus": 2, "mhz_per_cpu": 2600},
 "benchmarks": [
  {"name": "BM_X/A/10/min_time:0.200/real_time_median", "run_name": "BM_X/A/10/min_time:0.200/real_time",
   "run_type": "aggregate", "aggregate_name": "median", "real_time": 1, "cpu_time": 1, "ns": 1.0},
  {"name": "BM_X/A/100/min_time:0.200/real_time_median", "run_name": "BM_X/A/100/min_time:0.200/real_time",
   "run_type": "aggregate", "aggregate_name": "median", "real_time": 1, "cpu_time": 1, "ns": 2.0}
 ]}
JSON
rm -rf "$out"
"$tool" "$out.suffixed.json" --out "$out" --reference "article=10:1.5,100:1.5" > "$out.list"
[[ "$(cat "$out.list")" == "$out/BM_X_ns.png" ]] || { echo "suffixes not stripped"; cat "$out.list"; exit 1; }

# A malformed reference is rejected before anything is drawn.
if "$tool" "$out.suffixed.json" --out "$out" --reference "article=10" 2> "$out.err"; then
  echo "accepted a malformed --reference"; exit 1
fi
grep -q "bad point" "$out.err" || { echo "unclear --reference error"; cat "$out.err"; exit 1; }

# tools/plot_readme_charts draws the index charts with the article's lines beside ours.
readme_charts="$(dirname "$tool")/plot_readme_charts"
rm -rf "$out"
"$readme_charts" --index "$sample" --out "$out" > "$out.list"
[[ -s "$out/BM_EntityIndex_us_per_entity.png" && -s "$out/BM_EntityIndex_memory_mb.png" ]] \
  || { echo "plot_readme_charts did not write both index charts"; exit 1; }
if "$readme_charts" --out "$out" 2> /dev/null; then
  echo "plot_readme_charts ran without a JSON file"; exit 1
fi
echo "PASS"
