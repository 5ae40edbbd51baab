"""A joined store rank that stalls is declared dead and fenced (docs/FAULTS.md, "Store ranks that
join or leave").

A store service of 1 master + 2 store ranks (cluster.failure_timeout = 2s) takes one more store
rank with `mooncake store join`; the joined process is stopped (SIGSTOP) for 3 failure timeouts
and then resumed. Asserts: the master declares it dead; on waking, its heartbeat is answered
"fenced" and it ends with exit 4 naming that; `mooncake store stop` then ends the job with exit 0.

Usage: store_join_stall.py SOURCE_DIR MOONCAKE
"""
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import jobs
from jobs import fail, wait_for

SRC, MOONCAKE = Path(sys.argv[1]), sys.argv[2]


def main():
    work = Path(tempfile.mkdtemp(prefix="mooncake-join-stall."))
    run, job_log, join_log = work / "run", work / "job.log", work / "join.log"
    job = jobs.launch(SRC, MOONCAKE, ["--np", "3"],
                      ["--job.mode", "store", "--store.dram", "32MiB",
                       "--cluster.failure_timeout", "2s", "--out", str(run)], job_log)
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
        if jobs.stop(MOONCAKE, connect, job, job_log) != 0:
            fail(f"the store job exited {job.returncode}", job_log)
        print("PASS")
        return 0
    finally:
        jobs.kill(work, job)  # the joiner is one of the job's processes (its connection file)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
