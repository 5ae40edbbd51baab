"""A store job and its clients with UCX_NET_DEVICES set (docs/CLIENT.md, "How a process attaches").

UCX_NET_DEVICES names the network devices UCX may use (a common setting on clusters, where it
names the NIC). UCX refuses a connection that arrives through a device it was not started with,
on either side. Cases, each a real store job under launch/mooncake-mpirun (1 master, 2 store
ranks) and Python clients in their own processes:
  1. UCX_NET_DEVICES=lo for the job and the client: the connection file lists only the
     loopback address (the job's UCX would refuse the others), and the client attaches and
     moves bytes.
  2. UCX_NET_DEVICES=lo for the client only (the file lists every address, the external one
     first): the client tries the next address after the one its UCX cannot use, and attaches.
  3. A client limited to lo, given a file that lists only an external address: setup() fails,
     and the error names the address it tried, why it failed, and the devices UCX was limited to.
Case 2 and 3 need an interface other than loopback; without one they are skipped (said so).
Each job stops with exit 0 and leaves no process.

Usage: net_devices.py SOURCE_DIR MOONCAKE   (PYTHONPATH: the mooncake_store module)
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import jobs
from jobs import fail, job_pids

SRC, MOONCAKE = Path(sys.argv[1]), sys.argv[2]

CLIENT = r"""
import sys, mooncake_store
s = mooncake_store.MooncakeDistributedStore()
rc = s.setup(sys.argv[1])
if rc != 0:
    print("SETUP", rc, s.last_error())
    sys.exit(3)
key, value = "net-devices/" + sys.argv[2], bytes(range(256)) * 64
if s.put(key, value) != 0 or s.get(key) != value:
    print("IO", s.last_error())
    sys.exit(4)
s.close()
print("OK")
"""


def env_with(devices):
    env = dict(os.environ, UCX_WARN_UNUSED_ENV_VARS="n")
    env.pop("UCX_NET_DEVICES", None)
    if devices:
        env["UCX_NET_DEVICES"] = devices
    return env


def client(connect_file, name, devices):
    """Runs one client process; returns (exit status, its output)."""
    r = subprocess.run([sys.executable, "-c", CLIENT, str(connect_file), name],
                       env=env_with(devices), capture_output=True, text=True, timeout=120)
    return r.returncode, (r.stdout + r.stderr).strip()


class StoreJob:
    def __init__(self, work, devices):
        self.run, self.log = work / f"run-{devices or 'all'}", work / f"job-{devices or 'all'}.log"
        self.connect = self.run / "connect.json"
        self.job = jobs.launch(SRC, MOONCAKE, ["--np", "3"],
                               ["--job.mode", "store", "--store.dram", "64MiB", "--out",
                                str(self.run)], self.log, env=jobs.mpirun_env(env_with(devices)))
        jobs.wait_for_start(self.job, self.connect, self.log, timeout=90)
        self.info = json.loads(self.connect.read_text())

    def stop(self):
        code = jobs.stop(MOONCAKE, self.connect, self.job, self.log, env=env_with(""))
        time.sleep(0.5)
        if code != 0:
            fail(f"launch/mooncake-mpirun exited {code}", self.log)
        if job_pids(self.run):
            fail(f"processes left behind: {job_pids(self.run)}")

    def kill(self):
        jobs.kill(self.run, self.job)


def external_address():
    """An IPv4 address of this host that is not loopback, or None."""
    out = subprocess.run(["ip", "-4", "-o", "addr", "show", "up"], capture_output=True,
                         text=True).stdout
    for line in out.splitlines():
        address = line.split()[3].split("/")[0]
        if not address.startswith("127."):
            return address
    return None


def main():
    work = Path(tempfile.mkdtemp(prefix="mooncake-net-devices."))
    jobs = []
    try:
        # 1. lo on both sides.
        job = StoreJob(work, "lo")
        jobs.append(job)
        addresses = job.info["master"]["addresses"]
        print(f"job with UCX_NET_DEVICES=lo lists {addresses}")
        code, out = client(job.connect, "both", "lo")
        print(f"client with UCX_NET_DEVICES=lo: {out}")
        if code != 0:
            fail(f"a client with UCX_NET_DEVICES=lo could not use a job with it: {out}", job.log)
        if any(not a.startswith("127.") for a in addresses):
            fail(f"the job may use only lo but its connection file lists {addresses}", job.log)
        job.stop()

        external = external_address()
        if external is None:
            print("SKIPPED cases 2 and 3: this host has no interface but loopback")
            print("PASS")
            return 0
        # 2. lo on the client only; the file lists the external address first.
        job = StoreJob(work, "")
        jobs.append(job)
        addresses = job.info["master"]["addresses"]
        print(f"job without UCX_NET_DEVICES lists {addresses}")
        code, out = client(job.connect, "client-only", "lo")
        print(f"client with UCX_NET_DEVICES=lo: {out}")
        if code != 0:
            fail(f"a client with UCX_NET_DEVICES=lo could not attach: {out}", job.log)
        # 3. Only the external address: the client must say what it tried.
        port = addresses[0].rsplit(":", 1)[1]
        only_external = dict(job.info)
        only_external["master"] = dict(job.info["master"], addresses=[f"{external}:{port}"])
        narrowed = work / "external-only.json"
        narrowed.write_text(json.dumps(only_external))
        narrowed.chmod(0o600)
        code, out = client(narrowed, "external", "lo")
        print(f"client with UCX_NET_DEVICES=lo, file listing {external}:{port} only: {out}")
        if code == 0:
            print("note: UCX reached the external address through lo here; nothing to check")
        else:
            for want in (f"{external}:{port}", "UCX_NET_DEVICES", "'lo'"):
                if want not in out:
                    fail(f"the error does not name {want!r}: {out}")
        job.stop()
        print("PASS")
        return 0
    finally:
        for job in jobs:
            job.kill()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
