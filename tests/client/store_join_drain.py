"""Store ranks join and leave a running store job (docs/STORE.md "Joins and drains").

A store service of 1 master + 3 store ranks x 64 MiB (store.replicas = 1: a drained rank holds
the only replica of its objects) is filled to about 70 % with verified objects. Asserts, in order:
  * `mooncake store drain` refuses, naming why: rank 9 and the master are not store ranks (exit
    2); rank 1 does not fit in the others' free space (exit 1, "not enough");
  * 2 store ranks x 64 MiB join with `mooncake store join` under a second mpirun;
  * the next 1,000 puts (32 KiB) land on all 5 store ranks, each rank's share of the bytes within
    8 points of its share of the free bytes before them (the placement rule: smooth weighted
    round robin over free bytes); the spread is printed (the master's /metrics);
  * `mooncake store drain 1` then moves rank 1's objects elsewhere and exits 0; rank 1 exits 0;
    every object reads back intact (none lost);
  * `mooncake store stop` ends the job and the joined ranks: both launchers and every rank exit 0.
Each rank runs under a small wrapper that records its own exit status.

Usage: store_join_drain.py SOURCE_DIR MOONCAKE   (PYTHONPATH: the mooncake_store module, values.py)
"""
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import jobs
import mooncake_store
import values
from jobs import fail, job_pids, wait_for

SRC, MOONCAKE = Path(sys.argv[1]), sys.argv[2]
DRAM = 64 << 20
SIZES = [256 << 10, 65543, 300001]
PUT_SIZE, PUTS = 32 << 10, 1000


def wrapper(work, prefix):
    """A program for mpirun: runs mooncake and writes its exit status to exits/PREFIX.N."""
    (work / "exits").mkdir(exist_ok=True)
    script = work / f"{prefix}.sh"
    script.write_text(f"""#!/bin/sh
"{MOONCAKE}" "$@"
rc=$?
echo $rc > "{work}/exits/{prefix}.$OMPI_COMM_WORLD_RANK"
exit $rc
""")
    script.chmod(0o755)
    return script


def drain(connect, rank):
    r = subprocess.run([MOONCAKE, "store", "drain", str(rank), str(connect)], timeout=600,
                       capture_output=True, text=True)
    return r.returncode, r.stdout + r.stderr


def expect_refusal(connect, rank, code, text, log):
    rc, out = drain(connect, rank)
    print(f"drain {rank}: exit {rc}: {out.strip().splitlines()[-1] if out.strip() else ''}")
    if rc != code or text not in out:
        fail(f"drain of rank {rank}: exit {rc}, expected {code} naming '{text}':\n{out}", log)


def put(store, key, size, log):
    rc = store.put(key, values.value(key, size).tobytes())
    if rc != 0:
        fail(f"put {key}: {rc} {store.last_error()}", log)


def fill(store, log):
    """Puts verified objects until about 70 % of the 3 x 64 MiB is used; returns their keys."""
    keys, used, i = [], 0, 0
    while used < 0.70 * 3 * DRAM:
        key, size = f"fill/{i}", SIZES[i % len(SIZES)]
        put(store, key, size, log)
        keys.append((key, size))
        used += size
        i += 1
    print(f"filled: {len(keys)} objects, {used / (1 << 20):.1f} MiB of {3 * DRAM >> 20} MiB")
    return keys


def spread(store, run, log):
    """PUTS puts after the join; asserts each rank's share against its share of the free bytes."""
    before = jobs.dram_used_by_rank(run)
    free = {r: DRAM - u for r, u in before.items()}
    keys = [(f"spread/{i}", PUT_SIZE) for i in range(PUTS)]
    for key, size in keys:
        put(store, key, size, log)
    after = jobs.dram_used_by_rank(run)
    placed = {r: after.get(r, 0) - before[r] for r in before}
    total, total_free = sum(placed.values()), sum(free.values())
    print(f"{PUTS} puts of {PUT_SIZE >> 10} KiB after the join, by store rank "
          "(rank: free before -> share expected / share got):")
    for r in sorted(before):
        want, got = free[r] / total_free, placed[r] / total
        print(f"  rank {r}: {free[r] / (1 << 20):6.1f} MiB free -> {want:.3f} / {got:.3f}")
        if placed[r] <= 0 or abs(got - want) > 0.08:
            fail(f"rank {r} got {got:.3f} of the bytes, expected {want:.3f} +- 0.08", log)
    return keys


def start_job(work, run, log_path):
    return jobs.launch(SRC, wrapper(work, "rank"), ["--np", "4"],
                       ["--job.mode", "store", "--store.dram", "64MiB", "--store.replicas", "1",
                        "--store.metrics_port", "0", "--out", str(run)], log_path)


def start_joiners(work, connect, log_path):
    mpirun = shutil.which("mpirun") or "mpirun"
    with open(log_path, "w") as log:
        return subprocess.Popen(
            [mpirun, "--oversubscribe", "--allow-run-as-root", *jobs.MPI_ARGS.split(), "-np", "2",
             str(wrapper(work, "join")), "store", "join", str(connect), "--store.dram", "64MiB"],
            stdout=log, stderr=subprocess.STDOUT, start_new_session=True)


def main():
    work = Path(tempfile.mkdtemp(prefix="mooncake-join-drain."))
    run = work / "run"
    job_log, join_log = work / "job.log", work / "join.log"
    job = start_job(work, run, job_log)
    joiners = None
    try:
        joiners = exercise(job, work, run, job_log, join_log)
        return 0
    finally:
        jobs.kill(work, job, joiners)
        shutil.rmtree(work, ignore_errors=True)


def exercise(job, work, run, job_log, join_log):
    connect = run / "connect.json"
    wait_for("the store job did not start", lambda: (run / "metrics.json").exists(), 60, job_log)
    store = mooncake_store.MooncakeDistributedStore()
    if store.setup(str(connect)) != 0:
        fail(f"setup: {store.last_error()}", job_log)
    keys = fill(store, job_log)

    expect_refusal(connect, 9, 2, "not a store rank", job_log)
    expect_refusal(connect, 0, 2, "not a store rank", job_log)
    expect_refusal(connect, 1, 1, "not enough", job_log)

    t0 = time.monotonic()
    joiners = start_joiners(work, connect, join_log)
    wait_for("2 store ranks did not join",
             lambda: join_log.read_text().count("joined the store job") == 2, 60, join_log,
             job_log)
    print(f"2 store ranks joined in {time.monotonic() - t0:.2f} s")
    keys += spread(store, run, job_log)

    t0 = time.monotonic()
    rc, out = drain(connect, 1)
    took = time.monotonic() - t0
    if rc != 0 or "drained in" not in out:
        fail(f"drain of rank 1: exit {rc}:\n{out}", job_log)
    lines = out.strip().splitlines()
    print(lines[0])  # what rank 1 held when the drain began
    print(lines[-1])
    print(f"rank 1 drained in {took:.2f} s (the tool's whole run)")
    exit_file = work / "exits" / "rank.1"
    wait_for("rank 1 did not exit after its drain", exit_file.exists, 60, job_log)
    if exit_file.read_text().strip() != "0":
        fail(f"drained rank 1 exited {exit_file.read_text().strip()}", job_log)

    bad = [k for k, size in keys if len(got := store.get(k)) != size or not values.matches(k, got)]
    print(f"read back {len(keys) - len(bad)} of {len(keys)} objects after the drain")
    if bad:
        fail(f"{len(bad)} objects lost or wrong after the drain, e.g. {bad[:5]}", job_log)
    store.close()

    stop = subprocess.run([MOONCAKE, "store", "stop", str(connect)], timeout=90,
                          capture_output=True, text=True)
    if stop.returncode != 0:
        fail(f"store stop: exit {stop.returncode}: {stop.stdout}{stop.stderr}", job_log)
    try:
        codes = (job.wait(timeout=60), joiners.wait(timeout=60))
    except subprocess.TimeoutExpired:
        fail("the job or the joined ranks did not end within 60 s of the stop", job_log, join_log)
    exits = {p.name: p.read_text().strip() for p in (work / "exits").iterdir()}
    print(f"launchers exit {codes}; ranks: {sorted(exits.items())}")
    if codes != (0, 0) or len(exits) != 6 or set(exits.values()) != {"0"}:
        fail(f"launchers {codes}, ranks {exits}", job_log, join_log)
    time.sleep(1)
    if job_pids(work):
        fail(f"processes left behind: {job_pids(work)}")
    print("PASS")
    return joiners


if __name__ == "__main__":
    sys.exit(main())
