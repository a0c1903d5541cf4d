#!/usr/bin/env bash
# trc-lines' colour as a person meets it: on a terminal (script(1) gives
# it one) the table has ANSI colours; NO_COLOR, a pipe, --json and
# --color never leave them out; --color always puts them in a pipe too;
# the coloured text is the plain text once the escapes are removed; a
# bad --color value is a usage error.  Skips (77) without script(1).
set -u
cd "${TRC_ROOT:-$(dirname "$0")/../..}"
BIN=${BIN:-bin} BUILD=${BUILD:-build}
gen=$BUILD/tests/conv-gen
lines=$BIN/trc-lines
[ -x "$lines" ] && [ -x "$gen" ] || { echo "FAIL: $lines or $gen not built (make all $gen)"; exit 1; }
command -v script > /dev/null || { echo "skip: script(1) not installed (util-linux)"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
"$gen" fixture "$tmp/fx.trc" > /dev/null || { echo "FAIL: conv-gen fixture"; exit 1; }
esc=$'\033['
# on_tty OUT [ENV...] -- ARGS: trc-lines ARGS on a pseudo-terminal, its output (CRs removed) in OUT
on_tty() {
  local out=$1
  shift
  local envs=()
  while [ "$1" != -- ]; do envs+=("$1"); shift; done
  shift
  env "${envs[@]}" script -qec "$(printf '%q ' "$lines" "$@")" /dev/null < /dev/null | tr -d '\r' > "$out"
}
has_esc() { grep -qF "$esc" "$1"; }

"$lines" "$tmp/fx.trc" > "$tmp/plain.txt" || fail "trc-lines to a pipe exited $?"
has_esc "$tmp/plain.txt" && fail "a pipe got colour"
on_tty "$tmp/tty.txt" -u NO_COLOR -- "$tmp/fx.trc"
has_esc "$tmp/tty.txt" || fail "a terminal got no colour: $(head -n 3 "$tmp/tty.txt")"
sed 's/\x1b\[[0-9;]*m//g' "$tmp/tty.txt" | cmp -s - "$tmp/plain.txt" ||
  fail "the coloured table is not the plain one with colours: $(diff <(sed 's/\x1b\[[0-9;]*m//g' "$tmp/tty.txt") "$tmp/plain.txt" | head -n 4)"
on_tty "$tmp/nocolor.txt" NO_COLOR=1 -- "$tmp/fx.trc"
has_esc "$tmp/nocolor.txt" && fail "NO_COLOR=1 on a terminal still coloured"
on_tty "$tmp/never.txt" -u NO_COLOR -- --color never "$tmp/fx.trc"
has_esc "$tmp/never.txt" && fail "--color never on a terminal still coloured"
on_tty "$tmp/json.txt" -u NO_COLOR -- --json "$tmp/fx.trc"
has_esc "$tmp/json.txt" && fail "--json on a terminal got colour"
python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$tmp/json.txt" || fail "--json on a terminal is not JSON"
"$lines" --color always "$tmp/fx.trc" > "$tmp/always.txt" || fail "--color always exited $?"
has_esc "$tmp/always.txt" || fail "--color always in a pipe got no colour"
rc=0
"$lines" --color sometimes "$tmp/fx.trc" > "$tmp/bad.out" 2> "$tmp/bad.err" || rc=$?
[ $rc -eq 2 ] && [ ! -s "$tmp/bad.out" ] && grep -q -- "--color 'sometimes'" "$tmp/bad.err" ||
  fail "--color sometimes: exit $rc, $(cat "$tmp/bad.err")"
[ $fails -eq 0 ] || { echo "$fails failure(s)"; exit 1; }
echo "ok: colour on a terminal only, NO_COLOR/--color/--json honoured"
