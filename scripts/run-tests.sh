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
    step "libFuzzer, ${FUZZ_SECONDS:-10}s per target"
    if make -s fuzz >/dev/null; then
        for f in build/fuzz/fuzz_*; do
            [ -x "$f" ] || continue
            name=$(basename "$f")
            work=$(mktemp -d)
            cp -r "tests/fuzz/corpus/$name/." "$work/" 2>/dev/null || true
            ran=$((ran + 1))
            if ! "$f" -max_total_time="${FUZZ_SECONDS:-10}" -max_len=70000 "$work" >"$work.log" 2>&1; then
                tail -40 "$work.log"
                failed+=("$f")
            else
                tail -1 "$work.log"
            fi
            rm -rf "$work" "$work.log"
        done
    else
        failed+=("make fuzz")
    fi
fi

step "integration tests"
# The Docker provider's tests (test_docker.py) need a Docker daemon: started here if none runs.
# Without one they fail with the reason (never skipped).
scripts/dockerd-up.sh || true
if ls tests/integration/test_*.py >/dev/null 2>&1; then
    ran=$((ran + 1))
    if ! (cd tests/integration && python3 -m unittest discover -v -p 'test_*.py' 2>&1); then
        failed+=("integration")
    fi
fi

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
