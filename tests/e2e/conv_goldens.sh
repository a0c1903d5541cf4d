#!/usr/bin/env bash
# The converter golden runner: every case in fixtures/convert/CASE/ runs
# one converter on one input and must give exactly the pinned output, with
# the pinned exit status.  A case is data (fixtures/convert/README.md):
#   cmd           the command, one line; {in} is the input, {out} the
#                 output file (without {out} the output is standard output)
#   input         "NAME SOURCE": the input is called NAME in the run's
#                 directory (it shows in some outputs) and comes from
#                 SOURCE, a file of the repository or "gen PROGRAM ARGS...",
#                 a generator in $BUILD/tests that writes it (the file name
#                 is appended to ARGS)
#   exit          the exit status, when not 0
#   expected.EXT  the output, produced by the tool (UPDATE_GOLDEN=1 rewrites
#                 it: review the diff before committing)
# Each golden is also read by an independent consumer chosen by its kind
# (EXT): JSON by python3's json module, .pstats by python3's pstats, CSV by
# its csv module (rectangular), folded stacks by the line grammar
# flamegraph.pl, speedscope and inferno accept ("STACK COUNT"), SVG by
# xmllint.  Cases
# that need a generator not built are a failure, not a skip.
set -u
cd "${TRC_ROOT:-$(dirname "$0")/../..}"
BUILD=${BUILD:-build} BIN=${BIN:-bin}
bindir=$(cd "$BIN" && pwd) builddir=$(cd "$BUILD" && pwd) root=$PWD
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0 n=0
bad() { echo "FAIL: $*"; fails=$((fails + 1)); }

# consumer KIND FILE: the independent reading of a golden; exit 0 if it
# accepts the file.
consumer() {
  case $1 in
    *json) python3 -c 'import json, sys; json.load(open(sys.argv[1], encoding="utf-8"))' "$2" ;;
    pstats) python3 -c '
import io, pstats, sys
s = pstats.Stats(sys.argv[1], stream=io.StringIO())
assert s.total_calls > 0 and s.stats, "no functions"
s.print_stats()' "$2" ;;
    csv) python3 -c '
import csv, sys
rows = [r for r in csv.reader(open(sys.argv[1], newline="", encoding="utf-8")) if r]
width = max(len(r) for r in rows)
wide = [r for r in rows if len(r) == width]
assert len(wide) >= 2, "no table"' "$2" ;;
    collapsed) ! grep -vqE '^[^ ].* [0-9]+$' "$2" && [ -s "$2" ] ;;
    svg) xmllint --noout "$2" ;;
    *) [ -s "$2" ] ;;
  esac
}

for dir in fixtures/convert/*/; do
  dir=${dir%/} case=$(basename "$dir")
  n=$((n + 1))
  want=$(ls "$dir"/expected.* 2>/dev/null | head -n 1)
  [ -n "$want" ] && [ -f "$dir/cmd" ] && [ -f "$dir/input" ] ||
    { bad "$case: needs cmd, input and expected.EXT"; continue; }
  kind=${want##*/expected.}
  read -r cmdline < "$dir/cmd"
  read -r in_name source < "$dir/input"
  want_rc=0; [ -f "$dir/exit" ] && read -r want_rc < "$dir/exit"
  run=$tmp/$case
  mkdir -p "$run"
  if [[ $source == gen\ * ]]; then
    read -r -a g <<<"${source#gen }"
    [ -x "$builddir/tests/${g[0]}" ] || { bad "$case: generator $BUILD/tests/${g[0]} not built"; continue; }
    "$builddir/tests/${g[0]}" "${g[@]:1}" "$run/$in_name" > /dev/null ||
      { bad "$case: generator ${g[*]} failed"; continue; }
  else
    cp "$root/$source" "$run/$in_name" || { bad "$case: input $source missing"; continue; }
  fi
  read -r -a words <<<"$cmdline"
  tool=${words[0]} args=() to_stdout=1
  for w in "${words[@]:1}"; do
    case $w in
      '{in}') args+=("$in_name") ;;
      '{out}') args+=("out.$kind"); to_stdout=0 ;;
      *) args+=("$w") ;;
    esac
  done
  [ -x "$bindir/$tool" ] || { bad "$case: $BIN/$tool not built"; continue; }
  if [ $to_stdout = 1 ]; then
    (cd "$run" && "$bindir/$tool" "${args[@]}" > "out.$kind" 2> err)
  else
    (cd "$run" && "$bindir/$tool" "${args[@]}" 2> err)
  fi
  rc=$?
  [ "$rc" = "$want_rc" ] || bad "$case: $cmdline exit $rc, want $want_rc ($(head -c 300 "$run/err"))"
  if [ "${UPDATE_GOLDEN:-0}" = 1 ]; then
    cp "$run/out.$kind" "$want" && echo "updated $want"
  elif ! cmp -s "$run/out.$kind" "$want"; then
    bad "$case: output differs from $want"
    diff <(od -c "$want") <(od -c "$run/out.$kind") | head -n 10
  fi
  consumer "$kind" "$want" > "$run/consumer.log" 2>&1 ||
    { bad "$case: $want is not a valid $kind file"; head -n 5 "$run/consumer.log"; }
done
[ $n -gt 0 ] || bad "no cases in fixtures/convert/"

[ $fails -eq 0 ] || { echo "$fails failure(s) in $n cases"; exit 1; }
echo "conv_goldens: $n cases ok"
