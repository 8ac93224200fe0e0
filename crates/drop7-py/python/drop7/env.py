"""Gymnasium environments for Drop7: ``Drop7-v0`` (one game) and ``Drop7VectorEnv`` (many
games stepped in one Rust call).

Observation: a dict of ``board`` (7x7 ``uint8`` cell codes, top row first: 0 empty, 1-7
numbered, 8 solid, 9 cracked), ``next`` (the disc to drop, 1-7) and ``rise`` (moves until a
row rises, 0-5; 0 only after a blocked rise ended the game). Actions: ``Discrete(7)``, the
column. Reward: the points the move scored. ``info["action_mask"]`` marks the legal columns.

Seeds: ``reset(seed=s)`` with ``0 <= s < 2**32`` plays headless game ``s``, the same game as
``drop7 play --seeds s:1`` and the reference's seed ``s``; every later ``reset()`` without a
seed plays a game whose headless seed is drawn from the environment's ``np_random`` (so a
seeded sequence of episodes is reproducible). A seed outside the range seeds ``np_random``
only. An illegal column (a full one) ends the episode with reward 0 and
``info["illegal"] = True``; the 2,000-move research cap truncates.
"""

from __future__ import annotations

from typing import Optional

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from . import Game, VecGames, _int


def _observation_space() -> spaces.Dict:
    return spaces.Dict(
        {
            "board": spaces.Box(0, 9, shape=(7, 7), dtype=np.uint8),
            "next": spaces.Discrete(7, start=1),
            "rise": spaces.Discrete(6),
        }
    )


class Drop7Env(gym.Env):
    """One Drop7 game per episode (see the module note for spaces and seeds)."""

    metadata = {"render_modes": ["ansi"], "render_fps": 4}

    def __init__(self, render_mode: Optional[str] = None):
        self.observation_space = _observation_space()
        self.action_space = spaces.Discrete(7)
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode {render_mode!r}: only 'ansi' is supported")
        self.render_mode = render_mode
        self.game: Optional[Game] = None

    def _obs(self):
        g = self.game
        return {"board": g.board.copy(), "next": int(g.next_disc), "rise": int(g.rise)}

    def _info(self, **extra):
        g = self.game
        return {"action_mask": g.action_mask(), "score": g.score, "moves": g.moves, "seed": g.seed, **extra}

    def reset(self, *, seed: Optional[int] = None, options: Optional[dict] = None):
        if seed is not None:
            seed = _int(seed, "seed")  # a NumPy integer too, as Gymnasium users pass one
        if seed is not None and 0 <= seed < 2**32:
            super().reset(seed=seed)
            headless = seed
        else:
            super().reset(seed=seed)
            headless = int(self.np_random.integers(0, 2**32))
        self.game = Game(headless)
        return self._obs(), self._info()

    def step(self, action):
        if self.game is None:
            raise RuntimeError("call reset() before step() (and after an episode ends)")
        g = self.game
        column = int(action)
        if g.finished:
            raise RuntimeError("the episode has ended: call reset()")
        if not (0 <= column < 7) or not g.action_mask()[column]:
            # A full column: the episode ends here (terminated, no reward), flagged in info.
            self.game = None
            self._last = (g, column)
            obs = {"board": g.board.copy(), "next": int(g.next_disc), "rise": int(g.rise)}
            info = {"action_mask": np.zeros(7, dtype=np.int8), "score": g.score, "moves": g.moves,
                    "seed": g.seed, "illegal": True, "chain": 0}
            return obs, 0.0, True, False, info
        s = g.step(column)
        terminated = bool(s.game_over)
        truncated = bool(g.censored)
        return self._obs(), float(s.score), terminated, truncated, self._info(illegal=False, chain=s.chain)

    def render(self):
        if self.render_mode != "ansi" or self.game is None:
            return None
        rows = []
        for row in self.game.board:
            rows.append(" ".join({0: ".", 8: "#", 9: "x"}.get(int(c), str(int(c))) for c in row))
        rows.append(f"next {self.game.next_disc}  rise {self.game.rise}  score {self.game.score}")
        return "\n".join(rows)


class Drop7VectorEnv(gym.vector.VectorEnv):
    """``num_envs`` games stepped together in one Rust call per step. Episodes that end are
    reset on the next step (Gymnasium's next-step autoreset: that step ignores its action,
    returns the new game's first observation and reward 0)."""

    metadata = {"autoreset_mode": gym.vector.AutoresetMode.NEXT_STEP} if hasattr(gym.vector, "AutoresetMode") else {}

    def __init__(self, num_envs: int = 1, **kwargs):
        if kwargs:
            raise TypeError(f"Drop7VectorEnv takes no options besides num_envs: {sorted(kwargs)}")
        if num_envs < 1:
            raise ValueError("num_envs must be at least 1")
        self.num_envs = num_envs
        self.single_observation_space = _observation_space()
        self.single_action_space = spaces.Discrete(7)
        self.observation_space = gym.vector.utils.batch_space(self.single_observation_space, num_envs)
        self.action_space = gym.vector.utils.batch_space(self.single_action_space, num_envs)
        self.games = VecGames(np.zeros(num_envs, dtype=np.uint32))
        self._ended = np.zeros(num_envs, dtype=bool)
        self._rng = np.random.default_rng()
        self._was_reset = False

    def _obs(self):
        nexts, rises, masks = self.games.info()
        return {"board": self.games.boards().copy(), "next": nexts.astype(np.int64), "rise": rises.astype(np.int64)}, masks

    def reset(self, *, seed=None, options=None):
        """``seed`` an int: game ``i`` is headless seed ``seed + i``; a list: one seed each;
        None: seeds drawn from the environment's generator."""
        if seed is None:
            seeds = self._rng.integers(0, 2**32, size=self.num_envs)
        elif isinstance(seed, (int, np.integer)):
            self._rng = np.random.default_rng(seed)
            seeds = (np.arange(self.num_envs, dtype=np.uint64) + int(seed)) % 2**32
        else:
            seeds = np.asarray(seed, dtype=np.uint64)
            if seeds.shape != (self.num_envs,):
                raise ValueError(f"seed: expected {self.num_envs} seeds, got shape {seeds.shape}")
        for i, s in enumerate(seeds):
            self.games.reset(i, int(s))
        self._ended[:] = False
        self._was_reset = True
        obs, masks = self._obs()
        return obs, {"action_mask": masks}

    def step(self, actions):
        if not self._was_reset:
            # stepping first played headless seed 0 in every slot, silently
            raise RuntimeError("call reset() before step()")
        actions = np.asarray(actions, dtype=np.int64)
        if actions.shape != (self.num_envs,):
            raise ValueError(f"actions: expected shape ({self.num_envs},), got {actions.shape}")
        ended = self._ended
        # Games that ended last step start again and make no move this step.
        for i in np.flatnonzero(ended):
            self.games.reset(int(i), int(self._rng.integers(0, 2**32)))
        rewards, terminated, truncated, illegal = self.games.step(np.where(ended, -1, actions))
        self._ended = terminated | truncated
        obs, masks = self._obs()
        return obs, rewards.astype(np.float64), terminated, truncated, {"action_mask": masks, "illegal": illegal}
