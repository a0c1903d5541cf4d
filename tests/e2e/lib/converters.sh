# converters.sh — source it (from the repository root): the one list of
# trc's converters for every e2e script that runs them all, so a new
# converter is tested everywhere by adding it here.
#
#   TRC_CONVERTERS         every converter: reads a .trc, writes one view
#   TRC_FOLDED_CONVERTERS  the three that aggregate CPU samples into
#                          stacks and functions (collapsed, stats, pstats)
#   TRC_READERS            trc-dump and every converter: all that read a .trc
#   converters_built       exits 1 with "FAIL: BIN/TOOL not built" unless
#                          every one of TRC_READERS is in $BIN
#
# A converter is a command in tools/ other than trec, trc-dump and trc-top; when
# sourced, the list is checked against tools/ so that it cannot go stale
# (exit 1 naming the difference).

TRC_CONVERTERS=(trc2collapsed trc-stats trc2pstats trc2speedscope trc2chrome trc2nvvp trc-lines trc2flamegraph)
TRC_FOLDED_CONVERTERS=(trc2collapsed trc-stats trc2pstats)
TRC_READERS=(trc-dump "${TRC_CONVERTERS[@]}")

converters_built() {
  local t
  for t in "${TRC_READERS[@]}"; do
    [ -x "$BIN/$t" ] || { echo "FAIL: $BIN/$t not built"; exit 1; }
  done
}

converters_check_list() {
  local f t listed=" ${TRC_CONVERTERS[*]} " in_tools=" "
  for f in tools/*.c; do
    t=$(basename "$f" .c)
    case $t in trec|trc-dump|trc-top) continue ;; esac  # trc-top: a live view, not a converter
    in_tools+="$t "
    [[ $listed == *" $t "* ]] ||
      { echo "FAIL: tests/e2e/lib/converters.sh: $f is a converter the list lacks"; exit 1; }
  done
  for t in "${TRC_CONVERTERS[@]}"; do
    [[ $in_tools == *" $t "* ]] ||
      { echo "FAIL: tests/e2e/lib/converters.sh: $t is listed but tools/$t.c does not exist"; exit 1; }
  done
}
converters_check_list
