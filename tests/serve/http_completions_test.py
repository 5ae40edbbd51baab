#!/usr/bin/python3
"""POST /v1/completions on a serving job (issue 32): a 4-rank job with the reference engine
(tiny) and serve.http 0, no trace, launched as users do through launch/mooncake-mpirun.

Modes:
  completions  curl and Python urllib send token-id prompts, streaming and not; the tokens equal
               `mooncake generate --prompt-ids ... --max-tokens N`'s; a second request with the
               same 1300-token prompt reuses its prefix blocks; a burst of long prompts under a
               1 s TTFT SLO gets 429s with Retry-After and every admitted request completes with
               the reference's tokens; `mooncake serve stop ENDPOINT_FILE` ends the job with exit 0
               and its run folder written (summary.json counts every request).
  stream       a streamed completion of 1000 tokens (the mini model) arrives as the decode rank
               generates them: the first event well before the last (their spread is a large
               share of the request's time, and the first comes well before a non-streamed
               answer of the same request would), in more than one read, with the non-streamed
               answer's tokens; four streams at once and a client that leaves after its first
               event leave the others' tokens equal to generate's.
  idle         2000 connections to the endpoint stay idle (100 after a GET /health, kept alive,
               1900 that send nothing; serve.http_idle 60s) while a completion is sent on a new
               one: it is answered with generate's tokens while (nearly) all of them are still
               open, not after the server has timed them out.
  bad_input    malformed JSON, missing and wrong-typed fields, token ids outside the vocabulary,
               max_tokens 0 / negative / huge / a string, a prompt longer than allowed, temperature
               != 0, n != 1, text prompts, an unknown model, a client that disconnects before
               its streamed answer: each a 400 (404 for the model) naming what is wrong, counted in
               /metrics; a good request sent meanwhile still gets the reference's tokens; then a
               SIGTERM to launch/mooncake-mpirun ends the job in order (exit 0, run folder).

Usage: http_completions_test.py MODE MOONCAKE LAUNCHER MPIRUN [extra mpirun args...]
"""
import concurrent.futures
import http.client
import json
import os
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request

MODE, MOONCAKE, LAUNCHER, MPIRUN = sys.argv[1:5]
EXTRA = sys.argv[5:]
DIR = tempfile.mkdtemp(prefix="http_completions_")
RUN = os.path.join(DIR, "run")
LOG = os.path.join(DIR, "log")
VOCAB = 512  # the tiny preset's
JOBS = []  # launchers started here, each in a process group of its own


def fail(message):
    print(f"FAIL ({MODE}): {message}")
    try:
        with open(LOG) as f:
            print("".join(f.readlines()[-30:]))
    except OSError:
        pass
    sys.exit(1)


def start_job(extra_args, max_output=32, model="tiny"):
    args = [LAUNCHER, "--mpirun", MPIRUN, "--bin", MOONCAKE, "--roles",
            "conductor:1 store:1 prefill:1 decode:1", "--spread", "none", "--",
            "--engine.kind", "reference", "--engine.model", model, "--engine.max_output",
            str(max_output),
            "--time_scale", "1", "--serve.http", "0", "--job.plots", "off",
            "--cluster.failure_timeout", "3s", "--out", RUN,
            # A job whose test was killed (CTest's 300 s timeout) ends by itself: it runs in its
            # own session, out of reach of the kill, and would serve for the default 30 min.
            "--job.deadline", "280s"] + extra_args
    env = dict(os.environ, MOONCAKE_MPIRUN_ARGS=" ".join(EXTRA))
    log = open(LOG, "w")
    job = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT, env=env,
                           start_new_session=True)
    JOBS.append(job)
    endpoint = os.path.join(RUN, "endpoint.json")
    deadline = time.time() + 120
    while time.time() < deadline:
        if job.poll() is not None:
            fail(f"the job exited {job.returncode} before serving")
        if os.path.exists(endpoint):
            try:
                url = json.load(open(endpoint))["url"]
                with urllib.request.urlopen(url + "/health", timeout=5) as r:
                    if r.status == 200:
                        return job, url, endpoint
            except (OSError, ValueError, KeyError):
                pass
        time.sleep(0.3)
    fail("no endpoint within 120 s")


def post(url, body, raw=None, timeout=300):
    """(status, headers, parsed JSON or text) of POST /v1/completions."""
    data = raw if raw is not None else json.dumps(body).encode()
    req = urllib.request.Request(url + "/v1/completions", data,
                                 {"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            text = r.read().decode()
            return r.status, r.headers, text
    except urllib.error.HTTPError as e:
        return e.code, e.headers, e.read().decode()


def tokens_of(text):
    return json.loads(text)["choices"][0]["token_ids"]


def stream_tokens(text):
    """The token ids of a server-sent event stream, checking its shape."""
    events = [line[len("data: "):] for line in text.split("\n") if line.startswith("data: ")]
    if not events or events[-1] != "[DONE]":
        fail(f"the stream does not end with [DONE]: {text[-200:]!r}")
    chunks = [json.loads(e) for e in events[:-1]]
    ids = []
    for c in chunks[:-1]:
        one = c["choices"][0]["token_ids"]
        if len(one) != 1:
            fail(f"a stream event carries {len(one)} tokens, not one")
        ids += one
    if "usage" not in chunks[-1] or chunks[-1]["choices"][0]["finish_reason"] is None:
        fail("the stream's last event has no usage or finish_reason")
    return ids


def generate(prompt, n, model="tiny"):
    out = subprocess.run([MOONCAKE, "generate", "--model", model, "--prompt-ids",
                          ",".join(map(str, prompt)), "--max-tokens", str(n)],
                         capture_output=True, text=True, check=True).stdout
    return json.loads(out.splitlines()[0])["output_ids"]


def metric(url, name, labels):
    with urllib.request.urlopen(url + "/metrics", timeout=10) as r:
        for line in r.read().decode().splitlines():
            if line.startswith(name + "{") and all(f'{k}="{v}"' in line for k, v in labels):
                return float(line.split()[-1])
    return 0.0


def stop(job, endpoint, how="mooncake serve stop"):
    """Stops the job with `mooncake serve stop` or (how = "SIGTERM") a TERM to the launcher."""
    if how == "SIGTERM":
        job.send_signal(signal.SIGTERM)
    else:
        stopper = subprocess.run([MOONCAKE, "serve", "stop", endpoint], capture_output=True,
                                 text=True, timeout=200)
        if stopper.returncode != 0:
            fail(f"mooncake serve stop exited {stopper.returncode}: {stopper.stderr.strip()}")
    try:
        rc = job.wait(timeout=120)
    except subprocess.TimeoutExpired:
        fail(f"the job did not end within 120 s of {how}")
    if rc != 0:
        fail(f"the job exited {rc} after {how}")
    summary = os.path.join(RUN, "summary.json")
    if not os.path.exists(summary):
        fail("no summary.json in the run folder")
    return json.load(open(summary))


def prompt(seed, length):
    return [(seed * 131 + j * 7 + j * j) % VOCAB for j in range(length)]


def completions():
    job, url, endpoint = start_job(["--slo.ttft", "1s"])
    cases = [(prompt(1, 5), 8), (prompt(2, 700), 12), (prompt(3, 1300), 6)]
    sent = 0
    for p, n in cases:
        want = generate(p, n)
        status, _, text = post(url, {"prompt": p, "max_tokens": n, "ignore_eos": True,
                                     "temperature": 0})
        sent += 1
        if status != 200:
            fail(f"urllib: {status} {text}")
        if tokens_of(text) != want:
            fail(f"urllib, {len(p)}-token prompt: {tokens_of(text)} != generate's {want}")
        usage = json.loads(text)["usage"]
        if usage["prompt_tokens"] != len(p) or usage["completion_tokens"] != n:
            fail(f"usage {usage}")
        status, _, text = post(url, {"prompt": p, "max_tokens": n, "ignore_eos": True,
                                     "stream": True})
        sent += 1
        if status != 200 or stream_tokens(text) != want:
            fail(f"streamed, {len(p)}-token prompt: {status} {text[:300]}")
        body = json.dumps({"prompt": p, "max_tokens": n, "ignore_eos": True})
        out = subprocess.run(["curl", "-sS", "-H", "Content-Type: application/json", "-d", body,
                              url + "/v1/completions"], capture_output=True, text=True,
                             timeout=300)
        sent += 1
        if out.returncode != 0 or tokens_of(out.stdout) != want:
            fail(f"curl, {len(p)}-token prompt: {out.stdout[:300]} {out.stderr}")
    print(f"ok: {len(cases)} prompts (5, 700, 1300 tokens) x urllib, streaming, curl equal "
          "mooncake generate's tokens")
    hit = metric(url, "mooncake_prefix_blocks_hit_total", [])
    with urllib.request.urlopen(url + "/metrics", timeout=10) as r:
        hit = [l for l in r.read().decode().splitlines()
               if l.startswith("mooncake_prefix_blocks_hit_total ")]
    if not hit or float(hit[0].split()[-1]) <= 0:
        fail(f"repeated prompts reused no prefix block: {hit}")

    # The burst: long prompts at once under a 1 s TTFT SLO; the scheduler turns some away.
    burst = [prompt(100 + i, 4000) for i in range(16)]
    # /metrics sampled meanwhile: the prefill instance's queue and predicted drain time, which
    # early rejection acts on, must show the burst while it runs.
    seen = {"requests": 0.0, "seconds": 0.0}
    during = threading.Event()

    def sample():
        while not during.is_set():
            for key, name in (("requests", "mooncake_prefill_queue_requests"),
                              ("seconds", "mooncake_prefill_queue_predicted_seconds")):
                seen[key] = max(seen[key], metric(url, name, [("instance", "0")]))
            time.sleep(0.01)

    sampler = threading.Thread(target=sample)
    sampler.start()
    with concurrent.futures.ThreadPoolExecutor(len(burst)) as pool:
        results = list(pool.map(
            lambda p: post(url, {"prompt": p, "max_tokens": 4, "ignore_eos": True}), burst))
    during.set()
    sampler.join()
    if seen["requests"] < 1 or seen["seconds"] <= 0:
        fail(f"/metrics never showed the burst in prefill instance 0's queue: {seen}")
    print(f"ok: /metrics showed prefill instance 0's queue at up to {seen['requests']:.0f} "
          f"requests, {seen['seconds']:.3f} s predicted")
    sent += len(burst)
    codes = [r[0] for r in results]
    if codes.count(429) == 0 or codes.count(200) == 0 or set(codes) - {200, 429}:
        fail(f"burst: status codes {codes} (want some 200 and some 429, nothing else)")
    for status, headers, text in results:
        if status == 429 and headers.get("Retry-After") is None:
            fail("a 429 without Retry-After")
    admitted = [(p, r) for p, r in zip(burst, results) if r[0] == 200]
    for p, (_, _, text) in admitted[:2]:
        if tokens_of(text) != generate(p, 4):
            fail("an admitted burst request's tokens differ from mooncake generate's")
    print(f"ok: burst of {len(burst)}: {codes.count(200)} completed, {codes.count(429)} x 429 "
          "with Retry-After")

    summary = stop(job, endpoint)
    total = summary.get("requests", {})
    print(f"ok: mooncake serve stop: job exit 0, summary.json {json.dumps(total)}")
    if total.get("total") != sent or total.get("completed", 0) + total.get("rejected", 0) != sent:
        fail(f"summary.json counts {total}, {sent} requests were sent")
    for f in ("requests.csv", "tokens.jsonl", "run.json"):
        if not os.path.exists(os.path.join(RUN, f)):
            fail(f"the run folder has no {f}")


def timed_stream(url, body, leave_after=None):
    """POSTs a streamed completion over a raw socket and reads it as it comes: (the arrival time
    of each token event, relative to the send; the tokens; the number of socket reads that
    carried token events; the time of the end). leave_after=k: close after k token events."""
    host, port = url[len("http://"):].rsplit(":", 1)
    conn = http.client.HTTPConnection(host, int(port), timeout=300)
    sent = time.monotonic()
    conn.request("POST", "/v1/completions", json.dumps(body),
                 {"Content-Type": "application/json"})
    resp = conn.getresponse()
    if resp.status != 200:
        fail(f"stream: status {resp.status} {resp.read()[:200]!r}")
    times, ids, reads, text = [], [], 0, ""
    while True:
        piece = resp.read1(65536).decode()
        now = time.monotonic() - sent
        if not piece:
            break
        text += piece
        got = 0
        while "\n\n" in text:
            event, text = text.split("\n\n", 1)
            if not event.startswith("data: ") or event == "data: [DONE]":
                continue
            choice = json.loads(event[len("data: "):])["choices"][0]
            if choice["finish_reason"] is None:
                ids += choice["token_ids"]
                times.append(now)
                got += 1
        reads += 1 if got else 0
        if leave_after is not None and len(ids) >= leave_after:
            conn.close()
            return times, ids, reads, now
    conn.close()
    return times, ids, reads, time.monotonic() - sent


def stream():
    # The mini preset, 1000 tokens: the decode takes about a second here (tiny's steps take a
    # fraction of a millisecond), so the events' spread is far above any scheduling jitter.
    job, url, endpoint = start_job([], max_output=1024, model="mini")
    p, n = prompt(11, 5), 1000
    body = {"prompt": p, "max_tokens": n, "ignore_eos": True}
    post(url, {"prompt": prompt(12, 5), "max_tokens": 2})  # the first compute warms up
    sent = time.monotonic()
    status, _, text = post(url, body)
    plain = time.monotonic() - sent
    if status != 200 or len(tokens_of(text)) != n:
        fail(f"the non-streamed request: {status} {text[:200]}")
    # Greedy decoding: the stream must give the non-streamed answer's tokens (the completions
    # mode checks those against mooncake generate's; generating 1000 here would take long).
    want = tokens_of(text)
    times, ids, reads, total = timed_stream(url, dict(body, stream=True))
    if ids != want:
        fail(f"streamed tokens {ids[:10]}... differ from the non-streamed {want[:10]}...")
    spread = times[-1] - times[0]
    print(f"stream of {n} tokens: first event at {times[0]:.3f} s, last at {times[-1]:.3f} s, "
          f"end {total:.3f} s, {reads} reads carried token events; the same request "
          f"non-streamed took {plain:.3f} s")
    # Load slows decode steps and the whole request alike: compare shares, not speeds.
    if spread < 0.3 * total:
        fail(f"the token events came together: {spread:.3f} s between the first and the last "
             f"of a {total:.3f} s request (want at least 30 %)")
    if times[0] > 0.5 * plain:
        fail(f"the first token event came at {times[0]:.3f} s, the non-streamed answer at "
             f"{plain:.3f} s (want under half)")
    if reads < 3:
        fail(f"the token events came in {reads} reads")
    print("ok: token events arrive as generated")
    # A client that leaves after its first event, beside four whole streams.
    prompts = [prompt(20 + i, 40 + 300 * i) for i in range(4)]
    with concurrent.futures.ThreadPoolExecutor(5) as pool:
        leaver = pool.submit(timed_stream, url, dict(body, stream=True), 1)
        runs = list(pool.map(lambda q: timed_stream(
            url, {"prompt": q, "max_tokens": 64, "ignore_eos": True, "stream": True}), prompts))
        leaver.result(timeout=300)
    for q, (_, got, _, _) in zip(prompts, runs):
        if got != generate(q, 64, "mini"):
            fail(f"a concurrent stream ({len(q)}-token prompt) differs from generate's tokens")
    print("ok: four concurrent streams beside a client that left after one event equal "
          "generate's tokens")
    summary = stop(job, endpoint)
    if summary["requests"].get("completed") != 8:
        fail(f"summary.json: {summary['requests']} (8 completed expected)")
    print(f"ok: mooncake serve stop: summary.json {json.dumps(summary['requests'])}")


def open_idle(url, keep_alive, silent):
    """Connections to the endpoint: `keep_alive` after one GET /health each, `silent` that send
    nothing. Returns their sockets."""
    host, port = url[len("http://"):].rsplit(":", 1)
    socks = []
    for _ in range(keep_alive):
        s = socket.create_connection((host, int(port)), timeout=30)
        s.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
        got = b""
        while not got.endswith(b"ok\n"):
            piece = s.recv(4096)
            if not piece:
                fail("a keep-alive connection was closed after GET /health")
            got += piece
        socks.append(s)
    pending = []
    for _ in range(silent):
        s = socket.socket()
        s.setblocking(False)
        s.connect_ex((host, int(port)))
        pending.append(s)
    poller = select.poll()
    by_fd = {s.fileno(): s for s in pending}
    for fd in by_fd:
        poller.register(fd, select.POLLOUT)
    deadline = time.time() + 60
    while by_fd and time.time() < deadline:
        for fd, _ in poller.poll(500):
            s = by_fd.pop(fd)
            poller.unregister(fd)
            if s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR) != 0:
                fail("an idle connection was refused")
            socks.append(s)
    if by_fd:
        fail(f"{len(by_fd)} idle connections not made within 60 s")
    return socks


def still_open(s):
    s.setblocking(False)
    try:
        return s.recv(1, socket.MSG_PEEK) != b""
    except BlockingIOError:
        return True
    except OSError:
        return False


def idle():
    # Idle connections are closed after serve.http_idle: 60 s, so that a loaded machine's slow
    # setup of 2000 connections does not see them closed before the request is sent.
    job, url, endpoint = start_job(["--serve.http_idle", "60s"])
    p = prompt(5, 40)
    want = generate(p, 8)
    socks = open_idle(url, 100, 1900)
    print(f"ok: {len(socks)} idle connections open")
    sent = time.monotonic()
    try:
        status, _, text = post(url, {"prompt": p, "max_tokens": 8, "ignore_eos": True},
                               timeout=60)
    except OSError as e:
        fail(f"no answer within 60 s beside {len(socks)} idle connections ({e})")
    took = time.monotonic() - sent
    if status != 200 or tokens_of(text) != want:
        fail(f"the completion beside the idle connections: {status} {text[:200]}")
    still = sum(1 for s in socks if still_open(s))
    print(f"ok: a completion answered in {took:.2f} s with generate's tokens; {still} of "
          f"{len(socks)} idle connections still open then")
    # The server closes an idle connection at serve.http_idle: answered behind them, the
    # request would find at most the last few handler threads' worth still open.
    if still < 0.9 * len(socks):
        fail(f"only {still} of {len(socks)} idle connections were still open when the "
             "completion was answered: it waited for them")
    for s in socks:
        s.close()
    summary = stop(job, endpoint)
    if summary["requests"].get("completed") != 1:
        fail(f"summary.json: {summary['requests']} (1 completed expected)")
    print(f"ok: mooncake serve stop: summary.json {json.dumps(summary['requests'])}")


def bad_input():
    job, url, endpoint = start_job([])
    good = prompt(7, 600)
    want = generate(good, 10)
    pool = concurrent.futures.ThreadPoolExecutor(1)
    pending = pool.submit(post, url, {"prompt": good, "max_tokens": 10, "ignore_eos": True})
    cases = [
        ("malformed JSON", None, b'{"prompt": [1, 2'),
        ("not an object", None, b"[1, 2, 3]"),
        ("prompt missing", {"max_tokens": 4}, None),
        ("prompt a number", {"prompt": 5}, None),
        ("prompt text", {"prompt": "hello"}, None),
        ("prompt empty", {"prompt": []}, None),
        ("token id a float", {"prompt": [1, 2.5]}, None),
        ("token id outside the vocabulary", {"prompt": [1, VOCAB]}, None),
        ("token id negative", {"prompt": [1, -3]}, None),
        ("max_tokens 0", {"prompt": [1, 2], "max_tokens": 0}, None),
        ("max_tokens negative", {"prompt": [1, 2], "max_tokens": -5}, None),
        ("max_tokens huge", {"prompt": [1, 2], "max_tokens": 10**12}, None),
        ("max_tokens a string", {"prompt": [1, 2], "max_tokens": "4"}, None),
        ("prompt longer than allowed", {"prompt": [1] * 8193}, None),
        ("temperature 0.7", {"prompt": [1, 2], "temperature": 0.7}, None),
        ("n 2", {"prompt": [1, 2], "n": 2}, None),
        ("stream a string", {"prompt": [1, 2], "stream": "yes"}, None),
    ]
    for what, body, raw in cases:
        status, _, text = post(url, body, raw=raw, timeout=30)
        if status != 400:
            fail(f"{what}: {status} {text[:200]} (want 400)")
        message = json.loads(text)["error"]["message"]
        print(f"ok: {what}: 400 {message}")
    status, _, text = post(url, {"prompt": [1, 2], "model": "no-such-model"}, timeout=30)
    if status != 404:
        fail(f"unknown model: {status} (want 404)")
    # A client that asks for a stream and goes away before the answer.
    host, port = url[len("http://"):].rsplit(":", 1)
    body = json.dumps({"prompt": prompt(9, 900), "max_tokens": 8, "stream": True}).encode()
    with socket.create_connection((host, int(port)), timeout=10) as s:
        s.sendall(b"POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json"
                  b"\r\nContent-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body)
    status, _, text = pending.result(timeout=300)
    if status != 200 or tokens_of(text) != want:
        fail(f"the good request beside the bad ones: {status} {text[:200]}")
    status, _, text = post(url, {"prompt": good, "max_tokens": 10, "ignore_eos": True})
    if status != 200 or tokens_of(text) != want:
        fail(f"a good request after the disconnect: {status} {text[:200]}")
    print("ok: good requests before and after the bad ones and the disconnect got generate's "
          "tokens")
    counted = metric(url, "mooncake_http_responses_total",
                     [("path", "/v1/completions"), ("code", "400")])
    if counted != len(cases):
        fail(f"/metrics counts {counted} responses 400, {len(cases)} were sent")
    print(f"ok: /metrics counts {int(counted)} responses 400")
    summary = stop(job, endpoint, how="SIGTERM")
    if summary["requests"].get("lost", 0) != 0 or summary["requests"].get("completed") != 3:
        fail(f"summary.json after SIGTERM: {summary['requests']} (3 completed expected)")
    print(f"ok: SIGTERM to the launcher: exit 0, summary.json {json.dumps(summary['requests'])}")


try:
    {"completions": completions, "stream": stream, "idle": idle,
     "bad_input": bad_input}[MODE]()
    print(f"PASS ({MODE})")
finally:
    # A job left behind by a failure: its launcher's process group.
    for job in JOBS:
        if job.poll() is None:
            try:
                os.killpg(job.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
    shutil.rmtree(DIR, ignore_errors=True)
