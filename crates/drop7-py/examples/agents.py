"""Evaluate three Drop7 agents on the same 32 seeds and print their mean scores.

    python crates/drop7-py/examples/agents.py [--games N]

A uniformly random agent through the Gymnasium API, a one-ply greedy agent (the column whose
immediate score is best, on a copy of the game), and the fair expectimax search d2s7 through
the batch API (Rust threads). Every agent plays the same headless seeds, so the means compare
like with like.
"""

import argparse
import time

import gymnasium as gym
import numpy as np

import drop7

parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("--games", type=int, default=32, help="games per agent (default 32)")
parser.add_argument("--start", type=lambda s: int(s, 0), default=0x6C200000, help="first headless seed")
args = parser.parse_args()
seeds = [args.start + i for i in range(args.games)]


def random_agent() -> float:
    env = gym.make("Drop7-v0")
    rng = np.random.default_rng(0)
    scores = []
    for s in seeds:
        obs, info = env.reset(seed=s)
        total, done = 0.0, False
        while not done:
            action = rng.choice(np.flatnonzero(info["action_mask"]))
            obs, reward, terminated, truncated, info = env.step(action)
            total += reward
            done = terminated or truncated
        scores.append(total)
    return float(np.mean(scores))


def greedy_agent() -> float:
    scores = []
    for s in seeds:
        g = drop7.Game(s)
        while not g.finished:
            best = max(g.legal_columns(), key=lambda c: (g.copy().step(c).score, -abs(c - 3)))
            g.step(best)
        scores.append(g.score)
    return float(np.mean(scores))


def fair_search_agent() -> float:
    return float(drop7.play_batch("fair-d2s7", seeds)["score"].mean())


for name, agent in [("random (Gymnasium)", random_agent), ("greedy one-ply", greedy_agent),
                    ("fair-d2s7 (batch)", fair_search_agent)]:
    t0 = time.perf_counter()
    mean = agent()
    print(f"{name:20s} mean {mean:12,.0f} over {len(seeds)} games  ({time.perf_counter() - t0:.1f} s)")
