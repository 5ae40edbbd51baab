"""A real Prometheus scrapes the store service's /metrics (docs/CLIENT.md, "Metrics").

A store job (launch/mooncake-mpirun, 1 master + 2 store ranks, --store.metrics_port 0) takes 40
puts and 5 removes from this process; Debian's prometheus (started here on 127.0.0.1 with a
1 s scrape interval, its data in a temporary folder, stopped by PID) scrapes the address the job
wrote to <run folder>/metrics.json. Asserts, through Prometheus's HTTP query API: the target is
up after at least two scrapes, mooncake_store_objects is 35, each store rank's used DRAM is
reported and is above 0; then the job is stopped and summary.json's objects equal what
Prometheus read. A CTest skip (exit 77) when /usr/bin/prometheus is missing.

With `serve` as third argument the serving job instead (4 ranks, the synthetic workload of 120
requests, --serve.http 0 with a 10 s linger after the summary): Prometheus scrapes the
conductor's /metrics while it replays, and the last mooncake_requests_total{outcome="completed"}
it stored equals summary.json's completed count.

Usage: prometheus_scrape.py SOURCE_DIR MOONCAKE [store|serve]   (PYTHONPATH: mooncake_store)
"""
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import urllib.parse
import urllib.request
from pathlib import Path

import jobs
import mooncake_store
from jobs import fail, wait_for

SRC, MOONCAKE = Path(sys.argv[1]), sys.argv[2]
MODE = sys.argv[3] if len(sys.argv) > 3 else "store"
PROMETHEUS = "/usr/bin/prometheus"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def query(port, expr):
    """The instant vector of `expr` as {labels-json: value}, or None when Prometheus cannot say."""
    url = f"http://127.0.0.1:{port}/api/v1/query?" + urllib.parse.urlencode({"query": expr})
    try:
        with urllib.request.urlopen(url, timeout=5) as r:
            body = json.load(r)
    except OSError:
        return None
    if body.get("status") != "success":
        return None
    return {json.dumps(s["metric"], sort_keys=True): float(s["value"][1])
            for s in body["data"]["result"]}


def start_prometheus(work, target, log_path):
    """Prometheus on a free 127.0.0.1 port scraping `target` every second: (process, port)."""
    port = free_port()
    (work / "prometheus.yml").write_text(
        "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n"
        "scrape_configs:\n  - job_name: mooncake\n    static_configs:\n"
        f"      - targets: ['{target}']\n")
    with open(log_path, "w") as log:
        process = subprocess.Popen(
            [PROMETHEUS, f"--config.file={work / 'prometheus.yml'}",
             f"--storage.tsdb.path={work / 'tsdb'}", f"--web.listen-address=127.0.0.1:{port}"],
            stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    return process, port


def serve_mode(work, env):
    """The serving job scraped while it replays; its last completed count against summary.json."""
    run, job_log, prom_log = work / "run", work / "job.log", work / "prometheus.log"
    # The job takes a free port itself (a port chosen here could be taken by another test's job
    # before it binds it: seen once in CI), and Prometheus starts on the address endpoint.json
    # gives; the 10 s linger leaves it time to scrape the final numbers.
    prometheus = job = None
    try:
        job = jobs.launch(SRC, MOONCAKE, ["--np", "4"],
                          ["--synthetic.requests", "120", "--serve.http", "0",
                           "--serve.http_linger", "10s", "--job.plots", "off", "--out", str(run),
                           # it checks scraping, not failure detection (docs/RELIABILITY.md)
                           "--cluster.failure_timeout", "10s", "--job.rpc_timeout", "10s"],
                          job_log, env)
        wait_for("the job's endpoint.json", lambda: (run / "endpoint.json").exists(), 90, job_log)
        http_port = json.loads((run / "endpoint.json").read_text())["port"]
        prometheus, prom_port = start_prometheus(work, f"127.0.0.1:{http_port}", prom_log)
        if job.wait(timeout=180) != 0:
            fail(f"the serving job exited {job.returncode}", job_log, prom_log)
        summary = json.loads((run / "summary.json").read_text())
        completed = summary["requests"]["completed"]
        seen = wait_for("Prometheus to answer",
                        lambda: query(prom_port, 'max_over_time(mooncake_requests_total'
                                      '{outcome="completed"}[5m])'), 30, prom_log)
        scrapes = (query(prom_port, "sum_over_time(up[5m])") or {})
        last = list(seen.values())[0] if seen else None
        if last != completed:
            fail(f"Prometheus's last completed count {last} != summary.json's {completed}",
                 prom_log)
        print(f"prometheus_scrape serve OK: {sum(scrapes.values()):.0f} successful scrapes, "
              f"completed {completed:.0f} in Prometheus and summary.json")
        return 0
    finally:
        jobs.kill(run, prometheus, job)


def main():
    if not os.access(PROMETHEUS, os.X_OK):
        print(f"SKIP: {PROMETHEUS} is not installed (Debian package prometheus)")
        return 77
    work = Path(tempfile.mkdtemp(prefix="mooncake-prometheus."))
    run, job_log, prom_log = work / "run", work / "job.log", work / "prometheus.log"
    env = jobs.mpirun_env()
    if MODE == "serve":  # before the store job starts: serve mode runs no store job
        try:
            return serve_mode(work, env)
        finally:
            shutil.rmtree(work, ignore_errors=True)
    job = jobs.launch(SRC, MOONCAKE, ["--np", "3"],
                      ["--job.mode", "store", "--store.dram", "64MiB", "--store.listen",
                       "127.0.0.1", "--store.metrics_port", "0", "--out", str(run)], job_log, env)
    prometheus = None
    try:
        wait_for("the job's connect.json and metrics.json",
                 lambda: (run / "connect.json").exists() and (run / "metrics.json").exists(), 90,
                 job_log)
        metrics = json.loads((run / "metrics.json").read_text())
        store = mooncake_store.MooncakeDistributedStore()
        if store.setup(str(run / "connect.json")) != 0:
            fail(f"setup: {store.last_error()}", job_log)
        for i in range(40):
            if store.put(f"prom/{i}", bytes([i]) * 65536) != 0:
                fail(f"put {i}: {store.last_error()}", job_log)
        for i in range(5):
            if store.remove(f"prom/{i}") != 0:
                fail(f"remove {i}: {store.last_error()}", job_log)
        store.close()

        prometheus, prom_port = start_prometheus(work, f"127.0.0.1:{metrics['port']}", prom_log)
        target = json.dumps({"instance": f"127.0.0.1:{metrics['port']}", "job": "mooncake"},
                            sort_keys=True)

        def successful_scrapes():
            n = (query(prom_port, "sum_over_time(up[1m])") or {}).get(target, 0)
            return n if n >= 2 else 0

        scrapes = wait_for("two successful scrapes", successful_scrapes, 60, prom_log, job_log)
        objects = wait_for("mooncake_store_objects in Prometheus",
                           lambda: query(prom_port, "mooncake_store_objects"), 30, prom_log)
        seen = list(objects.values())[0]
        if seen != 35:
            fail(f"Prometheus read mooncake_store_objects = {seen}, want 35", job_log)
        used = query(prom_port, "mooncake_store_dram_used_bytes") or {}
        if len(used) != 2 or min(used.values()) <= 0:
            fail(f"mooncake_store_dram_used_bytes per store rank: {used}", job_log)

        stop = subprocess.run([MOONCAKE, "store", "stop", str(run / "connect.json")],
                              capture_output=True, text=True, timeout=60)
        if stop.returncode != 0:
            fail(f"mooncake store stop: {stop.stdout}{stop.stderr}", job_log)
        if job.wait(timeout=90) != 0:
            fail(f"the store job exited {job.returncode}", job_log)
        summary = json.loads((run / "summary.json").read_text())
        if summary["objects"] != seen:
            fail(f"summary.json objects {summary['objects']} != Prometheus's {seen}")
        print(f"prometheus_scrape OK: {scrapes:.0f} successful scrapes, objects 35 in Prometheus and "
              f"summary.json, used DRAM per rank {sorted(used.values())}")
        return 0
    finally:
        jobs.kill(run, prometheus, job)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
