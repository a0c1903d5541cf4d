#!/usr/bin/env bash
# The converters' selections on a recorded program (docs/converters.md
# "Selections"): train.py runs threads "Thread-1 (w)", "Thread-2 (w)" and
# "Other", each calling forward() of model.py and of loss.py, two modules
# that also burn time in their <module>.  Checked with trc2collapsed
# --threads (the roots name each sample's thread):
#  - --thread 'Thread-*' keeps those two threads only, an exact name and a
#    tid still select, and the threads by tid add up to the whole;
#  - --pid by the script's name keeps the process, a pattern naming none
#    of its names matches nothing;
#  - a selection that matches nothing: every converter prints one warning
#    naming it and listing the threads, exits 1 and writes no file;
#  - --no-lines keeps forward and <module> of each file apart.
# One interpreter: the selection code does not depend on the version.
# retry-once: records a live program against the clock (tests/run-all)
set -u
cd "${TRC_ROOT:-$(dirname "$0")/../..}"
BIN=${BIN:-bin}
case "$BIN" in /*) ;; *) BIN="$PWD/$BIN" ;; esac
. tests/e2e/lib/pythons.sh
. tests/e2e/lib/converters.sh
[ -x "$BIN/trec" ] || { echo "trec is not built"; exit 77; }
py=$(trec_pythons | head -n 1 | cut -d' ' -f1)
[ -n "$py" ] || { echo "no CPython 3.8+ interpreter found"; exit 77; }
tmp=$(mktemp -d)
[ -n "${KEEP:-}" ] && echo "keeping $tmp" || trap 'rm -rf "$tmp"' EXIT
fails=0
bad() { echo "FAIL: $*"; fails=$((fails + 1)); }
sum() { awk '{s += $NF} END {print s + 0}' "$@"; }

mkdir "$tmp/app"
for m in model loss; do
  cat > "$tmp/app/$m.py" <<'EOF'
import time
def forward(seconds):
    end = time.monotonic() + seconds
    n = 0
    while time.monotonic() < end:
        n += 1
    return n
end = time.monotonic() + 0.15  # time in this file's <module>
while time.monotonic() < end:
    pass
EOF
done
cat > "$tmp/app/train.py" <<'EOF'
import threading, time
import model, loss
def w():
    # idle first: the on-CPU samples below all come after trec has read
    # the thread's name (samples before that carry an older one)
    time.sleep(0.3)
    for _ in range(3):
        model.forward(0.06)
        loss.forward(0.06)
threads = [threading.Thread(target=w, name=n) for n in ("Thread-1 (w)", "Thread-2 (w)", "Other")]
for t in threads:
    t.start()
for t in threads:
    t.join()
EOF
(cd "$tmp/app" && timeout 60 "$BIN/trec" -q -o "$tmp/run.trc" "$py" train.py) 2> "$tmp/trec.err"
rc=$?
[ $rc -le 1 ] || { echo "FAIL: trec exited $rc: $(cat "$tmp/trec.err")"; exit 1; }

# run NAME WANT_EXIT TOOL ARGS...: output in $tmp/NAME.out, stderr in .err
run() {
  local name=$1 want=$2 tool=$3
  shift 3
  "$BIN/$tool" "$@" > "$tmp/$name.out" 2> "$tmp/$name.err"
  local got=$?
  # exit 1 is also what a recording with loss gives (a loaded machine)
  if [ "$want" = ok ]; then
    [ $got -le 1 ] && ! grep -q "match" "$tmp/$name.err" || bad "$name: exit $got ($(cat "$tmp/$name.err"))"
  else
    [ $got = "$want" ] || bad "$name: exit $got, want $want ($(cat "$tmp/$name.err"))"
  fi
}
# the thread names at the roots of a --threads output
roots() { sed 's/ (tid [0-9]*);.*//' "$1" | sort -u | tr '\n' '|'; }

run all ok trc2collapsed --threads "$tmp/run.trc"
[ "$(roots "$tmp/all.out")" = "MainThread|Other|Thread-1 (w)|Thread-2 (w)|" ] ||
  bad "the recording's threads: $(roots "$tmp/all.out")"

run pat ok trc2collapsed --threads --thread 'Thread-*' "$tmp/run.trc"
[ "$(roots "$tmp/pat.out")" = "Thread-1 (w)|Thread-2 (w)|" ] || bad "--thread 'Thread-*' kept: $(roots "$tmp/pat.out")"
run exact ok trc2collapsed --threads --thread 'Other' "$tmp/run.trc"
[ "$(roots "$tmp/exact.out")" = "Other|" ] || bad "--thread Other kept: $(roots "$tmp/exact.out")"
# by tid: every thread's samples, whatever its name was at the time (the
# few samples a thread gets before trec has read its name carry another)
tids() { sed -n "s/^$1 (tid \([0-9]*\));.*/\1/p" "$tmp/all.out" | head -n 1; }
t1=$(tids 'Thread-1 (w)') t2=$(tids 'Thread-2 (w)') to=$(tids Other) tm=$(tids MainThread)
for t in "$t1" "$t2" "$to" "$tm"; do
  [ -n "$t" ] || { bad "a thread is missing from the recording"; break; }
done
run tid12 ok trc2collapsed --threads --thread "$t1" --thread "$t2" "$tmp/run.trc"
run tido ok trc2collapsed --threads --thread "$to" "$tmp/run.trc"
run tidm ok trc2collapsed --threads --thread "$tm" "$tmp/run.trc"
[ "$(roots "$tmp/tido.out")" = "Other|" ] || bad "--thread $to (Other's tid) kept: $(roots "$tmp/tido.out")"
[ "$(sum "$tmp/tid12.out" "$tmp/tido.out" "$tmp/tidm.out")" = "$(sum "$tmp/all.out")" ] ||
  bad "the threads by tid do not add up to all: $(sum "$tmp/tid12.out") + $(sum "$tmp/tido.out") + $(sum "$tmp/tidm.out") != $(sum "$tmp/all.out")"
# by name: those samples, less at most the few from before the name
for p in "pat tid12" "exact tido"; do
  set -- $p
  a=$(sum "$tmp/$1.out") b=$(sum "$tmp/$2.out")
  [ "$a" -gt 0 ] && [ "$a" -le "$b" ] && [ $((b - a)) -le 20 ] || bad "$1: $a samples by name, $b by tid"
done

# --pid by name: the script's basename or the interpreter's
pyname=$(basename "$(readlink -f "$py")")
run pid_script ok trc2collapsed --threads --pid 'train*' "$tmp/run.trc"
cmp -s "$tmp/pid_script.out" "$tmp/all.out" || bad "--pid 'train*' is not the whole process"
run pid_exe ok trc2collapsed --threads --pid "$pyname" "$tmp/run.trc"
cmp -s "$tmp/pid_exe.out" "$tmp/all.out" || bad "--pid $pyname is not the whole process"
run pid_none 1 trc2collapsed --pid 'model*' -o "$tmp/none.txt" "$tmp/run.trc"
grep -q "^trc2collapsed: warning: $tmp/run.trc: --pid 'model\*' matches no process (processes: [0-9]* ($pyname, train.py))$" "$tmp/pid_none.err" ||
  bad "--pid 'model*': $(cat "$tmp/pid_none.err")"

# nothing matched: the same in every converter
for t in "${TRC_CONVERTERS[@]}"; do
  run "none_$t" 1 "$t" --thread 'Nope*' -o "$tmp/none_$t.file" "$tmp/run.trc"
  # the threads in the order the trace defines them
  [ "$(wc -l < "$tmp/none_$t.err")" -eq 1 ] &&
    grep -q "^$t: warning: $tmp/run.trc: --thread 'Nope\*' matches no thread (threads: [^()]*.*)$" "$tmp/none_$t.err" &&
    grep -q "[:,] Thread-1 (w)[,)]" "$tmp/none_$t.err" && grep -q "[:,] Thread-2 (w)[,)]" "$tmp/none_$t.err" &&
    grep -q "[:,] Other[,)]" "$tmp/none_$t.err" ||
    bad "$t --thread 'Nope*': $(cat "$tmp/none_$t.err")"
  [ -e "$tmp/none_$t.file" ] && bad "$t --thread 'Nope*' wrote a file"
  [ -s "$tmp/none_$t.out" ] && bad "$t --thread 'Nope*' wrote to stdout"
done
# --pid and --thread that each match, but not together
run both 1 trc2collapsed --pid 'train.py' --thread 'Nope' "$tmp/run.trc"
grep -q "^trc2collapsed: warning: .*: --pid 'train.py' --thread 'Nope' match no thread (threads of the selected processes: " "$tmp/both.err" ||
  bad "--pid train.py --thread Nope: $(cat "$tmp/both.err")"

# --no-lines: one frame per function and file
run nolines ok trc2collapsed --no-lines "$tmp/run.trc"
for f in '<module> \(([^;]*/)?train\.py\)' '<module> \(([^;]*/)?model\.py\)' \
  '<module> \(([^;]*/)?loss\.py\)' 'forward \(([^;]*/)?model\.py\)' 'forward \(([^;]*/)?loss\.py\)'; do
  grep -qE "(^|;)$f( |;)" "$tmp/nolines.out" || bad "--no-lines has no frame $f: $(head -c 400 "$tmp/nolines.out")"
done
grep -qE '(^|;)(forward|<module>)(;| [0-9]+$)|:[0-9]+\)' "$tmp/nolines.out" && bad "--no-lines: a frame without its file, or with a line"
[ "$(sum "$tmp/nolines.out")" = "$(sum "$tmp/all.out")" ] || bad "--no-lines total differs"
run nolines_full ok trc2collapsed --no-lines --full-filenames "$tmp/run.trc"
grep -qF "forward ($tmp/app/model.py)" "$tmp/nolines_full.out" || bad "--no-lines --full-filenames: $(head -c 300 "$tmp/nolines_full.out")"

[ $fails -eq 0 ] || { echo "$fails check(s) failed"; exit 1; }
echo "conv_select: ok ($py)"
