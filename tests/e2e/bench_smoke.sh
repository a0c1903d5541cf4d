#!/usr/bin/env bash
# The benchmark report generator (bench/report.py) on a canned
# results file — no benchmark runs, so this takes well under a second:
#   - every row of the table is there, with its value, ratio and RSS
#     computed from the canned figures (ratios to bare and to zlib);
#   - a result that is missing prints "n/a" on its row instead of the row
#     disappearing; a failed benchmark is named in the header;
#   - new/old against a previous results file;
#   - bench/lib.bash skips an empty value (so it reads n/a, not 0);
#   - --splice and --readme rewrite only the text between their markers.
set -u
cd "${TRC_ROOT:-.}"
command -v python3 > /dev/null || { echo "python3 not found"; exit 77; }
fail=0
bad() { echo "FAIL: $*"; fail=1; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
T=$'\t'

# The rows the table must have (section title prefix, then row labels):
# written here, not taken from report.py, so dropping a row fails.
rows_trec=("bare program (bench_cpu.py)" "under trec at 100 Hz" "under trec at 1 kHz"
  "under cProfile" "trec 1 kHz time / cProfile time" "trec CPU per sample, p50 (30 frames)"
  "trec CPU per sample, p90" "trec CPU per sample, p99" "trec CPU per sample, all CPU / samples"
  "of which an empty 1 kHz wake-up" "10 kHz sustained: late ticks"
  "bytes/sample, steady state (trec trace)" "bytes/sample, bench_cpu.py at 1 kHz")
cpu_tools=("trc-dump --summary" "trc-dump --check" trc2collapsed trc-stats trc2pstats trc2speedscope trc2chrome)
gpu_tools=("trc-dump --check" trc2nvvp "trc2nvvp --print-gpu-trace" trc2chrome trc2speedscope "trc2collapsed --gpu")

{
  printf '#meta\tdate\t2030-01-02 03:04 UTC\n#meta\tcommit\tabc1234\n#meta\tcpus\t2\n'
  printf '#meta\tload_start\t0.10 0.20 0.30\n#meta\tload_end\t0.40 0.50 0.60\n#meta\tquick\t0\n'
  printf 'trec\tbare_s\t2.0\ts\tbench_cpu.py x60\n'
  printf 'trec\tt100_s\t2.02\ts\t\ntrec\tt1k_s\t2.1\ts\t\ntrec\tcprof_s\t5.0\ts\t\n'
  printf 'trec\tsample_p50\t15.5\tus\t\ntrec\tsample_p90\t21\tus\t\ntrec\tsample_p99\t88\tus\t\n'
  printf 'trec\tsample_all_cpu\t40\tus\t\ntrec\twakeup\t20\tus\t\ntrec\tlate_10k\t4.5\tpct\t\n'
  printf 'trec\tbytes_steady\t0.75\tB/sample\t\ntrec\tbytes_t1k\t8.25\tB/sample\t\n'
  printf 'decode_cpu\titems\t4000000\tsamples\t\ndecode_cpu\ttrace_bytes\t6000000\tB\t\n'
  printf 'decode_cpu\tzlib\t80000000\tsamples/s\t\ndecode_cpu\treader\t40000000\tsamples/s\t\n'
  printf 'decode_cpu\tzlib_mbs\t150\tMB/s\t\ndecode_gpu\tzlib_mbs\t700\tMB/s\t\n'
  for t in "${cpu_tools[@]}"; do printf 'decode_cpu\t%s\t20000000\tsamples/s\t\ndecode_cpu\t%s.rss\t4096\tKiB\t\n' "$t" "$t"; done
  printf 'decode_gpu\titems\t1000000\tactivities\t\ndecode_gpu\ttrace_bytes\t15000000\tB\t\n'
  printf 'decode_gpu\tzlib\t10000000\tactivities/s\t\ndecode_gpu\treader\t5000000\tactivities/s\t\n'
  for t in "${gpu_tools[@]}"; do printf 'decode_gpu\t%s\t2500000\tactivities/s\t\ndecode_gpu\t%s.rss\t8192\tKiB\t\n' "$t" "$t"; done
  printf 'format\truns_recording_bytes\t1.65\tB/sample\t\nformat\trandom_recording_bytes\t4.7\tB/sample\t\n'
  printf 'format\truns_recording_writer\t1e7\tsamples/s\t\nformat\truns_recording_reader_at_ceiling\t60\tpct\t\n'
  printf 'collapsed_stats_pstats\tpstats_size_vs_cprofile\t0.1\tx\t\ncollapsed_stats_pstats\tpstats_load_vs_cprofile\t0.09\tx\t\n'
  printf 'lines\ttrc-lines\t5000000\tsamples/s\t\nlines\ttrc-lines.rss\t3072\tKiB\t\nlines\ttrc-lines.rss_n_4\t2800\tKiB\t\n'
  printf 'speedscope_chrome\tspeedscope_naive_vs_ours\t3.3\tx\t\n'
  printf 'speedscope_chrome_gpu\ttrc2speedscope.cpu\t0.6\ts\t\nspeedscope_chrome_gpu\ttrc2speedscope.rss\t38000\tKiB\t\n'
  printf 'speedscope_chrome_gpu\ttrc2chrome.cpu\t1.5\ts\t\nspeedscope_chrome_gpu\ttrc2chrome.rss\t9000\tKiB\t\n'
  printf 'nvvp\t--print-gpu-trace\t1.2\ts\t\nnvvp\t--svg\t0.75\ts\t\n'
  printf 'top\trefresh_window_p50\t1400\tus\t\ntop\trefresh_all_p50\t800\tus\t\ntop\tfeed_per_s\t560\tus\t\n'
  printf 'py_walk\t3.9.18 tick p50\t7.5\tus\t\npy_walk\t3.11.2 tick p50\t6.8\tus\t\npy_walk\t3.11.2 tick p99\t9\tus\t\n'
  printf 'gpu_launch\tcallback_p50\t155\tns\t\ngpu_launch\tcallback_p99\t205\tns\t\ngpu_launch\tallin\t1083\tns\t\n'
} > "$tmp/full.tsv"

python3 bench/report.py "$tmp/full.tsv" > "$tmp/full.txt" 2> "$tmp/err" || bad "report.py exited $?: $(cat "$tmp/err")"
# row LABEL: the table's line for LABEL (first match)
row() { grep -F -- "$1" "$2" | head -1; }
for l in "${rows_trec[@]}"; do
  r=$(row "$l" "$tmp/full.txt")
  [ -n "$r" ] || bad "trec row '$l' missing"
  grep -q 'n/a' <<< "$r" && bad "trec row '$l' reads n/a with its result present: $r"
done
for sec in "2a. decode, CPU trace: 4000000 samples" "2b. decode, GPU trace: 1000000 activities"; do
  grep -qF "$sec" "$tmp/full.txt" || bad "no section '$sec'"
done
# the decode rows: two floors and every tool in each section, in order
n_z=$(grep -c '^zlib inflate alone (the ceiling) .*1.00x zlib' "$tmp/full.txt")
[ "$n_z" = 2 ] || bad "want 2 zlib ceiling rows at 1.00x, got $n_z"
[ "$(grep -cE '^  the same, in decoded bytes +(150|700) MB/s$' "$tmp/full.txt")" = 2 ] || bad "zlib MB/s rows"
n_r=$(grep -c '^libtrc reader alone (in memory) .*0.50x zlib' "$tmp/full.txt")
[ "$n_r" = 2 ] || bad "want 2 reader rows at 0.50x zlib, got $n_r"
cpu_part=$(sed -n '/^2a\./,/^2b\./p' "$tmp/full.txt")
gpu_part=$(sed -n '/^2b\./,/^3\./p' "$tmp/full.txt")
for t in "${cpu_tools[@]}"; do
  grep -qE "^$t +20.00 M/s +0.25x zlib +4.0 MiB\$" <<< "$cpu_part" || bad "CPU decode row '$t' wrong or missing"
done
for t in "${gpu_tools[@]}"; do
  grep -qE "^$t +2.50 M/s +0.25x zlib +8.0 MiB\$" <<< "$gpu_part" || bad "GPU decode row '$t' wrong or missing"
done
# ratios and values computed from the canned figures
row "under trec at 1 kHz" "$tmp/full.txt" | grep -qE '2\.100 s +1\.05x bare' || bad "1 kHz row: $(row "under trec at 1 kHz" "$tmp/full.txt")"
row "under cProfile" "$tmp/full.txt" | grep -qE '5\.000 s +2\.50x bare' || bad "cProfile row"
row "trec 1 kHz time / cProfile time" "$tmp/full.txt" | grep -q '0\.42x' || bad "trec/cProfile ratio"
row "10 kHz sustained" "$tmp/full.txt" | grep -q '4\.50 %' || bad "late share row"
row "steady state (trec trace)" "$tmp/full.txt" | grep -q '0\.750 B' || bad "bytes/sample row"
row "GPU launch callback, no-Python thread, p50" "$tmp/full.txt" | grep -q '155 ns' || bad "GPU launch callback row"
row "GPU recording CPU per launch, all in" "$tmp/full.txt" | grep -q '1083 ns' || bad "GPU per-launch all-in row"
grep -q 'load average 0.10 0.20 0.30 at start, 0.40 0.50 0.60 at end' "$tmp/full.txt" || bad "no load average in the header"
grep -q '2030-01-02 03:04 UTC, commit abc1234' "$tmp/full.txt" || bad "no date/commit in the header"
grep -q 'py walk per tick .*, 3.9.18 .* 7.5 us' "$tmp/full.txt" && grep -q 'py walk per tick .*, 3.11.2 .* 6.8 us' "$tmp/full.txt" ||
  bad "py walk rows per version"
# versions sort numerically: 3.9 before 3.11
[ "$(grep -n ', 3.9.18 ' "$tmp/full.txt" | cut -d: -f1)" -lt "$(grep -n ', 3.11.2 ' "$tmp/full.txt" | cut -d: -f1)" ] ||
  bad "py walk versions out of order"
row "trc-top: CPU per refresh, 8 threads" "$tmp/full.txt" | grep -q '1400.0 us' || bad "trc-top refresh row"
n_full=$(wc -l < "$tmp/full.txt")

r=$(row "trc-lines at 1 M samples" "$tmp/full.txt")
grep -q 'n/a' <<< "$r" && bad "trc-lines row reads n/a with its result present: $r"
grep -q '3.0 MiB' <<< "$r" || bad "trc-lines row without its peak RSS: $r"
# A missing result reads n/a on its row; a failed benchmark is named.
grep -v -e "^trec${T}t1k_s${T}" -e "^decode_cpu${T}trc2chrome${T}" -e "^decode_gpu${T}zlib${T}" -e '^py_walk' "$tmp/full.tsv" > "$tmp/holes.tsv"
printf '#meta\tfailed\tpy_walk\n' >> "$tmp/holes.tsv"
python3 bench/report.py "$tmp/holes.tsv" > "$tmp/holes.txt" || bad "report.py on holes exited $?"
row "under trec at 1 kHz" "$tmp/holes.txt" | grep -q 'n/a' || bad "missing 1 kHz result does not read n/a"
row "trec 1 kHz time / cProfile time" "$tmp/holes.txt" | grep -q 'n/a' || bad "derived row without its input does not read n/a"
grep -E '^trc2chrome ' <<< "$(sed -n '/^2a\./,/^2b\./p' "$tmp/holes.txt")" | grep -q 'n/a' || bad "missing trc2chrome reads other than n/a"
gz=$(sed -n '/^2b\./,/^3\./p' "$tmp/holes.txt" | grep '^zlib inflate alone')
grep -q 'n/a' <<< "$gz" || bad "missing GPU zlib ceiling does not read n/a: $gz"
grep -q '^py walk per tick.*n/a' "$tmp/holes.txt" || bad "no py walk result at all: want one n/a row"
grep -q 'FAILED benchmarks.*py_walk' "$tmp/holes.txt" || bad "failed benchmark not named in the header"
# one row fewer at most (two py walk rows became one n/a row); one header line more
[ "$(wc -l < "$tmp/holes.txt")" -eq "$n_full" ] || bad "holes table has $(wc -l < "$tmp/holes.txt") lines, full $n_full"

# new/old against a previous results file
sed -e "s/^trec${T}t1k_s${T}2.1${T}/trec${T}t1k_s${T}4.2${T}/" -e 's/2030-01-02/2029-12-01/' "$tmp/full.tsv" > "$tmp/prev.tsv"
python3 bench/report.py "$tmp/full.tsv" --prev "$tmp/prev.tsv" > "$tmp/cmp.txt" || bad "report.py --prev exited $?"
row "under trec at 1 kHz" "$tmp/cmp.txt" | grep -qE ' 0\.50$' || bad "new/old of 2.1 s over 4.2 s: $(row "under trec at 1 kHz" "$tmp/cmp.txt")"
row "under trec at 100 Hz" "$tmp/cmp.txt" | grep -qE ' 1\.00$' || bad "new/old of an unchanged row"
grep -q 'previous (2029-12-01' "$tmp/cmp.txt" || bad "previous run not named"
python3 bench/report.py "$tmp/full.tsv" --prev "$tmp/nonexistent.tsv" | grep -q 'no earlier saved results' || bad "no previous file"

# bench_result: an empty or non-numeric value is not written
(
  export BENCH_RESULTS=$tmp/lib.tsv
  . bench/lib.bash
  bench_result g a 1.5 s "note"
  bench_result g b "" s
  bench_result g c "12 s" s
)
[ "$(cut -f1-4 "$tmp/lib.tsv")" = "g${T}a${T}1.5${T}s" ] || bad "bench_result wrote: $(cat "$tmp/lib.tsv")"

# --splice / --readme touch only the text between their markers
printf 'intro\n<!-- bench-report:begin (make bench BENCH_SAVE=1 rewrites this block) -->\nold\n<!-- bench-report:end -->\noutro\n' > "$tmp/doc.md"
python3 bench/report.py --splice "$tmp/doc.md" "$tmp/full.txt" || bad "--splice exited $?"
python3 bench/report.py --splice "$tmp/doc.md" "$tmp/full.txt" || bad "second --splice exited $?"
[ "$(head -1 "$tmp/doc.md")" = intro ] && [ "$(tail -1 "$tmp/doc.md")" = outro ] || bad "splice changed text outside the markers"
grep -q '^old$' "$tmp/doc.md" && bad "splice left the old block"
[ "$(grep -c 'under trec at 1 kHz' "$tmp/doc.md")" = 1 ] || bad "splice is not idempotent"
printf 'no markers\n' > "$tmp/nomark.md"
python3 bench/report.py --splice "$tmp/nomark.md" "$tmp/full.txt" 2> /dev/null && bad "--splice without markers succeeded"
printf 'a\n<!-- bench-headline:begin (make bench BENCH_SAVE=1 rewrites this block) -->\nx\n<!-- bench-headline:end -->\nb\n' > "$tmp/readme.md"
python3 bench/report.py --readme "$tmp/readme.md" "$tmp/full.tsv" || bad "--readme exited $?"
grep -q '+5.0 % at 1 kHz' "$tmp/readme.md" && grep -q 'cProfile by +150.0 %' "$tmp/readme.md" || bad "readme headline: $(cat "$tmp/readme.md")"
[ "$(tail -1 "$tmp/readme.md")" = b ] || bad "--readme changed text after its block"
# within the bare runs' spread (here ±10 %), the headline says so instead
# of calling noise a slowdown or a speed-up; outside it (±1 %), it does not
sed "s/^trec${T}bare_s${T}2.0${T}s${T}.*/trec${T}bare_s${T}2.0${T}s${T}median of 7, range 1.8-2.2/" "$tmp/full.tsv" > "$tmp/wide.tsv"
python3 bench/report.py --readme "$tmp/readme.md" "$tmp/wide.tsv" || bad "--readme (wide) exited $?"
grep -q "within the bare runs' spread (±10 %): +1.0 % at 100 Hz, +5.0 % at 1 kHz; cProfile slows it by +150.0 %" \
  "$tmp/readme.md" || bad "readme headline within the spread: $(cat "$tmp/readme.md")"
sed "s/^trec${T}bare_s${T}2.0${T}s${T}.*/trec${T}bare_s${T}2.0${T}s${T}median of 7, range 1.98-2.02/" "$tmp/full.tsv" > "$tmp/narrow.tsv"
python3 bench/report.py --readme "$tmp/readme.md" "$tmp/narrow.tsv" || bad "--readme (narrow) exited $?"
grep -q 'slows a CPU-bound Python program by +1.0 % at 100 Hz and +5.0 % at 1 kHz' "$tmp/readme.md" ||
  bad "readme headline outside the spread: $(cat "$tmp/readme.md")"

[ $fail = 0 ] && echo "bench_smoke: ok"
exit $fail
