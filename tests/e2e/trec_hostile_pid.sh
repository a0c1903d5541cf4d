#!/usr/bin/env bash
# Hostile targets: a pid that is reused.  In a private pid
# namespace (ns_last_pid chooses the next pid):
#  - attach: `trec --pid VICTIM`; the victim is killed and, at once, an
#    impostor is forked under the same pid, its interpreter at the very
#    addresses trec was reading (both are forks of one process).  trec
#    must stop by itself, say that the pid exited, and never record the
#    impostor (fixtures/workloads/hostile_pidreuse.py attach);
#  - --subprocesses: a child is killed and another forked under its pid:
#    the dead child is never sampled after its death, the new one is
#    recorded as a new process (hostile_pidreuse.py children).
# Needs root (or user namespaces) for unshare -p; skipped otherwise.
# Debian's python3 and the oldest and newest other interpreter.
# retry-once: records a live program against the clock (tests/run-all)
. "$(dirname "$0")/lib/trec_common.sh"
. "$(dirname "$0")/lib/hostile_common.sh"
need_root_ns
some_pythons

W="$FIX/hostile_pidreuse.py"
ROUNDS=4 CHILDREN=3
[ $ASAN = 1 ] && { ROUNDS=2; CHILDREN=2; }

one() {
  local py=$1 ver=$2 tag=$3 rc=0 f
  local d="$TMPD/$tag"
  mkdir -p "$d"
  timeout 120 unshare -p -f --mount-proc "$py" "$W" attach "$TREC" "$d" $ROUNDS >"$d/rounds" 2>"$d/err" || rc=$?
  [ $rc -eq 0 ] || { echo "attach workload exited $rc"; cat "$d/err"; return 1; }
  cat "$d/rounds"
  for f in "$d"/round-*.trc; do
    "$DUMP" --check "$f" >/dev/null 2>&1 || { echo "$f: trc-dump --check failed"; return 1; }
    dump_trace "$f" || return 1
  done
  mapfile -t lines <"$d/rounds"
  hcheck pidreuse "$d" "${lines[@]}" || return 1

  local out="$d/children.trc"
  rc=0
  timeout 120 unshare -p -f --mount-proc "$TREC" -s -o "$out" "$py" "$W" children $CHILDREN \
    >"$d/children" 2>"$out.stderr" || rc=$?
  [ $rc -eq 0 ] || { echo "trec -s exited $rc"; cat "$out.stderr"; return 1; }
  cat "$d/children"
  "$DUMP" --check "$out" >/dev/null 2>&1 || { echo "children: trc-dump --check failed"; return 1; }
  "$DUMP" --events "$out" >"$out.ev" || return 1
  hcheck children "$out.ev" "$d/children"
}

for_each_python one
finish
