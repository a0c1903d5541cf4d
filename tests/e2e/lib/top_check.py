"""top_check.py TOP_OUTPUT COLLAPSED_SAMPLES COLLAPSED_US: trc-top's
text snapshot (--once --since-start --rows 0) checked against what
trc2collapsed wrote for the same trace and selection, aggregated here on
its own: a line's own samples are those of the stacks it ends, its
total those of the stacks it is on (once per stack), the percentages
shares of all samples (those without Python frames included), the times
the microsecond weights.  Prints "ok N rows" or what differs; exit 1 on
a difference."""
import re
import sys
from collections import defaultdict


def unescape(frame):
    frame = re.sub(r"%([0-9A-F]{2})", lambda m: chr(int(m.group(1), 16)), frame)
    return "".join("?" if ord(c) < 0x20 or ord(c) == 0x7F else c for c in frame)


def folded(path):
    out = []
    for line in open(path, encoding="utf-8"):
        stack, count = line.rstrip("\n").rsplit(" ", 1)
        out.append((stack, int(count)))
    return out


def expected(samples_path, us_path):
    own, total, own_us, total_us = (defaultdict(int) for _ in range(4))
    all_n = 0
    for which, path in ((0, samples_path), (1, us_path)):
        for stack, count in folded(path):
            if which == 0:
                all_n += count
            if stack == "<no Python frames>":
                continue
            frames = [unescape(f) for f in stack.split(";")]
            o, t = (own, total) if which == 0 else (own_us, total_us)
            o[frames[-1]] += count
            for f in set(frames):
                t[f] += count
    rows = {}
    for f in total:
        rows[f] = (
            "%.1f%%" % (100.0 * own[f] / all_n),
            "%.1f%%" % (100.0 * total[f] / all_n),
            "%.3fs" % (own_us[f] / 1e6),
            "%.3fs" % (total_us[f] / 1e6),
        )
    return rows, all_n


def shown(path):
    lines = open(path, encoding="utf-8").read().split("\n")
    header = lines[0]
    m = re.search(r", (\d+) samples", header)
    n = int(m.group(1)) if m else -1
    at = next(i for i, l in enumerate(lines) if "%Own" in l)
    rows = {}
    for l in lines[at + 1:]:
        if not l.strip():
            break
        m = re.match(r"^ *([0-9.]+%) +([0-9.]+%) +([0-9.]+s) +([0-9.]+s) (.*)$", l)
        if not m:
            raise SystemExit("not a row: %r" % l)
        rows[m.group(5)] = m.groups()[:4]
    return rows, n


def main():
    got, n = shown(sys.argv[1])
    want, all_n = expected(sys.argv[2], sys.argv[3])
    bad = 0
    if n != all_n:
        print("header says %d samples, trc2collapsed counts %d" % (n, all_n))
        bad += 1
    for f in sorted(set(got) | set(want)):
        if got.get(f) != want.get(f):
            print("%s: trc-top %s, from trc2collapsed %s" % (f, got.get(f), want.get(f)))
            bad += 1
    if bad:
        sys.exit(1)
    print("ok %d rows" % len(got))


main()
