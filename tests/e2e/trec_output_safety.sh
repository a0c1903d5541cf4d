#!/usr/bin/env bash
# trec -o never follows or clobbers (design in lib/rec/output.c):
# a symbolic link or a hard link at the destination is replaced, not
# written through; a directory is refused in one line; a start that fails
# leaves an existing file untouched; FIFOs, /dev/null and /dev/stdout are
# written as they are; the trace is readable under its final name while
# trec records and after trec is killed; no hidden file is left behind.
# One interpreter is enough: none of this depends on the Python version.
# retry-once: records a live program against the clock (tests/run-all)
. "$(dirname "$0")/lib/trec_common.sh"

PY=$(echo "$PYTHONS" | head -n1 | cut -d' ' -f1)
DUMP="$BIN/trc-dump"
[ -x "$DUMP" ] || { echo "trc-dump is not built"; exit 77; }
D="$TMPD/out"
mkdir -p "$D"
PROG="$FIX/spin_stacks.py"   # changing stacks, a few KiB of trace per 100 ms

# no hidden ".NAME.trec-XXXXXX" file may stay in $1 (the GPU side
# directory ".trec-gpu-XXXXXX" is another matter: trec_gpu_wiring.sh)
hidden() { ls -A "$1" | grep -E '^\..+\.trec-[^-]{6}$'; }
no_hidden() {
  local left
  left=$(hidden "$1" || true)
  [ -z "$left" ] || fail "$2: hidden file left behind: $left"
}

# a trace that trc-dump --check reads as intact
intact() {
  local out rc=0
  out=$("$DUMP" --check "$1" 2>&1) || rc=$?
  [ $rc -eq 0 ] || { fail "$2: trc-dump --check exit $rc: $out"; return 1; }
}

# --- a symbolic link at the destination is replaced, its target untouched
echo original >"$D/real"
ln -s real "$D/link"
rc=0; "$TREC" -q -o "$D/link" "$PY" "$PROG" 0.2 >/dev/null 2>"$D/err" || rc=$?
[ $rc -eq 0 ] || fail "symlink: trec exited $rc: $(cat "$D/err")"
[ "$(cat "$D/real")" = original ] || fail "symlink: the link's target was written"
[ -L "$D/link" ] && fail "symlink: the link is still there (written through it)"
[ -f "$D/link" ] && intact "$D/link" symlink
ln -s "$D/absent" "$D/dangling"
"$TREC" -q -o "$D/dangling" "$PY" "$PROG" 0.1 >/dev/null 2>&1 || fail "dangling symlink: trec failed"
[ -e "$D/absent" ] && fail "dangling symlink: its target was created"
[ -f "$D/dangling" ] && [ ! -L "$D/dangling" ] || fail "dangling symlink: not replaced by the trace"

# --- a hard link: the other name keeps the old contents
echo shared >"$D/a"
ln "$D/a" "$D/b"
rc=0; "$TREC" -q -o "$D/a" "$PY" "$PROG" 0.2 >/dev/null 2>"$D/err" || rc=$?
[ $rc -eq 0 ] || fail "hard link: trec exited $rc: $(cat "$D/err")"
[ "$(cat "$D/b")" = shared ] || fail "hard link: the other name was written through"
[ "$(stat -c %h "$D/b")" = 1 ] || fail "hard link: b still shares its inode with the trace"
intact "$D/a" "hard link"

# --- a directory is refused in one line, nothing created in or beside it
mkdir "$D/dir"
rc=0; "$TREC" -o "$D/dir" "$PY" "$PROG" 0.1 >/dev/null 2>"$D/err" || rc=$?
[ $rc -eq 2 ] || fail "directory: trec exited $rc, want 2"
[ "$(cat "$D/err")" = "trec: error: $D/dir: is a directory" ] ||
  fail "directory: message is '$(cat "$D/err")'"
[ -z "$(ls -A "$D/dir")" ] || fail "directory: something was written into it"
rc=0; "$TREC" -o "$D/nodir/" "$PY" "$PROG" 0.1 >/dev/null 2>"$D/err" || rc=$?
[ $rc -eq 2 ] && [ "$(wc -l <"$D/err")" -eq 1 ] || fail "name ending in /: exit $rc: $(cat "$D/err")"

# --- a start that fails leaves an existing file untouched
echo keep >"$D/keep.trc"
rc=0; "$TREC" -o "$D/keep.trc" "$D/no-such-program" 2>"$D/err" || rc=$?
[ $rc -eq 127 ] || fail "missing program: trec exited $rc, want 127"
sleep 30 &
other=$!
rc=0; "$TREC" -o "$D/keep.trc" --pid $other 2>"$D/err" || rc=$?
[ $rc -eq 2 ] || fail "--pid on a non-Python process: trec exited $rc, want 2"
kill $other; wait $other 2>/dev/null
rc=0; "$TREC" -o "$D/keep.trc" --pid $other 2>"$D/err" || rc=$?
[ $rc -eq 2 ] || fail "--pid of a gone process: trec exited $rc, want 2"
[ "$(cat "$D/keep.trc")" = keep ] || fail "failed start: the existing file was changed"

# --- the file has the mode a new file gets (0666 less the umask)
( umask 027; "$TREC" -q -o "$D/mode.trc" "$PY" "$PROG" 0.1 >/dev/null 2>&1 )
[ "$(stat -c %a "$D/mode.trc")" = 640 ] || fail "mode: $(stat -c %a "$D/mode.trc"), want 640 under umask 027"

# --- readable under its final name while recording, and after SIGKILL
"$TREC" -q --no-gpu -o "$D/live.trc" "$PY" "$PROG" 3 >/dev/null 2>"$TMPD/live.err" &
trec=$!
for _ in $(seq 100); do [ -s "$D/live.trc" ] && break; sleep 0.05; done
[ -s "$D/live.trc" ] || fail "live: nothing under the final name after 5 s"
ok=""
# a read racing a chunk being written may see it half-way: retry.  A
# recording still going has no end record yet: "incomplete", exit 1.
for _ in 1 2 3 4 5; do
  rc=0; "$DUMP" --check "$D/live.trc" >"$TMPD/live.chk" 2>&1 || rc=$?
  if [ $rc -eq 1 ] && grep -q ': incomplete: .*(0 damaged)' "$TMPD/live.chk" &&
     ! grep -q 'error:' "$TMPD/live.chk"; then ok=1; break; fi
  sleep 0.1
done
[ -n "$ok" ] || fail "live: trc-dump --check while recording: $(cat "$TMPD/live.chk")"
grep -q '[1-9][0-9]* chunk' "$TMPD/live.chk" || fail "live: no chunk read: $(cat "$TMPD/live.chk")"
[ -z "$(hidden "$D")" ] || fail "live: a hidden file besides the final name: $(hidden "$D")"
sleep 0.3
kids=$(cat /proc/$trec/task/*/children 2>/dev/null)
{ kill -KILL $trec; wait $trec; } 2>/dev/null
[ -n "$kids" ] && kill $kids 2>/dev/null
rc=0; "$DUMP" --check "$D/live.trc" >"$TMPD/live.chk" 2>&1 || rc=$?
[ $rc -le 1 ] || fail "killed: trc-dump --check exit $rc: $(cat "$TMPD/live.chk")"
grep -q '[1-9][0-9]* chunk' "$TMPD/live.chk" || fail "killed: no chunk readable: $(cat "$TMPD/live.chk")"

# --- a FIFO, /dev/null and /dev/stdout are written as they are
mkfifo "$D/fifo"
cat "$D/fifo" >"$D/from-fifo" &
reader=$!
rc=0; "$TREC" -q -o "$D/fifo" "$PY" "$PROG" 0.2 >/dev/null 2>"$D/err" || rc=$?
wait $reader
[ $rc -eq 0 ] || fail "fifo: trec exited $rc: $(cat "$D/err")"
[ -p "$D/fifo" ] || fail "fifo: replaced by a file"
intact "$D/from-fifo" fifo
rc=0; "$TREC" -q -o /dev/null "$PY" "$PROG" 0.1 >/dev/null 2>"$D/err" || rc=$?
[ $rc -eq 0 ] || fail "/dev/null: trec exited $rc: $(cat "$D/err")"
[ -c /dev/null ] || fail "/dev/null is no longer a device"
# naming trec's own stdout is -o -: the program's stdout goes to stderr
if [ -L /dev/stdout ]; then
  rc=0; "$TREC" -q -o /dev/stdout "$PY" "$PROG" 0.1 >"$D/stdout.trc" 2>"$D/err" || rc=$?
  [ $rc -eq 0 ] || fail "/dev/stdout: trec exited $rc: $(cat "$D/err")"
  [ -L /dev/stdout ] || fail "/dev/stdout was replaced"
  intact "$D/stdout.trc" /dev/stdout
  grep -qx "program done" "$D/err" || fail "/dev/stdout: the program's output is not on stderr"
fi
rc=0; "$TREC" -q -o "$D/same.trc" "$PY" "$PROG" 0.1 >"$D/same.trc" 2>"$D/err" || rc=$?
[ $rc -eq 0 ] || fail "-o FILE >FILE: trec exited $rc: $(cat "$D/err")"
intact "$D/same.trc" "-o FILE >FILE"

# --- a directory that takes no new file: a one-name regular file is
# written in place, a hard-linked one is refused (needs root to switch to
# an unprivileged user, for whom directory permissions apply)
if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null; then
  ro=$(mktemp -d /tmp/trec-ro.XXXXXX)
  chmod 755 "$ro"
  cp "$PROG" "$ro/prog.py"
  echo old >"$ro/own.trc"; echo old >"$ro/two.trc"; ln "$ro/two.trc" "$ro/two-b.trc"
  chown 65534:65534 "$ro/own.trc" "$ro/two.trc"
  asnobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
  rc=0; asnobody "$TREC" -q --no-gpu -o "$ro/own.trc" "$PY" "$ro/prog.py" 0.2 >/dev/null 2>"$TMPD/ro.err" || rc=$?
  if [ $rc -eq 0 ]; then
    intact "$ro/own.trc" "in place"
    rc=0; asnobody "$TREC" -q --no-gpu -o "$ro/two.trc" "$PY" "$ro/prog.py" 0.1 >/dev/null 2>"$TMPD/ro.err" || rc=$?
    [ $rc -eq 2 ] || fail "hard link in a closed directory: trec exited $rc, want 2"
    grep -q "two.trc: cannot create: Permission denied" "$TMPD/ro.err" || fail "closed directory: $(cat "$TMPD/ro.err")"
    [ "$(cat "$ro/two-b.trc")" = old ] || fail "hard link in a closed directory: written through"
    cp "$ro/own.trc" "$TMPD/own.copy"
    asnobody "$TREC" -q --no-gpu -o "$ro/own.trc" "$ro/no-such-program" 2>/dev/null
    cmp -s "$ro/own.trc" "$TMPD/own.copy" || fail "in place: a failed start changed the file"
    no_hidden "$ro" "closed directory"
  else
    note "in-place case not tested: trec as nobody failed ($rc): $(cat "$TMPD/ro.err")"
  fi
  rm -rf "$ro"
fi

no_hidden "$D" "after all runs"
no_hidden "$D/dir" "directory"
[ $FAILS -eq 0 ] && echo "all passed" && exit 0
echo "$FAILS failure(s)"
exit 1
