"""quiet_check.py — checks for tests/e2e/trec_quiet.sh.

Reads `trc-dump -e` of a recording of fixtures/workloads/trec_quiet.py
and trec's stderr (TREC_SELF_TIMING), and checks that the thread
"napper", blocked in phase_a, then phase_b, then phase_c, was sampled in
that order, about as often in each, idle, and, when trec had switch
records (MODE perf), mostly from repeated stacks.  Usage:

    quiet_check.py DUMP.txt STDERR.txt MODE

MODE: perf (switch records expected where allowed), proc
(TREC_THREAD_STATE=proc: none) or denied (perf_event_open refused: none).  Exits 1 on a failed expectation.
"""
import re
import sys

dump, err, mode = sys.argv[1:4]
fails = []


def expect(ok, what):
    if not ok:
        fails.append(what)


napper = None
runs = []   # (tid, phase or None, flags, count) in time order
for line in open(dump, encoding="utf-8"):
    if line.startswith("thread ") and 'name="napper"' in line:
        napper = re.search(r"\btid=(\d+)", line).group(1)
    elif line.startswith("sample "):
        tid = re.search(r"\bthread=\d+/(\d+)", line).group(1)
        m = re.findall(r'"phase_([abc])"@', line)
        flags = int(re.search(r"\bflags=(0x[0-9a-f]+)", line).group(1), 16)
        cm = re.search(r"\bcount=(\d+)", line)
        runs.append((tid, m[-1] if m else None, flags, int(cm.group(1)) if cm else 1))

expect(napper is not None, "no thread named napper")
mine = [r for r in runs if r[0] == napper and r[1]]
order = [r[1] for r in mine]
expect(order == sorted(order), "napper's phases out of order: %s" % "".join(
    p for i, p in enumerate(order) if i == 0 or order[i - 1] != p))
counts = {p: sum(r[3] for r in mine if r[1] == p) for p in "abc"}
mean = sum(counts.values()) / 3.0
expect(mean > 0 and all(0.6 * mean <= n <= 1.4 * mean for n in counts.values()),
       "napper's samples per phase %r: each should be about a third" % counts)
total = sum(counts.values())
idle = sum(r[3] for r in mine if not r[2] & 1)
expect(total and idle >= 0.9 * total, "napper idle in %d of %d samples" % (idle, total))

st = open(err, encoding="utf-8").read()
m = re.search(r"(\d+) samples repeated from threads that had not run; switch records for (\d+) threads", st)
expect(m is not None, "no self-timing line with repeated samples")
if m:
    repeated, watched = int(m.group(1)), int(m.group(2))
    if mode in ("proc", "denied"):
        expect(repeated == 0 and watched == 0,
               "%s: %d repeated, %d threads with switch records" % (mode, repeated, watched))
    elif watched == 0:
        print("note: perf events not allowed here: trec read /proc (nothing repeated)")
    else:
        # napper and the main thread block for nearly the whole run
        expect(repeated >= 0.5 * total,
               "only %d samples repeated, napper alone has %d blocked samples" % (repeated, total))
print("napper: %r samples per phase, %d idle" % (counts, idle))
for f in fails:
    print("FAIL: " + f)
sys.exit(1 if fails else 0)
