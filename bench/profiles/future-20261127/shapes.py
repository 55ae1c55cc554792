#!/usr/bin/env python3
"""The busy-mode call shapes of LatencyCurve logs, per round: p50 / p99 of each shape, the future
shape's p99 over the best other shape's, the slowest over the fastest shape at p99 and p50, and
the blocking call's p50 over ib_send_lat's. usage: shapes.py LOG...  (a markdown table row each)"""
import re,sys,glob,os
def parse(path):
    rows={}
    for line in open(path):
        m=re.match(r'\[\s*\d+/\s*\d+\] (\S+) c\d-r(\d)\s+\d+ B\s+min\s+([\d.]+)\s+p50\s+([\d.]+)\s+p99\s+([\d.]+)\s+p99.9\s+([\d.]+)',line)
        if m:
            rows[(m.group(1),int(m.group(2)))]=(float(m.group(4)),float(m.group(5)),float(m.group(6)))
    return rows
print('| JVM round | ib_send_lat p50 | wait | future | read in place | callback (p50 / p99, us) | future p99 / best other | slowest / fastest p99 | slowest / fastest p50 | wait p50 / ib_send_lat |')
print('|---|---|---|---|---|---|---|---|---|---|')
for path in sys.argv[1:]:
    r=parse(path); label=os.path.basename(path)[:-4]
    for rd in (1,2,3):
        if ('ib_send_lat',rd) not in r: continue
        sh={'wait':r.get(('mode-busy-wait',rd)),'future':r.get(('mode-busy-future',rd)),'read':r.get(('mode-busy',rd)),'callback':r.get(('mode-busy-callback',rd))}
        if None in sh.values(): continue
        ib=r[('ib_send_lat',rd)]
        best99=min(v[1] for k,v in sh.items()); best50=min(v[0] for v in sh.values())
        oth99=min(v[1] for k,v in sh.items() if k!='future')
        print(f"| {label} r{rd} | {ib[0]:.1f} | " + " | ".join(f"{sh[k][0]:.1f} / {sh[k][1]:.1f}" for k in ('wait','future','read','callback')) + f" | {sh['future'][1]/oth99:.2f} | {max(v[1] for v in sh.values())/best99:.2f} | {max(v[0] for v in sh.values())/best50:.2f} | {sh['wait'][0]/ib[0]:.2f} |")
