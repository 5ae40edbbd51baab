#!/usr/bin/env bash
# slurm/store.slurm stopped by a signal on a real single-node Slurm (docs/CLIENT.md, "What the
# launcher returns after a signal"): `scancel --batch --signal=TERM` (the batch script alone;
# it passes the stop on to srun as SIGUSR1) and `scancel --signal=TERM` (the tasks). Asserts per
# job: state COMPLETED with ExitCode 0:0, `result OK` in the output, summary.json written.
# (Before, the batch script died at once on its TERM: FAILED, ExitCode 0:15.)
# Usage: store_signal_test.sh SOURCE_DIR MOONCAKE_BINARY   (Slurm installed: slurm_job_test.sh
# installs it; exit 77, a CTest skip, without slurmctld)
set -uo pipefail
src=$(cd "${1:?usage: store_signal_test.sh SOURCE_DIR MOONCAKE_BINARY}" && pwd)
bin=$(readlink -f "${2:?usage: store_signal_test.sh SOURCE_DIR MOONCAKE_BINARY}")
export PATH=${PATH}:/usr/sbin
command -v slurmctld >/dev/null || { echo "SKIP: Slurm is not installed"; exit 77; }
# shellcheck source=tests/slurm/local_slurm.sh
source "${src}/tests/slurm/local_slurm.sh"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/mooncake-slurm-signal.XXXXXX")
trap 'local_slurm_down; rm -rf "${tmp}"' EXIT
local_slurm_up "${tmp}/slurm" || { echo "FAIL: the local Slurm did not come up"; exit 1; }
cd "${tmp}"
failures=0
fail() {
  echo "FAIL: $*"
  failures=$((failures + 1))
}
for how in batch tasks; do
  jid=$(MOONCAKE_HOME=${src} MOONCAKE_BIN=${bin} MOONCAKE_RUNS=${tmp}/runs \
    sbatch --parsable --overcommit --ntasks=3 "${src}/slurm/store.slurm" --store.dram 16MiB)
  run=${tmp}/runs/${jid}
  for _ in $(seq 1 600); do
    [[ -e ${run}/connect.json ]] && break
    sleep 0.1
  done
  if [[ ! -e ${run}/connect.json ]]; then
    fail "${how}: the store job never became ready"
    cat "mooncake-store-${jid}.out"
    scancel "${jid}"
    continue
  fi
  if [[ ${how} == batch ]]; then
    scancel --batch --signal=TERM "${jid}"
  else
    scancel --signal=TERM "${jid}"
  fi
  state=""
  for _ in $(seq 1 900); do
    state=$(scontrol show job "${jid}" | grep -o "JobState=[A-Z]*")
    [[ ${state} =~ =(COMPLETED|FAILED|CANCELLED|TIMEOUT)$ ]] && break
    sleep 0.1
  done
  exit_code=$(scontrol show job "${jid}" | grep -o " ExitCode=[0-9:]*")
  echo "${how}: ${state}${exit_code}"
  [[ ${state} == JobState=COMPLETED && ${exit_code} == " ExitCode=0:0" ]] ||
    fail "${how}: ${state}${exit_code}, want COMPLETED with ExitCode 0:0"
  grep -qE "^result +OK" "mooncake-store-${jid}.out" || fail "${how}: no 'result OK'"
  [[ -s ${run}/summary.json ]] || fail "${how}: no summary.json"
  ((failures == 0)) || cat "mooncake-store-${jid}.out"
done
((failures == 0)) || exit 1
echo "PASS"
