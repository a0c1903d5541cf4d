#!/usr/bin/env bash
# Memory stays bounded on hostile input: every tool mode, on every fuzz
# regression file, runs under a 256 MiB address-space limit and ends with
# exit 0, 1 or 2 (a tiny file once made the trc-dump listing allocate
# 256 MiB for a string id near the id limit).
set -u
[ -z "${TRC_ASAN:-}" ] || { echo "sanitizer build: its shadow memory needs more address space"; exit 77; }
. tests/e2e/lib/converters.sh
fail=0
for f in fixtures/fuzz/*.trc; do
  for mode in "trc-dump" "trc-dump --check" "trc-dump --events" "trc-dump --summary" \
              "${TRC_CONVERTERS[@]}"; do
    set -- $mode
    tool=$1; shift
    ( ulimit -v 262144; "$BIN/$tool" "$@" "$f" >/dev/null 2>&1 ); rc=$?
    if [ $rc -gt 2 ]; then echo "FAIL: $mode $f: exit $rc"; fail=1; fi
  done
done
[ $fail -eq 0 ] && echo ok
exit $fail
