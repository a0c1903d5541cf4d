#!/usr/bin/env bash
# A blocked thread's stack repeated from its switch records (lib/rec/
# switches.c) is still the right one: a thread that blocks in three
# places in turn is sampled in each, in order, about equally, idle; with
# switch records most of its samples are repeats; with
# TREC_THREAD_STATE=proc, or where perf_event_open is refused (a seccomp
# filter, as in containers: tests/e2e/tools/no_perf_events.c), none are
# and trec reads /proc.  Every interpreter found.
# retry-once: records a live program against the clock (tests/run-all)
. "$(dirname "$0")/lib/trec_common.sh"
DUMP="$BIN/trc-dump"
NOPERF="${TREC_TEST_TOOLS:-$BUILD/tests/tools}/no_perf_events"
[ -x "$NOPERF" ] || { echo "test tools not built (make $NOPERF)"; exit 77; }

one() {
  local py=$1 ver=$2 tag=$3 mode rc
  for mode in perf proc denied; do
    local out="$TMPD/$tag-$mode.trc"
    rc=0
    case $mode in
      perf) TREC_SELF_TIMING=1 timeout 120 "$TREC" -o "$out" "$py" "$FIX/trec_quiet.py" 0.4 2>"$out.err" || rc=$? ;;
      proc) TREC_THREAD_STATE=proc TREC_SELF_TIMING=1 timeout 120 "$TREC" -o "$out" "$py" "$FIX/trec_quiet.py" 0.4 2>"$out.err" || rc=$? ;;
      denied) TREC_SELF_TIMING=1 timeout 120 "$NOPERF" "$TREC" -o "$out" "$py" "$FIX/trec_quiet.py" 0.4 2>"$out.err" || rc=$? ;;
    esac
    if [ $rc -eq 77 ] && [ $mode = denied ]; then
      echo "note: no seccomp here: denied case skipped"; continue
    fi
    [ $rc -eq 0 ] || { echo "trec ($mode) exited $rc"; cat "$out.err"; return 1; }
    "$DUMP" -e "$out" >"$out.txt" 2>"$out.dumperr" || { echo "trc-dump -e $mode failed"; cat "$out.dumperr"; return 1; }
    echo "-- $mode: $(grep self-timing "$out.err")"
    "$CHECK_PY" "$TRC_ROOT/tests/e2e/lib/quiet_check.py" "$out.txt" "$out.err" $mode || return 1
    # trec said nothing about perf events being refused: it is not the user's concern
    if grep -qi "perf.event" "$out.err"; then
      echo "trec mentioned perf events ($mode):"; cat "$out.err"; return 1
    fi
  done
}

for_each_python one
finish
