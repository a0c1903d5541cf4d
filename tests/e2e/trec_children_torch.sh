#!/usr/bin/env bash
# PyTorch DataLoader workers are recorded without any option: a Dataset
# whose __getitem__ burns CPU, read through DataLoader(num_workers=2);
# both worker processes have on-CPU samples of that work.  Needs torch
# (Debian's python3-torch, scripts/install-deps) in an interpreter trec
# supports; skipped (77) with the reason otherwise.
# retry-once: records a live program against the clock (tests/run-all)
. "$(dirname "$0")/lib/trec_common.sh"

TORCH_PY=""
while read -r py ver; do
  if "$py" -c 'import torch.utils.data' 2>/dev/null; then
    TORCH_PY=$py
    break
  fi
done <<<"$PYTHONS"
[ -n "$TORCH_PY" ] || { echo "torch is not importable by any interpreter found (install python3-torch)"; exit 77; }

out="$TMPD/torch.trc"
rc=0
timeout 120 "$TREC" -o "$out" "$TORCH_PY" "$FIX/trec_children_torch.py" 8 0.1 2>"$out.err" || rc=$?
[ $rc -eq 0 ] || { cat "$out.err"; fail "trec exited $rc"; finish; }
grep -v '^trec: [0-9]* samples' "$out.err" | grep -q . && note "trec said: $(cat "$out.err")"
dump_trace "$out" || { fail "trace unreadable"; finish; }
"$CHECK_PY" "$TRC_ROOT/tests/e2e/lib/children_check.py" workers "$out.txt" burn 2 ||
  fail "DataLoader workers not recorded"
[ "$FAILS" -eq 0 ] && RESULTS="  ok    DataLoader(num_workers=2) ($TORCH_PY)"$'\n'
finish
