"""A second truth for trec's fidelity tests whose timing does not depend
on where the interpreter checks for signals: a SIGALRM sampler whose
handler is C (sigstack.c, built at test time against the interpreter
under test) and reads the interrupted thread's frames at the instant
the signal comes.

Why a second one: inproc_sampler.py's handler is Python, and CPython
runs a Python handler only at its next eval-breaker check after the
signal came (a function's entry, a loop's back-edge).  A signal that
falls due during C work (type.__call__ allocating an object, a
property's descriptor call) is handled at the entry of the next Python
function, which is then charged with its caller's C time: on
fixtures/workloads/fidelity_calls.py Node.__init__ gets several times
its share.  Two other ways were tried and are not independent, or not
exact enough: a sampler thread reading sys._current_frames() needs the
GIL, which the running thread gives up only at an eval-breaker check,
so it sees the same places; sys.setprofile's exact times cost 1.2 to
3 microseconds per call or return event against about 0.1 microsecond
of the program's own time per event on this workload, and what is left
of that cost after calibration (0.4 to 0.55 microseconds per event,
uneven) outweighs the shares to be measured (docs/trec.md, "Two
references").

The C handler stores the code objects' addresses, innermost first, in
a buffer allocated beforehand (it allocates nothing and takes no lock);
names are given afterwards to the addresses of the workload's own code
objects, which stay alive.  A sample with any other address under ROOT,
or whose walk faulted (sigstack.c), is counted as torn and left out.
Frames are the ones Python itself shows: from 3.11 not the frame a call
has pushed but not yet started (CPython's _PyFrame_IsIncomplete), so a
signal in the middle of a call is charged to the caller, as a signal in
a C function is.  The timer is ITIMER_REAL every half millisecond
(inproc_sampler.py: every millisecond; more samples make the shares
less noisy): a signal that falls due while the program waits for a CPU
is handled where it was preempted, so it too counts CPU time.

Writes the same JSON as inproc_sampler.py (and "torn"), so
fidelity_check.py reads either.
usage: sigstack_ref.py WORKLOAD.py OUT.json SECONDS [ROOT], with
_sigstack importable (tests/e2e/trec_fidelity.sh's csig_ref builds it)."""
import importlib.util
import json
import sys
import types

import _sigstack


def code_names(module):
    """id -> name of every code object of MODULE's functions, classes'
    methods and properties, and the code nested in them (generator
    expressions, comprehensions, inner functions)."""
    names, todo = {}, []

    def add(obj):
        if isinstance(obj, types.FunctionType) and obj.__module__ == module.__name__:
            todo.append(obj.__code__)
        elif isinstance(obj, property):
            for f in (obj.fget, obj.fset, obj.fdel):
                add(f)
        elif isinstance(obj, (staticmethod, classmethod)):
            add(obj.__func__)

    for obj in vars(module).values():
        add(obj)
        if isinstance(obj, type) and obj.__module__ == module.__name__:
            for member in vars(obj).values():
                add(member)
    while todo:
        code = todo.pop()
        if id(code) not in names:
            names[id(code)] = code.co_name
            todo.extend(c for c in code.co_consts if isinstance(c, types.CodeType))
    return names


def count(samples, names, root_id):
    depth, leaf, incl = {}, {}, {}
    outside = empty = torn = 0
    for stack in samples:
        if not stack:
            empty += 1
            continue
        if stack == (1,):   # the walk faulted (sigstack.c)
            torn += 1
            continue
        if root_id not in stack:
            outside += 1
            continue
        at = stack.index(root_id)
        below = [names.get(a) for a in stack[:at]]
        if None in below:   # no code of the workload's: garbage read
            torn += 1
            continue
        depth[at] = depth.get(at, 0) + 1
        top = below[0] if below else names[root_id]
        leaf[top] = leaf.get(top, 0) + 1
        for name in set(below):
            incl[name] = incl.get(name, 0) + 1
    return depth, leaf, incl, outside, empty, torn


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    path, out, seconds = sys.argv[1], sys.argv[2], float(sys.argv[3])
    root = sys.argv[4] if len(sys.argv) > 4 else "main"
    spec = importlib.util.spec_from_file_location("fidelity_workload", path)
    workload = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(workload)
    run = getattr(workload, root)
    interval = 0.0005
    _sigstack.start(interval, int(seconds / interval * 2) + 1000)
    try:
        run(seconds)
    finally:
        samples, dropped = _sigstack.stop()
    depth, leaf, incl, outside, empty, torn = count(samples, code_names(workload), id(run.__code__))
    with open(out, "w") as f:
        json.dump({"root": root, "depth": depth, "leaf": leaf, "incl": incl, "outside": outside,
                   "empty": empty, "nested": 0, "torn": torn, "dropped": dropped}, f)


if __name__ == "__main__":
    main()
