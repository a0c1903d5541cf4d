"""Checks the process names in converter outputs of a recorded run
(tests/e2e/trec_procnames*.sh), against what the program itself printed
about its processes ("main PID", "worker PID", "tracker PID").

usage: procnames_check.py PIDS COLLAPSED SPEEDSCOPE CHROME SCRIPT RANK WORKER
  PIDS        the program's stdout
  COLLAPSED   trc2collapsed --pids --idle output
  SPEEDSCOPE  trc2speedscope --idle output
  CHROME      trc2chrome output
  SCRIPT      the main process's expected name, e.g. procnames_pool.py
  RANK        the rank every process should show, or - for none
  WORKER      a regular expression for the workers' names, e.g.
              "multiprocessing worker" or "DataLoader worker [0-9]+"

Every process the program printed must be in the collapsed roots as
"NAME[ rank R] (pid P)", in speedscope as "NAME[ rank R] (pid P):
MainThread" and in Chrome's process_name metadata as "NAME[ rank R]";
a resource tracker is "multiprocessing.resource_tracker".  DataLoader
workers must be numbered apart.  Exit 0 or 1 with the reasons.
"""
import json
import re
import sys


def main():
    pids_f, coll_f, ss_f, chrome_f, script, rank, worker = sys.argv[1:8]
    suffix = "" if rank == "-" else f" rank {rank}"
    want = {}  # pid -> regular expression for the name without the pid
    for line in open(pids_f):
        kind, pid = line.split()
        pat = {"main": re.escape(script), "worker": worker,
               "tracker": re.escape("multiprocessing.resource_tracker")}[kind]
        want[int(pid)] = pat + re.escape(suffix)
    bad = []
    if len(want) < 2:
        bad.append(f"the program printed {len(want)} processes")

    roots = {}
    for line in open(coll_f):
        root = line.rsplit(" ", 1)[0].split(";", 1)[0]
        m = re.fullmatch(r"(.*) \(pid (\d+)\)", root)
        if not m:
            bad.append(f"collapsed root without a pid: {root!r}")
            continue
        roots.setdefault(int(m.group(2)), set()).add(m.group(1))
    for pid, pat in want.items():
        names = roots.get(pid, set())
        if len(names) != 1 or not re.fullmatch(pat, next(iter(names))):
            bad.append(f"collapsed: pid {pid} named {sorted(names)}, want /{pat}/")
    if rank == "-" and any("rank" in n for ns in roots.values() for n in ns):
        bad.append(f"collapsed: a rank without RANK in the environment: {roots}")
    dl = [n for pid in want for n in roots.get(pid, ()) if n.startswith("DataLoader worker")]
    if len(dl) != len(set(dl)):
        bad.append(f"DataLoader workers not numbered apart: {dl}")

    ss = json.load(open(ss_f))
    profiles = [p["name"] for p in ss["profiles"]]
    for pid, pat in want.items():
        if not any(re.fullmatch(pat + re.escape(f" (pid {pid}): MainThread"), n) for n in profiles):
            bad.append(f"speedscope: no profile /{pat} \\(pid {pid}\\): MainThread/ in {profiles}")

    chrome = json.load(open(chrome_f))
    events = chrome["traceEvents"] if isinstance(chrome, dict) else chrome
    pnames = {e["pid"]: e["args"]["name"] for e in events
              if e.get("ph") == "M" and e.get("name") == "process_name"}
    for pid, pat in want.items():
        if not re.fullmatch(pat, pnames.get(pid, "")):
            bad.append(f"chrome: process_name of {pid} is {pnames.get(pid)!r}, want /{pat}/")

    for b in bad:
        print("FAIL:", b)
    if bad:
        return 1
    print("names ok:", ", ".join(sorted(n for ns in roots.values() for n in ns)))
    return 0


sys.exit(main())
