#!/usr/bin/env bash
# Builds the libFuzzer targets of fuzz/ (clang-14, ASan + UBSan, no LibTorch)
# in build-fuzz and runs each for SECONDS: first on its kept crash inputs
# (fuzz/regressions/NAME/), then on its seeds (fuzz/corpus/NAME/, read only)
# and what earlier runs found (build-fuzz/fuzz/corpus/NAME/). Prints per
# fuzzer the inputs executed and the exec/s (libFuzzer's final stats).
#
# Usage: tools/fuzz.sh SECONDS [NAME...]   every fuzzer when no NAME is given
#        tools/fuzz.sh --seeds             rewrite fuzz/corpus's generated seeds (fuzz/make_seeds.cpp)
# RUNS=N (environment) also stops each fuzzer once it has executed N inputs
# (the recorded 10-million runs: RUNS=10000000 tools/fuzz.sh 7200 NAME).
# Exits 1 on any crash, sanitizer report, leak, hang (-timeout) or memory
# blow-up (-rss_limit_mb); the input that did it is left in
# build-fuzz/fuzz/artifacts/NAME/ and the run's log in build-fuzz/fuzz/logs/.
# It holds /tmp/crucible-build.lock while it builds, as tools/build.sh does
# (run under `flock /tmp/crucible-build.lock`, it uses that lock instead of
# waiting for it), and not while the fuzzers run.
set -uo pipefail
cd "$(dirname "$0")/.."

lock=/tmp/crucible-build.lock
parent=$(tr '\0' ' ' <"/proc/$PPID/cmdline" 2>/dev/null || true)
locked=()
[[ $parent == *flock*crucible-build.lock* ]] || locked=(flock "$lock")

(($#)) || { sed -n '2,17p' "$0"; exit 2; }
export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=1
build=build-fuzz
per_input_timeout_s=10
rss_limit_mb=2048

if [[ ! -f $build/build.ninja ]]; then
  # RelWithDebInfo at -O1, without NDEBUG: assertions stay on.
  CC=clang-14 CXX=clang++-14 "${locked[@]}" cmake -S . -B "$build" -G Ninja -DCRUCIBLE_FUZZ=ON -DCRUCIBLE_WITH_TORCH=OFF \
    -DCRUCIBLE_TESTS=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g" >/dev/null ||
    { echo "fuzz.sh: cmake failed"; exit 1; }
fi
if [[ $1 == --seeds ]]; then
  "${locked[@]}" cmake --build "$build" -j2 --target fuzz_make_seeds || exit 1
  exec "$build/fuzz/fuzz_make_seeds" fuzz
fi
seconds=$1
shift
[[ $seconds =~ ^[0-9]+$ ]] || { echo "fuzz.sh: SECONDS must be a whole number, got '$seconds'"; exit 2; }
"${locked[@]}" cmake --build "$build" -j2 --target fuzzers || { echo "fuzz.sh: build failed"; exit 1; }

names=("$@")
if ((${#names[@]} == 0)); then
  for f in fuzz/*.fuzz.cpp; do
    n=$(basename "$f" .fuzz.cpp)
    names+=("$n")
  done
fi

export UBSAN_OPTIONS=print_stacktrace=1
# Readable stack traces in crash reports: Debian's llvm-14 installs the
# symbolizer under a suffixed name only, which the sanitizers do not look for.
symbolizer=/usr/lib/llvm-14/bin/llvm-symbolizer
[[ -x $symbolizer ]] && export ASAN_SYMBOLIZER_PATH=$symbolizer
failed=0
# Harnesses that write files (safetensors_index rewrites its index file every
# input) write them in memory where there is /dev/shm: on this VM's disk it
# ran at 941 inputs/s, on /dev/shm at 17,361.
[[ -d /dev/shm && -w /dev/shm ]] && export TMPDIR=/dev/shm
printf '%-18s %12s %9s %6s %8s  %s\n' fuzzer inputs exec/s new rss_mb result
for name in "${names[@]}"; do
  bin=$build/fuzz/$name
  [[ -x $bin ]] || { echo "fuzz.sh: no fuzzer $name"; failed=1; continue; }
  work=$build/fuzz/corpus/$name artifacts=$build/fuzz/artifacts/$name log=$build/fuzz/logs/$name.log
  mkdir -p "$work" "$artifacts" "$(dirname "$log")" "fuzz/corpus/$name"
  common=(-timeout="$per_input_timeout_s" -rss_limit_mb="$rss_limit_mb" -detect_leaks=1
          -error_exitcode=77 -timeout_exitcode=70 -artifact_prefix="$artifacts/")
  result=ok
  # Kept crash inputs first: each must run clean now that its bug is fixed.
  shopt -s nullglob
  kept=(fuzz/regressions/"$name"/*)
  shopt -u nullglob
  if ((${#kept[@]})) && ! "$bin" "${common[@]}" "${kept[@]}" >"$log.regressions" 2>&1; then
    result="FAILED on a kept input (fuzz/regressions/$name; $log.regressions)"
  fi
  "$bin" "${common[@]}" -max_total_time="$seconds" ${RUNS:+-runs="$RUNS"} -print_final_stats=1 "$work" "fuzz/corpus/$name" >"$log" 2>&1
  rc=$?
  if ((rc != 0)); then
    what=$(grep -a -m1 -oE 'ERROR: (libFuzzer|AddressSanitizer|LeakSanitizer): [a-z-]+|runtime error: .*|SUMMARY: [A-Za-z]+: [^ ]+' "$log")
    result="FAILED (exit $rc: ${what:-see log}; $log, inputs in $artifacts)"
  fi
  [[ $result == ok ]] || failed=1
  stat() { grep -a -m1 "^stat::$1:" "$log" | awk '{print $2}'; }
  printf '%-18s %12s %9s %6s %8s  %s\n' "$name" "$(stat number_of_executed_units)" "$(stat average_exec_per_sec)" \
    "$(stat new_units_added)" "$(stat peak_rss_mb)" "$result"
done
exit "$failed"
