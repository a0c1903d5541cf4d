"""trec_check.py — checks for tests/e2e/trec_*.sh.

Reads a trace's text form (tests/e2e/tools/trc_stacks output) and checks
it against the fixture's source: expected lines are found by their
"# MARK:name" comments and function extents by parsing the fixture with
ast, never written down by hand.  Usage:

    trec_check.py CASE TRACE.txt FIXTURE.py VERSION [args...]

Prints one line per failed expectation and exits 1 if any failed.
"""
import ast
import json
import os
import re
import sys

FLAG_ON_CPU, FLAG_HOLDS_GIL, FLAG_GIL_KNOWN = 1, 2, 4


class Trace:
    def __init__(self, path):
        self.processes, self.threads, self.exits, self.losses = [], {}, [], []
        self.layouts = {}   # pid -> the layout words of its last PROCESS record
        self.samples, self.counters, self.end, self.segment = [], [], None, None
        with open(path, encoding="utf-8") as f:
            for line in f:
                p = line.rstrip("\n").split("\t")
                kind = p[0]
                if kind == "segment":
                    self.segment = p[1:]
                elif kind == "process":
                    self.processes.append(dict(pid=int(p[1]), ppid=int(p[2]), interp=p[3],
                                               exe=p[4], cmd=p[5]))
                elif kind == "layout":
                    self.layouts[int(p[1])] = p[2]
                elif kind == "thread":
                    self.threads[(int(p[2]), int(p[3]))] = p[4]
                elif kind == "exit":
                    self.exits.append(dict(pid=int(p[1]), code=int(p[2]), signal=int(p[3])))
                elif kind == "loss":
                    self.losses.append(dict(kind=int(p[1]), count=int(p[2]),
                                            reader=int(p[3]), detail=p[5]))
                elif kind == "counter":
                    self.counters.append(dict(name=p[1], unit=p[2], pid=int(p[3]),
                                              n=int(p[4]), min=float(p[5]), max=float(p[6])))
                elif kind == "sample":
                    frames = []
                    if p[5]:
                        for fr in p[5].split(";"):
                            fn, file, ln, first = fr.rsplit("|", 3)
                            frames.append((fn, file, int(ln), int(first)))
                    self.samples.append(dict(pid=int(p[1]), tid=int(p[2]), flags=int(p[3]),
                                             count=int(p[4]), frames=frames))
                elif kind == "end":
                    self.end = [int(x) for x in p[1:]]

    def total(self, pred=lambda s: True):
        return sum(s["count"] for s in self.samples if pred(s))

    def thread_name(self, s):
        return self.threads.get((s["pid"], s["tid"]), "")


class Fixture:
    """Marker lines and function extents of a fixture file."""

    def __init__(self, path):
        self.path = path
        self.real = os.path.realpath(path)
        with open(path, encoding="utf-8") as f:
            src = f.read()
        self.markers = {}
        for i, line in enumerate(src.splitlines(), 1):
            m = re.search(r"# MARK:(\w+)", line)
            if m:
                self.markers[m.group(1)] = i
        self.funcs = {}  # qualname -> (def line, end line)
        self._walk(ast.parse(src), "")

    def _walk(self, node, prefix):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                q = prefix + child.name
                self.funcs[q] = (child.lineno, child.end_lineno)
                self._walk(child, q + ".<locals>.")
            elif isinstance(child, ast.ClassDef):
                self._walk(child, prefix + child.name + ".")
            else:
                self._walk(child, prefix)

    def by_name(self, fn):
        """Extents matching a frame's function name: qualified (3.11+) or not."""
        if fn in self.funcs:
            return [self.funcs[fn]]
        return [v for q, v in self.funcs.items() if q.rsplit(".", 1)[-1] == fn]


class Checker:
    def __init__(self):
        self.failures = 0

    def expect(self, cond, msg):
        if not cond:
            print("FAIL:", msg)
            self.failures += 1
        return cond

    def done(self):
        if self.failures:
            print("%d check(s) failed" % self.failures)
            sys.exit(1)
        print("checks passed")


def qualified(version):
    major, minor = (int(x) for x in version.split(".")[:2])
    return (major, minor) >= (3, 11)


def name(version, qual):
    return qual if qualified(version) else qual.rsplit(".", 1)[-1]


def in_file(fr, fx):
    return fr[1] == fx.path or os.path.realpath(fr[1]) == fx.real


def check_frames_against_source(c, t, fx, pid=None):
    """Every frame from the fixture: known function, first_line = def line,
    line inside the function."""
    bad = 0
    seen = 0
    for s in t.samples:
        if pid is not None and s["pid"] != pid:
            continue
        for fr in s["frames"]:
            if not in_file(fr, fx) or fr[0] == "<module>":
                continue
            seen += 1
            ext = fx.by_name(fr[0])
            ok = any(first == fr[3] and first <= fr[2] <= end for first, end in ext)
            if not ok and bad < 5:
                print("  bad frame %r (fixture extents %r)" % (fr, ext))
            bad += not ok
    c.expect(seen > 0, "no frames from %s at all" % fx.path)
    c.expect(bad == 0, "%d frame(s) with a wrong function, first line or line" % bad)


def common(c, t, version, expect_pid=None):
    c.expect(t.end is not None, "no segment end: the trace was not finished")
    interp = "CPython " + version
    c.expect(any(p["interp"] == interp for p in t.processes),
             "no process with interpreter %r (got %r)" % (interp, [p["interp"] for p in t.processes]))
    c.expect(all(not l["reader"] for l in t.losses), "reader reported damage: %r" % t.losses)
    c.expect(any(x["name"] == "rss" and x["unit"] == "bytes" and x["min"] > 0 for x in t.counters),
             "no rss counter (counters: %r)" % t.counters)


def stacks_with(t, fn, pid=None):
    return [s for s in t.samples if (pid is None or s["pid"] == pid)
            and any(fr[0] == fn for fr in s["frames"])]


def program_share(c, args):
    """The recorded program's CPU time over its wall-clock time, from the
    argument usage=CPU_JSON,TREC_STDERR (cpu_of.py's measure of trec and
    the program together, and trec's self-timing line saying its own CPU
    time), or None when the test gave none.  On CPU means on a CPU: on a
    loaded machine a busy program gets a share of one, and its samples
    are on CPU in about that share (where they were on CPU whenever it
    was runnable, nearly all of them)."""
    for a in args:
        if a.startswith("usage="):
            usage, err = a[len("usage="):].split(",", 1)
            with open(usage, encoding="utf-8") as f:
                u = json.load(f)
            with open(err, encoding="utf-8", errors="replace") as f:
                m = re.search(r"all CPU ([0-9.]+) ms", f.read())
            c.expect(m is not None, "no self-timing line from trec in %s" % err)
            own = float(m.group(1)) / 1e3 if m else 0.0
            share = max(0.0, u["cpu"] - own) / u["wall"] if u["wall"] > 0 else 0.0
            print("  the program used %.3f s of CPU in %.3f s (%.0f %% of a CPU; trec %.3f s)"
                  % (u["cpu"] - own, u["wall"], 100 * share, own))
            return share
    return None


def case_basic(c, t, fx, version, args):
    common(c, t, version)
    check_frames_against_source(c, t, fx)
    m = fx.markers
    # (qualified name, marker of the line the frame must be on)
    for qual, mark in [("Worker.compute", "method"), ("outer.<locals>.inner", "nested"),
                       ("outer", "outer"), ("计算", "cjk"), ("Ünïcødé.método", "latin"),
                       ("gen_values", "generator"), ("consume", "consume"),
                       ("recurse", "recurse_leaf"), ("task_work", "task")]:
        fn = name(version, qual)
        hits = [fr for s in t.samples for fr in s["frames"] if fr[0] == fn and in_file(fr, fx)]
        c.expect(hits, "no frame named %r" % fn)
        c.expect(any(fr[2] == m[mark] for fr in hits),
                 "%r never on line %d (MARK:%s); lines seen %r"
                 % (fn, m[mark], mark, sorted({fr[2] for fr in hits})))
    # the leaf: burn, nearly always on its loop line
    burn = [(s, s["frames"][-1]) for s in t.samples if s["frames"] and s["frames"][-1][0] == "burn"]
    n_burn = sum(s["count"] for s, _ in burn)
    on_line = sum(s["count"] for s, fr in burn if fr[2] == m["burn"])
    c.expect(n_burn > 0 and on_line >= 0.9 * n_burn,
             "burn on its loop line in %d of %d samples" % (on_line, n_burn))
    # structure: caller below callee
    def has_sequence(seq):
        for s in t.samples:
            names = [fr[0] for fr in s["frames"]]
            for i in range(len(names) - len(seq) + 1):
                if names[i:i + len(seq)] == seq:
                    return True
        return False
    c.expect(has_sequence(["main", name(version, "Worker.compute"), "burn"]),
             "no stack main > Worker.compute > burn")
    c.expect(has_sequence([name(version, "outer"), name(version, "outer.<locals>.inner"), "burn"]),
             "no stack outer > inner > burn")
    c.expect(has_sequence(["consume", "gen_values", "burn"]), "no stack consume > gen_values > burn")
    c.expect(has_sequence(["<module>", "main"]), "no <module> frame under main")
    # deep recursion: one stack with >= 600 recurse frames
    deepest = max([sum(fr[0] == "recurse" for fr in s["frames"]) for s in t.samples] or [0])
    c.expect(deepest >= 600, "deepest recursion seen: %d frames (want 601)" % deepest)
    # asyncio: the task's frame runs on the event loop's frames
    task = stacks_with(t, "task_work")
    c.expect(any("asyncio" in fr[1] for s in task for fr in s["frames"]),
             "task_work not under asyncio's event loop frames")
    # on CPU in about the share of a CPU the program got (it only burns
    # CPU: all of one on an idle machine, less on a loaded one).  Only a
    # floor: the share is over the program's whole life, start-up and
    # ticks trec skipped included, so it is no exact per-sample figure;
    # trec_oncpu_load.sh and native_check.py bound the totals both ways
    total = t.total()
    on = t.total(lambda s: s["flags"] & FLAG_ON_CPU)
    share = program_share(c, args)
    want = 0.7 if share is None else 0.6 * min(share, 1.0)
    c.expect(total > 0 and on >= want * total, "on-CPU in %d of %d samples (want %.0f %%)"
             % (on, total, 100 * want))
    phase = float(args[0])
    expected = 7 * phase * 1000
    # generous: a loaded machine delays ticks (counted as missed, not faked)
    c.expect(total >= 0.3 * expected, "%d samples, expected about %d" % (total, expected))


def case_threads(c, t, fx, version, args):
    gil = "gil" in args
    attached = "attached" in args
    if not attached:
        common(c, t, version)
    check_frames_against_source(c, t, fx)
    # threads by what they run (names are checked separately)
    by_tid = {}
    for s in t.samples:
        by_tid.setdefault((s["pid"], s["tid"]), []).append(s)

    def runs(ss, fn):
        return any(fr[0] == fn for s in ss for fr in s["frames"])

    roles = {"busy": [], "sleeper": [], "main": []}
    for key, ss in by_tid.items():
        if runs(ss, "busy"):
            roles["busy"].append(key)
        elif runs(ss, "sleeper"):
            roles["sleeper"].append(key)
        elif runs(ss, "<module>"):
            roles["main"].append(key)
    c.expect(len(roles["busy"]) == 1 and len(roles["sleeper"]) == 2,
             "threads by role: %r" % roles)
    c.expect(attached or len(roles["main"]) == 1, "main thread: %r" % roles["main"])
    names = {t.threads.get(k, "") for k in roles["sleeper"]}
    c.expect(names == {"sleepy-worker", "sleepy-two"}, "sleeping threads named %r" % names)
    for k in roles["busy"]:
        c.expect(t.threads.get(k) == "busy-worker", "busy thread named %r" % t.threads.get(k))
    for k in roles["main"]:
        c.expect(t.threads.get(k) == "MainThread", "main thread named %r" % t.threads.get(k))
    if len(roles["busy"]) != 1 or not roles["sleeper"]:
        return

    def share(ss, flag):
        tot = sum(s["count"] for s in ss)
        return tot, (sum(s["count"] for s in ss if s["flags"] & flag) / tot if tot else 0)

    busy = by_tid[roles["busy"][0]]
    n_busy, busy_on = share(busy, FLAG_ON_CPU)
    # the busy thread is on CPU in about the share of a CPU the program
    # got (it uses nearly all of that; a floor, as in case_basic);
    # unmeasured (attached), in more samples than a sleeper and a
    # twentieth of them at least
    got = program_share(c, args)
    want = 0.05 if got is None else 0.5 * min(got, 1.0)
    c.expect(busy_on >= want, "busy thread on CPU in %.0f%% of samples (want %.0f %%)"
             % (100 * busy_on, 100 * want))
    for k in roles["sleeper"] + ([] if attached else roles["main"]):
        tot, on = share(by_tid[k], FLAG_ON_CPU)
        c.expect(on <= 0.2, "thread %r on CPU in %.0f%% of samples (should be idle)" % (k, 100 * on))
        c.expect(on < busy_on, "thread %r on CPU in %.0f%% of samples, the busy one in %.0f%%"
                 % (k, 100 * on, 100 * busy_on))
        c.expect(tot >= 0.5 * n_busy, "thread %r has %d samples, busy thread %d: "
                 "every thread must be sampled every tick" % (k, tot, n_busy))
    m = fx.markers
    for k, mark in [(roles["busy"][0], "busy")] + [(k, "sleep") for k in roles["sleeper"]]:
        leaf = [s["frames"][-1] for s in by_tid[k] if s["frames"] and in_file(s["frames"][-1], fx)]
        # busy() ends with "return n" on the line after its loop: a tick that
        # lands in the loop's last microseconds legitimately sees that line,
        # and so do all the ticks of a stall there (a page fault on a busy
        # disk on the way out took 150 ms in CI).  A line-number error would
        # put (nearly) every sample on the wrong line: a majority suffices.
        allowed = {m[mark], m[mark] + 1} if mark == "busy" else {m[mark]}
        at_mark = sum(1 for fr in leaf if fr[2] == m[mark])
        c.expect(leaf and all(fr[2] in allowed for fr in leaf) and at_mark >= 0.5 * len(leaf),
                 "%r leaf lines %r, expected %d" % (k, sorted({fr[2] for fr in leaf}), m[mark]))
    no_gil = [pid for pid, w in t.layouts.items() if w.endswith(", no GIL)")]
    if gil and no_gil:
        # a free-threaded CPython running without its GIL: none to hold,
        # and no sample may say who holds it (spec §7.7)
        c.expect(t.total(lambda s: s["flags"] & (FLAG_GIL_KNOWN | FLAG_HOLDS_GIL)) == 0,
                 "GIL flags set in a process whose layout says no GIL (%r)" % t.layouts)
    elif gil:
        known = t.total(lambda s: s["flags"] & FLAG_GIL_KNOWN)
        c.expect(known >= 0.9 * t.total(), "GIL state known in %d of %d samples" % (known, t.total()))
        _, busy_gil = share([s for s in busy if s["flags"] & FLAG_GIL_KNOWN], FLAG_HOLDS_GIL)
        c.expect(busy_gil >= 0.5, "busy thread holds the GIL in %.0f%% of samples" % (100 * busy_gil))
        for k in roles["sleeper"]:
            _, g = share([s for s in by_tid[k] if s["flags"] & FLAG_GIL_KNOWN], FLAG_HOLDS_GIL)
            c.expect(g <= 0.1, "sleeping thread %r holds the GIL in %.0f%% of samples" % (k, 100 * g))
    else:
        c.expect(t.total(lambda s: s["flags"] & (FLAG_GIL_KNOWN | FLAG_HOLDS_GIL)) == 0,
                 "GIL flags set without --gil")


def case_numpy(c, t, fx, version, args):
    common(c, t, version)
    m = fx.markers

    def at_call(s):
        # the deepest frame of the fixture is the caller of np.dot, on its
        # line; numpy may add Python frames of its own above it (its
        # __array_function__ dispatch), never the fixture's
        own = [fr for fr in s["frames"] if in_file(fr, fx)]
        return own and own[-1][0] == "matmul_loop" and own[-1][2] == m["numpy"]

    total = t.total()
    n = t.total(at_call)
    on = t.total(lambda s: at_call(s) and s["flags"] & FLAG_ON_CPU)
    c.expect(n >= 0.5 * total, "stack at the np.dot line in %d of %d samples" % (n, total))
    # on CPU in about the share of a CPU the program got (a floor, as in
    # case_basic)
    got = program_share(c, args)
    want = 0.7 if got is None else 0.6 * min(got, 1.0)
    c.expect(n and on >= want * n, "np.dot samples on CPU: %d of %d (want %.0f %%)"
             % (on, n, 100 * want))


def case_subprocesses(c, t, fx, version, args):
    common(c, t, version)
    phase = float(args[0])
    root = [p for p in t.processes if p["cmd"].endswith(fx.path + " " + args[0])]
    c.expect(len(root) >= 1, "root process not recorded: %r" % [p["cmd"] for p in t.processes])
    if not root:
        return
    root_pid = root[0]["pid"]
    py = {p["pid"] for p in t.processes if p["interp"].startswith("CPython")}
    c.expect(len(py) >= 4, "%d Python processes recorded, want >= 4" % len(py))
    for fn in ("fork_child_work", "spawn_child_work", "sub_child_work"):
        ss = [s for s in stacks_with(t, fn) if s["pid"] != root_pid]
        n = sum(s["count"] for s in ss)
        c.expect(n >= 0.3 * phase * 1000, "%s: %d samples in child processes" % (fn, n))
        pids = {s["pid"] for s in ss}
        for pid in pids:
            ex = [e for e in t.exits if e["pid"] == pid]
            c.expect(ex and ex[-1]["code"] in (0, -1) and ex[-1]["signal"] == 0,
                     "%s child %d: exit record %r" % (fn, pid, ex))
        c.expect(not stacks_with(t, fn, root_pid), "%s sampled in the parent" % fn)
    c.expect(stacks_with(t, "parent_work", root_pid), "parent_work not sampled in the parent")
    ex = [e for e in t.exits if e["pid"] == root_pid]
    c.expect(ex and ex[-1]["code"] == 0, "root exit record %r" % ex)


def case_single(c, t, fx, version, args):
    """Only the root process recorded (--no-subprocesses)."""
    pids = {p["pid"] for p in t.processes}
    c.expect(len(pids) == 1, "%d processes recorded with --no-subprocesses" % len(pids))


def case_accuracy(c, t, fx, version, args):
    """trec's on-CPU shares per leaf function against the program's own
    measurement.  A sample is on CPU when its thread ran for the sample's
    period (trec weighs the CPU time it got), so the reference is each
    function's CPU time (time.thread_time), on an idle machine and on an
    overloaded one alike (where the program got well under its
    wall-clock time as CPU, runnable-state sampling measured wall-clock
    time instead); the wall-clock shares are printed beside."""
    common(c, t, version)
    shares_file, measured_file = args[0], args[1]
    with open(measured_file) as f:
        measured = json.load(f)
    cpu, wall = measured["cpu"], measured["wall"]
    got = {}
    with open(shares_file) as f:
        for line in f:
            fn, _, n = line.rstrip("\n").split("\t")
            got[fn] = int(n)
    tot_s = sum(got.get(fn, 0) for fn in cpu)
    c.expect(tot_s >= 1000, "only %d on-CPU samples in the work functions" % tot_s)
    busy = sum(cpu.values()) / sum(wall.values())
    ref, ref_name = cpu, "CPU time"
    print("  the program ran on CPU %.0f%% of its wall-clock time: comparing with %s"
          % (100 * busy, ref_name))
    worst = 0.0
    for fn in sorted(cpu):
        pc = 100 * cpu[fn] / sum(cpu.values())
        pw = 100 * wall[fn] / sum(wall.values())
        pr = 100 * ref[fn] / sum(ref.values())
        ps = 100 * got.get(fn, 0) / tot_s if tot_s else 0
        print("  %s: CPU %.2f%%, wall %.2f%%, trec %.2f%% (%d samples)"
              % (fn, pc, pw, ps, got.get(fn, 0)))
        worst = max(worst, abs(pr - ps))
        c.expect(abs(pr - ps) <= 2.0, "%s: trec %.2f%% vs %s %.2f%%" % (fn, ps, ref_name, pr))
    print("  worst difference %.2f percentage points" % worst)


def case_crash(c, t, fx, version, args):
    common(c, t, version)
    ex = t.exits
    c.expect(len(ex) == 1 and ex[0]["signal"] == 11, "exit records %r, want one with signal 11" % ex)
    c.expect(stacks_with(t, "burn"), "no samples of burn before the crash")


def case_killed(c, t, fx, version, args):
    c.expect(t.end is None, "a killed recorder cannot have written the segment end")
    n = t.total()
    want = float(args[0]) * 1000 * 0.5
    c.expect(n >= want, "%d samples readable, want >= %d" % (n, want))
    c.expect(stacks_with(t, "burn"), "no burn samples")


def case_stdout(c, t, fx, version, args):
    common(c, t, version)
    c.expect(stacks_with(t, "chatter"), "no samples of chatter")


def case_attach(c, t, fx, version, args):
    c.expect(t.end is not None, "no segment end")
    c.expect(not t.exits, "exit recorded for a target that is still running: %r" % t.exits)
    c.expect(any(p["interp"] == "CPython " + version for p in t.processes), "no process record")
    case_threads(c, t, fx, version, args + ["attached"])


CASES = {
    "basic": case_basic, "threads": case_threads, "numpy": case_numpy,
    "subprocesses": case_subprocesses, "single": case_single, "accuracy": case_accuracy,
    "crash": case_crash, "killed": case_killed, "stdout": case_stdout, "attach": case_attach,
}


def main():
    case, trace, fixture, version = sys.argv[1:5]
    c = Checker()
    CASES[case](c, Trace(trace), Fixture(fixture), version, sys.argv[5:])
    c.done()


if __name__ == "__main__":
    main()
