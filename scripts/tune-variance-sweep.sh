#!/bin/sh
# Issue 15 item 3: how the fit and the cheap tiers' residual spread move with --variance-penalty V.
# Same data, learning rate and patience for every V; two starts: the hand-set weights (as the
# full tune started; taken from commit 26de067) and the tuned default. Resumable: a finished
# run (its output file exists) is skipped.
#
# Usage (repository root, after cargo build --release -p actuary):
#   actuary datagen --games 4000 --threads 2 --out selfplay-4000.txt      # ~25 min on 2 cores
#   sh scripts/tune-variance-sweep.sh selfplay-4000.txt OUT
set -eu
D=${1:?usage: tune-variance-sweep.sh DATA OUT}
OUT=${2:?usage: tune-variance-sweep.sh DATA OUT}
mkdir -p "$OUT"
git show 26de067:data/chess/eval-params.txt > "$OUT/handset.txt"
for FROM in handset tuned; do
  F=$OUT/handset.txt; [ "$FROM" = tuned ] && F=data/chess/eval-params.txt
  for V in 0 0.001 0.003 0.01 0.03; do
    O=$OUT/$FROM-v$V.txt
    [ -s "$O" ] && continue
    target/release/actuary tune --data "$D" --from "$F" --threads 2 --learning-rate 0.3 --patience 40 \
      --variance-penalty "$V" --out "$O" > "$O.log" 2>&1
  done
done
