#!/bin/bash
# Fuzzes the entity-resource loader (//resource:entity_resource_fuzzer) for a bounded
# time on a copy of its seed corpus; see tools/run_fuzzer.sh.
#
#   resource/run_fuzz.sh [SECONDS]          (default 30)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
exec tools/run_fuzzer.sh //resource:entity_resource_fuzzer "${1:-30}" \
  resource/testdata/fuzz_corpus -- -max_len=4096
