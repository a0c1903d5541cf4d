# tests/gpu/check_scenario.py — the verdict on one scenario of the real
# check (tests/gpu/run_real_check.sh; scripts in tests/gpu/scenarios/).
#
# Usage: check_scenario.py SCRIPT EXIT_CODE TRACE TRC_DUMP
# SCRIPT's first line says what is expected:
#   # expect: exit=N needs=cuda|torch|none KEY>=N KEY=N ...
# Keys, counted over `trc-dump --events TRACE`:
#   kernels          gpu_kernel events
#   graph_kernels    gpu_kernel events with a CUDA graph id (format 1.3)
#   graph_launch_stack  a cudaGraphLaunch/cuGraphLaunch call with a stack
#   graph_captured_at   a kernel's graph id found as the graph or graph_exec
#                    of a call with a stack that captured or instantiated
#                    the graph (format 1.4, spec [R-API-3]): 1 or 0
#   launch_stacks    launch calls (api_call flags 0x2) with a Python stack
#   launch_threads   threads whose launch calls carry a Python stack
#   gpu_processes    processes with a gpu_kernel
#   samples          sample events
# The trace must also check clean (`trc-dump --check`).  Prints ONE line,
# "scenario NAME: PASS|FAIL (...)", and exits 0 on PASS, 1 on FAIL.
import os
import re
import subprocess
import sys


def expectations(script):
    with open(script) as f:
        first = f.readline()
    m = re.match(r"#\s*expect:\s*(.*)", first)
    if not m:
        raise SystemExit("check_scenario: %s: no '# expect:' first line" % script)
    out = []
    for item in m.group(1).split():
        k = re.match(r"([a-z_]+)(>=|=)(\S+)$", item)
        if not k:
            raise SystemExit("check_scenario: %s: bad expectation %r" % (script, item))
        out.append(k.groups())
    return out


def field(line, key):
    m = re.search(r" %s=(\"(?:[^\"\\]|\\.)*\"|\S+)" % key, line)
    return m.group(1) if m else None


def counts(dump, trace):
    c = {"kernels": 0, "graph_kernels": 0, "graph_launch_stack": 0, "launch_stacks": 0,
         "samples": 0}
    launch_threads, gpu_pids, takeover = set(), set(), 0
    kernel_graphs, captured_graphs = set(), set()
    p = subprocess.Popen([dump, "--events", trace], stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, universal_newlines=True)
    for line in p.stdout:
        name = line.split(" ", 1)[0]
        if name == "gpu_kernel":
            c["kernels"] += 1
            gpu_pids.add(field(line, "pid"))
            if (field(line, "graph") or "0") != "0":
                c["graph_kernels"] += 1
                kernel_graphs.add(field(line, "graph"))
        elif name == "api_call":
            stack = field(line, "stack")
            flags = int(field(line, "flags") or "0", 16)
            if stack and stack != "-":
                captured_graphs.update(v for v in (field(line, "graph"), field(line, "graph_exec"))
                                       if v and v != "0")
            if stack and stack != "-" and flags & 2:
                c["launch_stacks"] += 1
                launch_threads.add(field(line, "thread"))
                if field(line, "name") in ('"cudaGraphLaunch"', '"cuGraphLaunch"'):
                    c["graph_launch_stack"] = 1
        elif name == "sample":
            c["samples"] += 1
        elif name == "loss" and "taken over by another CUPTI client" in line:
            takeover += 1
    p.wait()
    c["launch_threads"] = len(launch_threads)
    c["graph_captured_at"] = 1 if kernel_graphs & captured_graphs else 0
    c["gpu_processes"] = len(gpu_pids)
    return c, takeover


def main():
    if len(sys.argv) != 5:
        raise SystemExit("usage: check_scenario.py SCRIPT EXIT_CODE TRACE TRC_DUMP")
    script, rc, trace, dump = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
    name = os.path.splitext(os.path.basename(script))[0]
    bad = []
    c, takeover = {}, 0
    for k, op, v in expectations(script):
        if k == "exit" and rc != int(v):
            bad.append("exit %d, want %s%s" % (rc, v, " (timed out)" if rc == 124 else ""))
    if not os.path.exists(trace):
        bad.append("no trace")
    else:
        chk = subprocess.run([dump, "--check", trace], stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, universal_newlines=True)
        if chk.returncode != 0:
            bad.append("trace not clean: " + chk.stdout.strip().splitlines()[-1][:120])
        c, takeover = counts(dump, trace)
        for k, op, v in expectations(script):
            if k in ("exit", "needs"):
                continue
            if k not in c:
                raise SystemExit("check_scenario: %s: unknown key %r" % (script, k))
            got, want = c[k], int(v)
            if (op == ">=" and got < want) or (op == "=" and got != want):
                bad.append("%s %d, want %s%s" % (k, got, op, v))
    shown = " ".join("%s=%d" % (k, c[k]) for k in ("kernels", "launch_stacks", "samples")
                     if k in c)
    if takeover:
        shown += " takeover_losses=%d" % takeover
    verdict = "FAIL: " + "; ".join(bad) if bad else "PASS"
    print("scenario %s: %s (%s)" % (name, verdict, shown or "no trace"))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
