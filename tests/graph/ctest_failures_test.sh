#!/usr/bin/env bash
# ctest_failures_test.sh PYTHON TOOL FIXTURE: runs the fixture project's failing tests with ctest
# in a temp folder, then tools/ctest_failures.py on it; prints what the tool printed and EXIT=, and fails when the
# tool names the test that passed.
set -u
python=$1 tool=$2 fixture=$3
dir=$(mktemp -d "${TMPDIR:-/tmp}/mooncake-ctest-failures.XXXXXX")
trap 'rm -rf "$dir"' EXIT
cmake -S "$fixture" -B "$dir" >/dev/null || exit 1
(cd "$dir" && ctest --parallel 4 >/dev/null 2>&1) && { echo "the fixture's tests passed"; exit 1; }
out=$("$python" "$tool" "$dir")
code=$?
printf '%s\n' "$out"
# The passing test must not be named (a regex over the output cannot say "absent").
grep -q "^  passes:" <<<"$out" && { echo "the passing test was named"; exit 1; }
echo "EXIT=$code"
