#!/usr/bin/env bash
# make lint: formatting (clang-format, .clang-format) and static analysis (cppcheck).
set -uo pipefail
cd "$(dirname "$0")/.."
files=$(git ls-files '*.c' '*.h')
rc=0
if ! clang-format --dry-run --Werror $files 2>/tmp/sp-format.txt; then
    echo "formatting differs (run: clang-format -i \$(git ls-files '*.c' '*.h')):"
    grep -c "clang-format-violations" /tmp/sp-format.txt | sed 's/^/  places: /'
    rc=1
fi
if ! cppcheck --quiet --error-exitcode=1 --enable=warning,performance,portability \
        --suppress=missingIncludeSystem --suppress=varFuncNullUB --suppress=unknownMacro --inline-suppr -D_GNU_SOURCE \
        -I /usr/include/json-c -I common -I executor -I api \
        -I gateway $files; then
    rc=1
fi
[ $rc -eq 0 ] && echo "lint: clean"
exit $rc
