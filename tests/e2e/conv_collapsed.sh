#!/usr/bin/env bash
# trc2collapsed as users run it: every line of every variant follows the
# portable grammar and is accepted by the parsing rules of flamegraph.pl,
# speedscope and inferno (zero ignored lines, checked in perl and python),
# counts sum to the samples the generator wrote (and the sample count
# trc-dump reports), selections.  The fixture's golden outputs are cases
# of tests/e2e/conv_goldens.sh (fixtures/convert/collapsed_fixture*).
set -u
cd "${TRC_ROOT:-$(dirname "$0")/../..}"
BUILD=${BUILD:-build} BIN=${BIN:-bin}
gen=$BUILD/tests/conv-gen tool=$BIN/trc2collapsed
for f in "$gen" "$tool"; do [ -x "$f" ] || { echo "FAIL: $f not built"; exit 1; }; done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
bad() { echo "FAIL: $*"; fails=$((fails + 1)); }

# "samples N on_cpu N on_cpu_ns N idle N gil N" -> shell variables
read -r _ samples _ on_cpu _ on_cpu_ns _ idle _ gil < <("$gen" fixture "$tmp/fx.trc") ||
  { echo "FAIL: generator"; exit 1; }
"$gen" big 200000 "$tmp/big.trc" > "$tmp/big.info" || { echo "FAIL: generator (big)"; exit 1; }
read -r _ big_samples _ big_on_cpu _ _ _ _ _ _ < "$tmp/big.info"

# If trc-dump can summarise, its sample count must agree with the generator.
if [ -x "$BIN/trc-dump" ] && "$BIN/trc-dump" --summary "$tmp/fx.trc" > "$tmp/dump.txt" 2>/dev/null; then
  n=$(grep -oiE '^ *samples[^0-9]*[0-9]+' "$tmp/dump.txt" | head -n 1 | grep -oE '[0-9]+$')
  if [ -n "$n" ] && [ "$n" != "$samples" ]; then bad "trc-dump --summary says $n samples, generator wrote $samples"; fi
  n=$(grep -E '^samples:' "$tmp/dump.txt" | grep -oE '[0-9]+ on cpu' | head -n 1 | grep -oE '^[0-9]+')
  if [ -n "$n" ] && [ "$n" != "$on_cpu" ]; then bad "trc-dump --summary says $n on-CPU samples, generator wrote $on_cpu"; fi
fi

# check FILE EXPECTED_SUM: grammar + the consumers' own parsing rules.
check() {
  local f=$1 want=$2
  if grep -vqE '^[^ ]+( [^ ]+)* [0-9]+$' "$f"; then
    bad "$f: lines outside the portable grammar:"; grep -vE '^[^ ]+( [^ ]+)* [0-9]+$' "$f" | head -n 3
  fi
  # flamegraph.pl's own parse (stackcollapse input loop), in perl itself
  local pl
  pl=$(perl -ne 'chomp; my ($stack, $samples) = (/^(.*)\s+?(\d+(?:\.\d*)?)$/);
         if (defined $samples and defined $stack and $stack ne "") { $t += $samples } else { $ign++ }
         END { printf "%d %d\n", $t, $ign // 0 }' "$f")
  [ "$pl" = "$want 0" ] || bad "$f: flamegraph.pl rule gives 'sum ignored' = '$pl', want '$want 0'"
  python3 - "$f" "$want" <<'EOF' || bad "$1: speedscope/inferno rules"
import re, sys
path, want = sys.argv[1], int(sys.argv[2])
ss = inf = 0
for line in open(path, encoding="utf-8", newline="\n").read().split("\n"):
    if line == "":
        continue
    m = re.match(r"^(.*) (\d+)$", line)            # speedscope importFromBGFlameGraph
    if not m: sys.exit(f"speedscope would skip: {line!r}")
    ss += int(m.group(2))
    stack, _, count = line.rpartition(" ")           # inferno: rsplit on the last space
    if not stack or not count.isdigit(): sys.exit(f"inferno would reject: {line!r}")
    if any(f == "" for f in stack.split(";")): sys.exit(f"empty frame: {line!r}")
    inf += int(count)
if ss != want or inf != want: sys.exit(f"sums {ss} {inf} != {want}")
EOF
}

# default: on-CPU samples
"$tool" "$tmp/fx.trc" > "$tmp/default.txt"; rc=$?
[ $rc -eq 0 ] || bad "default run exit $rc"
check "$tmp/default.txt" "$on_cpu"
# stdin and -o give the same bytes
"$tool" < "$tmp/fx.trc" > "$tmp/stdin.txt" && cmp -s "$tmp/default.txt" "$tmp/stdin.txt" || bad "stdin output differs"
"$tool" -o "$tmp/o.txt" - < "$tmp/fx.trc" && cmp -s "$tmp/default.txt" "$tmp/o.txt" || bad "-o output differs"
ls "$tmp" | grep -q '\.tmp\.' && bad "temp file left behind"

# variants and their sums
"$tool" --idle "$tmp/fx.trc" > "$tmp/idle.txt" && check "$tmp/idle.txt" "$samples"
"$tool" --gil "$tmp/fx.trc" > "$tmp/gil.txt" && check "$tmp/gil.txt" "$gil"
"$tool" --threads --pids --full-filenames "$tmp/fx.trc" > "$tmp/threads.txt" && check "$tmp/threads.txt" "$on_cpu"
"$tool" --no-lines "$tmp/fx.trc" > "$tmp/nolines.txt" && check "$tmp/nolines.txt" "$on_cpu"
"$tool" --weight us "$tmp/fx.trc" > "$tmp/us.txt" && check "$tmp/us.txt" $((on_cpu_ns / 1000))
"$tool" --threads --weight samples "$tmp/big.trc" > "$tmp/big.txt" && check "$tmp/big.txt" "$big_on_cpu"
"$tool" --idle "$tmp/big.trc" > "$tmp/bigidle.txt" && check "$tmp/bigidle.txt" "$big_samples"

# the names that need escaping came out escaped, and the thread frames are there
grep -q 'odd%3Bname%25%09x (/home/u/proj/odd file.py:5)' "$tmp/threads.txt" || bad "escaped odd;name frame missing"
grep -q '^app.py (pid 100);pool%3B1%0A (tid 101);compute' "$tmp/threads.txt" || bad "pid/thread root frames missing"
# processes by script and module (lib/procname.c): "python3 app.py", "python3 -m worker"
grep -q '^worker (pid 200);' "$tmp/threads.txt" || bad "-m process not named by its module"
grep -q '^<no Python frames> 1$' "$tmp/default.txt" || bad "no-Python-frames sample missing"

# selections: per thread and per process sums add up
a=$("$tool" --thread MainThread "$tmp/fx.trc" | awk '{s+=$NF} END {print s+0}')
b=$("$tool" --thread 101 "$tmp/fx.trc" | awk '{s+=$NF} END {print s+0}')
c=$("$tool" --pid 200 "$tmp/fx.trc" | awk '{s+=$NF} END {print s+0}')
[ $((a + b + c)) -eq "$on_cpu" ] || bad "thread/pid selections: $a + $b + $c != $on_cpu"
[ "$c" -eq 3 ] || bad "--pid 200 kept $c samples, want 3"
w=$("$tool" --from 0.006 --to 0.012 --thread MainThread "$tmp/fx.trc" | awk '{s+=$NF} END {print s+0}')
[ "$w" -eq 6 ] || bad "--from 0.006 --to 0.012 kept $w MainThread samples, want 6"

[ $fails -eq 0 ] || { echo "$fails failure(s)"; exit 1; }
echo "conv_collapsed: ok"
