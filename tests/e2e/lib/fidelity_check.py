"""Compares a trace of a fidelity workload (fixtures/workloads/fidelity_*.py,
read by trc_stacks) with the in-process reference the workload wrote
(tests/e2e/lib/inproc_sampler.py).

usage: fidelity_check.py STACKS.txt REF.json CHECK...
CHECK is one of
  torn=PCT      ticks lost to torn reads at most PCT % of the samples
  depth=PTS     share of samples in each depth decile below main within
                PTS points of the reference's
  incl=PTS[,FLOOR]
                share of samples each function is on the stack under
                main (those at FLOOR %, default 5, or more in either)
                within PTS points
  stackless=N   at most N on-CPU samples with no Python frame between
                two samples of the same thread that have frames
depth and incl compare trec's on-CPU samples (flag ON_CPU: the thread ran
for at least half of the sample's period), what trc-stats and the other
views show by default, with the reference.  The reference's timer signal
is handled only when the program runs (signals that fall due while it
waits for a CPU become one), so it counts CPU time too; trec's off-CPU
samples of a thread waiting for a CPU repeat the stack it was preempted
at for as long as it waits, which on a loaded machine weights a few
stacks by chance.  The worst decile over all samples is printed as well.
Prints one line per check; exit 1 if any fails."""
import collections
import json
import sys


def read_trace(path, root):
    depth, incl = collections.Counter(), collections.Counter()
    depth_all = collections.Counter()
    invalid = samples = stackless = 0
    for line in open(path, encoding="utf-8"):
        p = line.rstrip("\n").split("\t")
        if p[0] == "loss" and p[1] == "2" and p[3] == "0":
            invalid += int(p[2])
        elif p[0] == "stackless":
            stackless += int(p[3])
        elif p[0] == "sample":
            count = int(p[4])
            samples += count
            # 3.11+ names are qualified (Node.evaluate, f.<locals>.<genexpr>):
            # the reference has the code object's own name
            frames = [f.split("|") for f in p[5].split(";")] if len(p) > 5 and p[5] else []
            names = [f[0].rsplit(".", 1)[-1] for f in frames]
            if "_handler" in names:   # the reference's own handler, running in the program
                names = names[:names.index("_handler")]
            # the workload's main, not site.main at start-up
            roots = [i for i, n in enumerate(names) if n == root and "fidelity_" in frames[i][1]]
            if not roots:
                continue
            at = roots[-1]
            below = names[at + 1:]
            depth_all[len(below)] += count
            if not int(p[3]) & 0x1:   # off CPU: not in the default views
                continue
            depth[len(below)] += count
            for n in set(below):
                incl[n] += count
    return depth, incl, invalid, samples, stackless, depth_all


def deciles(counts):
    total = sum(counts.values()) or 1
    out = [0.0] * 7
    for d, n in counts.items():
        out[min(d // 10, 6)] += 100.0 * n / total
    return out


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    ref = json.load(open(sys.argv[2]))
    depth, incl, invalid, samples, stackless, depth_all = read_trace(sys.argv[1], ref["root"])
    rdepth = collections.Counter({int(k): v for k, v in ref["depth"].items()})
    ok = True
    n_trec, n_ref = sum(depth.values()), sum(rdepth.values())
    print(f"samples under {ref['root']}: trec {n_trec} on CPU ({sum(depth_all.values())} in all), "
          f"reference {n_ref}")
    for check in sys.argv[3:]:
        what, _, limit = check.partition("=")
        limit, _, floor = limit.partition(",")
        limit, floor = float(limit), float(floor or 5)
        if what == "torn":
            pct = 100.0 * invalid / max(samples + invalid, 1)
            good = pct <= limit
            print(f"{'ok  ' if good else 'FAIL'} torn reads: {invalid} of {samples + invalid} ticks ({pct:.2f} %, limit {limit} %)")
        elif what == "depth":
            a, b = deciles(depth), deciles(rdepth)
            worst = max(abs(x - y) for x, y in zip(a, b))
            good = worst <= limit
            worst_all = max(abs(x - y) for x, y in zip(deciles(depth_all), b))
            print(f"{'ok  ' if good else 'FAIL'} depth deciles (0-9, 10-19, ...): trec {[round(x, 1) for x in a]} "
                  f"reference {[round(x, 1) for x in b]}: worst {worst:.1f} points (limit {limit}; "
                  f"all samples, on and off CPU: {worst_all:.1f})")
        elif what == "incl":
            rincl = ref["incl"]
            worst, worst_fn, good = 0.0, "", True
            for fn in sorted(set(incl) | set(rincl)):
                a = 100.0 * incl.get(fn, 0) / max(n_trec, 1)
                b = 100.0 * rincl.get(fn, 0) / max(n_ref, 1)
                if max(a, b) < floor:
                    continue
                if abs(a - b) > worst:
                    worst, worst_fn = abs(a - b), f"{fn} trec {a:.1f} % reference {b:.1f} %"
            good = worst <= limit
            print(f"{'ok  ' if good else 'FAIL'} functions on the stack: worst {worst:.1f} points ({worst_fn}; limit {limit}, functions at {floor:g} % or more)")
        elif what == "stackless":
            good = stackless <= limit
            print(f"{'ok  ' if good else 'FAIL'} on-CPU samples with no Python frame inside a thread's run: {stackless} (limit {int(limit)})")
        else:
            sys.exit(f"fidelity_check: unknown check {check}")
        ok &= good
    if n_trec < 500 or n_ref < 500:
        print(f"FAIL too few samples to judge (trec {n_trec}, reference {n_ref})")
        ok = False
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
