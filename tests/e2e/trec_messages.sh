#!/usr/bin/env bash
# trec's messages say what is really wrong, and only that:
#  - an output that cannot be created, or a program that cannot be run,
#    is the one line trec prints: no GPU warning before it (the GPU
#    warning of a program that does run still comes);
#  - run as root, a refused --pid is not answered with "run as root";
#  - a process whose interpreter is finalising (here: waiting in a C
#    atexit handler, after Py_FinalizeEx) is "shutting down", at once, not
#    "not initialised yet: retry" (every interpreter found);
#  - --version says GPU support is built in and where the injection is,
#    never that GPUs are "on" (none need be here).
. "$(dirname "$0")/lib/trec_common.sh"

PY=$(echo "$PYTHONS" | head -n1 | cut -d' ' -f1)
T="$TMPD"
lines() { wc -l <"$1" | tr -d ' '; }

# -- early errors come alone
rc=0
"$TREC" -o /nonexistent/dir/x.trc -- "$PY" -c pass >"$T/out" 2>"$T/err" || rc=$?
[ $rc -eq 2 ] || fail "missing output directory: exit $rc"
[ "$(lines "$T/err")" -eq 1 ] && grep -q "^trec: error: /nonexistent/dir/x.trc: cannot create" "$T/err" ||
  fail "missing output directory: want the one error line: $(cat "$T/err")"
rc=0
"$TREC" -o "$T/x.trc" -- /nonexistent/program >"$T/out" 2>"$T/err" || rc=$?
[ $rc -eq 127 ] && [ "$(lines "$T/err")" -eq 1 ] && grep -q "^trec: error: cannot run '/nonexistent/program'" "$T/err" ||
  fail "missing program: exit $rc: $(cat "$T/err")"
if "$TREC" --version | grep -q "^GPU support: built in"; then
  # the GPU side directory cannot be made under a missing $TMPDIR: the
  # program runs, so the warning is due, after the start
  rc=0
  TMPDIR=/nonexistent "$TREC" -o - "$PY" -c pass >"$T/gpu.trc" 2>"$T/err" || rc=$?
  [ $rc -eq 0 ] && grep -q "^trec: warning: GPU recording off: cannot create a directory" "$T/err" ||
    fail "GPU warning of a program that runs: exit $rc: $(cat "$T/err")"
  rc=0
  TMPDIR=/nonexistent "$TREC" -o - -- /nonexistent/program >"$T/gpu.trc" 2>"$T/err" || rc=$?
  [ $rc -eq 127 ] && [ "$(lines "$T/err")" -eq 1 ] || fail "missing program, GPU off: exit $rc: $(cat "$T/err")"
else
  note "GPU support not built in: the deferred GPU warning is not checked"
fi

# -- root is not told to run as root
if [ "$(id -u)" = 0 ]; then
  rc=0
  "$TREC" -o "$T/p1.trc" --pid 1 >"$T/out" 2>"$T/err" || rc=$?
  [ $rc -eq 2 ] && [ "$(lines "$T/err")" -eq 1 ] || fail "--pid 1 as root: exit $rc: $(cat "$T/err")"
  grep -qE "run (trec )?as root|or as root|as root /" "$T/err" &&
    fail "--pid 1 as root is told to run as root: $(cat "$T/err")"
  echo "--pid 1 as root: $(cat "$T/err")"
  [ ! -e "$T/p1.trc" ] || fail "--pid 1 left a trace"
else
  note "not root: the root case of --pid 1 not run"
fi

# -- finalising: shutting down, said at once
cat >"$T/fin.py" <<'PYEOF'
import ctypes
libc = ctypes.CDLL(None)
# exit() runs C atexit handlers after the interpreter was finalised: wait there
libc.__cxa_atexit(ctypes.cast(libc.pause, ctypes.c_void_p), None, None)
print("ready", flush=True)
PYEOF
fin() {
  local py=$1 ver=$2 pid rc i
  "$py" "$T/fin.py" >"$T/fin.$ver.out" &
  pid=$!
  for i in $(seq 100); do grep -q ready "$T/fin.$ver.out" && break; sleep 0.05; done
  # until the interpreter is finalised (a look before that attaches and
  # records a fraction of a second)
  for i in $(seq 20); do
    rc=0
    timeout 20 "$TREC" -q -o "$T/fin.trc" --duration 0.2 --pid $pid 2>"$T/fin.$ver.err" || rc=$?
    grep -q "shutting down" "$T/fin.$ver.err" && break
    sleep 0.1
  done
  kill $pid
  wait $pid 2>/dev/null
  [ $rc -eq 2 ] && [ "$(lines "$T/fin.$ver.err")" -eq 1 ] &&
    grep -q "^trec: error: pid $pid: the CPython $ver interpreter is shutting down" "$T/fin.$ver.err" ||
    { echo "exit $rc: $(cat "$T/fin.$ver.err")"; return 1; }
}
for_each_python fin

# -- --version: what GPU support means
"$TREC" --version >"$T/v" || fail "--version failed"
gpu=$(grep "^GPU support:" "$T/v")
case "$gpu" in
  "GPU support: built in, CUPTI "*" injection found at /"*"libtrec-cupti.so; libcupti and GPUs are looked for when a program runs") ;;
  "GPU support: off ("*")") ;;
  *) fail "--version: $gpu" ;;
esac
[ "$(grep -c . "$T/v")" -eq 2 ] || fail "--version is not two lines: $(cat "$T/v")"

finish
