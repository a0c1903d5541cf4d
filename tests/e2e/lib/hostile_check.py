"""hostile_check.py — checks for tests/e2e/trec_hostile_*.sh.

Reads traces in the text forms of the independent readers:
tests/e2e/tools/trc_stacks (TRACE.txt, via trec_check.Trace) and
`trc-dump --events` (EVENTS, for sample times).  Expected functions
and lines come from the workloads' sources (ast), never written here.

    hostile_check.py CHECK ARGS...

Prints one line per failed expectation and exits 1 if any failed.
"""
import ast
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from trec_check import Checker, Fixture, Trace, check_frames_against_source, in_file  # noqa: E402

LOSS_INVALID = 2
TRUNCATED = "<truncated>"

# trc-dump --events: sample time=S.NNNNNNNNN thread=P/T stack=... flags=.. count=N span_ns=N
EV_SAMPLE = re.compile(r'^sample time=(\d+)\.(\d{9}) thread=(-?\d+)/(-?\d+) stack=(.*) flags=(\S+) '
                       r'weight_ns=\d+ count=(\d+) span_ns=(\d+)$')
EV_FRAME = re.compile(r'"((?:[^"\\]|\\.)*)"@"((?:[^"\\]|\\.)*)":(\d+)')
EV_EXIT = re.compile(r'^process_exit pid=(-?\d+) time=(\d+)\.(\d{9}) ')
EV_PROCESS = re.compile(r'^process pid=(-?\d+) ')


def events(path):
    """(kind, dict) per line of trc-dump --events output, times in ns."""
    out = []
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            m = EV_SAMPLE.match(line)
            if m:
                frames = [(a, b, int(c)) for a, b, c in EV_FRAME.findall(m.group(5))]
                out.append(("sample", dict(t=int(m.group(1)) * 10**9 + int(m.group(2)),
                                           pid=int(m.group(3)), tid=int(m.group(4)),
                                           frames=frames, count=int(m.group(7)),
                                           span=int(m.group(8)))))
                continue
            m = EV_EXIT.match(line)
            if m:
                out.append(("exit", dict(pid=int(m.group(1)),
                                         t=int(m.group(2)) * 10**9 + int(m.group(3)))))
                continue
            m = EV_PROCESS.match(line)
            if m:
                out.append(("process", dict(pid=int(m.group(1)))))
    return out


def summary(stderr_path):
    """Figures of trec's summary line: samples, threads, invalid."""
    with open(stderr_path, encoding="utf-8", errors="replace") as f:
        for line in f:
            m = re.match(r"trec: (\d+) samples, (\d+) threads?, .* (\d+) invalid,", line)
            if m:
                return dict(samples=int(m.group(1)), threads=int(m.group(2)),
                            invalid=int(m.group(3)))
    return None


def def_line_ok(src_lines, fn, first):
    """Does a definition of fn's last name component start at `first`
    (after decorators)?  Synthetic names (<module>, <lambda>, ...) pass."""
    base = fn.rsplit(".", 1)[-1]
    if base.startswith("<"):
        return True
    i = first - 1
    while 0 <= i < len(src_lines) and src_lines[i].lstrip().startswith("@"):
        i += 1
    if not 0 <= i < len(src_lines):
        return False
    return re.match(r"\s*(async\s+)?(def|class)\s+" + re.escape(base) + r"\b", src_lines[i]) is not None


def check_no_invented(c, t, fx=None):
    """Every frame is real: the workload's against its functions (name,
    def line, line inside); any other frame whose file can be read has
    a definition of that name at its first line and a line in the file.
    <truncated> (the recorder's marker) only as the root."""
    if fx is not None:
        check_frames_against_source(c, t, fx)
    cache, bad = {}, 0
    for s in t.samples:
        for k, (fn, file, line, first) in enumerate(s["frames"]):
            if fn == TRUNCATED:
                ok = k == 0 and file == "" and line == 0
            elif fx is not None and in_file((fn, file, line, first), fx):
                continue
            elif not file.startswith("/") or not file.endswith(".py"):
                continue   # <frozen ...>, <string>: nothing to compare with
            else:
                if file not in cache:
                    try:
                        with open(file, encoding="utf-8", errors="replace") as f:
                            cache[file] = f.read().splitlines()
                    except OSError:
                        cache[file] = None
                src = cache[file]
                if src is None:
                    continue
                ok = (first == 0 or def_line_ok(src, fn, first)) and 0 <= line <= len(src)
            if not ok and bad < 5:
                print("  implausible frame %r" % ((fn, file, line, first),))
            bad += not ok
    c.expect(bad == 0, "%d frame(s) that exist nowhere in the sources" % bad)


def check_counts(c, t, stderr_path):
    """The summary's figures are the trace's: samples written, and
    invalid samples all accounted for as SAMPLES_INVALID losses."""
    c.expect(t.end is not None, "no segment end: the trace was not finished")
    c.expect(all(not l["reader"] for l in t.losses), "reader reported damage: %r" % t.losses)
    sm = summary(stderr_path)
    if not c.expect(sm is not None, "no summary line from trec"):
        return
    recorded_invalid = sum(l["count"] for l in t.losses if l["kind"] == LOSS_INVALID)
    c.expect(sm["invalid"] == recorded_invalid,
             "summary says %d invalid, the trace's losses %d" % (sm["invalid"], recorded_invalid))
    c.expect(sm["samples"] == t.total(),
             "summary says %d samples, the trace holds %d" % (sm["samples"], t.total()))


# ---------------------------------------------------------------- cases

def case_exit(c, args):
    """trace.txt stderr workload version: ended mid-sample."""
    t = Trace(args[0])
    check_counts(c, t, args[1])
    fx = Fixture(args[2])
    check_no_invented(c, t, fx)
    spun = [s for s in t.samples if any(fr[0] in ("main_spin", "thread_spin", "short_worker")
                                        for fr in s["frames"])]
    c.expect(spun, "no samples of the workload's functions")


def case_generic(c, args):
    """trace.txt stderr workload version: counts and no invented frame."""
    t = Trace(args[0])
    check_counts(c, t, args[1])
    check_no_invented(c, t, Fixture(args[2]))


def case_threads(c, args):
    """trace.txt stderr workload version N: every one of N threads
    defined under its threading name, sampled, and the recorder's lag
    accounted for."""
    t = Trace(args[0])
    n = int(args[4])
    check_counts(c, t, args[1])
    check_no_invented(c, t, Fixture(args[2]))
    names = {}
    for (pid, tid), name in t.threads.items():
        names[tid] = name
    want = {"hostile-%04d" % i for i in range(n)}
    have = set(names.values())
    missing = sorted(want - have)
    c.expect(not missing, "%d threads never named (first: %r)" % (len(missing), missing[:3]))
    per_thread = {}
    for s in t.samples:
        per_thread[s["tid"]] = per_thread.get(s["tid"], 0) + s["count"]
    named = [tid for tid, nm in names.items() if nm in want]
    unsampled = [names[tid] for tid in named if not per_thread.get(tid)]
    c.expect(not unsampled, "%d named threads without samples (%r)" % (len(unsampled), unsampled[:3]))
    waiting = [s for s in t.samples if s["frames"] and s["frames"][-1][0].endswith("wait")]
    c.expect(waiting, "no thread seen waiting")
    spinning = [s for s in t.samples if any(fr[0] == "worker_spin" for fr in s["frames"])]
    c.expect(spinning, "no thread seen in worker_spin")
    # each tick samples every thread, so no thread can have more samples
    # than the busiest (main) one plus the ticks before it was listed
    most = max(per_thread.values()) if per_thread else 0
    c.expect(all(v <= most for v in per_thread.values()), "per-thread counts inconsistent")


def case_deep(c, args):
    """trace.txt workload version DEPTH REACHED_FILE: a stack of DEPTH
    frames: if DEPTH <= 4096 recorded whole (exactly the depth the
    program counted), else as its innermost 4095 frames under
    <truncated> (kind other), nothing invented either way."""
    t = Trace(args[0])
    fx = Fixture(args[1])
    depth = int(args[3])
    with open(args[4]) as f:
        reached = int(f.read().split()[0])
    c.expect(reached == depth, "the program reached depth %d, not %d" % (reached, depth))
    check_no_invented(c, t, fx)
    at_bottom = [s for s in t.samples if s["frames"] and s["frames"][-1][0] == "bottom_spin"]
    if not c.expect(at_bottom, "no samples in bottom_spin"):
        return
    trunc = [s for s in t.samples if s["frames"] and s["frames"][0][0] == TRUNCATED]
    if depth <= 4096:
        c.expect(not trunc, "%d samples truncated at depth %d" % (len(trunc), depth))
        full = [s for s in at_bottom if len(s["frames"]) == depth]
        c.expect(full, "no full-depth sample in bottom_spin (depths %r)"
                 % sorted({len(s["frames"]) for s in at_bottom})[:5])
        c.expect(all(len(s["frames"]) == depth for s in at_bottom),
                 "bottom_spin samples of other depths: %r" % sorted({len(s["frames"]) for s in at_bottom}))
        for s in full[:1]:
            names = [fr[0] for fr in s["frames"]]
            c.expect(names[0] == "<module>" and names[1] == "main" and names[-1] == "bottom_spin"
                     and all(n == "descend" for n in names[2:-1]),
                     "full stack is not <module> main descend... bottom_spin: %r" % names[:4])
        return
    untrunc = [s for s in at_bottom if s["frames"][0][0] != TRUNCATED]
    c.expect(not untrunc, "%d of %d bottom_spin stacks not truncated (depths %r)"
             % (len(untrunc), len(at_bottom), sorted({len(s["frames"]) for s in untrunc})[:5]))
    for s in at_bottom[:3]:
        fr = s["frames"]
        c.expect(len(fr) == 4096, "truncated stack of %d frames, not 4096" % len(fr))
        c.expect(fr[0] == (TRUNCATED, "", 0, 0), "root frame %r, not the marker" % (fr[0],))
        c.expect(all(x[0] == "descend" for x in fr[1:-1]) and fr[-1][0] == "bottom_spin",
                 "the innermost 4095 frames are not descend... bottom_spin")
    c.expect(not any(fr[0] == TRUNCATED for s in t.samples for fr in s["frames"][1:]),
             "<truncated> below the root")


def case_codereuse(c, args):
    """events log: every sample naming gen_N (file <gen N>) lies inside
    gen_N's run; a stale cache entry names a function that already
    returned."""
    evs = events(args[0])
    runs, lookalike = {}, set()
    with open(args[1]) as f:
        for line in f:
            w = line.split()
            if w[0] == "lookalikes":
                continue
            i, a, b, long_run, la = map(int, w)
            runs[i] = (a, b)
            if long_run:
                lookalike.add(i)
    good = bad = 0
    slack = 200_000_000   # a sample's time is taken before its read
    for kind, e in evs:
        if kind != "sample" or not e["frames"]:
            continue
        fn, file, _ = e["frames"][-1]
        m = re.match(r"gen_(\d+)$", fn)
        if not m:
            continue
        i = int(m.group(1))
        mf = re.match(r"<gen (\d+)>$", file)
        ok = mf is not None and int(mf.group(1)) == i and i in runs
        if ok:
            a, b = runs[i]
            ok = a - slack <= e["t"] and e["t"] + e["span"] <= b
        if not ok and bad < 5:
            print("  %s in %s at %d: runs %r" % (fn, file, e["t"], runs.get(i)))
        bad += e["count"] if not ok else 0
        good += e["count"] if ok else 0
    c.expect(bad == 0, "%d samples name a generated function that was not running" % bad)
    c.expect(good >= len(lookalike), "only %d samples in %d long generated functions" % (good, len(lookalike)))


def case_pidreuse(c, args):
    """outdir rounds: per round the trace has the victim's
    original_work, never the impostor's impostor_work, and trec stopped
    by itself saying the pid ended."""
    outdir, lines = args[0], args[1:]
    for line in lines:
        m = re.match(r"round (\d+) victim (\d+) impostor (\d+) trec (-?\d+)", line)
        if not c.expect(m, "bad round line %r" % line):
            continue
        k, victim, impostor, rc = (int(x) for x in m.groups())
        c.expect(victim == impostor, "round %d: pid not reused (%d, %d)" % (k, victim, impostor))
        c.expect(rc == 0, "round %d: trec %s" % (k, "did not stop" if rc == -1 else "exited %d" % rc))
        base = os.path.join(outdir, "round-%d" % k)
        t = Trace(base + ".trc.txt")
        c.expect(t.end is not None, "round %d: no segment end" % k)
        fns = {fr[0] for s in t.samples for fr in s["frames"]}
        c.expect("original_work" in fns, "round %d: the victim was not recorded" % k)
        c.expect(not any("impostor" in fn for fn in fns),
                 "round %d: the impostor was recorded (%d samples)"
                 % (k, t.total(lambda s: any("impostor" in fr[0] for fr in s["frames"]))))
        c.expect(len(t.threads) <= 2 and all(pid == victim for pid, _ in t.threads),
                 "round %d: threads %r (the victim has 2)" % (k, t.threads))
        with open(base + ".err", encoding="utf-8", errors="replace") as f:
            err = f.read()
        c.expect("pid %d exited" % victim in err, "round %d: trec did not say the pid exited: %r"
                 % (k, err.strip()))


def case_children(c, args):
    """events stdout-of-workload: a killed child's function never after
    its death; the process that took its pid recorded as a new one."""
    evs = events(args[0])
    kills = []
    with open(args[1]) as f:
        for line in f:
            m = re.match(r"child (\d+) pid (\d+) killed (\d+)", line)
            if m:
                kills.append((int(m.group(2)), int(m.group(3))))
                c.expect("not reused" not in line, "pid not reused: %r" % line.strip())
    c.expect(kills, "no child rounds")
    for pid, killed in kills:
        a_after = b_before = a_n = b_n = 0
        for kind, e in evs:
            if kind != "sample" or e["pid"] != pid:
                continue
            names = {fr[0] for fr in e["frames"]}
            if "child_a_work" in names:
                a_n += e["count"]
                a_after += e["count"] if e["t"] + e["span"] > killed else 0
            if "child_b_work" in names:
                b_n += e["count"]
                b_before += e["count"] if e["t"] < killed - 50_000_000 else 0
        c.expect(a_n > 0, "pid %d: the first child was not recorded" % pid)
        c.expect(a_after == 0, "pid %d: %d samples of the dead child after it was killed" % (pid, a_after))
        c.expect(b_before == 0, "pid %d: %d samples of the second child before it existed" % (pid, b_before))
        procs = [i for i, (kind, e) in enumerate(evs) if kind == "process" and e["pid"] == pid]
        exits = [i for i, (kind, e) in enumerate(evs) if kind == "exit" and e["pid"] == pid]
        if b_n:
            c.expect(len(procs) >= 2 and exits and exits[0] < procs[-1],
                     "pid %d: the second child is not a new process after the first's exit" % pid)


def case_nsthreads(c, args):
    """trace.txt pid version: a target in another pid namespace: threads
    under our tids (tasks of pid), threading names, spinners on CPU."""
    t = Trace(args[0])
    pid, version = int(args[1]), args[2]
    tasks = set(int(x) for x in args[3].split(","))
    c.expect(t.end is not None, "no segment end")
    tids = {tid for (p, tid) in t.threads if p == pid}
    c.expect(tids and tids <= tasks, "thread ids %r are not the process's tasks %r" % (sorted(tids), sorted(tasks)))
    names = set(t.threads.values())
    for want in ("MainThread", "spinner-0", "spinner-1", "sleeper"):
        c.expect(want in names, "no thread named %r (names %r)" % (want, sorted(names)))
    on_cpu = t.total(lambda s: s["flags"] & 1 and any(fr[0] == "spin_worker" for fr in s["frames"]))
    c.expect(on_cpu > 0, "spinning threads never on CPU: their state was not read")


CASES = {"exit": case_exit, "generic": case_generic, "threads": case_threads, "deep": case_deep,
         "codereuse": case_codereuse, "pidreuse": case_pidreuse, "children": case_children,
         "nsthreads": case_nsthreads}


def main():
    c = Checker()
    CASES[sys.argv[1]](c, sys.argv[2:])
    c.done()


if __name__ == "__main__":
    main()
