#!/bin/sh
# Positions per hour of the corpus datagen (`actuary datagen --corpus`) against the text
# datagen of an older build (`--out`), alternating, same machine, same sitting (issue 32).
#
# Usage (repository root, after cargo build --release -p actuary):
#   sh scripts/datagen-throughput.sh OLD_ACTUARY SECONDS PAIRS CORPUS_DIR [THREADS]
# OLD_ACTUARY: a build whose `datagen --out` is the text datagen (any build has it).
# Each run plays for SECONDS on THREADS threads (default 2) and is stopped; the text run
# counts the position lines of its whole games, the corpus run closes its chunk and counts
# the chunk's positions (all, and those the loader's default filter keeps). One line per run
# on stdout: `old|new SECONDS positions [kept]`. The corpus runs add their games to
# CORPUS_DIR (give the real corpus to keep them).
set -eu
old=$1; secs=$2; pairs=$3; corpus=$4; threads=${5:-2}
new=target/release/actuary
tmp=$(mktemp -d)
i=0
while [ "$i" -lt "$pairs" ]; do
  i=$((i + 1))
  rm -f "$tmp/old.txt"
  "$old" datagen --out "$tmp/old.txt" --games 1000000 --threads "$threads" --seed "$i" 2>/dev/null &
  pid=$!; sleep "$secs"; kill "$pid"; wait "$pid" 2>/dev/null || true
  # Whole games only: position lines before the last `# game` line.
  n=$(awk '/^# game /{done+=pending; pending=0; next} / \| /{pending++} END{print done+0}' "$tmp/old.txt")
  echo "old $secs $n"
  before=$("$new" corpus "$corpus" --json 2>/dev/null | sed -n 's/.*"positions":\([0-9]*\).*"kept":\([0-9]*\).*/\1 \2/p')
  before=${before:-"0 0"}
  "$new" datagen --corpus "$corpus" --threads "$threads" 2>/dev/null &
  pid=$!; sleep "$secs"; kill "$pid"; wait "$pid" 2>/dev/null || true
  "$new" datagen --corpus "$corpus" --close 2>/dev/null
  after=$("$new" corpus "$corpus" --json 2>/dev/null | sed -n 's/.*"positions":\([0-9]*\).*"kept":\([0-9]*\).*/\1 \2/p')
  set -- $before $after
  echo "new $secs $(($3 - $1)) $(($4 - $2))"
done
rm -rf "$tmp"
