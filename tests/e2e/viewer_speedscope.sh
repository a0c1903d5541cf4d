#!/usr/bin/env bash
# Browser proof: trc2speedscope and trc2chrome output (CPU, and GPU with
# evented stream profiles) opens in the real speedscope app (the pinned npm package, served on 127.0.0.1) in Debian's
# headless chromium.  We read the rendered page text (--dump-dom): a loaded
# profile shows the toolbar ("Time Order", "Left Heavy", "Sandwich") and
# its profile name; a broken file (one negative weight) shows "Something
# went wrong" (and no toolbar), which proves the check can fail.
# speedscope's console must also be free of import warnings (a Chrome
# trace whose slices do not nest under its float arithmetic logs "Tried
# to end ...").  Chrome traces are served as *.trace.json: speedscope picks
# its Chrome *Timeline* importer for names ending in ".chrome.json".
# Exit 0 pass, 77 skip (reason on the last line), else fail.
set -u
cd "${TRC_ROOT:-$(dirname "$0")/../..}"
BUILD=${BUILD:-build} BIN=${BIN:-bin}
app=node_modules/speedscope/dist/release
gen=$BUILD/tests/timeline-gen

chromium_bin=""
for c in chromium chromium-browser; do
  if command -v "$c" >/dev/null 2>&1; then chromium_bin=$(command -v "$c"); break; fi
done
if [ -z "$chromium_bin" ]; then echo "skip: chromium is not installed (scripts/install-deps installs it)"; exit 77; fi
if [ ! -f "$app/index.html" ]; then echo "skip: $app/index.html missing: run scripts/install-deps (npm ci)"; exit 77; fi
for f in "$BIN/trc2speedscope" "$BIN/trc2chrome" "$gen"; do
  [ -x "$f" ] || { echo "FAIL: $f not built"; exit 1; }
done

tmp=$(mktemp -d)
server_pid=""
cleanup() {
  if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null; wait "$server_pid" 2>/dev/null; fi
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

www=$tmp/www
mkdir -p "$www" "$tmp/home"
cp -R "$app"/. "$www"/

# The inputs: the small fixture (exit 0: the few missed samples it records
# are too few ticks for the 5 % rule, docs/exit-codes.md) and a mid-size trace.
"$gen" --write-small "$tmp/small.trc" || { echo "FAIL: cannot write the small trace"; exit 1; }
"$gen" --write-big 40000 4 "$tmp/big.trc" || { echo "FAIL: cannot write the big trace"; exit 1; }
run_tool() { # run_tool EXPECTED_RC TOOL ARGS...
  local want=$1; shift
  "$@" 2>"$tmp/stderr"; local rc=$?
  if [ "$rc" != "$want" ]; then echo "FAIL: $* exited $rc, expected $want"; cat "$tmp/stderr"; exit 1; fi
}
run_tool 0 "$BIN/trc2speedscope" -o "$www/small.speedscope.json" "$tmp/small.trc"
run_tool 0 "$BIN/trc2speedscope" --idle --merge-threads -o "$www/merged.speedscope.json" "$tmp/small.trc"
run_tool 0 "$BIN/trc2speedscope" --merge-threads -o "$www/big.speedscope.json" "$tmp/big.trc"
run_tool 0 "$BIN/trc2chrome" --idle -o "$www/small.trace.json" "$tmp/small.trc"
run_tool 0 "$BIN/trc2chrome" -o "$www/big.trace.json" "$tmp/big.trc"
# GPU outputs (tests/e2e/conv_speedscope_chrome_gpu.sh checks their structure): the
# fixture recorded through the injection code (exit 1: it records dropped
# GPU records) and a synthetic training trace with CPU samples, API calls,
# overlapping stream work, NVTX and NVML counters.  speedscope opens a
# file's activeProfileIndex: a copy pointing at a GPU stream's evented
# profile proves that one imports and renders too.
"$gen" --write-gpu 3000 "$tmp/train.trc" >/dev/null || { echo "FAIL: cannot write the GPU trace"; exit 1; }
run_tool 1 "$BIN/trc2speedscope" -o "$www/gpu.speedscope.json" fixtures/gpu/fake_train.trc
run_tool 1 "$BIN/trc2chrome" -o "$www/gpu.trace.json" fixtures/gpu/fake_train.trc
run_tool 1 "$BIN/trc2speedscope" -o "$www/train.speedscope.json" "$tmp/train.trc"
# --syncs: one sampled profile of the fixture's blocking calls
run_tool 1 "$BIN/trc2speedscope" --syncs -o "$www/syncs.speedscope.json" fixtures/gpu/fake_train.trc
run_tool 1 "$BIN/trc2chrome" -o "$www/train.trace.json" "$tmp/train.trc"
python3 - "$www/train.speedscope.json" "$www/train13.speedscope.json" <<'EOF3' || { echo "FAIL: cannot make train13.speedscope.json"; exit 1; }
import json, sys
d = json.load(open(sys.argv[1], encoding="utf-8"))
d["activeProfileIndex"] = [p["name"] for p in d["profiles"]].index("GPU 0 stream 13")
json.dump(d, open(sys.argv[2], "w", encoding="utf-8"))
EOF3

# A broken file: the small document with one negative weight, which
# speedscope rejects.  (A file cut in half is no good: speedscope then
# tries its text importers and the page never settles.)
python3 - "$www/small.speedscope.json" "$www/broken.json" <<'EOF2' || { echo "FAIL: cannot make broken.json"; exit 1; }
import json, sys
d = json.load(open(sys.argv[1], encoding="utf-8"))
d["profiles"][0]["weights"][0] = -1000
json.dump(d, open(sys.argv[2], "w", encoding="utf-8"))
EOF2

# Serve app and files; the server picks a free port and tells us which.
( cd "$www" && exec python3 -u -m http.server --bind 127.0.0.1 0 ) >"$tmp/server.log" 2>&1 &
server_pid=$!
port=""
for _ in $(seq 1 100); do
  port=$(sed -n 's/.*port \([0-9][0-9]*\).*/\1/p' "$tmp/server.log" | head -n 1)
  [ -n "$port" ] && break
  kill -0 "$server_pid" 2>/dev/null || break
  sleep 0.1
done
if [ -z "$port" ]; then echo "FAIL: http.server did not start"; cat "$tmp/server.log"; exit 1; fi
base="http://127.0.0.1:$port"

# page FILE -> the page text (tags stripped) after speedscope loaded FILE
page() {
  local prof=$tmp/profile.$RANDOM
  mkdir -p "$prof"
  HOME=$tmp/home timeout 60 "$chromium_bin" --headless --no-sandbox --disable-gpu --disable-quic \
    --no-first-run --disable-background-networking --disable-component-update --disable-sync \
    --disable-dev-shm-usage --user-data-dir="$prof" --virtual-time-budget=10000 \
    --enable-logging=stderr --v=0 \
    --dump-dom "$base/index.html#profileURL=$base/$1" 2>"$tmp/chromium.err" |
    sed -e 's/<[^>]*>/ /g' | tr -s ' \n' ' '
}

fails=0
check() { # check FILE EXPECTED-TEXT...
  local file=$1; shift
  local text
  text=$(page "$file")
  if [ -z "$text" ]; then
    text=$(page "$file") # one retry: a cold chromium on a loaded machine
  fi
  for want in "$@"; do
    if [[ "$text" != *"$want"* ]]; then
      echo "FAIL: $file: page does not show \"$want\""
      echo "page text: ${text:0:600}"
      grep -F 'CONSOLE' "$tmp/chromium.err" | grep -v WebGL | tail -n 5
      fails=$((fails + 1))
      return
    fi
  done
  if [[ "$text" == *"Something went wrong"* ]]; then
    echo "FAIL: $file: speedscope reports an error"; fails=$((fails + 1)); return
  fi
  if grep -F 'CONSOLE' "$tmp/chromium.err" | grep -E 'Tried to|still open|Failed to load|rror' | grep -v WebGL >"$tmp/warn"; then
    echo "FAIL: $file: speedscope's console has warnings:"; head -n 5 "$tmp/warn"
    fails=$((fails + 1)); return
  fi
  grep -q 'CONSOLE.*Importing as' "$tmp/chromium.err" ||
    { echo "FAIL: $file: no import message in speedscope's console"; fails=$((fails + 1)); return; }
  echo "ok: $file shows: $*"
}

check small.speedscope.json "Time Order" "Left Heavy" "Sandwich" "app.py (pid 4242): MainThread"
check merged.speedscope.json "Time Order" "Left Heavy" "Sandwich" "app.py (pid 4242)"
check big.speedscope.json "Time Order" "Left Heavy" "Sandwich" "(pid 4242)"
# speedscope names Chrome-trace profiles "PROCESS (pid P), THREAD (tid T)".
check small.trace.json "Time Order" "Left Heavy" "Sandwich" "app.py (pid 4242), MainThread (tid 4242)"
check big.trace.json "Time Order" "Left Heavy" "Sandwich" "MainThread (tid 4242)"

# the file name ends with the share of GPU time with a Python line (its title)
check gpu.speedscope.json "Time Order" "Left Heavy" "Sandwich" "GPU 0 stream 7" "of GPU time has a Python line"
check train.speedscope.json "Time Order" "Left Heavy" "Sandwich" "app.py (pid 4242): MainThread"
check train13.speedscope.json "Time Order" "Left Heavy" "Sandwich" "GPU 0 stream 13"
check syncs.speedscope.json "Time Order" "Left Heavy" "Sandwich" "syncs: host time blocked"
check gpu.trace.json "Time Order" "Left Heavy" "Sandwich" "GPU 0: NVIDIA H100 80GB HBM3 (fake) (pid 2147418112)"
check train.trace.json "Time Order" "Left Heavy" "Sandwich" "(pid 4242), MainThread (tid 4242)"

# The negative control: a broken file is rejected, and the toolbar is absent.
text=$(page broken.json)
if [[ "$text" != *"Something went wrong"* ]] || [[ "$text" == *"Left Heavy"* ]]; then
  echo "FAIL: broken.json: expected \"Something went wrong\" and no toolbar"
  echo "page text: ${text:0:600}"
  fails=$((fails + 1))
else
  echo "ok: broken.json shows \"Something went wrong\""
fi

[ "$fails" -eq 0 ] || { echo "$fails viewer check(s) failed"; exit 1; }
echo "all viewer checks passed"
