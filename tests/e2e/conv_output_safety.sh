#!/usr/bin/env bash
# Output safety of every converter (rules in tools/common/output.c
# and docs/converters.md "Output files"):
#  - -o writes a hidden temp file in the destination's directory and
#    renames it: a new file gets 0666 & ~umask, a replaced one keeps its
#    mode, nothing else is left in the directory;
#  - a symbolic link at the destination is replaced, never written
#    through (its target stays as it was), a dangling one too;
#  - a directory is refused with "DIR: is a directory" before any input
#    is read (the input here is a FIFO nobody writes: reading would hang);
#  - /dev/null, a link to it, our own stdout (/proc/self/fd/1 through a
#    link, /dev/stdout, /dev/fd/1; to a file and to a pipe) and a FIFO are
#    written in place, and stay what they were;
#  - a full disk (a 64 KiB tmpfs filled up) and `ulimit -f` (at the first
#    write, and in the middle of the output) give exit 2 and ONE line
#    "TOOL: error: PATH: write failed: No space left on device" (or "File
#    too large"); the old content of the destination stays, no temp file;
#  - standard output on /dev/full: exit 2, "<stdout>: write failed";
#  - SIGTERM/SIGHUP while converting: the temp file is removed.
# The tmpfs part needs mount(2) (root): without it the rest still runs
# and the script ends with 77 saying so.
set -u
cd "${TRC_ROOT:-$(dirname "$0")/../..}"
BUILD=${BUILD:-build} BIN=${BIN:-bin}
. tests/e2e/lib/converters.sh
converters_built
tmp=$(mktemp -d)
mnt=$tmp/mnt
cleanup() {
  mountpoint -q "$mnt" 2> /dev/null && umount "$mnt"
  rm -rf "$tmp"
}
trap cleanup EXIT
fails=0
bad() { echo "FAIL: $*"; fails=$((fails + 1)); }
lines() { wc -l < "$1" | tr -d ' '; }
S=$PWD/fixtures/valid/samples.trc G=$PWD/fixtures/gpu/fake_train.trc

# The cases: "TOOL ARGS" over an input; every one writes a non-empty
# output.  --svg takes the output name itself ("@" marks where).
cases=(
  "trc2collapsed|$S" "trc-stats|$S" "trc2pstats|$S" "trc2speedscope|$S" "trc2chrome|$S" "trc2chrome|$G"
  "trc2nvvp|$G" "trc2nvvp --csv|$G" "trc2nvvp --print-gpu-trace|$G" "trc2nvvp --svg @|$G"
  "trc-lines|$S" "trc-lines --json|$G" "trc2flamegraph|$S"
)
# A converter added to the list without a case here would go untested.
for t in "${TRC_CONVERTERS[@]}"; do
  [[ " ${cases[*]}" == *" $t|"* || " ${cases[*]}" == *" $t "* ]] || bad "$t has no case in this script"
done
# conv CASE DEST [extra...]: runs the case writing to DEST; stderr to
# $ERRF or $tmp/err, exit status in $rc.
conv() {
  local spec=$1 dest=$2 cmd input
  shift 2
  cmd=${spec%%|*} input=${spec#*|}
  local argv=()
  read -r -a argv <<< "$cmd"
  if [[ " ${argv[*]} " == *" @ "* ]]; then argv=("${argv[@]/#@/$dest}")
  else argv+=(-o "$dest"); fi
  "$BIN/${argv[0]}" "${argv[@]:1}" "$@" "$input" 2> "${ERRF:-$tmp/err}"
  rc=$?
}
# the expected output of each case, from a plain run
declare -A ref
i=0
for c in "${cases[@]}"; do
  conv "$c" "$tmp/ref.$i"
  [ $rc -le 1 ] && [ -s "$tmp/ref.$i" ] || bad "$c: reference run exit $rc: $(head -c 200 "$tmp/err")"
  ref[$c]=$tmp/ref.$i
  i=$((i + 1))
done
# only NAME in DIR, nothing hidden or left over
only() {
  local dir=$1; shift
  local got want
  got=$(cd "$dir" && ls -A | sort | tr '\n' ' ')
  want=$( (($#)) && printf '%s\n' "$@" | sort | tr '\n' ' ')
  [ "$got" = "$want" ] || bad "$what: $dir holds '$got', want '$want'"
}
one_error() {  # one_error TOOL REGEX
  [ "$(lines "$tmp/err")" -eq 1 ] && grep -qE "^$1: error: $2\$" "$tmp/err" ||
    bad "$what: want one line '$1: error: $2', got: $(head -c 300 "$tmp/err")"
}

for c in "${cases[@]}"; do
  t=${c%%[ |]*}
  what=$c
  d=$tmp/d; rm -rf "$d"; mkdir "$d"

  # new file: umask applies, nothing else left
  (umask 027; conv "$c" "$d/out"; exit $rc); rc=$?
  [ $rc -le 1 ] && cmp -s "$d/out" "${ref[$c]}" || bad "$c: new file: exit $rc or wrong content"
  [ "$(stat -c %a "$d/out")" = 640 ] || bad "$c: new file mode $(stat -c %a "$d/out"), want 640 (umask 027)"
  only "$d" out
  # replacing a file keeps its mode
  chmod 604 "$d/out"; echo old > "$d/out"
  conv "$c" "$d/out"
  cmp -s "$d/out" "${ref[$c]}" && [ "$(stat -c %a "$d/out")" = 604 ] || bad "$c: replaced file: content or mode $(stat -c %a "$d/out") (want 604)"
  only "$d" out

  # a planted symlink is replaced, its target untouched; a dangling one too
  rm -f "$d/out"; echo precious > "$d/victim"; ln -s victim "$d/out"
  conv "$c" "$d/out"
  [ ! -L "$d/out" ] && cmp -s "$d/out" "${ref[$c]}" || bad "$c: symlink destination not replaced by the output"
  [ "$(cat "$d/victim")" = precious ] || bad "$c: wrote through a symlink into its target"
  rm -f "$d/out"; ln -s "$d/nothere" "$d/out"
  conv "$c" "$d/out"
  [ ! -L "$d/out" ] && [ ! -e "$d/nothere" ] || bad "$c: dangling symlink followed"
  only "$d" out victim

  # a directory is refused before the input is read: the input is a FIFO
  # without a writer, so opening it would block until timeout kills us
  rm -rf "$d"; mkdir -p "$d/dir"; mkfifo "$d/in.fifo"
  spec="${c%%|*}|$d/in.fifo"
  timeout 20 bash -c "$(declare -f conv); BIN='$BIN' tmp='$tmp'; conv '$spec' '$d/dir'; exit \$rc"; rc=$?
  [ $rc -eq 2 ] || bad "$c: directory destination: exit $rc, want 2 (124 = it read the input first)"
  one_error "$t" "$d/dir: is a directory"
  only "$d/dir"

  # devices, our own stdout, FIFOs: written in place
  conv "$c" /dev/null
  [ $rc -le 1 ] && [ -c /dev/null ] || bad "$c: -o /dev/null: exit $rc"
  ln -s /dev/null "$d/null"
  conv "$c" "$d/null"
  [ $rc -le 1 ] && [ -L "$d/null" ] || bad "$c: symlink to /dev/null: exit $rc, or the link was replaced"
  # our own stdout, first through a link of ours to /proc/self/fd/1: a
  # tool that renamed over it would only replace that link; /dev/stdout
  # itself only once that passed (a broken tool run as root would replace
  # the system's /dev/stdout with a file)
  ln -s /proc/self/fd/1 "$d/fd1"
  conv "$c" "$d/fd1" > "$d/stdout.txt"
  if cmp -s "$d/stdout.txt" "${ref[$c]}" && [ -L "$d/fd1" ]; then
    conv "$c" /dev/stdout > "$d/stdout.txt"
    cmp -s "$d/stdout.txt" "${ref[$c]}" || bad "$c: -o /dev/stdout into a file"
    conv "$c" /dev/stdout | cat > "$d/pipe.txt"
    cmp -s "$d/pipe.txt" "${ref[$c]}" || bad "$c: -o /dev/stdout into a pipe"
    conv "$c" /dev/fd/1 | cat > "$d/pipe.txt"
    cmp -s "$d/pipe.txt" "${ref[$c]}" || bad "$c: -o /dev/fd/1 into a pipe"
  else
    bad "$c: -o LINK-TO-/proc/self/fd/1 into a file (link kept: $([ -L "$d/fd1" ] && echo yes || echo no))"
    rm -f "$d/fd1"; ln -s /proc/self/fd/1 "$d/fd1"; : > "$d/pipe.txt"
  fi
  mkfifo "$d/out.fifo"
  cat "$d/out.fifo" > "$d/fifo.txt" &
  conv "$c" "$d/out.fifo"
  wait $!
  cmp -s "$d/fifo.txt" "${ref[$c]}" && [ -p "$d/out.fifo" ] || bad "$c: -o FIFO"
  only "$d" dir in.fifo null fd1 stdout.txt pipe.txt out.fifo fifo.txt

  # file size limit: at the first write, and (larger outputs) midway
  rm -rf "$d"; mkdir "$d"
  for lim in 0 2; do
    [ $lim -gt 0 ] && [ "$(stat -c %s "${ref[$c]}")" -le 4096 ] && continue
    echo "old content" > "$d/out"
    # stderr through a pipe: under the limit no file can be written
    (ulimit -f $lim; ERRF=/dev/stderr conv "$c" "$d/out"; exit $rc) 2>&1 > /dev/null | cat > "$tmp/err"
    rc=${PIPESTATUS[0]}
    what="$c (ulimit -f $lim)"
    [ $rc -eq 2 ] || bad "$what: exit $rc, want 2"
    one_error "$t" "$d/out: write failed: File too large"
    [ "$(cat "$d/out")" = "old content" ] || bad "$what: old content of the destination lost"
    only "$d" out
  done
  what=$c

  # standard output on a full device
  spec=${c%%|*}
  if [[ $spec != *"--svg"* ]]; then
    read -r -a argv <<< "$spec"
    "$BIN/${argv[0]}" "${argv[@]:1}" "${c#*|}" > /dev/full 2> "$tmp/err"; rc=$?
    [ $rc -eq 2 ] || bad "$c > /dev/full: exit $rc, want 2"
    one_error "$t" "<stdout>: write failed: No space left on device"
  fi
done

# a signal while converting removes the temp file: the input is a FIFO
# kept open, so the tool waits for more after the first chunks
for sig in TERM HUP; do
  d=$tmp/sig; rm -rf "$d"; mkdir "$d"; mkfifo "$d/in"
  "$BIN/trc2chrome" -o "$d/out" "$d/in" 2> "$tmp/err" &
  pid=$!
  exec 3> "$d/in"
  cat "$S" >&3
  for _ in $(seq 50); do [ -n "$(cd "$d" && ls -A | grep '^\.out\.')" ] && break; sleep 0.1; done
  [ -n "$(cd "$d" && ls -A | grep '^\.out\.')" ] || bad "SIG$sig: no temp file while converting (ls: $(ls -A "$d"))"
  kill -$sig $pid
  wait $pid; rc=$?
  exec 3>&-
  [ $rc -gt 128 ] || bad "SIG$sig: tool exit $rc"
  what="SIG$sig"; only "$d" in
done

# a full disk: a small tmpfs, filled up after the old destination was written
if mkdir -p "$mnt" && mount -t tmpfs -o size=64k,mode=0755 tmpfs "$mnt" 2> "$tmp/mount.err"; then
  for c in "${cases[@]}"; do
    t=${c%%[ |]*}
    what="$c (full disk)"
    rm -rf "${mnt:?}"/* "$mnt"/.[!.]* 2> /dev/null
    echo "old content" > "$mnt/out"
    dd if=/dev/zero of="$mnt/fill" bs=4k 2> /dev/null
    conv "$c" "$mnt/out"
    [ $rc -eq 2 ] || bad "$what: exit $rc, want 2"
    one_error "$t" "$mnt/out: write failed: No space left on device"
    [ "$(cat "$mnt/out")" = "old content" ] || bad "$what: old content lost"
    only "$mnt" out fill
  done
  umount "$mnt"
  tmpfs=1
else
  tmpfs=""
fi

[ $fails -eq 0 ] || { echo "$fails failure(s)"; exit 1; }
if [ -z "$tmpfs" ]; then
  echo "all but the full-disk part passed; cannot mount a tmpfs: $(head -n 1 "$tmp/mount.err")"
  exit 77
fi
echo "conv_output_safety: ok"
