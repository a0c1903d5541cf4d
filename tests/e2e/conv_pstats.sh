#!/usr/bin/env bash
# trc2pstats and trc-stats against the real consumer: with EVERY installed
# Python 3.8–3.13, the pstats file loads, prints (print_stats,
# print_callers, print_callees), meets snakeviz's and gprof2dot's
# expectations (every caller is a key, caller values are 4-tuples), and
# each of its rows, formatted by pstats itself, equals trc-stats's row;
# the totals lines agree.  The fixture's golden outputs are cases of
# tests/e2e/conv_goldens.sh (fixtures/convert/{pstats,stats}_fixture*).
set -u
cd "${TRC_ROOT:-$(dirname "$0")/../..}"
BUILD=${BUILD:-build} BIN=${BIN:-bin}
gen=$BUILD/tests/conv-gen ps=$BIN/trc2pstats st=$BIN/trc-stats
for f in "$gen" "$ps" "$st"; do [ -x "$f" ] || { echo "FAIL: $f not built"; exit 1; }; done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
bad() { echo "FAIL: $*"; fails=$((fails + 1)); }

# Interpreters 3.8–3.13, found at run time.
pythons=()
. tests/e2e/lib/pythons.sh
pyenv_root=$(trec_pyenv_root) || pyenv_root=""
for p in ${pyenv_root:+"$pyenv_root"/versions/*/bin/python3} /usr/bin/python3 /usr/local/bin/python3; do
  [ -x "$p" ] || continue
  v=$("$p" -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null) || continue
  case $v in 3.8|3.9|3.10|3.11|3.12|3.13) pythons+=("$p") ;; esac
done
[ ${#pythons[@]} -gt 0 ] || { echo "no Python 3.8-3.13 found"; exit 77; }

"$gen" fixture "$tmp/fx.trc" > /dev/null || { echo "FAIL: generator"; exit 1; }
"$gen" big 100000 "$tmp/big.trc" > /dev/null || { echo "FAIL: generator (big)"; exit 1; }

# check.py PSTATS TRC_STATS_OUTPUT: loads, prints, graph shape, rows = trc-stats rows.
cat > "$tmp/check.py" <<'EOF'
import io, marshal, pstats, re, sys
path, stats_txt = sys.argv[1], sys.argv[2]
def fail(msg):
    sys.exit(f"{sys.version.split()[0]}: {path}: {msg}")
out = io.StringIO()
s = pstats.Stats(path, stream=out)
s.sort_stats("cumulative").print_stats()
s.print_callers()
s.print_callees()
s.sort_stats("time", "calls").print_stats(5)
text = out.getvalue()
if "function calls" not in text or "was called by" not in text: fail("print_* printed nothing useful")
# the raw dict, as snakeviz and gprof2dot walk it
with open(path, "rb") as f:
    d = marshal.load(f)
if not isinstance(d, dict) or not d: fail("not a non-empty dict")
total_tt = 0.0
for key, val in d.items():
    if not (isinstance(key, tuple) and len(key) == 3 and isinstance(key[0], str)
            and isinstance(key[1], int) and isinstance(key[2], str)): fail(f"bad key {key!r}")
    if not (isinstance(val, tuple) and len(val) == 5): fail(f"bad value for {key!r}")
    cc, nc, tt, ct, callers = val
    if not (isinstance(cc, int) and isinstance(nc, int) and 0 <= cc <= nc): fail(f"bad counts {key!r}")
    if not (isinstance(tt, float) and isinstance(ct, float) and 0 <= tt <= ct + 1e-12): fail(f"bad times {key!r}")
    if not isinstance(callers, dict): fail("callers not a dict")
    caller_nc = 0
    for ck, cv in callers.items():
        if ck not in d: fail(f"caller {ck!r} of {key!r} is not a top-level key (snakeviz)")
        if not (isinstance(cv, tuple) and len(cv) == 4): fail(f"caller value not a 4-tuple (gprof2dot)")
        enc, ecc, ett, ect = cv  # (nc, cc, tt, ct) as gprof2dot unpacks them
        if not (0 <= ecc <= enc and 0 <= ett <= ect + 1e-12 and ect <= ct + 1e-12): fail(f"bad edge {ck!r}->{key!r}")
        caller_nc += enc
    if caller_nc > nc: fail(f"callers' calls {caller_nc} exceed ncalls {nc} of {key!r}")
    total_tt += tt
if abs(total_tt - s.total_tt) > 1e-9: fail("total_tt mismatch")
# pstats' own row format for every function vs trc-stats's table
rows = io.StringIO()
s.stream = rows
for func in s.stats:
    s.print_line(func)
want = sorted(l.rstrip() for l in rows.getvalue().splitlines())
got, seen_title, totals = [], False, None
for line in open(stats_txt, encoding="utf-8"):
    line = line.rstrip("\n")
    if re.match(r"^\s+\d+ function calls", line): totals = line.split()
    if line.startswith("   ncalls  tottime"): seen_title = True; continue
    if seen_title and line.strip(): got.append(line.rstrip())
if sorted(got) != want:
    fail("rows differ from trc-stats:\n  " + "\n  ".join(sorted(set(want) ^ set(got))[:6]))
calls = f"{s.total_calls} function calls" + (f" ({s.prim_calls} primitive calls)" if s.total_calls != s.prim_calls else "")
mine = f"{calls} in {s.total_tt:.3f} seconds".split()
if totals != mine: fail(f"totals line {totals} != pstats {mine}")
print(f"{sys.version.split()[0]}: {len(d)} functions, {s.total_calls} calls, {s.total_tt:.6f} s")
EOF

for trace in fx big; do
  for sel in "" "--idle" "--thread MainThread --from 0.001"; do
    # shellcheck disable=SC2086
    "$ps" $sel -o "$tmp/$trace.pstats" "$tmp/$trace.trc" || { bad "trc2pstats $sel $trace exit $?"; continue; }
    # shellcheck disable=SC2086
    "$st" $sel --limit 0 "$tmp/$trace.trc" > "$tmp/$trace.stats" || { bad "trc-stats $sel $trace exit $?"; continue; }
    for py in "${pythons[@]}"; do
      "$py" "$tmp/check.py" "$tmp/$trace.pstats" "$tmp/$trace.stats" || bad "$py on $trace $sel"
      # python -m pstats, the way a user opens it
      printf 'sort cumulative\nstats 5\ncallers fib\nquit\n' | "$py" -m pstats "$tmp/$trace.pstats" > "$tmp/cli.txt" 2>&1 ||
        bad "$py -m pstats exit $?"
      grep -q "function calls" "$tmp/cli.txt" || bad "$py -m pstats printed no table"
    done
  done
done

# sort spellings: pstats' names and ours order alike; --limit; --callers/--callees
"$st" --sort time "$tmp/fx.trc" > "$tmp/a.txt"; "$st" --sort tottime "$tmp/fx.trc" > "$tmp/b.txt"
cmp -s "$tmp/a.txt" "$tmp/b.txt" || bad "--sort time != --sort tottime"
"$st" --sort cumulative --limit 3 "$tmp/fx.trc" > "$tmp/c.txt"
[ "$(sed -n '/^   ncalls/,$p' "$tmp/c.txt" | grep -c '[0-9]')" -eq 3 ] || bad "--limit 3 did not print 3 rows"
"$st" --bogus "$tmp/fx.trc" > /dev/null 2>&1; [ $? -eq 2 ] || bad "unknown option not exit 2"
"$st" --sort nonsense "$tmp/fx.trc" > /dev/null 2>&1; [ $? -eq 2 ] || bad "bad --sort not exit 2"
"$st" --callers 'fib' --callees 'fib' "$tmp/fx.trc" > "$tmp/callers.txt" || bad "--callers exit $?"
grep -q 'was called by' "$tmp/callers.txt" && grep -q 'called\.\.\.' "$tmp/callers.txt" || bad "--callers/--callees sections missing"
grep -qE '3/0 +0\.003 +0\.003  /home/u/proj/app.py:29\(fib\)' "$tmp/callers.txt" || bad "fib's recursive caller edge (3/0) missing"

# the header names the processes as every converter does (lib/procname.c)
"$st" "$tmp/fx.trc" | grep -qx 'processes:  2: app.py (pid 100), worker (pid 200)' ||
  bad "header does not name the processes by script and module"

[ $fails -eq 0 ] || { echo "$fails failure(s)"; exit 1; }
echo "conv_pstats: ok with ${#pythons[@]} Python versions"
