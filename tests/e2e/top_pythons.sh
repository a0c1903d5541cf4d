#!/usr/bin/env bash
# trc-top -- PROGRAM on every interpreter found (tests/e2e/lib/pythons.sh):
# a program in a folder and file with non-ASCII names, hot in a function
# with a non-ASCII name, shows that function on the top row of a text
# snapshot, and the row's file:line is the hot loop's, names as they are.
# retry-once: records live programs against the clock (tests/run-all)
set -u
cd "${TRC_ROOT:-$(dirname "$0")/../..}"
BIN=${BIN:-bin}
top=$BIN/trc-top
[ -x "$top" ] && [ -x "$BIN/trec" ] || { echo "FAIL: $top or $BIN/trec not built"; exit 1; }
. tests/e2e/lib/pythons.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
dir="$tmp/tøp 目录"
mkdir -p "$dir"
cat > "$dir/hot_ü.py" <<'PY'
import time
def 計算_ünï():
    x = 0
    for i in range(20000):
        x += i  # the hot line: 5
end = time.monotonic() + 6
while time.monotonic() < end:
    計算_ünï()
PY
fails=0 n=0
while read -r py ver; do
  n=$((n + 1))
  out="$tmp/$ver.txt"
  if ! "$top" --once --interval 1.5 -- "$py" "$dir/hot_ü.py" > "$out" 2> "$tmp/err"; then
    echo "FAIL: $ver: trc-top exited: $(cat "$tmp/err")"; fails=$((fails + 1)); continue
  fi
  first=$(awk '/%Own/ { getline; print; exit }' "$out" | sed -E 's/^ *([0-9.]+% +){2}[0-9.]+s +[0-9.]+s +//')
  if [[ "$first" != "計算_ünï (tøp 目录/hot_ü.py:"[45]")" ]]; then
    echo "FAIL: $ver: top row '$first', want 計算_ünï (tøp 目录/hot_ü.py:4 or 5)"; cat "$out"
    fails=$((fails + 1)); continue
  fi
  grep -qE '^ +[0-9.]+% +[0-9.]+% +[0-9.]+s +[0-9.]+s 計算_ünï \(tøp 目录/hot_ü\.py:5\)$' "$out" ||
    { echo "FAIL: $ver: no row for the hot line 5"; cat "$out"; fails=$((fails + 1)); continue; }
  echo "ok    $ver: $first on top"
done < <(trec_pythons)
[ $n -gt 0 ] || { echo "skip: no CPython 3.8+ found"; exit 77; }
[ $fails -eq 0 ] || { echo "$fails failure(s)"; exit 1; }
echo ok
