#!/usr/bin/env bash
# docs/gpu.md answers three questions, each in a section of its own ("Why
# is my GPU idle?", "Where does my code wait for the GPU?", "Which line
# launched this kernel?") with recipes whose output is shown.  Every
# "$ COMMAND" in those sections' code blocks that shows output is run
# here on the trace the text names, and its output must be the one shown
# (a "..." line stands for lines left out: what comes before it must
# open the output, what comes after it must end it).  So the shown output
# is the tools' own, and a change of the tools that changes it fails
# here until the docs say what the tools now print.  The traces:
# run.trc and fixtures/gpu/fake_train.trc (the fake-CUPTI fixture),
# train.trc and two.trc (tests/support/nvvp_traces.h: nvvp-gen fixture,
# two-devices), idle.trc (tests/support/idle_traces.h: idle-gen).
set -u
cd "${TRC_ROOT:-$(dirname "$0")/../..}"
BUILD=${BUILD:-build} BIN=${BIN:-bin}
for f in "$BUILD/tests/nvvp-gen" "$BUILD/tests/idle-gen" "$BIN/trc-stats" "$BIN/trc2collapsed"; do
  [ -x "$f" ] || { echo "FAIL: $f not built (make all $BUILD/tests/nvvp-gen $BUILD/tests/idle-gen)"; exit 1; }
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/fixtures/gpu"
cp fixtures/gpu/fake_train.trc "$tmp/run.trc"
cp fixtures/gpu/fake_train.trc "$tmp/fixtures/gpu/fake_train.trc"
"$BUILD/tests/nvvp-gen" --write fixture "$tmp/train.trc" > /dev/null &&
  "$BUILD/tests/nvvp-gen" --write two-devices "$tmp/two.trc" > /dev/null &&
  "$BUILD/tests/idle-gen" "$tmp/idle.trc" > /dev/null || { echo "FAIL: a trace generator failed"; exit 1; }

python3 - docs/gpu.md "$tmp" "$(cd "$BIN" && pwd)" <<'EOF'
import os, re, subprocess, sys
doc, where, bindir = sys.argv[1:]
text = open(doc, encoding="utf-8").read()
questions = ["Why is my GPU idle?", "Where does my code wait for the GPU?",
             "Which line launched this kernel?"]
env = dict(os.environ, PATH=bindir + os.pathsep + os.environ["PATH"])
fails = 0
for q in questions:
    m = re.search(r"^## " + re.escape(q) + r"\n(.*?)(?=^## |\Z)", text, re.S | re.M)
    if not m:
        print("FAIL: docs/gpu.md has no section '## %s'" % q)
        fails += 1
        continue
    recipes = []
    for block in re.findall(r"^ *```\n(.*?)^ *```", m.group(1), re.S | re.M):
        cmd, out = None, []
        for line in block.splitlines() + ["$ "]:
            if line.startswith("$ "):
                if cmd and out:
                    recipes.append((cmd, out))
                cmd, out = line[2:].strip(), []
            elif cmd:
                out.append(line)
    if not recipes:
        print("FAIL: '%s': no command with its output shown" % q)
        fails += 1
    for cmd, want in recipes:
        got = subprocess.run(["bash", "-c", cmd], cwd=where, env=env, stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL, text=True).stdout.splitlines()
        if "..." in want:
            i = want.index("...")
            head, tail = want[:i], want[i + 1:]
            ok = got[:len(head)] == head and (not tail or got[-len(tail):] == tail)
        else:
            ok = got == want
        if not ok:
            fails += 1
            print("FAIL: '%s': $ %s\n  shown:\n    %s\n  printed:\n    %s" %
                  (q, cmd, "\n    ".join(want), "\n    ".join(got)))
        else:
            print("ok: %s: $ %s (%d lines)" % (q, cmd, len(want)))
sys.exit(1 if fails else 0)
EOF
