"""dump_check.py WORKLOAD TEXT JSON — checks `trec --dump` output of
fixtures/workloads/dump_target.py: the text and the JSON document each
show the main thread in wait_here and the thread "spinner-worker" in
spin_here, at the lines marked "# at: NAME" in WORKLOAD (innermost frame
last), and the two agree.  Prints what is wrong and exits 1, else 0."""
import json
import os
import re
import sys


def marked_lines(path):
    at = {}
    with open(path) as f:
        for i, line in enumerate(f, 1):
            m = re.search(r"# at: (\w+)", line)
            if m:
                at[m.group(1)] = i
    return at


def parse_text(path):
    """[(tid, name, state, [(file, line, function), ...])] per thread."""
    threads = []
    with open(path) as f:
        for line in f:
            m = re.match(r'Thread (-?\d+) "(.*)" \((running|idle|stopped|zombie|unknown)(, holds the GIL)?\)$',
                         line.rstrip("\n"))
            if m:
                threads.append((int(m.group(1)), m.group(2), m.group(3), []))
                continue
            m = re.match(r'  File "(.*)", line (\d+), in (.*)$', line.rstrip("\n"))
            if m and threads:
                threads[-1][3].append((m.group(1), int(m.group(2)), m.group(3)))
    return threads


def parse_json(path):
    with open(path) as f:
        doc = json.load(f)
    threads = []
    for p in doc["processes"]:
        for t in p["threads"]:
            threads.append((t["tid"], t["name"], t["state"],
                            [(fr["file"], fr["line"], fr["function"]) for fr in t["frames"]]))
    return threads


def check(kind, threads, workload, at, errs):
    want = {"MainThread": "wait_here", "spinner-worker": "spin_here"}
    by_name = {t[1]: t for t in threads}
    for name, func in want.items():
        t = by_name.get(name)
        if not t:
            errs.append("%s: no thread named %r (threads: %s)" % (kind, name, [x[1] for x in threads]))
            continue
        if not t[3]:
            errs.append("%s: thread %r has no frames" % (kind, name))
            continue
        leaf = t[3][-1]
        if (os.path.realpath(leaf[0]), leaf[1], leaf[2]) != (workload, at[func], func):
            errs.append("%s: thread %r innermost frame is %r, want %s:%d in %s"
                        % (kind, name, leaf, workload, at[func], func))


def main():
    workload = os.path.realpath(sys.argv[1])
    at = marked_lines(workload)
    errs = []
    text = parse_text(sys.argv[2])
    js = parse_json(sys.argv[3])
    check("text", text, workload, at, errs)
    check("json", js, workload, at, errs)
    # the same threads with the same stacks (states may differ between two reads)
    t_facts = sorted((t[0], t[1], tuple(t[3])) for t in text)
    j_facts = sorted((t[0], t[1], tuple(t[3])) for t in js)
    if [f[:2] for f in t_facts] != [f[:2] for f in j_facts]:
        errs.append("text and json name different threads: %s vs %s" % (t_facts, j_facts))
    for e in errs:
        print(e)
    return 1 if errs else 0


sys.exit(main())
