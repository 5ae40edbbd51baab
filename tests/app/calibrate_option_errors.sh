#!/usr/bin/env bash
# `mooncake calibrate`'s usage errors: for every row, exit 2 and one stderr line naming the
# option or the value, nothing on stdout (no preset printed, nothing measured).
# Usage: calibrate_option_errors.sh MOONCAKE
set -u
mooncake=$1
err_file=$(mktemp)
trap 'rm -f "$err_file"' EXIT
# arguments (one string, split on spaces) | what the error line must name
rows=(
  "--quick|--model"
  "--model nosuch --quick|nosuch"
  "--model tiny --prefill.chunks 16,x|prefill.chunks = '16,x'"
  "--model tiny --prefill.chunks 0|prefill.chunks = '0'"
  "--model tiny --prefill.prefixes 0,,8|prefill.prefixes = '0,,8'"
  "--model tiny --decode.batches 0|decode.batches = '0'"
  "--model tiny --decode.contexts 99999999|decode.contexts = '99999999'"
  "--model tiny --repeats 0|repeats = 0"
  "--model tiny --clock sundial|clock = 'sundial'"
  "--model tiny --hardware.hbm 2XB|hardware.hbm = '2XB'"
  "--model tiny --hardware.dram 10|hardware.dram = '10'"
  "--model tiny --hardware.nic_gbit_per_s 0|hardware.nic_gbit_per_s = 0"
  "--model tiny --out /nonexistent/dir/hw.ini|--out /nonexistent/dir/hw.ini"
  "--model tiny --model-ini /nonexistent/dir/m.ini|--model-ini /nonexistent/dir/m.ini"
  "--model tiny --bogus|bogus"
)
failures=0
for row in "${rows[@]}"; do
  args=${row%%|*}
  want=${row#*|}
  # shellcheck disable=SC2086
  out=$("$mooncake" calibrate $args 2>"$err_file")
  code=$?
  err=$(cat "$err_file")
  printf '%-55s %s  %s\n' "$args" "$code" "$err"
  if [[ $code -ne 2 || -n $out || $(wc -l <<<"$err") -ne 1 || $err != *"$want"* ]]; then
    echo "  FAIL: wanted exit 2, no stdout and one error line naming '$want'"
    failures=$((failures + 1))
  fi
done
# --help reads as usage, on stdout, exit 0.
help=$("$mooncake" calibrate --help)
if [[ $? -ne 0 || $help != *"Usage: mooncake calibrate --model"* || $help != *"--prefill.chunks"* ]]; then
  echo "FAIL: calibrate --help"
  failures=$((failures + 1))
fi
exit $((failures > 0))
