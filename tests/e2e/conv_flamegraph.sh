#!/usr/bin/env bash
# trc2flamegraph (docs/converters.md "trc2flamegraph"): the SVG is
# well-formed (xmllint) whatever the names; its frames are exactly the
# ones flamegraph.pl's rules draw from trc2collapsed's lines with the same
# options (tests/e2e/lib/flamegraph_check.py builds them independently);
# each kind of frame (Python, native, GPU, mostly off-CPU, synthetic)
# has its class; --diff colours follow the change of share; bad input is
# one line, exit 2, no output; and in headless Chromium a click zooms into
# a known frame and a search highlights a known function and reports its
# share of the zoomed frame and of the whole graph, both computed from the
# folded lines (the page's state, read back with --dump-dom).  Without chromium the browser part skips (77) after
# the rest has passed.
set -u
cd "${TRC_ROOT:-$(dirname "$0")/../..}"
BUILD=${BUILD:-build} BIN=${BIN:-bin}
command -v xmllint > /dev/null || { echo "skip: xmllint not installed (libxml2-utils)"; exit 77; }
for t in trc2collapsed trc2flamegraph; do
  [ -x "$BIN/$t" ] || { echo "FAIL: $BIN/$t not built"; exit 1; }
done
[ -x "$BUILD/tests/conv-gen" ] || { echo "FAIL: $BUILD/tests/conv-gen not built"; exit 1; }
check=$PWD/tests/e2e/lib/flamegraph_check.py
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
bad() { echo "FAIL: $*"; fails=$((fails + 1)); }
fg() { "$BIN/trc2flamegraph" "$@"; }

"$BUILD/tests/conv-gen" fixture "$tmp/fx.trc" > /dev/null || { echo "FAIL: conv-gen fixture"; exit 1; }
"$BUILD/tests/conv-gen" big 1000 "$tmp/b1.trc" > /dev/null || { echo "FAIL: conv-gen big"; exit 1; }
"$BUILD/tests/conv-gen" big 1500 "$tmp/b2.trc" > /dev/null || { echo "FAIL: conv-gen big"; exit 1; }
S=fixtures/valid/samples.trc G=fixtures/gpu/fake_train.trc

# same: INPUT WIDTH MIN_WIDTH ICICLE OPTIONS... — the SVG against the
# folded lines of trc2collapsed with the options both tools share.
n=0
same() {
  local in=$1 width=$2 minw=$3 icicle=$4
  shift 4
  local fopts=(--width "$width" --min-width "$minw")
  [ "$icicle" = icicle ] && fopts+=(--icicle)
  n=$((n + 1))
  "$BIN/trc2collapsed" "$@" "$in" > "$tmp/$n.folded" 2> /dev/null
  fg "${fopts[@]}" "$@" "$in" -o "$tmp/$n.svg" 2> "$tmp/$n.err"
  local rc=$?
  [ $rc -le 1 ] && [ -s "$tmp/$n.svg" ] || { bad "trc2flamegraph $* $in: exit $rc: $(head -c 200 "$tmp/$n.err")"; return; }
  xmllint --noout "$tmp/$n.svg" 2> "$tmp/$n.xml" || { bad "$* $in: not well-formed: $(head -n 2 "$tmp/$n.xml")"; return; }
  python3 "$check" widths "$tmp/$n.folded" "$tmp/$n.svg" "$width" "$minw" $icicle > "$tmp/$n.log" 2>&1 ||
    bad "$* $in: $(tail -n 1 "$tmp/$n.log")"
}
same "$tmp/fx.trc" 1200 0.1 flame
same "$tmp/fx.trc" 1200 0 flame --idle --threads --pids
same "$tmp/fx.trc" 800 30 icicle --weight us --idle
same "$tmp/fx.trc" 1200 0.1 flame --no-lines --full-filenames --gil
same "$tmp/b2.trc" 1200 0.1 flame
same "$tmp/b2.trc" 600 4 flame --threads
same "$S" 1000 0.1 icicle --idle
same "$G" 1200 0.1 flame --gpu
same "$G" 1200 0.1 flame --gpu --weight samples --threads
# pruning really happens: fewer frames drawn than distinct paths
a=$(grep -c '<g class=' "$tmp/5.svg") b=$(grep -c '<g class=' "$tmp/6.svg")
[ "$b" -lt "$a" ] || bad "--min-width 4 at 600 px drew $b frames, the default $a"

# kinds: Python frames, the idle share, GPU leaves, synthetic roots
grep -q '<g class="py"><title>fib (proj/app.py:31)' "$tmp/1.svg" || bad "no Python frame class"
grep -q '<g class="oth"><title>&lt;no Python frames&gt;' "$tmp/2.svg" || bad "synthetic frame not 'oth'"
grep -q '<g class="nat"><title>PyEval_EvalFrameDefault' "$tmp/1.svg" || bad "native frame not 'nat'"
"$BIN/trc2flamegraph" --idle "$S" -o "$tmp/idle.svg" &&
  grep -q '<g class="idle"><title>time.sleep' "$tmp/idle.svg" || bad "--idle: a frame mostly off-CPU not 'idle'"
grep -q 'off-CPU' "$tmp/2.svg" || bad "--idle: no off-CPU share in a tooltip"
grep -q '<g class="gpu">' "$tmp/8.svg" || bad "--gpu: no GPU frame"
grep -q 'us">' "$tmp/8.svg" && grep -q 'data-unit="us"' "$tmp/8.svg" || bad "--gpu: not weighted in us"
grep -q 'data-icicle="1"' "$tmp/3.svg" || bad "--icicle not marked"

# title and names: XML specials, non-ASCII, a control character
fg --title $'<a & "b"> \'ünï\' \x01' "$tmp/fx.trc" -o "$tmp/t.svg" || bad "--title run failed"
xmllint --noout "$tmp/t.svg" || bad "--title: not well-formed"
python3 - "$tmp/t.svg" <<'PY' || bad "--title text not kept"
import sys, xml.etree.ElementTree as ET
doc = ET.parse(sys.argv[1]).getroot()
t = doc.find(".//{http://www.w3.org/2000/svg}text[@id='title']").text
assert t == '<a & "b"> \'ünï\' \ufffd', repr(t)
PY
# to stdout, byte for byte the same as to a file
fg "$tmp/fx.trc" > "$tmp/stdout.svg" && cmp -s "$tmp/stdout.svg" "$tmp/1.svg" || bad "stdout output differs from -o"
# deterministic
fg "$tmp/fx.trc" -o "$tmp/again.svg" && cmp -s "$tmp/again.svg" "$tmp/1.svg" || bad "two runs differ"

# --diff: the colour follows the change of each frame's share
"$BIN/trc2collapsed" "$tmp/b1.trc" > "$tmp/b1.folded"
"$BIN/trc2collapsed" "$tmp/b2.trc" > "$tmp/b2.folded"
fg --diff "$tmp/b1.trc" "$tmp/b2.trc" -o "$tmp/d.svg" || bad "--diff failed"
xmllint --noout "$tmp/d.svg" || bad "--diff: not well-formed"
python3 "$check" diff "$tmp/b2.folded" "$tmp/b1.folded" "$tmp/d.svg" both > "$tmp/d.log" 2>&1 ||
  bad "--diff colours: $(tail -n 1 "$tmp/d.log")"
fg --diff "$tmp/b2.trc" "$tmp/b2.trc" -o "$tmp/d0.svg" &&
  python3 "$check" diff "$tmp/b2.folded" "$tmp/b2.folded" "$tmp/d0.svg" > "$tmp/d0.log" 2>&1 ||
  bad "--diff against itself: $(tail -n 1 "$tmp/d0.log")"

# a damaged base: one warning naming it, the exit status is the input's
fg --diff fixtures/invalid/cut_then_concat.trc "$S" -o "$tmp/dd.svg" 2> "$tmp/dd.err"
rc=$?
[ $rc = 0 ] && [ "$(wc -l < "$tmp/dd.err")" = 1 ] && grep -q 'warning: fixtures/invalid/cut_then_concat.trc: .*damaged' "$tmp/dd.err" &&
  xmllint --noout "$tmp/dd.svg" || bad "damaged --diff base: exit $rc: $(cat "$tmp/dd.err")"

# bad input: one line naming what is wrong, exit 2, no output file
errcase() {
  local what=$1 want=$2
  shift 2
  rm -f "$tmp/out.svg"
  fg "$@" -o "$tmp/out.svg" 2> "$tmp/err"
  local rc=$?
  [ $rc = 2 ] || bad "$what: exit $rc, want 2"
  [ ! -e "$tmp/out.svg" ] || bad "$what: output file left behind"
  [ "$(wc -l < "$tmp/err")" = 1 ] && grep -q -- "$want" "$tmp/err" || bad "$what: message: $(cat "$tmp/err")"
}
errcase "missing --diff base" "$tmp/nope.trc" --diff "$tmp/nope.trc" "$tmp/fx.trc"
head -c 100 "$tmp/fx.trc" > "$tmp/cut.trc"
printf 'not a trace at all, not even close....' > "$tmp/junk.trc"
errcase "unusable --diff base" "junk.trc" --diff "$tmp/junk.trc" "$tmp/fx.trc"
errcase "unusable input" "junk.trc" "$tmp/junk.trc"
errcase "bad --weight" "--weight" --weight ms "$tmp/fx.trc"
errcase "--diff - with stdin" "stdin" --diff - < "$tmp/fx.trc"
errcase "bad --width" "--width" --width 5 "$tmp/fx.trc"

[ $fails -eq 0 ] || { echo "$fails failure(s)"; exit 1; }

# Headless Chromium: the page's state after a scripted click and search.
chrome=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
if [ -z "$chrome" ]; then
  echo "skip: no chromium for the browser check (scripts/install-deps installs it; other checks passed)"
  exit 77
fi
browser() { # SVG NAME REGEX WIDTH FOLDED
  python3 "$check" wrap "$1" "$tmp/page.html" "$2" "$3"
  local prof
  prof=$(mktemp -d)
  timeout 60 "$chrome" --headless --no-sandbox --disable-gpu --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync \
    --user-data-dir="$prof" --dump-dom "file://$tmp/page.html" > "$tmp/page.dom" 2> "$tmp/chrome.log"
  rm -rf "$prof"
  if python3 "$check" browser "$tmp/page.dom" "$5" "$2" "$3" "$4" > "$tmp/b.log" 2>&1; then
    cat "$tmp/b.log"
  else
    bad "browser ($1, $2): $(tail -n 2 "$tmp/b.log") $(tail -n 2 "$tmp/chrome.log")"
  fi
}
# the file itself, as opened from disk: the viewer starts and zooms
python3 "$check" standalone "$tmp/1.svg" "$tmp/alone.svg" 'main (proj/app.py:10)'
prof=$(mktemp -d)
timeout 60 "$chrome" --headless --no-sandbox --disable-gpu --no-first-run \
  --disable-background-networking --disable-component-update --disable-sync \
  --user-data-dir="$prof" --dump-dom "file://$tmp/alone.svg" > "$tmp/alone.dom" 2> "$tmp/chrome.log"
rm -rf "$prof"
grep -q 'data-check="zoomed:main (proj/app.py:10)"' "$tmp/alone.dom" ||
  bad "standalone SVG: the viewer did not zoom: $(grep -o 'data-check="[^"]*"' "$tmp/alone.dom")"
browser "$tmp/1.svg" 'main (proj/app.py:10)' '^fib ' 1200 "$tmp/1.folded"
browser "$tmp/5.svg" 'func_23 (pkg2/mod10.py:33)' 'func_2[0-9] ' 1200 "$tmp/5.folded"
[ $fails -eq 0 ] || { echo "$fails failure(s)"; exit 1; }
echo "conv_flamegraph: ok ($n layouts, diff, errors, browser)"
