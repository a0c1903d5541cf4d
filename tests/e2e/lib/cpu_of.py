"""cpu_of.py — runs a command and writes what it and its waited-for
descendants used: {"cpu": user + system seconds, "wall": seconds} to OUT.

    cpu_of.py OUT COMMAND [ARGS...]

Run around `trec PROGRAM`, that is trec's CPU time and its program's
together; trec_check.py takes trec's own (TREC_SELF_TIMING's "all CPU")
away to get the program's, the reference for its on-CPU samples.  Exits
with the command's status."""
import json
import resource
import subprocess
import sys
import time


def main():
    out, cmd = sys.argv[1], sys.argv[2:]
    t0 = time.monotonic()
    rc = subprocess.call(cmd)
    wall = time.monotonic() - t0
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    with open(out, "w", encoding="utf-8") as f:
        json.dump({"cpu": r.ru_utime + r.ru_stime, "wall": wall}, f)
    sys.exit(rc if rc >= 0 else 128 - rc)


if __name__ == "__main__":
    main()
