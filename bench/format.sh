#!/usr/bin/env bash
# Codec size and speed: bytes/sample, writer/reader throughput, the zlib
# inflate ceiling and reader memory at N/10 vs N samples, side by side.
# BENCH_QUICK=1 uses 200k samples instead of 1M.
set -eu
n=1000000
[ "${BENCH_QUICK:-}" = 1 ] && n=200000
exec "$BUILD/bench/format_bench" "$n"
