#!/usr/bin/env bash
# fixtures/gpu/fake_train.trc is what the current injection code writes
# for the fake-CUPTI scenario (tests/gpu/make_fixture.c): regenerate it
# and compare bytes, so a change in the recorder's output is noticed and
# the fixture regenerated on purpose (fixtures/gpu/regenerate.sh).  Also
# it must pass trc-dump --check.
set -u
gen="$BUILD/tests/gpu/make_fixture"
[ -x "$gen" ] || { echo "make_fixture not built (no CUDA headers)"; exit 77; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
"$gen" "$tmp/f.trc" || exit 1
cmp "$tmp/f.trc" fixtures/gpu/fake_train.trc ||
  { echo "FAIL: fixtures/gpu/fake_train.trc is stale: run fixtures/gpu/regenerate.sh and review"; exit 1; }
"$BIN/trc-dump" --check fixtures/gpu/fake_train.trc || { echo "FAIL: trc-dump --check"; exit 1; }
echo ok
