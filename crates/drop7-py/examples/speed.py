"""Time Drop7 moves through each Python API against the Rust simulator, in one run.

    python crates/drop7-py/examples/speed.py [--rounds 3]

Rows (moves per second, one thread each, median of --rounds):
  rust simulator   drop7.bench_totals: `drop7 bench`'s loop (reference-random games), one call
  play_batch       drop7.play_batch("trace-random", ...): the same games, per-game arrays back
  VecGames.step    1,024 games stepped together, ended ones reset; the policy (first legal
                   column) in NumPy
  Game.step        one Python call a move (the first legal column)
  Gymnasium step   Drop7-v0's env.step a move (first legal column from info["action_mask"])
"""

import argparse
import statistics
import time

import gymnasium as gym
import numpy as np

import drop7

parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("--rounds", type=int, default=3)
args = parser.parse_args()
START = 0x2D700000


def rust_simulator():
    t0 = time.perf_counter()
    t = drop7.bench_totals(START, 20000)
    return t["moves"], time.perf_counter() - t0


def play_batch():
    t0 = time.perf_counter()
    b = drop7.play_batch("trace-random", f"{START:#x}:20000", threads=1)
    return int(b["moves"].sum()), time.perf_counter() - t0


def vec_games():
    v = drop7.VecGames(np.arange(START, START + 1024))
    next_seed = START + 1024
    moves, t0 = 0, time.perf_counter()
    for _ in range(200):
        _, _, masks = v.info()
        _, term, trunc, _ = v.step(masks.argmax(axis=1))
        moves += len(v)
        for i in np.flatnonzero(term | trunc):  # ended games start again (a vector env's reset)
            v.reset(int(i), next_seed)
            next_seed += 1
    return moves, time.perf_counter() - t0


def game_step():
    moves, t0 = 0, time.perf_counter()
    for s in range(START, START + 400):
        g = drop7.Game(s)
        while not g.finished:
            g.step(g.legal_columns()[0])
            moves += 1
    return moves, time.perf_counter() - t0


def gym_step():
    env = gym.make("Drop7-v0")
    moves, t0 = 0, time.perf_counter()
    for s in range(START, START + 200):
        _, info = env.reset(seed=s)
        done = False
        while not done:
            _, _, term, trunc, info = env.step(int(np.argmax(info["action_mask"])))
            moves += 1
            done = term or trunc
    return moves, time.perf_counter() - t0


rows = [("rust simulator", rust_simulator), ("play_batch", play_batch), ("VecGames.step", vec_games),
        ("Game.step", game_step), ("Gymnasium step", gym_step)]
rates = {name: [] for name, _ in rows}
for _ in range(args.rounds):
    for name, f in rows:  # alternating: every round times every row
        m, s = f()
        rates[name].append(m / s)
base = statistics.median(rates["rust simulator"])
for name, _ in rows:
    r = statistics.median(rates[name])
    print(f"{name:16s} {r:14,.0f} moves/s   {1e9 / r:10,.0f} ns/move   {base / r:7.2f}x the simulator's time")
