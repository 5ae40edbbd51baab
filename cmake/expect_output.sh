#!/usr/bin/env bash
# Usage: expect_output.sh REGEX COMMAND [ARGS...]
# Runs COMMAND, shows its output, and passes only when it exits 0 AND its output matches the
# extended regular expression REGEX (CTest's PASS_REGULAR_EXPRESSION alone ignores exit codes).
set -u
regex=$1
shift
out=$("$@" 2>&1)
code=$?
printf '%s\n' "$out"
if [[ $code -ne 0 ]]; then
  echo "expect_output: command exited $code" >&2
  exit 1
fi
if ! tr "\n" " " <<<"$out" | grep -Eq -- "$regex"; then
  echo "expect_output: output does not match: $regex" >&2
  exit 1
fi
