"""The drop7 Python package against the committed vectors (every expected value here comes
from the reference's published files or from the `drop7` command line, never from the
package itself), Gymnasium's own checker, and hostile input."""

import json
import pathlib

import gymnasium as gym
import numpy as np
import pytest

import drop7
from drop7.env import Drop7Env, Drop7VectorEnv

ROOT = pathlib.Path(__file__).resolve().parents[3]
VECTORS = ROOT / "data" / "drop7" / "vectors"
# Column 0 full of solid discs (which never pop): a settled board whose column 0 is illegal.
FULL_COLUMN_0 = "8000000" * 6 + "8888888"
TINY_MODEL = ROOT / "data" / "drop7" / "models" / "tiny-win23-win32.bin.zst"


def lines(name):
    with open(VECTORS / name) as f:
        return [json.loads(line) for line in f if line.strip()]


def games_of(records):
    games = {}
    for r in records:
        games.setdefault(r["seedHex"], []).append(r)
    return games


@pytest.mark.parametrize("name,count", [("traces-random.jsonl", 64), ("traces-center.jsonl", 16)])
def test_trace_vectors_through_the_game_api(name, count):
    games = games_of(lines(name))
    assert len(games) == count
    for seed_hex, moves in games.items():
        g = drop7.Game(seed_hex)
        for m in moves:
            assert g.next_disc == m["disc"], (seed_hex, m["move"])
            assert m["column"] in g.legal_columns()
            s = g.step(m["column"])
            where = (seed_hex, m["move"])
            assert s.score == m["scoreDelta"], where
            assert s.chain == len(m["waves"]), where
            assert s.cleared == sum(w["cleared"] for w in m["waves"]), where
            assert s.revealed == sum(w["revealed"] for w in m["waves"]), where
            assert s.game_over == m["gameOver"], where
            assert s.cleared_board == m["clearedBoard"], where
            assert s.level_advanced == m["levelAdvanced"], where
            assert g.score == m["score"] and g.level == m["level"], where
            assert g.rise == m["movesRemaining"], where
            assert g.to_string() == m["board"], where
            digits = np.array([int(c) for c in m["board"]], dtype=np.uint8).reshape(7, 7)
            assert np.array_equal(g.board, digits), where
        assert g.game_over and g.finished and g.legal_columns() == []


def test_step_vectors():
    cases = lines("steps.jsonl")
    assert len(cases) == 316
    for c in cases:
        args = (c["board"], c["next"], c["rise"], c["column"], int(c["revealSeed"], 16))
        if c["illegal"]:
            with pytest.raises(ValueError):
                drop7.step_state(*args)
        else:
            assert drop7.step_state(*args) == c["result"], c["name"]


def test_search_vectors_bit_for_bit():
    cases = lines("search.jsonl")
    assert len(cases) == 168
    for c in cases[:: max(1, len(cases) // 40)]:
        d = drop7.fair_search(c["board"], c["depth"], c["samples"], next=c["next"], rise=c["rise"],
                              table="none", max_work=c["maxWork"])
        for key in ("column", "q", "qCanonical", "work", "workByDepth", "nodes", "completedDepth", "mirrored"):
            assert d[key] == c[key], (c["name"], key)


def test_whole_fair_games_equal_the_published_records():
    published = {r["seedHex"]: r for r in lines("games.jsonl") if r["config"] == "d3s5"}
    records = drop7.play("fair-d3s5", "0xa51d1002:1", threads=1)
    assert len(records) == 1
    r, want = records[0], published["0xa51d1002"]
    for key in ("score", "moves", "censored", "numberedCleared", "coversRevealed"):
        assert r[key] == want[key], key
    # The batch API plays the same game.
    b = drop7.play_batch("fair-d3s5", [0xA51D1002], threads=1)
    assert b["score"][0] == want["score"] and b["moves"][0] == want["moves"]


def test_a_batch_of_random_games_equals_drop7_bench():
    # `drop7 bench --start 0x2d700000 --games 1000 --json` prints moves 26707, score 74818250.
    b = drop7.play_batch("trace-random", "0x2d700000:1000", threads=2)
    assert len(b["score"]) == 1000
    assert int(b["moves"].sum()) == 26707
    assert int(b["score"].sum()) == 74818250
    assert drop7.bench_totals(0x2D700000, 1000) == {"games": 1000, "moves": 26707, "score": 74818250}
    # Thread count does not change a game.
    one = drop7.play_batch("trace-random", "0x2d700000:50", threads=1)
    assert np.array_equal(one["score"], b["score"][:50])


def test_play_records_match_the_batch_api_for_every_builtin():
    # totals of `drop7 play --policy P --seeds 0x6c200000:20`: points, moves, numbered discs cleared
    cli = {"random": (1476118, 530, 490), "center": (1147688, 435, 377), "leftmost": (1096826, 420, 347)}
    for policy in ("random", "center", "leftmost"):
        recs = drop7.play(policy, "0x6c200000:20", threads=2)
        totals = tuple(sum(r[k] for r in recs) for k in ("score", "moves", "numberedCleared"))
        assert totals == cli[policy], policy
        b = drop7.play_batch(policy, "0x6c200000:20", threads=2)
        assert [r["score"] for r in recs] == b["score"].tolist(), policy
        assert [r["moves"] for r in recs] == b["moves"].tolist(), policy
        assert [r["numberedCleared"] for r in recs] == b["cleared"].tolist(), policy


def test_center_games_through_the_vector_stepper_equal_the_trace_vectors():
    games = games_of(lines("traces-center.jsonl"))
    seeds = [int(s, 16) for s in games]
    v = drop7.VecGames(seeds)
    longest = max(len(m) for m in games.values())
    totals = np.zeros(len(seeds), dtype=np.int64)
    for t in range(longest):
        actions = np.array([m[t]["column"] if t < len(m) else -1 for m in games.values()])
        rewards, term, trunc, illegal = v.step(actions)
        totals += rewards
        assert not illegal.any() and not trunc.any()
        for i, m in enumerate(games.values()):
            if t < len(m):
                assert term[i] == m[t]["gameOver"]
    assert totals.tolist() == [m[-1]["score"] for m in games.values()]
    assert v.scores().tolist() == totals.tolist()


def test_copy_from_board_and_serialisation():
    g = drop7.Game(0x2D700000)
    g.step(3)
    h = g.copy()
    h.step(3)
    assert g.moves == 1 and h.moves == 2
    s = g.to_string()
    assert len(s) == 49 and s.isdigit()
    k = drop7.Game.from_string(s, g.next_disc, g.rise, seed=g.seed, moves=g.moves)
    assert k.to_string() == s and k.next_disc == g.next_disc
    k2 = drop7.Game.from_board(g.board, g.next_disc, g.rise, seed=g.seed, moves=g.moves)
    assert k2.to_string() == s
    # Same position, seed and move number: the same continuation.
    a, b = drop7.Game.from_board(g.board, g.next_disc, g.rise, seed=g.seed, moves=g.moves), g.copy()
    assert a.step(2) == b.step(2)
    assert a.to_string() == b.to_string() and a.next_disc == b.next_disc


@pytest.mark.parametrize(
    "board,next,rise,message",
    [
        ("123", 1, 5, "expected 49 digits"),
        ("0" * 42 + "8888888", 0, 5, "bad next disc 0: discs are 1-7"),
        ("0" * 42 + "8888888", 8, 5, "bad next disc 8"),
        ("0" * 42 + "8888888", 1, 6, "bad rise 6: moves until the rise is 1-5"),
        ("0" * 35 + "1000000" + "0" * 7, 1, 5, "hole"),  # a disc floating over an empty cell
        ("0" * 42 + "888888x", 1, 5, "digit"),
    ],
)
def test_bad_positions_raise_the_command_lines_message(board, next, rise, message):
    with pytest.raises(ValueError, match=message):
        drop7.Game.from_string(board, next, rise)


def test_bad_input_raises():
    with pytest.raises(ValueError, match="7x7"):
        drop7.Game.from_board(np.zeros((6, 7), dtype=np.uint8), 1, 5)
    with pytest.raises(ValueError, match="0-9"):
        drop7.Game.from_board(np.full((7, 7), 12), 1, 5)
    with pytest.raises(ValueError, match="seed"):
        drop7.Game(-1)
    with pytest.raises(ValueError, match="seed"):
        drop7.Game(2**32)
    g = drop7.Game(1)
    with pytest.raises(ValueError, match="column"):
        g.step(7)
    with pytest.raises(ValueError):
        drop7.play_batch("no-such-policy", [1, 2])
    with pytest.raises(ValueError):
        drop7.play("fair-d9s7", "0:1")
    with pytest.raises(ValueError):
        drop7.play("random", "not-a-block")
    with pytest.raises(ValueError, match="no-such-file"):
        drop7.Model("/no-such-file.bin")
    with pytest.raises(ValueError, match="expected shape"):
        drop7.VecGames([1, 2]).step([0])
    with pytest.raises(ValueError, match="depth"):
        drop7.fair_search(drop7.Game(1), depth=9)
    # A full column.
    g = drop7.Game.from_string(FULL_COLUMN_0, 1, 5)
    assert 0 not in g.legal_columns()
    with pytest.raises(ValueError, match="full"):
        g.step(0)


def test_the_environment_passes_gymnasiums_checker():
    from gymnasium.utils.env_checker import check_env

    env = gym.make("Drop7-v0")
    check_env(env.unwrapped)
    obs, info = env.reset(seed=0x2D700000)
    assert obs["board"].shape == (7, 7) and obs["board"].dtype == np.uint8
    assert info["seed"] == 0x2D700000 and info["action_mask"].dtype == np.int8


def test_environment_seeds_are_headless_seeds():
    env = Drop7Env()
    g = games_of(lines("traces-random.jsonl"))["0x2d700000"]
    obs, info = env.reset(seed=0x2D700000)
    total = 0.0
    for m in g:
        assert obs["next"] == m["disc"]
        obs, reward, terminated, truncated, info = env.step(m["column"])
        total += reward
        assert not info["illegal"]
    assert terminated and total == g[-1]["score"]


def test_environment_illegal_move_ends_the_episode():
    env = Drop7Env()
    env.reset(seed=5)
    env.game = drop7.Game.from_string(FULL_COLUMN_0, 1, 5)
    _, reward, terminated, truncated, info = env.step(0)
    assert terminated and not truncated and reward == 0.0 and info["illegal"]
    with pytest.raises(RuntimeError):
        env.step(1)


def test_vector_environment_autoresets_and_matches_single_games():
    venv = Drop7VectorEnv(4)
    obs, info = venv.reset(seed=0x2D700000)
    singles = [drop7.Game(0x2D700000 + i) for i in range(4)]
    assert np.array_equal(obs["board"], np.stack([g.board for g in singles]))
    rng = np.random.default_rng(1)
    ended_seen = 0
    live = [True] * 4  # each environment's first game, until it ends
    for _ in range(400):
        masks = info["action_mask"]
        actions = np.array([rng.choice(np.flatnonzero(m)) if m.any() else 0 for m in masks])
        obs, rewards, term, trunc, info = venv.step(actions)
        ended_seen += int(term.sum())
        assert obs["board"].shape == (4, 7, 7)
        # the first games, move for move, against single games given the same columns
        for i, g in enumerate(singles):
            if not live[i]:
                continue
            before = g.score
            g.step(int(actions[i]))
            assert np.array_equal(obs["board"][i], g.board), i
            assert rewards[i] == g.score - before, i
            assert bool(term[i] or trunc[i]) == g.finished, i
            live[i] = not g.finished
    assert not any(live)  # every first game was followed to its end
    assert ended_seen > 4  # and later games ended too: autoreset went on
    # The registered vector entry point builds the same environment.
    v = gym.make_vec("Drop7-v0", num_envs=3, vectorization_mode="vector_entry_point")
    obs, info = v.reset(seed=7)
    assert obs["board"].shape == (3, 7, 7) and info["action_mask"].shape == (3, 7)


def test_model_features_and_values():
    m = drop7.Model(TINY_MODEL)
    assert m.sha256 == "a63a7cc54eeb6a3b430b6d8407f11f180f7c31c625278beed76f6d143be495e6"
    boards, rises = [], []
    g = drop7.Game(0x6C200000)
    while not g.finished and len(boards) < 60:
        boards.append(g.board.copy())
        rises.append(g.rise)
        g.step(g.legal_columns()[len(boards) % len(g.legal_columns())])
    boards, rises = np.stack(boards), np.array(rises)
    f = m.features(boards, rises)
    v = m.values(boards, rises)
    assert f.shape[0] == len(boards) and f.shape[1] > 0 and v.shape == (len(boards),)
    assert np.isfinite(v).all() and (v != 0).any()
    # The learner canonicalises by the mirror: a mirrored board has the same features and value.
    mirrored = boards[:, :, ::-1]
    assert np.array_equal(m.features(mirrored, rises), f)
    assert np.array_equal(m.values(mirrored, rises), v)
    # The n-tuple leaf in the search, pinned to the command line: game 0x6c200000 played move
    # by move with fair_search(depth=1, samples=7, model=m) ends as `drop7 play --policy
    # ntuple-d1s7@data/drop7/models/tiny-win23-win32.bin.zst --seeds 0x6c200000:4` records
    # it, and the batch API plays all four games as that command does.
    g = drop7.Game(0x6C200000)
    while not g.finished:
        g.step(drop7.fair_search(g, depth=1, samples=7, model=m)["column"])
    assert (g.score, g.moves) == (68381, 25)
    recs = drop7.play("ntuple-d1s7", "0x6c200000:4", model=str(TINY_MODEL))
    assert [(r["score"], r["moves"]) for r in recs] == [(68381, 25), (124472, 40), (85709, 30), (103600, 35)]
    # n-tuple policies in both batch APIs agree.
    recs = drop7.play("ntuple-1ply", "0x6c200000:4", model=str(TINY_MODEL))
    b = drop7.play_batch("ntuple-1ply", "0x6c200000:4", model=str(TINY_MODEL))
    assert [r["score"] for r in recs] == b["score"].tolist()


def test_thread_counts_beyond_the_cap_raise_value_error():
    # Issue 68, serious item 4: 3,000 threads raised PanicException (not caught by
    # `except Exception`); the CLI's cap (4 per core) is a ValueError now, in both calls.
    with pytest.raises(ValueError, match="use at most"):
        drop7.play_batch("center", "0x6c200000:4", threads=3000)
    with pytest.raises(ValueError, match="use at most"):
        drop7.play("center", "0x6c200000:4", threads=3000)


def test_batches_too_large_are_refused_before_they_start():
    # Issue 68, serious item 3: a batch too large for the memory aborted the interpreter
    # (SIGABRT); now it is a ValueError past the command line's cap and a MemoryError past
    # the memory left, raised before any game is played.
    with pytest.raises(ValueError, match="at most 16777216"):
        drop7.play_batch("center", "0:16777217")
    import subprocess
    import sys

    code = (
        "import resource, drop7\n"
        "resource.setrlimit(resource.RLIMIT_AS, (1_200_000_000, resource.RLIM_INFINITY))\n"
        "try:\n"
        "    drop7.play_batch('center', '0:3000000')\n"
        "    print('played')\n"
        "except MemoryError as e:\n"
        "    print('MemoryError', e)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("MemoryError 3000000 games need"), out.stdout + out.stderr


def test_integer_arguments_are_integers():
    # Issue 68, defects 7 and 12: floats and strings were truncated or accepted, bytes wrapped.
    g = drop7.Game(0x2D700000)
    for bad in (3.7, "3", True):
        with pytest.raises(TypeError):
            g.step(bad)
    with pytest.raises(TypeError):
        drop7.Game(-0.5)
    with pytest.raises(ValueError):
        g.step(-1)
    assert g.step(np.int64(3)) is not None
    board = "0000000" * 7
    with pytest.raises(ValueError, match="next 259: out of range"):
        drop7.step_state(board, 259, 5, 3, 1)


def _seconds_until_interrupted(call: str) -> float:
    """Run `call` (Python source using drop7) in a fresh interpreter that sends itself
    SIGINT (Ctrl-C) after a second; the seconds from the start until KeyboardInterrupt."""
    import subprocess
    import sys

    code = (
        "import os, signal, threading, time, drop7\n"
        "threading.Timer(1.0, lambda: os.kill(os.getpid(), signal.SIGINT)).start()\n"
        "t0 = time.monotonic()\n"
        "try:\n"
        f"    {call}\n"
        "    print('finished')\n"
        "except KeyboardInterrupt:\n"
        "    print('interrupted after', round(time.monotonic() - t0, 1))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.stdout.startswith("interrupted after"), call + out.stdout + out.stderr
    return float(out.stdout.split()[-1])


def test_ctrl_c_stops_a_long_batch_promptly():
    # Issue 68, defect 5: Ctrl-C could not stop play_batch; now it raises KeyboardInterrupt
    # at the games' next boundary (a batch of minutes, stopped within seconds).
    for call in ("play_batch", "play"):
        took = _seconds_until_interrupted(f"drop7.{call}('fair-d2s7', '0x6c200000:4000', threads=2)")
        assert took < 15, (call, took)


def test_bench_totals_in_slices_equal_the_games_one_by_one_and_stop_on_ctrl_c():
    # bench_totals plays in slices of 20,000 games to check for Ctrl-C between them (issue
    # 68, defect 5): the slices add up to the games played one by one.
    t = drop7.bench_totals(0x2D700000, 45000)
    b = drop7.play_batch("trace-random", "0x2d700000:45000", threads=2)
    assert t == {"games": 45000, "moves": int(b["moves"].sum()), "score": int(b["score"].sum())}
    assert _seconds_until_interrupted("drop7.bench_totals(0, 2**32)") < 10


def test_fair_search_stops_on_ctrl_c_and_quick_searches_pay_no_wait():
    # Issue 68, defect 5: fair_search runs on its own thread and stops at its next deep node
    # on Ctrl-C. A d6s32 search takes hours; interrupted after a second, it ends within a few.
    import time

    call = "drop7.fair_search(drop7.Game(5), depth=6, samples=32, max_work=2**62)"
    assert _seconds_until_interrupted(call) < 10
    # the waiting thread wakes on the answer: 200 depth-1 searches take far less than the
    # 50 ms signal-check interval each
    g = drop7.Game(5)
    t0 = time.monotonic()
    for _ in range(200):
        drop7.fair_search(g, depth=1, samples=2)
    assert time.monotonic() - t0 < 5, time.monotonic() - t0


def test_copies_are_independent_pickles_are_refused_and_models_want_paths(tmp_path):
    # Issue 68, minor items: copy.copy shared one Rust game between two objects; pickle
    # failed obscurely; Model(None) looked for a file named "None"; errors named the path twice.
    import copy
    import pickle

    g = drop7.Game(7)
    for c in (copy.copy(g), copy.deepcopy(g)):
        c.step(int(np.flatnonzero(c.action_mask())[0]))
        assert c.moves == 1 and g.moves == 0
    with pytest.raises(TypeError, match="cannot be pickled"):
        pickle.dumps(g)
    with pytest.raises(TypeError, match="expected a path"):
        drop7.Model(None)
    missing = tmp_path / "missing.d7nt"
    with pytest.raises(ValueError) as e:
        drop7.Model(missing)
    assert str(e.value).count("missing.d7nt") == 1, str(e.value)


def test_envs_take_numpy_seeds_and_refuse_a_step_before_reset():
    from drop7.env import Drop7Env, Drop7VectorEnv

    a, b = Drop7Env(), Drop7Env()
    assert a.reset(seed=np.int64(5))[1]["seed"] == b.reset(seed=5)[1]["seed"] == 5
    v = Drop7VectorEnv(num_envs=2)
    with pytest.raises(RuntimeError, match="reset"):
        v.step(np.zeros(2, dtype=np.int64))
    v.reset(seed=np.uint32(3))
    v.step(np.zeros(2, dtype=np.int64))
