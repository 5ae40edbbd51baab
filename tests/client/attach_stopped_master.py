"""Clients that attach while the store's master is stopped (docs/CLIENT.md, "When the master
changes"; docs/FAULTS.md).

A store service `roles = conductor:2 store:1` (rank 0 active, rank 1 its standby) with
cluster.failure_timeout = 5 s; one object is put, then rank 0 is SIGSTOPped. Then:

  1. a client that does not follow (failover_timeout 0) attaches with the connection file, which
     still names rank 0: its attach to the stopped rank times out, rank 1 says it is not the
     master, and setup() fails with Timeout naming both. The process must end normally (exit 0):
     closing the endpoint of the unanswered attach aborted it inside UCX before (`ucp_ep.c:
     pending request ... should have been flushed`, SIGABRT).
  2. a client that follows (failover_timeout 60 s), started at the same moment, finds rank 1 once
     it has taken over (the file lists it) and reads the object back.

Then rank 0 is SIGKILLed, the job stopped with `mooncake store stop`; it exits 0. Done
apart from failover_store_service.py so that no extra process runs when the old conductor
resumes there.

Usage: attach_stopped_master.py SOURCE_DIR MOONCAKE
"""
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import jobs
import mooncake_store
import values
from jobs import fail, rank_pid

SRC, MOONCAKE = Path(sys.argv[1]), sys.argv[2]
KEY = "stopped/object"

# One attaching process: prints its outcome and its end, and exits 0 unless Python fails.
CLIENT = """
import sys, mooncake_store, values
store = mooncake_store.MooncakeDistributedStore()
rc = store.setup(sys.argv[1], timeout=1.0, failover_timeout=float(sys.argv[2]))
if rc == 0:
    got = store.get(sys.argv[3])
    print("attached", store.master_info()["master_rank"], values.matches(sys.argv[3], got), len(got))
else:
    print("refused", store.last_error())
store.close()
print("closed")
"""


def client(run, failover_timeout):
    return subprocess.Popen([sys.executable, "-c", CLIENT, str(run / "connect.json"),
                             str(failover_timeout), KEY],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def outcome(proc, what, log_path):
    try:
        out, _ = proc.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        proc.kill()
        fail(f"{what} hung", log_path)
    lines = [line for line in out.splitlines() if line.startswith(("attached", "refused"))]
    print(f"{what}: exit {proc.returncode}: {lines[-1] if lines else out[-300:]}")
    if proc.returncode != 0 or "closed" not in out:
        fail(f"{what} ended with {proc.returncode}:\n{out[-3000:]}", log_path)
    return lines[-1] if lines else ""


def main():
    work = Path(tempfile.mkdtemp(prefix="mooncake-stopped-master."))
    run, log_path = work / "run", work / "job.log"
    job = jobs.launch(SRC, MOONCAKE, ["--roles", "conductor:2 store:1"],
                      ["--job.mode", "store", "--store.dram", "64MiB",
                       "--cluster.failure_timeout", "5s", "--out", str(run)], log_path)
    try:
        return exercise(job, run, log_path)
    finally:
        jobs.kill(run, job)
        shutil.rmtree(work, ignore_errors=True)


def exercise(job, run, log_path):
    jobs.wait_for_start(job, run / "connect.json", log_path)
    store = mooncake_store.MooncakeDistributedStore()
    if store.setup(str(run / "connect.json"), timeout=5.0) != 0:
        fail(f"setup: {store.last_error()}", log_path)
    if store.put(KEY, values.value(KEY, 65543).tobytes()) != 0:
        fail(f"put: {store.last_error()}", log_path)
    store.close()
    victim = rank_pid(run, 0)
    os.kill(victim, signal.SIGSTOP)
    stopped = time.monotonic()
    plain, following = client(run, 0), client(run, 60)
    said = outcome(plain, "the client that does not follow", log_path)
    took = time.monotonic() - stopped
    # It ends before the takeover (5 s): it can only have tried the stopped rank and the standby.
    if took < 5 and not (said.startswith("refused Timeout") and "rank 0" in said and
                         "rank 1: NotSupported: not the master" in said):
        fail(f"the client that does not follow: {said}", log_path)
    said = outcome(following, "the client that follows", log_path)
    if not said.startswith("attached 1 True 65543"):
        fail(f"the client that follows did not find rank 1 and read back: {said}", log_path)
    os.kill(victim, signal.SIGKILL)
    stop = subprocess.run([MOONCAKE, "store", "stop", str(run / "connect.json")], timeout=90,
                          capture_output=True, text=True)
    if stop.returncode != 0:
        fail(f"mooncake store stop: {stop.returncode} {stop.stderr}", log_path)
    try:
        code = job.wait(timeout=60)
    except subprocess.TimeoutExpired:
        fail("the store job did not end within 60 s of its stop", log_path)
    if code != 0:
        fail(f"launch/mooncake-mpirun exited {code}", log_path)
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
