#!/usr/bin/env python3
"""Top frames of an async-profiler collapsed profile (threads option), per thread kind.

frames.py FILE [PATTERN...]: per thread (the first frame, names' digits folded), its samples,
its top self frames, and for each PATTERN the samples whose stack contains it."""
import collections, re, sys

path, patterns = sys.argv[1], sys.argv[2:]
threads = collections.Counter()
selfs = collections.defaultdict(collections.Counter)
hits = collections.defaultdict(collections.Counter)
for line in open(path, errors="replace"):
    stack, _, n = line.rstrip("\n").rpartition(" ")
    if not n.isdigit():
        continue
    n = int(n)
    frames = stack.split(";")
    t = re.sub(r"\d+", "N", frames[0].strip("[]").split(" tid=")[0])
    threads[t] += n
    selfs[t][frames[-1]] += n
    for p in patterns:
        if p in stack:
            hits[t][p] += n
total = sum(threads.values())
print(f"{total} samples")
for t, n in threads.most_common(6):
    print(f"\n== {t}: {n} samples ({100 * n / total:.1f} %)")
    for f, k in selfs[t].most_common(12):
        print(f"   {k:7d} {100 * k / n:5.1f} %  {f[:140]}")
    for p in patterns:
        if hits[t][p]:
            print(f"   stacks with {p}: {hits[t][p]} ({100 * hits[t][p] / n:.1f} %)")
