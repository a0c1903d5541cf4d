#!/usr/bin/env python3
"""bench/report.py — the benchmark table from the results the
bench/*.sh scripts write (bench/lib.bash, bench/benchres.py).

  report.py RESULTS [--prev PREV]     print the table
  report.py --splice DOC REPORT       put REPORT into DOC between the
                                      bench-report markers
  report.py --readme README RESULTS   rewrite README's headline figures
                                      between the bench-headline markers

RESULTS is tab-separated: "#meta KEY VALUE" lines (written by
bench/run-all: date, commit, load averages, ...) and result lines
"GROUP NAME VALUE UNIT NOTE".  The table has a fixed list of rows (ROWS
below): a row whose result is missing prints "n/a", never disappears, so
a benchmark that broke shows in the table.  With PREV (the committed
docs/bench-results.tsv) each row also shows new/old, this run's value
over the previous one's (for rates higher is better, for times and sizes
lower is better)."""
import os
import re
import sys

BEGIN_REPORT = "<!-- bench-report:begin (make bench BENCH_SAVE=1 rewrites this block) -->"
END_REPORT = "<!-- bench-report:end -->"
BEGIN_HEAD = "<!-- bench-headline:begin (make bench BENCH_SAVE=1 rewrites this block) -->"
END_HEAD = "<!-- bench-headline:end -->"


def load(path):
    """(meta dict, results dict keyed by (group, name) -> (value, unit, note))."""
    meta, res = {}, {}
    with open(path) as f:
        for line in f:
            cols = line.rstrip("\n").split("\t")
            if cols[0] == "#meta" and len(cols) >= 3:
                meta[cols[1]] = cols[2]
            elif line.startswith("#") or len(cols) < 3:
                continue
            else:
                try:
                    value = float(cols[2])
                except ValueError:
                    continue
                res[(cols[0], cols[1])] = (value, cols[3] if len(cols) > 3 else "",
                                           cols[4] if len(cols) > 4 else "")
    return meta, res


# ---- how values print ------------------------------------------------------

def fmt_value(value, unit):
    if unit == "s":
        return "%.3f s" % value
    if unit == "us":
        return "%.1f us" % value
    if unit == "pct":
        return "%.2f %%" % value
    if unit == "B/sample":
        return "%.3f B" % value
    if unit == "KiB":
        return "%.1f MiB" % (value / 1024)
    if unit == "x":
        return "%.2fx" % value
    if unit.endswith("/s") and unit != "MB/s":
        return "%.2f M/s" % (value / 1e6)
    if unit == "MB/s":
        return "%.0f MB/s" % value
    if unit == "B":
        return "%.1f MB" % (value / 1e6) if value >= 1e6 else "%.0f B" % value
    return "%.4g %s" % (value, unit)


# ---- the rows ----------------------------------------------------------------
# A row: (label, group, name, how) where how is a dict:
#   ref:   (group, name) — ratio column = value / ref's value, suffix rsuf
#   rss:   (group, name) — the peak RSS column
#   div:   (group, name) — the row's value is value / div's value (derived)
#   match: a name suffix — one row per result of the group whose name ends
#          so (label is the prefix; sorted), for per-version figures
BARE = ("trec", "bare_s")
CPU_Z = ("decode_cpu", "zlib")
GPU_Z = ("decode_gpu", "zlib")


def tool_rows(group, zlib, tools):
    rows = [("zlib inflate alone (the ceiling)", group, "zlib", {"ref": zlib, "rsuf": " zlib"}),
            ("  the same, in decoded bytes", group, "zlib_mbs", {}),
            ("libtrc reader alone (in memory)", group, "reader", {"ref": zlib, "rsuf": " zlib"})]
    for t in tools:
        rows.append((t, group, t, {"ref": zlib, "rsuf": " zlib", "rss": (group, t + ".rss")}))
    return rows


SECTIONS = [
    ("1. trec: what recording costs  [{trec_note}]", [
        ("bare program (bench_cpu.py)", "trec", "bare_s", {"ref": BARE, "rsuf": " bare"}),
        ("under trec at 100 Hz", "trec", "t100_s", {"ref": BARE, "rsuf": " bare"}),
        ("under trec at 1 kHz", "trec", "t1k_s", {"ref": BARE, "rsuf": " bare"}),
        ("under trec --blocking at 1 kHz", "trec", "tblk_s", {"ref": BARE, "rsuf": " bare"}),
        ("  --blocking time / plain trec 1 kHz time", "trec", "tblk_s", {"div": ("trec", "t1k_s")}),
        ("under cProfile", "trec", "cprof_s", {"ref": BARE, "rsuf": " bare"}),
        ("trec 1 kHz time / cProfile time", "trec", "t1k_s", {"div": ("trec", "cprof_s")}),
        ("trec CPU per sample, p50 (30 frames)", "trec", "sample_p50", {}),
        ("trec CPU per sample, p90", "trec", "sample_p90", {}),
        ("trec CPU per sample, p99", "trec", "sample_p99", {}),
        ("trec CPU per sample, all CPU / samples", "trec", "sample_all_cpu", {}),
        ("  of which an empty 1 kHz wake-up", "trec", "wakeup", {}),
        ("--blocking CPU per sample, p50", "trec", "blk_sample_p50", {}),
        ("  plain trec alternated with it, p50", "trec", "blk_plain_p50", {}),
        ("  --blocking / plain, p50", "trec", "blk_sample_p50", {"div": ("trec", "blk_plain_p50")}),
        ("--blocking all CPU / samples", "trec", "blk_sample_all_cpu", {}),
        ("  plain trec alternated with it", "trec", "blk_plain_all_cpu", {}),
        ("  --blocking / plain, all CPU", "trec", "blk_sample_all_cpu",
         {"div": ("trec", "blk_plain_all_cpu")}),
        ("10 kHz sustained: late ticks", "trec", "late_10k", {}),
        ("  empty wake-ups at 10 kHz: late", "trec", "late_10k_empty", {}),
        ("10 kHz with --spin: late ticks", "trec", "late_10k_spin", {}),
        ("32 blocked + 1 running thread: CPU per tick", "trec", "pool_switch_tick", {}),
        ("  the same, /proc state every tick (before)", "trec", "pool_proc_tick", {}),
        ("  switch records / /proc", "trec", "pool_switch_tick", {"div": ("trec", "pool_proc_tick")}),
        ("  CPU per sample p50, switch records", "trec", "pool_switch_p50", {}),
        ("  CPU per sample p50, /proc (before)", "trec", "pool_proc_p50", {}),
        ("bytes/sample, steady state (trec trace)", "trec", "bytes_steady", {}),
        ("bytes/sample, bench_cpu.py at 1 kHz", "trec", "bytes_t1k", {}),
    ]),
    ("1b. trec: stacks read whole (fidelity_deep.py; bench/trec_torn.sh; "
     "heap = frame objects before 3.11, datastack = 3.11+)", [
        ("heap: ticks lost to torn reads", "torn", "heap_plain_pct", {}),
        ("  torn reads retried per tick", "torn", "heap_plain_retries", {}),
        ("  worst depth decile vs in-process reference", "torn", "heap_plain_depth", {}),
        ("  trec CPU per tick", "torn", "heap_plain_cpu", {}),
        ("heap, --blocking: ticks torn", "torn", "heap_blocking_pct", {}),
        ("  worst depth decile vs in-process reference", "torn", "heap_blocking_depth", {}),
        ("  trec CPU per tick", "torn", "heap_blocking_cpu", {}),
        ("  --blocking / plain, CPU per tick", "torn", "heap_blocking_cpu",
         {"div": ("torn", "heap_plain_cpu")}),
        ("datastack: ticks lost to torn reads", "torn", "datastack_plain_pct", {}),
        ("  torn reads retried per tick", "torn", "datastack_plain_retries", {}),
        ("  worst depth decile vs in-process reference", "torn", "datastack_plain_depth", {}),
        ("  trec CPU per tick", "torn", "datastack_plain_cpu", {}),
        ("datastack, --blocking: ticks torn", "torn", "datastack_blocking_pct", {}),
        ("  worst depth decile vs in-process reference", "torn", "datastack_blocking_depth", {}),
        ("  trec CPU per tick", "torn", "datastack_blocking_cpu", {}),
        ("  --blocking / plain, CPU per tick", "torn", "datastack_blocking_cpu",
         {"div": ("torn", "datastack_plain_cpu")}),
    ]),
    ("2a. decode, CPU trace: {cpu_items} samples, {cpu_bytes}, {cpu_bps} B/sample "
     "(rates: samples / CPU s, best of {reps})", tool_rows("decode_cpu", CPU_Z, [
         "trc-dump --summary", "trc-dump --check", "trc2collapsed", "trc-stats", "trc2pstats",
         "trc2speedscope", "trc2chrome"])),
    ("2b. decode, GPU trace: {gpu_items} activities, {gpu_bytes} "
     "(rates: GPU activities / CPU s)", tool_rows("decode_gpu", GPU_Z, [
         "trc-dump --check", "trc2nvvp", "trc2nvvp --print-gpu-trace", "trc2chrome",
         "trc2speedscope", "trc2collapsed --gpu"])),
    ("3. component figures (bench/*.sh; every figure: results.tsv, output: log.txt)", [
        ("codec: bytes/sample, synthetic, as recorded", "format", "runs_recording_bytes", {}),
        ("codec: same, random stacks (worst case)", "format", "random_recording_bytes", {}),
        ("codec: writer, as recorded", "format", "runs_recording_writer", {}),
        ("codec: reader speed as % of inflate", "format", "runs_recording_reader_at_ceiling", {}),
        ("trc2pstats file size / cProfile's", "collapsed_stats_pstats", "pstats_size_vs_cprofile", {}),
        ("trc2pstats load time / cProfile's", "collapsed_stats_pstats", "pstats_load_vs_cprofile", {}),
        ("trc-lines at 1 M samples", "lines", "trc-lines", {"rss": ("lines", "trc-lines.rss")}),
        ("  trc-lines, peak RSS at 1/4 of the samples", "lines", "trc-lines.rss_n_4", {}),
        ("speedscope: naive JSON size / ours", "speedscope_chrome", "speedscope_naive_vs_ours", {}),
        ("GPU: trc2speedscope CPU (2 s budget at 1 M)", "speedscope_chrome_gpu", "trc2speedscope.cpu",
         {"rss": ("speedscope_chrome_gpu", "trc2speedscope.rss")}),
        ("  peak RSS at a quarter of the activities", "speedscope_chrome_gpu", "trc2speedscope.rss_n_4", {}),
        ("GPU: trc2chrome CPU (2 s budget at 1 M)", "speedscope_chrome_gpu", "trc2chrome.cpu",
         {"rss": ("speedscope_chrome_gpu", "trc2chrome.rss")}),
        ("  peak RSS at a quarter of the activities", "speedscope_chrome_gpu", "trc2chrome.rss_n_4", {}),
        ("flamegraph: 1 M samples to SVG, CPU (goal 1 s)", "flamegraph", "trc2flamegraph.cpu",
         {"rss": ("flamegraph", "trc2flamegraph.rss")}),
        ("  peak RSS at a quarter of the samples", "flamegraph", "trc2flamegraph.rss_n_4", {}),
        ("  --threads --idle, CPU", "flamegraph", "trc2flamegraph --threads --idle.cpu",
         {"rss": ("flamegraph", "trc2flamegraph --threads --idle.rss")}),
        ("nvvp: --print-gpu-trace CPU (2 s at 1 M)", "nvvp", "--print-gpu-trace", {}),
        ("nvvp: --svg CPU (2 s at 1 M)", "nvvp", "--svg", {}),
        ("GPU idle: activities/CPU s through --gpu-idle (goal 1 M)", "gpu_idle",
         "activities_per_s", {"rss": ("gpu_idle", "rss")}),
        ("  peak RSS at half the activities", "gpu_idle", "rss_n_2", {}),
        ("trc-top: CPU per refresh, 8 threads at 1 kHz, 10 s window", "top", "refresh_window_p50", {}),
        ("trc-top: CPU per refresh, since start", "top", "refresh_all_p50", {}),
        ("trc-top: CPU to read 1 s of that recording", "top", "feed_per_s", {}),
        ("GPU launch callback, no-Python thread, p50", "gpu_launch", "callback_p50", {}),
        ("GPU launch callback, no-Python thread, p99", "gpu_launch", "callback_p99", {}),
        ("GPU recording CPU per launch, all in", "gpu_launch", "allin", {}),
        ("trec --dump, 100 threads x 50 frames: wall", "dump", "text_ms", {}),
        ("  with --locals", "dump", "locals_ms", {}),
        ("  as JSON", "dump", "json_ms", {}),
        ("py walk per tick (out of process), ", "py_walk", None, {"match": " tick p50", "not": "napped"}),
        ("py walk per tick 0.9 ms apart, ", "py_walk", None, {"match": " napped tick p50"}),
        ("py walk: target pages read per tick, ", "py_walk", None, {"match": " pages per tick"}),
    ]),
]


def row_label_keys():
    """Every fixed row: (section index, label, group, name) — for tests."""
    out = []
    for i, (_, rows) in enumerate(SECTIONS):
        for label, group, name, how in rows:
            out.append((i, label, group, name))
    return out


def expand(rows, res):
    """Rows with match patterns replaced by one row per matching result."""
    out = []
    for label, group, name, how in rows:
        if "match" not in how:
            out.append((label, group, name, how))
            continue
        hits = sorted((n for (g, n) in res if g == group and n.endswith(how["match"])
                       and not (how.get("not") and how["not"] in n)),
                      key=lambda n: [int(p) if p.isdigit() else p for p in n.split()[0].split(".")])
        if not hits:
            out.append((label + "*", group, name, {}))
        for n in hits:
            out.append((label + n[:-len(how["match"])], group, n, {}))
    return out


def value_of(res, group, name, how):
    """(value, unit) of a row, or None when missing."""
    if name is None or (group, name) not in res:
        return None
    v, unit, _ = res[(group, name)]
    if "div" in how:
        d = res.get(how["div"])
        if not d or d[0] == 0:
            return None
        return v / d[0], "x"
    return v, unit


def header_fields(meta, res):
    def get(key, f="%s"):
        return f % res[key][0] if key in res else "n/a"
    trec_note = res.get(BARE, (0, "", "no trec run"))[2]
    return {
        "trec_note": trec_note,
        "cpu_items": get(("decode_cpu", "items"), "%.0f"),
        "cpu_bytes": fmt_value(res[("decode_cpu", "trace_bytes")][0], "B")
        if ("decode_cpu", "trace_bytes") in res else "n/a",
        "cpu_bps": "%.3f" % (res[("decode_cpu", "trace_bytes")][0] / res[("decode_cpu", "items")][0])
        if ("decode_cpu", "trace_bytes") in res and res.get(("decode_cpu", "items"), (0,))[0] else "n/a",
        "gpu_items": get(("decode_gpu", "items"), "%.0f"),
        "gpu_bytes": fmt_value(res[("decode_gpu", "trace_bytes")][0], "B")
        if ("decode_gpu", "trace_bytes") in res else "n/a",
        "reps": meta.get("reps", "5"),
    }


def render(meta, res, prev_meta=None, prev=None):
    lines = []
    load_s, load_e = meta.get("load_start", "n/a"), meta.get("load_end", "n/a")
    lines.append("trc benchmark report — %s, commit %s%s" % (
        meta.get("date", "n/a"), meta.get("commit", "n/a"),
        "  [BENCH_QUICK=1: smoke run, small sizes]" if meta.get("quick") == "1" else ""))
    lines.append("machine: %s, %s CPUs; load average %s at start, %s at end; %s s in all" % (
        meta.get("cpu_model", "n/a"), meta.get("cpus", "n/a"), load_s, load_e, meta.get("seconds", "n/a")))
    lines.append("command: %s" % meta.get("command", "make bench"))
    if meta.get("failed"):
        lines.append("FAILED benchmarks (their rows read n/a): %s" % meta["failed"])
    if prev is not None:
        lines.append("new/old: this run / previous (%s, commit %s%s); rates: >1 is faster, "
                     "times and sizes: <1 is better" % (
                         prev_meta.get("date", "n/a"), prev_meta.get("commit", "n/a"),
                         ", a quick run" if prev_meta.get("quick") == "1" else ""))
    else:
        lines.append("new/old: no earlier saved results (docs/bench-results.tsv) to compare with")
    fields = header_fields(meta, res)
    widths = (46, 12, 12, 10, 8)
    head = "%-*s %*s %*s %*s %*s" % (widths[0], "", widths[1], "value", widths[2], "ratio",
                                      widths[3], "peak RSS", widths[4], "new/old")
    for title, rows in SECTIONS:
        lines.append("")
        try:
            lines.append(title.format(**fields))
        except (KeyError, IndexError):
            lines.append(title)
        lines.append(head)
        for label, group, name, how in expand(rows, res):
            got = value_of(res, group, name, how)
            val = fmt_value(*got) if got else "n/a"
            ratio = rss = change = ""
            if got and "ref" in how:
                ref = res.get(how["ref"])
                if ref and ref[0]:
                    ratio = "%.2fx%s" % (got[0] / ref[0], how.get("rsuf", ""))
            if got and "rss" in how:
                r = res.get(how["rss"])
                rss = fmt_value(r[0], "KiB") if r else "n/a"
            if got and prev is not None:
                old = value_of(prev, group, name, how)
                change = "%.2f" % (got[0] / old[0]) if old and old[0] else "-"
            lines.append(("%-*s %*s %*s %*s %*s" % (widths[0], label[:widths[0]], widths[1], val,
                                                     widths[2], ratio, widths[3], rss,
                                                     widths[4], change)).rstrip())
    return "\n".join(lines) + "\n"


def headline(meta, res):
    """The README's few figures, from the same results."""
    def pct(key):
        if key in res and BARE in res and res[BARE][0]:
            return "%+.1f %%" % (100 * (res[key][0] / res[BARE][0] - 1))
        return "n/a"

    def spread():
        """Half the bare runs' range over their median, in %, or None."""
        m = re.search(r"range ([0-9.]+)-([0-9.]+)", res[BARE][2]) if BARE in res else None
        if not m or not res[BARE][0]:
            return None
        return 50 * (float(m.group(2)) - float(m.group(1))) / res[BARE][0]

    def trec_cost():
        sp = spread()
        keys = (("trec", "t100_s"), ("trec", "t1k_s"))
        if sp is not None and all(k in res for k in keys) and \
                all(abs(100 * (res[k][0] / res[BARE][0] - 1)) <= sp for k in keys):
            # what a reader would take for a speed-up is noise: say so
            return ("- trec's effect on a CPU-bound Python program is within the bare runs' "
                    "spread (±%.0f %%): %s at 100 Hz, %s at 1 kHz; cProfile slows it by %s."
                    % (sp, pct(keys[0]), pct(keys[1]), pct(("trec", "cprof_s"))))
        return ("- trec slows a CPU-bound Python program by %s at 100 Hz and %s at 1 kHz; "
                "cProfile by %s." % (pct(keys[0]), pct(keys[1]), pct(("trec", "cprof_s"))))

    def pool():
        a, b = ("trec", "pool_switch_tick"), ("trec", "pool_proc_tick")
        if a not in res or b not in res or not res[b][0]:
            return "- A thread pool at rest (32 blocked threads, 1 running): n/a."
        return ("- A thread pool at rest (32 blocked threads, 1 running): %s of trec CPU per tick, "
                "%.2fx of reading each thread's /proc state every tick (%s)."
                % (v(a), res[a][0] / res[b][0], v(b)))

    def v(key, unit=None):
        return fmt_value(res[key][0], unit or res[key][1]) if key in res else "n/a"
    conv = [t for t in ("trc2collapsed", "trc-stats", "trc2pstats", "trc2speedscope", "trc2chrome")
            if ("decode_cpu", t) in res]
    rates = ", ".join("%s %.1f M" % (t, res[("decode_cpu", t)][0] / 1e6) for t in conv) or "n/a"
    return [
        "Last measured %s (commit %s, %s CPUs, load average %s; `make bench`):" % (
            meta.get("date", "n/a"), meta.get("commit", "n/a"), meta.get("cpus", "n/a"),
            meta.get("load_start", "n/a")),
        "",
        trec_cost(),
        "- trec's CPU per sample (30-frame stack): p50 %s, p99 %s; a steady trace costs %s per sample."
        % (v(("trec", "sample_p50")), v(("trec", "sample_p99")), v(("trec", "bytes_steady"))),
        pool(),
        "- Samples converted per CPU second, on one core: %s (zlib inflating the same trace: %s)."
        % (rates, "%.1f M" % (res[("decode_cpu", "zlib")][0] / 1e6) if ("decode_cpu", "zlib") in res else "n/a"),
        "",
        "Every figure, measured side by side in one run, and how: [docs/BENCHMARKS.md](docs/BENCHMARKS.md).",
    ]


def splice(path, begin, end, body):
    text = open(path).read()
    i, j = text.find(begin), text.find(end)
    if i < 0 or j < i:
        sys.exit("report.py: %s: markers %r ... %r not found" % (path, begin, end))
    new = text[:i + len(begin)] + "\n" + body + text[j:]
    tmp = path + ".tmp.bench"
    with open(tmp, "w") as f:
        f.write(new)
    os.replace(tmp, path)


def main(argv):
    if len(argv) == 4 and argv[1] == "--splice":
        report = open(argv[3]).read()
        splice(argv[2], BEGIN_REPORT, END_REPORT, "```\n" + report + "```\n")
        return 0
    if len(argv) == 4 and argv[1] == "--readme":
        meta, res = load(argv[3])
        splice(argv[2], BEGIN_HEAD, END_HEAD, "\n".join(headline(meta, res)) + "\n")
        return 0
    if len(argv) in (2, 4) and not argv[1].startswith("-") and (len(argv) == 2 or argv[2] == "--prev"):
        meta, res = load(argv[1])
        prev_meta = prev = None
        if len(argv) == 4 and os.path.exists(argv[3]):
            prev_meta, prev = load(argv[3])
            if prev_meta.get("date") == meta.get("date") and prev_meta.get("commit") == meta.get("commit"):
                prev_meta = prev = None  # the same run: nothing to compare
        sys.stdout.write(render(meta, res, prev_meta, prev))
        return 0
    sys.stderr.write(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
