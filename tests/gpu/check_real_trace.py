# tests/gpu/check_real_trace.py — checks a trace recorded by trec of
# tests/gpu/real_torch_check.py against what the script measured itself.
# Input: `trc-dump -e` output of the trace, the traced run's JSON, and
# optionally a bare run's JSON for the overhead ratio; with --trace and
# --bin, also what the converters make of the trace (docs/gpu.md, "The
# real check"): the script's syncs found by `trc2collapsed --syncs` at the
# lines it reported, the idle headline and top idle stacks of `trc-stats
# --gpu`, and the share of GPU time with a Python line, whole and on the
# training step (goal >= 99 %).  Prints one line per check (PASS/FAIL),
# `info` and `note` lines; exit 0 when all pass.
#
# Usage: check_real_trace.py EVENTS.txt TRACED.json [BARE.json]
#            [--trace RUN.trc --bin DIR] [--runs DIR N]
# The overhead is judged over the interleaved runs of --runs (else on the
# one pair given): per window, the median over the runs of its traced
# over bare host time, at most 1.05 for every window but the pageable
# copies.
import argparse
import json
import os
import re
import subprocess
import sys

TOL = 0.05
EARLY_NS = 2000   # an activity may start this much before its call (clock reads)
STR = r'"((?:[^"\\]|\\.)*)"'
FRAME = re.compile(STR + "@" + STR + r":(\d+)")


def unq(s):
    return bytes(s, "utf-8").decode("unicode_escape") if "\\" in s else s


def fields(line):
    """key=value pairs of one trc-dump -e line; quoted values unquoted."""
    out = {}
    i = line.find(" ")
    kind = line[:i] if i > 0 else line
    rest = line[i + 1:] if i > 0 else ""
    pos = 0
    while pos < len(rest):
        eq = rest.find("=", pos)
        if eq < 0:
            break
        key = rest[pos:eq]
        j = eq + 1
        in_q = False
        while j < len(rest):
            c = rest[j]
            if c == "\\" and in_q:
                j += 2
                continue
            if c == '"':
                in_q = not in_q
            elif c == " " and not in_q:
                break
            j += 1
        val = rest[eq + 1:j]
        if len(val) >= 2 and val[0] == '"' and val[-1] == '"' and key != "stack":
            val = unq(val[1:-1])
        out[key] = val
        pos = j + 1
    return kind, out


def ns(s):
    sec, _, frac = s.partition(".")
    return int(sec) * 1000000000 + int((frac + "000000000")[:9])


def load(path):
    ev = {"api_call": [], "gpu_kernel": [], "gpu_memcpy": [], "gpu_memset": [], "marker": [],
          "loss": [], "segment": []}
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            kind, fl = fields(line.rstrip("\n"))
            if kind in ev:
                ev[kind].append(fl)
    return ev


results = []


def check(ok, what):
    results.append(ok)
    print(("PASS  " if ok else "FAIL  ") + what)


def tool(bin_dir, name, *argv):
    """A converter's standard output; it may exit 1 over recorded losses
    and still print everything, so only an empty output is a note."""
    try:
        p = subprocess.run([os.path.join(bin_dir, name)] + list(argv), stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, universal_newlines=True)
    except OSError as e:
        print("note  %s: cannot run: %s" % (name, e))
        return ""
    if not p.stdout:
        print("note  %s %s: exit %d, no output: %s"
              % (name, " ".join(argv), p.returncode, p.stderr.strip()[:200]))
    return p.stdout


FOLDED_LINE = re.compile(r"\(([^()]*):(\d+)\)$")


def sync_lines(bin_dir, trace, weight):
    """{(file's base name, line): weight} over the stacks of
    `trc2collapsed --syncs`, each stack counted once per line it holds."""
    per = {}
    argv = ["--syncs"] + (["--weight", "samples"] if weight == "calls" else []) + [trace]
    for ln in tool(bin_dir, "trc2collapsed", *argv).splitlines():
        stack, _, w = ln.rpartition(" ")
        seen = set()
        for fr in stack.split(";")[:-1]:   # the leaf is the API call's name
            m = FOLDED_LINE.search(fr)
            if m:
                seen.add((os.path.basename(m.group(1)), int(m.group(2))))
        for key in seen:
            per[key] = per.get(key, 0) + int(w)
    return per


def check_syncs(bin_dir, trace, traced):
    """Every sync the script reported is found at its line, at least as
    many blocking calls as the line ran."""
    if not traced.get("syncs"):
        return
    calls = sync_lines(bin_dir, trace, "calls")
    us = sync_lines(bin_dir, trace, "us")
    base = os.path.basename(traced["script"])
    for sy in traced.get("syncs", []):
        key = (base, sy["line"])
        n = calls.get(key, 0)
        check(n >= sy["calls"], "syncs: %s at %s:%d: %d blocking calls in trc2collapsed --syncs, "
              "%.3f ms blocked (want >= %d calls)"
              % (sy["what"], base, sy["line"], n, us.get(key, 0) / 1e3, sy["calls"]))


SHARE = re.compile(r"([\d.]+)% of GPU time has a Python line \(direct ([\d.]+)%, via a "
                   r"waiting thread ([\d.]+)%, none ([\d.]+)%\)")


def share_line(stats):
    """The share sentence of `trc-stats --gpu` output, or None."""
    for ln in stats.splitlines():
        if SHARE.match(ln):
            return ln
    return None


def info_gpu(bin_dir, trace):
    """info lines: the share of the whole run, each device's idle
    headline and its top three idle stacks (trc-stats --gpu)."""
    stats = tool(bin_dir, "trc-stats", "--gpu", trace)
    print("info  share, whole run: %s" % (share_line(stats) or "no share line in trc-stats --gpu"))
    n_dev = 0
    top = 0
    for ln in stats.splitlines():
        if re.match(r"\s+GPU \d+: compute busy ", ln):
            print("info  idle: %s" % ln.strip())
            n_dev += 1
            top = 0
        elif n_dev and re.match(r"\s+[\d.]+% idle in ", ln) and top < 3:
            top += 1
            print("info  idle: top stack %d: %s" % (top, ln.strip()))
    if not n_dev:
        print("info  idle: no idle headline in trc-stats --gpu")


def check_train_share(bin_dir, trace, start_ns, w):
    """The share of the training step's GPU time (the activities in its
    window, trc-stats --gpu --from/--to) with a Python line: >= 99 %."""
    t0 = max(0, w["cpu_start_ns"] - start_ns) / 1e9
    t1 = max(0, w["cpu_end_ns"] - start_ns) / 1e9
    line = share_line(tool(bin_dir, "trc-stats", "--gpu", "--from", "%.9f" % t0,
                           "--to", "%.9f" % max(t1, t0 + 1e-9), trace))
    m = SHARE.match(line or "")
    check(m is not None and float(m.group(1)) >= 99.0,
          "%s: %s on the training step (%.6f s to %.6f s of the trace; want >= 99 %%)"
          % (w["name"], line or "no share line in trc-stats --gpu", t0, t1))


TRAIN_STEP = re.compile(r"^train_step \((.*):(\d+)\)$")


def check_train_via(bin_dir, trace, start_ns, w, traced):
    """The GPU time of the training step charged via a waiting thread
    (autograd's launches: trc2collapsed --gpu over the step's window)
    goes to Python stacks only, never to a thread without Python frames
    (an idle OpenMP pool's "[native thread NAME]": the first real run
    showed that).  Where it lands is info: the share under the script's
    train_step and at its loss.backward() line, the truth for every one
    of those launches; the rest is the main thread's 1 ms sampling of a
    step that takes about 1 ms (the nearest sample may be the forward
    pass, the optimizer, or the window's closing synchronize)."""
    t0 = max(0, w["cpu_start_ns"] - start_ns) / 1e9
    t1 = max(0, w["cpu_end_ns"] - start_ns) / 1e9
    out = tool(bin_dir, "trc2collapsed", "--gpu", "--from", "%.9f" % t0,
               "--to", "%.9f" % max(t1, t0 + 1e-9), trace)
    via = in_step = at_backward = native = 0
    base = os.path.basename(traced["script"])
    for ln in out.splitlines():
        stack, _, wt = ln.rpartition(" ")
        if "[via thread " not in stack or not wt.isdigit():
            continue
        waiter = stack.split(";[via thread ")[0]
        via += int(wt)
        frames = waiter.split(";")
        if not any(FOLDED_LINE.search(f) for f in frames):
            native += int(wt)
        steps = [m for m in (TRAIN_STEP.match(f) for f in frames) if m]
        if any(os.path.basename(m.group(1)) == base for m in steps):
            in_step += int(wt)
        if any(int(m.group(2)) == traced.get("backward_line", -1) for m in steps):
            at_backward += int(wt)
    check(via > 0 and native == 0,
          "train: none of the %d us charged via a waiting thread is on a stack without Python "
          "frames (%d us are)" % (via, native))
    if via:
        print("info  train: %.2f %% of it under train_step%s"
              % (100.0 * in_step / via,
                 ", %.2f %% at the loss.backward() line (%s:%d)"
                 % (100.0 * at_backward / via, base, traced["backward_line"])
                 if traced.get("backward_line") else ""))


# The copies of pageable memory stage through the driver's buffers, whose
# timing varies far more from run to run than any tracer's cost: the
# overhead is judged on the other windows (the pinned copies included).
NOT_JUDGED = {"copies"}


def run_pairs(spec):
    """[(bare, traced)] from --runs DIR N: DIR/bare-I.json and
    DIR/traced-I.json for I in 1..N, the interleaved runs."""
    d, n = spec
    return [(json.load(open(os.path.join(d, "bare-%d.json" % i))),
             json.load(open(os.path.join(d, "traced-%d.json" % i))))
            for i in range(1, int(n) + 1)]


def host_ms(w):
    return (w["cpu_end_ns"] - w["cpu_start_ns"]) / 1e6


def check_overhead(pairs, traced, api):
    """Overhead per window: the median over the interleaved runs of its
    ratio (traced / bare host time), each window at most 1.05, the
    pageable copies left out.  Info lines first: each window's ratios,
    and how many API calls this trace has in it (the launch-bound windows
    show the per-call cost; kernel-bound ones hide it)."""
    per = {}
    for b, t in pairs:
        bw = {x["name"]: x for x in b.get("windows", [])}
        for w in t.get("windows", []):
            if w["name"] in bw and host_ms(bw[w["name"]]) > 0:
                per.setdefault(w["name"], []).append(host_ms(w) / host_ms(bw[w["name"]]))
    mine = {w["name"]: w for w in traced.get("windows", [])}
    for name, rs in per.items():
        w = mine.get(name)
        n = sum(1 for a in api.values()
                if w and a["pid"] == w["pid"] and w["cpu_start_ns"] <= a["t0"] < w["cpu_end_ns"])
        med = median(rs)
        print("info  overhead: %-12s median ratio %.3f over %d runs (%s)%s%s"
              % (name, med, len(rs), " ".join("%.3f" % r for r in rs),
                 "; not judged (pageable)" if name in NOT_JUDGED else "",
                 "; %d API calls in this trace's window" % n if n else ""))
    judged = {name: median(rs) for name, rs in per.items() if name not in NOT_JUDGED}
    if not judged:
        check(False, "overhead: no window measured both bare and traced")
        return
    over = sorted(name for name, m in judged.items() if m > 1 + TOL)
    check(not over, "overhead: every window's median ratio over %d runs <= 1.05, pageable copies "
          "left out (%s)" % (len(pairs), ", ".join("%s %.3f" % (n, judged[n]) for n in sorted(judged))))


def median(xs):
    xs = sorted(xs)
    k = len(xs)
    return (xs[(k - 1) // 2] + xs[k // 2]) / 2 if k else 0.0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("events")
    ap.add_argument("traced")
    ap.add_argument("bare", nargs="?")
    ap.add_argument("--trace", help="the trace itself, for the converters' views")
    ap.add_argument("--bin", help="where trc-stats and trc2collapsed are")
    ap.add_argument("--runs", nargs=2, metavar=("DIR", "N"),
                    help="the interleaved runs' JSON (DIR/bare-I.json, DIR/traced-I.json) "
                         "for the overhead")
    args = ap.parse_args()
    events = load(args.events)
    traced = json.load(open(args.traced))
    bare = json.load(open(args.bare)) if args.bare else None
    views = args.trace and args.bin
    start_ns = ns(events["segment"][0]["start"]) if events["segment"] else 0

    api = {}
    for a in events["api_call"]:
        pid, _, tid = a["thread"].partition("/")
        a["pid"], a["tid"] = int(pid), int(tid)
        a["t0"], a["t1"] = ns(a["start"]), ns(a["end"])
        a["frames"] = [(unq(f), unq(fi), int(ln)) for f, fi, ln in FRAME.findall(a.get("stack", ""))]
        api[(a["pid"], int(a["correlation"]))] = a
    acts = events["gpu_kernel"] + events["gpu_memcpy"] + events["gpu_memset"]
    for k in acts:
        k["t0"], k["t1"] = ns(k["start"]), ns(k["end"])
    kernels = events["gpu_kernel"]
    check(len(kernels) > 0, "%d kernels, %d copies, %d memsets, %d API calls recorded"
          % (len(kernels), len(events["gpu_memcpy"]), len(events["gpu_memset"]), len(api)))

    orphans = [k for k in acts if (int(k["pid"]), int(k["correlation"])) not in api]
    check(not orphans, "every activity correlates to a recorded API call (%d do not)" % len(orphans))
    leads = [api[(int(k["pid"]), int(k["correlation"]))]["t0"] - k["t0"] for k in acts
             if (int(k["pid"]), int(k["correlation"])) in api]
    early = [d for d in leads if d > EARLY_NS]
    check(not early, "no activity starts more than %d ns before its API call (%d do; worst "
          "lead %d ns)" % (EARLY_NS, len(early), max(leads) if leads else 0))
    gpu_losses = 0
    for l in events["loss"]:
        print("note  loss: %s" % " ".join("%s=%s" % kv for kv in l.items()))
        if l.get("kind") == "gpu_dropped":
            gpu_losses += int(l.get("count", "1"))
    check(gpu_losses == 0, "no GPU records dropped or with bad timestamps (%d)" % gpu_losses)

    markers = {m["name"] for m in events["marker"]}
    for w in traced["windows"]:
        name, pid = w["name"], w["pid"]
        check("trc-check:" + name in markers, "NVTX range trc-check:%s recorded" % name)
        launches = [a for a in api.values() if a["pid"] == pid and int(a["flags"], 16) & 2
                    and w["cpu_start_ns"] <= a["t0"] <= w["cpu_launch_end_ns"]]
        corr = {int(a["correlation"]) for a in launches}
        ks = [k for k in kernels if int(k["pid"]) == pid and int(k["correlation"]) in corr]
        k_ms = sum(k["t1"] - k["t0"] for k in ks) / 1e6
        print("info  %-11s %4d launches, %4d kernels, kernel time %.3f ms, events %.3f ms"
              % (name, len(launches), len(ks), k_ms, w["gpu_ms"]))
        if w["kernels_expected"]:
            exp = w["kernels_expected"]
            check(abs(len(ks) - exp) <= TOL * exp,
                  "%s: %d kernels, expected %d (within 5%%)" % (name, len(ks), exp))
        if name == "matmul":
            check(abs(k_ms - w["gpu_ms"]) <= TOL * w["gpu_ms"],
                  "matmul: kernel time %.3f ms vs torch.cuda.Event %.3f ms (within 5%%)"
                  % (k_ms, w["gpu_ms"]))
        if name == "train":
            fwd = [a for a in launches
                   if any(fi == traced["script"] and ln == traced["forward_line"]
                          for _, fi, ln in a["frames"])]
            nopy = [a for a in launches if int(a["flags"], 16) & 1]
            print("info  train: %d launches at the forward line, %d without Python frames "
                  "(autograd threads)" % (len(fwd), len(nopy)))
            want = 3 * w["ops"]
            check(len(fwd) >= (1 - TOL) * want,
                  "train: forward kernels carry the Python line %s:%d (%d launches, %.1f %% of "
                  "the %d expected, want >= 95 %%)"
                  % (traced["script"], traced["forward_line"], len(fwd),
                     100.0 * len(fwd) / want if want else 0, want))
            if views:
                check_train_share(args.bin, args.trace, start_ns, w)
                check_train_via(args.bin, args.trace, start_ns, w, traced)

    if views:
        check_syncs(args.bin, args.trace, traced)
        info_gpu(args.bin, args.trace)

    pairs = run_pairs(args.runs) if args.runs else ([(bare, traced)] if bare else [])
    if pairs:
        check_overhead(pairs, traced, api)
    print("%d of %d checks passed" % (sum(results), len(results)))
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
