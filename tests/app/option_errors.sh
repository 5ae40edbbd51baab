#!/usr/bin/env bash
# The main binary's option errors, end to end: for every row of the table below, the binary run
# without mpirun exits 2, prints exactly one line on stderr (nothing on stdout) naming the
# option or file, creates no run folder, and starts no MPI. "No MPI" is observed, not assumed:
# Open MPI's singleton MPI_Init leaves a session folder (ompi.<host>.<uid>) in $TMPDIR, so each
# row runs with its own empty TMPDIR that must stay empty.
# Usage: option_errors.sh MOONCAKE CONFIG_DIR
set -u
mooncake=$1
configs=$2
work=$(mktemp -d "${TMPDIR:-/tmp}/mooncake-option-errors.XXXXXX")
trap 'rm -rf "$work"' EXIT
printf 'store.dram = 2XB\n' >"$work/bad_unit.ini"
printf 'store.dram = 64MiB\nno_such_key = 1\n' >"$work/unknown_key.ini"

# arguments (one string, split on spaces) | what the error line must name
rows=(
  "--store.dram 2XB|store.dram"
  "--store.dram 1KiB|store.dram"
  "--job.rpc_timeout 100|job.rpc_timeout"
  "--transport.data_path carrier-pigeon|transport.data_path"
  "--transport.rma_slice 1KiB|transport.rma_slice"
  "--conductor.policy bogus|conductor.policy"
  "--conductor.early_rejection sometimes|conductor.early_rejection"
  "--model.preset nosuch|model.preset"
  "--time_scale 0|time_scale"
  "--engine.device gpu|engine.device = 'gpu' (allowed: cpu, cuda)"
  "--engine.device cuda|engine.device = cuda needs engine.kind = reference"
  "--job.mode bogus|job.mode"
  "--trace.limit -1|trace.limit"
  "--seed -3|seed"
  "--slo.tbt 5|slo.tbt"
  "--store.replicas 0|store.replicas"
  "--fault.kill x@1s|fault.kill"
  "--job.plots maybe|job.plots"
  "--load.scale 0|load.scale"
  "--prefill.staging 1KiB|prefill.staging"
  "--conductor.admission_margin 1h|conductor.admission_margin"
  "eval --load.scale -2|load.scale"
  "--no-such-option|no-such-option"
  "--config /nonexistent/x.ini|/nonexistent/x.ini"
  "--config $work/bad_unit.ini|store.dram"
  "--config $work/unknown_key.ini|no_such_key"
  "--trace $work/missing.jsonl|$work/missing.jsonl"
  "configs/serve/small.ini|--config configs/serve/small.ini"
  "eval --slo.ttft 0s|slo.ttft"
  "eval --no-such-option|no-such-option"
  "eval --conductor.policy bogus|conductor.policy"
  "eval --trace.limit -1|trace.limit"
  "--job.mod store|job.mod"
  "eval --trace.limi 5|trace.limi"
)

failures=0
printf '%-48s %-5s %s\n' "arguments" "exit" "error line"
for row in "${rows[@]}"; do
  args=${row%%|*}
  name=${row#*|}
  tmp=$(mktemp -d "$work/tmpdir.XXXXXX")
  # shellcheck disable=SC2086  # the row's arguments are split on purpose
  TMPDIR=$tmp "$mooncake" $args --presets.dir "$configs" --out "$tmp.run" >"$tmp.out" 2>"$tmp.err"
  code=$?
  err=$(cat "$tmp.err")
  printf '%-48s %-5s %s\n' "${args/$work/TMP}" "$code" "${err/$work/TMP}"
  problems=()
  [[ $code -eq 2 ]] || problems+=("exit $code, expected 2")
  [[ $(wc -l <"$tmp.err") -eq 1 ]] || problems+=("$(wc -l <"$tmp.err") lines on stderr, expected 1")
  [[ -s $tmp.out ]] && problems+=("stdout is not empty")
  grep -qF -- "$name" "$tmp.err" || problems+=("the error does not name '$name'")
  [[ -e $tmp.run ]] && problems+=("a run folder was created")
  [[ -z $(ls -A "$tmp") ]] || problems+=("MPI was started (TMPDIR holds $(ls "$tmp"))")
  if [[ ${#problems[@]} -gt 0 ]]; then
    echo "  FAIL: $(IFS=';'; echo "${problems[*]}")"
    failures=$((failures + 1))
  fi
done
if [[ $failures -gt 0 ]]; then
  echo "FAIL: $failures of ${#rows[@]} option errors misbehave"
  exit 1
fi
echo "PASS: ${#rows[@]} option errors: exit 2, one line naming the option, no run folder, no MPI"
