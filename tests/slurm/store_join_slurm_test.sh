#!/usr/bin/env bash
# A store job under sbatch with a standby conductor (slurm/store.slurm, roles conductor:2
# store:2), a second sbatch job joining two store ranks to it (slurm/store-join.slurm), and one
# Python client spanning both (store_join_slurm_client.py says what it asserts). Then
# `mooncake store stop` ends both: each job COMPLETED with ExitCode 0:0.
# Usage: store_join_slurm_test.sh SOURCE_DIR MOONCAKE_BINARY   (PYTHONPATH: the mooncake_store
# module; exit 77, a CTest skip, without slurmctld)
set -uo pipefail
src=$(cd "${1:?usage: store_join_slurm_test.sh SOURCE_DIR MOONCAKE_BINARY}" && pwd)
bin=$(readlink -f "${2:?usage: store_join_slurm_test.sh SOURCE_DIR MOONCAKE_BINARY}")
export PATH=${PATH}:/usr/sbin
command -v slurmctld >/dev/null || { echo "SKIP: Slurm is not installed"; exit 77; }
# shellcheck source=tests/slurm/local_slurm.sh
source "${src}/tests/slurm/local_slurm.sh"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/mooncake-slurm-join.XXXXXX")
# The jobs end before the daemons go, and anything left of them (a failed run) is killed by its
# command line, which names this test's folder.
cleanup() {
  scancel --full --user=root >/dev/null 2>&1
  sleep 1
  pkill -9 -f "${tmp}/runs" 2>/dev/null
  local_slurm_down
  rm -rf "${tmp}"
}
trap cleanup EXIT
local_slurm_up "${tmp}/slurm" || { echo "FAIL: the local Slurm did not come up"; exit 1; }
cd "${tmp}"
MOONCAKE_HOME=${src} MOONCAKE_BIN=${bin} MOONCAKE_RUNS=${tmp}/runs \
  timeout 240 /usr/bin/python3 "${src}/tests/slurm/store_join_slurm_client.py" "${src}" "${bin}"
