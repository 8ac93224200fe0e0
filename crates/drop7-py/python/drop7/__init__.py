"""Drop7 from Python: actuary's exact simulator (bit-identical to the public drop7-bench
reference), batches played in Rust threads, the fair expectimax search and n-tuple models.

    >>> import drop7
    >>> g = drop7.Game(0x2D700000)
    >>> g.board.shape
    (7, 7)
    >>> step = g.step(3)            # score gained, chain waves, cleared, revealed, ...

Boards are 7x7 ``uint8`` arrays, top row first, in the reference's cell codes: 0 empty, 1-7
numbered discs, 8 solid (wrapped) discs, 9 cracked discs. Importing the package registers
the Gymnasium environment ``Drop7-v0`` (see ``drop7.env``).
"""

from __future__ import annotations

import json
import operator
import os
from typing import NamedTuple, Optional, Sequence, Union

import numpy as np

from . import _drop7

__all__ = [
    "Game",
    "Step",
    "Model",
    "VecGames",
    "play_batch",
    "play",
    "fair_search",
    "step_state",
    "bench_totals",
    "CELL_EMPTY",
    "CELL_SOLID",
    "CELL_CRACKED",
]

CELL_EMPTY = 0
CELL_SOLID = 8
CELL_CRACKED = 9


class Step(NamedTuple):
    """What one move did."""

    score: int
    """Points gained by the move (chain, clear and rise bonuses)."""
    chain: int
    """Waves of the chain (0 when nothing popped)."""
    cleared: int
    """Numbered discs popped."""
    revealed: int
    """Covers revealed (solid to cracked, cracked to a number)."""
    game_over: bool
    cleared_board: bool
    level_advanced: bool


def _int(x, what: str) -> int:
    """An integer argument, as NumPy-aware libraries take one: a Python or NumPy integer
    (``operator.index``); a float, a string or a bool is a TypeError, never truncated (a
    column of 3.7 used to play column 3, a seed of -0.5 seed 0)."""
    if isinstance(x, (bool, np.bool_)):
        raise TypeError(f"{what}: expected an integer, got {x!r}")
    try:
        v = operator.index(x)
    except TypeError:
        raise TypeError(f"{what}: expected an integer, got {type(x).__name__} {x!r}") from None
    if v < 0:
        raise ValueError(f"{what}: expected a non-negative integer, got {v}")
    return v


def _seed(seed: Union[int, str]) -> int:
    if isinstance(seed, str):
        try:
            seed = int(seed, 0)
        except ValueError:
            raise ValueError(f"bad seed {seed!r}: expected an integer such as 0x2d700000") from None
    seed = _int(seed, "seed")
    if not 0 <= seed < 2**32:
        raise ValueError(f"bad seed {seed}: headless seeds are 0 to 2**32 - 1")
    return seed


def _cells(board) -> bytes:
    """A 7x7 board (array-like of cell codes) as 49 bytes, or ValueError."""
    a = np.asarray(board)
    if a.shape != (7, 7):
        raise ValueError(f"bad board: expected a 7x7 array, got shape {a.shape}")
    if not np.issubdtype(a.dtype, np.integer):
        raise ValueError(f"bad board: expected integer cell codes, got dtype {a.dtype}")
    if a.min() < 0 or a.max() > 9:
        raise ValueError("bad board: cell codes are 0-9")
    return np.ascontiguousarray(a, dtype=np.uint8).tobytes()


class Game:
    """One headless game: seed ``seed`` fixes its discs and reveals (the reference's mapping)."""

    __slots__ = ("_g",)

    def __init__(self, seed: Union[int, str] = 0):
        self._g = _drop7.Game(_seed(seed))

    @classmethod
    def from_board(cls, board, next: int, rise: int, seed: Union[int, str] = 0, moves: int = 0) -> "Game":
        """A game from a position: a 7x7 board of cell codes, the next disc (1-7) and the
        moves until the rise (1-5). The checks and messages are the command line's (a hole
        under a disc, a disc that would still pop, ...): a bad position is a ValueError.
        Later discs and reveals come from headless seed ``seed`` from move ``moves`` on."""
        g = cls.__new__(cls)
        g._g = _drop7.Game.from_cells(
            _cells(board), _int(next, "next"), _int(rise, "rise"), _seed(seed), _int(moves, "moves")
        )
        return g

    @classmethod
    def from_string(cls, digits: str, next: int, rise: int, seed: Union[int, str] = 0, moves: int = 0) -> "Game":
        """As ``from_board``, the board as the reference's 49-digit string (top row first)."""
        g = cls.__new__(cls)
        g._g = _drop7.Game.from_string(
            digits, _int(next, "next"), _int(rise, "rise"), _seed(seed), _int(moves, "moves")
        )
        return g

    def to_string(self) -> str:
        """The board as the reference's 49-digit string (top row first)."""
        return self._g.board_string()

    def legal_columns(self) -> list:
        """Columns that can take a disc (none once the game is over)."""
        m = self._g.legal_mask()
        return [c for c in range(7) if m >> c & 1]

    def action_mask(self) -> np.ndarray:
        """``int8`` mask of the legal columns (Gymnasium's convention)."""
        m = self._g.legal_mask()
        return np.array([m >> c & 1 for c in range(7)], dtype=np.int8)

    def step(self, column: int) -> Step:
        """Drop the next disc in ``column``. A full or missing column, or a finished game,
        is a ValueError."""
        return Step(*self._g.step(_int(column, "column")))

    @property
    def board(self) -> np.ndarray:
        """The board, 7x7 ``uint8`` cell codes, top row first (a read-only view)."""
        return np.frombuffer(self._g.cells(), dtype=np.uint8).reshape(7, 7)

    next_disc = property(lambda self: self._g.next_disc, doc="The disc to drop next (1-7).")
    rise = property(lambda self: self._g.rise, doc="Moves until a row rises (1-5; 0 after a blocked rise).")
    score = property(lambda self: self._g.score)
    level = property(lambda self: self._g.level)
    moves = property(lambda self: self._g.moves, doc="Moves played.")
    seed = property(lambda self: self._g.seed)
    game_over = property(lambda self: self._g.game_over)
    censored = property(lambda self: self._g.censored, doc="Stopped by the 2,000-move research cap.")
    finished = property(lambda self: self._g.finished, doc="Game over or censored.")

    def copy(self) -> "Game":
        g = Game.__new__(Game)
        g._g = self._g.copy()
        return g

    # copy.copy and copy.deepcopy give an independent game (copying the slot would share one
    # Rust game between two objects: a move on either moved both).
    def __copy__(self) -> "Game":
        return self.copy()

    def __deepcopy__(self, memo) -> "Game":
        return self.copy()

    def __reduce__(self):
        raise TypeError(
            "a drop7.Game cannot be pickled (its disc and reveal streams live in Rust); "
            "keep its seed and moves, or use Game.from_board for a position"
        )

    def __repr__(self) -> str:
        return (
            f"Game(seed=0x{self.seed:08x}, moves={self.moves}, score={self.score}, "
            f"next={self.next_disc}, rise={self.rise}, board={self.to_string()!r})"
        )


def _seed_array(seeds) -> np.ndarray:
    if isinstance(seeds, str):
        start, _, count = seeds.partition(":")
        start, count = _seed(start), int(count, 0)
        if count < 0 or start + count > 2**32:
            raise ValueError(f"bad seeds {seeds!r}: the block leaves the seed range")
        return np.arange(start, start + count, dtype=np.uint64).astype("<u4")
    a = np.asarray(seeds)
    if a.ndim != 1 or not np.issubdtype(a.dtype, np.integer):
        raise ValueError("seeds: expected 'START:COUNT' or a 1-D array of integers")
    if a.size and (a.min() < 0 or a.max() >= 2**32):
        raise ValueError("seeds: headless seeds are 0 to 2**32 - 1")
    return a.astype("<u4")


def play_batch(policy: str, seeds, threads: int = 0, model: Optional[str] = None) -> dict:
    """Play one game per seed under ``policy`` in Rust threads (0 = every core) and return
    per-game NumPy arrays ``score``, ``moves``, ``cleared``, ``revealed``, ``censored``.

    ``policy`` is any ``drop7 play`` policy (``random``, ``center``, ``fair-d3s7``,
    ``ntuple-d3s7@model.bin``, ...) or ``trace-random``, the reference's random stream that
    ``drop7 bench`` plays. ``seeds`` is ``"START:COUNT"`` or an array of seeds."""
    s = _seed_array(seeds)
    score, moves, cleared, revealed, censored = _drop7.play_batch(policy, s.tobytes(), threads, model)
    return {
        "seed": s.astype(np.uint32),
        "score": np.frombuffer(score, dtype="<u8"),
        "moves": np.frombuffer(moves, dtype="<u4"),
        "cleared": np.frombuffer(cleared, dtype="<u8"),
        "revealed": np.frombuffer(revealed, dtype="<u8"),
        "censored": np.frombuffer(censored, dtype=np.uint8).astype(bool),
    }


def play(policy: str, seeds: str, threads: int = 0, model: Optional[str] = None) -> list:
    """``drop7 play --policy POLICY --seeds START:COUNT``: the per-game records (dicts with
    the same keys and values as its ``--out`` lines; ``wallSeconds`` varies)."""
    text = _drop7.play(policy, seeds, threads, model)
    return [json.loads(line) for line in text.splitlines()]


def _state(state, next=None, rise=None):
    if isinstance(state, Game):
        return state.to_string(), state.next_disc, state.rise
    if isinstance(state, str):
        return state, next, rise
    g = Game.from_board(state, next, rise)
    return g.to_string(), next, rise


def fair_search(state, depth: int = 3, samples: int = 7, next=None, rise=None, table: str = "default",
                max_work: Optional[int] = None, model: Optional["Model"] = None) -> dict:
    """The fair expectimax dNsK (``drop7 search``) from a ``Game``, a 49-digit string or a
    7x7 board (then ``next`` and ``rise`` too). Returns the decision: ``column`` and ``q``
    (the root Q value of each column, ``None`` where illegal), bit-identical to the command
    line, plus ``work``, ``nodes``, ``completedDepth``... With ``model``, the n-tuple leaf."""
    b, n, r = _state(state, next, rise)
    m = model._m if model is not None else None
    return json.loads(_drop7.search(b, int(n), int(r), depth, samples, table, max_work, m))


def step_state(board: str, next: int, rise: int, column: int, reveal_seed: int) -> dict:
    """``drop7 step``: one move from any position with a given reveal seed (the step
    vectors' ``result`` object)."""
    return json.loads(
        _drop7.step_state(
            board,
            _int(next, "next"),
            _int(rise, "rise"),
            _int(column, "column"),
            _int(reveal_seed, "reveal_seed"),
        )
    )


def bench_totals(start: Union[int, str], games: int) -> dict:
    """``drop7 bench --start START --games N``: totals of reference-random games."""
    g, m, s = _drop7.bench_totals(_seed(start), _int(games, "games"))
    return {"games": g, "moves": m, "score": s}


class Model:
    """An n-tuple model file (``D7NTUP02``; its checksum is verified on load)."""

    def __init__(self, path: Union[str, "os.PathLike[str]"]):
        if not isinstance(path, (str, os.PathLike)):
            raise TypeError(f"Model: expected a path, got {type(path).__name__} {path!r}")
        self._m = _drop7.Model(os.fspath(path))

    @property
    def sha256(self) -> str:
        return self._m.sha256

    @staticmethod
    def _batch(boards, rises):
        b = np.asarray(boards)
        if b.ndim == 2:
            b = b[None]
        if b.ndim != 3 or b.shape[1:] != (7, 7):
            raise ValueError(f"boards: expected shape (N, 7, 7), got {b.shape}")
        r = np.broadcast_to(np.asarray(rises, dtype=np.int64), (b.shape[0],))
        if r.size and (r.min() < 1 or r.max() > 5):
            raise ValueError("rises: moves until the rise are 1-5")
        if b.size and (b.min() < 0 or b.max() > 9):
            raise ValueError("bad board: cell codes are 0-9")
        return np.ascontiguousarray(b, dtype=np.uint8).tobytes(), r.astype(np.uint8).tobytes()

    def features(self, boards, rises) -> np.ndarray:
        """The active table indices of each board (N x F ``uint64``; the board is
        canonicalised by mirror symmetry first, as the learner does; rows padded with
        2**64 - 1 if layouts give boards different counts)."""
        cells, r = self._batch(boards, rises)
        data, width = self._m.features(cells, r)
        return np.frombuffer(data, dtype="<u8").reshape(-1, width)

    def values(self, boards, rises) -> np.ndarray:
        """The model's value of each board, in points (``float64``)."""
        cells, r = self._batch(boards, rises)
        return np.frombuffer(self._m.values(cells, r), dtype="<f8")


class VecGames:
    """Many games stepped together in one Rust call: the engine of ``drop7.env``'s vector
    environment, usable on its own."""

    def __init__(self, seeds):
        s = _seed_array(seeds)
        self._b = _drop7.Batch(s.tobytes())

    def __len__(self) -> int:
        return len(self._b)

    def reset(self, i: int, seed: Union[int, str]) -> None:
        self._b.reset(int(i), _seed(seed))

    def step(self, actions):
        """Play ``actions[i]`` in game ``i``: (rewards, terminated, truncated, illegal). An
        illegal column (full, out of range) or a move in a finished game scores 0 and ends
        that game."""
        a = np.ascontiguousarray(actions, dtype="<i8")
        if a.shape != (len(self),):
            raise ValueError(f"actions: expected shape ({len(self)},), got {a.shape}")
        r, t, tr, il = self._b.step(a.tobytes())
        return (
            np.frombuffer(r, dtype="<i8"),
            np.frombuffer(t, dtype=np.uint8).astype(bool),
            np.frombuffer(tr, dtype=np.uint8).astype(bool),
            np.frombuffer(il, dtype=np.uint8).astype(bool),
        )

    def boards(self) -> np.ndarray:
        return np.frombuffer(self._b.cells(), dtype=np.uint8).reshape(-1, 7, 7)

    def info(self):
        """(next discs, rise clocks, action masks N x 7 ``int8``)."""
        i = np.frombuffer(self._b.info(), dtype=np.uint8).reshape(-1, 3)
        masks = ((i[:, 2:3] >> np.arange(7, dtype=np.uint8)) & 1).astype(np.int8)
        return i[:, 0].copy(), i[:, 1].copy(), masks

    def scores(self) -> np.ndarray:
        return np.frombuffer(self._b.scores(), dtype="<u8")


def register_envs() -> None:
    """Register ``Drop7-v0`` with Gymnasium (done on import when Gymnasium is installed):
    ``gym.make("Drop7-v0")`` for one game, ``gym.make_vec("Drop7-v0", num_envs=N,
    vectorization_mode="vector_entry_point")`` for N games stepped in one Rust call."""
    try:
        from gymnasium.envs.registration import register, registry
    except ImportError:  # Gymnasium is optional for the simulator alone.
        return
    if "Drop7-v0" not in registry:
        try:
            register(id="Drop7-v0", entry_point="drop7.env:Drop7Env",
                     vector_entry_point="drop7.env:Drop7VectorEnv")
        except TypeError:  # Gymnasium before 1.0 has no vector entry points.
            register(id="Drop7-v0", entry_point="drop7.env:Drop7Env")


register_envs()
