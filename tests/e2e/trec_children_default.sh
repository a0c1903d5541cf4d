#!/usr/bin/env bash
# trec records the processes its program starts, without any option:
#  - a shell wrapper (bash -c 'python3 work.py; echo done'): the Python
#    work is recorded with a plausible share of trc-stats' table, and
#    the shell passed through brings no warning; two "ranks" started side
#    by side under env, timeout and a shell (as mpirun would) are both
#    recorded, without a warning;
#  - multiprocessing.Pool(2): the workers' on-CPU samples of the mapped
#    function add up to at least 70 % of the CPU time the workers
#    measured in themselves (time.thread_time, written to a file);
#  - --no-subprocesses: only the program itself is recorded;
#  - exit statuses: a child reaped late by its parent (status 3, read
#    from its zombie) and an orphan re-parented to trec (status 4, from
#    trec's own wait) are listed by trc-dump with those statuses;
#  - a shell whose tree holds no Python: one warning at the end naming
#    the command, its exit status passed on;
#  - --pid --subprocesses on a shell records the Python it starts;
#    -s with --no-subprocesses is a usage error.
# Debian's python3, the oldest and the newest pyenv interpreter (the
# rest of the matrix is trec_subprocesses.sh's).
# retry-once: records a live program against the clock (tests/run-all)
. "$(dirname "$0")/lib/trec_common.sh"

W="$FIX/trec_children.py"
DUMP="$BIN/trc-dump"
STATS="$BIN/trc-stats"
cc() { "$CHECK_PY" "$TRC_ROOT/tests/e2e/lib/children_check.py" "$@"; }
PYTHONS=$(echo "$PYTHONS" | sed -n '1p;2p;$p' | awk '!seen[$0]++')

one() {
  local py=$1 ver=$2 tag=$3 rc=0 d="$TMPD/$3"
  mkdir -p "$d"

  # (a) a shell wrapper
  timeout 60 "$TREC" -o "$d/sh.trc" -- bash -c "'$py' '$W' work 0.6; echo done" \
    >"$d/sh.out" 2>"$d/sh.err" || rc=$?
  [ $rc -eq 0 ] || { echo "shell: trec exited $rc"; cat "$d/sh.err"; return 1; }
  grep -q '^done$' "$d/sh.out" || { echo "shell: the command did not finish"; return 1; }
  ! grep -q 'warning' "$d/sh.err" || { echo "shell: warnings: $(cat "$d/sh.err")"; return 1; }
  # exit 1 = samples the recorder missed (a loaded machine): output still whole
  "$STATS" "$d/sh.trc" >"$d/sh.stats" 2>"$d/sh.stats.err" || rc=$?
  [ $rc -le 1 ] || { echo "shell: trc-stats exited $rc: $(cat "$d/sh.stats.err")"; return 1; }
  rc=0
  cc share "$d/sh.stats" shell_child_work 0.6 || return 1

  # (a2) an mpirun-like launcher that is not Python (env, timeout, a shell)
  # starting two ranks side by side: both recorded, nothing said
  timeout 60 "$TREC" -o "$d/ranks.trc" -- env OMP_NUM_THREADS=1 timeout 50 \
    bash -c "'$py' '$W' work 0.3 & '$py' '$W' work 0.3; wait" 2>"$d/ranks.err" || rc=$?
  [ $rc -eq 0 ] || { echo "ranks: trec exited $rc"; cat "$d/ranks.err"; return 1; }
  ! grep -q 'warning' "$d/ranks.err" || { echo "ranks: warnings: $(cat "$d/ranks.err")"; return 1; }
  dump_trace "$d/ranks.trc" || return 1
  cc workers "$d/ranks.trc.txt" shell_child_work 2 || return 1

  # (b) multiprocessing.Pool(2)
  timeout 60 "$TREC" -q -o "$d/pool.trc" "$py" "$W" pool "$d/truth" 8 0.15 || rc=$?
  [ $rc -eq 0 ] || { echo "pool: trec exited $rc"; return 1; }
  dump_trace "$d/pool.trc" || return 1
  cc pool "$d/pool.trc.txt" "$d/truth" pool_work || return 1

  # (c) --no-subprocesses: the program alone
  timeout 60 "$TREC" -q --no-subprocesses -o "$d/root.trc" "$py" "$W" pool "$d/truth2" 4 0.1 || rc=$?
  [ $rc -eq 0 ] || { echo "--no-subprocesses: trec exited $rc"; return 1; }
  dump_trace "$d/root.trc" || return 1
  cc root-only "$d/root.trc.txt" pool_work || return 1

  # (d) exit statuses of children
  timeout 60 "$TREC" -q -o "$d/ex.trc" "$py" "$W" exits 0.3 || rc=$?
  [ $rc -eq 0 ] || { echo "exits: trec exited $rc"; return 1; }
  dump_trace "$d/ex.trc" || return 1
  "$DUMP" "$d/ex.trc" >"$d/ex.dump" || { echo "exits: trc-dump failed"; return 1; }
  cc exits "$d/ex.dump" "$d/ex.trc.txt" " exit3 =3" " orphan =4" || return 1
}

# no Python anywhere in the tree: one warning, at the end, naming the command
rc=0
timeout 30 "$TREC" -o "$TMPD/nopy.trc" -- bash -c 'sleep 0.2; (sleep 0.1); exit 6' 2>"$TMPD/nopy.err" || rc=$?
if [ $rc -ne 6 ]; then
  fail "no Python: trec exited $rc, want 6: $(cat "$TMPD/nopy.err")"
elif [ "$(grep -c warning "$TMPD/nopy.err")" != 1 ] ||
     ! grep -q "warning: no process in the tree of 'bash -c sleep 0.2; (sleep 0.1); exit 6' was Python" "$TMPD/nopy.err"; then
  fail "no Python: want one warning naming the command: $(cat "$TMPD/nopy.err")"
fi

# both at once is a usage error
rc=0
"$TREC" -s --no-subprocesses -o "$TMPD/both.trc" true 2>"$TMPD/both.err" || rc=$?
[ $rc -eq 2 ] && [ ! -e "$TMPD/both.trc" ] || fail "-s --no-subprocesses: exit $rc, want 2 and no trace"

# --pid --subprocesses on a shell: the Python it starts later is recorded,
# the shell itself quietly (without -s: refused, trec_cli.sh)
PY1=$(echo "$PYTHONS" | head -n1 | cut -d' ' -f1)
bash -c "sleep 0.5; '$PY1' '$W' work 0.4" &
bg=$!
rc=0
timeout 30 "$TREC" -s -o "$TMPD/att.trc" --pid $bg 2>"$TMPD/att.err" || rc=$?
wait $bg
if [ $rc -ne 0 ] || grep -q 'warning\|error' "$TMPD/att.err"; then
  fail "--pid -s of a shell: exit $rc: $(cat "$TMPD/att.err")"
elif ! dump_trace "$TMPD/att.trc" || ! cc workers "$TMPD/att.trc.txt" shell_child_work 1; then
  fail "--pid -s of a shell: the Python it started was not recorded"
fi

for_each_python one
finish
