"""native_check.py — checks for tests/e2e/trec_native_threads.sh.

    native_check.py TRACE.txt TRUTH.json [LOW HIGH]

TRACE.txt is tests/e2e/tools/trc_stacks output; TRUTH.json is what the
program measured of itself (fixtures/workloads/trec_native_threads.py):
each thread's kernel id, CPU time and runnable time (on a CPU or waiting
for one), and the process's CPU time at its end.

A sample is "on CPU" when its thread ran for the period it stands for
(trec weighs the CPU time the thread got since its previous sample), so
a thread's on-CPU samples times the period estimate its CPU time, and
never more than its runnable time (both measured inside the program: by
the thread itself, or from its schedstat).  Ticks trec
could not take (a loaded machine) are recorded as LOSS records (ticks
skipped), for the whole process: most fall where trec itself is
starved, at start-up above all, before some threads exist.  So each
thread's estimate scales its own samples by the ticks of its own life
(from its first to its last sample, trc_stacks' span line: it is
sampled at every tick trec takes) over its samples; scaling by the
process's skipped ticks charged a thread with ticks skipped before it
started (1.18x for one that lost none).  The tolerances:
10 % of a thread's time plus 30 ms below its CPU time (sampling noise,
the 10 ms before trec lists a new thread), 15 % above its runnable time;
all on-CPU samples together at least LOW times the process's CPU time
(scaled for skipped ticks), and, as taken (not scaled), at most HIGH
times it (default 0.98 and 1.15).  What a thread used before its first
sample (the process's start-up, a thread's first moments) is in the
samples too: trec finds a new thread within a tick and gives that time
out in later samples (lib/rec/natives.c, lib/rec/oncpu.c).
On a machine busy with other work a runnable thread waits for a CPU,
so runnable time may be several times the CPU time: HIGH is what tells
CPU time from runnable time there.
"""
import json
import sys

FLAG_ON_CPU = 1


def main():
    trace, truth_path = sys.argv[1:3]
    low, high = (float(a) for a in sys.argv[3:5]) if len(sys.argv) >= 5 else (0.98, 1.15)
    with open(truth_path, encoding="utf-8") as f:
        truth = json.load(f)
    names, samples, period, skipped, spans = {}, [], None, 0, {}
    with open(trace, encoding="utf-8") as f:
        for line in f:
            p = line.rstrip("\n").split("\t")
            if p[0] == "segment":
                period = int(p[2]) / 1e9
            elif p[0] == "thread":
                names.setdefault(int(p[3]), []).append(p[4])
            elif p[0] == "loss" and int(p[1]) == 1:
                skipped += int(p[2])
            elif p[0] == "span":
                spans[int(p[2])] = (int(p[3]), int(p[4]), int(p[5]))
            elif p[0] == "sample":
                frames = [fr.rsplit("|", 3)[0] for fr in p[5].split(";")] if p[5] else []
                samples.append((int(p[2]), int(p[3]), int(p[4]), frames))
    fails = []

    def expect(cond, msg):
        if not cond:
            fails.append(msg)

    def count(tid=None, on=None, pred=lambda fr: True):
        return sum(n for t, fl, n, fr in samples if (tid is None or t == tid)
                   and (on is None or bool(fl & FLAG_ON_CPU) == on) and pred(fr))

    th = truth["threads"]
    main_tid = th["main"]["tid"]
    taken = count(main_tid)
    expect(period and taken > 0, "no period or no samples of the main thread")
    if fails:
        return report(fails)
    print("period %.3f ms, %d ticks taken, %d skipped by the process" % (period * 1e3, taken, skipped))

    def scale(tid):
        """Ticks of the thread's life over its samples (>= 1)."""
        first, last, n = spans.get(tid, (0, 0, 0))
        ticks = round((last - first) / 1e9 / period) + 1
        return max(1.0, ticks / n) if n else 1.0

    def seconds(n, tid):
        return n * period * scale(tid)

    for name in ("spin_native", "idle_native", "both_native"):
        tid = th[name]["tid"]
        expect(names.get(tid, [None])[-1] == name,
               "thread %d (%s) recorded as %r" % (tid, name, names.get(tid)))
    frame = lambda name: (lambda fr: fr == ["[native thread %s]" % name])
    # a thread busy in C: its samples say what it is, as long as it ran
    s = th["spin_native"]
    got = seconds(count(s["tid"], True, frame("spin_native")), s["tid"])
    print("spin_native: %.3f s on CPU in samples (scale %.3f); cpu %.3f s, runnable %.3f s"
          % (got, scale(s["tid"]), s["cpu"], s["runnable"]))
    expect(got >= 0.9 * s["cpu"] - 0.03, "spin_native: %.3f s of samples, its CPU time %.3f s"
           % (got, s["cpu"]))
    expect(got <= 1.15 * s["runnable"] + 0.03, "spin_native: %.3f s of samples, runnable %.3f s"
           % (got, s["runnable"]))
    # only native frames: its name may read as the process's for the first
    # samples (trec read it before the thread named itself: 20 ms later again)
    native = lambda fr: len(fr) == 1 and fr[0].startswith("[native thread ")
    expect(count(s["tid"], None, lambda fr: not native(fr)) == 0,
           "spin_native: samples with other stacks than a native thread's")
    # a thread blocked in C: sampled at every tick, idle
    i = th["idle_native"]
    idle, idle_on = count(i["tid"]), count(i["tid"], True)
    print("idle_native: %d samples, %d on CPU; runnable %.3f s" % (idle, idle_on, i["runnable"]))
    expect(idle >= 0.8 * taken, "idle_native: %d samples in %d ticks" % (idle, taken))
    expect(seconds(idle_on, i["tid"]) <= 1.15 * i["runnable"] + 0.01,
           "idle_native: %d of %d samples on CPU, runnable %.3f s" % (idle_on, idle, i["runnable"]))
    # a thread from C that calls into Python: both kinds of stacks, one thread
    b = th["both_native"]
    nat = seconds(count(b["tid"], True, frame("both_native")), b["tid"])
    py = seconds(count(b["tid"], True, lambda fr: "py_in_native" in fr), b["tid"])
    print("both_native: %.3f s in C, %.3f s in Python; cpu %.3f s (%.3f s in Python)"
          % (nat, py, b["cpu"], truth["both_python_cpu"]))
    expect(py >= 0.7 * truth["both_python_cpu"] - 0.03,
           "both_native: %.3f s of Python samples, %.3f s measured" % (py, truth["both_python_cpu"]))
    expect(nat >= 0.7 * (b["cpu"] - truth["both_python_cpu"]) - 0.03,
           "both_native: %.3f s of native samples, %.3f s measured"
           % (nat, b["cpu"] - truth["both_python_cpu"]))
    # no thread sampled twice in a tick (a thread counted as native and Python)
    for tid in names:
        expect(count(tid) <= taken + 2, "thread %d: %d samples in %d ticks" % (tid, count(tid), taken))
    # every CPU second of the process is in the trace
    # scaled for skipped ticks (each thread's own) for the floor; as
    # sampled for the ceiling: scaling charges the skipped ticks with the
    # thread's average, too much where trec was starved while the program
    # was too (a loaded machine), while the samples as taken can only
    # fall short of the CPU time, never exceed it (as runnable ones did)
    total = sum(seconds(count(tid, True), tid) for tid in names)
    taken_on = sum(count(tid, True) for tid in names) * period
    cpu = truth["process_cpu"]
    runnable = sum(t["runnable"] for t in th.values())
    print("all threads: %.3f s on CPU in samples (%.3f s as taken); process CPU %.3f s "
          "(%.1f %%, %.1f %% as taken), runnable %.3f s"
          % (total, taken_on, cpu, 100 * total / cpu, 100 * taken_on / cpu, runnable))
    expect(total >= low * cpu, "on-CPU samples account for %.1f %% of the process's CPU"
           " time (at least %.0f %% expected)" % (100 * total / cpu, 100 * low))
    expect(taken_on <= high * cpu, "on-CPU samples as taken account for %.1f %% of the "
           "process's CPU time (at most %.0f %% expected)" % (100 * taken_on / cpu, 100 * high))
    expect(total <= 1.15 * runnable + 0.05, "on-CPU samples %.3f s, runnable %.3f s" % (total, runnable))
    return report(fails)


def report(fails):
    for f in fails:
        print("FAIL:", f)
    sys.exit(1 if fails else 0)


if __name__ == "__main__":
    main()
