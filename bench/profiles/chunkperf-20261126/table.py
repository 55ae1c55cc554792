#!/usr/bin/env python3
"""Per JVM of a rows.sh log: p50/p99 (ms) of every point, the chunk rows against their
perftest sum (ib_send_lat 64 B + ib_read_lat + ib_write_lat / 2, as ChunkGoals sums a shape's
parts: long / DDP WRITE = send + read, echo = send + read + write/2, DDP READ = send + write/2),
and the per-call counts. Usage: table.py LOG"""
import re, sys

runs = []  # (name, uptime, {op@size: (p50, p99)}, {shape@size: counters})
for line in open(sys.argv[1], errors="replace"):
    m = re.match(r"=== (\S+) \(pass (\d+)\):\s+(.*)", line)
    if m:
        runs.append((f"{len(runs) + 1}:{m[1]}", m[3].split("load average:")[-1].strip(), {}, {}))
        continue
    if not runs:
        continue
    m = re.search(r"\]\s+(\S+) \S+\s+(\d+) B\s+min\s+\S+\s+p50\s+(\S+)\s+p99\s+(\S+)", line)
    if m:
        runs[-1][2][f"{m[1]}@{m[2]}"] = (float(m[3]) / 1e3, float(m[4]) / 1e3)
        continue
    m = re.search(r"\[bench\] (chunk-\S+) \S+ (\d+) B: per call (.*)", line)
    if m:
        c = m[3]
        g = lambda pat: (re.search(pat, c) or [None, "?"])[1]
        runs[-1][3][f"{m[1]}@{m[2]}"] = dict(
            binds=g(r"([\d.]+) binds"), linv=g(r"([\d.]+) LOCAL_INV"), rinv=g(r"([\d.]+) remote inv"),
            tasklets=g(r"([\d.]+) tasklets"), percpu=g(r"tasklets \(per CPU ([^)]*)\)"),
            kwait=g(r"\+ ([\d.]+) us waiting"), vol=g(r"ours: ([\d.]+) voluntary"),
            invol=g(r"\+ ([\d.]+) involuntary"), busiest=g(r"busiest: (.*)$"))

def perftest(p, size, shape):
    s = p.get("ib_send_lat@64"); r = p.get(f"ib_read_lat@{size}"); w = p.get(f"ib_write_lat@{size}")
    if not s or not r or not w:
        return None
    # ib_send_lat and ib_write_lat print half a round trip: the bench doubles them already
    parts = {"chunk-long": [s, r], "chunk-ddp-write": [s, r], "chunk-echo": [s, r, (w[0] / 2, w[1] / 2)],
             "chunk-ddp-read": [s, (w[0] / 2, w[1] / 2)]}[shape]
    return (sum(x[0] for x in parts), sum(x[1] for x in parts))

shapes = ["chunk-long", "chunk-echo", "chunk-ddp-write", "chunk-ddp-read"]
print("p50 / p99 in ms; ratio = ours / perftest sum of the same JVM (goal p50 <= 2x, p99 <= 5x)")
print(f"{'row':24}" + "".join(f"{r[0]:>34}" for r in runs))
print(f"{'guest load at start':24}" + "".join(f"{r[1]:>34}" for r in runs))
for key in ["ib_send_lat@64", "ib_read_lat@4096", "ib_write_lat@4096", "ib_read_lat@65536", "ib_write_lat@65536"]:
    print(f"{key:24}" + "".join(f"{'%.2f / %.1f' % r[2][key] if key in r[2] else '-':>34}" for r in runs))
for size in (4096, 65536):
    for sh in shapes:
        key = f"{sh}@{size}"
        cells = []
        for r in runs:
            o = r[2].get(key); ps = perftest(r[2], size, sh)
            if not o:
                cells.append("-"); continue
            rat = f" ({o[0] / ps[0]:.1f}x/{o[1] / ps[1]:.1f}x)" if ps else ""
            cells.append(f"{o[0]:.2f} / {o[1]:.1f}{rat}")
        print(f"{key:24}" + "".join(f"{c:>34}" for c in cells))
print("\nper call: binds, LOCAL_INV, remote inv, tasklets (per CPU), ksoftirqd wait us, our switches vol+invol")
for size in (4096, 65536):
    for sh in shapes:
        key = f"{sh}@{size}"
        cells = []
        for r in runs:
            c = r[3].get(key)
            cells.append("-" if not c else f"{c['binds']} {c['linv']} {c['rinv']} {c['tasklets']}({c['percpu']}) "
                         f"{float(c['kwait']):.0f} {c['vol']}+{c['invol']}")
        print(f"{key:24}" + "".join(f"{c:>46}" for c in cells))
print("\nbusiest threads per shape (share of the point's wall time, CPU last on):")
for r in runs:
    for key, c in r[3].items():
        print(f"  {r[0]:10} {key:22} {c['busiest']}")
