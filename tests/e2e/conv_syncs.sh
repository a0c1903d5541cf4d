#!/usr/bin/env bash
# --syncs on the recording path's fixture (fixtures/gpu/fake_train.trc,
# written by the real injection over the fake CUPTI): trc-stats --syncs and
# trc2collapsed --syncs agree with an independent reading of
# `trc-dump --events`: the API calls flagged SYNC (0x4), their Python
# stacks, host time blocked = duration - capture clamped at 0, and the GPU
# work waited for = the part inside the call of every activity of the
# process that ended during it.  The fixture has three syncs, at
# train.py:35, :36 and :38.  trc2speedscope --syncs and trc2flamegraph
# --syncs show the same stacks and times.  Also: --gpu with --syncs is a
# usage error.
set -u
cd "${TRC_ROOT:-$(dirname "$0")/../..}"
BIN=${BIN:-bin}
ft=fixtures/gpu/fake_train.trc
for f in "$BIN/trc2collapsed" "$BIN/trc-stats" "$BIN/trc-dump" "$ft"; do
  [ -e "$f" ] || { echo "FAIL: $f missing"; exit 1; }
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
bad() { echo "FAIL: $*"; fails=$((fails + 1)); }

"$BIN/trc-dump" --events "$ft" > "$tmp/events" 2>/dev/null || bad "trc-dump --events failed"
# exit 1: written, with the fixture's recorded GPU losses warned about
"$BIN/trc-stats" --syncs "$ft" > "$tmp/stats" 2>"$tmp/stats.err"; rc=$?
[ "$rc" = 1 ] || bad "trc-stats --syncs: exit $rc, want 1"
grep -q "GPU records dropped" "$tmp/stats.err" || bad "trc-stats --syncs: no loss warning"
"$BIN/trc2collapsed" --syncs --weight samples "$ft" > "$tmp/calls" 2>/dev/null; rc=$?
[ "$rc" = 1 ] || bad "trc2collapsed --syncs: exit $rc, want 1"
python3 - "$tmp/events" "$tmp/stats" "$tmp/calls" <<'PY' || fails=$((fails + 1))
import re, sys
ev = open(sys.argv[1]).read().splitlines()
def t(s): return round(float(s) * 1e9)
calls, acts = [], []
for l in ev:
    if l.startswith("api_call ") and int(re.search(r"flags=(0x[0-9a-f]+)", l).group(1), 16) & 4:
        st = re.search(r' stack=(\S+)', l).group(1)
        frames = re.findall(r'"([^"]*)"@"([^"]*)":(\d+)', st)
        calls.append(dict(start=t(re.search(r" start=(\S+)", l).group(1)),
                          end=t(re.search(r" end=(\S+)", l).group(1)),
                          cap=int(re.search(r"capture=(\d+)", l).group(1)),
                          name=re.search(r'name="([^"]*)"', l).group(1), frames=frames))
    elif l.split(" ")[0] in ("gpu_kernel", "gpu_memcpy", "gpu_memset"):
        acts.append((t(re.search(r" start=(\S+)", l).group(1)), t(re.search(r" end=(\S+)", l).group(1))))
if len(calls) != 3:
    sys.exit("FAIL: %d SYNC calls in the fixture, want 3" % len(calls))
rows = {}
for c in calls:
    blocked = max(0, c["end"] - c["start"] - c["cap"])
    waited = sum(e - max(s, c["start"]) for s, e in acts if c["start"] <= e <= c["end"])
    fn, file, line = c["frames"][-1]
    r = rows.setdefault("%s:%s(%s)" % (file, line, fn), [0, 0, 0, []])
    r[0] += 1; r[1] += blocked; r[2] += waited; r[3].append(c["name"])
stats = open(sys.argv[2]).read().splitlines()
tb = sum(r[1] for r in rows.values()); tw = sum(r[2] for r in rows.values())
want = "Blocking syncs: 3 calls, %.6f s host time blocked, %.6f s GPU work waited for" % (tb / 1e9, tw / 1e9)
if stats[0] != want:
    sys.exit("FAIL: headline %r, want %r" % (stats[0], want))
got = {}
for l in stats[3:]:
    m = re.match(r"\s*(\d+)\s+(\S+)\s+(\S+)\s+\S+\s+(\S+) \((.*)\)$", l)
    if not m:
        sys.exit("FAIL: row %r" % l)
    got[m.group(4)] = (int(m.group(1)), m.group(2), m.group(3), m.group(5))
for k, r in rows.items():
    w = (r[0], "%.6f" % (r[1] / 1e9), "%.6f" % (r[2] / 1e9), ", ".join(r[3]))
    if got.get(k) != w:
        sys.exit("FAIL: row %s: %r, want %r" % (k, got.get(k), w))
if len(got) != len(rows) or set(rows) != {"train.py:35(main)", "train.py:36(main)", "train.py:38(main)"}:
    sys.exit("FAIL: rows %r" % sorted(got))
if rows["train.py:35(main)"][2] == 0 or rows["train.py:36(main)"][2] == 0:
    sys.exit("FAIL: the stream and event syncs waited for no GPU work")
lines = sorted(";".join("%s (%s:%s)" % f for f in c["frames"]) + ";" + c["name"] + " 1" for c in calls)
if open(sys.argv[3]).read().splitlines() != lines:
    sys.exit("FAIL: trc2collapsed --syncs:\n%s\nwant\n%s" % (open(sys.argv[3]).read(), "\n".join(lines)))
PY

# trc2chrome: one arrow per sync, from the middle of the last GPU work it
# waited for (the one of its process that ended last during the call, else
# the last that ended before it) to the call's slice, just before its end
"$BIN/trc2chrome" -o "$tmp/t.json" "$ft" 2>/dev/null; rc=$?
[ "$rc" = 1 ] || bad "trc2chrome: exit $rc, want 1"
python3 - "$tmp/events" "$tmp/t.json" <<'PY' || fails=$((fails + 1))
import json, re, sys
def t(s): return round(float(s) * 1e9)
calls, acts = [], []
for l in open(sys.argv[1]).read().splitlines():
    if l.startswith("api_call ") and int(re.search(r"flags=(0x[0-9a-f]+)", l).group(1), 16) & 4:
        calls.append((t(re.search(r" start=(\S+)", l).group(1)), t(re.search(r" end=(\S+)", l).group(1))))
    elif l.split(" ")[0] in ("gpu_kernel", "gpu_memcpy", "gpu_memset"):
        acts.append((t(re.search(r" start=(\S+)", l).group(1)), t(re.search(r" end=(\S+)", l).group(1)),
                     int(re.search(r" stream=(\d+)", l).group(1))))
d = json.load(open(sys.argv[2]))
ev = d["traceEvents"] if isinstance(d, dict) else d
s = {e["id"]: e for e in ev if e.get("cat") == "sync" and e.get("ph") == "s"}
f = {e["id"]: e for e in ev if e.get("cat") == "sync" and e.get("ph") == "f"}
if len(s) != len(calls) or set(s) != set(f):
    sys.exit("FAIL: %d/%d sync flows for %d syncs" % (len(s), len(f), len(calls)))
# chrome's ts is relative to the trace start: learn that offset from the
# stream sync's own slice (the fixture has one)
ss = [e for e in ev if e.get("ph") == "X" and e.get("name") == "cudaStreamSynchronize"]
if len(ss) != 1:
    sys.exit("FAIL: %d cudaStreamSynchronize slices" % len(ss))
zero = round(ss[0]["ts"] * 1000) - sorted(calls)[0][0]
for (cs, ce), i in zip(sorted(calls), sorted(s)):
    during = [a for a in acts if cs <= a[1] <= ce]
    last = max(during, key=lambda a: a[1]) if during else max((a for a in acts if a[1] < cs), key=lambda a: a[1])
    ts_s = round(s[i]["ts"] * 1000) - zero
    ts_f = round(f[i]["ts"] * 1000) - zero
    if not (last[0] <= ts_s <= last[1]) or s[i]["tid"] != last[2]:
        sys.exit("FAIL: flow %d starts at %d on tid %d, want in %r" % (i, ts_s, s[i]["tid"], last))
    if not (cs <= ts_f < ce) or f[i].get("bp") != "e":
        sys.exit("FAIL: flow %d ends at %d, want in [%d, %d)" % (i, ts_f, cs, ce))
PY

# trc2pstats --syncs: one call per sync of its API's leaf, tottime = the
# blocked time trc-stats --syncs gives that line (one sync per line here)
"$BIN/trc2pstats" --syncs -o "$tmp/s.pstats" "$ft" 2>/dev/null; rc=$?
[ "$rc" = 1 ] || bad "trc2pstats --syncs: exit $rc, want 1"
python3 - "$tmp/s.pstats" "$tmp/stats" <<'PY' || fails=$((fails + 1))
import pstats, re, sys
st = pstats.Stats(sys.argv[1]).stats
leaf = {k[2]: v for k, v in st.items() if k[0] == "~"}
want = {}
for l in open(sys.argv[2]).read().splitlines()[3:]:
    m = re.match(r"\s*(\d+)\s+(\S+)\s+\S+\s+\S+\s+\S+ \((\w+)\)$", l)
    want[m.group(3)] = (int(m.group(1)), float(m.group(2)))
got = {n: (v[1], round(v[2], 6)) for n, v in leaf.items()}
if got != want:
    sys.exit("FAIL: trc2pstats --syncs leaves %r, want %r" % (got, want))
PY

# trc2speedscope --syncs (to the ns) and trc2flamegraph --syncs (us, its
# tooltips read back by xmllint): the stacks and blocked times of the
# same independent reading (speedscope sums the calls of one stack and
# API into one sample; the fixture has one call per line)
"$BIN/trc2speedscope" --syncs -o "$tmp/s.speedscope.json" "$ft" 2>/dev/null; rc=$?
[ "$rc" = 1 ] || bad "trc2speedscope --syncs: exit $rc, want 1"
"$BIN/trc2flamegraph" --syncs -o "$tmp/s.svg" "$ft" 2>/dev/null; rc=$?
[ "$rc" = 1 ] || bad "trc2flamegraph --syncs: exit $rc, want 1"
xmllint --noout "$tmp/s.svg" || bad "trc2flamegraph --syncs: not XML"
xmllint --xpath '//*[local-name()="title"]/text()' "$tmp/s.svg" > "$tmp/s.titles" 2>/dev/null ||
  bad "trc2flamegraph --syncs: no frames"
python3 - "$tmp/events" "$tmp/s.speedscope.json" "$tmp/s.titles" <<'PY' || fails=$((fails + 1))
import json, re, sys
def t(s): return round(float(s) * 1e9)
want = {}
for l in open(sys.argv[1]).read().splitlines():
    if l.startswith("api_call ") and int(re.search(r"flags=(0x[0-9a-f]+)", l).group(1), 16) & 4:
        frames = re.findall(r'"([^"]*)"@"([^"]*)":(\d+)', re.search(r' stack=(\S+)', l).group(1))
        blocked = max(0, t(re.search(r" end=(\S+)", l).group(1)) - t(re.search(r" start=(\S+)", l).group(1))
                      - int(re.search(r"capture=(\d+)", l).group(1)))
        key = tuple("%s (%s:%s)" % f for f in frames) + (re.search(r'name="([^"]*)"', l).group(1),)
        want[key] = want.get(key, 0) + blocked
d = json.load(open(sys.argv[2]))
if d["$schema"] != "https://www.speedscope.app/file-format-schema.json" or len(d["profiles"]) != 1:
    sys.exit("FAIL: speedscope --syncs: not one profile")
p, fr = d["profiles"][0], d["shared"]["frames"]
def label(f): return "%s (%s:%s)" % (f["name"], f["file"], f["line"]) if "file" in f else f["name"]
got = {}
for s, w in zip(p["samples"], p["weights"]):
    k = tuple(label(fr[i]) for i in s)
    got[k] = got.get(k, 0) + w
if got != want or p["endValue"] != sum(want.values()) or p["name"] != "syncs: host time blocked":
    sys.exit("FAIL: speedscope --syncs %r (%s), want %r" % (got, p["name"], want))
# the flame graph: each API leaf once, its calls and time in us
titles = open(sys.argv[3]).read().splitlines()
for k, ns in want.items():
    i = titles.index(k[-1])
    if titles[i + 1] != "1 call, %.2f%%, %.3f us" % (100.0 * ns / sum(want.values()), ns / 1e3):
        sys.exit("FAIL: flame graph %s: %r, want %d ns" % (k[-1], titles[i + 1], ns))
PY
"$BIN/trc2flamegraph" --syncs --gpu "$ft" >/dev/null 2>&1; rc=$?
[ "$rc" = 2 ] || bad "trc2flamegraph --syncs --gpu: exit $rc, want 2"
"$BIN/trc2speedscope" --syncs --gpu-idle "$ft" >/dev/null 2>&1; rc=$?
[ "$rc" = 2 ] || bad "trc2speedscope --syncs --gpu-idle: exit $rc, want 2"

"$BIN/trc2collapsed" --syncs --gpu "$ft" >/dev/null 2>"$tmp/err"; rc=$?
[ "$rc" = 2 ] || bad "--syncs --gpu: exit $rc, want 2"
"$BIN/trc-stats" --syncs --gpu "$ft" >/dev/null 2>"$tmp/err"; rc=$?
[ "$rc" = 2 ] || bad "trc-stats --syncs --gpu: exit $rc, want 2"

[ "$fails" = 0 ] && echo ok
exit $((fails > 0))
