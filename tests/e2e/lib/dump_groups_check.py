"""dump_groups_check.py WORKLOAD IDS TEXT JSON — checks the groups of
identical stacks in `trec --dump --subprocesses` of
fixtures/workloads/dump_ranks.py (IDS: the JSON it wrote: the parent's
pid and each rank's).  Want three groups, largest first (then by pid):
ranks 0-2 in allreduce, rank 3 in next_batch, the parent in join_ranks,
each at the line marked "# at: FUNCTION".  The text's summary lines are rebuilt here
from the JSON's pids (ranges of consecutive pids as "a–b") and must
match exactly.  Prints what is wrong and exits 1, else 0."""
import json
import os
import re
import sys


def marked_lines(path):
    at = {}
    with open(path, encoding="utf-8") as f:
        for i, line in enumerate(f, 1):
            m = re.search(r"# at: (\w+)", line)
            if m:
                at[m.group(1)] = i
    return at


def ours(frames, workload):
    """The innermost frame in the workload itself (the parent waits in
    subprocess's code, below join_ranks)."""
    for fr in reversed(frames):
        if os.path.realpath(fr["file"]) == os.path.realpath(workload):
            return fr
    return {"function": None, "line": 0}


def pid_list(pids):
    out, i = [], 0
    while i < len(pids):
        j = i
        while j + 1 < len(pids) and pids[j + 1] == pids[j] + 1:
            j += 1
        out.append(str(pids[i]) if i == j else "%d\u2013%d" % (pids[i], pids[j]))
        i = j + 1
    return ("pids " if len(pids) > 1 else "pid ") + ", ".join(out)


def main():
    workload, ids_path, text_path, json_path = sys.argv[1:5]
    at = marked_lines(workload)
    with open(ids_path) as f:
        ids = json.load(f)
    with open(json_path, encoding="utf-8") as f:
        doc = json.load(f)
    with open(text_path, encoding="utf-8") as f:
        text = f.read()
    ranks = ids["ranks"]
    # the odd ones out (one pid each) by pid
    want = [(sorted(ranks[:3]), "allreduce")] + sorted([([ranks[3]], "next_batch"),
                                                        ([ids["parent"]], "join_ranks")])
    errs = []
    groups = doc.get("groups", [])
    got = [(g["pids"], ours(g["frames"], workload)["function"]) for g in groups]
    if got != want:
        errs.append("json groups %r, want %r" % (got, want))
    for g in groups:
        mine = ours(g["frames"], workload)
        if mine["function"] in at and mine["line"] != at[mine["function"]]:
            errs.append("group %r: frame %r, want line %d" % (g["pids"], mine, at[mine["function"]]))
        leaf = g["frames"][-1]
        func = leaf["function"]
        # the summary line: pids, then the innermost frame (basename:line)
        line = "  %s: %s at %s:%d" % (pid_list(g["pids"]), func, os.path.basename(leaf["file"]),
                                      leaf["line"])
        if not any(l.startswith(line + " \u2190 ") or l == line for l in text.splitlines()):
            errs.append("text has no line starting %r" % line)
    if "\nIdentical stacks (innermost frame first):\n" not in text:
        errs.append("text has no section of identical stacks")
    for e in errs:
        print(e)
    return 1 if errs else 0


sys.exit(main())
