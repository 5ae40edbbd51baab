"""The Slurm half of store_join_slurm_test.sh, run inside its local Slurm (SLURM_CONF set).

Asserts, in order:
  * the store job (sbatch slurm/store.slurm, 4 tasks: conductor:2 store:2, a standby) writes its
    connection file and /metrics;
  * one Python client attaches and puts 24 verified objects of 256 KiB;
  * a second job (sbatch slurm/store-join.slurm, 2 tasks) joins two store ranks: the master's
    /metrics lists four store ranks;
  * the same client, without reconnecting, puts 48 more objects: some of their bytes land on the
    joined ranks (the placement spreads by free bytes, so most go to the empty newcomers);
  * every object, before and after the join, reads back intact through that client;
  * `mooncake store stop` ends both jobs: each COMPLETED with ExitCode 0:0, the store job's
    output has `result OK`.

Usage: store_join_slurm_client.py SOURCE_DIR MOONCAKE   (PYTHONPATH: mooncake_store, tests/client)
"""
import os
import re
import subprocess
import sys
from pathlib import Path

import mooncake_store
from jobs import dram_used_by_rank, fail, wait_for

SRC, MOONCAKE = Path(sys.argv[1]), sys.argv[2]
RUNS = Path(os.environ["MOONCAKE_RUNS"])
VALUE = 256 << 10


def sbatch(*args):
    r = subprocess.run(["sbatch", "--parsable", "--overcommit", *args], capture_output=True,
                       text=True, timeout=30)
    if r.returncode != 0:
        fail(f"sbatch {' '.join(args)}: {r.stderr.strip()}")
    return r.stdout.strip().split(";")[0]


def job_state(job):
    text = subprocess.run(["scontrol", "show", "job", job], capture_output=True, text=True,
                          timeout=30).stdout
    state = re.search(r"JobState=([A-Z_]+)", text)
    code = re.search(r" ExitCode=([0-9:]+)", text)
    return (state.group(1) if state else "?"), (code.group(1) if code else "?")


def value(i):
    return (i.to_bytes(4, "little") * (VALUE // 4))


def put_all(client, first, count, *outputs):
    for i in range(first, first + count):
        rc = client.put(f"obj-{i}", value(i))
        if rc != 0:
            fail(f"put obj-{i}: {rc} ({client.last_error()})", *outputs)


def main():
    store_job = sbatch("--ntasks=4", str(SRC / "slurm/store.slurm"), "--roles",
                       "conductor:2 store:2", "--store.dram", "16MiB", "--store.replicas", "1",
                       "--store.metrics_port", "0")
    run, store_out = RUNS / store_job, Path(f"mooncake-store-{store_job}.out")
    connect = run / "connect.json"
    wait_for("the store job wrote no connection file and /metrics",
             lambda: connect.exists() and (run / "metrics.json").exists(), 90, store_out)
    client = mooncake_store.MooncakeDistributedStore()
    if client.setup(str(connect)) != 0:
        fail(f"the client did not attach: {client.last_error()}", store_out)
    put_all(client, 0, 24, store_out)
    before = dram_used_by_rank(run)
    print("before the join, used bytes by store rank:", before)

    join_job = sbatch("--ntasks=2", str(SRC / "slurm/store-join.slurm"), str(connect),
                      "--store.dram", "16MiB")
    join_out = Path(f"mooncake-store-join-{join_job}.out")
    wait_for("the master never listed 4 store ranks", lambda: len(dram_used_by_rank(run)) == 4, 90,
             store_out, join_out)
    joined = sorted(set(dram_used_by_rank(run)) - set(before))
    put_all(client, 24, 48, store_out, join_out)
    after = dram_used_by_rank(run)
    print("after 48 more puts, used bytes by store rank:", after)
    on_joined = sum(after[r] for r in joined)
    if on_joined <= 0:
        fail(f"nothing of the 48 puts after the join landed on the joined ranks {joined}",
             store_out, join_out)
    for i in range(72):
        got = client.get(f"obj-{i}")
        if bytes(got) != value(i):
            fail(f"obj-{i} read back wrong", store_out, join_out)
    print(f"72 objects read back intact; {on_joined / 2**20:.1f} MiB on the joined ranks {joined}")
    client.close()

    stop = subprocess.run([MOONCAKE, "store", "stop", str(connect)], capture_output=True,
                          text=True, timeout=120)
    if stop.returncode != 0:
        fail(f"mooncake store stop exited {stop.returncode}: {stop.stderr.strip()}", store_out)
    for job, out in ((store_job, store_out), (join_job, join_out)):
        wait_for(f"job {job} did not end",
                 lambda job=job: job_state(job)[0] in ("COMPLETED", "FAILED", "CANCELLED",
                                                       "TIMEOUT"), 90, out)
        state, code = job_state(job)
        print(f"job {job}: {state} ExitCode={code}")
        if (state, code) != ("COMPLETED", "0:0"):
            fail(f"job {job} ended {state} with ExitCode {code}, want COMPLETED 0:0", out)
    if not re.search(r"^result +OK", store_out.read_text(), re.M):
        fail("no 'result OK' in the store job's output", store_out)
    print("PASS")


if __name__ == "__main__":
    main()
