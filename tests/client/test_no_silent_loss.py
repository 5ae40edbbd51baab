"""The store keeps what it acknowledges (label client; docs/STORE.md "When DRAM and the SSD fill").

A store job (job.mode = store, store.when_full = keep by default) with the SSD tier on is driven
past its DRAM: every put the client saw succeed must read back with its bytes, whatever the
spill queue or the disk did; a put the store could not take must have failed at put time with
NoSpace naming the rank and the tier; summary.json counts losses by cause (none here) and the
job's result is OK only when nothing acknowledged was lost.
"""
import contextlib
import json
import os
import signal
import subprocess
import time

import pytest

import jobs
import mooncake_store
import values
from test_client import StoreJob, attach

NO_SPACE = -10
MIB = 1 << 20


def put_patiently(store, keys, config, patience=5.0):
    """Puts 1 MiB under each key, retrying NoSpace (the store asks to retry while it spills) for
    up to `patience` s, and for 0.2 s once a put was refused (the store stays full). Returns
    (acknowledged keys, {refused key: last_error})."""
    acked, refused = [], {}
    for k in keys:
        deadline = time.monotonic() + (0.2 if refused else patience)
        while True:
            rc = store.put(k, values.value(k, MIB), config)
            if rc == 0:
                acked.append(k)
                break
            assert rc == NO_SPACE, f"put {k}: {rc} {store.last_error()}"
            if time.monotonic() > deadline:
                refused[k] = store.last_error()
                break
            time.sleep(0.05)
    return acked, refused


def missing(store, keys):
    """The acknowledged keys that do not read back with their bytes (an object whose spill is in
    flight is still served from DRAM: no retry)."""
    def reads_back(k):
        data = store.get(k)
        return len(data) == MIB and values.matches(k, data)

    return [k for k in keys if not reads_back(k)]


@contextlib.contextmanager
def store_job(folder, options, ranks):
    """A StoreJob that is ended even when the test fails: SIGTERM to mpirun (it forwards it to
    the ranks, which stop in order; SIGKILL to mpirun alone would leave them running)."""
    j = StoreJob(folder, ranks=ranks, options=options)
    try:
        yield j
    finally:
        if j.proc.poll() is None:
            os.killpg(j.proc.pid, signal.SIGTERM)
            try:
                j.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                j.kill()


def summary(job):
    return json.loads((job.run / "summary.json").read_text())


def result_line(job):
    """The job's `result` line, e.g. 'OK'."""
    lines = [ln for ln in job.log().splitlines() if ln.startswith("result ")]
    assert lines, job.log()
    return lines[-1][len("result"):].strip()


def test_skewed_load_with_a_small_spill_queue_loses_nothing(tmp_path):
    """300 x 1 MiB put to store rank 1 first (preferred_ranks = [1]) over 2 x 8 MiB of DRAM,
    whose spill queues (store.dram / 4 = 2 MiB per rank) fill at once, with 1 GiB of SSD free:
    before, a block evicted while the queue was full was dropped from DRAM (4 of 300 lost,
    result OK). Now it stays in DRAM until a spill takes it: every acknowledged put reads back,
    and with the SSD nearly empty the store refuses (almost) nothing."""
    with store_job(tmp_path, ["--store.dram", "8MiB", "--store.ssd", "on",
                              "--store.ssd_capacity", "1GiB"], ranks=3) as j:
        skewed_load(j)


def skewed_load(j):
    store = attach(j.connect)
    config = mooncake_store.ReplicateConfig()
    config.preferred_ranks = [1]
    keys = [f"skew/{i}" for i in range(300)]
    acked, refused = put_patiently(store, keys, config)
    assert len(acked) >= 290, f"{len(refused)} puts refused with 1 GiB of SSD free: {refused}"
    lost = missing(store, acked)
    assert not lost, f"{len(lost)} of {len(acked)} acknowledged puts lost: {lost[:5]}"
    assert store.close() == 0
    assert j.stop() == 0, j.log()
    extra = summary(j)["extra"]
    assert extra["objects_lost"] == 0, extra
    assert extra["ssd_blocks_spilled"] > 0, extra
    assert result_line(j) == "OK", j.log()


def test_a_full_disk_refuses_new_puts_and_loses_nothing(tmp_path):
    """The SSD folder on a 64 MiB tmpfs (mounted here; skipped where mount is not permitted)
    under a tier that believes it has 1 GiB: 300 x 1 MiB over 32 MiB of DRAM. Before, a spill
    that hit the full disk dropped its block (125 of 300 lost, 'cannot write block bytes', no
    ENOSPC, result OK). Now the block stays in DRAM, the log names ENOSPC, and once DRAM is full
    too new puts fail with NoSpace naming the store rank and the SSD tier; every acknowledged
    put reads back and summary.json counts no loss."""
    mnt = tmp_path / "ssd"
    mnt.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64m", "tmpfs", str(mnt)],
                             capture_output=True, text=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.strip()}")
    try:
        with store_job(tmp_path / "job", ["--store.dram", "32MiB", "--store.ssd", "on",
                                          "--store.ssd_dir", str(mnt), "--store.ssd_capacity",
                                          "1GiB"], ranks=2) as j:
            full_disk(j)
    finally:
        subprocess.run(["umount", "-l", str(mnt)], check=False)


def full_disk(j):
    store = attach(j.connect)
    keys = [f"full/{i}" for i in range(300)]
    acked, refused = put_patiently(store, keys, None, patience=2.0)
    lost = missing(store, acked)
    assert not lost, f"{len(lost)} of {len(acked)} acknowledged puts lost: {lost[:5]}"
    assert refused, "300 MiB fit 32 MiB of DRAM and a 64 MiB disk"
    assert len(acked) >= 64, f"only {len(acked)} puts acknowledged before the disk filled"
    # Each refusal names the rank; while the rank backs off after a failed spill it names
    # the full disk too (between tries it says the room is being spilled).
    assert all("store rank 1" in why for why in refused.values()), refused
    assert any("ENOSPC" in why for why in refused.values()), refused
    assert store.close() == 0
    assert j.stop() == 0, j.log()
    assert "ENOSPC" in j.log(), j.log()
    extra = summary(j)["extra"]
    assert extra["objects_lost"] == 0, extra
    assert extra["puts_refused_no_space"] >= len(refused), extra
    assert result_line(j) == "OK", j.log()


def test_an_object_lost_with_its_rank_makes_the_result_not_ok(tmp_path, monkeypatch):
    """A store rank holding the only replica of 20 acknowledged objects is SIGKILLed (the
    survivors keep running: Open MPI's orte_enable_recovery, as launch/mooncake-mpirun sets it).
    Before, the job ended 'result OK, but 1 rank(s) were lost' and exit 0; now summary.json
    counts the 20 under objects_lost_rank_died and the result reads LOST."""
    monkeypatch.setenv("OMPI_MCA_orte_enable_recovery", "1")
    status = tmp_path / "status"  # the job's exit status (mpirun's own is 0 under recovery)
    with store_job(tmp_path, ["--store.dram", "32MiB", "--store.replicas", "1",
                              "--cluster.failure_timeout", "1s", "--job.status_file",
                              str(status)], ranks=3) as j:
        store = attach(j.connect)
        config = mooncake_store.ReplicateConfig()
        config.preferred_ranks = [2]
        keys = [f"doomed/{i}" for i in range(20)]
        for k in keys:
            assert store.put(k, values.value(k, 4096), config) == 0, store.last_error()
        pid = jobs.rank_pid(j.run, 2)
        assert pid is not None, f"no process of rank 2 under {j.run}"
        os.kill(pid, signal.SIGKILL)
        j.wait_for_line("rank 2 declared dead")
        assert store.close() == 0
        subprocess.run([os.environ["MOONCAKE_BIN"], "store", "stop", str(j.connect)],
                       capture_output=True, text=True, timeout=90)
        j.wait(timeout=90)
        extra = summary(j)["extra"]
        assert extra["objects_lost_rank_died"] == 20, extra
        assert extra["objects_lost"] == 20, extra
        assert result_line(j).startswith("LOST 20 acknowledged object(s)"), j.log()
        assert "died holding the only replica of 20 object(s)" in j.log(), j.log()
        assert status.read_text().strip() == "1", j.log()


def test_keys_the_ssd_tier_cannot_hold_are_never_dropped(tmp_path):
    """Keys the master accepts but the SSD tier cannot hold (before: 1..255 B only): the empty
    key and a 300-byte key, then 60 MiB more through 8 MiB of DRAM. Before, their failed spills
    dropped them (lost on eviction). Now each either reads back or was refused at put time."""
    with store_job(tmp_path, ["--store.dram", "8MiB", "--store.ssd", "on",
                              "--store.ssd_capacity", "1GiB"], ranks=2) as j:
        store = attach(j.connect)
        odd = ["", "k" * 300]
        stored = [k for k in odd if store.put(k, values.value(k, 4096)) == 0]
        acked, _ = put_patiently(store, [f"push/{i}" for i in range(60)], None)
        assert len(acked) >= 50, len(acked)
        for k in stored:
            data = store.get(k)
            assert len(data) == 4096 and values.matches(k, data), \
                f"key of {len(k)} B lost: {store.last_error()}"
        assert store.close() == 0
        assert j.stop() == 0, j.log()
        assert summary(j)["extra"]["objects_lost"] == 0
        assert result_line(j) == "OK", j.log()
