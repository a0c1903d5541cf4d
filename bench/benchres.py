"""bench/benchres.py — the Python side of bench/lib.bash: result(GROUP,
NAME, VALUE, UNIT, NOTE) appends one tab-separated line to the file named
by $BENCH_RESULTS (bench/run-all sets it; unset: a no-op).  Imported by
the Python parts of the bench/*.sh scripts."""
import math
import os


def result(group, name, value, unit, note=""):
    path = os.environ.get("BENCH_RESULTS")
    if not path or value is None:
        return
    value = float(value)
    if math.isnan(value) or math.isinf(value):
        return
    with open(path, "a") as f:
        f.write("%s\t%s\t%.6g\t%s\t%s\n" % (group, name, value, unit,
                                          str(note).replace("\t", " ").replace("\n", " ")))
