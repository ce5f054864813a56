#!/usr/bin/env bash
# Runs every libFuzzer target of a fuzz build for a bounded time (docs/reliability.md):
#
#   tests/fuzz/run.sh BUILD_DIR SECONDS_PER_TARGET
#
# Each target first replays its regression inputs (tests/fuzz/regressions/TARGET/, crashes
# found earlier: each must now pass), then fuzzes from the checked-in seeds
# (tests/fuzz/corpus/TARGET/) plus the corpus it grew in earlier runs (BUILD_DIR/fuzz-corpus,
# not checked in). A crash, leak, sanitizer report or timeout leaves its input in
# BUILD_DIR/fuzz-artifacts/ and makes the script exit 1. Prints one line per target with its
# executions.
set -u -o pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BUILD=${1:?usage: run.sh BUILD_DIR SECONDS}
SECONDS_EACH=${2:?usage: run.sh BUILD_DIR SECONDS}
FUZZ=$BUILD/tests/fuzz
[[ -d $FUZZ ]] || { echo "fuzz: no $FUZZ (configure with -DNPU_BUILD_FUZZERS=ON)" >&2; exit 2; }
mkdir -p "$BUILD/fuzz-artifacts"
status=0
for bin in "$FUZZ"/fuzz_*; do
  [[ -x $bin ]] || continue
  name=$(basename "$bin")
  seeds=$ROOT/tests/fuzz/corpus/$name
  grown=$BUILD/fuzz-corpus/$name
  regressions=$ROOT/tests/fuzz/regressions/$name
  mkdir -p "$grown"
  log=$BUILD/fuzz-artifacts/$name.log
  opts=(-timeout=10 -rss_limit_mb=4096 -malloc_limit_mb=4096
        -artifact_prefix="$BUILD/fuzz-artifacts/$name-")
  if compgen -G "$regressions/*" > /dev/null; then
    if ! ASAN_OPTIONS=detect_leaks=1 "$bin" "${opts[@]}" "$regressions"/* > "$log" 2>&1; then
      echo "fuzz: $name: a regression input fails again (log: $log)"
      status=1
      continue
    fi
  fi
  if ASAN_OPTIONS=detect_leaks=1 "$bin" "${opts[@]}" -max_total_time="$SECONDS_EACH" \
      -print_final_stats=1 "$grown" "$seeds" > "$log" 2>&1; then
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    corpus=$(find "$grown" -type f | wc -l)
    echo "fuzz: $name: ${execs:-?} executions in ${SECONDS_EACH} s, no finding (corpus $corpus)"
  else
    echo "fuzz: $name: FINDING (input and log in $BUILD/fuzz-artifacts/: $log)"
    grep -m3 -E "ERROR|SUMMARY|runtime error" "$log" | sed 's/^/  /'
    status=1
  fi
done
exit $status
