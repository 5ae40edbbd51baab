#!/usr/bin/env bash
# cmake --install, then use the install as a site would (label client, docs/CLIENT.md):
#   1. an external CMake project finds the package and links mooncake::client, setting no C++
#      standard of its own (the target carries the C++20 client.h needs);
#   2. the installed binary, started from another working directory, runs a store job;
#      the external client, the installed Python module and `mooncake store stop` use it;
#   3. the installed `mooncake eval` finds its presets beside itself (not in the checkout);
#   4. bin/ holds only what a user runs, and the installed mooncake-mpirun finds its helpers.
#   install_test.sh BUILD_DIR SOURCE_DIR MPIEXEC
set -euo pipefail
build=$1 src=$2 mpiexec=$3
scratch=$(mktemp -d "${TMPDIR:-/tmp}/mooncake-install.XXXXXX")
job_pid=""
# The store job runs in a session of its own and is stopped by PID on any exit, its ranks
# included, before the scratch folder (its connect.json) goes (launch/lib-job.sh).
# shellcheck source=launch/lib-job.sh
source "${src}/launch/lib-job.sh"
cleanup() { rm -rf "${scratch}"; }
job_traps cleanup
fail() { echo "FAIL: $*" >&2; exit 1; }

prefix=${scratch}/prefix
cmake --install "${build}" --prefix "${prefix}" >"${scratch}/install.log" || fail "cmake --install"
for f in bin/mooncake bin/mooncake-mpirun lib/libmooncake_client.so \
  include/mooncake/client/client.h include/mooncake/client/mooncake_client.h \
  include/mooncake/common/status.h lib/cmake/mooncake/mooncakeConfig.cmake \
  share/mooncake/configs/models/llama3-70b.ini share/mooncake/slurm/store.slurm; do
  [[ -e ${prefix}/${f} ]] || fail "the install has no ${f}"
done

cmake -S "${src}/tests/client/external" -B "${scratch}/engine" -DCMAKE_PREFIX_PATH="${prefix}" \
  >"${scratch}/engine.log" 2>&1 || { cat "${scratch}/engine.log"; fail "configure against the install"; }
cmake --build "${scratch}/engine" >>"${scratch}/engine.log" 2>&1 ||
  { cat "${scratch}/engine.log"; fail "build against the install"; }

# Elsewhere: nothing of the checkout or build tree in sight.
mkdir -p "${scratch}/elsewhere"
cd "${scratch}/elsewhere"
job_start "${mpiexec}" --allow-run-as-root --oversubscribe --bind-to none -np 3 \
  "${prefix}/bin/mooncake" --job.mode store --store.dram 64MiB --out store-run \
  >"${scratch}/job.log" 2>&1
job_pid=${JOB_PID}
for _ in $(seq 600); do
  [[ -f store-run/connect.json ]] && break
  kill -0 "${job_pid}" 2>/dev/null || { cat "${scratch}/job.log"; fail "the installed store job died"; }
  sleep 0.1
done
[[ -f store-run/connect.json ]] || fail "no connection file after 60 s"
[[ $(stat -c %a store-run/connect.json) == 600 ]] || fail "connect.json is not mode 0600"
"${scratch}/engine/engine_client" store-run/connect.json || fail "the external engine client"
PYTHONPATH=${prefix}/lib/python3/dist-packages /usr/bin/python3 - <<'PY' || fail "the installed Python module"
import mooncake_store
s = mooncake_store.MooncakeDistributedStore()
assert s.setup("store-run/connect.json") == 0, s.last_error()
assert s.put("installed/py", b"from the installed module") == 0, s.last_error()
assert s.get("installed/py") == b"from the installed module"
assert s.close() == 0
print("installed python module OK")
PY
# The file names its run folder from the root, and the printed stop command runs from anywhere
# (here /): the installed binary's path and the file's, both absolute.
/usr/bin/python3 -c 'import json,os,sys; d=json.load(open(sys.argv[1]))["run_dir"]; sys.exit(0 if os.path.isabs(d) and os.path.samefile(d, "store-run") else "run_dir " + d + " is not absolute")' \
  store-run/connect.json || fail "connect.json's run_dir"
# The hint is printed after connect.json is written and mpirun forwards it when it will: wait
# for the line itself (30 s).
for _ in $(seq 300); do
  grep -q '^stop it with: ' "${scratch}/job.log" && break
  sleep 0.1
done
stop_hint=$(sed -n 's/^stop it with: \(.*\)   (or SIGTERM.*$/\1/p' "${scratch}/job.log")
[[ ${stop_hint} == "${prefix}/bin/mooncake store stop ${PWD}/store-run/connect.json" ]] ||
  fail "the stop hint is '${stop_hint}'"
(cd / && ${stop_hint}) || fail "the printed stop command, run from /"
wait "${job_pid}" || fail "the store job exited non-zero: $(tail -5 "${scratch}/job.log")"
job_forget "${job_pid}"
job_pid=""
grep -q "result *OK" "${scratch}/job.log" || fail "the store job's summary is not OK"

"${prefix}/bin/mooncake" eval --model.preset llama3-70b --hardware.preset h100x8 --out eval-run --plots false \
  >"${scratch}/eval.log" 2>&1 || { cat "${scratch}/eval.log"; fail "the installed mooncake eval"; }
[[ -s eval-run/summary.json ]] || fail "mooncake eval wrote no summary"
# Boost wraps a long default value over lines: compare without line breaks and indentation.
"${prefix}/bin/mooncake" eval --help | tr -d ' \n' | grep -qF "(=${prefix}/share/mooncake/configs)" ||
  fail "mooncake eval --help does not name the installed presets folder"
bin_files=$(cd "${prefix}/bin" && ls | tr '\n' ' ')
[[ ${bin_files} == "mooncake mooncake-mpirun " ]] || fail "bin/ holds ${bin_files}(want mooncake mooncake-mpirun)"
"${prefix}/bin/mooncake-mpirun" --np 4 --dry-run >"${scratch}/wrapper.log" 2>&1 ||
  { cat "${scratch}/wrapper.log"; fail "the installed mooncake-mpirun --dry-run"; }
grep -qF "${prefix}/bin/mooncake" "${scratch}/wrapper.log" ||
  { cat "${scratch}/wrapper.log"; fail "the installed mooncake-mpirun does not run the installed binary"; }
echo "install_test OK"
