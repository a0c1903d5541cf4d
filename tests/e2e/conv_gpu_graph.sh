#!/usr/bin/env bash
# Where a CUDA graph was captured, in the converters: the fake-CUPTI
# trace of tests/unit/cupti/test_gpu_graph.c (a graph captured at
# train.py:30 and replayed from train.py:42, another captured at :60 and
# replayed from :50; format 1.4's API_CALL graph ids) through
# trc-stats --gpu-callsites (one line per graph: launch line and
# captured-at line) and trc2chrome (graph, graph_node and captured_at in
# the kernel slices' args; capture_ns and the graph ids in the API
# slices' args), checked by Python's json module.
set -u
BUILD=${BUILD:-build} BIN=${BIN:-bin}
gen="$BUILD/tests/test_gpu_graph"
[ -x "$gen" ] || { echo "test_gpu_graph not built"; exit 77; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
TRC_TEST_GRAPH_TRACE="$tmp/g.trc" "$gen" >"$tmp/unit.log" 2>&1 || { cat "$tmp/unit.log"; exit 1; }
[ -s "$tmp/g.trc" ] || { echo "skip: built without the CUPTI headers"; exit 77; }

"$BIN/trc-stats" --gpu-callsites "$tmp/g.trc" >"$tmp/stats.txt" 2>"$tmp/stats.err" ||
  { echo "FAIL: trc-stats exited $?"; cat "$tmp/stats.err"; exit 1; }
grep -Eq '^  graph 9 \(pid [0-9]+\): 2 kernels, 0\.010 ms, launched at train\.py:42 \(step\), captured at train\.py:30 \(capture_graph\)$' "$tmp/stats.txt" ||
  { echo "FAIL: graph 9's line"; cat "$tmp/stats.txt"; exit 1; }
grep -Eq '^  graph 12 \(pid [0-9]+\): 1 kernels, 0\.005 ms, launched at train\.py:50 \(other_step\), captured at train\.py:60 \(capture_other\)$' "$tmp/stats.txt" ||
  { echo "FAIL: graph 12's line"; cat "$tmp/stats.txt"; exit 1; }

"$BIN/trc2chrome" -o "$tmp/g.json" "$tmp/g.trc" 2>"$tmp/chrome.err" ||
  { echo "FAIL: trc2chrome exited $?"; cat "$tmp/chrome.err"; exit 1; }
python3 - "$tmp/g.json" <<'PY' || exit 1
import json, sys
doc = json.load(open(sys.argv[1]))
ev = doc["traceEvents"] if isinstance(doc, dict) else doc
kernels = [e for e in ev if e.get("ph") == "X" and e.get("name") == "graph_kernel"]
assert len(kernels) == 3, len(kernels)
want = {9: ("capture_graph (train.py:30)", {101, 102}), 12: ("capture_other (train.py:60)", {201})}
nodes = {9: set(), 12: set()}
for k in kernels:
    a = k["args"]
    at, _ = want[a["graph"]]
    assert a["captured_at"] == at, a
    nodes[a["graph"]].add(a["graph_node"])
for g, (_, n) in want.items():
    assert nodes[g] == n, (g, nodes[g])
calls = [e for e in ev if e.get("ph") == "X" and e.get("name", "").startswith(("cudaGraphInstantiate", "cudaStreamEndCapture"))]
inst = [e["args"] for e in calls if e["name"] == "cudaGraphInstantiate"]
assert inst and inst[0]["graph"] == 7 and inst[0]["graph_exec"] == 9, inst
ends = [e["args"] for e in calls if e["name"] == "cudaStreamEndCapture" and "graph" in e["args"]]
assert len(ends) == 1 and ends[0]["graph"] == 7 and "graph_exec" not in ends[0], ends
# trc's own time inside each call that read a stack (the fake's hook
# writes frames: never 0 ns)
launches = [e["args"] for e in ev if e.get("ph") == "X" and e.get("name") == "cudaGraphLaunch"]
assert len(launches) == 2 and all(a["capture_ns"] > 0 for a in launches), launches
PY
echo ok
