"""The store as a service and its clients (label client; docs/CLIENT.md).

Each test starts real store jobs (`mpirun ... mooncake --job.mode store`) and stops them by PID.
Processes outside the job attach with the connection file: this pytest process and a second
Python process (peer.py) through the mooncake_store module, and C++ / C programs (client_peer,
c_client) through libmooncake_client. Paths come from the environment CTest sets
(tests/client/CMakeLists.txt).
"""
import json
import os
import resource
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import warnings
from pathlib import Path

import numpy as np
import pytest

import jobs
import mooncake_store
import values

MOONCAKE = os.environ["MOONCAKE_BIN"]
CLIENT_PEER = os.environ["MOONCAKE_CLIENT_PEER"]
C_CLIENT = os.environ["MOONCAKE_C_CLIENT"]
MPIEXEC = os.environ.get("MPIEXEC", "mpirun")
HERE = Path(__file__).resolve().parent
MPI_FLAGS = ["--allow-run-as-root", "--oversubscribe", "--bind-to", "none", *jobs.MPI_ARGS.split(),
             "-x", "UCX_WARN_UNUSED_ENV_VARS=n"]
# Errors as the module returns them (-ErrorCode, mooncake_store.ERRORS).
INVALID_ARGUMENT, NOT_FOUND, ALREADY_EXISTS, PERMISSION_DENIED = -1, -3, -4, -6
TIMEOUT, BUSY, PEER_FAILURE = -11, -12, -20


class StoreJob:
    """A store service job under mpirun, started here and stopped by its PID."""

    def __init__(self, folder, ranks=4, options=()):
        self.folder = Path(folder)
        self.run = self.folder / "run"
        self.log_path = self.folder / "job.log"
        self.connect = self.run / "connect.json"
        self.folder.mkdir(parents=True, exist_ok=True)
        cmd = [MPIEXEC, *MPI_FLAGS, "-np", str(ranks), MOONCAKE, "--job.mode", "store",
               "--out", str(self.run), *options]
        with open(self.log_path, "w") as log:
            self.proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT,
                                         start_new_session=True)
        deadline = time.monotonic() + 60
        while not self.connect.exists():
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.kill()
                pytest.fail(f"the store job did not start: {self.log()}")
            time.sleep(0.05)

    def log(self):
        return self.log_path.read_text()

    def wait_for_line(self, text, timeout=30):
        """The job's log once it holds `text`. The ranks' output reaches the log through mpirun's
        forwarding, which can deliver a store rank's line after rank 0 wrote connect.json."""
        deadline = time.monotonic() + timeout
        while text not in self.log():
            if self.proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"the store job never printed {text!r}: {self.log()}")
            time.sleep(0.05)
        return self.log()

    def stop(self):
        """`mooncake store stop`, then the job must end."""
        out = subprocess.run([MOONCAKE, "store", "stop", str(self.connect)], capture_output=True,
                             text=True, timeout=90)
        assert out.returncode == 0, out.stderr
        return self.wait()

    def wait(self, timeout=60):
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            pytest.fail(f"the store job did not end within {timeout} s: {self.log()}")

    def kill(self):
        """SIGKILL to every process of the job's session (start_new_session: its id is mpirun's
        PID), by PID: Open MPI gives each rank a process group of its own, so a signal to
        mpirun's group alone left the ranks running."""
        for pid in session_members(self.proc.pid):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self.proc.wait()


def session_members(sid):
    """The PIDs of the processes in session `sid`."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if os.getsid(int(entry)) == sid:
                    found.append(int(entry))
            except (ProcessLookupError, PermissionError):
                pass
    return found


@pytest.fixture(scope="module")
def job(tmp_path_factory):
    """One store job for the tests that only use it: a master and 3 store ranks of 256 MiB."""
    j = StoreJob(tmp_path_factory.mktemp("store"),
                 options=["--store.dram", "256MiB", "--store.lease", "300ms"])
    yield j
    assert j.stop() == 0, j.log()


def attach(path, **kwargs):
    store = mooncake_store.MooncakeDistributedStore()
    rc = store.setup(str(path), **kwargs)
    assert rc == 0, f"setup: {rc} {store.last_error()}"
    return store


def test_two_python_processes_and_a_cpp_one_share_values(job):
    """Values of 1 B to 64 MiB put by each process are read back verified by the others."""
    store = attach(job.connect)
    values.put_all(store, "py1")
    cpp = subprocess.run([CLIENT_PEER, str(job.connect), "put", "cpp"], capture_output=True,
                         text=True, timeout=120)
    assert cpp.returncode == 0, cpp.stderr
    cpp = subprocess.run([CLIENT_PEER, str(job.connect), "verify", "py1"], capture_output=True,
                         text=True, timeout=120)
    assert cpp.returncode == 0, cpp.stderr
    py2 = subprocess.run([sys.executable, str(HERE / "peer.py"), str(job.connect), "verify", "py1",
                          "cpp"], capture_output=True, text=True, timeout=120)
    assert py2.returncode == 0, py2.stderr
    py2 = subprocess.run([sys.executable, str(HERE / "peer.py"), str(job.connect), "put", "py2"],
                         capture_output=True, text=True, timeout=120)
    assert py2.returncode == 0, py2.stderr
    values.verify_all(store, "cpp")
    values.verify_all(store, "py2")
    c = subprocess.run([C_CLIENT, str(job.connect), "c"], capture_output=True, text=True,
                       timeout=60)
    assert c.returncode == 0 and "c_client OK" in c.stdout, c.stderr
    assert store.close() == 0


def test_ten_thousand_small_keys_in_batches(job):
    store = attach(job.connect)
    keys = [f"small/{i}" for i in range(10000)]
    data = [values.value(k, 64 + i % 200) for i, k in enumerate(keys)]
    for first in range(0, len(keys), 1000):
        assert store.put_batch(keys[first:first + 1000], data[first:first + 1000]) == 0, \
            store.last_error()
    assert store.batch_is_exist(keys + ["small/none"]) == [1] * len(keys) + [0]
    got = store.get_batch(keys)
    assert all(values.matches(k, g) for k, g in zip(keys, got))
    outs = [np.zeros(len(d), dtype=np.uint8) for d in data[:3000]]
    sizes = store.batch_get_into(keys[:3000], outs)
    assert sizes == [len(d) for d in data[:3000]]
    assert all(values.matches(k, o) for k, o in zip(keys, outs))
    assert store.close() == 0


def test_a_partial_batch_put_reports_each_key(job):
    """A batch of 100 keys of which 84 exist already stores the other 16: batch_put returns
    each key's result in order (as batch_put_from does, and Mooncake's batch calls), and
    put_batch (Mooncake's single code) fails saying how many were stored and which key failed
    first. Before, one failure code was all a caller learned."""
    store = attach(job.connect)
    keys = [f"partial/{i}" for i in range(100)]
    exists = set(range(100)) - set(range(3, 99, 6))  # 84 keys; the 16 others are fresh
    assert len(exists) == 84
    assert store.put_batch([keys[i] for i in sorted(exists)], [b"old"] * 84) == 0
    rcs = store.batch_put(keys, [b"new"] * 100)
    assert rcs == [ALREADY_EXISTS if i in exists else 0 for i in range(100)], rcs
    assert [store.get(k) for k in keys] == [b"old" if i in exists else b"new" for i in range(100)]
    again = [f"partial2/{i}" for i in range(100)]
    assert store.put_batch([again[i] for i in sorted(exists)], [b"old"] * 84) == 0
    assert store.put_batch(again, [b"new"] * 100) == ALREADY_EXISTS
    assert "84 of 100 keys failed, 16 stored" in store.last_error(), store.last_error()
    assert "key 0:" in store.last_error(), store.last_error()
    assert store.batch_is_exist(again) == [1] * 100
    assert store.close() == 0


def test_exist_remove_and_get_size_behave_as_mooncake(job):
    """Mooncake Store: is_exist 1/0; get_size is the size or negative; get of a missing key is
    b''; objects are immutable (a second put fails); is_exist and get lease the object, and a
    leased object cannot be removed (OBJECT_HAS_LEASE) until the lease ends; a removed key can
    be put again."""
    store = attach(job.connect)
    assert store.put("sem/a", b"abc") == 0
    assert store.put("sem/a", b"xyz") == ALREADY_EXISTS
    assert store.is_exist("sem/a") == 1
    assert store.is_exist("sem/none") == 0
    assert store.get_size("sem/a") == 3
    assert store.get_size("sem/none") == NOT_FOUND
    assert store.get("sem/none") == b""
    assert store.remove("sem/none") == NOT_FOUND
    assert store.get("sem/a") == b"abc"
    assert store.remove("sem/a") == BUSY, "a leased object was removed"
    time.sleep(0.5)  # the job's store.lease is 300 ms
    assert store.remove("sem/a") == 0, store.last_error()
    assert store.is_exist("sem/a") == 0
    assert store.put("sem/a", b"again") == 0
    assert store.get("sem/a") == b"again"
    assert store.close() == 0


def test_last_error_after_a_non_utf8_key_is_text(job):
    """Keys are bytes; an error quoting one that is not UTF-8 is still readable text
    (last_error() raised UnicodeDecodeError before)."""
    store = attach(job.connect)
    key = b"k\xff\xfe"
    assert store.get(key) == b"" and store.get_size(key) == NOT_FOUND
    message = store.last_error()
    assert isinstance(message, str) and "\\xff\\xfe" in message, message
    assert store.put(key, b"v") == 0 and store.get(key) == b"v"
    assert store.put(key, b"v") == ALREADY_EXISTS
    assert "\\xff" in store.last_error(), store.last_error()
    assert store.close() == 0


def test_keys_outside_1_to_4096_bytes_are_refused_naming_the_limit(job):
    """The store's key limit, 1..4096 bytes, in every call of the Python module, and in the C++
    (client_peer keys) and C (c_client) APIs: the empty key and a 4097-byte key are refused
    with InvalidArgument naming the limit, before anything is sent (put("") was stored and
    get("") returned it; a longer key got a ProtocolError about a malformed PutStartRequest);
    a 4096-byte key is stored and read back."""
    store = attach(job.connect)
    buf = bytearray(16)
    calls = {
        "put": lambda k: store.put(k, b"x"),
        "put_from": lambda k: store.put_from(k, buf),
        "get": lambda k: -1 if store.get(k) == b"" else 0,
        "get_into": lambda k: store.get_into(k, buf),
        "get_size": store.get_size,
        "is_exist": store.is_exist,
        "remove": store.remove,
        "put_batch": lambda k: store.put_batch([k], [b"x"]),
        "batch_put": lambda k: store.batch_put([k], [b"x"])[0],
        "batch_put_from": lambda k: store.batch_put_from([k], [buf])[0],
        "get_batch": lambda k: -1 if store.get_batch([k]) == [b""] else 0,
        "batch_get_into": lambda k: store.batch_get_into([k], [buf])[0],
        "batch_is_exist": lambda k: store.batch_is_exist([k])[0],
    }
    wrong = []
    for key, names in (("", "empty key"), (b"", "empty key"), ("k" * 4097, "limit of 4096 bytes")):
        for name, call in calls.items():
            rc, message = call(key), store.last_error()
            if rc != INVALID_ARGUMENT or not message.startswith("InvalidArgument") \
                    or names not in message:
                wrong.append(f"{name}({len(key)}-byte key) -> {rc}: {message}")
    assert not wrong, "\n".join(wrong)
    longest = "keys/" + "x" * 4091
    assert store.put(longest, b"at the limit") == 0, store.last_error()
    assert store.get(longest) == b"at the limit"
    assert store.close() == 0
    for peer in ([CLIENT_PEER, str(job.connect), "keys", "keys-cpp/"],
                 [C_CLIENT, str(job.connect), "keys-c"]):
        run = subprocess.run(peer, capture_output=True, text=True, timeout=60)
        assert run.returncode == 0, run.stderr


def test_batch_calls_with_lists_of_different_lengths_fail_every_key(job):
    """Mooncake's convention for a batch whose lists differ in length, in every batch call: no
    exception, the usual result with each key failed (InvalidArgument: -1 per key, -1 for
    put_batch), nothing stored, and last_error() naming the call and each list's length
    (put_batch returned -1 but batch_get_into raised ValueError before)."""
    store = attach(job.connect)
    keys = ["len/a", "len/b", "len/c"]
    two = [bytearray(8), bytearray(8)]
    calls = {
        "put_batch": (lambda: store.put_batch(keys, [b"x", b"y"]), -1, "3 keys but 2 values"),
        "batch_put": (lambda: store.batch_put(keys, [b"x", b"y"]), [-1] * 3,
                      "3 keys but 2 values"),
        "batch_put_from": (lambda: store.batch_put_from(keys, two), [-1] * 3,
                           "3 keys but 2 buffers"),
        "batch_put_from sizes": (lambda: store.batch_put_from(keys, two + [bytearray(8)], [8, 8]),
                                 [-1] * 3, "3 keys but 3 buffers and 2 sizes"),
        "batch_get_into": (lambda: store.batch_get_into(keys, two), [-1] * 3,
                           "3 keys but 2 buffers"),
        "batch_get_into sizes": (lambda: store.batch_get_into(keys, two + [bytearray(8)], [8]),
                                 [-1] * 3, "3 keys but 3 buffers and 1 sizes"),
    }
    wrong = []
    for name, (call, want, says) in calls.items():
        try:
            got = call()
        except Exception as e:  # the convention is a result, never an exception
            wrong.append(f"{name}: raised {e!r}")
            continue
        message = store.last_error()
        call_name = name.split()[0]
        if got != want or not message.startswith(f"InvalidArgument: {call_name}: {says}"):
            wrong.append(f"{name}: {got!r}, last_error {message!r}")
    assert not wrong, "\n".join(wrong)
    assert store.batch_is_exist(keys) == [0, 0, 0], "a mismatched batch stored something"
    assert store.close() == 0


def test_get_into_numpy_equals_put_from_without_a_copy(job):
    """get_into lands in the caller's array: the process's resident memory does not grow by the
    object's size (get(), which copies into a new bytes object, does: the measure sees a copy)."""
    store = attach(job.connect)
    size = 128 << 20
    src = np.frombuffer(np.random.default_rng(1).bytes(size), dtype=np.uint8)
    dst = np.ones(size, dtype=np.uint8)  # touched: its pages are resident already
    assert store.register_buffer(src) == 0 and store.register_buffer(dst) == 0
    assert store.put_from("zc/big", src) == 0, store.last_error()

    def resident_mib():
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * resource.getpagesize() / 2**20

    before = resident_mib()
    assert store.get_into("zc/big", dst) == size
    grew_into = resident_mib() - before
    assert np.array_equal(src, dst)
    before = resident_mib()
    copy = store.get("zc/big")
    grew_get = resident_mib() - before
    assert len(copy) == size
    print(f"resident memory growth: get_into {grew_into:.1f} MiB, get {grew_get:.1f} MiB "
          f"for a {size >> 20} MiB object")
    assert grew_into < 16, f"get_into grew the resident memory by {grew_into:.0f} MiB: a copy"
    assert grew_get > size / 2**20 / 2, "the measure did not see get()'s copy"
    assert store.unregister_buffer(src) == 0 and store.unregister_buffer(dst) == 0
    assert store.close() == 0


def test_close_racing_get_into_never_crashes(job):
    """close() on one thread while another is inside get_into, 100 times: close waits for the
    call in flight (or the call fails cleanly); nothing is freed under it (it crashed 11 of 12
    times before). In a process of its own (close_race.py), so a crash fails only this test."""
    out = subprocess.run([sys.executable, str(HERE / "close_race.py"), str(job.connect), "100"],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0 and "close_race OK" in out.stdout, \
        f"exit {out.returncode}: {out.stdout[-500:]} {out.stderr[-2000:]}"


def test_raw_addresses_are_used_only_inside_registered_buffers(job):
    """The integer-address forms (Mooncake's put_from(key, addr, size) ...) trust an address
    only inside a buffer registered with register_buffer, which itself refuses memory that is
    not mapped; before, any integer was dereferenced (a bad one crashed the process) and
    register_buffer of an unmapped address returned 0."""
    store = attach(job.connect)
    buf = np.zeros(1 << 20, dtype=np.uint8)
    addr = buf.ctypes.data
    assert store.put_from("raw/a", addr, 4096) == INVALID_ARGUMENT
    assert "not inside a registered buffer" in store.last_error(), store.last_error()
    assert store.get_into("raw/a", 8, 4096) == INVALID_ARGUMENT  # address 8: a crash before
    assert store.batch_put_from(["raw/b"], [16], [10]) == [INVALID_ARGUMENT]
    assert store.batch_get_into(["raw/b"], [16], [10]) == [INVALID_ARGUMENT]
    assert store.register_buffer(0x1000, 1 << 20) == INVALID_ARGUMENT  # never mapped on Linux
    assert "not mapped" in store.last_error(), store.last_error()
    assert store.register_buffer(addr, 0) == INVALID_ARGUMENT
    assert store.register_buffer(addr, 1 << 20) == 0, store.last_error()
    buf[:4096] = np.arange(4096) % 251
    assert store.put_from("raw/a", addr, 4096) == 0, store.last_error()
    assert store.get_into("raw/a", addr + 8192, 4096) == 4096, store.last_error()
    assert np.array_equal(buf[:4096], buf[8192:8192 + 4096])
    assert store.put_from("raw/c", addr + (1 << 20) - 10, 11) == INVALID_ARGUMENT  # 1 B past
    assert store.put_from("raw/c", addr + (1 << 20) - 10, 10) == 0, store.last_error()
    assert store.unregister_buffer(addr) == 0
    assert store.put_from("raw/d", addr, 16) == INVALID_ARGUMENT
    assert store.put_from("raw/d", buf[:16]) == 0  # a buffer object needs no registration
    assert store.close() == 0


def test_a_connection_file_others_can_read_is_used_with_a_warning(job, tmp_path):
    """The file holds the token: readable by group or others, it still works, with a Python
    warning (warnings.warn) and, from the C++ client, a logged line; mode 0600 gives neither."""
    shared = tmp_path / "shared.json"
    shutil.copy(job.connect, shared)
    os.chmod(shared, 0o644)
    store = mooncake_store.MooncakeDistributedStore()
    with pytest.warns(UserWarning, match="readable by others .mode 0644.*token"):
        assert store.setup(str(shared)) == 0, store.last_error()
    assert store.close() == 0
    cpp = subprocess.run([CLIENT_PEER, str(shared), "attach"], capture_output=True, text=True,
                         timeout=30)
    assert cpp.returncode == 0 and "readable by others" in cpp.stderr, cpp.stderr
    os.chmod(shared, 0o640)
    with pytest.warns(UserWarning, match="readable by its group"):
        assert store.setup(str(shared)) == 0
    assert store.close() == 0
    os.chmod(shared, 0o600)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert store.setup(str(shared)) == 0
    assert store.close() == 0
    cpp = subprocess.run([CLIENT_PEER, str(shared), "attach"], capture_output=True, text=True,
                         timeout=30)
    assert cpp.returncode == 0 and "readable" not in cpp.stderr, cpp.stderr


def test_a_wrong_token_is_refused(job, tmp_path):
    info = json.loads(job.connect.read_text())
    info["token"] = "0" * 32
    forged = tmp_path / "forged.json"
    forged.write_text(json.dumps(info))
    os.chmod(forged, 0o600)
    store = mooncake_store.MooncakeDistributedStore()
    start = time.monotonic()
    assert store.setup(str(forged)) == PERMISSION_DENIED
    assert time.monotonic() - start < 5
    assert "wrong job token" in store.last_error()
    cpp = subprocess.run([CLIENT_PEER, str(forged), "attach"], capture_output=True, text=True,
                         timeout=30)
    assert cpp.returncode == 3, cpp.stderr  # client_peer's exit for PermissionDenied
    attach(job.connect).close()  # the job is unaffected


def open_fds(pid):
    return len(os.listdir(f"/proc/{pid}/fd"))


def test_garbage_connections_leave_no_fd_in_rank_0(tmp_path):
    """1,000 connections to rank 0's listener that are not mooncake clients, each sending 16
    bytes (zeros, random, a UCX connection header with an empty body, an HTTP request line) and
    closing, then 50 that stay open and silent or stop half-way through a header: rank 0 keeps
    no file descriptor for any of them (the silent ones are ended after the 5 s handshake
    deadline), while a client attached all along keeps working. Before, each connection that
    sent 16 bytes leaked a descriptor for good, 16 zero bytes aborted rank 0 inside UCX, and a
    silent connection held one for as long as it stayed open."""
    j = StoreJob(tmp_path, ranks=2, options=["--store.dram", "64MiB"])
    info = json.loads(j.connect.read_text())
    host, port = info["master"]["addresses"][-1].rsplit(":", 1)
    pid = info["pid"]
    client = attach(j.connect)  # attached all along: its connection must be left alone
    assert client.put("before/garbage", b"ok") == 0
    time.sleep(1)
    before = open_fds(pid)

    def settle(timeout):
        deadline = time.monotonic() + timeout
        while open_fds(pid) > before and time.monotonic() < deadline:
            time.sleep(0.2)
        assert j.proc.poll() is None, f"the job died: {j.log()[-3000:]}"
        return open_fds(pid)

    rng = np.random.default_rng(27)
    # Refused at once (rank 0 answers UCX's reject and closes): 16 zero bytes (a header with an
    # empty body), and a header whose 11-byte body is not a UCX client's (sa_data version 7).
    # Such a client reads until rank 0 closes, then waits 10 ms: a flood that reconnects before
    # UCX has finished with the last socket can trip a race inside UCX 1.13 and abort rank 0
    # (docs/CLIENT.md, known limits; CI of 096be2c lost rank 0 so, without the pause, in the gcc
    # build). This test is about descriptors, not about that race.
    refused = [bytes(16), (11).to_bytes(8, "little") + bytes(8) + bytes(8) + b"\xe0" + bytes(2)]
    # Held by UCX until they close (a header announcing more bytes than ever come).
    held = [b"GET / HTTP/1.1\r\n", None]

    def connect(i, timeout):
        try:
            return socket.create_connection((host, int(port)), timeout=timeout)
        except OSError as e:
            state = "alive" if j.proc.poll() is None else f"ended ({j.proc.poll()})"
            raise AssertionError(f"connection {i} to rank 0 failed: {e}; the job is {state}: "
                                 f"{j.log()[-3000:]}") from e

    for i in range(1000):
        payload = refused[i % 2] if i % 4 < 2 else (held[i % 2] or rng.bytes(16))
        with connect(i, 10) as s:
            s.sendall(payload)
            try:
                while payload in refused and s.recv(64):
                    pass
            except ConnectionResetError:  # closed with a reset: closed all the same
                pass
        if payload in refused:
            time.sleep(0.01)
    after = settle(15)  # the listener closes what it refused within a moment
    assert after <= before, f"rank 0 holds {after - before} more fds after 1,000 garbage connections"
    silent = [connect(1000 + k, 30) for k in range(50)]
    for s in silent[:25]:
        s.sendall((256).to_bytes(8, "little") + bytes(8))  # announces 256 bytes, sends none
    # Accepted by rank 0's listener thread when it runs: polled, up to 4 s (they are ended 5 s
    # after they were accepted).
    accepted_by = time.monotonic() + 4
    while open_fds(pid) < before + 50 and time.monotonic() < accepted_by:
        time.sleep(0.05)
    assert open_fds(pid) >= before + 50, "the silent connections were not accepted"
    after = settle(30)  # 5 s deadline, swept every second
    assert after <= before, f"rank 0 holds {after - before} fds of silent connections"
    assert all(s.recv(1) == b"" for s in silent), "a silent connection was not ended"
    for s in silent:
        s.close()
    assert client.get("before/garbage") == b"ok", client.last_error()
    assert client.close() == 0
    store = attach(j.connect)
    assert store.put("after/garbage", b"ok") == 0 and store.get("after/garbage") == b"ok"
    assert store.close() == 0
    assert j.stop() == 0, j.log()


def test_a_crafted_connection_file_is_refused_before_allocating(job, tmp_path):
    """Every connection-file field is bounded before anything is sized from it: a world_size
    of 2^31 - 1 (the client allocated 15.7 GB in 60 s for it) is refused at once, naming the
    field and the file, in a process limited to 1 GiB of address space beyond its start."""
    info = json.loads(job.connect.read_text())
    crafted = {"world_size": 2**31 - 1, "store": dict(info["store"], ranks=[1] * 70000)}
    for field, bad in crafted.items():
        path = tmp_path / f"{field}.json"
        path.write_text(json.dumps(dict(info, **{field: bad})))
        os.chmod(path, 0o600)
        script = (
            "import resource, sys, mooncake_store\n"
            "soft, hard = resource.getrlimit(resource.RLIMIT_AS)\n"
            "import os; vm = int(open('/proc/self/statm').read().split()[0]) * 4096\n"
            "resource.setrlimit(resource.RLIMIT_AS, (vm + (1 << 30), hard))\n"
            "s = mooncake_store.MooncakeDistributedStore()\n"
            "rc = s.setup(sys.argv[1])\n"
            "print(rc); print(s.last_error())\n")
        start = time.monotonic()
        out = subprocess.run([sys.executable, "-c", script, str(path)], capture_output=True,
                             text=True, timeout=60)
        assert out.returncode == 0, f"{field}: exit {out.returncode}: {out.stderr[-2000:]}"
        rc, message = out.stdout.split("\n", 1)
        assert int(rc) == -1, f"{field}: {out.stdout}"  # InvalidArgument
        assert str(path) in message and field.split(".")[0] in message, message
        assert time.monotonic() - start < 10


def test_a_stopped_jobs_connection_file_fails_clearly(tmp_path):
    j = StoreJob(tmp_path, ranks=2)
    assert j.stop() == 0, j.log()
    store = mooncake_store.MooncakeDistributedStore()
    start = time.monotonic()
    assert store.setup(str(j.connect), timeout=5) == PEER_FAILURE
    assert time.monotonic() - start < 5
    assert "no store job listens" in store.last_error()


def test_a_client_killed_mid_put_leaves_nothing_and_its_space_returns(tmp_path):
    """A put started and never ended (its client killed): the key never becomes visible, and
    after store.put_timeout its space is free again (a put that needs it succeeds)."""
    j = StoreJob(tmp_path, ranks=2,
                 options=["--store.dram", "64MiB", "--store.put_timeout", "5s"])
    store = attach(j.connect)
    big = values.value("big/after", 48 << 20)
    zombie = subprocess.Popen([CLIENT_PEER, str(j.connect), "start-put", "dead/key",
                               str(48 << 20)], stdout=subprocess.PIPE, text=True)
    assert "started the put" in zombie.stdout.readline()
    zombie.kill()
    zombie.wait()
    # Within the put timeout (5 s) the dead put still holds its 48 of the 64 MiB.
    assert store.put("big/after", big) != 0, "the killed put's space was never reserved"
    assert store.is_exist("dead/key") == 0
    deadline = time.monotonic() + 20
    while store.put("big/after", big) != 0:
        assert time.monotonic() < deadline, f"the space never returned: {store.last_error()}"
        time.sleep(0.2)
    assert store.is_exist("dead/key") == 0
    assert values.matches("big/after", store.get("big/after"))
    assert store.put("dead/key", b"now") == 0  # the key is free: the dead put left nothing
    assert store.close() == 0
    assert j.stop() == 0, j.log()


def test_sigterm_with_clients_attached_then_recover_what_was_spilled(tmp_path):
    """SIGTERM to mpirun while a client keeps calling: its calls fail with a status, none hangs;
    the job's SSD folder then recovers every block it spilled (--store.recover), verified."""
    ssd = tmp_path / "ssd"
    opts = ["--store.dram", "48MiB", "--store.ssd", "on", "--store.ssd_dir", str(ssd),
            "--store.ssd_capacity", "256MiB"]
    j = StoreJob(tmp_path / "first", ranks=3, options=opts)
    store = attach(j.connect, timeout=3)
    keys = [f"spill/{i}" for i in range(160)]  # 160 MiB through 96 MiB of DRAM
    # Retrying a put the spill queue's back-pressure refused (a fresh-clone CI run failed here
    # with 'NoSpace ... the spill queue of store rank 1 is full'); waits for the last spills.
    _fill(store, "spill", len(keys))
    # Gets in a loop until the job is gone. Before the SIGTERM a key may be missing (the store
    # drops an eviction when its spill queue is full: NotFound is the store's answer); after it,
    # every call must fail with PeerFailure or Timeout within its deadline, and none may hang.
    calls = []  # (start, rc, seconds)

    def keep_calling():
        out = np.empty(1 << 20, dtype=np.uint8)
        while True:
            start = time.monotonic()
            rc = store.get_into(keys[len(calls) % len(keys)], out)
            calls.append((start, rc, time.monotonic() - start))
            if rc in (PEER_FAILURE, TIMEOUT):
                return

    caller = threading.Thread(target=keep_calling)
    caller.start()
    time.sleep(0.5)
    signalled = time.monotonic()
    os.kill(j.proc.pid, signal.SIGTERM)
    j.wait(timeout=60)
    caller.join(timeout=30)
    assert not caller.is_alive(), "a client call hung after the job stopped"
    assert calls[-1][0] + calls[-1][2] > signalled, "the calls failed before the SIGTERM"
    assert all(rc >= 0 or rc in (NOT_FOUND, PEER_FAILURE, TIMEOUT) for _, rc, _ in calls), \
        {rc for _, rc, _ in calls}
    slowest = max(seconds for _, _, seconds in calls)
    assert slowest < 3 + 2, f"a call took {slowest:.1f} s (deadline 3 s)"
    store.close()
    on_disk = sum(1 for _ in ssd.rglob("*.h5"))
    assert on_disk > 0, "nothing was spilled"
    r = StoreJob(tmp_path / "second", ranks=3, options=["--store.dram", "48MiB",
                                                         "--store.recover", str(ssd)])
    recovered = int(r.wait_for_line(" SSD blocks recovered").split(" SSD blocks recovered")[0]
                    .split()[-1])
    store = attach(r.connect)
    present = [k for k, e in zip(keys, store.batch_is_exist(keys)) if e == 1]
    assert len(present) == recovered >= 160 - 96, (len(present), recovered)
    for k in present:
        assert values.matches(k, store.get(k)), f"{k} came back wrong"
    assert store.close() == 0
    assert r.stop() == 0, r.log()


def _fill(store, prefix, n=100):
    """Puts N x 1 MiB through one store rank's 48 MiB of DRAM: everything older is spilled.
    Under store.when_full = keep a put that finds the spill queue full is refused with NoSpace
    (back-pressure, docs/STORE.md): it is retried, as a client would, until the spills catch up
    (on a loaded machine they fell behind the 5 ms pacing and failed the test 2 times in 3)."""
    for i in range(n):
        k = f"{prefix}/{i}"
        deadline = time.time() + 60
        while store.put(k, values.value(k, 1 << 20)) != 0:
            error = store.last_error()
            assert "NoSpace" in error and "spill queue" in error and time.time() < deadline, error
            time.sleep(0.05)
        time.sleep(0.005)  # paced: the spill queue mostly keeps up
    time.sleep(2)  # the last spills finish


def test_remove_then_reput_with_ssd_serves_the_new_version_and_recovers_it(tmp_path):
    """Issue 27: put k = v1, v1 spilled, remove k, put k = v2, v2 spilled. The SSD tier keyed
    blocks by key alone, so a get served v1's block (a checksum failure, or v1 itself without
    verification) and a --store.recover restart brought v1 and removed keys back. Now every get
    returns v2, and after the restart v2 again while the removed key stays absent. Byte-string
    keys (NUL, non-UTF-8, 4096 bytes) take the same path; the empty key is refused."""
    ssd = tmp_path / "ssd"
    opts = ["--store.dram", "48MiB", "--store.ssd", "on", "--store.ssd_dir", str(ssd),
            "--store.ssd_capacity", "512MiB", "--store.promote_after", "0"]
    v1, v2 = values.value("k@v1", 1 << 20), values.value("k@v2", 1 << 20)
    odd = [b"nul\x00a", b"nul", b"\xff\xfe\x80", b"x" * 4096]
    # One store rank: every object put before a fill is evicted by it (with two, the master's
    # placement may leave an older object in the other rank's DRAM, which a restart loses).
    j = StoreJob(tmp_path / "first", ranks=2, options=opts)
    store = attach(j.connect)
    assert store.put("k", v1) == 0, store.last_error()
    assert store.put("gone", values.value("gone", 1 << 20)) == 0, store.last_error()
    for i, key in enumerate(odd):
        assert store.put(key, values.value(f"odd{i}", 4096)) == 0, (i, store.last_error())
    assert store.put(b"", values.value("e", 10)) < 0, "the empty key was accepted"
    assert store.put(b"y" * 4097, values.value("y", 10)) < 0, "a 4097-byte key was accepted"
    assert "4096" in store.last_error(), store.last_error()
    _fill(store, "fill1")
    assert store.remove("k") == 0, store.last_error()
    assert store.remove("gone") == 0, store.last_error()
    assert store.put("k", v2) == 0, store.last_error()
    _fill(store, "fill2")
    unverified = attach(j.connect, verify_checksum=False)
    for client, how in ((store, "verified"), (unverified, "unverified")):
        got = np.frombuffer(client.get("k"), dtype=np.uint8)
        assert np.array_equal(got, v2), \
            f"{how} get: " + ("v1, the removed value" if np.array_equal(got, v1) else
                              f"{len(got)} B, not v2: {client.last_error()}")
    assert store.is_exist("gone") == 0
    unverified.close()
    store.close()
    assert j.stop() == 0, j.log()

    # A bucket file whose HDF5 metadata is damaged: recovery drops it whole and says so.
    damaged = ssd / "rank1" / "bucket-00009999.h5"
    damaged.write_bytes(b"\x89HDF\r\n\x1a\n" + b"\xee" * 4096)
    r = StoreJob(tmp_path / "second", ranks=2, options=["--store.dram", "48MiB",
                                                         "--store.recover", str(ssd)])
    log = r.wait_for_line(" SSD blocks recovered")
    assert f"{damaged}: dropped the whole file (damaged HDF5 metadata" in \
        r.wait_for_line("damaged HDF5 metadata"), log
    store = attach(r.connect)
    got = np.frombuffer(store.get("k"), dtype=np.uint8)
    assert np.array_equal(got, v2), \
        "after recovery: " + ("v1 came back" if np.array_equal(got, v1) else f"{len(got)} B")
    assert store.is_exist("gone") == 0, "a key removed before the restart came back"
    for i, key in enumerate(odd):
        got = store.get(key)
        assert values.matches(f"odd{i}", got) and len(got) == 4096, f"odd key {i} after recovery"
    assert store.close() == 0
    assert r.stop() == 0, r.log()
    extra = json.loads((r.run / "summary.json").read_text())["extra"]
    assert extra["ssd_recovery_unreadable_files"] == 1, extra
    assert extra["ssd_recovery_dropped_tombstoned"] == 2, extra  # "gone" and k's v1


def test_a_tcp_job_serves_clients_over_tcp(tmp_path):
    """A job pinned to tcp: its clients (default transports, or tcp) move bytes over tcp with
    active-message rendezvous, acknowledged through the attached connection.

    Messages from the job larger than UCX's default 64K tcp receive segment must not abort the
    client: a 4000-key batch, whose answers of about 120 KB leave eagerly, and the 64 KiB values
    of verify_all, which the job's rendezvous threshold (256K) sends eagerly (UCX 1.13 sizes
    what it sends by its own receive segment, which the client must match: UcxConfig's
    tcp_rx_seg_size)."""
    j = StoreJob(tmp_path, ranks=3, options=["--transport.tls", "tcp", "--store.dram", "128MiB"])
    for tls in ("auto", "tcp"):
        store = attach(j.connect, transport_tls=tls)
        key = f"tcp/{tls}"
        assert store.put(key, values.value(key, (16 << 20) + 5)) == 0, store.last_error()
        assert values.matches(key, store.get(key))
        keys = [f"tcp/{tls}/batch/{i:05d}" for i in range(4000)]
        assert store.put_batch(keys, [k.encode() for k in keys]) == 0, store.last_error()
        assert store.get_batch(keys) == [k.encode() for k in keys], store.last_error()
        assert store.close() == 0
    cpp = subprocess.run([CLIENT_PEER, str(j.connect), "put", "tcp-cpp"], capture_output=True,
                         text=True, timeout=120)
    assert cpp.returncode == 0, cpp.stderr
    values.verify_all(attach(j.connect), "tcp-cpp")
    assert j.stop() == 0, j.log()
