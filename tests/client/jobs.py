"""The store jobs the client tests start, and their processes: launching one under
launch/mooncake-mpirun, finding its ranks by PID, waiting with a deadline, failing with the logs,
and killing what is left. values.py beside it holds the values those tests put and check.

A job's processes are found by their command line: a mooncake binary with the test's own
temporary folder (its run or work folder) in an argument. mpirun gives each rank a process group
of its own, so a signal to the launcher's group alone leaves the ranks running.
"""
import json
import os
import re
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

# Open MPI on loopback (MOONCAKE_MPIRUN_ARGS for launch/mooncake-mpirun, or mpirun's own).
MPI_ARGS = "--mca btl self,vader,tcp --mca btl_tcp_if_include lo --mca oob_tcp_if_include lo"


def fail(what, *logs):
    """Prints FAIL: WHAT and the end of each log that exists, then exits 1."""
    print(f"FAIL: {what}")
    for log in logs:
        if log is not None and Path(log).exists():
            print(f"--- {Path(log).name}:\n" + Path(log).read_text()[-4000:])
    sys.exit(1)


def wait_for(what, check, timeout, *logs):
    """CHECK()'s first true value, asked every 0.1 s; fails naming WHAT after TIMEOUT seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            fail(f"{what} within {timeout} s", *logs)
        time.sleep(0.1)


def job_pids(folder):
    """PIDs of the mooncake processes whose command line names FOLDER (or a path under it)."""
    pids = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if Path(os.fsdecode(cmd[0])).name == "mooncake" and any(str(folder).encode() in a
                                                                 for a in cmd[1:]):
            pids.append(int(pid))
    return pids


def rank_pid(folder, rank):
    """The PID of rank RANK of the job under FOLDER (Open MPI names it in the environment), or
    None."""
    for pid in job_pids(folder):
        try:
            env = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
        except OSError:
            continue
        if f"OMPI_COMM_WORLD_RANK={rank}".encode() in env:
            return pid
    return None


def mpirun_env(base=None):
    """BASE (default: this process's environment) with MOONCAKE_MPIRUN_ARGS = MPI_ARGS."""
    return dict(os.environ if base is None else base, MOONCAKE_MPIRUN_ARGS=MPI_ARGS)


def launch(src, binary, launcher_args, job_args, log_path, env=None):
    """launch/mooncake-mpirun --bin BINARY LAUNCHER_ARGS -- JOB_ARGS, its output to LOG_PATH, in a
    session of its own (kill() ends it)."""
    with open(log_path, "w") as log:
        return subprocess.Popen([str(Path(src) / "launch/mooncake-mpirun"), "--bin", str(binary),
                                 *launcher_args, "--", *job_args],
                                stdout=log, stderr=subprocess.STDOUT,
                                env=mpirun_env() if env is None else env, start_new_session=True)


def wait_for_start(job, connect, log_path, timeout=60):
    """Waits until the job's connection file CONNECT exists; fails when the job ends first."""
    deadline = time.monotonic() + timeout
    while not Path(connect).exists():
        if job.poll() is not None or time.monotonic() > deadline:
            fail("the store job did not start", log_path)
        time.sleep(0.05)


def stop(mooncake, connect, job, log_path, env=None):
    """`mooncake store stop CONNECT`, then the job must end within 60 s; returns its exit code."""
    r = subprocess.run([str(mooncake), "store", "stop", str(connect)], timeout=90,
                       capture_output=True, text=True, env=env)
    if r.returncode != 0:
        fail(f"mooncake store stop: exit {r.returncode}: {r.stdout}{r.stderr}", log_path)
    try:
        return job.wait(timeout=60)
    except subprocess.TimeoutExpired:
        fail("the store job did not end within 60 s of its stop", log_path)


def kill(folder, *launched):
    """SIGKILL to each LAUNCHED process's session still running (then reaped) and to every process
    of the job under FOLDER (SIGCONT first: a stopped one would not die until resumed)."""
    for p in launched:
        if p is not None and p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
    for pid in job_pids(folder):
        try:
            os.kill(pid, signal.SIGCONT)
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def dram_used_by_rank(run):
    """mooncake_store_dram_used_bytes by store rank, from the master's /metrics (metrics.json in
    the run folder names it)."""
    url = json.loads((Path(run) / "metrics.json").read_text())["url"]
    text = urllib.request.urlopen(url, timeout=10).read().decode()
    return {int(m.group(1)): float(m.group(2))
            for m in re.finditer(r'mooncake_store_dram_used_bytes\{rank="(\d+)"\} (\S+)', text)}
