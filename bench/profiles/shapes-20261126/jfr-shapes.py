#!/usr/bin/env python3
"""Execution samples of a goal-rounds JFR recording split by call shape and thread: for each
(shape, thread) the sample count and its top frames (self), from
`jfr print --events jdk.ExecutionSample --stack-depth 64 FILE`. The shape is read off the
main thread's stack (callAndWait / callAndRead / CallFuture.get|join / CallbackLoop);
samples of the other threads are attributed to the shape the main thread was in last."""
import collections, re, subprocess, sys

out = subprocess.run(["/usr/lib/jvm/temurin-25-jdk-amd64/bin/jfr", "print", "--events", "jdk.ExecutionSample",
                      "--stack-depth", "64", sys.argv[1]], capture_output=True, text=True).stdout
events = out.split("jdk.ExecutionSample {")[1:]
rows = []
for e in events:
    t = re.search(r'startTime = (\S+)', e).group(1)
    th = re.search(r'sampledThread = "([^"]*)"', e)
    th = th.group(1) if th else "?"
    frames = re.findall(r'^\s+([\w.$<>]+)\(', e, re.M)
    rows.append((t, th, frames))
rows.sort(key=lambda r: r[0])
shape = "setup"
count = collections.Counter()
top = collections.defaultdict(collections.Counter)
for t, th, frames in rows:
    s = " ".join(frames)
    if th == "main":
        if "Connection.callAndWait" in s: shape = "wait"
        elif "Connection.callAndRead" in s: shape = "read"
        elif "CallFuture.get" in s or "CallFuture.join" in s or "CompletableFuture.get" in s: shape = "future"
        elif "CallbackLoop.run" in s: shape = "callback"
        elif "JitPrewarm" in s or "Perftest" in s or "VerbsPingPong" in s: shape = "other"
    thread = re.sub(r'-\d+$', '', th)
    count[(shape, thread)] += 1
    if frames:
        top[(shape, thread)][frames[0]] += 1
for k in sorted(count):
    print("%-9s %-28s %5d  %s" % (k[0], k[1], count[k],
          ", ".join("%s %d" % (f.split('.')[-2] + '.' + f.split('.')[-1] if f.count('.') else f, n)
                    for f, n in top[k].most_common(6))))
