#!/usr/bin/env bash
# The whole suite, as `make test` runs it: unit tests, fuzz corpus replay, a short libFuzzer run,
# integration tests against real executors. Exits non-zero if anything fails.
set -u
MODE=${1:-release}
BUILD=build/$MODE
export MODE
failed=()
ran=0

step() { printf '\n== %s\n' "$*"; }

step "unit tests ($MODE)"
for t in "$BUILD"/tests/unit/test_* "$BUILD"/tests/unit/gw_test_*; do
    [ -x "$t" ] || continue
    case "$t" in *.o|*.d) continue ;; esac
    ran=$((ran + 1))
    if ! "$t"; then failed+=("$t"); fi
done

step "fuzz corpus replay"
for t in "$BUILD"/tests/fuzz/*_replay; do
    [ -x "$t" ] || continue
    name=$(basename "$t" _replay)
    ran=$((ran + 1))
    if ! "$t" "tests/fuzz/corpus/$name"; then failed+=("$t"); fi
done

if [ "${FUZZ_SECONDS:-10}" -gt 0 ] && command -v clang >/dev/null; then
    step "libFuzzer, ${FUZZ_SECONDS:-10}s per target, $(nproc) at a time"
    # One fuzzer per core at once: each is single-threaded, so this halves the wall time on CI's
    # two cores without shortening any target's run. A failing target leaves a .fail file.
    fuzz_one() {
        local f=$1 name work
        name=$(basename "$f")
        work=$(mktemp -d)
        cp -r "tests/fuzz/corpus/$name/." "$work/" 2>/dev/null || true
        if ! "$f" -max_total_time="${FUZZ_SECONDS:-10}" -max_len=70000 "$work" >"$work.log" 2>&1; then
            { echo "$name:"; tail -40 "$work.log"; } >"$fuzz_out/$name.fail"
        else
            echo "$name: $(tail -1 "$work.log")" >"$fuzz_out/$name.ok"
        fi
        rm -rf "$work" "$work.log"
    }
    if make -s fuzz >/dev/null; then
        fuzz_out=$(mktemp -d)
        for f in build/fuzz/fuzz_*; do
            [ -x "$f" ] || continue
            ran=$((ran + 1))
            while [ "$(jobs -rp | wc -l)" -ge "$(nproc)" ]; do wait -n; done
            fuzz_one "$f" &
        done
        wait
        cat "$fuzz_out"/*.ok 2>/dev/null
        for r in "$fuzz_out"/*.fail; do
            [ -e "$r" ] || continue
            cat "$r"
            failed+=("build/fuzz/$(basename "$r" .fail)")
        done
        rm -rf "$fuzz_out"
    else
        failed+=("make fuzz")
    fi
fi

step "integration tests"
# The Docker provider's tests (test_docker.py) need a Docker daemon: started here if none runs.
# Without one they fail with the reason (never skipped).
scripts/dockerd-up.sh || true
# One process per module, timed, so a slow or failing module is named in the log.
# SANDPIPE_TESTS picks modules ("test_api test_gateway"); SANDPIPE_TESTS_EXCLUDE leaves some out
# (the ASan pass of .ci/run: those whose cost is Chromium or Docker image builds, run by the
# release pass). Both are printed, so what did not run is never mistaken for a pass.
modules=()
for f in tests/integration/test_*.py; do
    [ -e "$f" ] || continue
    m=$(basename "$f" .py)
    if [ -n "${SANDPIPE_TESTS:-}" ] && [[ " $SANDPIPE_TESTS " != *" $m "* ]]; then continue; fi
    if [[ " ${SANDPIPE_TESTS_EXCLUDE:-} " == *" $m "* ]]; then continue; fi
    modules+=("$m")
done
for m in ${SANDPIPE_TESTS:-}; do
    [ -e "tests/integration/$m.py" ] || { echo "SANDPIPE_TESTS: no module $m" >&2; failed+=("$m"); }
done
[ -n "${SANDPIPE_TESTS:-}" ] && echo "only: $SANDPIPE_TESTS"
[ -n "${SANDPIPE_TESTS_EXCLUDE:-}" ] && echo "left out of this pass: $SANDPIPE_TESTS_EXCLUDE"
# The tests' own unclosed sockets and files are not what a reader of a failed run looks for.
export PYTHONWARNINGS=${PYTHONWARNINGS:-ignore::ResourceWarning}
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
timings=()
for m in "${modules[@]}"; do
    ran=$((ran + 1))
    t0=$(date +%s)
    (cd tests/integration && python3 -m unittest -v "$m" 2>&1) | tee "$logs/$m.log"
    [ "${PIPESTATUS[0]}" -eq 0 ] || failed+=("$m")
    timings+=("$(printf '%5ds %s' $(($(date +%s) - t0)) "$m")")
done
if [ ${#timings[@]} -gt 0 ]; then
    step "integration modules by time"
    printf '%s\n' "${timings[@]}" | sort -rn
fi
# A failure's report again at the end, where a CI log's tail shows it: from unittest's first
# FAIL/ERROR block to its summary line.
for m in "${failed[@]}"; do
    [ -s "$logs/$m.log" ] || continue
    step "failures of $m"
    sed -n '/^\(FAIL\|ERROR\): /,/^\(FAILED\|OK\)/p' "$logs/$m.log" | tail -200
done

echo
if [ "$ran" -eq 0 ]; then
    echo "no tests found: nothing ran" >&2
    exit 1
fi
if [ ${#failed[@]} -gt 0 ]; then
    echo "FAILED: ${failed[*]}" >&2
    exit 1
fi
echo "all $ran test groups passed"
