#!/usr/bin/python3
"""Plots for a `mooncake eval` run folder (needs /usr/bin/python3 with matplotlib).

usage: plot_run.py RUN_DIR

Single run (requests.csv): ttft_tbt_cdf.png.
Sweep (sweep.csv): capacity_vs_tbt.png (effective request capacity against the TBT threshold,
one line per system; paper Fig. 1), ttft_by_policy.png (mean TTFT per prefill policy; Fig. 5),
hit_rate_vs_capacity.png (prefix hit rate against cache capacity; Fig. 9 style) and
ttft_tbt_cdf.png over the points; each only when the sweep varies what it plots.
"""
import csv
import os
import sys
from collections import OrderedDict, defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def read_csv(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def cdf(ax, values, label):
    values = sorted(values)
    if not values:
        return
    n = len(values)
    ax.plot(values, [(i + 1) / n for i in range(n)], label=label)


def plot_cdfs(runs, out_png):
    """runs: list of (label, requests.csv rows)."""
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(11, 4))
    for label, rows in runs:
        done = [r for r in rows if r["outcome"] == "completed"]
        cdf(a1, [float(r["ttft_s"]) for r in done], label)
        cdf(a2, [float(r["tbt_s"]) * 1e3 for r in done], label)
    a1.set_xlabel("TTFT (s)")
    a2.set_xlabel("TBT (ms, mean of the longest 10 % gaps)")
    for a in (a1, a2):
        a.set_ylabel("share of completed requests")
        a.set_xscale("log")
        a.grid(True, alpha=0.3)
    if len(runs) > 1:
        a2.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(out_png, dpi=120)
    plt.close(fig)
    return out_png


def distinct(rows, key):
    return list(OrderedDict.fromkeys(r[key] for r in rows))


def plot_sweep(run_dir, rows):
    made = []
    # Fig. 1: capacity against TBT threshold, per system.
    if len(distinct(rows, "tbt_slo_s")) > 1:
        fig, ax = plt.subplots(figsize=(6, 4))
        by_sys = defaultdict(list)
        for r in rows:
            by_sys[r["system"]].append((float(r["tbt_slo_s"]) * 1e3, float(r["capacity_at_slo"]) * 100))
        for system, pts in by_sys.items():
            pts.sort()
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=system)
        ax.set_xlabel("TBT threshold (ms)")
        ax.set_ylabel("effective request capacity (%)")
        ax.set_ylim(0, 105)
        ax.grid(True, alpha=0.3)
        ax.legend()
        fig.tight_layout()
        made.append(os.path.join(run_dir, "capacity_vs_tbt.png"))
        fig.savefig(made[-1], dpi=120)
        plt.close(fig)
    # Fig. 5: mean TTFT per prefill policy.
    policies = distinct(rows, "policy")
    if len(policies) > 1 and len(distinct(rows, "system")) == 1:
        fig, ax = plt.subplots(figsize=(6, 4))
        means = [sum(float(r["ttft_mean_s"]) for r in rows if r["policy"] == p) /
                 max(1, sum(1 for r in rows if r["policy"] == p)) for p in policies]
        bars = ax.bar(policies, means)
        for b, m in zip(bars, means):
            ax.annotate(f"{m:.2f}", (b.get_x() + b.get_width() / 2, m), ha="center", va="bottom")
        ax.set_ylabel("mean TTFT (s)")
        ax.grid(True, axis="y", alpha=0.3)
        fig.tight_layout()
        made.append(os.path.join(run_dir, "ttft_by_policy.png"))
        fig.savefig(made[-1], dpi=120)
        plt.close(fig)
    # Fig. 9 style: hit rate against capacity.
    if len(distinct(rows, "capacity_blocks")) > 1:
        fig, ax = plt.subplots(figsize=(6, 4))
        groups = defaultdict(list)
        for r in rows:
            groups[(r["system"], r["policy"])].append(
                (int(r["capacity_blocks"]), float(r["hit_rate_blocks"]) * 100))
        for (system, policy), pts in groups.items():
            pts.sort()
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=f"{system} {policy}")
        ax.set_xscale("log")
        ax.set_xlabel("cache capacity (512-token blocks)")
        ax.set_ylabel("prefix hit rate (% of blocks)")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8)
        fig.tight_layout()
        made.append(os.path.join(run_dir, "hit_rate_vs_capacity.png"))
        fig.savefig(made[-1], dpi=120)
        plt.close(fig)
    # CDFs over the points (at most 12 curves stay readable).
    runs = []
    for r in rows[:12]:
        path = os.path.join(run_dir, "points", "%03d" % int(r["point"]), "requests.csv")
        if os.path.exists(path):
            label = " ".join(f"{k}={r[k]}" for k in list(r.keys())[1:r_axes(rows)]) or r["system"]
            runs.append((label, read_csv(path)))
    if runs:
        made.append(plot_cdfs(runs, os.path.join(run_dir, "ttft_tbt_cdf.png")))
    return made


def r_axes(rows):
    """Index one past the last sweep-axis column (axes sit between 'point' and 'system')."""
    return list(rows[0].keys()).index("system")


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    run_dir = sys.argv[1]
    made = []
    sweep = os.path.join(run_dir, "sweep.csv")
    single = os.path.join(run_dir, "requests.csv")
    if os.path.exists(sweep):
        rows = read_csv(sweep)
        if rows:
            made = plot_sweep(run_dir, rows)
    elif os.path.exists(single):
        made = [plot_cdfs([("run", read_csv(single))], os.path.join(run_dir, "ttft_tbt_cdf.png"))]
    else:
        print(f"plot_run.py: no requests.csv or sweep.csv in {run_dir}", file=sys.stderr)
        return 1
    for m in made:
        print(f"plots: {m}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
