# tests/gpu/check_real_trace.py — checks a trace recorded by trec of
# tests/gpu/real_torch_check.py against what the script measured itself
#.  Input: `trc-dump -e` output of the
# trace, the traced run's JSON, and optionally a bare run's JSON for the
# overhead ratio.  Prints one line per check; exit 0 when all pass.
#
# Usage: check_real_trace.py EVENTS.txt TRACED.json [BARE.json]
import json
import re
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
          "loss": []}
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


def main():
    events = load(sys.argv[1])
    traced = json.load(open(sys.argv[2]))
    bare = json.load(open(sys.argv[3])) if len(sys.argv) > 3 else None

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

    if bare:
        ratio = traced["wall_s"] / bare["wall_s"]
        check(ratio <= 1 + TOL, "overhead: traced %.3f s / bare %.3f s = %.3f (<= 1.05; the "
              "median pair of the interleaved runs)" % (traced["wall_s"], bare["wall_s"], ratio))
    print("%d of %d checks passed" % (sum(results), len(results)))
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
