#!/usr/bin/env bash
# The slurm test of `mooncake p2p` (docs/P2P.md): a real single-node Slurm on 127.0.0.1 runs
# `sbatch --wait slurm/p2p.slurm FILE DIR` with MOONCAKE_P2P_SBCAST=1, so the same job copies
# the same 48 MiB file with mooncake p2p (4 ranks under srun --mpi=pmix) and with sbcast, and
# compares the copies with cmp. Asserts: the job is COMPLETED with ExitCode 0:0; the output has
# mooncake's verdict "p2p result=OK receivers=3 ok=3", the sbcast timing and "identical"; both
# copies equal the source. The daemons are stopped by PID in an EXIT trap.
# Usage: p2p_slurm_test.sh SOURCE_DIR MOONCAKE_BINARY
set -euo pipefail
src=$(cd "${1:?usage: p2p_slurm_test.sh SOURCE_DIR MOONCAKE_BINARY}" && pwd)
bin=$(readlink -f "${2:?usage: p2p_slurm_test.sh SOURCE_DIR MOONCAKE_BINARY}")
export PATH=${PATH}:/usr/sbin
if ! command -v slurmctld >/dev/null || ! command -v sbcast >/dev/null; then
  echo "SKIP: Slurm is not installed (launch/test installs it; tests/slurm/slurm_job_test.sh too)"
  exit 77
fi
# shellcheck source=tests/slurm/local_slurm.sh
source "${src}/tests/slurm/local_slurm.sh"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/mooncake-p2p-slurm.XXXXXX")
on_exit() {
  local rc=$?
  set +e
  local_slurm_down
  if ((rc != 0)); then echo "kept ${tmp} for inspection"; else rm -rf "${tmp}"; fi
  exit "${rc}"
}
trap on_exit EXIT
local_slurm_up "${tmp}/slurm" || { echo "FAIL: the local Slurm did not come up" >&2; exit 1; }

work=${tmp}/work
mkdir -p "${work}/build"
ln -s "${bin}" "${work}/build/mooncake"
ln -s "${src}/slurm" "${work}/slurm"
cd "${work}"
head -c $((48 * 1024 * 1024 + 13)) /dev/urandom >"${tmp}/weights.bin"
dest=${tmp}/dest
failures=0
check() { if eval "$1"; then echo "ok: $2"; else echo "FAIL: $2" >&2; failures=$((failures + 1)); fi; }

out=$(MOONCAKE_P2P_SBCAST=1 timeout 150 sbatch --wait --ntasks=4 --overcommit --time=00:03:00 \
  slurm/p2p.slurm "${tmp}/weights.bin" "${dest}" --p2p.piece_size 1MiB 2>&1) || true
echo "${out}"
job=$(sed -n 's/^Submitted batch job \([0-9]*\).*/\1/p' <<<"${out}")
[[ -n ${job} ]] || { echo "FAIL: sbatch did not submit" >&2; exit 1; }
log=mooncake-p2p-${job}.out
grep -vE "PMIX ERROR|UCX +WARN" "${log}" || true
info=$(scontrol show job "${job}" 2>&1 || true)
check '[[ $(sed -n "s/.*JobState=\([A-Z_]*\).*/\1/p" <<<"${info}") == COMPLETED ]]' "job ${job} is COMPLETED"
check '[[ $(sed -n "s/.* ExitCode=\([0-9:]*\).*/\1/p" <<<"${info}") == 0:0 ]]' "ExitCode 0:0"
check 'grep -q "^p2p result=OK receivers=3 ok=3 failed=0 dead=0" "${log}"' "mooncake p2p: every receiving rank holds every byte"
check 'grep -q "^p2p.slurm: sbcast: [0-9.]* s" "${log}"' "sbcast ran in the same job and was timed"
check 'grep -q "copies identical on 1 node" "${log}"' "the job compared both copies (cmp)"
check 'cmp -s "${tmp}/weights.bin" "${dest}/weights.bin"' "the p2p copy equals the source"
check 'cmp -s "${tmp}/weights.bin" "${dest}/sbcast/weights.bin"' "the sbcast copy equals the source"
grep -E "^p2p.slurm: (mooncake p2p|sbcast|compare)" "${log}" || true
((failures == 0)) || exit 1
echo "all p2p slurm checks passed"
