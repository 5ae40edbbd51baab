#!/usr/bin/python3
"""Trace replay over HTTP (issue 32, item 3): sends a slice of a Mooncake trace to a serving job's
POST /v1/completions at the trace's arrival times (open loop, streaming), and reports TTFT, TBT
and latency as the client sees them beside what the job recorded for the same requests
(requests.csv, summary.json), and the 429s.

By default it starts the job itself (launch/mooncake-mpirun, 4 ranks, the reference engine, HTTP
only), replays, stops it with `mooncake serve stop` and reads its run folder; with --endpoint it
sends to a running job instead (its run folder is the endpoint file's folder; the job keeps
running). Prompts are the trace's tokens from hash ids (docs/MODEL.md, as `mooncake generate
--trace` makes them), clipped to --max_prompt tokens, outputs to --max_tokens (ignore_eos, so each
answer has exactly that many tokens). Client TTFT: the request sent to its first token event;
client TBT: as the job's, the mean of the longest 10 % of gaps between token events (the decode
rank reports streamed tokens at most every 5 ms, so shorter steps arrive in groups: a client's
TBT is never below that). The job's TTFT starts when the conductor takes the request, so
ttft_client_vs_job = client TTFT p50 / job TTFT p50 of the same requests is what the HTTP front
end adds. --inside also replays the slice inside a second job (--trace) and prints it beside.

Writes <out>/http_replay.json (everything printed) and <out>/client_requests.csv. Last line:
  http_replay requests=<n> ttft_client_vs_job=<r> errors=<e>
(the line before it counts the 429s)
Exit 0; 1 when a request failed otherwise than 429 or the job did; 2 for a usage error.
Runs from the repository root with no arguments (about a minute).
"""
import argparse
import csv
import http.client
import json
import math
import os
import shlex
import signal
import subprocess
import sys
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
VOCAB = {"tiny": 512, "mini": 2048, "small": 8192}  # the presets' (src/model/config.cc)
BLOCK_TOKENS = 512
MASK = (1 << 64) - 1


def splitmix64(state):
    z = (state + 0x9E3779B97F4A7C15) & MASK
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    return z ^ (z >> 31)


def prompt_tokens(hash_ids, input_length, vocab):
    """src/model/trace_tokens.h's PromptTokens: each block's tokens from its hash id."""
    tokens = []
    for b, h in enumerate(hash_ids):
        length = min(BLOCK_TOKENS, input_length - b * BLOCK_TOKENS)
        base = splitmix64(h) ^ ((length * 0x9E3779B97F4A7C15) & MASK)
        tokens += [splitmix64((base + j) & MASK) % vocab for j in range(length)]
    return tokens


def load_slice(path, offset, count, max_prompt, max_tokens):
    """The slice's requests, clipped: at most max_prompt prompt tokens (its first blocks) and
    max_tokens output tokens."""
    out, valid = [], 0
    try:
        f = open(path)
    except OSError as e:
        usage_error(f"cannot read the trace {path}: {e.strerror}")
    with f:
        for n, line in enumerate(f, 1):
            try:
                j = json.loads(line)
                ts, inp, outp, ids = (int(j["timestamp"]), int(j["input_length"]),
                                      int(j["output_length"]), list(j["hash_ids"]))
            except (ValueError, KeyError, TypeError):
                continue  # as --trace.skip_invalid: a malformed line is not a request
            if inp < 1 or outp < 1 or len(ids) != math.ceil(inp / BLOCK_TOKENS):
                continue
            valid += 1
            if valid <= offset:
                continue
            inp = min(inp, max_prompt)
            out.append({"timestamp": ts, "input_length": inp, "output_length": min(outp, max_tokens),
                        "hash_ids": ids[:math.ceil(inp / BLOCK_TOKENS)]})
            if len(out) == count:
                break
    if not out:
        usage_error(f"{path}: no valid request after the first {offset}")
    t0 = out[0]["timestamp"]
    for r in out:
        r["timestamp"] -= t0
    return out


def usage_error(message):
    print(f"http_replay: {message}", file=sys.stderr)
    sys.exit(2)


class Job:
    """A serving job started through launch/mooncake-mpirun, in a session of its own (stopped by
    its process group whatever ends the script)."""

    def __init__(self, args, run_dir, extra):
        self.run_dir = run_dir
        self.log_path = run_dir + ".log"
        cmd = [os.path.join(ROOT, "launch", "mooncake-mpirun"), "--mpirun", args.mpirun,
               "--bin", args.mooncake,
               "--roles", "conductor:1 store:1 prefill:1 decode:1", "--spread", "none", "--",
               "--engine.kind", "reference", "--engine.model", args.model,
               "--engine.max_output", str(args.max_tokens), "--time_scale", "1",
               "--job.plots", "off", "--out", run_dir] + extra
        self.log = open(self.log_path, "w")
        self.proc = subprocess.Popen(cmd, stdout=self.log, stderr=subprocess.STDOUT,
                                     start_new_session=True)

    def endpoint(self, timeout=180):
        path = os.path.join(self.run_dir, "endpoint.json")
        deadline = time.time() + timeout
        while time.time() < deadline:
            if self.proc.poll() is not None:
                self.fail(f"the job exited {self.proc.returncode} before serving")
            try:
                url = json.load(open(path))["url"]
                host, port = url[len("http://"):].rsplit(":", 1)
                c = http.client.HTTPConnection(host, int(port), timeout=5)
                c.request("GET", "/health")
                if c.getresponse().status == 200:
                    return path
            except (OSError, ValueError, KeyError):
                pass
            time.sleep(0.3)
        self.fail(f"no endpoint within {timeout} s")

    def wait(self, timeout=300):
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.fail(f"the job did not end within {timeout} s")

    def fail(self, message):
        self.kill()
        print(f"http_replay: {message}; the job's log ({self.log_path}) ends:", file=sys.stderr)
        try:
            sys.stderr.write("".join(open(self.log_path).readlines()[-20:]))
        except OSError:
            pass
        sys.exit(1)

    def kill(self):
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.proc.wait()


def send(url, body, due, result):
    """One streamed completion sent at `due` (monotonic s); fills `result` (times relative to
    its send)."""
    now = time.monotonic()
    if due > now:
        time.sleep(due - now)
    host, port = url[len("http://"):].rsplit(":", 1)
    sent = time.monotonic()
    result["late"] = sent - due
    try:
        conn = http.client.HTTPConnection(host, int(port), timeout=600)
        conn.request("POST", "/v1/completions", body, {"Content-Type": "application/json"})
        resp = conn.getresponse()
        result["status"] = resp.status
        if resp.status != 200:
            result["retry_after"] = resp.getheader("Retry-After")
            result["error"] = resp.read().decode(errors="replace")[:300]
            result["end"] = time.monotonic() - sent
            return
        times, tokens, text, done = [], 0, "", False
        while True:
            piece = resp.read1(65536).decode()
            now = time.monotonic() - sent
            if not piece:
                break
            text += piece
            while "\n\n" in text:
                event, text = text.split("\n\n", 1)
                if not event.startswith("data: "):
                    continue
                data = event[len("data: "):]
                if data == "[DONE]":
                    done = True
                    continue
                j = json.loads(data)
                if "error" in j:
                    result["error"] = j["error"].get("message", "error")
                    continue
                result.setdefault("id", int(j["id"].split("-")[-1]))
                choice = j["choices"][0]
                if choice["finish_reason"] is None:
                    times += [now] * len(choice["token_ids"])
                    tokens += len(choice["token_ids"])
        conn.close()
        result.update(times=times, tokens=tokens, end=time.monotonic() - sent)
        if not done and "error" not in result:
            result["error"] = "the stream ended without [DONE]"
    except (OSError, ValueError, http.client.HTTPException) as e:
        result["error"] = f"{type(e).__name__}: {e}"
        result.setdefault("status", 0)


def replay(url, requests, time_scale, vocab):
    """Open loop: each request is sent at start + timestamp / time_scale by a thread of its own
    (started beforehand: a loaded machine would delay starting one at its time), whatever the
    others are doing. The results, and how late the latest was sent."""
    results = [{"index": i} for i in range(len(requests))]
    # Encoded beforehand: a 2048-token prompt takes the client about a millisecond to encode,
    # which is the client's time, not the endpoint's.
    bodies = [json.dumps({"prompt": prompt_tokens(r["hash_ids"], r["input_length"], vocab),
                          "max_tokens": r["output_length"], "ignore_eos": True,
                          "stream": True}).encode()
              for r in requests]
    start = time.monotonic() + 0.5 + 0.002 * len(requests)
    threads = [threading.Thread(target=send, daemon=True,
                                args=(url, body, start + r["timestamp"] / 1000.0 / time_scale,
                                      res))
               for r, body, res in zip(requests, bodies, results)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=900)
    return results, max((r.get("late", 0.0) for r in results), default=0.0)


def percentiles(values):
    """As the job's (src/trace/metrics.cc): nearest rank."""
    v = sorted(values)
    if not v:
        return {"n": 0}
    at = lambda q: v[min(len(v) - 1, max(0, math.ceil(q * len(v)) - 1))]
    return {"n": len(v), "mean": sum(v) / len(v), "p50": at(0.5), "p90": at(0.9), "p99": at(0.99),
            "max": v[-1]}


def tbt(times):
    """The job's TBT of one request: the mean of the longest ceil(10 %) of its token gaps."""
    gaps = sorted((b - a for a, b in zip(times, times[1:])), reverse=True)
    if not gaps:
        return None
    k = max(1, (len(gaps) + 9) // 10)
    return sum(gaps[:k]) / k


def job_rows(run_dir):
    rows = {}
    try:
        with open(os.path.join(run_dir, "requests.csv")) as f:
            for row in csv.DictReader(f):
                rows[int(row["id"])] = row
    except OSError:
        pass
    return rows


def line(name, p, unit=1.0, fmt="{:8.3f}"):
    if p.get("n", 0) == 0:
        return f"  {name:<22} (none)"
    cells = "".join(fmt.format(p[k] * unit) for k in ("mean", "p50", "p90", "p99", "max"))
    return f"  {name:<22}{cells}   n={p['n']}"


def stop_job(job, endpoint, mooncake):
    stopper = subprocess.run([mooncake, "serve", "stop", endpoint], capture_output=True, text=True,
                             timeout=400)
    if stopper.returncode != 0:
        job.fail(f"mooncake serve stop exited {stopper.returncode}: {stopper.stderr.strip()}")
    rc = job.wait()
    if rc != 0:
        job.fail(f"the job exited {rc}")


def run_inside(args, requests, out):
    """The same slice replayed inside a job (--trace), at the same arrival times."""
    trace = os.path.join(out, "slice.jsonl")
    with open(trace, "w") as f:
        for r in requests:
            f.write(json.dumps(r) + "\n")
    run_dir = os.path.join(out, "inside")
    job = Job(args, run_dir, ["--trace", trace, "--load.scale", str(args.time_scale)] +
              shlex.split(args.job_args))
    try:
        rc = job.wait(timeout=900)
    finally:
        job.kill()  # a timeout or an interrupt leaves no job behind
    if rc != 0:
        job.fail(f"the inside replay exited {rc}")
    return json.load(open(os.path.join(run_dir, "summary.json")))


def main():
    ap = argparse.ArgumentParser(
        description="Replay a trace slice over HTTP against a serving job (issue 32, item 3).",
        epilog="Last line: http_replay requests=<n> ttft_client_vs_job=<r> "
               "errors=<e>")
    ap.add_argument("--trace", default=os.path.join(ROOT, "..", "shared", "traces",
                                                    "conversation_trace.jsonl"),
                    help="Mooncake JSONL trace (default: ../shared/traces/conversation_trace.jsonl)")
    ap.add_argument("--requests", type=int, default=30, help="requests in the slice (default 30)")
    ap.add_argument("--offset", type=int, default=0, help="valid requests skipped first (default 0)")
    ap.add_argument("--time_scale", type=float, default=0.25,
                    help="wall time = trace time / this (default 0.25: a quarter of the trace's "
                         "rate, what one prefill rank of the tiny model keeps up with here)")
    ap.add_argument("--max_prompt", type=int, default=2048,
                    help="prompts clipped to this many tokens (default 2048; the endpoint takes "
                         "at most 8192)")
    ap.add_argument("--max_tokens", type=int, default=32,
                    help="outputs clipped to this many tokens (default 32; also the job's "
                         "engine.max_output)")
    ap.add_argument("--model", default="tiny", choices=sorted(VOCAB),
                    help="the reference model preset of the job started (default tiny)")
    ap.add_argument("--endpoint", help="a running job's endpoint.json: send to it instead of "
                                       "starting one")
    ap.add_argument("--job_args", default="",
                    help="more mooncake options for the jobs started, e.g. \"--slo.ttft 2s\" "
                         "(a tighter SLO: some requests get 429)")
    ap.add_argument("--inside", action="store_true",
                    help="also replay the slice inside a second job (--trace) and print it beside")
    ap.add_argument("--mpirun", default=os.environ.get("MPIRUN", "mpirun"),
                    help="mpirun for launch/mooncake-mpirun (default $MPIRUN, else mpirun; extra "
                         "mpirun arguments in $MOONCAKE_MPIRUN_ARGS)")
    ap.add_argument("--build", default=os.path.join(ROOT, "build"),
                    help="build folder holding mooncake (default: build)")
    ap.add_argument("--out", default=os.path.join(ROOT, "runs", "http_replay"),
                    help="where the results and the job's run folder go (default runs/http_replay)")
    args = ap.parse_args()
    # A TERM (Slurm's end, kill) unwinds like Ctrl-C, through the `finally` that stops the job:
    # the job runs in its own session and would otherwise serve on alone.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    # The client's threads share one interpreter lock, handed over every 5 ms by default: a
    # thread whose first event has arrived could wait that long behind another's parsing, and the
    # wait would count as the endpoint's. 0.5 ms keeps the client's share small.
    sys.setswitchinterval(0.0005)
    if args.requests < 1 or args.time_scale <= 0 or not 1 <= args.max_prompt <= 8192 or \
            args.max_tokens < 1:
        usage_error("--requests and --max_tokens must be >= 1, --time_scale > 0, --max_prompt "
                    "in [1, 8192]")
    args.mooncake = os.path.join(args.build, "mooncake")
    if not os.access(args.mooncake, os.X_OK):
        usage_error(f"no {args.mooncake} (build first, or give --build)")
    requests = load_slice(args.trace, args.offset, args.requests, args.max_prompt, args.max_tokens)
    os.makedirs(args.out, exist_ok=True)

    job = None
    if args.endpoint:
        endpoint = args.endpoint
        try:
            url = json.load(open(endpoint))["url"]
        except (OSError, ValueError, KeyError) as e:
            usage_error(f"{endpoint}: not an endpoint file ({e})")
    else:
        run_dir = os.path.join(args.out, "job")
        job = Job(args, run_dir, ["--serve.http", "0"] + shlex.split(args.job_args))
    try:
        if job is not None:
            endpoint = job.endpoint()
            url = json.load(open(endpoint))["url"]
        run_dir = os.path.dirname(os.path.abspath(endpoint))
        vocab = VOCAB[args.model]
        print(f"http_replay: {len(requests)} requests of {args.trace} from {args.offset}, "
              f"{requests[-1]['timestamp'] / 1000:.1f} s of trace at time scale {args.time_scale}, "
              f"to {url}", file=sys.stderr)
        t0 = time.monotonic()
        results, late = replay(url, requests, args.time_scale, vocab)
        wall = time.monotonic() - t0
        summary = None
        if job is not None:
            stop_job(job, endpoint, args.mooncake)
            summary = json.load(open(os.path.join(run_dir, "summary.json")))
    finally:
        if job is not None:
            job.kill()
    inside = run_inside(args, requests, args.out) if args.inside else None

    rows = job_rows(run_dir)
    ok = [r for r in results if r.get("status") == 200 and "error" not in r and r.get("times")]
    rejected = [r for r in results if r.get("status") == 429]
    errors = [r for r in results if r not in ok and r not in rejected]
    missing_retry = sum(1 for r in rejected if r.get("retry_after") is None)
    short = [r for r in ok if r["tokens"] != requests[r["index"]]["output_length"]]
    client = {"ttft_s": percentiles([r["times"][0] for r in ok]),
              "tbt_s": percentiles([x for x in (tbt(r["times"]) for r in ok) if x is not None]),
              "e2e_s": percentiles([r["end"] for r in ok])}
    paired = [(r, rows[r["id"]]) for r in ok if r.get("id") in rows]
    job_side = {k: percentiles([float(row[k]) for _, row in paired]) for k in
                ("ttft_s", "tbt_s", "e2e_s")}
    ratio = (client["ttft_s"]["p50"] / job_side["ttft_s"]["p50"]
             if paired and job_side["ttft_s"]["p50"] > 0 else float("nan"))
    added = [r["times"][0] - float(row["ttft_s"]) for r, row in paired]

    print(f"{len(results)} requests sent in {wall:.1f} s (the latest sent {late * 1e3:.0f} ms "
          f"after its arrival time): {len(ok)} completed, {len(rejected)} x 429, "
          f"{len(errors)} errors")
    print(f"  {'seconds':<22}{'mean':>8}{'p50':>8}{'p90':>8}{'p99':>8}{'max':>8}")
    for k, name in (("ttft_s", "TTFT"), ("tbt_s", "TBT"), ("e2e_s", "latency")):
        print(line(f"{name} client", client[k]))
        print(line(f"{name} job, same reqs", job_side[k]))
    print(line("TTFT client - job", percentiles(added)))
    if summary is not None:
        s = summary
        print(f"  job summary.json: {s['requests']['completed']} completed, "
              f"{s['requests']['rejected']} rejected; TTFT p50 {s['ttft_s']['p50']:.3f} s, "
              f"TBT p50 {s['tbt_s']['p50'] * 1e3:.1f} ms, latency p50 {s['e2e_s']['p50']:.3f} s")
    if inside is not None:
        s = inside
        print(f"  the slice inside a job (--trace): {s['requests']['completed']} completed, "
              f"{s['requests']['rejected']} rejected; TTFT p50 {s['ttft_s']['p50']:.3f} s, "
              f"TBT p50 {s['tbt_s']['p50'] * 1e3:.1f} ms, latency p50 {s['e2e_s']['p50']:.3f} s")
    if missing_retry:
        print(f"  {missing_retry} responses 429 without Retry-After")
    if short:
        print(f"  {len(short)} answers with fewer tokens than asked for")
    for r in errors[:5]:
        print(f"  error, request {r['index']}: status {r.get('status')} {r.get('error', '')}")

    with open(os.path.join(args.out, "client_requests.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["index", "job_id", "arrival_s", "input_tokens", "output_tokens", "status",
                    "ttft_s", "tbt_s", "e2e_s", "job_ttft_s", "error"])
        for req, r in zip(requests, results):
            row = rows.get(r.get("id"), {})
            times = r.get("times") or []
            w.writerow([r["index"], r.get("id", ""), req["timestamp"] / 1000.0,
                        req["input_length"], req["output_length"], r.get("status", 0),
                        times[0] if times else "", tbt(times) if len(times) > 1 else "",
                        r.get("end", ""), row.get("ttft_s", ""), r.get("error", "")])
    result = {"trace": args.trace, "offset": args.offset, "requests": len(results),
              "time_scale": args.time_scale, "max_prompt": args.max_prompt,
              "max_tokens": args.max_tokens, "completed": len(ok), "rejected_429": len(rejected),
              "errors": len(errors) + len(short) + missing_retry, "client": client,
              "job_same_requests": job_side, "ttft_client_vs_job": ratio,
              "ttft_added_s": percentiles(added), "job_summary": summary, "inside": inside}
    with open(os.path.join(args.out, "http_replay.json"), "w") as f:
        json.dump(result, f, indent=2)
    print(f"rejected with 429 and Retry-After: {len(rejected)} of {len(results)}")
    print(f"http_replay requests={len(results)} ttft_client_vs_job={ratio:.3f} "
          f"errors={result['errors']}")
    return 1 if result["errors"] else 0


if __name__ == "__main__":
    sys.exit(main())
