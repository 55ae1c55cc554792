#!/usr/bin/env python3
"""Top self frames of a collapsed async-profiler file, restricted to stacks that contain
FILTER (a substring; '' for all) and, with --thread, to threads whose name contains it.
usage: top.py FILE.collapsed [FILTER] [--thread NAME] [--n 30] [--java]  (--java: attribute each
sample to its innermost frame of our code, org/rpcrdma, instead of the innermost frame)"""
import sys, collections
args = sys.argv[1:]
n = 30; thread = None; java = False; pos = []
i = 0
while i < len(args):
    a = args[i]
    if a == '--n': n = int(args[i + 1]); i += 1
    elif a == '--thread': thread = args[i + 1]; i += 1
    elif a == '--java': java = True
    else: pos.append(a)
    i += 1
path = pos[0]; flt = pos[1] if len(pos) > 1 else ''
tot = 0; c = collections.Counter()
for line in open(path):
    stack, k = line.rstrip('\n').rsplit(' ', 1)
    k = int(k)
    fr = stack.split(';')
    if thread is not None and not (fr[0].startswith('[') and thread in fr[0]):
        continue
    if flt and flt not in stack:
        continue
    tot += k
    if java:
        key = next((f for f in reversed(fr) if f.startswith('org/rpcrdma')), fr[-1])
    else:
        key = fr[-1]
    c[key] += k
print(f'{tot} samples' + (f' in stacks with {flt}' if flt else '') + (f', threads {thread}' if thread else ''))
for key, k in c.most_common(n):
    print(f'{k:7d} {100.0 * k / max(tot, 1):6.2f}%  {key}')
