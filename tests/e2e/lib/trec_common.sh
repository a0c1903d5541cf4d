# trec_common.sh — shared set-up for tests/e2e/trec_*.sh (source it).
# Provides: $TREC, $STACKS, $SHARES (tools), $FIX (fixtures dir), $TMPD
# (removed at exit), $CHECK_PY (the interpreter that runs the checks),
# check (tests/e2e/lib/trec_check.py), fail/note, for_each_python, finish.
# TREC_TEST_TOOLS=DIR takes trc_stacks/trc_shares from DIR.
# Skips (exit 77) when trec or the helper tools are not built, or no
# interpreter is found.
set -u
TRC_ROOT="${TRC_ROOT:-$PWD}"
BIN="${BIN:-bin}"
BUILD="${BUILD:-build}"
case "$BIN" in /*) ;; *) BIN="$TRC_ROOT/$BIN" ;; esac
case "$BUILD" in /*) ;; *) BUILD="$TRC_ROOT/$BUILD" ;; esac
TREC="$BIN/trec"
STACKS="${TREC_TEST_TOOLS:-$BUILD/tests/tools}/trc_stacks"
SHARES="${TREC_TEST_TOOLS:-$BUILD/tests/tools}/trc_shares"
FIX="$TRC_ROOT/fixtures/workloads"
. "$TRC_ROOT/tests/e2e/lib/pythons.sh"

[ -x "$TREC" ] || { echo "trec is not built ($TREC)"; exit 77; }
[ -x "$STACKS" ] && [ -x "$SHARES" ] || { echo "test tools not built (make $STACKS)"; exit 77; }
PYTHONS=$(trec_pythons)
[ -n "$PYTHONS" ] || { echo "no CPython 3.8+ interpreter found"; exit 77; }
CHECK_PY=/usr/bin/python3
[ -x "$CHECK_PY" ] || CHECK_PY=$(echo "$PYTHONS" | head -n1 | cut -d' ' -f1)

TMPD=$(mktemp -d "${TMPDIR:-/tmp}/trec-e2e.XXXXXX")
[ -n "${TREC_E2E_KEEP:-}" ] && echo "keeping $TMPD" || trap 'rm -rf "$TMPD"' EXIT
FAILS=0
RESULTS=""

fail() { echo "FAIL: $*"; FAILS=$((FAILS + 1)); }
note() { echo "note: $*"; }

check() { "$CHECK_PY" "$TRC_ROOT/tests/e2e/lib/trec_check.py" "$@"; }

# Read a trace into its text form ($1.txt) with the independent reader;
# fails the case unless it read cleanly (or with damage when $2 = damaged-ok).
dump_trace() {
  local rc=0
  "$STACKS" "$1" >"$1.txt" 2>"$1.err" || rc=$?
  if [ $rc -ne 0 ] && ! { [ "${2:-}" = damaged-ok ] && [ $rc -eq 1 ]; }; then
    echo "trc_stacks $1: exit $rc: $(cat "$1.err")"
    return 1
  fi
  return 0
}

# for_each_python FN: calls FN PYTHON VERSION TAG for each interpreter;
# one result line per interpreter; failures counted.
for_each_python() {
  local fn=$1 py ver tag out rc
  while read -r py ver; do
    tag="py$ver"
    out="$TMPD/$fn-$tag.log"
    rc=0
    "$fn" "$py" "$ver" "$tag" >"$out" 2>&1 || rc=$?
    if [ $rc -eq 0 ]; then
      RESULTS="$RESULTS  ok    $fn $ver ($py)"$'\n'
    elif [ $rc -eq 77 ]; then
      RESULTS="$RESULTS  skip  $fn $ver: $(tail -n1 "$out")"$'\n'
    else
      RESULTS="$RESULTS  FAIL  $fn $ver ($py)"$'\n'
      FAILS=$((FAILS + 1))
      echo "---- $fn $ver ($py) failed:"
      tail -n 40 "$out"
    fi
  done <<<"$PYTHONS"
}

finish() {
  printf '%s' "$RESULTS"
  if [ "$FAILS" -eq 0 ]; then
    echo "all passed"
    exit 0
  fi
  echo "$FAILS failure(s)"
  exit 1
}
