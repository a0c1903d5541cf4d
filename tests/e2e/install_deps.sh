#!/usr/bin/env bash
# `make` installs Debian packages only when one it needs is missing and
# apt-get is there, and says so; with everything installed, or on a
# machine without dpkg-query/apt-get, it installs nothing and builds.
# Checked through the deps-build rule with a PATH of stand-ins: a fake
# dpkg-query that reports some packages missing, a fake apt-get that
# records what it was asked, and no sudo (the fake `id` says root).
set -u
# Run under `make test` or not, the inner make must not see the outer
# make's jobserver (it would warn, and the checks want silence), nor a
# SKIP_DEPS=1 given to the outer make (a command-line variable reaches
# recipes through the environment: the rule under test would do nothing).
unset MAKEFLAGS MFLAGS MAKELEVEL SKIP_DEPS
cd "${TRC_ROOT:-$(dirname "$0")/../..}"
make=$(command -v make) || { echo "skip: no make"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
bad() { echo "FAIL: $*"; fails=$((fails + 1)); }

stub=$tmp/stub
mkdir -p "$stub"
for c in bash sh env dirname grep cat sed realpath find pkg-config; do
  p=$(command -v "$c") || { echo "skip: no $c"; exit 77; }
  ln -s "$p" "$stub/$c"
done
printf '#!/bin/sh\necho 0\n' > "$stub/id"
# dpkg-query -W -f=... PKG: installed unless PKG is listed in $tmp/missing
cat > "$tmp/dpkg-query" <<EOF2
#!/bin/sh
for a; do p=\$a; done
if grep -qx "\$p" "$tmp/missing" 2>/dev/null; then echo "unknown ok not-installed"; exit 1; fi
printf 'install ok installed'
EOF2
cat > "$tmp/apt-get" <<EOF2
#!/bin/sh
echo "\$*" >> "$tmp/apt-calls"
EOF2
chmod +x "$stub/id" "$tmp/dpkg-query" "$tmp/apt-get"

deps() {  # deps LABEL: runs `make deps-build` with PATH=$stub
  rm -f "$tmp/apt-calls"
  PATH=$stub "$make" --no-print-directory deps-build > "$tmp/out" 2>&1
  rc=$?
  [ $rc -eq 0 ] || bad "$1: make deps-build exits $rc: $(cat "$tmp/out")"
}

# 1. Not Debian: no dpkg-query, no apt-get.  Silent, nothing installed.
deps "not Debian"
[ ! -s "$tmp/out" ] || bad "not Debian: want no output, got: $(cat "$tmp/out")"

# 2. Debian with everything installed: silent, apt-get never called.
cp "$tmp/dpkg-query" "$tmp/apt-get" "$stub/"
deps "all installed"
[ ! -s "$tmp/out" ] || bad "all installed: want no output, got: $(cat "$tmp/out")"
[ ! -e "$tmp/apt-calls" ] || bad "all installed: apt-get was called: $(cat "$tmp/apt-calls")"

# 3. One build package missing: it says so and installs exactly that one.
echo libcjson-dev > "$tmp/missing"
deps "one missing"
cat "$tmp/out"
grep -q '^install-deps: installing .*: libcjson-dev$' "$tmp/out" || bad "one missing: no line saying what is installed"
grep -q '^update' "$tmp/apt-calls" 2>/dev/null || bad "one missing: no apt-get update"
grep -q '^install .* libcjson-dev$' "$tmp/apt-calls" 2>/dev/null || bad "one missing: apt-get install not asked for libcjson-dev: $(cat "$tmp/apt-calls" 2>/dev/null)"

# 4. Debian's tools but no apt-get: nothing tried.
rm "$stub/apt-get"
deps "no apt-get"
[ ! -s "$tmp/out" ] || bad "no apt-get: want no output, got: $(cat "$tmp/out")"

[ $fails = 0 ] || exit 1
echo ok
