#!/usr/bin/env python3
"""Puts the JIT's compilations (jit.sh's -Xlog file) against the points of the same JVM:
per point (between its progress line and the one before), the compiles that started then
and a few of their methods.  Usage: jit-table.py OUTPUT.log JIT.log"""
import re, sys
from datetime import datetime

def t(s):
    return datetime.fromisoformat(s.replace('Z', '+00:00')[:23]).timestamp()

out, jit = sys.argv[1], sys.argv[2]
comp = []
for line in open(jit, errors='replace'):
    m = re.match(r'\[(\d{4}-\d\d-\d\dT[\d:.]+)[^\]]*\]\s*(.*)', line)
    if m:
        comp.append((t(m.group(1)), m.group(2)))
prev = None
for line in open(out, errors='replace'):
    m = re.match(r'(\d{4}-\d\d-\d\dT[\d:.]+) (.*)', line)
    if not m:
        continue
    now, text = t(m.group(1)), m.group(2)
    if prev is not None and (text.startswith('[') and '/' in text[:12] or 'pre-warm' in text):
        inside = [c for c in comp if prev <= c[0] < now]
        meth = [re.sub(r'^\s*\d+\s+[%sbn! ]*', '', c[1]).split(' ')[0] for c in inside]
        short = ', '.join(sorted(set(x.split('::')[-1] if '::' in x else x for x in meth))[:6])
        print(f"{now - prev:7.1f}s {len(inside):4d} compiles | {text[:100]}" + (f"\n{'':22}{short}" if inside else ''))
    if text.startswith('[') or 'pre-warm' in text or text.startswith('[bench]'):
        prev = now
