#!/usr/bin/env bash
# tests/e2e/docs_selfcontained.sh — the repository stands on its own.
#
# Fails (exit 1, one "file:line: what" per problem) when a file tracked by
# git
#   - points at the planning documents that live outside the repository
#     (their file names, or a path under ../shared), or
#   - cites docs/design/NAME.md (or, inside docs/design/, NAME.md) with a
#     section number "§N" or a quoted section title that the document
#     does not have, or names a design document that does not exist.
# Sections are the numbered headings of a document ("## 4. The recorder").
# This script, which must name what it looks for, is not checked.
#
# The checker first runs on a small made-up repository whose problems are
# known, so a checker that finds nothing (or too much) fails here too.
# Exit 0 pass, 77 skip (no git or python3, or not a git checkout).
set -u
cd "${TRC_ROOT:-$(dirname "$0")/../..}"
command -v git >/dev/null 2>&1 || { echo "skip: git is not installed"; exit 77; }
command -v python3 >/dev/null 2>&1 || { echo "skip: python3 is not installed"; exit 77; }
git rev-parse --is-inside-work-tree >/dev/null 2>&1 || { echo "skip: not a git checkout"; exit 77; }

# check DIR: prints the problems of the git checkout at DIR; exit 1 if any.
check() {
  python3 - "$1" <<'PY'
import os, re, subprocess, sys

os.chdir(sys.argv[1])
names = subprocess.run(["git", "ls-files", "-z"], check=True,
                       capture_output=True).stdout.split(b"\0")
files = [n.decode("utf-8", "replace") for n in names if n]

SELF = "tests/e2e/docs_selfcontained.sh"
OUTSIDE = re.compile(r'FORMATS\.md|ARCHITECTURE\.md|\bARCHITECTURE "|\bFORMATS §'
                     r'|(?:\.\./)+shared/|/work/shared\b')
TAIL = r'((?:[ \t]*(?:,|and|or)?[ \t]*§[ \t]*\d+(?:\.\d+)*(?:[–-]\d+)?)*)(?:[ \t]*,?[ \t]*"([^"\n]+)")?'
FULL = re.compile(r'docs/design/([A-Za-z0-9_-]+\.md)' + TAIL)
BARE = re.compile(r'(?<![\w./-])([A-Za-z0-9_-]+\.md)' + TAIL)
SECTION = re.compile(r'#+[ \t]+(\d+(?:\.\d+)*)\.?[ \t]')
NUMBER = re.compile(r'(\d+(?:\.\d+)*)(?:[–-](\d+))?')
LEAD = re.compile(r'^[ \t*#/;-]*')

docs = {}
def design_doc(name):
    """(section numbers, heading texts) of docs/design/name, or None."""
    if name not in docs:
        path = os.path.join("docs/design", name)
        if not os.path.isfile(path):
            docs[name] = None
        else:
            nums, heads = set(), []
            with open(path, encoding="utf-8", errors="replace") as f:
                for line in f:
                    if line.startswith("#"):
                        heads.append(line.lstrip("#").strip())
                        m = SECTION.match(line)
                        if m:
                            nums.add(m.group(1))
            docs[name] = (nums, heads)
    return docs[name]

problems = []
def cites(path, lines, i, m, bare):
    name, tail, title = m.group(1), m.group(2), m.group(3)
    if not tail and not title and m.end() == len(lines[i].rstrip("\n")) and i + 1 < len(lines):
        # "docs/design/x.md" at the end of a line, "§N" on the next
        nxt = lines[i + 1]
        mm = re.match(TAIL, nxt[LEAD.match(nxt).end():])
        tail, title = mm.group(1), mm.group(2)
    if bare and not tail and not title:
        return
    doc = design_doc(name)
    where = "%s:%d" % (path, i + 1)
    if doc is None:
        problems.append("%s: docs/design/%s does not exist" % (where, name))
        return
    nums, heads = doc
    for n in NUMBER.finditer(tail or ""):
        wanted = [n.group(1)]
        if n.group(2):
            wanted.append(n.group(2))
        for w in wanted:
            if w not in nums:
                problems.append("%s: docs/design/%s has no section §%s" % (where, name, w))
    if title and not any(title in h for h in heads):
        problems.append('%s: docs/design/%s has no section "%s"' % (where, name, title))

for path in files:
    if path == SELF or not os.path.isfile(path):
        continue
    with open(path, "rb") as f:
        data = f.read()
    if b"\0" in data:
        continue
    lines = data.decode("utf-8", "replace").splitlines()
    in_design = path.startswith("docs/design/")
    for i, line in enumerate(lines):
        for m in OUTSIDE.finditer(line):
            problems.append("%s:%d: refers outside the repository: %s" % (path, i + 1, m.group(0)))
        for m in FULL.finditer(line):
            cites(path, lines, i, m, False)
        if in_design:
            for m in BARE.finditer(line):
                cites(path, lines, i, m, True)

for p in problems:
    print(p)
sys.exit(1 if problems else 0)
PY
}

tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fail=0

# 1. The checker on a made-up repository with known problems.
mkdir -p "$tmp/r/docs/design" "$tmp/r/src"
printf '# A\n\n## 1. First\n\n## 2. The second part\n\nSee b.md §1 and a.md §2.\n' \
  > "$tmp/r/docs/design/a.md"
cat > "$tmp/r/src/x.c" <<'EOF'
/* docs/design/a.md §1, §2; docs/design/a.md "The second part" */
/* docs/design/a.md §3 */
/* see FORMATS.md §7 */
/* see ARCHITECTURE "Style" and ../shared/notes.md */
/* docs/design/c.md */
/* split: docs/design/a.md
 * §4 */
EOF
git -C "$tmp/r" init -q && git -C "$tmp/r" add -A || { echo "FAIL: cannot make the test repository"; exit 1; }
cat > "$tmp/want" <<'EOF'
docs/design/a.md:7: docs/design/b.md does not exist
src/x.c:2: docs/design/a.md has no section §3
src/x.c:3: refers outside the repository: FORMATS.md
src/x.c:4: refers outside the repository: ../shared/
src/x.c:4: refers outside the repository: ARCHITECTURE "
src/x.c:5: docs/design/c.md does not exist
src/x.c:6: docs/design/a.md has no section §4
EOF
check "$tmp/r" > "$tmp/got"; rc=$?
LC_ALL=C sort "$tmp/got" > "$tmp/got.sorted"
if [ $rc -ne 1 ] || ! diff -u "$tmp/want" "$tmp/got.sorted"; then
  echo "FAIL: the checker's findings on the made-up repository are not the expected ones (exit $rc)"
  fail=1
fi

# 2. This repository.
if ! check . > "$tmp/repo"; then
  echo "FAIL: references that do not resolve inside the repository:"
  cat "$tmp/repo"
  fail=1
fi
[ $fail -eq 0 ] && echo ok
exit $fail
