#!/usr/bin/env bash
# trc2speedscope and trc2chrome as users run them: the small fixture's
# outputs (their goldens are cases of tests/e2e/conv_goldens.sh,
# fixtures/convert/{speedscope_small,chrome_small_idle}, also checked by
# python3's json module below), stdin/stdout, exit codes, damaged and
# unusable input.
set -u
cd "${TRC_ROOT:-$(dirname "$0")/../..}"
BUILD=${BUILD:-build} BIN=${BIN:-bin}
gen=$BUILD/tests/timeline-gen
for f in "$BIN/trc2speedscope" "$BIN/trc2chrome" "$gen"; do [ -x "$f" ] || { echo "FAIL: $f not built"; exit 1; }; done
bindir=$(cd "$BIN" && pwd)
ss=$bindir/trc2speedscope ch=$bindir/trc2chrome
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
bad() { echo "FAIL: $*"; fails=$((fails + 1)); }

"$gen" --write-small "$tmp/small.trc" || { echo "FAIL: generator"; exit 1; }
"$gen" --write-big 20000 3 "$tmp/big.trc" || { echo "FAIL: generator"; exit 1; }

# Independent structural checks with python3's json (exact decimals for time).
validate() { # validate speedscope|chrome FILE [nonempty]
  python3 - "$@" <<'EOF'
import json, sys
from decimal import Decimal
kind, path = sys.argv[1], sys.argv[2]
doc = json.load(open(path, encoding="utf-8"), parse_float=Decimal)
def fail(msg):
    print(f"{path}: {msg}", file=sys.stderr); sys.exit(1)
if kind == "speedscope":
    if doc.get("$schema") != "https://www.speedscope.app/file-format-schema.json": fail("bad $schema")
    frames = doc["shared"]["frames"]
    for p in doc["profiles"]:
        if p["type"] != "sampled" or p["unit"] != "nanoseconds": fail("bad profile type/unit")
        if len(p["samples"]) != len(p["weights"]): fail("samples/weights lengths differ")
        for s in p["samples"]:
            if any(not isinstance(i, int) or not 0 <= i < len(frames) for i in s): fail("frame index out of range")
        if any(w <= 0 for w in p["weights"]): fail("non-positive weight")
        if p["endValue"] - p["startValue"] != sum(p["weights"]): fail("endValue - startValue != sum(weights)")
else:
    evs = doc["traceEvents"]
    by_thread = {}
    for i, e in enumerate(evs):
        for k in ("ph", "pid", "tid", "name"):
            if k not in e: fail(f"event {i} lacks {k}")
        if e["ph"] == "X":
            start = int(Decimal(e["ts"]) * 1000); end = int((Decimal(e["ts"]) + Decimal(e["dur"])) * 1000 + Decimal("0.5"))
            by_thread.setdefault((e["pid"], e["tid"]), []).append((start, -end, e["name"]))
    for key, sl in by_thread.items():
        sl.sort(); stack = []
        for start, nend, name in sl:
            end = -nend
            if end <= start: fail(f"{key}: empty slice {name}")
            while stack and stack[-1] <= start: stack.pop()
            if stack and end > stack[-1]: fail(f"{key}: slice {name} [{start},{end}] crosses its parent")
            stack.append(end)
    # speedscope's Chrome importer, replayed (its Iy/Ey functions in
    # v1.25): X -> B/E in doubles relative to the thread's first slice, ties
    # broken as it does.  Any "ended the wrong frame" is a failure.
    def key(e): return e["name"] + (" " + json.dumps(e["args"], separators=(",", ":"), default=float) if "args" in e else "")
    xs_by = {}
    for e in evs:
        if e["ph"] == "X": xs_by.setdefault((e["pid"], e["tid"]), []).append(e)
    for k, t in xs_by.items():
        mn = min(float(e["ts"]) for e in t)
        xs = sorted(({"name": e["name"], "k": key(e), "ts": float(e["ts"]) - mn, "dur": float(e["dur"])} for e in t),
                    key=lambda o: (o["ts"], -o["dur"]))
        B = [dict(o) for o in xs]
        E = [dict(o, ts=o["ts"] + o["dur"]) for o in xs]
        B.sort(key=lambda o: o["ts"]); E.sort(key=lambda o: o["ts"])
        B.reverse(); E.reverse()  # pop() from the end
        stack = []
        while B or E:
            if not E or (B and (B[-1]["ts"] < E[-1]["ts"] or (B[-1]["ts"] == E[-1]["ts"] and B[-1]["k"] == E[-1]["k"]))):
                stack.append(B.pop()); continue
            if stack:
                top = stack[-1]; head = len(E) - 1
                for field in ("k", "name"):
                    u = head - 1; found = False
                    while u >= 0 and E[u]["ts"] <= E[head]["ts"]:
                        if E[u][field] == top[field]:
                            E[head], E[u] = E[u], E[head]; found = True; break
                        u -= 1
                    if found: break
            e = E.pop()
            if not stack or stack[-1]["name"] != e["name"]:
                fail(f"{k}: speedscope would end {e['name']!r} at {e['ts']} with {stack[-1]['name'] if stack else 'nothing'!r} on top")
            stack.pop()
    phases = {e["ph"] for e in evs}
    names = {e["name"] for e in evs if e["ph"] == "M"}
    if "X" in phases and not {"process_name", "thread_name", "process_sort_index", "thread_sort_index"} <= names:
        fail("slices without their M events")
    if len(sys.argv) > 3 and "X" not in phases: fail("no slices")
print(f"{path}: valid {kind} ({len(json.dumps(doc, default=str))} chars)")
EOF
}

# --- the small fixture ------------------------------------------------------------
fixture_run() { # fixture_run NAME TOOL ARGS...
  local name=$1; shift
  local got=$tmp/$name
  # Run in the temp dir so the input's name in the output is "small.trc".
  # The fixture records a few missed samples, too few ticks for the 5 %
  # rule (docs/exit-codes.md): exit 0 and silent, but with --strict exit 1
  # with exactly one warning line and the same output.
  (cd "$tmp" && "$@" -o "$name" small.trc) 2>"$tmp/err"; local rc=$?
  [ $rc -eq 0 ] && [ ! -s "$tmp/err" ] || bad "$name: exit $rc, expected 0 and no warning: $(cat "$tmp/err")"
  (cd "$tmp" && "$@" --strict -o "$name" small.trc) 2>"$tmp/err"; rc=$?
  [ $rc -eq 1 ] || bad "$name --strict: exit $rc, expected 1"
  [ "$(wc -l < "$tmp/err")" -eq 1 ] && grep -q "warning" "$tmp/err" && grep -q "missed" "$tmp/err" ||
    { bad "$name --strict: expected one warning about missed samples, got:"; cat "$tmp/err"; }
  local kind=${name%.json}; kind=${kind##*.}
  validate "$kind" "$got" nonempty >/dev/null || bad "$name: invalid $kind document"
}
fixture_run small.speedscope.json "$ss"
fixture_run small.chrome.json "$ch" --idle
validate speedscope fixtures/convert/speedscope_small/expected.speedscope.json nonempty || bad "golden speedscope invalid"
validate chrome fixtures/convert/chrome_small_idle/expected.trace.json nonempty || bad "golden chrome invalid"

# --- stdin/stdout give the same bytes as FILE/-o (but the input's name) ------------
unname() { sed 's/"source":"[^"]*",//' "$1"; }
for t in "$ss" "$ch"; do
  "$t" < "$tmp/small.trc" > "$tmp/stdout.json" 2>/dev/null
  "$t" - -o "$tmp/dash.json" < "$tmp/small.trc" 2>/dev/null
  "$t" "$tmp/small.trc" -o "$tmp/file.json" 2>/dev/null
  [ "$(unname "$tmp/stdout.json")" = "$(unname "$tmp/file.json")" ] &&
    [ "$(unname "$tmp/dash.json")" = "$(unname "$tmp/file.json")" ] ||
    bad "$(basename "$t"): stdin/stdout output differs from FILE/-o"
done

# --- a merged-thread speedscope document ----------------------------------------
"$ss" --merge-threads --idle -o "$tmp/merged.json" "$tmp/small.trc" 2>/dev/null
validate speedscope "$tmp/merged.json" >/dev/null || bad "merged output invalid"
python3 -c 'import json,sys; p=json.load(open(sys.argv[1]))["profiles"]; assert p[0]["name"]=="app.py (pid 4242)", p[0]["name"]; assert len(p)==4' "$tmp/merged.json" ||
  bad "--merge-threads: first profile is not the process"

# --- damaged input: what is readable converts, exit 1, valid JSON -------------------
# Two segments (cat a.trc b.trc is a valid trace), the second cut short:
# the first converts whatever the chunk size is.
size=$(wc -c < "$tmp/big.trc")
cat "$tmp/big.trc" "$tmp/big.trc" | head -c $((size + size / 2)) > "$tmp/cut.trc"
for t in "$ss" "$ch"; do
  kind=speedscope; [ "$t" = "$ch" ] && kind=chrome
  "$t" -o "$tmp/cut.json" "$tmp/cut.trc" 2>"$tmp/err"; rc=$?
  [ $rc -eq 1 ] || bad "$kind on a cut trace: exit $rc, expected 1"
  validate "$kind" "$tmp/cut.json" nonempty >/dev/null || bad "$kind on a cut trace: invalid output"
done

# --- unusable input: exit 2, one error line, no output file ------------------------
printf 'this is not a trace\n' > "$tmp/text.trc"
for t in "$ss" "$ch"; do
  rm -f "$tmp/none.json"
  "$t" -o "$tmp/none.json" "$tmp/text.trc" 2>"$tmp/err"; rc=$?
  [ $rc -eq 2 ] || bad "$(basename "$t") on a text file: exit $rc, expected 2"
  [ ! -e "$tmp/none.json" ] || bad "$(basename "$t"): output file left behind"
  ls "$tmp" | grep -q '^none.json.tmp' && bad "$(basename "$t"): temp file left behind"
  grep -q "text.trc" "$tmp/err" || bad "$(basename "$t"): error does not name the input: $(cat "$tmp/err")"
  "$t" --no-such-option >/dev/null 2>&1; [ $? -eq 2 ] || bad "$(basename "$t"): bad option not exit 2"
  "$t" --help | grep -q -- "--idle" || bad "$(basename "$t") --help lacks the shared selections"
done
"$ss" --help | grep -q -- "--merge-threads" || bad "trc2speedscope --help lacks --merge-threads"

[ $fails -eq 0 ] || { echo "$fails check(s) failed"; exit 1; }
echo "all converter checks passed"
