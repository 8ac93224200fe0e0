#!/bin/sh
# Grow the self-play corpus (data/chess/selfplay) in the background while a sitting's cores
# would otherwise idle, and close its chunk cleanly before the sitting commits (issue 32).
#
#   sh scripts/datagen-background.sh start [THREADS]   # default 1: leaves a core for builds
#   sh scripts/datagen-background.sh status
#   sh scripts/datagen-background.sh stop              # kill, close the chunk, print it
#
# Stop it for any timing, benchmark or match (they need both cores), then start it again.
# After `stop`, commit: git add data/chess/selfplay && git commit -m "corpus: chunk N".
# Search limits of every move: LIMITS (default `--soft-nodes 1250 --nodes 25000` since session
# 45, 2.2x the positions a core-hour of the chunks 1-32 setting `--nodes 5000`, won its equal
# core-hours SPRT: docs/chess/corpus.md). A chunk holds one setting; a change closes the part.
# The binary is target/release/actuary (cargo build --release -p actuary); its bench
# signature is written into every chunk, so games of different engines never share one.
set -eu
cd "$(dirname "$0")/.."
dir=data/chess/selfplay
run=target/datagen-background
bin=target/release/actuary
mkdir -p "$run"
pid_file=$run/pid

# Running: the PID in the file is alive and is our datagen (a stale file after a reboot may
# name a recycled PID of another program).
running() {
  [ -f "$pid_file" ] || return 1
  pid=$(cat "$pid_file")
  [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = actuary ]
}

case "${1:-}" in
start)
  if running; then echo "already running (pid $(cat "$pid_file"))"; exit 0; fi
  [ -x "$bin" ] || { echo "error: $bin is missing: cargo build --release -p actuary" >&2; exit 2; }
  if ls data/chess/selfplay-pending/chunk-*.bin >/dev/null 2>&1; then
    echo "error: data/chess/selfplay-pending holds a chunk to repair first (its README): new games would reuse its ids" >&2
    exit 2
  fi
  threads=${2:-1}
  limits=${LIMITS:---soft-nodes 1250 --nodes 25000}
  # Run a copy: a rebuild while it plays must not touch the running binary.
  cp "$bin" "$run/actuary"
  # shellcheck disable=SC2086  # LIMITS is a list of arguments
  setsid nohup "$run/actuary" datagen --corpus "$dir" --threads "$threads" $limits \
    > "$run/out.log" 2> "$run/err.log" < /dev/null &
  echo $! > "$pid_file"
  echo "datagen started (pid $!, $threads threads, $limits); log $run/err.log"
  ;;
status)
  if running; then echo "running (pid $(cat "$pid_file"))"; else echo "not running"; fi
  "$bin" corpus "$dir" 2>&1 | tail -1
  ;;
stop)
  if running; then
    pid=$(cat "$pid_file")
    kill "$pid"
    while kill -0 "$pid" 2>/dev/null; do sleep 0.2; done
  fi
  rm -f "$pid_file"
  "$bin" datagen --corpus "$dir" --close
  "$bin" corpus "$dir"
  ;;
*)
  echo "usage: sh scripts/datagen-background.sh start [THREADS] | status | stop" >&2
  exit 2
  ;;
esac
