#!/usr/bin/env bash
# Hostile targets: targets trec sees differently from how
# they see themselves.  Each attached with --pid from outside:
#  - mount namespace: the interpreter (and its libpython) copied to a
#    tmpfs mounted only in the target's private mount namespace, so its
#    paths in /proc/PID/maps do not exist for trec (read through
#    /proc/PID/root);
#  - deleted executable: the interpreter copy removed after start
#    ("(deleted)" in /proc/PID/exe; read through /proc/PID/map_files);
#  - pid namespace: the target is pid 1 of its own namespace, its
#    threads know themselves by that namespace's ids; the trace must use
#    ours (tasks of the pid trec was given), with the threading names,
#    and the threads' on-CPU state read from the right /proc files.
# Needs root (or user namespaces) for unshare; skipped otherwise.
# Debian's python3 and the oldest and newest other interpreter.
# retry-once: records a live program against the clock (tests/run-all)
. "$(dirname "$0")/lib/trec_common.sh"
. "$(dirname "$0")/lib/hostile_common.sh"
need_root_ns
some_pythons

W="$FIX/hostile_ns.py"
REC=0.6

# record TAG PID VER: --pid for REC seconds, then check the trace
record() {
  local tag=$1 pid=$2 ver=$3 rc=0
  local out="$TMPD/$tag.trc"
  timeout 60 "$TREC" -o "$out" --pid "$pid" -d $REC 2>"$out.stderr" || rc=$?
  [ $rc -eq 0 ] || { echo "$tag: trec --pid exited $rc"; cat "$out.stderr"; return 1; }
  dump_trace "$out" || return 1
  grep -q "CPython $ver" "$out.txt" || { echo "$tag: no CPython $ver process record"; return 1; }
  local tasks
  tasks=$(ls "/proc/$pid/task" | paste -sd,)
  hcheck nsthreads "$out.txt" "$pid" "$ver" "$tasks" || { echo "$tag: checks failed"; return 1; }
}

# copy_python PY DIR: the interpreter (and its libpython) into DIR;
# prints the environment assignments it needs
copy_python() {
  local real pre lib
  real=$(readlink -f "$1")
  pre=$(dirname "$(dirname "$real")")
  mkdir -p "$2/lib"
  cp "$real" "$2/python"
  lib=$(ldd "$real" 2>/dev/null | awk '/libpython/ { print $3 }')
  if [ -n "$lib" ]; then
    cp "$lib" "$2/lib/"
    echo "LD_LIBRARY_PATH=$2/lib PYTHONHOME=$pre"
  fi
}

stop() { kill -9 "$1" 2>/dev/null; wait "$1" 2>/dev/null; }

one() {
  local py=$1 ver=$2 tag=$3 d="$TMPD/$3" env pid
  mkdir -p "$d/mnt" "$d/del"

  # mount namespace: a tmpfs only the target sees
  {
    declare -f copy_python
    cat <<SH
set -e
mount -t tmpfs none "$d/mnt"
env=\$(copy_python "$py" "$d/mnt")
[ -z "\$env" ] || export \$env
exec "$d/mnt/python" "$W" 30 "$d/ready.mnt"
SH
  } >"$d/start.sh"
  unshare -m --propagation private bash "$d/start.sh" &
  pid=$!
  wait_file "$d/ready.mnt" 100 || { stop $pid; echo "mount-namespace target never ready"; return 1; }
  [ ! -e "$d/mnt/python" ] || { stop $pid; echo "the tmpfs is visible outside its namespace"; return 1; }
  grep -q "$d/mnt/python" "/proc/$pid/maps" || { stop $pid; echo "target does not run the tmpfs copy"; return 1; }
  record "$tag-mnt" $pid "$ver" || { stop $pid; return 1; }
  stop $pid

  # deleted executable
  env=$(copy_python "$py" "$d/del")
  env $env "$d/del/python" "$W" 30 "$d/ready.del" &
  pid=$!
  wait_file "$d/ready.del" 100 || { stop $pid; echo "deleted-exe target never ready"; return 1; }
  rm -rf "$d/del"
  readlink "/proc/$pid/exe" | grep -q '(deleted)' || { stop $pid; echo "exe not shown deleted"; return 1; }
  record "$tag-del" $pid "$ver" || { stop $pid; return 1; }
  stop $pid

  # pid namespace: the target is pid 1 there
  unshare -p -f --mount-proc "$py" "$W" 30 "$d/ready.pid" &
  local u=$!
  wait_file "$d/ready.pid" 100 || { stop $u; echo "pid-namespace target never ready"; return 1; }
  pid=$(cat /proc/$u/task/*/children | awk '{ print $1; exit }')
  [ "$(cat "$d/ready.pid")" = 1 ] && [ -n "$pid" ] || { stop $u; echo "target is not pid 1 of a new namespace"; return 1; }
  record "$tag-pidns" "$pid" "$ver" || { stop "$pid"; stop $u; return 1; }
  stop "$pid"
  stop $u
  return 0
}

for_each_python one
finish
