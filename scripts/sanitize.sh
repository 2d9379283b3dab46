#!/usr/bin/env bash
# `make sanitize` (SAN=address, the default): the whole project (benchmarks left out) built with AddressSanitizer
# and UBSan in $SAN_BUILD, then the whole ctest suite on it. ASan's reports land in $SAN_BUILD/sanitizer-logs,
# those of the processes the tests start (ragmig, ragmig-torch, fault writers) included, whose stderr a test may
# not show; UBSan's go to stderr (GCC 12's combined runtime ignores its log_path) and end the process that hit it
# (halt_on_error), which fails its test. The run fails on a failed test or on any report. On the 2-core VM
# (2026-12-05): 32 min 43 s from an empty build folder, the suite 17.5 min of it.
# Two tests skip there (RAGMIG_SKIP_UNDER_SANITIZER): ASan's malloc replaces glibc's heap settings, and its shadow
# memory cannot be mapped under the address-space limit one test's job runs in. Leaks are not checked: LibTorch
# keeps its registries until exit (make fuzz checks leaks in the torch-free parsers).
#
# `make tsan` (SAN=thread): ThreadSanitizer, on the tests of the parts that run threads of their own ($TSAN_LABELS:
# the scheduler, its executors, sweeps and monitor, the embedding server, evaluation with the parallel BM25 build,
# the stop signals), the processes they start (ragmig run / batch / serve, their jobs) included; reports in
# $SAN_BUILD/sanitizer-logs. Races with a frame in an uninstrumented library are left out (scripts/tsan.supp says
# which and why). On the 2-core VM (2026-12-05), build-tsan built: 11 min, the suite 649 s of it.
set -uo pipefail
cd "$(dirname "$0")/.."
san=${SAN:-address}
build=${SAN_BUILD:-build-asan}
jobs=${JOBS:-2}
data=${DATA:-../shared/data}
case "$san" in
  address) flags=address,undefined; select=() ;;
  thread) flags=thread; select=(-L "${TSAN_LABELS:-core|exec|sched|serve|monitor|slurm|batch|eval}") ;;
  *) echo "SAN=$san: expected address or thread" >&2; exit 2 ;;
esac
if [ ! -f "$build/CMakeCache.txt" ]; then
  # -O1 without -DNDEBUG: asserts on, the reports' lines close to exact, the suite about 2x CI's time.
  cmake -S . -B "$build" -G Ninja -DRAGMIG_DATA_DIR="$(realpath "$data")" -DRAGMIG_SANITIZE=$flags \
    -DRAGMIG_BUILD_BENCH=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 || exit 1
fi
cmake --build "$build" -j "$jobs" || exit 1

logs=$(realpath "$build")/sanitizer-logs
supp=$(realpath scripts/tsan.supp)
rm -rf "$logs" && mkdir -p "$logs"
(cd "$build" && ASAN_OPTIONS=detect_leaks=0:log_path=$logs/asan UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  TSAN_OPTIONS="log_path=$logs/tsan suppressions=$supp second_deadlock_stack=1" \
  OMP_NUM_THREADS=1 ctest -j "$jobs" --timeout 900 --output-on-failure "${select[@]}")
rc=$?
reports=$(find "$logs" -type f | sort)
if [ -n "$reports" ]; then
  echo "sanitizer reports ($(echo "$reports" | wc -l)), in $logs:"
  for f in $reports; do
    echo "== $f"
    grep -m1 -E "ERROR: AddressSanitizer|runtime error|WARNING: ThreadSanitizer" "$f"
  done
  exit 1
fi
[ $rc = 0 ] && echo "make $([ "$san" = thread ] && echo tsan || echo sanitize): every test passed, no sanitizer report"
exit $rc
