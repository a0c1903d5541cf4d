"""dump_locals_check.py WORKLOAD WANT TEXT JSON — checks `trec --dump
--locals` of fixtures/workloads/dump_locals.py: WANT is the JSON the
workload wrote, for the frames of inner, middle (a closure: its free
variables) and outer (its cell variables) each local's text as
the target's own repr makes it ("re:..." a regular expression).  Both in
the text (the "    name = value" lines under the frame's File line) and
in the JSON document (each frame's "locals"), every wanted local of
those frames is shown with that text, inner is the innermost frame, at
the line marked "# at: inner".  Prints what is wrong and exits 1,
else 0."""
import json
import re
import sys


def marked_line(path, name):
    with open(path, encoding="utf-8") as f:
        for i, line in enumerate(f, 1):
            if re.search(r"# at: %s\b" % name, line):
                return i
    return None


def parse_text(path):
    """[(function, line, {name: value})] of the main thread, innermost last."""
    frames = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            m = re.match(r'  File "(.*)", line (\d+), in (.*)$', line)
            if m:
                frames.append((m.group(3), int(m.group(2)), {}))
                continue
            m = re.match(r"    (\w+) = (.*)$", line)
            if m and frames:
                # a name shown twice (an argument that is also a cell) is wrong
                seen = frames[-1][2]
                seen[m.group(1)] = "<shown twice>" if m.group(1) in seen else m.group(2)
    return frames


def parse_json(path):
    with open(path, encoding="utf-8") as f:
        doc = json.load(f)
    t = doc["processes"][0]["threads"][0]
    if t.get("locals_missing"):
        return t["locals_missing"]
    return [(fr["function"], fr["line"], {l["name"]: l["value"] for l in (fr["locals"] or [])})
            for fr in t["frames"]]


def matches(want, got):
    if got is None:
        return False
    if want.startswith("re:"):
        return re.match(want[3:], got) is not None
    return want == got


def check(kind, frames, want, line, errs):
    if isinstance(frames, str):
        errs.append("%s: no locals: %s" % (kind, frames))
        return
    by_func = {f[0].rsplit(".", 1)[-1]: f for f in frames}
    if not frames or frames[-1][0].rsplit(".", 1)[-1] != "inner" or frames[-1][1] != line:
        errs.append("%s: innermost frame is %r, want inner at line %d"
                    % (kind, frames[-1][:2] if frames else None, line))
    for func in want:
        if func not in by_func:
            errs.append("%s: no frame of %s" % (kind, func))
            continue
        got = by_func[func][2]
        for name, text in want[func].items():
            if not matches(text, got.get(name)):
                errs.append("%s: %s: %s = %r, want %r" % (kind, func, name, got.get(name), text))


def main():
    workload, want_path, text_path, json_path = sys.argv[1:5]
    with open(want_path, encoding="utf-8") as f:
        want = json.load(f)
    line = marked_line(workload, "inner")
    errs = []
    check("text", parse_text(text_path), want, line, errs)
    check("json", parse_json(json_path), want, line, errs)
    for e in errs:
        print(e)
    return 1 if errs else 0


sys.exit(main())
