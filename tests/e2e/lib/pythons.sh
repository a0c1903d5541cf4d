# pythons.sh — source it: trec_pythons prints one line "PATH VERSION" per
# CPython 3.8+ interpreter found at run time: Debian's /usr/bin/python3
# first, then every pyenv version (trec_pyenv_root), oldest first.
# TREC_TEST_PYTHONS="path ..." replaces the search.  2.x and 3.0-3.7 are
# skipped (trec supports 3.8 and later).  Duplicates (same real file) are
# listed once.

# trec_pyenv_root prints where pyenv keeps its interpreters: $PYENV_ROOT,
# else what `pyenv root` says; nothing, and status 1, without pyenv.
trec_pyenv_root() {
  local r="${PYENV_ROOT:-}"
  [ -n "$r" ] || r=$(pyenv root 2>/dev/null) || r=""
  [ -n "$r" ] && [ -d "$r" ] || return 1
  echo "$r"
}

trec_pythons() {
  local cands=() p v real seen=" "
  if [ -n "${TREC_TEST_PYTHONS:-}" ]; then
    read -r -a cands <<<"$TREC_TEST_PYTHONS"
  else
    [ -x /usr/bin/python3 ] && cands+=(/usr/bin/python3)
    local root
    if root=$(trec_pyenv_root); then
      for p in "$root"/versions/*/bin/python3; do
        [ -x "$p" ] && cands+=("$p")
      done
    fi
  fi
  for p in "${cands[@]}"; do
    real=$(readlink -f "$p") || continue
    case "$seen" in *" $real "*) continue ;; esac
    seen="$seen$real "
    v=$("$p" -c 'import sys; print("%d.%d.%d" % sys.version_info[:3])' 2>/dev/null) || continue
    case "$v" in 2.* | 3.[0-7].*) continue ;; esac
    echo "$p $v"
  done | sort -t' ' -k2,2V -s | awk '$1 == "/usr/bin/python3" { print; next } { rest[n++] = $0 } END { for (i = 0; i < n; i++) print rest[i] }'
}
