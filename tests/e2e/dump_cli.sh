#!/usr/bin/env bash
# trc-dump's command line (docs/man/trc-dump.1, docs/exit-codes.md): help
# and version, usage errors (exit 2, one "trc-dump: error:" line), stdin
# and "-" give the same output as a path, the listing shows the chunk and
# record lines of spec §4/§5, and --hex shows the header bytes.
# Fixture contents are covered by tests/e2e/fixtures.sh.
set -u
cd "${TRC_ROOT:-.}"
dump="${BIN:-bin}/trc-dump"
ok=fixtures/valid/samples.trc cut=fixtures/invalid/truncated_payload.trc
fail=0
bad() { echo "FAIL: $*"; fail=1; }
run() { out=$("$@" 2>"$tmp/err"); rc=$?; err=$(cat "$tmp/err"); }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

run "$dump" --help
[ $rc = 0 ] && grep -q -- '--check' <<<"$out" && grep -q -- '--summary' <<<"$out" || bad "--help"
run "$dump" --version
[ $rc = 0 ] && grep -q '^trc-dump [0-9]' <<<"$out" && grep -q 'format 1\.4' <<<"$out" || bad "--version: $out"

for args in "--bogus $ok" "$ok $ok" "--check --summary $ok" "--check --events $ok"; do
  run "$dump" $args
  [ $rc = 2 ] || bad "'$args' exited $rc, want 2"
  grep -q '^trc-dump: error: ' <<<"$err" || bad "'$args': no error line: $err"
done
run "$dump" "$tmp/does-not-exist.trc"
[ $rc = 2 ] && [ "$(wc -l <<<"$err")" = 1 ] && grep -q "^trc-dump: error: $tmp/does-not-exist.trc: " <<<"$err" \
  || bad "missing file: rc=$rc err=$err"
run "$dump" --check "$tmp/does-not-exist.trc"
[ $rc = 2 ] || bad "--check missing file exited $rc"

# stdin and "-" read the same as a path, for every mode.
for mode in "" --check --summary --events; do
  a=$("$dump" $mode "$ok" 2>&1 | sed "s|$ok|INPUT|g"); ra=$?
  b=$("$dump" $mode - < "$ok" 2>&1 | sed "s|<stdin>|INPUT|g"); rb=$?
  c=$(cat "$ok" | "$dump" $mode 2>&1 | sed "s|<stdin>|INPUT|g"); rc2=$?
  [ "$a" = "$b" ] && [ "$a" = "$c" ] || bad "mode '$mode': stdin output differs from path output"
  [ $ra = $rb ] && [ $ra = $rc2 ] || bad "mode '$mode': exit codes differ"
done

# Listing: first chunk line and the first record line.
run "$dump" "$ok"
[ $rc = 0 ] || bad "listing exited $rc"
head -n 1 <<<"$out" | grep -Eq '^0x00000000 SEGMENT v1\.4 seq=0 flags=0x00 stored=[0-9]+ raw=[0-9]+ base=[0-9]+\.[0-9]{9} crc=ok$' \
  || bad "chunk line: $(head -n 1 <<<"$out")"
sed -n 2p <<<"$out" | grep -q '^  +0x0000 SEGMENT_HEADER len=[0-9]* major=1 minor=4 clock=1 ' || bad "record line: $(sed -n 2p <<<"$out")"
grep -q ' SAMPLE len=[0-9]* time=1\.001000000 thread=1 stack=3 flags=0x207 count=3 ' <<<"$out" || bad "no folded SAMPLE line"
grep -q 'name=#[0-9]*"MainThread"' <<<"$out" || bad "sref not resolved"
n_chunks=$(grep -c '^0x' <<<"$out")
[ "$n_chunks" = 3 ] || bad "samples.trc: $n_chunks chunk lines, want 3"

# --hex: the header's bytes under the chunk line.
run "$dump" --hex "$ok"
sed -n 2p <<<"$out" | grep -q '^    0000: 89 54 52 43 01 04 01 00 ' || bad "--hex header: $(sed -n 2p <<<"$out")"

# Damaged input: listing exit 1, one error line naming the offset.
run "$dump" "$cut"
[ $rc = 1 ] || bad "truncated listing exited $rc"
grep -Eq "^trc-dump: error: $cut: offset 0x[0-9a-f]+: input ends inside a chunk" <<<"$err" || bad "truncated error: $err"
grep -q '^0x[0-9a-f]* TRUNCATED length=' <<<"$out" || bad "no TRUNCATED line"

# --summary: the wall-clock start as a date, checked against date(1)
# around a live recording, and one line per thread with its samples,
# checked against what the program did (one busy thread, one asleep).
py=$(command -v python3)
cat > "$tmp/two.py" <<'PY'
import threading, time
def sleeper(): time.sleep(0.6)
t = threading.Thread(target=sleeper, name="sleeper"); t.start()
end = time.monotonic() + 0.5
while time.monotonic() < end: pass
t.join()
# the CPU the busy thread got (a loaded machine gives it less than 500 ms)
print(int(time.thread_time() * 1000))
PY
before=$(date -u +%s)
if "${BIN:-bin}/trec" -q -o "$tmp/two.trc" -- "$py" "$tmp/two.py" 2>"$tmp/trec.err" >"$tmp/two.cpu"; then
  after=$(date -u +%s)
  run "$dump" --summary "$tmp/two.trc"
  started=$(sed -n 's/^started: \(.*\)\.[0-9]* UTC$/\1/p' <<<"$out")
  at=$(date -u -d "$started" +%s 2>/dev/null || echo 0)
  [ "$at" -ge "$before" ] && [ "$at" -le "$after" ] || bad "--summary started '$started' not within the recording ($before..$after)"
  busy=$(sed -n 's/^  pid [0-9]* tid [0-9]* "MainThread": \([0-9]*\) samples, \([0-9]*\) on cpu$/\2/p' <<<"$out")
  idle=$(sed -n 's/^  pid [0-9]* tid [0-9]* "sleeper": \([0-9]*\) samples, \([0-9]*\) on cpu$/\1 \2/p' <<<"$out")
  read -r idle_all idle_cpu <<<"$idle"
  # on cpu: samples in which it ran, about one per ms of the CPU it got
  cpu_ms=$(cat "$tmp/two.cpu" 2>/dev/null || echo 500)
  [ "${busy:-0}" -ge $(( cpu_ms / 2 )) ] && [ "${busy:-0}" -ge 10 ] \
    || bad "--summary: MainThread on cpu '${busy:-}', want >= half of the $cpu_ms ms of CPU it got: $out"
  [ "${idle_all:-0}" -ge 200 ] && [ "${idle_cpu:-999}" -le $(( idle_all / 10 )) ] \
    || bad "--summary: sleeper '$idle', want >= 200 samples, almost none on cpu: $out"
else
  bad "trec failed: $(cat "$tmp/trec.err")"
fi

[ $fail = 0 ] && echo ok
exit $fail
