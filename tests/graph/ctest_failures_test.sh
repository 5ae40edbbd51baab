#!/usr/bin/env bash
# ctest_failures_test.sh PYTHON TOOL FIXTURE: runs the fixture project's failing tests with ctest
# in a temp folder, then tools/ctest_failures.py on it; prints what the tool printed and EXIT=.
set -u
python=$1 tool=$2 fixture=$3
dir=$(mktemp -d "${TMPDIR:-/tmp}/mooncake-ctest-failures.XXXXXX")
trap 'rm -rf "$dir"' EXIT
cmake -S "$fixture" -B "$dir" >/dev/null || exit 1
(cd "$dir" && ctest --parallel 4 >/dev/null 2>&1) && { echo "the fixture's tests passed"; exit 1; }
"$python" "$tool" "$dir"
echo "EXIT=$?"
