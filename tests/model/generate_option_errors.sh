#!/usr/bin/env bash
# `mooncake generate`'s usage errors: for every row, exit 2 and one stderr line naming the
# option or the value, nothing on stdout.
# Usage: generate_option_errors.sh MOONCAKE
set -u
mooncake=$1
# arguments (one string, split on spaces) | what the error line must name
rows=(
  "--prompt-ids 1 --max-tokens 1|--model"
  "--model nosuch --prompt-ids 1 --max-tokens 1|nosuch"
  "--model tiny --max-tokens 1|--prompt-ids"
  "--model tiny --prompt-ids 1,x --max-tokens 1|prompt-ids = '1,x'"
  "--model tiny --prompt-ids 1,512 --max-tokens 1|'512' is not a token id in [0, 512)"
  "--model tiny --prompt-ids 1|--max-tokens"
  "--model tiny --prompt-ids 1 --max-tokens -1|max-tokens = -1"
  "--model tiny --prompt-ids 1 --max-tokens 1 --trace.limit -1|trace.limit = -1"
  "--model tiny --trace /nonexistent/t.jsonl|/nonexistent/t.jsonl"
  "--model tiny --prompt-ids 1 --max-tokens 1 --bogus|bogus"
)
failures=0
for row in "${rows[@]}"; do
  args=${row%%|*}
  want=${row#*|}
  # shellcheck disable=SC2086
  out=$("$mooncake" generate $args 2>/tmp/generate-err.$$)
  code=$?
  err=$(cat /tmp/generate-err.$$)
  printf '%-60s %s  %s\n' "$args" "$code" "$err"
  if [[ $code -ne 2 || -n $out || $(wc -l <<<"$err") -ne 1 || $err != *"$want"* ]]; then
    echo "  FAIL: wanted exit 2, no stdout and one error line naming '$want'"
    failures=$((failures + 1))
  fi
done
rm -f /tmp/generate-err.$$
exit $((failures > 0))
