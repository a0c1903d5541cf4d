#!/usr/bin/env bash
# Every option a tool's --help lists is documented in its man page, and
# every tool has a man page: the option table, the help and the docs must
# not drift apart.  Also: --version works and names the version.
set -u
version=$(sed -n 's/^#define TRC_VERSION_STRING "\(.*\)"/\1/p' include/trc/trc.h)
fail=0
for exe in "$BIN"/*; do
  tool=$(basename "$exe")
  man="docs/man/$tool.1"
  [ -f "$man" ] || { echo "FAIL: $tool has no man page ($man)"; fail=1; continue; }
  "$exe" --version | grep -q "^$tool $version" || { echo "FAIL: $tool --version"; fail=1; }
  help=$("$exe" --help) || { echo "FAIL: $tool --help exits non-zero"; fail=1; continue; }
  # man pages escape dashes (\-\-name); compare without the escapes
  text=$(sed 's/\\-/-/g' "$man")
  for opt in $(printf '%s\n' "$help" | grep -oE '^ +(-[A-Za-z], )?--[a-z][a-z0-9-]*' | grep -oE -- '--[a-z][a-z0-9-]*' | sort -u); do
    case "$opt" in --help|--version) continue ;; esac
    printf '%s\n' "$text" | grep -q -- "$opt" || { echo "FAIL: $tool: $opt is in --help but not in $man"; fail=1; }
  done
done
[ $fail -eq 0 ] && echo ok
exit $fail
