"""The truth for trec's fidelity tests, measured inside the program: a
sampler that interrupts the program every millisecond of wall-clock
time (SIGALRM, ITIMER_REAL) and walks the interrupted frame's f_back
chain.  It records, per sample, the depth below the frame of the
function named ROOT (the workload's main) and the innermost function's
name; and counts samples taken with no Python frame at all, which
in-process can never happen while Python code runs (the handler runs
between bytecodes of the interrupted frame).

A handler runs only where the interpreter checks for signals (loop
back-edges, function entries), so a workload whose time is spent in
loops at every depth is what this measures without bias of its own.

Usage from a workload: record(main), with argv OUT.json SECONDS: runs
main(SECONDS) under the sampler and writes its counts to OUT.json."""
import json
import signal
import sys


class Sampler:
    def __init__(self, root, interval=0.001):
        self.root = root
        self.interval = interval
        self.depth = {}     # depth below ROOT's frame -> samples
        self.leaf = {}      # innermost function -> samples (only under ROOT)
        self.incl = {}      # function anywhere under ROOT -> samples
        self.outside = 0    # samples not under ROOT
        self.empty = 0      # samples with no frame
        self.busy = False   # in the handler: a signal then is not a sample
        self.nested = 0     # signals that came while the handler ran

    def _handler(self, sig, frame):
        # A program slowed down (trec --blocking stops it for every read)
        # can take a signal while the handler still runs.  The program
        # is where the handler found it all that time, so such a signal
        # counts as one more sample of that same place.
        if self.busy:
            self.nested += 1
            return
        self.busy = True
        before = self.nested
        try:
            where = self._where(frame)
        finally:
            self.busy = False
        self._count(where, 1 + self.nested - before)

    def _where(self, frame):
        """None (no frame), "outside" (not under ROOT), or (depth below
        ROOT, innermost function, functions under ROOT)."""
        if frame is None:
            return None
        n, f, root_at, names = 0, frame, None, []
        while f is not None:
            if f.f_code.co_name == self.root:
                root_at = n
            if root_at is None:
                names.append(f.f_code.co_name)
            n += 1
            f = f.f_back
        if root_at is None:
            return "outside"
        return root_at, frame.f_code.co_name, set(names)

    def _count(self, where, k):
        if where is None:
            self.empty += k
        elif where == "outside":
            self.outside += k
        else:
            depth, leaf, names = where
            self.depth[depth] = self.depth.get(depth, 0) + k
            self.leaf[leaf] = self.leaf.get(leaf, 0) + k
            for name in names:
                self.incl[name] = self.incl.get(name, 0) + k

    def start(self):
        signal.signal(signal.SIGALRM, self._handler)
        signal.setitimer(signal.ITIMER_REAL, self.interval, self.interval)

    def stop(self):
        signal.setitimer(signal.ITIMER_REAL, 0, 0)
        signal.signal(signal.SIGALRM, signal.SIG_DFL)

    def dump(self, path):
        with open(path, "w") as out:
            json.dump({"root": self.root, "depth": self.depth, "leaf": self.leaf, "incl": self.incl,
                       "outside": self.outside, "empty": self.empty, "nested": self.nested}, out)


def record(main, root="main"):
    """Runs main(SECONDS) under a Sampler for ROOT and writes its counts
    to OUT.json (argv: OUT.json SECONDS)."""
    ref = Sampler(root)
    ref.start()
    try:
        main(float(sys.argv[2]))
    finally:
        ref.stop()
    ref.dump(sys.argv[1])
