#!/usr/bin/env python3
"""Top threads and top frames of one JVM over a span of a time-sliced async-profiler run
(agent option loop=5s, file=DIR/ap-%p-%t.collapsed: one collapsed file per 5 s per JVM).
usage: slice.py DIR PID FROM TO [--n 25] [--thread SUBSTR]
FROM/TO as HHMMSS (the guest's clock, as in the file names); a file counts when the 5 s it
covers (its name's time onwards) overlaps [FROM, TO]."""
import sys, os, re, collections
args = sys.argv[1:]
n = 25; thread = None; pos = []
i = 0
while i < len(args):
    if args[i] == '--n': n = int(args[i + 1]); i += 1
    elif args[i] == '--thread': thread = args[i + 1]; i += 1
    else: pos.append(args[i])
    i += 1
d, pid, lo, hi = pos
sec = lambda t: int(t[:2]) * 3600 + int(t[2:4]) * 60 + int(t[4:6])
lo, hi = sec(lo), sec(hi)
files = []
for f in sorted(os.listdir(d)):
    m = re.match(r'ap-%s-\d{8}-(\d{6})\.collapsed$' % pid, f)
    if m and sec(m.group(1)) + 5 > lo and sec(m.group(1)) <= hi:
        files.append(f)
threads = collections.Counter(); frames = collections.Counter(); tot = 0
norm = lambda t: re.sub(r' tid=\d+', '', re.sub(r'#\d+|-\d+\b', '#', t))
for f in files:
    for line in open(os.path.join(d, f)):
        stack, k = line.rstrip('\n').rsplit(' ', 1); k = int(k)
        fr = stack.split(';')
        if thread and thread not in fr[0]:
            continue
        tot += k
        threads[norm(fr[0])] += k
        frames[fr[-1]] += k
print(f'{len(files)} files {files[0] if files else ""} .. {files[-1] if files else ""}; {tot} samples (itimer)')
print('threads (grouped: numbers dropped):')
for t, k in threads.most_common(12):
    print(f'{k:7d} {100.0 * k / max(tot, 1):6.2f}%  {t}')
print('top frames (innermost):')
for t, k in frames.most_common(n):
    print(f'{k:7d} {100.0 * k / max(tot, 1):6.2f}%  {t}')
