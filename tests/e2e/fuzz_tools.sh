#!/usr/bin/env bash
# Every converter on a few hundred seeded mutants of the fixtures
# (tests/fuzz/mutate.c: raw damage, chunk reordering, header fields and
# record bodies behind fixed CRCs).  For each run: exit status 0, 1 or 2
# (never a signal, sanitizer report or hang), JSON output that parses
# whenever the exit status is 0 or 1, no output file left behind on exit
# 2 and no temp file left next to an -o output.
# FUZZ_TOOLS_PER_FILE overrides the number of mutants per fixture.
set -u
cd "${TRC_ROOT:-$(dirname "$0")/../..}"
BUILD=${BUILD:-build} BIN=${BIN:-bin}
mut=$BUILD/tests/fuzz-mutate
. tests/e2e/lib/converters.sh
converters_built
[ -x "$mut" ] || { echo "FAIL: $mut not built"; exit 1; }
command -v python3 > /dev/null || { echo "python3 not found"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# sanitizer findings must not look like exit 1 ("damaged input")
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}exitcode=99"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:+$UBSAN_OPTIONS:}exitcode=99:halt_on_error=1"
export LSAN_OPTIONS="${LSAN_OPTIONS:+$LSAN_OPTIONS:}exitcode=99"
per=${FUZZ_TOOLS_PER_FILE:-16}
[ -n "${TRC_ASAN:-}" ] && per=${FUZZ_TOOLS_PER_FILE:-4}
fails=0
bad() { echo "FAIL: $*"; fails=$((fails + 1)); }

mkdir -p "$tmp/m"
for f in fixtures/valid/*.trc fixtures/gpu/*.trc; do
  "$mut" "$f" "$tmp/m" 1 "$per" >> "$tmp/list" || { echo "FAIL: mutate $f"; exit 1; }
done
for f in fixtures/invalid/*.trc fixtures/fuzz/*.trc; do
  [ -e "$f" ] || continue
  "$mut" "$f" "$tmp/m" 1 $(( per / 6 + 1 )) >> "$tmp/list" || { echo "FAIL: mutate $f"; exit 1; }
done
# saved findings (fixtures/fuzz/) also as they are
for f in fixtures/fuzz/*.trc; do
  [ -e "$f" ] && printf '%s\tregression case\n' "$f" >> "$tmp/list"
done
n=0 runs=0
json=()
# check NAME OUTFILE(or -) JSON(0/1) CMD...: one run, its exit status and output
check() {
  local what=$1 out=$2 isjson=$3; shift 3
  local rc
  timeout 20 "$@" > "$tmp/stdout" 2> "$tmp/stderr"; rc=$?
  runs=$((runs + 1))
  case $rc in
    0|1|2) ;;
    124) bad "$what: hang (killed after 20 s): $*" ;;
    *) bad "$what: exit $rc: $*"; head -5 "$tmp/stderr" ;;
  esac
  if grep -qE 'AddressSanitizer|runtime error|LeakSanitizer' "$tmp/stderr"; then
    bad "$what: sanitizer report: $*"; head -5 "$tmp/stderr"
  fi
  [ "$out" = - ] && return
  if [ $rc -eq 2 ]; then
    [ ! -e "$out" ] || bad "$what: exit 2 but $out was left behind: $*"
  elif [ $rc -le 1 ]; then
    [ -e "$out" ] || bad "$what: exit $rc but no output file: $*"
    [ "$isjson" = 1 ] && [ -e "$out" ] && cp "$out" "$tmp/json/$what.$(basename "$out")"
  fi
}
mkdir -p "$tmp/json"
while IFS=$'\t' read -r m why; do
  n=$((n + 1))
  id=$(basename "$m" .trc); [ "$why" = "regression case" ] && id="reg-$id"
  o="$tmp/o/$id"; mkdir -p "$o"
  check "$id" - 0 "$BIN/trc-dump" "$m"
  check "$id" - 0 "$BIN/trc-dump" --check "$m"
  check "$id" - 0 "$BIN/trc-dump" --summary "$m"
  check "$id" - 0 "$BIN/trc-dump" --events "$m"
  check "$id" - 0 "$BIN/trc-stats" "$m"
  check "$id" - 0 "$BIN/trc-stats" --gpu "$m"
  check "$id" - 0 "$BIN/trc2collapsed" "$m"
  check "$id" - 0 "$BIN/trc2collapsed" --gpu "$m"
  check "$id" "$o/p.pstats" 0 "$BIN/trc2pstats" -o "$o/p.pstats" "$m"
  check "$id" "$o/s.json" 1 "$BIN/trc2speedscope" -o "$o/s.json" "$m"
  check "$id" "$o/c.json" 1 "$BIN/trc2chrome" -o "$o/c.json" "$m"
  check "$id" - 0 "$BIN/trc2nvvp" "$m"
  check "$id" - 0 "$BIN/trc-lines" "$m"
  check "$id" "$o/l.json" 1 "$BIN/trc-lines" --json -o "$o/l.json" "$m"
  check "$id" - 0 "$BIN/trc2nvvp" --print-gpu-trace --csv "$m"
  check "$id" "$o/t.svg" 0 "$BIN/trc2nvvp" --svg "$o/t.svg" "$m"
  # nothing but the outputs themselves in the -o directory (no temp files)
  extra=$(ls -A "$o" | grep -vxE 'p\.pstats|s\.json|c\.json|l\.json|t\.svg')
  [ -z "$extra" ] || bad "$id ($why): files left in the output directory: $extra"
  [ $fails -lt 20 ] || { echo "FAIL: too many failures, stopping"; break; }
done < "$tmp/list"

# all JSON outputs in one interpreter
python3 - "$tmp/json" <<'PY' || fails=$((fails + 1))
import json, os, sys
d = sys.argv[1]
bad = 0
for name in sorted(os.listdir(d)):
    try:
        with open(os.path.join(d, name), "rb") as f:
            json.loads(f.read().decode("utf-8"))
    except Exception as e:
        print(f"FAIL: {name}: output does not parse as JSON: {e}")
        bad += 1
print(f"{len(os.listdir(d))} JSON outputs checked")
sys.exit(1 if bad else 0)
PY
echo "$n mutants, $runs tool runs, $fails failures"
[ $fails -eq 0 ]
