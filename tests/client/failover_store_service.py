"""A standby conductor takes over the store service (docs/FAULTS.md, "A standby conductor"), and
the client follows it on its own (docs/CLIENT.md, "When the master changes").

A store service of 4 ranks, `roles = conductor:2 store:2` (rank 0 the active conductor, rank 1 its
standby), cluster.failure_timeout = 2 s, launched as docs/CLIENT.md shows. This process puts
objects through the Python client in a loop and reads earlier ones back, while

  kill:          rank 0 is SIGKILLed;
  kill_default:  the same under the store service's default failure timeout (10 s): the standby
                 must take over well within it (in under half), as it sees the killed process's
                 liveness link close instead of waiting for missed heartbeats;
  stop:          rank 0 is SIGSTOPped for 3 x the failure timeout, then resumed (SIGCONT): a
                 stopped process is slow, not dead, so the takeover waits the failure timeout.

The loop never attaches again itself: the client finds the conductor that took over (the
connection file lists both) and its calls go on. A put may fail only when its put-end was in
flight at the change (the client says so, naming the change) or when it missed its 1 s deadline
on the loaded machine (Timeout); it is then not counted as acknowledged. A get that misses its
deadline is asked again (at most twice; counted and printed). Asserts: the standby took over (summary.json's failover block, with the takeover
time); the client moved to rank 1 exactly once; every object acknowledged before and after the
change reads back intact; its number at rank 1 (attached_as) is one rank 0 never gives out; in
`stop`, the resumed old conductor is fenced (it says so) and exits,
leaving exactly one conductor; the job stops with `mooncake store stop` and exits 0. Prints the
longest pause the loop saw.

Usage: failover_store_service.py SOURCE_DIR MOONCAKE kill|kill_default|stop
"""
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import mooncake_store
import values
from jobs import fail, job_pids, rank_pid

SRC, MOONCAKE, MODE = Path(sys.argv[1]), sys.argv[2], sys.argv[3]
# kill_default leaves cluster.failure_timeout at the store service's default.
FAILURE_TIMEOUT = 10.0 if MODE == "kill_default" else 2.0
SIZES = [4096, 65543, 256 << 10]


def master_rank(run):
    try:
        return json.loads((run / "connect.json").read_text())["master"]["rank"]
    except (OSError, ValueError, KeyError):
        return None


class Loop:
    """Puts and reads back through one client, which follows the master on its own."""

    def __init__(self, run, log):
        self.run, self.log = run, log
        self.acked, self.unsure, self.i = [], [], 0
        self.slow = 0  # calls that missed their deadline without a master change
        self.last_ok = time.monotonic()
        self.longest_pause = 0.0
        self.store = mooncake_store.MooncakeDistributedStore()
        if self.store.setup(str(run / "connect.json"), timeout=1.0, failover_timeout=30.0) != 0:
            fail(f"setup: {self.store.last_error()}", log)

    def ok(self):
        now = time.monotonic()
        self.longest_pause = max(self.longest_pause, now - self.last_ok)
        self.last_ok = now

    def step(self):
        key = f"fo/{self.i}"
        self.i += 1
        data = values.value(key, SIZES[self.i % len(SIZES)]).tobytes()
        if self.store.put(key, data) != 0:
            # A put whose put-end was in flight when the master changed fails, naming the change:
            # it may or may not be stored, so it is not counted as acknowledged (nor put again).
            # So does one that missed its 1 s deadline on the loaded machine (Timeout).
            error = self.store.last_error()
            if "master changed" in error:
                self.unsure.append(key)
            elif error.startswith("Timeout"):
                self.slow += 1
            else:
                fail(f"put {key}: {error}", self.log)
            return
        self.acked.append((key, len(data)))
        probe, size = self.acked[(self.i * 7919) % len(self.acked)]
        got = self.read(probe)
        if len(got) != size or not values.matches(probe, got):
            fail(f"acknowledged {probe} read back wrong ({len(got)} B): "
                 f"{self.store.last_error()}", self.log)
        self.ok()

    def read(self, key):
        """A get; one that missed its deadline on the loaded machine is asked again (twice at
        most). A master change never needs this: the client runs the get again itself."""
        for _ in range(3):
            got = self.store.get(key)
            if got or not self.store.last_error().startswith("Timeout"):
                return got
            self.slow += 1
        return got

    def moved(self):
        return self.store.master_info()["master_changes"]


def main():
    work = Path(tempfile.mkdtemp(prefix="mooncake-failover."))
    run, log_path = work / "run", work / "job.log"
    env = dict(os.environ, MOONCAKE_MPIRUN_ARGS="--mca btl self,vader,tcp --mca btl_tcp_if_include "
               "lo --mca oob_tcp_if_include lo")
    with open(log_path, "w") as log:
        job = subprocess.Popen([str(SRC / "launch/mooncake-mpirun"), "--bin", MOONCAKE,
                                "--roles", "conductor:2 store:2", "--",
                                "--job.mode", "store", "--store.dram", "256MiB",
                                "--out", str(run)] +
                               ([] if MODE == "kill_default" else
                                ["--cluster.failure_timeout", f"{FAILURE_TIMEOUT}s"]),
                               stdout=log, stderr=subprocess.STDOUT, env=env,
                               start_new_session=True)
    try:
        return exercise(job, run, log_path)
    finally:
        if job.poll() is None:
            os.killpg(job.pid, signal.SIGKILL)
        for pid in job_pids(run):
            try:
                os.kill(pid, signal.SIGCONT)
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        shutil.rmtree(work, ignore_errors=True)


def exercise(job, run, log_path):
    deadline = time.monotonic() + 60
    while not (run / "connect.json").exists():
        if job.poll() is not None or time.monotonic() > deadline:
            fail("the store job did not start", log_path)
        time.sleep(0.05)
    loop = Loop(run, log_path)
    start = time.monotonic()
    while time.monotonic() - start < 2:
        loop.step()
    before = len(loop.acked)
    attached_before = loop.store.master_info()["attached_as"]
    victim = rank_pid(run, 0)
    if victim is None:
        fail("no process for rank 0", log_path)
    hit_at = time.monotonic()
    killing = MODE.startswith("kill")
    os.kill(victim, signal.SIGKILL if killing else signal.SIGSTOP)
    resumed = killing
    after_change = 0
    while after_change < 100 or not resumed:
        loop.step()
        if loop.moved() > 0:
            after_change += 1
        if not resumed and time.monotonic() - hit_at > 3 * FAILURE_TIMEOUT:
            os.kill(victim, signal.SIGCONT)
            resumed = True
        if time.monotonic() - hit_at > 120:
            fail(f"the loop did not go on after the conductor's {MODE} ({after_change} ops)",
                 log_path)
    print(f"{MODE}: {before} objects acknowledged before, {len(loop.acked) - before} after; "
          f"{len(loop.unsure)} put(s) in flight at the change, {loop.slow} call(s) past their "
          f"deadline otherwise; client moved "
          f"{loop.moved()} time(s), to rank {loop.store.master_info()['master_rank']}; "
          f"longest pause {loop.longest_pause:.2f} s")
    info = loop.store.master_info()
    if info["master_changes"] != 1 or info["master_rank"] != 1:
        fail(f"the client's master: {info}", log_path)
    # The standby numbers its clients from 2^30: never a number the old master gave out.
    if info["attached_as"] < 1 << 30 or info["attached_as"] == attached_before:
        fail(f"attached_as {info['attached_as']} at the new master (before: {attached_before})",
             log_path)

    if MODE == "stop":
        # The old active, resumed, must learn it was fenced and end; it acknowledges nothing.
        end = time.monotonic() + 30
        while rank_pid(run, 0) is not None and time.monotonic() < end:
            loop.step()
            time.sleep(0.05)  # the store (2 x 256 MiB) must not fill while rank 0 takes its time
        if rank_pid(run, 0) is not None:
            fail("the resumed old conductor (rank 0) still runs", log_path)
        # mpirun forwards a rank's last lines after the rank is gone: wait for them.
        end = time.monotonic() + 10
        text = log_path.read_text()
        while "rank 0 ends" not in text and time.monotonic() < end:
            time.sleep(0.1)
            text = log_path.read_text()
        if "rank 0 ends: it is no longer the conductor" not in text or "fenced by epoch" not in text:
            fail("the old conductor did not say that it was fenced", log_path)
        print("rank 0 resumed, fenced, ended:",
              next(line for line in text.splitlines() if "rank 0 ends" in line).strip())
    if master_rank(run) != 1:
        fail(f"the connection file names rank {master_rank(run)}, not the standby (1)", log_path)

    lost = []
    for key, size in loop.acked:
        got = loop.read(key)
        if len(got) != size or not values.matches(key, got):
            lost.append(key)
    print(f"read back {len(loop.acked) - len(lost)} of {len(loop.acked)} acknowledged objects")
    if lost:
        fail(f"{len(lost)} acknowledged objects lost or wrong, e.g. {lost[:5]}", log_path)
    loop.store.close()
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
    summary = json.loads((run / "summary.json").read_text())
    fo = summary.get("failover", {})
    if not fo.get("took_over") or fo.get("old_conductor") != 0:
        fail(f"summary.json's failover block: {fo}", log_path)
    print(f"takeover: ready {fo['ready_ms']:.0f} ms, first request served "
          f"{fo['takeover_ms']} ms after the old conductor's last heartbeat; "
          f"{fo['objects_restored']} objects rebuilt from {fo['journal_entries']} journal entries")
    if MODE == "kill_default" and fo["ready_ms"] >= FAILURE_TIMEOUT * 1000 / 2:
        fail(f"the standby took over {fo['ready_ms']:.0f} ms after the killed conductor's last "
             f"heartbeat: not well within the {FAILURE_TIMEOUT:.0f} s failure timeout", log_path)
    if MODE == "stop" and fo["ready_ms"] < FAILURE_TIMEOUT * 1000:
        fail(f"the standby took over a stopped (not dead) conductor after {fo['ready_ms']:.0f} ms, "
             f"before the {FAILURE_TIMEOUT:.0f} s failure timeout", log_path)
    time.sleep(1)
    if job_pids(run):
        fail(f"processes left behind: {job_pids(run)}")
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
