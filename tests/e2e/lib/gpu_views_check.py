#!/usr/bin/env python3
"""Structural checks of trc2chrome / trc2speedscope output with GPU data,
independent of the C code (python3's json and csv only).  Used by
tests/e2e/conv_speedscope_chrome_gpu.sh.

  gpu_views_check.py chrome TRACE.json GPU_TRACE.csv [--flows N] [--counters]
  gpu_views_check.py speedscope FILE.json GPU_TRACE.csv

GPU_TRACE.csv is `trc2nvvp --print-gpu-trace --csv` of the same input: the
kernels and activities the views must agree with, to the nanosecond.
Chrome: X slices nest per (pid, tid), also under speedscope's importer
(replayed); every flow (bind_id) has exactly one flow_out end on a launch
API call of a process and one flow_in end on a GPU activity of the same
correlation id that starts after the call; the kernel time of each stream
(sum of "kernel" slices) equals the CSV's; the slices of each stream are
exactly the CSV's activities (by start, duration, name); every pid and
(pid, tid) carrying events is named; GPU processes are "GPU N..." and
sort after the CPU ones.  speedscope: the evented profiles obey the
format's rules (replayed: "at" never decreases, C closes the frame on
top, all closed), and each stream profile's top-level time equals the
union of that stream's CSV intervals.  Exit 0 when all hold, else 1 with
one line per failure.
"""
import csv
import json
import re
import sys
from collections import defaultdict
from decimal import Decimal

GPU_PID = 0x7FFF0000
errors = []


def fail(msg):
    errors.append(msg)


def ns(us_text):
    """Microsecond decimal text (or Decimal) -> integer ns, exact."""
    v = Decimal(us_text) * 1000
    if v != v.to_integral_value():
        fail(f"time {us_text} us is not a whole number of ns")
    return int(v)


UNIT_NS = {"ns": 1, "us": 1000, "ms": 1000000, "s": 1000000000}


def read_csv(path):
    """Activities of trc2nvvp --print-gpu-trace --csv:
    list of dict(start, dur (ns), device, context, stream, name, kernel)."""
    with open(path, newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    head, units = rows[0], rows[1]
    col = {h: i for i, h in enumerate(head)}
    u_start = UNIT_NS[units[col["Start"]]]
    u_dur = UNIT_NS[units[col["Duration"]]]
    acts = []
    for r in rows[2:]:
        if not r:
            continue
        dev = int(re.search(r"\((\d+)\)$", r[col["Device"]]).group(1))
        start = Decimal(r[col["Start"]]) * u_start
        dur = Decimal(r[col["Duration"]]) * u_dur
        acts.append(dict(start=int(start), dur=int(dur), device=dev,
                         context=int(r[col["Context"]]), stream=int(r[col["Stream"]]),
                         name=r[col["Name"]], kernel=r[col["Grid X"]] != ""))
    return acts


def check_nesting(key, slices):
    """slices: (start_ns, end_ns, name); every pair nests or is disjoint."""
    stack = []
    for start, end, name in sorted(slices, key=lambda s: (s[0], -s[1])):
        if end <= start:
            fail(f"{key}: empty slice {name!r}")
        while stack and stack[-1] <= start:
            stack.pop()
        if stack and end > stack[-1]:
            fail(f"{key}: slice {name!r} [{start},{end}] crosses its parent")
            return
        stack.append(end)


def replay_speedscope_chrome(key, evs):
    """speedscope 1.25's Chrome importer, replayed: X -> B/E in doubles
    relative to the track's first slice; ties broken as it does."""
    def k(e):
        return e["name"] + (" " + json.dumps(e["args"], separators=(",", ":"), default=float)
                            if "args" in e else "")
    mn = min(float(e["ts"]) for e in evs)
    xs = sorted(({"name": e["name"], "k": k(e), "ts": float(e["ts"]) - mn, "dur": float(e["dur"])}
                 for e in evs), key=lambda o: (o["ts"], -o["dur"]))
    B = [dict(o) for o in xs]
    E = [dict(o, ts=o["ts"] + o["dur"]) for o in xs]
    B.sort(key=lambda o: o["ts"])
    E.sort(key=lambda o: o["ts"])
    B.reverse()
    E.reverse()
    stack = []
    while B or E:
        if not E or (B and (B[-1]["ts"] < E[-1]["ts"] or
                            (B[-1]["ts"] == E[-1]["ts"] and B[-1]["k"] == E[-1]["k"]))):
            stack.append(B.pop())
            continue
        if stack:
            top = stack[-1]
            head = len(E) - 1
            for field in ("k", "name"):
                u = head - 1
                found = False
                while u >= 0 and E[u]["ts"] <= E[head]["ts"]:
                    if E[u][field] == top[field]:
                        E[head], E[u] = E[u], E[head]
                        found = True
                        break
                    u -= 1
                if found:
                    break
        e = E.pop()
        if not stack or stack[-1]["name"] != e["name"]:
            fail(f"{key}: speedscope would end {e['name']!r} at {e['ts']} with "
                 f"{stack[-1]['name'] if stack else 'nothing'!r} on top")
            return
        stack.pop()


def check_chrome(path, csv_path, want_flows, want_counters):
    doc = json.load(open(path, encoding="utf-8"), parse_float=Decimal)
    evs = doc["traceEvents"]
    acts = read_csv(csv_path)
    xs = defaultdict(list)
    names_p, names_t, sort_p = {}, {}, {}
    used_p, used_t = set(), set()
    for i, e in enumerate(evs):
        for key in ("ph", "pid", "tid", "name"):
            if key not in e:
                fail(f"event {i} lacks {key}")
                return
        ph = e["ph"]
        if ph == "M":
            if e["name"] == "process_name":
                names_p[e["pid"]] = e["args"]["name"]
            elif e["name"] == "thread_name":
                names_t[(e["pid"], e["tid"])] = e["args"]["name"]
            elif e["name"] == "process_sort_index":
                sort_p[e["pid"]] = e["args"]["sort_index"]
            continue
        used_p.add(e["pid"])
        if ph == "X":
            if not isinstance(e["pid"], int) or not isinstance(e["tid"], int) or \
                    not 0 <= e["pid"] < 2**32 or not 0 <= e["tid"] < 2**32:
                fail(f"event {i}: pid/tid not 32-bit unsigned integers")
            xs[(e["pid"], e["tid"])].append(e)
            used_t.add((e["pid"], e["tid"]))
    for key, sl in xs.items():
        check_nesting(key, [(ns(e["ts"]), ns(e["ts"]) + ns(e["dur"]), e["name"]) for e in sl])
        replay_speedscope_chrome(key, sl)
    for p in used_p:
        if p not in names_p:
            fail(f"pid {p} has events but no process_name")
    for t in used_t:
        if t not in names_t:
            fail(f"track {t} has slices but no thread_name")
    gpu_pids = sorted(p for p in used_p if p >= GPU_PID)
    cpu_pids = [p for p in used_p if p < GPU_PID]
    for p in gpu_pids:
        if not names_p.get(p, "").startswith(f"GPU {p - GPU_PID}"):
            fail(f"GPU pid {p} named {names_p.get(p)!r}")
        if cpu_pids and sort_p.get(p, -1) <= max(sort_p.get(c, 0) for c in cpu_pids):
            fail(f"GPU pid {p} does not sort after the CPU processes")

    # Flows: exactly one out end (launch call, CPU process) and one in
    # end (GPU activity, same process and correlation, starting later).
    ends = defaultdict(list)
    for sl in xs.values():
        for e in sl:
            if "bind_id" in e:
                if not isinstance(e["bind_id"], int):
                    fail(f"bind_id {e['bind_id']!r} is not an integer")
                ends[e["bind_id"]].append(e)
    for b, es in ends.items():
        out = [e for e in es if e.get("flow_out") is True]
        inn = [e for e in es if e.get("flow_in") is True]
        if len(es) != 2 or len(out) != 1 or len(inn) != 1:
            fail(f"flow {b}: {len(out)} out / {len(inn)} in ends ({len(es)} events)")
            continue
        o, n = out[0], inn[0]
        if o["pid"] >= GPU_PID or not o["cat"].startswith("cuda_"):
            fail(f"flow {b}: out end {o['name']!r} is not an API call of a process")
        if n["pid"] < GPU_PID or n["cat"] not in ("kernel", "memcpy", "memset"):
            fail(f"flow {b}: in end {n['name']!r} is not a GPU activity")
        if o["args"]["correlation"] != n["args"]["correlation"] or n["args"]["process"] != o["pid"]:
            fail(f"flow {b}: correlation/process differ: {o['args']} vs {n['args']}")
        if not ns(o["ts"]) < ns(n["ts"]):
            fail(f"flow {b}: the activity starts before its launch")
        if n["pid"] - GPU_PID != n["args"]["device"]:
            fail(f"flow {b}: activity on the pseudo-process of another device")
    if want_flows is not None and len(ends) != want_flows:
        fail(f"{len(ends)} flows, expected {want_flows}")

    # GPU activities: per stream, the slices are the CSV's rows exactly.
    got = defaultdict(list)
    kernel_ns = defaultdict(int)
    for (pid, tid), sl in xs.items():
        if pid < GPU_PID:
            continue
        for e in sl:
            if e["cat"] not in ("kernel", "memcpy", "memset"):
                continue
            a = e["args"]
            key = (a["device"], a["context"], a["stream"])
            got[key].append((ns(e["ts"]), ns(e["dur"]), e["name"]))
            if e["cat"] == "kernel":
                kernel_ns[key] += ns(e["dur"])
            if not names_t.get((pid, tid), "").startswith(f"stream {a['stream']}"):
                fail(f"{e['name']!r} of stream {a['stream']} on track named {names_t.get((pid, tid))!r}")
    want = defaultdict(list)
    want_kernel_ns = defaultdict(int)
    for a in acts:
        key = (a["device"], a["context"], a["stream"])
        if a["dur"] > 0:  # zero-length activities hold no time: not drawn
            want[key].append((a["start"], a["dur"], a["name"]))
        if a["kernel"]:
            want_kernel_ns[key] += a["dur"]
    for key in set(want) | set(got):
        if sorted(want[key]) != sorted(got[key]):
            fail(f"stream {key}: {len(got[key])} slices differ from the {len(want[key])} CSV rows")
        if kernel_ns[key] != want_kernel_ns[key]:
            fail(f"stream {key}: kernel slices total {kernel_ns[key]} ns, CSV {want_kernel_ns[key]} ns")
    if not acts:
        fail("the CSV lists no activity")

    counters = [e for e in evs if e["ph"] == "C" and e["pid"] >= GPU_PID]
    if want_counters:
        names = {e["name"] for e in counters}
        if not {"gpu.util", "gpu.mem.used"} <= names:
            fail(f"GPU counters missing: got {sorted(names)}")
        for e in counters:
            if e["pid"] not in gpu_pids:
                fail(f"counter {e['name']} on pid {e['pid']} with no named GPU process")
                break
    print(f"{path}: {sum(len(s) for s in xs.values())} slices on {len(xs)} tracks, "
          f"{len(ends)} flows, {len(counters)} GPU counter values, "
          f"kernel ns per stream {dict(sorted(kernel_ns.items()))}")


def union_ns(intervals):
    total, cur_s, cur_e = 0, None, None
    for s, e in sorted(intervals):
        if cur_e is None or s > cur_e:
            if cur_e is not None:
                total += cur_e - cur_s
            cur_s, cur_e = s, e
        else:
            cur_e = max(cur_e, e)
    return total + (cur_e - cur_s if cur_e is not None else 0)


def check_speedscope(path, csv_path):
    doc = json.load(open(path, encoding="utf-8"))
    acts = read_csv(csv_path)
    if doc.get("$schema") != "https://www.speedscope.app/file-format-schema.json":
        fail("bad $schema")
    frames = doc["shared"]["frames"]
    n_ev = 0
    seen = set()
    for p in doc["profiles"]:
        if p["unit"] != "nanoseconds":
            fail(f"{p['name']}: unit {p['unit']}")
        if p["type"] == "sampled":
            if len(p["samples"]) != len(p["weights"]) or any(w <= 0 for w in p["weights"]):
                fail(f"{p['name']}: bad samples/weights")
            continue
        if p["type"] != "evented":
            fail(f"{p['name']}: type {p['type']}")
            continue
        stack, last, top_ns, opened = [], None, 0, None
        for ev in p["events"]:
            at, fr = ev["at"], ev["frame"]
            if not isinstance(fr, int) or not 0 <= fr < len(frames):
                fail(f"{p['name']}: frame index {fr} out of range")
                break
            if last is not None and at < last:
                fail(f"{p['name']}: at decreases ({last} -> {at})")
                break
            last = at
            if ev["type"] == "O":
                if not stack:
                    opened = at
                stack.append(fr)
            elif ev["type"] == "C":
                if not stack or stack[-1] != fr:
                    fail(f"{p['name']}: C of frame {fr} with {stack[-1] if stack else None} on top")
                    break
                stack.pop()
                if not stack:
                    top_ns += at - opened
            else:
                fail(f"{p['name']}: event type {ev['type']}")
        if stack:
            fail(f"{p['name']}: {len(stack)} frames never closed")
        if p["events"] and (p["startValue"] > p["events"][0]["at"] or p["endValue"] < last):
            fail(f"{p['name']}: startValue/endValue do not cover the events")
        n_ev += len(p["events"])
        m = re.match(r"GPU (\d+) stream (\d+)(?: \(pid (\d+), context (\d+)\))?$", p["name"])
        if not m:
            fail(f"evented profile named {p['name']!r}")
            continue
        dev, stream = int(m.group(1)), int(m.group(2))
        ctx = int(m.group(4)) if m.group(4) else None
        mine = [(a["start"], a["start"] + a["dur"]) for a in acts
                if a["device"] == dev and a["stream"] == stream and a["dur"] > 0 and
                (ctx is None or a["context"] == ctx)]
        seen.add((dev, stream, ctx))
        if union_ns(mine) != top_ns:
            fail(f"{p['name']}: top-level time {top_ns} ns, union of its activities {union_ns(mine)} ns")
    streams = {(a["device"], a["stream"]) for a in acts if a["dur"] > 0}
    if {(d, s) for d, s, _ in seen} != streams:
        fail(f"stream profiles {sorted(seen)} do not cover the streams {sorted(streams)}")
    print(f"{path}: {len(doc['profiles'])} profiles, {len(seen)} GPU streams, {n_ev} events, valid")


def main():
    kind, path, csv_path = sys.argv[1:4]
    rest = sys.argv[4:]
    if kind == "chrome":
        flows = int(rest[rest.index("--flows") + 1]) if "--flows" in rest else None
        check_chrome(path, csv_path, flows, "--counters" in rest)
    else:
        check_speedscope(path, csv_path)
    for e in errors[:20]:
        print(f"{path}: {e}", file=sys.stderr)
    sys.exit(1 if errors else 0)


if __name__ == "__main__":
    main()
