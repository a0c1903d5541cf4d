#!/usr/bin/env bash
# trc-lines on live recordings, every interpreter: a program whose hot
# line does ten times the work of its neighbour (fixtures/workloads/
# lines_hot.py, run from a directory whose name is not ASCII) must show
# that line with >= 80 % of its function, in the JSON (parsed by python3)
# and in the text; with the source moved away the numbers stay and the
# reason is given; --source-root brings the text back; a source shorter
# than the recorded lines says so.
# retry-once: records a live program against the clock (tests/run-all)
. "$(dirname "$0")/lib/trec_common.sh"
LINES="$BIN/trc-lines"
[ -x "$LINES" ] || { echo "trc-lines is not built"; exit 77; }
SECONDS_REC=${CONV_LINES_SECONDS:-1.0}

# lines ARGS...: trc-lines, exit 0 or 1 (1: the recorder lost ticks on a
# loaded machine, which warns; the output is complete for what was read).
lines() {
  local rc=0
  "$LINES" "$@" 2> "$TMPD/lines.err" || rc=$?
  [ $rc -le 1 ] || { echo "trc-lines $* exited $rc: $(cat "$TMPD/lines.err")"; return 1; }
}

one() {
  local py=$1 ver=$2 tag=$3 rc=0
  local src="$TMPD/$tag/sourcé dir" moved="$TMPD/$tag/elsewhere"
  mkdir -p "$src" "$moved"
  cp "$FIX/lines_hot.py" "$src/lines_hot.py"
  local trc="$TMPD/$tag/hot.trc"
  timeout 60 "$TREC" -q -o "$trc" "$py" "$src/lines_hot.py" "$SECONDS_REC" || rc=$?
  [ $rc -eq 0 ] || { echo "trec exited $rc"; return 1; }
  local hot cold
  hot=$(grep -n '# hot' "$src/lines_hot.py" | cut -d: -f1)
  cold=$(grep -n '# cold' "$src/lines_hot.py" | cut -d: -f1)

  # JSON: the hottest function is wörk, its hot line >= 80 %, above the cold one
  lines --json -o "$TMPD/$tag/l.json" "$trc" || return 1
  "$CHECK_PY" - "$TMPD/$tag/l.json" "$hot" "$cold" "$src/lines_hot.py" <<'PY' || return 1
import json, sys
d = json.load(open(sys.argv[1], encoding="utf-8"))
hot, cold, path = int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
f = d["functions"][0]
assert f["function"].endswith("wörk"), f["function"]
assert f["file"] == path, (f["file"], path)
lines = {l["line"]: l for l in f["lines"]}
assert hot in lines and lines[hot]["share"] >= 0.8, lines.get(hot)
assert lines[hot]["cpu_ns"] > 5 * lines.get(cold, {"cpu_ns": 0})["cpu_ns"], (lines[hot], lines.get(cold))
assert "# hot — ten times" in lines[hot]["text"], lines[hot]["text"]
assert f["source"]["lines"] == 21, f["source"]
assert any(c["function"] == "main" for c in f["callers"]), f["callers"]
print("json ok: line %d has %.1f %% of %s" % (hot, 100 * lines[hot]["share"], f["function"]))
PY
  # text: the hot line's row shows its text (UTF-8 intact)
  lines --top 1 --color=never "$trc" > "$TMPD/$tag/l.txt" || return 1
  grep -qE "^ +$hot +[0-9.]+ +[0-9.]+ +(8[0-9]|9[0-9]|100)\.[0-9] % +a = sum\(range\(10 \* n\)\)  # hot — ten" \
    "$TMPD/$tag/l.txt" || { echo "text: no hot row"; cat "$TMPD/$tag/l.txt"; return 1; }

  # the source moved away: numbers, and why the text is absent
  mv "$src/lines_hot.py" "$moved/lines_hot.py"
  lines --top 1 "$trc" > "$TMPD/$tag/missing.txt" || return 1
  grep -qF "source not shown: $src/lines_hot.py: No such file or directory" "$TMPD/$tag/missing.txt" &&
    grep -qE "^ +$hot +[0-9.]+ +[0-9.]+ +[0-9.]+ % +\$" "$TMPD/$tag/missing.txt" ||
    { echo "missing source not reported"; cat "$TMPD/$tag/missing.txt"; return 1; }
  # --source-root maps the recorded directory to where the file is now
  lines --top 1 --source-root "$src=$moved" "$trc" > "$TMPD/$tag/mapped.txt" || return 1
  grep -q "# hot — ten" "$TMPD/$tag/mapped.txt" || { echo "--source-root: no text"; cat "$TMPD/$tag/mapped.txt"; return 1; }
  # a source shorter than the recorded lines
  head -n 5 "$moved/lines_hot.py" > "$src/lines_hot.py"
  lines --top 1 "$trc" > "$TMPD/$tag/short.txt" || return 1
  grep -qE "^ +$hot .*\[past the end: the file has 5 lines\]" "$TMPD/$tag/short.txt" ||
    { echo "short source not reported"; cat "$TMPD/$tag/short.txt"; return 1; }
  echo "ok"
}

for_each_python one
finish
