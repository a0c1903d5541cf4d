#!/usr/bin/env bash
# The real-GPU proof, for a machine with an NVIDIA GPU,
# PyTorch and a CUDA 13 CUPTI: runs tests/gpu/real_torch_check.py bare
# (twice; the faster run counts) and under trec (twice, likewise), then
# checks the trace with tests/gpu/check_real_trace.py: kernel count and
# kernel time against torch.cuda.Event within 5%, every activity
# correlated to a launch call and not before it, forward kernels carrying
# the script's Python line, NVTX ranges present, overhead <= 5%.
#
# Usage: tests/gpu/run_real_check.sh [OUTDIR]   (from the repository root)
# Env: BIN (default bin), BUILD (default build), PY (default python3),
#      TREC (default $BIN/trec).  Exit 0 pass, 1 fail (also when trec
#      was built without GPU support or cannot find libtrec-cupti.so:
#      there would be nothing to check), 77 no GPU.
set -u
BIN=${BIN:-bin} BUILD=${BUILD:-build} PY=${PY:-python3}
TREC=${TREC:-$BIN/trec}
out=${1:-$(mktemp -d /tmp/trc-real-gpu-XXXXXX)}
mkdir -p "$out"
here=$(cd "$(dirname "$0")" && pwd)

support=$("$TREC" --version 2>&1 | grep '^GPU support: ')
echo "$support"
case $support in
  "GPU support: built in"*) ;;
  *) echo "run_real_check: error: $TREC: ${support:-no 'GPU support:' line in trec --version}; nothing to check without it (docs/gpu.md, Building)"
     exit 1 ;;
esac
"$PY" -c 'import torch,sys; sys.exit(0 if torch.cuda.is_available() else 77)' || {
  echo "run_real_check: no PyTorch with CUDA here"; exit 77; }

# Each configuration runs twice; the faster run counts (less noise in the ratio).
run() {  # run TAG [trec]: writes $out/TAG-{1,2}.json (and .trc under trec)
  local tag=$1 i
  for i in 1 2; do
    if [ "${2:-}" = trec ]; then
      "$TREC" -o "$out/$tag-$i.trc" "$PY" "$here/real_torch_check.py" --out "$out/$tag-$i.json" || return 1
    else
      "$PY" "$here/real_torch_check.py" --out "$out/$tag-$i.json" || return 1
    fi
  done
  "$PY" - "$out" "$tag" <<'PY'
import json, os, shutil, sys
out, tag = sys.argv[1:3]
runs = [(json.load(open("%s/%s-%d.json" % (out, tag, i)))["wall_s"], i) for i in (1, 2)]
i = min(runs)[1]
shutil.copy("%s/%s-%d.json" % (out, tag, i), "%s/%s.json" % (out, tag))
if os.path.exists("%s/%s-%d.trc" % (out, tag, i)):
    shutil.copy("%s/%s-%d.trc" % (out, tag, i), "%s/run.trc" % out)
PY
}

echo "== bare"
run bare || exit 1
echo "== under trec"
run traced trec || exit 1
"$BIN/trc-dump" --check "$out/run.trc" || echo "note: trc-dump --check reported problems"
"$BIN/trc-dump" -e "$out/run.trc" > "$out/run.events" || exit 1
[ -x "$BIN/trc-stats" ] && { "$BIN/trc-stats" --gpu "$out/run.trc" > "$out/summary.txt" 2>&1 || true; }
"$PY" "$here/check_real_trace.py" "$out/run.events" "$out/traced.json" "$out/bare.json"
rc=$?
echo "artifacts in $out"
exit $rc
