#!/usr/bin/env bash
# Hostile targets: what trec does with executables that are
# not (recordable) Python:
#  - a non-Python program, started: it runs to its end with its exit
#    status passed on, the trace holds its PROCESS and exit but no
#    samples, and trec says why in one line (at the end, as no process
#    of its tree was Python; with --no-subprocesses after the 2 s attach
#    grace period); with --pid: one-line error naming the pid and
#    executable, exit 2, no file written;
#  - a static non-Python executable (built here with cc -static, or
#    /sbin/ldconfig): the same, saying it has no symbol table;
#  - a stripped interpreter (strip --strip-all on a copy of Debian's
#    python3 and of a pyenv python with its libpython): recorded as
#    usual (.dynsym survives stripping);
#  - a static interpreter (built here from a pyenv libpython3.X.a):
#    recorded through its .symtab; stripped, before 3.13 a one-line error
#    saying it looks like CPython but has no symbol table, from 3.13
#    recorded (launched and attached) through its .PyRuntime section and
#    the type objects learnt from the running interpreter.  Skipped parts
#    say why.
# retry-once: records a live program against the clock (tests/run-all)
. "$(dirname "$0")/lib/trec_common.sh"
. "$(dirname "$0")/lib/hostile_common.sh"

D="$TMPD/exe"
mkdir -p "$D"
cat >"$D/spin.py" <<'PY'
import sys, time
def spin_here(s):
    end = time.monotonic() + s
    while time.monotonic() < end:
        pass
spin_here(float(sys.argv[1]))
PY
SPIN=0.4

# launched_nonpy TAG WANT_RC PATTERN CMD...: runs to its end, status
# passed on, one warning matching PATTERN, trace with a process, no samples
launched_nonpy() {
  local tag=$1 want=$2 pat=$3 rc=0
  shift 3
  local out="$D/$tag.trc"
  timeout 60 "$TREC" -o "$out" "$@" 2>"$out.stderr" || rc=$?
  [ $rc -eq "$want" ] || { fail "$tag: trec exited $rc, want $want"; cat "$out.stderr"; return; }
  [ "$(grep -c "warning: .*$pat" "$out.stderr")" = 1 ] || { fail "$tag: want one warning matching '$pat'"; cat "$out.stderr"; return; }
  dump_trace "$out" || { fail "$tag: trace unreadable"; return; }
  grep -q '^process' "$out.txt" && grep -q '^exit' "$out.txt" && grep -q '^end' "$out.txt" ||
    { fail "$tag: no process, exit or end record"; return; }
  ! grep -q '^sample' "$out.txt" || { fail "$tag: samples of a non-Python program"; return; }
  echo "ok: $tag"
}

# attach_nonpy TAG PATTERN PID: exit 2, one error line, no file
attach_nonpy() {
  local tag=$1 pat=$2 pid=$3 rc=0
  local out="$D/$tag.trc"
  timeout 60 "$TREC" -o "$out" --pid "$pid" 2>"$out.stderr" || rc=$?
  [ $rc -eq 2 ] || { fail "$tag: trec --pid exited $rc, want 2"; cat "$out.stderr"; return; }
  [ "$(wc -l <"$out.stderr")" = 1 ] && grep -q "error: pid $pid .*$pat" "$out.stderr" ||
    { fail "$tag: want one error line naming pid $pid and '$pat'"; cat "$out.stderr"; return; }
  [ ! -e "$out" ] || { fail "$tag: a trace was left behind"; return; }
  echo "ok: $tag"
}

# recorded TAG CMD...: an interpreter copy records spin_here
recorded() {
  local tag=$1 rc=0
  shift
  local out="$D/$tag.trc"
  timeout 60 "$TREC" -o "$out" "$@" "$D/spin.py" $SPIN 2>"$out.stderr" || rc=$?
  [ $rc -eq 0 ] || { fail "$tag: trec exited $rc"; cat "$out.stderr"; return; }
  dump_trace "$out" || { fail "$tag: trace unreadable"; return; }
  grep -q 'spin_here' "$out.txt" || { fail "$tag: spin_here never sampled"; cat "$out.stderr"; return; }
  ! grep -q "warning\|error" "$out.stderr" || { fail "$tag: warnings"; cat "$out.stderr"; return; }
  echo "ok: $tag"
}

# wait_exec PID PATH: until the background child has exec'd PATH
wait_exec() {
  local i
  for i in $(seq 100); do
    [ "$(readlink -f "/proc/$1/exe" 2>/dev/null)" = "$(readlink -f "$2")" ] && return 0
    sleep 0.05
  done
}

# --- non-Python, dynamic
launched_nonpy sleep-short 0 "not a CPython process" /bin/sleep 0.3
launched_nonpy sh-status 7 "not a CPython process" /bin/sh -c 'sleep 0.3; exit 7'
# past the 2 s attach grace period: said at once when only the program is
# recorded; when its children are followed, said at the end (above)
launched_nonpy sleep-long 0 "running it to completion without samples" --no-subprocesses /bin/sleep 2.5
launched_nonpy sleep-long-tree 0 "no process in the tree of '/bin/sleep 2.5' was Python (.*not a CPython process" /bin/sleep 2.5
sleep 30 &
bg=$!
wait_exec $bg "$(command -v sleep)"
attach_nonpy attach-sleep "(/usr/bin/sleep) is not a CPython process" $bg
kill $bg; wait $bg 2>/dev/null

# --- non-Python, static
if command -v cc >/dev/null && printf 'int main(int c, char **v) { (void)v; usleep(c > 1 ? 30000000 : 300000); return 5; }\n' |
   cc -x c -include unistd.h -static -O2 -o "$D/static" - 2>/dev/null && strip "$D/static"; then
  launched_nonpy static 5 "no symbol table" "$D/static"
  "$D/static" x &
  bg=$!
  wait_exec $bg "$D/static"
  attach_nonpy attach-static "no symbol table" $bg
  kill $bg; wait $bg 2>/dev/null
elif [ -x /sbin/ldconfig ]; then
  launched_nonpy ldconfig 0 "not a CPython process" /sbin/ldconfig -p
else
  note "skipped static non-Python executables: no cc -static and no /sbin/ldconfig"
fi

# --- stripped interpreters
if command -v strip >/dev/null; then
  deb=$(readlink -f /usr/bin/python3 2>/dev/null)
  if [ -x "$deb" ]; then
    cp "$deb" "$D/python-stripped" && strip --strip-all "$D/python-stripped"
    recorded stripped-debian "$D/python-stripped"
  fi
  while read -r py ver; do
    pre=$(dirname "$(dirname "$(readlink -f "$py")")")
    lib=$(ls "$pre"/lib/libpython3*.so.1.0 2>/dev/null | head -n1)
    [ -n "$lib" ] || continue
    mkdir -p "$D/s-$ver/lib"
    cp "$(readlink -f "$py")" "$D/s-$ver/python" && cp "$lib" "$D/s-$ver/lib/" &&
      strip --strip-all "$D/s-$ver/python" "$D/s-$ver/lib/$(basename "$lib")"
    LD_LIBRARY_PATH="$D/s-$ver/lib" PYTHONHOME="$pre" recorded "stripped-$ver" "$D/s-$ver/python"
  done < <(echo "$PYTHONS" | grep -v '^/usr/bin/python3 ' | sed -n '1p;$p' | sort -u)
else
  note "skipped stripped interpreters: no strip"
fi

# --- a static interpreter, from a pyenv libpython3.X.a
built=""
if command -v cc >/dev/null; then
  while read -r py ver; do
    pre=$(dirname "$(dirname "$(readlink -f "$py")")")
    m=${ver%.*}
    a=$(ls "$pre"/lib/python"$m"/config-"$m"*/libpython"$m".a 2>/dev/null | head -n1)
    [ -n "$a" ] || continue
    printf '#include <Python.h>\nint main(int c, char **v) { return Py_BytesMain(c, v); }\n' >"$D/spy.c"
    if cc -static -I"$pre/include/python$m" "$D/spy.c" "$a" -lm -lpthread -ldl -lutil -o "$D/spy" \
         >"$D/spy.log" 2>&1 && PYTHONHOME="$pre" "$D/spy" -c 'import time' 2>/dev/null; then
      built="$ver $pre"
      break
    fi
  done < <(echo "$PYTHONS" | grep -v '^/usr/bin/python3 ' | sort -t' ' -k2,2Vr)
fi
if [ -n "$built" ]; then
  set -- $built
  PYTHONHOME="$2" recorded "static-$1" "$D/spy"
  cp "$D/spy" "$D/spy-stripped" && strip --strip-all "$D/spy-stripped"
  case "$1" in
  3.[89].* | 3.1[012].*)
    PYTHONHOME="$2" launched_nonpy "static-stripped-$1" 0 "looks like CPython $1 but its executable has no symbol table" \
      "$D/spy-stripped" "$D/spin.py" $SPIN
    PYTHONHOME="$2" "$D/spy-stripped" "$D/spin.py" 30 &
    bg=$!
    wait_exec $bg "$D/spy-stripped"
    attach_nonpy "attach-static-stripped-$1" "looks like CPython $1 but its executable has no symbol table" $bg
    kill $bg; wait $bg 2>/dev/null
    ;;
  *)
    # 3.13+: _PyRuntime sits in a .PyRuntime section, which strip keeps,
    # and the type objects are learnt from the running interpreter
    PYTHONHOME="$2" recorded "static-stripped-$1" "$D/spy-stripped"
    PYTHONHOME="$2" "$D/spy-stripped" "$D/spin.py" 30 &
    bg=$!
    wait_exec $bg "$D/spy-stripped"
    out="$D/attach-static-stripped.trc"
    rc=0
    timeout 60 "$TREC" -q -o "$out" --pid $bg --duration 1 2>"$out.stderr" || rc=$?
    kill $bg; wait $bg 2>/dev/null
    if [ $rc -ne 0 ]; then
      fail "attach-static-stripped-$1: trec --pid exited $rc"; cat "$out.stderr"
    elif ! dump_trace "$out" || ! grep -q 'spin_here' "$out.txt"; then
      fail "attach-static-stripped-$1: spin_here never sampled"
    else
      echo "ok: attach-static-stripped-$1"
    fi
    ;;
  esac
else
  note "skipped the static interpreter: no pyenv libpython3.X.a links statically here (cc -static)"
fi

[ $FAILS -eq 0 ] && { echo "all passed"; exit 0; }
echo "$FAILS failure(s)"
exit 1
