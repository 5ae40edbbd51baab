"""A joined store rank that stalls is declared dead and fenced (docs/FAULTS.md, "Store ranks that
join or leave").

A store service of 1 master + 2 store ranks (cluster.failure_timeout = 2s) takes one more store
rank with `mooncake store join`; the joined process is stopped (SIGSTOP) for 3 failure timeouts
and then resumed. Asserts: the master declares it dead; on waking, its heartbeat is answered
"fenced" and it ends with exit 4 naming that; `mooncake store stop` then ends the job with exit 0.

Usage: store_join_stall.py SOURCE_DIR MOONCAKE
"""
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SRC, MOONCAKE = Path(sys.argv[1]), sys.argv[2]
MPI_ARGS = "--mca btl self,vader,tcp --mca btl_tcp_if_include lo --mca oob_tcp_if_include lo"


def fail(what, *logs):
    print(f"FAIL: {what}")
    for log in logs:
        print(f"--- {log.name}:\n" + log.read_text()[-3000:])
    sys.exit(1)


def job_pids(work):
    """PIDs of every mooncake process of this test (their command line names the work folder)."""
    pids = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if cmd[0] == MOONCAKE.encode() and any(str(work).encode() in c for c in cmd):
            pids.append(int(pid))
    return pids


def wait_for(what, predicate, timeout, *logs):
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            fail(f"{what} within {timeout} s", *logs)
        time.sleep(0.1)


def main():
    work = Path(tempfile.mkdtemp(prefix="mooncake-join-stall."))
    run, job_log, join_log = work / "run", work / "job.log", work / "join.log"
    env = dict(os.environ, MOONCAKE_MPIRUN_ARGS=MPI_ARGS)
    with open(job_log, "w") as log:
        job = subprocess.Popen(
            [str(SRC / "launch/mooncake-mpirun"), "--bin", MOONCAKE, "--np", "3", "--",
             "--job.mode", "store", "--store.dram", "32MiB", "--cluster.failure_timeout", "2s",
             "--out", str(run)], stdout=log, stderr=subprocess.STDOUT, env=env,
            start_new_session=True)
    joiner = None
    try:
        connect = run / "connect.json"
        wait_for("the store job did not start", connect.exists, 60, job_log)
        with open(join_log, "w") as log:
            joiner = subprocess.Popen([MOONCAKE, "store", "join", str(connect),
                                       "--cluster.failure_timeout", "2s"],
                                      stdout=log, stderr=subprocess.STDOUT)
        wait_for("the store rank did not join", lambda: "joined" in join_log.read_text(), 30,
                 join_log, job_log)
        joiner.send_signal(signal.SIGSTOP)
        wait_for("the stalled rank was not declared dead",
                 lambda: "rank 3 declared dead" in job_log.read_text(), 30, job_log)
        time.sleep(4)  # 3 failure timeouts stopped in all
        joiner.send_signal(signal.SIGCONT)
        try:
            code = joiner.wait(timeout=30)
        except subprocess.TimeoutExpired:
            fail("the woken rank did not end within 30 s", join_log, job_log)
        said = join_log.read_text()
        print(said.strip().splitlines()[-1])
        if code != 4 or "fenced rank 3" not in said:
            fail(f"the woken rank exited {code}, expected 4 naming 'fenced rank 3'", join_log)
        stop = subprocess.run([MOONCAKE, "store", "stop", str(connect)], timeout=90,
                              capture_output=True, text=True)
        if stop.returncode != 0:
            fail(f"store stop: exit {stop.returncode}: {stop.stdout}{stop.stderr}", job_log)
        if job.wait(timeout=60) != 0:
            fail(f"the store job exited {job.returncode}", job_log)
        print("PASS")
        return 0
    finally:
        for p in (job, joiner):
            if p is not None and p.poll() is None:
                if p is job:
                    os.killpg(p.pid, signal.SIGKILL)
                else:
                    p.send_signal(signal.SIGCONT)
                    p.kill()
        for pid in job_pids(work):  # mpirun's ranks are not in the launcher's process group
            os.kill(pid, signal.SIGKILL)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
