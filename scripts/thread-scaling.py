#!/usr/bin/env python3
"""Thread scaling of actuary's lazy SMP: nodes per second and time to depth, Threads N against
Threads 1 (issue 67, item 4).

Every position of the suite is searched to a fixed depth from a new game (`ucinewgame`, the
hash cleared) once with each thread count, the counts taken in turn position by position (so
a machine's drift falls on both alike). Reported per count: the summed nodes and wall time,
the nps ratio against one thread and the time-to-depth speed-up (the geometric mean over the
positions of t(1) / t(N)), and every best move checked legal in its position. Needs the Python
package `chess` (pip install chess) and a quiet machine with at least N cores.

    python3 scripts/thread-scaling.py [--engine target/release/actuary] [--threads 1,2]
        [--depth 13] [--positions 30] [--suite data/chess/suites/wac.epd] [--hash 64]
        [--json OUT.json]
"""

import argparse
import json
import math
import sys
import time

import chess
import chess.engine


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    p.add_argument("--engine", default="target/release/actuary", help="the UCI engine to run")
    p.add_argument(
        "--threads", default="1,2", help="thread counts, comma-separated; the first is the base"
    )
    p.add_argument("--depth", type=int, default=13, help="search depth of every position")
    p.add_argument(
        "--positions", type=int, default=30, help="how many positions of the suite (its first)"
    )
    p.add_argument("--suite", default="data/chess/suites/wac.epd", help="EPD file of positions")
    p.add_argument("--hash", type=int, default=64, help="UCI Hash, MB, for every count")
    p.add_argument("--json", help="also write the per-position rows and the summary here")
    a = p.parse_args()
    try:
        a.threads = [int(t) for t in a.threads.split(",")]
    except ValueError:
        p.error(f"--threads {a.threads!r}: expected integers like 1,2")
    if len(a.threads) < 2 or min(a.threads) < 1:
        p.error("--threads: at least two counts, each 1 or more")
    if a.depth < 1 or a.positions < 1:
        p.error("--depth and --positions must be at least 1")
    return a


def read_suite(path, n):
    boards = []
    with open(path, encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                board, _ = chess.Board.from_epd(line)
            except ValueError as e:
                sys.exit(f"thread-scaling: {path}:{lineno}: not an EPD line ({e})")
            boards.append(board)
            if len(boards) == n:
                break
    if not boards:
        sys.exit(f"thread-scaling: {path} holds no positions")
    return boards


def search(engine, board, depth):
    """One search from a cleared hash: (wall seconds, nodes, best move)."""
    engine.protocol.send_line("ucinewgame")
    engine.ping()
    start = time.perf_counter()
    info = engine.analyse(board, chess.engine.Limit(depth=depth))
    wall = time.perf_counter() - start
    best = info.get("pv", [None])[0]
    return wall, info.get("nodes", 0), best


def main():
    a = parse_args()
    boards = read_suite(a.suite, a.positions)
    engines = {}
    try:
        for t in a.threads:
            e = chess.engine.SimpleEngine.popen_uci(a.engine)
            e.configure({"Threads": t, "Hash": a.hash})
            engines[t] = e
        rows = []
        for i, board in enumerate(boards):
            row = {"fen": board.fen()}
            for t in a.threads:
                wall, nodes, best = search(engines[t], board, a.depth)
                if best is None or best not in board.legal_moves:
                    sys.exit(f"thread-scaling: Threads {t} gave no legal best move in {board.fen()}")
                row[str(t)] = {"seconds": wall, "nodes": nodes, "best": best.uci()}
            rows.append(row)
            print(f"\r{i + 1}/{len(boards)} positions", end="", file=sys.stderr, flush=True)
        print(file=sys.stderr)
    finally:
        for e in engines.values():
            e.quit()
    base = str(a.threads[0])
    summary = {}
    print(f"depth {a.depth}, {len(boards)} positions of {a.suite}, Hash {a.hash}")
    print("threads  nodes        seconds   nps         nps ratio  time-to-depth speed-up")
    for t in a.threads:
        k = str(t)
        nodes = sum(r[k]["nodes"] for r in rows)
        secs = sum(r[k]["seconds"] for r in rows)
        nps = nodes / secs
        base_nps = sum(r[base]["nodes"] for r in rows) / sum(r[base]["seconds"] for r in rows)
        logs = [math.log(r[base]["seconds"] / r[k]["seconds"]) for r in rows]
        speedup = math.exp(sum(logs) / len(logs))
        summary[k] = {"nodes": nodes, "seconds": secs, "nps_ratio": nps / base_nps,
                      "time_to_depth_speedup": speedup}
        print(f"{t:<8} {nodes:<12} {secs:<9.2f} {nps:<11.0f} {nps / base_nps:<10.3f} {speedup:.3f}")
    print("every best move legal")
    if a.json:
        with open(a.json, "w", encoding="utf-8") as f:
            json.dump({"format": "actuary-thread-scaling-v1", "engine": a.engine,
                       "depth": a.depth, "suite": a.suite, "hash": a.hash,
                       "summary": summary, "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
