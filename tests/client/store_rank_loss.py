"""Puts stay available while a dead store rank is not yet declared dead (docs/CLIENT.md, "Failures").

A store service launched as docs/CLIENT.md shows (launch/mooncake-mpirun, 1 master + 3 store
ranks, store.replicas = 2) takes puts from this process, one every few milliseconds, while store
rank 1 is killed (SIGKILL). The master declares it dead only after cluster.failure_timeout (10 s
in store mode); until then a put placed on it fails its write, and the client places it again
elsewhere. Asserts: every put succeeds, during the detection window too (the longest put is
printed); every acknowledged object reads back with its bytes; the job stops with exit 0 and
leaves no process.

Usage: store_rank_loss.py SOURCE_DIR MOONCAKE   (PYTHONPATH: the mooncake_store module, values.py)
"""
import os
import shutil
import signal
import sys
import tempfile
import time
from pathlib import Path

import jobs
import mooncake_store
import values
from jobs import fail, job_pids, rank_pid

SRC, MOONCAKE = Path(sys.argv[1]), sys.argv[2]
SIZES = [4096, 16 << 10, 65543, 256 << 10]  # about 1,500 puts x 85 KiB x 2 replicas: no eviction
VICTIM = 1


def main():
    work = Path(tempfile.mkdtemp(prefix="mooncake-rank-loss."))
    run, log_path = work / "run", work / "job.log"
    job = jobs.launch(SRC, MOONCAKE, ["--np", "4"],
                      ["--job.mode", "store", "--store.dram", "256MiB", "--store.replicas", "2",
                       "--out", str(run)], log_path)
    try:
        return exercise(job, run, log_path)
    finally:
        jobs.kill(run, job)
        shutil.rmtree(work, ignore_errors=True)


def exercise(job, run, log_path):
    jobs.wait_for_start(job, run / "connect.json", log_path)
    store = mooncake_store.MooncakeDistributedStore()
    if store.setup(str(run / "connect.json")) != 0:
        fail(f"setup: {store.last_error()}", log_path)

    acked, failures = [], []
    killed_at = declared_at = None
    window_puts, window_longest = 0, 0.0
    start = time.monotonic()
    i = 0
    while True:
        now = time.monotonic()
        if killed_at is None and now - start > 2:
            pid = rank_pid(run, VICTIM)
            if pid is None:
                fail(f"no process for store rank {VICTIM}", log_path)
            os.kill(pid, signal.SIGKILL)
            killed_at = time.monotonic()
        if killed_at is not None and declared_at is None:
            if f"rank {VICTIM} declared dead" in log_path.read_text():
                declared_at = time.monotonic()
            elif now - killed_at > 45:
                fail(f"store rank {VICTIM} was never declared dead", log_path)
        if declared_at is not None and now - declared_at > 2:
            break
        key = f"loss/{i}"
        value = values.value(key, SIZES[i % len(SIZES)])
        t0 = time.monotonic()
        rc = store.put(key, value.tobytes())
        took = time.monotonic() - t0
        if rc == 0:
            acked.append((key, len(value)))
        else:
            failures.append(f"put {key}: {rc} {store.last_error()}")
        if killed_at is not None and declared_at is None:
            window_puts += 1
            window_longest = max(window_longest, took)
        i += 1
        time.sleep(0.005)

    print(f"store rank {VICTIM} killed; declared dead {declared_at - killed_at:.1f} s later; "
          f"{window_puts} puts in between, the longest {window_longest * 1000:.1f} ms; "
          f"{len(acked)} of {i} puts acknowledged, {len(failures)} failed")
    for f in failures[:5]:
        print(" ", f)
    if failures:
        fail(f"{len(failures)} puts failed while a store rank died (replicas = 2)")
    if window_puts == 0:
        fail("no put ran during the detection window")
    lost = []
    for k, size in acked:
        got = store.get(k)  # b'' when missing
        if len(got) != size or not values.matches(k, got):
            lost.append(k)
    print(f"read back {len(acked) - len(lost)} of {len(acked)} acknowledged objects")
    if lost:
        fail(f"{len(lost)} acknowledged objects lost or wrong, e.g. {lost[:5]}")
    store.close()
    code = jobs.stop(MOONCAKE, run / "connect.json", job, log_path)
    time.sleep(1)
    if code != 0:
        fail(f"launch/mooncake-mpirun exited {code}", log_path)
    if job_pids(run):
        fail(f"processes left behind: {job_pids(run)}")
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
