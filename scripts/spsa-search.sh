#!/bin/sh
# Issue 33 item 3: SPSA over actuary's search constants, a budget spread over sittings and
# resumed from what is committed (docs/tune/spsa/: the input, the state, the trajectory, its
# figure, the PGN of every game that ended in a fault; the state counts faults by kind).
# Each call plays for at most MINUTES (default 60) and stops at a batch boundary; commit
# docs/tune/spsa/ afterwards. The same call goes on where the last one stopped.
#
# Usage (from the repository root, after cargo build --release -p actuary -p arbiter):
#   sh scripts/spsa-search.sh [MINUTES]
#
# The run: 10,000 game pairs (20,000 games) at 1+0.01, both cores, OpenBench's schedule, the
# 16 constants whose switches are on by default (the ProbCut and history-pruning margins are
# left out while those switches are off). Paths are relative so a fresh clone resumes it. The
# engine is whatever target/release/actuary is built from: a tune that spans commits tunes the
# search as it is at each point, which is what OpenBench does too. The tuned values become the
# defaults only after an SPRT(0, 10) at 2+0.02 against the untuned ones.
set -eu
MINUTES=${1:-60}
DIR=docs/tune/spsa
for f in target/release/actuary target/release/arbiter data/chess/books/2moves_v1.epd; do
  [ -e "$f" ] || { echo "spsa-search: $f is missing (run from the repository root after building)" >&2; exit 2; }
done
mkdir -p "$DIR"
if [ ! -s "$DIR/params.txt" ]; then
  target/release/actuary spsa-input > "$DIR/params.txt.tmp"
  mv "$DIR/params.txt.tmp" "$DIR/params.txt"
fi
# stdout: the values reached, as input lines (integers rounded as the engine is sent them);
# kept in values.txt for the SPRT that decides whether they become the defaults
# (sh scripts/pruning-experiments.sh OUT 2 spsa).
target/release/arbiter spsa --engine cmd=target/release/actuary arg=--lab option.Hash=16 \
  --params "$DIR/params.txt" --pairs 10000 --tc 1+0.01 \
  --book data/chess/books/2moves_v1.epd --seed 33 --concurrency 2 \
  --state "$DIR/state.json" --trajectory "$DIR/trajectory.jsonl" --svg "$DIR/trajectory.svg" \
  --faults "$DIR/faults.pgn" \
  --max-minutes "$MINUTES" --resume > "$DIR/values.txt.tmp"
mv "$DIR/values.txt.tmp" "$DIR/values.txt"
