#!/usr/bin/env bash
# trc2flamegraph on real recordings: for every interpreter present
# (tests/e2e/lib/pythons.sh), trec records a short program whose file and
# hot function have non-ASCII names; the flame graph, with lines and with
# --no-lines, is well-formed (xmllint), shows the hot function at a line
# of its loop right above its caller, gives in its tooltip the share the
# folded lines give it, and has exactly the frames flamegraph.pl's rules
# draw from trc2collapsed's lines of the same trace
# (tests/e2e/lib/flamegraph_check.py).
# retry-once: records a live program against the clock (tests/run-all)
set -u
cd "${TRC_ROOT:-$(dirname "$0")/../..}"
BUILD=${BUILD:-build} BIN=${BIN:-bin}
. tests/e2e/lib/pythons.sh
for t in trec trc2collapsed trc2flamegraph; do
  [ -x "$BIN/$t" ] || { echo "FAIL: $BIN/$t not built"; exit 1; }
done
command -v xmllint > /dev/null || { echo "skip: xmllint not installed (libxml2-utils)"; exit 77; }
check=$PWD/tests/e2e/lib/flamegraph_check.py
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0 n=0
bad() { echo "FAIL: $*"; fails=$((fails + 1)); }

prog="$tmp/prög_ünï.py"
cat > "$prog" <<'PY'
import time


def 計算_hot(deadline):
    x = 0
    while time.monotonic() < deadline:
        x += 1
    return x


def caller():
    return 計算_hot(time.monotonic() + 0.4)


caller()
PY
while read -r py ver; do
  n=$((n + 1))
  t="$tmp/$n.trc"
  "$BIN/trec" -o "$t" -- "$py" "$prog" > "$tmp/$n.log" 2>&1 || { bad "$ver: trec failed: $(tail -n 2 "$tmp/$n.log")"; continue; }
  # exit 1 is a busy machine's missed ticks (one warning); the graph covers what was recorded
  for mode in lines no-lines; do
    opt=(); [ $mode = no-lines ] && opt=(--no-lines)
    "$BIN/trc2collapsed" "${opt[@]}" "$t" > "$tmp/$n.$mode.folded" 2> /dev/null
    "$BIN/trc2flamegraph" "${opt[@]}" "$t" -o "$tmp/$n.$mode.svg" 2> "$tmp/$n.err"
    [ $? -le 1 ] || { bad "$ver: trc2flamegraph ${opt[*]}: $(cat "$tmp/$n.err")"; continue 2; }
    xmllint --noout "$tmp/$n.$mode.svg" 2> "$tmp/$n.xml" || { bad "$ver: not well-formed: $(head -n 2 "$tmp/$n.xml")"; continue 2; }
    python3 "$check" widths "$tmp/$n.$mode.folded" "$tmp/$n.$mode.svg" 1200 0.1 > "$tmp/$n.w" 2>&1 ||
      bad "$ver ${opt[*]}: $(tail -n 1 "$tmp/$n.w")"
  done
  python3 - "$tmp/$n.lines.svg" "$tmp/$n.no-lines.svg" "$ver" "$tmp/$n.no-lines.folded" <<'PY' || bad "$ver: the hot function is not where it should be"
import re, sys, xml.etree.ElementTree as ET
NS = "{http://www.w3.org/2000/svg}"
def frames(svg):
    doc = ET.parse(svg).getroot()
    return [(g.find(NS + "title").text.split("\n"), g.find(NS + "rect"))
            for g in doc.iter(NS + "g") if g.find(NS + "title") is not None]
# with lines: 計算_hot at a line of the loop, right above caller's frame
f = frames(sys.argv[1])
hot = [(t, r) for t, r in f if re.fullmatch(r"計算_hot \((.*/)?prög_ünï\.py:[67]\)", t[0])]
callers = [(t, r) for t, r in f if re.fullmatch(r"caller \((.*/)?prög_ünï\.py:12\)", t[0])]
assert hot and callers, [t[0] for t, _ in f]
c = callers[0][1]
for _, h in hot:
    assert abs(float(h.get("y")) - (float(c.get("y")) - 16)) < 0.01, (h.attrib, c.attrib)
    assert float(c.get("x")) <= float(h.get("x")) <= float(c.get("x")) + float(c.get("width")), (h.attrib, c.attrib)
# one frame per function
f = frames(sys.argv[2])
hot = [t for t, _ in f if re.fullmatch(r"計算_hot \((.*/)?prög_ünï\.py\)", t[0])]
assert len(hot) == 1, [t[0] for t, _ in f]
share = float(re.search(r", ([0-9.]+)%", hot[0][1]).group(1))
# the tooltip's share is the folded lines' share through that frame
lines = [l.rsplit(" ", 1) for l in open(sys.argv[4], encoding="utf-8").read().splitlines()]
total = sum(int(v) for _, v in lines)
through = sum(int(v) for st, v in lines if re.search(r"(^|;)計算_hot \(", st))
assert through and abs(share - 100.0 * through / total) < 0.006, (hot[0], through, total)
PY
done < <(trec_pythons)
[ $n -gt 0 ] || { echo "skip: no Python 3.8+ interpreter found"; exit 77; }
[ $fails -eq 0 ] || { echo "$fails failure(s)"; exit 1; }
echo "conv_flamegraph_live: ok ($n interpreters)"
