# hostile_common.sh — shared set-up for tests/e2e/trec_hostile_*.sh
# (source it after trec_common.sh).  Provides:
#   $DUMP (trc-dump), $ASAN (1 under TRC_ASAN=1: scale down),
#   hcheck CASE ARGS... (tests/e2e/lib/hostile_check.py),
#   some_pythons: narrow $PYTHONS to Debian's python3 and the oldest and
#     newest of the others (all of them with TREC_HOSTILE_ALL=1),
#   need_root_ns: skip (77) unless unshare can make pid and mount
#     namespaces here and ns_last_pid is writable,
#   wait_file FILE [TENTHS]: wait for FILE to appear.
DUMP="$BIN/trc-dump"
[ -x "$DUMP" ] || { echo "trc-dump is not built ($DUMP)"; exit 77; }
ASAN=0
[ -n "${TRC_ASAN:-}" ] && ASAN=1

hcheck() { "$CHECK_PY" "$TRC_ROOT/tests/e2e/lib/hostile_check.py" "$@"; }

some_pythons() {
  [ -n "${TREC_HOSTILE_ALL:-}" ] && return 0
  local deb others
  deb=$(echo "$PYTHONS" | awk '$1 == "/usr/bin/python3"')
  others=$(echo "$PYTHONS" | awk '$1 != "/usr/bin/python3"')
  PYTHONS=$(printf '%s\n%s\n%s\n' "$deb" "$(echo "$others" | head -n1)" "$(echo "$others" | tail -n1)" |
    awk 'NF && !seen[$1]++')
}

need_root_ns() {
  command -v unshare >/dev/null || { echo "unshare not installed"; exit 77; }
  unshare -p -f --mount-proc -m true 2>/dev/null ||
    { echo "cannot make pid and mount namespaces here (needs root or user namespaces)"; exit 77; }
  unshare -p -f --mount-proc sh -c 'echo 5 > /proc/sys/kernel/ns_last_pid' 2>/dev/null ||
    { echo "/proc/sys/kernel/ns_last_pid is not writable in a new pid namespace"; exit 77; }
}

wait_file() {
  local i
  for i in $(seq "${2:-300}"); do [ -s "$1" ] && return 0; sleep 0.1; done
  return 1
}
