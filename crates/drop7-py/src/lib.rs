//! The native half of the `drop7` Python package (issue 37): the simulator, batches in Rust
//! threads, the fair search and n-tuple models, over the libraries (`drop7`, `ntuple`) with no
//! rule of its own. Arrays cross as little-endian `bytes` that the pure-Python half
//! (`python/drop7/`) views as NumPy arrays without a copy, so this crate needs no NumPy
//! bindings and each batch call costs one Python round trip whatever its size.
//!
//! Errors a user can cause (a bad board, an illegal column, an unknown policy, a missing or
//! damaged model) are `ValueError`s carrying the command line's own message.

use drop7::board::Board;
use drop7::game::{Game as RustGame, PublicState, TraceRandom};
use drop7::runner::{RunOptions, play_game, run_block};
use drop7::search::{FairLeaf, SearchConfig, Searcher, TableKind};
use drop7::seeds::SeedBlock;
use ntuple::policy::{Models, PolicySpec};
use ntuple::tables::Tables;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};

fn value_error(e: impl std::fmt::Display) -> PyErr {
    PyValueError::new_err(e.to_string())
}

/// The 49 cells, row-major from the top row, in the reference's codes (0 empty, 1-7
/// numbered, 8 solid, 9 cracked).
fn cells(b: &Board) -> [u8; 49] {
    let mut out = [0u8; 49];
    for (i, c) in out.iter_mut().enumerate() {
        *c = b.cell(i / 7, i % 7);
    }
    out
}

/// A board from 49 cell codes (the same checks as `drop7 search --board`).
fn board_from_cells(cells: &[u8]) -> PyResult<Board> {
    if cells.len() != 49 {
        return Err(value_error(format!(
            "bad board: expected 49 cells, got {}",
            cells.len()
        )));
    }
    let digits: String = cells
        .iter()
        .map(|&c| {
            if c <= 9 {
                Ok(char::from(b'0' + c))
            } else {
                Err(value_error(format!(
                    "bad board: cell code {c} (codes are 0-9)"
                )))
            }
        })
        .collect::<PyResult<_>>()?;
    Board::parse_settled(&digits).map_err(value_error)
}

fn state(board: &str, next: u64, rise: u64) -> PyResult<PublicState> {
    let b = drop7::protocol::parse_board(board).map_err(value_error)?;
    PublicState::checked(b, next, rise).map_err(value_error)
}

/// One headless game.
#[pyclass(module = "drop7._drop7")]
#[derive(Clone)]
struct Game {
    g: RustGame,
}

#[pymethods]
impl Game {
    /// The game of headless seed `seed` (the reference's mapping, 0 to 2³² − 1).
    #[new]
    fn new(seed: u32) -> Self {
        Game {
            g: RustGame::new(seed),
        }
    }

    /// A game from a position: `board` as 49 digits (top row first), the next disc 1-7 and
    /// the moves until the rise 1-5; its discs and reveals continue from headless seed
    /// `seed`, move `moves`.
    #[staticmethod]
    #[pyo3(signature = (board, next, rise, seed = 0, moves = 0))]
    fn from_string(board: &str, next: u64, rise: u64, seed: u32, moves: u32) -> PyResult<Self> {
        let s = state(board, next, rise)?;
        Ok(Self::from_state(s, seed, moves))
    }

    /// As `from_string`, the board as 49 cell codes (bytes).
    #[staticmethod]
    #[pyo3(signature = (cells, next, rise, seed = 0, moves = 0))]
    fn from_cells(cells: &[u8], next: u64, rise: u64, seed: u32, moves: u32) -> PyResult<Self> {
        let b = board_from_cells(cells)?;
        let s = PublicState::checked(b, next, rise).map_err(value_error)?;
        Ok(Self::from_state(s, seed, moves))
    }

    /// Drop the next disc in `column`: (score gained, waves in the chain, numbered discs
    /// cleared, covers revealed, game over, board cleared, level advanced).
    fn step(&mut self, column: usize) -> PyResult<(u32, u32, u32, u32, bool, bool, bool)> {
        if self.g.finished() {
            return Err(value_error("the game is over"));
        }
        let o = self.g.play(column, &mut ()).map_err(value_error)?;
        Ok((
            o.score_delta,
            o.waves,
            o.cleared,
            o.revealed,
            o.game_over,
            o.cleared_board,
            o.level_advanced,
        ))
    }

    /// Bit `c` set when column `c` can take a disc.
    fn legal_mask(&self) -> u8 {
        if self.g.finished() {
            0
        } else {
            self.g.board.legal_mask()
        }
    }

    /// The 49 cell codes, top row first.
    fn cells<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &cells(&self.g.board))
    }

    /// The board as the reference writes it: 49 digits, top row first.
    fn board_string(&self) -> String {
        self.g.board.to_string()
    }

    #[getter]
    fn next_disc(&self) -> u8 {
        self.g.next
    }
    #[getter]
    fn rise(&self) -> u8 {
        self.g.moves_remaining
    }
    #[getter]
    fn score(&self) -> u64 {
        self.g.score
    }
    #[getter]
    fn level(&self) -> u32 {
        self.g.level
    }
    #[getter]
    fn moves(&self) -> u32 {
        self.g.moves_played
    }
    #[getter]
    fn seed(&self) -> u32 {
        self.g.seed
    }
    #[getter]
    fn game_over(&self) -> bool {
        self.g.game_over
    }
    /// Stopped by the 2,000-move research cap rather than by the board.
    #[getter]
    fn censored(&self) -> bool {
        self.g.censored()
    }
    #[getter]
    fn finished(&self) -> bool {
        self.g.finished()
    }

    fn copy(&self) -> Self {
        self.clone()
    }
}

impl Game {
    fn from_state(s: PublicState, seed: u32, moves: u32) -> Self {
        let mut g = RustGame::new(seed);
        g.board = s.board;
        g.next = s.next;
        g.moves_remaining = s.moves_remaining;
        g.moves_played = moves;
        Game { g }
    }
}

/// (rewards, terminated, truncated, illegal) of a batch step, as bytes.
type StepArrays<'py> = (
    Bound<'py, PyBytes>,
    Bound<'py, PyBytes>,
    Bound<'py, PyBytes>,
    Bound<'py, PyBytes>,
);

/// Many games stepped at once (a vector environment's engine): one call per step of all.
#[pyclass(module = "drop7._drop7")]
struct Batch {
    games: Vec<RustGame>,
}

#[pymethods]
impl Batch {
    /// One game per seed (`seeds`: little-endian u32).
    #[new]
    fn new(seeds: &[u8]) -> PyResult<Self> {
        if !seeds.len().is_multiple_of(4) {
            return Err(value_error("seeds: expected little-endian u32 bytes"));
        }
        let games = seeds
            .chunks_exact(4)
            .map(|c| RustGame::new(u32::from_le_bytes([c[0], c[1], c[2], c[3]])))
            .collect();
        Ok(Batch { games })
    }

    fn __len__(&self) -> usize {
        self.games.len()
    }

    /// Start game `i` again as headless seed `seed`.
    fn reset(&mut self, i: usize, seed: u32) -> PyResult<()> {
        let n = self.games.len();
        let g = self
            .games
            .get_mut(i)
            .ok_or_else(|| value_error(format!("index {i} is out of range for {n} games")))?;
        *g = RustGame::new(seed);
        Ok(())
    }

    /// Play column `actions[i]` (little-endian i64) in every game: (rewards i64, terminated
    /// u8, truncated u8, illegal u8). A negative action leaves that game as it is (reward 0,
    /// not ended); a column that is full or beyond 6, or a game that already ended, scores 0
    /// and ends the game there (terminated, illegal).
    fn step<'py>(&mut self, py: Python<'py>, actions: &[u8]) -> PyResult<StepArrays<'py>> {
        let n = self.games.len();
        if actions.len() != 8 * n {
            return Err(value_error(format!(
                "actions: expected {n} little-endian i64 values, got {} bytes",
                actions.len()
            )));
        }
        let mut reward = vec![0u8; 8 * n];
        let mut term = vec![0u8; n];
        let mut trunc = vec![0u8; n];
        let mut illegal = vec![0u8; n];
        for (i, g) in self.games.iter_mut().enumerate() {
            let a = i64::from_le_bytes(actions[8 * i..8 * i + 8].try_into().expect("8 bytes"));
            if a < 0 {
                // No move for this game this step (a vector environment's autoreset step).
                continue;
            }
            let col = usize::try_from(a).ok().filter(|&c| c < 7);
            let outcome = match col {
                Some(c) if !g.finished() => g.play(c, &mut ()).ok(),
                _ => None,
            };
            match outcome {
                Some(o) => {
                    reward[8 * i..8 * i + 8]
                        .copy_from_slice(&i64::from(o.score_delta).to_le_bytes());
                    term[i] = u8::from(g.game_over);
                    trunc[i] = u8::from(g.censored());
                }
                None => {
                    g.game_over = true;
                    term[i] = 1;
                    illegal[i] = 1;
                }
            }
        }
        Ok((
            PyBytes::new(py, &reward),
            PyBytes::new(py, &term),
            PyBytes::new(py, &trunc),
            PyBytes::new(py, &illegal),
        ))
    }

    /// Every board's 49 cell codes, game after game.
    fn cells<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        let mut out = Vec::with_capacity(49 * self.games.len());
        for g in &self.games {
            out.extend_from_slice(&cells(&g.board));
        }
        PyBytes::new(py, &out)
    }

    /// Next disc, rise clock and legal-column mask of every game (3 bytes a game).
    fn info<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        let mut out = Vec::with_capacity(3 * self.games.len());
        for g in &self.games {
            let mask = if g.finished() {
                0
            } else {
                g.board.legal_mask()
            };
            out.extend_from_slice(&[g.next, g.moves_remaining, mask]);
        }
        PyBytes::new(py, &out)
    }

    /// Scores so far (little-endian u64).
    fn scores<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        let out: Vec<u8> = self
            .games
            .iter()
            .flat_map(|g| g.score.to_le_bytes())
            .collect();
        PyBytes::new(py, &out)
    }
}

/// Per-game totals of a batch, as parallel little-endian arrays.
#[derive(Default)]
struct Totals {
    score: Vec<u8>,
    moves: Vec<u8>,
    cleared: Vec<u8>,
    revealed: Vec<u8>,
    censored: Vec<u8>,
}

/// A reference-random game (`drop7 bench`'s policy): (score, moves, cleared, revealed,
/// censored).
fn trace_random_game(seed: u32) -> (u64, u32, u64, u64, bool) {
    let mut g = RustGame::new(seed);
    let mut p = TraceRandom::new(seed);
    let (mut cleared, mut revealed) = (0u64, 0u64);
    while !g.finished() {
        let Some(c) = p.choose(&g.board) else {
            break;
        };
        let o = g.play(c, &mut ()).expect("the policy plays legal columns");
        cleared += u64::from(o.cleared);
        revealed += u64::from(o.revealed);
    }
    (g.score, g.moves_played, cleared, revealed, g.censored())
}

fn seeds_of(bytes: &[u8]) -> PyResult<Vec<u32>> {
    if !bytes.len().is_multiple_of(4) {
        return Err(value_error("seeds: expected little-endian u32 bytes"));
    }
    Ok(bytes
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect())
}

/// Refuse a batch before it starts when it is larger than the command line allows
/// (`MAX_BLOCK_GAMES`, a ValueError) or would not fit in the memory left with
/// `bytes_per_game` kept per game (a MemoryError): allocating it anyway aborted the
/// interpreter (issue 68, serious item 3).
fn check_batch(games: u64, bytes_per_game: u64) -> PyResult<()> {
    use drop7::screen::MAX_BLOCK_GAMES;
    if games > MAX_BLOCK_GAMES {
        return Err(PyValueError::new_err(format!(
            "{games} games: at most {MAX_BLOCK_GAMES} per batch"
        )));
    }
    let need = games.saturating_mul(bytes_per_game);
    if let Some(free) = drop7::memory::shortfall(need) {
        return Err(pyo3::exceptions::PyMemoryError::new_err(format!(
            "{games} games need about {} MB and {} MB is free (1 GB is kept spare)",
            need >> 20,
            free >> 20
        )));
    }
    Ok(())
}

/// Wait for `done` with the GIL released, checking for signals (Ctrl-C) every 50 ms; on one,
/// raise `stop` for the workers and return the signal's exception once they are told.
fn wait_interruptibly(py: Python<'_>, stop: &AtomicBool, done: impl Fn() -> bool) -> PyResult<()> {
    while !done() {
        py.detach(|| std::thread::sleep(std::time::Duration::from_millis(50)));
        if let Err(e) = py.check_signals() {
            stop.store(true, Relaxed);
            return Err(e);
        }
    }
    Ok(())
}

/// Run `work` on its own thread and wait for its answer without the GIL, checking for
/// signals (Ctrl-C) every 50 ms; on one, raise `stop` (which `work` must obey) and return
/// the signal's exception once `work` has ended. A quick `work` returns at once: the answer
/// wakes the wait, no polling interval is paid.
fn run_interruptibly<T: Send>(
    py: Python<'_>,
    stop: &AtomicBool,
    work: impl FnOnce() -> T + Send,
) -> PyResult<T> {
    use std::sync::mpsc::RecvTimeoutError;
    std::thread::scope(|scope| {
        let (tx, mut rx) = std::sync::mpsc::channel();
        scope.spawn(move || {
            let _ = tx.send(work());
        });
        loop {
            let got;
            (rx, got) = py.detach(move || {
                let got = rx.recv_timeout(std::time::Duration::from_millis(50));
                (rx, got)
            });
            match got {
                Ok(v) => return Ok(v),
                Err(RecvTimeoutError::Timeout) => {
                    if let Err(e) = py.check_signals() {
                        stop.store(true, Relaxed);
                        return Err(e);
                    }
                }
                Err(RecvTimeoutError::Disconnected) => {
                    return Err(pyo3::exceptions::PyRuntimeError::new_err(
                        "the search thread ended without an answer",
                    ));
                }
            }
        }
    })
}

fn threads_for(threads: usize, n: usize) -> usize {
    let cores = std::thread::available_parallelism().map_or(1, |c| c.get());
    let t = if threads == 0 { cores } else { threads };
    t.clamp(1, n.max(1))
}

/// Play one game per seed under `policy` (any `drop7 play` name, or `trace-random`, the
/// reference's random stream that `drop7 bench` plays) in `threads` Rust threads (0 = all
/// cores): (score u64, moves u32, cleared u64, revealed u64, censored u8), seed order.
#[pyfunction]
#[pyo3(signature = (policy, seeds, threads = 0, model = None))]
fn play_batch<'py>(
    py: Python<'py>,
    policy: &str,
    seeds: &[u8],
    threads: usize,
    model: Option<PathBuf>,
) -> PyResult<Vec<Bound<'py, PyBytes>>> {
    let seeds = seeds_of(seeds)?;
    // The results (five numbers a game, twice: Rust's and the arrays handed to Python).
    check_batch(seeds.len() as u64, 128)?;
    let factory = if policy == "trace-random" {
        None
    } else {
        let spec: PolicySpec = policy.parse().map_err(value_error)?;
        let mut models = Models::new(model);
        Some(spec.factory(&mut models).map_err(value_error)?)
    };
    drop7::runner::check_threads(threads).map_err(value_error)?;
    let t = threads_for(threads, seeds.len());
    let per = seeds.len().div_ceil(t).max(1);
    let stop = AtomicBool::new(false);
    let results: Vec<(u64, u32, u64, u64, bool)> = std::thread::scope(|s| {
        let handles: Vec<_> = seeds
            .chunks(per)
            .map(|part| {
                let factory = factory.clone();
                let stop = &stop;
                s.spawn(move || {
                    let mut policy = factory.as_ref().map(|f| f());
                    part.iter()
                        .take_while(|_| !stop.load(Relaxed))
                        .map(|&seed| match policy.as_mut() {
                            None => trace_random_game(seed),
                            Some(p) => {
                                let r = play_game(seed, p.as_mut());
                                (
                                    r.score,
                                    r.moves,
                                    r.numbered_cleared,
                                    r.covers_revealed,
                                    r.censored,
                                )
                            }
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        // This thread waits without the GIL and looks for Ctrl-C between waits: the games
        // stop at their next game boundary and the call raises KeyboardInterrupt.
        let interrupted = wait_interruptibly(py, &stop, || handles.iter().all(|h| h.is_finished()));
        let games: Vec<_> = handles
            .into_iter()
            .flat_map(|h| h.join().expect("a game thread panicked"))
            .collect();
        interrupted.map(|()| games)
    })?;
    let mut t = Totals::default();
    for (score, moves, cleared, revealed, censored) in results {
        t.score.extend_from_slice(&score.to_le_bytes());
        t.moves.extend_from_slice(&moves.to_le_bytes());
        t.cleared.extend_from_slice(&cleared.to_le_bytes());
        t.revealed.extend_from_slice(&revealed.to_le_bytes());
        t.censored.push(u8::from(censored));
    }
    Ok([t.score, t.moves, t.cleared, t.revealed, t.censored]
        .iter()
        .map(|b| PyBytes::new(py, b))
        .collect())
}

/// `drop7 play --policy POLICY --seeds START:COUNT`: the per-game records as JSON lines,
/// seed order (what `--out` writes; `wallSeconds` differs run to run).
#[pyfunction]
#[pyo3(signature = (policy, seeds, threads = 0, model = None))]
fn play(
    py: Python<'_>,
    policy: &str,
    seeds: &str,
    threads: usize,
    model: Option<PathBuf>,
) -> PyResult<String> {
    let block: SeedBlock = seeds.parse().map_err(value_error)?;
    // A JSON record of about 2 KB a game, kept as records and again as the text returned.
    check_batch(block.count(), 4096)?;
    let spec: PolicySpec = policy.parse().map_err(value_error)?;
    let mut models = Models::new(model);
    let factory = spec.factory(&mut models).map_err(value_error)?;
    // The games run on their own thread; this one waits and checks for Ctrl-C.
    struct Stoppable(AtomicBool);
    impl drop7::runner::RunObserver for Stoppable {
        fn stop(&self) -> bool {
            self.0.load(Relaxed)
        }
    }
    let observer = Stoppable(AtomicBool::new(false));
    let run = std::thread::scope(|s| {
        let h = s.spawn(|| {
            run_block(
                &factory,
                block,
                &RunOptions { threads, out: None },
                &observer,
            )
        });
        let waited = wait_interruptibly(py, &observer.0, || h.is_finished());
        let run = h.join().expect("the run's thread panicked");
        waited.and_then(|()| run.map_err(value_error))
    })?;
    let mut out = String::new();
    for r in &run.records {
        out.push_str(&serde_json::to_string(r).map_err(value_error)?);
        out.push('\n');
    }
    Ok(out)
}

/// An n-tuple model (`D7NTUP02`, checksum verified on load).
#[pyclass(module = "drop7._drop7")]
struct Model {
    tables: Arc<Tables>,
    sha256: String,
}

#[pymethods]
impl Model {
    #[new]
    fn new(path: PathBuf) -> PyResult<Self> {
        // the library's errors name the path already
        let (tables, info) = ntuple::model::load(&path, false).map_err(value_error)?;
        Ok(Model {
            tables: Arc::new(tables),
            sha256: info.sha256,
        })
    }

    #[getter]
    fn sha256(&self) -> String {
        self.sha256.clone()
    }

    /// The active table indices of each (board, rise): `cells` is 49 codes a board, `rises`
    /// one byte a board. Returns (indices as little-endian u64, indices per board); rows are
    /// padded with 2⁶⁴ − 1 to the longest.
    fn features<'py>(
        &self,
        py: Python<'py>,
        cells: &[u8],
        rises: &[u8],
    ) -> PyResult<(Bound<'py, PyBytes>, usize)> {
        let boards = boards_of(cells, rises)?;
        let lists: Vec<ntuple::features::Active> = boards
            .iter()
            .map(|(b, r)| ntuple::features::active(&self.tables.layout, b, *r))
            .collect();
        let width = lists.iter().map(|a| a.len).max().unwrap_or(0);
        let mut out = Vec::with_capacity(8 * width * lists.len());
        for a in &lists {
            for k in 0..width {
                let v = a.as_slice().get(k).copied().unwrap_or(u64::MAX);
                out.extend_from_slice(&v.to_le_bytes());
            }
        }
        Ok((PyBytes::new(py, &out), width))
    }

    /// The model's value of each (board, rise) in points (table value × 17,000), as
    /// little-endian f64.
    fn values<'py>(
        &self,
        py: Python<'py>,
        cells: &[u8],
        rises: &[u8],
    ) -> PyResult<Bound<'py, PyBytes>> {
        let boards = boards_of(cells, rises)?;
        let out: Vec<u8> = boards
            .iter()
            .flat_map(|(b, r)| {
                let v =
                    f64::from(ntuple::play::value(&self.tables, b, *r)) * ntuple::play::VALUE_SCALE;
                v.to_le_bytes()
            })
            .collect();
        Ok(PyBytes::new(py, &out))
    }
}

fn boards_of(cells: &[u8], rises: &[u8]) -> PyResult<Vec<(Board, u8)>> {
    if cells.len() != 49 * rises.len() {
        return Err(value_error(format!(
            "{} cell bytes for {} rises: expected 49 a board",
            cells.len(),
            rises.len()
        )));
    }
    cells
        .chunks_exact(49)
        .zip(rises)
        .map(|(c, &r)| {
            let b = board_from_cells(c)?;
            let s = PublicState::checked(b, 1, u64::from(r)).map_err(value_error)?;
            Ok((s.board, s.moves_remaining))
        })
        .collect()
}

/// The fair expectimax (`drop7 search`): the decision as JSON (column, q per column in the
/// original coordinates, work, nodes, ...). `table`: "default" (the deployment table) or
/// "none" (the reference's cache-free work counts); `max_work` overrides the work cap.
/// With `model`, the n-tuple leaf instead of the fair leaf (`ntuple-dNsK`).
#[pyfunction]
#[pyo3(signature = (board, next, rise, depth = 3, samples = 7, table = "default", max_work = None, model = None))]
#[allow(clippy::too_many_arguments)]
fn search(
    py: Python<'_>,
    board: &str,
    next: u64,
    rise: u64,
    depth: u32,
    samples: u32,
    table: &str,
    max_work: Option<u64>,
    model: Option<PyRef<'_, Model>>,
) -> PyResult<String> {
    let s = state(board, next, rise)?;
    if !(1..=8).contains(&depth) || !(1..=64).contains(&samples) {
        return Err(value_error(format!(
            "bad search d{depth}s{samples}: depth is 1-8 and samples 1-64"
        )));
    }
    let mut cfg = SearchConfig::fair(depth, samples);
    match table {
        "default" => {}
        "none" => cfg.table = TableKind::None,
        t => {
            return Err(value_error(format!(
                "table {t}: expected \"default\" or \"none\""
            )));
        }
    }
    if let Some(w) = max_work {
        cfg.max_work = w;
    }
    let tables = model.map(|m| Arc::clone(&m.tables));
    // The search runs on its own thread while this one waits without the GIL, looking for
    // Ctrl-C: a deep search (minutes) stops at its next node of depth 2 and more, and the
    // call raises KeyboardInterrupt (issue 68, defect 5).
    let stop = Arc::new(AtomicBool::new(false));
    let stop_search = Arc::clone(&stop);
    let d = run_interruptibly(py, &stop, move || match tables {
        None => Searcher::new(FairLeaf::default(), cfg)
            .with_stop(stop_search)
            .decide(&s),
        Some(t) => Searcher::new(ntuple::play::NTupleLeaf::new(t), cfg)
            .with_stop(stop_search)
            .decide(&s),
    })?;
    let v = drop7::protocol::decision_json(&s, &cfg, &d);
    Ok(v.to_string())
}

/// `drop7 step`: one move from a position with a given reveal seed, the result as the
/// step vectors write it (JSON).
#[pyfunction]
fn step_state(
    board: &str,
    next: u64,
    rise: u64,
    column: usize,
    reveal_seed: u32,
) -> PyResult<String> {
    // The step vectors include unsettled boards: parse without the settled check, as
    // `drop7 step` does.
    let b = Board::parse(board).map_err(value_error)?;
    // Refused, not wrapped to a byte (`next=259` used to play disc 3).
    let byte = |v: u64, what: &str| {
        u8::try_from(v).map_err(|_| PyValueError::new_err(format!("{what} {v}: out of range")))
    };
    let (next, rise) = (byte(next, "next")?, byte(rise, "rise")?);
    let r = drop7::trace::step(&b, next, rise, column, reveal_seed).map_err(value_error)?;
    serde_json::to_string(&r).map_err(value_error)
}

/// Totals of reference-random games on seeds `start`.. (`drop7 bench --start S --games N`):
/// (games, moves, score).
#[pyfunction]
fn bench_totals(py: Python<'_>, start: u32, games: u64) -> PyResult<(u64, u64, u64)> {
    let block = SeedBlock::new(start, games).map_err(value_error)?;
    // In slices of 20,000 games (about a second), Ctrl-C checked between them: a block of
    // millions can be stopped.
    const SLICE: u64 = 20_000;
    let (mut g, mut m, mut sc) = (0u64, 0u64, 0u64);
    let mut done = 0u64;
    while done < block.count() {
        let n = SLICE.min(block.count() - done);
        let part =
            SeedBlock::new(block.start().wrapping_add(done as u32), n).map_err(value_error)?;
        let t = py.detach(|| drop7::runner::trace_random_block(part));
        (g, m, sc) = (g + t.games, m + t.moves, sc + t.score);
        done += n;
        py.check_signals()?;
    }
    Ok((g, m, sc))
}

#[pymodule]
fn _drop7(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Game>()?;
    m.add_class::<Batch>()?;
    m.add_class::<Model>()?;
    m.add_function(wrap_pyfunction!(play_batch, m)?)?;
    m.add_function(wrap_pyfunction!(play, m)?)?;
    m.add_function(wrap_pyfunction!(search, m)?)?;
    m.add_function(wrap_pyfunction!(step_state, m)?)?;
    m.add_function(wrap_pyfunction!(bench_totals, m)?)?;
    Ok(())
}
