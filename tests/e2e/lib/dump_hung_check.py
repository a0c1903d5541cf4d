"""dump_hung_check.py [--stopped] WORKLOAD IDS TEXT JSON — checks `trec --dump` of
fixtures/workloads/dump_hung.py: in the text and in the JSON document,
each of the workload's threads (IDS: the JSON the workload wrote, name ->
native thread id) is listed once under its name with its id, in the
state its work implies (the spinner running, the others idle), its
innermost frame (last) at the line marked "# at: FUNCTION" in WORKLOAD,
whose path (non-ASCII here) must come back exactly; the thread started
from C is listed as one without a Python thread state, and no other
thread is listed.  --stopped: the target was stopped (SIGSTOP), so every
thread's state is "stopped".  Prints what is wrong and exits 1, else 0."""
import json
import os
import re
import sys

WANT = {  # thread name -> (innermost function, state); None: no Python thread state
    "MainThread": ("wait_here", "idle"),
    "lock-waiter": ("blocked_here", "idle"),
    "spinner": ("spin_here", "running"),
    "wörker-名前": ("named_here", "idle"),
    "native-pauser": (None, "idle"),
}
NO_PYTHON = "  (no Python frames: a thread without a Python thread state)"
HEADER = re.compile(r'Thread (-?\d+) "(.*)" \(([a-z]+)((?:, [^,)]+)*)\)$')
FRAME = re.compile(r'  File "(.*)", line (\d+), in (.*)$')


def marked_lines(path):
    at = {}
    with open(path, encoding="utf-8") as f:
        for i, line in enumerate(f, 1):
            m = re.search(r"# at: (\w+)", line)
            if m:
                at[m.group(1)] = i
    return at


def parse_text(path):
    """[(tid, name, state, [(file, line, function), ...], python)] per thread."""
    threads = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            m = HEADER.match(line)
            if m:
                threads.append((int(m.group(1)), m.group(2), m.group(3), [], True))
                continue
            if line == NO_PYTHON and threads:
                threads[-1] = threads[-1][:4] + (False,)
            m = FRAME.match(line)
            if m and threads:
                threads[-1][3].append((m.group(1), int(m.group(2)), m.group(3)))
    return threads


def parse_json(path):
    with open(path, encoding="utf-8") as f:
        doc = json.load(f)
    return [(t["tid"], t["name"], t["state"],
             [(fr["file"], fr["line"], fr["function"]) for fr in t["frames"]], t["python"])
            for p in doc["processes"] for t in p["threads"]]


def check(kind, threads, workload, ids, at, errs, stopped):
    for name, (func, state) in WANT.items():
        state = "stopped" if stopped else state
        got = [t for t in threads if t[1] == name]
        if len(got) != 1:
            errs.append("%s: %d threads named %r (threads: %s)"
                        % (kind, len(got), name, [t[1] for t in threads]))
            continue
        tid, _, st, frames, python = got[0]
        if tid != ids[name]:
            errs.append("%s: thread %r has id %d, its native id is %d" % (kind, name, tid, ids[name]))
        if st != state:
            errs.append("%s: thread %r is %s, want %s" % (kind, name, st, state))
        if func is None:
            if python or frames:
                errs.append("%s: thread %r is shown as a Python thread" % (kind, name))
            continue
        if not python:
            errs.append("%s: thread %r is shown without a Python thread state" % (kind, name))
        if not frames:
            errs.append("%s: thread %r has no frames" % (kind, name))
            continue
        leaf = frames[-1]
        if (leaf[0], leaf[1], leaf[2]) != (workload, at[func], func):
            errs.append("%s: thread %r innermost frame is %r, want %s:%d in %s"
                        % (kind, name, leaf, workload, at[func], func))


def main():
    stopped = sys.argv[1:2] == ["--stopped"]
    if stopped:
        del sys.argv[1]
    workload = sys.argv[1]
    with open(sys.argv[2], encoding="utf-8") as f:
        ids = json.load(f)
    at = marked_lines(workload)
    errs = []
    text, js = parse_text(sys.argv[3]), parse_json(sys.argv[4])
    check("text", text, workload, ids, at, errs, stopped)
    check("json", js, workload, ids, at, errs, stopped)
    for kind, threads in (("text", text), ("json", js)):
        if len(threads) != len(WANT):
            errs.append("%s: %d threads, want %d: %s" % (kind, len(threads), len(WANT),
                                                         [t[1] for t in threads]))
    for e in errs:
        print(e)
    return 1 if errs else 0


sys.exit(main())
