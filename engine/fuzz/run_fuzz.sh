#!/bin/bash
# Fuzzes the level JSON compiler, with every component the game-built tools know
# (//engine:level_compiler_fuzzer), for a bounded time on a copy of its seed corpus and
# regressions, with the level-keyword dictionary; see tools/run_fuzzer.sh.
#
#   engine/fuzz/run_fuzz.sh [SECONDS]                     (default 60; CI runs 30)
#   STRATA_FUZZ_CORPUS=DIR engine/fuzz/run_fuzz.sh 1800   (grow a corpus kept in DIR)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
exec tools/run_fuzzer.sh //engine:level_compiler_fuzzer "${1:-60}" \
  engine/fuzz/corpus engine/fuzz/regressions -- -dict=engine/fuzz/level.dict -max_len=8192
