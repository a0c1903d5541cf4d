"""Checks for tests/e2e/trec_children_default.sh and trec_children_torch.sh.

  children_check.py share STATS_TXT FUNCTION SECONDS
      trc-stats' table: FUNCTION is listed, its cumtime is at least 70 %
      of the SECONDS of CPU it burnt, and it holds at least half of the
      sampled time (the rest is interpreter start-up and the shell).
  children_check.py pool STACKS_TXT TRUTH FUNCTION
      trc_stacks' text: every pid in TRUTH (lines "pid cpu_seconds" the
      workers wrote, measured in themselves) has on-CPU samples of
      FUNCTION, and their on-CPU samples of it add up to at least 70 %
      of the CPU time TRUTH says was spent in it.
  children_check.py workers STACKS_TXT FUNCTION N
      at least N processes have on-CPU samples with FUNCTION on the
      stack (a function only the workers run).
  children_check.py root-only STACKS_TXT FUNCTION
      one process recorded, no sample holds FUNCTION.
  children_check.py exits DUMP_TXT STACKS_TXT CMD_PART=STATUS...
      trc-dump's listing: the process whose command line holds CMD_PART
      has a PROCESS_EXIT with that exit code.

Prints one line per failed expectation and exits 1 if any failed.
"""
import re
import sys


def read_stacks(path):
    period_ns, processes, samples = 1000000, [], []
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            p = line.rstrip("\n").split("\t")
            if p[0] == "segment":
                period_ns = int(p[2])
            elif p[0] == "process":
                processes.append(dict(pid=int(p[1]), ppid=int(p[2]), cmd=p[5]))
            elif p[0] == "sample":
                frames = [fr.split("|")[0] for fr in p[5].split(";")] if p[5] else []
                samples.append(dict(pid=int(p[1]), flags=int(p[3]), count=int(p[4]),
                                    frames=frames))
    return period_ns, processes, samples


def on_cpu_with(samples, function):
    """On-CPU samples per pid whose stack holds function (bare or qualified)."""
    per_pid = {}
    for s in samples:
        if not s["flags"] & 1:
            continue
        if any(fr == function or fr.endswith("." + function) for fr in s["frames"]):
            per_pid[s["pid"]] = per_pid.get(s["pid"], 0) + s["count"]
    return per_pid


def check_share(errors, stats, function, seconds):
    text = open(stats, encoding="utf-8", errors="replace").read()
    m = re.search(r"^samples:\s+\d+ .*?, ([0-9.]+) s sampled", text, re.M)
    row = [l for l in text.splitlines() if l.rstrip().endswith("(%s)" % function)]
    if not m or not row:
        errors.append("%s: no sampled time or no row for %s" % (stats, function))
        return
    sampled, cum = float(m.group(1)), float(row[0].split()[3])
    print("%s: cumtime %.3f s of %.3f s sampled (burnt %.3f s)" % (function, cum, sampled, seconds))
    if cum < 0.7 * seconds:
        errors.append("%s: cumtime %.3f s, under 70 %% of the %.3f s it burnt" % (function, cum, seconds))
    if cum < 0.5 * sampled:
        errors.append("%s: %.3f s of %.3f s sampled, under half" % (function, cum, sampled))


def check_pool(errors, stacks, truth, function):
    period_ns, _, samples = read_stacks(stacks)
    spent = {}
    with open(truth) as f:
        for line in f:
            pid, secs = line.split()
            spent[int(pid)] = spent.get(int(pid), 0.0) + float(secs)
    per_pid = on_cpu_with(samples, function)
    recorded = sum(per_pid.get(pid, 0) for pid in spent) * period_ns / 1e9
    truth_total = sum(spent.values())
    print("%s: recorded %.3f s on-CPU in workers %s, workers measured %.3f s"
          % (function, recorded, sorted(spent), truth_total))
    for pid in spent:
        if not per_pid.get(pid):
            errors.append("worker %d: no on-CPU samples of %s" % (pid, function))
    if recorded < 0.7 * truth_total:
        errors.append("%s: recorded %.3f s, under 70 %% of the %.3f s measured in the workers"
                      % (function, recorded, truth_total))


def check_workers(errors, stacks, function, n):
    _, _, samples = read_stacks(stacks)
    workers = on_cpu_with(samples, function)
    print("%s: on-CPU samples per process %r" % (function, workers))
    if len(workers) < n:
        errors.append("%d processes have samples of %s, want %d" % (len(workers), function, n))


def check_root_only(errors, stacks, function):
    _, processes, samples = read_stacks(stacks)
    if len(processes) != 1:
        errors.append("%d processes recorded, want only the root" % len(processes))
    if on_cpu_with(samples, function):
        errors.append("samples of %s recorded" % function)


def check_exits(errors, dump, stacks, wants):
    _, processes, _ = read_stacks(stacks)
    exits = {}
    with open(dump, encoding="utf-8", errors="replace") as f:
        for line in f:
            m = re.search(r"PROCESS_EXIT .*\bpid=(\d+) .*\bexit_code=(-?\d+) signal=(\d+)", line)
            if m:
                exits[int(m.group(1))] = (int(m.group(2)), int(m.group(3)))
    for want in wants:
        part, status = want.rsplit("=", 1)
        pids = [p["pid"] for p in processes if part in p["cmd"]]
        if len(pids) != 1:
            errors.append("%d processes recorded with '%s' in their command line" % (len(pids), part))
            continue
        got = exits.get(pids[0])
        print("'%s' (pid %d): exit %r" % (part, pids[0], got))
        if got != (int(status), 0):
            errors.append("'%s' (pid %d): PROCESS_EXIT %r, want exit code %s"
                          % (part, pids[0], got, status))


def main():
    errors, mode, args = [], sys.argv[1], sys.argv[2:]
    if mode == "share":
        check_share(errors, args[0], args[1], float(args[2]))
    elif mode == "pool":
        check_pool(errors, args[0], args[1], args[2])
    elif mode == "workers":
        check_workers(errors, args[0], args[1], int(args[2]))
    elif mode == "root-only":
        check_root_only(errors, args[0], args[1])
    elif mode == "exits":
        check_exits(errors, args[0], args[1], args[2:])
    else:
        sys.exit("unknown mode %r" % mode)
    for e in errors:
        print("FAIL: " + e)
    sys.exit(1 if errors else 0)


if __name__ == "__main__":
    main()
