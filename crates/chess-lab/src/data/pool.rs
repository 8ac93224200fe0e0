//! `pool`: calibration position pools (docs/design/chess-DESIGN.md §2, issue 13 item 9).
//!
//! `pool build` plays fixed-node self-play games from the openings of a book, keeps the
//! quiet positions of each game (not in check, the engine's move is quiet, no capture wins
//! material by SEE), samples at most `--per-game-bucket` of them per material bucket and
//! appends them to a raw candidate file, one whole game at a time. A rerun with the same
//! raw file resumes: complete games are kept, a torn last game is cut off, and only the
//! missing game ids are played. Every game is deterministic (one thread, a fresh table and
//! fresh histories, a fixed node budget), so the raw file's content does not depend on
//! `--threads` or on interruptions, only its line order does.
//!
//! `pool split` (also run at the end of `build`) turns the raw file into the pools: games are
//! assigned to the calibration or the hold-out side by a seeded hash of the game id (one game
//! in four goes to the hold-out side), positions are deduplicated by Zobrist key across both
//! pools (so the pools are disjoint), and each pool is stratified evenly over the eight
//! material buckets (a bucket with too few candidates gives all it has and the others share
//! its shortfall). Lines are written round-robin over the buckets, so any prefix of a pool
//! (`--limit N` in `calibrate`) is itself stratified.

use chess::board::{
    Board, Position, insufficient_material, is_tactical, legal_moves, parse_epd, parse_fen, to_fen,
};
use chess::eval::material_bucket;
use chess::search::params::MATE_BOUND;
use chess::search::see::see_ge;
use chess::search::smp::{SearchOptions, search};
use chess::search::time::Limits;
use chess::search::tt::Tt;
use chess::search::{Probe, Worker, has_legal_move};
use indicatif::{ProgressBar, ProgressStyle};
use std::collections::{BTreeMap, HashSet};
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::Relaxed};
use std::time::Instant;

/// Number of material buckets (`eval::material_bucket`).
pub const BUCKETS: usize = 8;

/// `actuary pool <build|split>`.
#[derive(Debug, clap::Args)]
pub struct PoolArgs {
    #[command(subcommand)]
    pub cmd: PoolCmd,
}

#[derive(Debug, clap::Subcommand)]
pub enum PoolCmd {
    /// Play fixed-node self-play games into a raw candidate file (resumable), then split it
    /// into a stratified calibration pool and a disjoint hold-out pool.
    Build(BuildArgs),
    /// Split an existing raw candidate file into the two pools (no games are played).
    Split(SplitArgs),
}

/// Where the pools go and how big they are.
#[derive(Debug, Clone, clap::Args)]
pub struct SplitOpts {
    /// Calibration pool to write (EPD, one position per line).
    #[arg(long, value_name = "FILE")]
    pub calib: PathBuf,
    /// Positions in the calibration pool.
    #[arg(long, value_name = "N", default_value_t = 30_000)]
    pub calib_size: usize,
    /// Hold-out pool to write (disjoint from the calibration pool, from other games).
    #[arg(long, value_name = "FILE")]
    pub holdout: PathBuf,
    /// Positions in the hold-out pool.
    #[arg(long, value_name = "N", default_value_t = 10_000)]
    pub holdout_size: usize,
    /// Seed of the game-to-pool assignment and of the sampling inside each bucket.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
}

/// `actuary pool build`.
#[derive(Debug, clap::Args)]
pub struct BuildArgs {
    /// Number of games: game ids 0..N are played (ids already complete in --raw are skipped).
    #[arg(long, value_name = "N", default_value_t = 6000, value_parser = clap::value_parser!(u32).range(1..))]
    pub games: u32,
    /// Node budget of every move of the self-play games.
    #[arg(long, value_name = "N", default_value_t = 5000, value_parser = clap::value_parser!(u64).range(1..))]
    pub nodes: u64,
    /// Games played at once (one search thread each).
    #[arg(long, value_name = "T", default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..=256))]
    pub threads: u64,
    /// Opening book (EPD/FEN per line); game g starts from line `perm[g]` of a seeded shuffle.
    #[arg(
        long,
        value_name = "FILE",
        default_value = "data/chess/books/2moves_v1.epd"
    )]
    pub book: PathBuf,
    /// Raw candidate file, appended one game at a time; rerunning resumes from it.
    #[arg(long, value_name = "FILE")]
    pub raw: PathBuf,
    /// Quiet positions sampled per game and material bucket.
    #[arg(long, value_name = "K", default_value_t = 3, value_parser = clap::value_parser!(u64).range(1..=64))]
    pub per_game_bucket: u64,
    /// Transposition table per game thread, in MB (cleared before every game).
    #[arg(long, value_name = "MB", default_value_t = 16, value_parser = clap::value_parser!(u64).range(1..=4096))]
    pub hash: u64,
    #[command(flatten)]
    pub split: SplitOpts,
}

/// `actuary pool split`.
#[derive(Debug, clap::Args)]
pub struct SplitArgs {
    /// Raw candidate file written by `pool build`.
    #[arg(long, value_name = "FILE")]
    pub raw: PathBuf,
    /// Use only games 0..N of the raw file [default: every complete game].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub games: Option<u32>,
    #[command(flatten)]
    pub split: SplitOpts,
}

/// Why a pool could not be built or read.
#[derive(Debug, thiserror::Error)]
pub enum PoolError {
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{}:{line}: {message}", path.display())]
    Line {
        path: PathBuf,
        line: usize,
        message: String,
    },
    #[error(
        "{}: made with different settings ({found}); use a new --raw file or the same settings ({want})",
        path.display()
    )]
    Settings {
        path: PathBuf,
        found: String,
        want: String,
    },
    #[error("{}: no positions", path.display())]
    Empty { path: PathBuf },
}

fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> PoolError + '_ {
    move |source| PoolError::Io {
        path: path.to_owned(),
        source,
    }
}

/// [`io_err`] for a [`fileio::FileError`]: the path is named once, by `PoolError`.
fn file_err(path: &Path) -> impl FnOnce(fileio::FileError) -> PoolError + '_ {
    move |e| io_err(path)(e.into_io())
}

/// The most bytes a pool or raw candidate file may have: pools and raw files are a few MB to
/// a few hundred MB of text, and a datagen file (a few hundred MB at most) may be read as a
/// pool with `--limit`; 4 GB is the limit `tune` reads such files with.
const MAX_POOL_BYTES: u64 = 4 << 30;

/// The most bytes an opening book (EPD or FEN lines) may have: real books are kilobytes to a
/// few MB; 256 MB is far past any of them.
const MAX_BOOK_BYTES: u64 = 256 << 20;

impl PoolArgs {
    pub fn run(&self) -> Result<ExitCode, crate::LabError> {
        match &self.cmd {
            PoolCmd::Build(a) => {
                let start = Instant::now();
                let played = build_raw(a)?;
                eprintln!(
                    "pool build: {played} games played in {:.1} s",
                    start.elapsed().as_secs_f64()
                );
                split(&a.raw, &a.split, Some(a.games))?;
            }
            PoolCmd::Split(a) => split(&a.raw, &a.split, a.games)?,
        }
        Ok(ExitCode::SUCCESS)
    }
}

/// SplitMix64: the small deterministic generator behind every seeded choice here.
#[derive(Clone, Debug)]
pub struct SplitMix(pub u64);

impl SplitMix {
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(chess::board::GOLDEN_GAMMA);
        chess::board::mix64(self.0)
    }
    /// Uniform on `0..n` (n > 0; the modulo bias is below 2^-40 for the sizes used here).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }
    pub fn shuffle<T>(&mut self, v: &mut [T]) {
        for i in (1..v.len()).rev() {
            let j = self.below(i + 1);
            v.swap(i, j);
        }
    }
}

/// One sampled quiet position of a game.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Candidate {
    pub game: u32,
    pub ply: u32,
    pub bucket: u8,
    pub fen: String,
}

/// A finished self-play game and the candidates sampled from it.
#[derive(Clone, Debug)]
pub struct GameRecord {
    pub game: u32,
    pub plies: u32,
    pub result: &'static str,
    pub candidates: Vec<Candidate>,
}

/// Game length cap (plies after the opening).
pub const MAX_GAME_PLIES: u32 = 400;
/// The win adjudication of `pool` and the text `datagen` ([`Adjudication::WINS_ONLY`]): the
/// last [`ADJUDICATE_PLIES`] searches in a row all scored |score| ≥ this.
pub const ADJUDICATE_SCORE: i32 = 2000;
pub const ADJUDICATE_PLIES: u32 = 8;

/// Is this position quiet enough for calibration: not in check, the engine's chosen move is
/// quiet, and no capture wins material by SEE?
pub fn is_quiet(board: &Board, best: chess::board::Move) -> bool {
    board.checkers().is_empty()
        && !is_tactical(board, best)
        && !legal_moves(board)
            .into_iter()
            .any(|m| chess::board::is_capture(board, m) && see_ge(board, m, 1))
}

/// How a self-play game ended.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GameEnd {
    /// Plies played from the start position.
    pub plies: u32,
    /// Why it ended: `mate`, `stalemate`, `draw-50`, `draw-material`, `draw-repetition`,
    /// `adjudicated` (a win by the [`Adjudication`]'s win rule), `adjudicated-draw` or
    /// `draw-cap` (the [`Adjudication`]'s `max_plies`).
    pub reason: &'static str,
    /// White's score: 1, ½ or 0 (a capped game counts as a draw).
    pub white_score: f32,
}

/// When a self-play game is decided before its natural end.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Adjudication {
    /// A win: the last `win_plies` searches in a row (both sides', one a ply; their signs
    /// are not compared) all scored |score| ≥ `win_score`. The side the last score favours
    /// wins.
    pub win_score: i32,
    pub win_plies: u32,
    /// A draw: at least `draw_after` plies played and the last `draw_plies` searches in a
    /// row all scored |score| ≤ `draw_score` (the run may begin before ply `draw_after`;
    /// `draw_plies` 0: never).
    pub draw_score: i32,
    pub draw_plies: u32,
    pub draw_after: u32,
    /// A game still going after this many plies is a draw (`draw-cap`), even if the last
    /// move mates. Plies count from `start` (a corpus game's book and random plies do not).
    pub max_plies: u32,
}

impl Adjudication {
    /// What `pool` and the text `datagen` have always used: wins only.
    pub const WINS_ONLY: Adjudication = Adjudication {
        win_score: ADJUDICATE_SCORE,
        win_plies: ADJUDICATE_PLIES,
        draw_score: 0,
        draw_plies: 0,
        draw_after: 0,
        max_plies: MAX_GAME_PLIES,
    };
}

/// A move's node budget in self-play: the hard limit, and the soft one past which no new
/// iteration starts (`None`: the hard limit alone, as every chunk before `--soft-nodes`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NodeBudget {
    pub hard: u64,
    pub soft: Option<u64>,
}

impl NodeBudget {
    /// `nodes` per move, a hard limit.
    pub fn hard(nodes: u64) -> Self {
        NodeBudget {
            hard: nodes,
            soft: None,
        }
    }
}

/// Play one game from `start` with `budget` per move (one thread, `worker` and `tt` cleared
/// first, so the game is a function of its inputs), calling `on_move(board, best, score,
/// ply)` before each move is played (`score` from the side to move's view). `opts` chooses
/// the evaluation (the engine's default, the net; `net: None` for the hand evaluation).
///
/// Before each search the position is checked in this order: no legal move (`mate` or
/// `stalemate`), halfmove clock ≥ 100 (`draw-50`), insufficient material, repetition. After
/// each move: win adjudication, then draw adjudication, then the ply cap. So a last move
/// that mates or completes a repetition ends the game as the adjudication or the cap says.
/// Repetition: the current Zobrist key (cozy-chess's: it includes the en-passant file after
/// every double push, capture possible or not) equals at least two keys of the positions
/// before it since the last capture or pawn move, those of `start.history` included.
pub fn self_play(
    start: &Position,
    budget: NodeBudget,
    adj: &Adjudication,
    opts: &SearchOptions,
    worker: &mut Worker,
    tt: &Tt,
    mut on_move: impl FnMut(&Board, chess::board::Move, i32, u32),
) -> GameEnd {
    let mut pos = start.clone();
    worker.clear();
    tt.clear();
    let stop = AtomicBool::new(false);
    let limits = Limits {
        nodes: Some(budget.hard),
        soft_nodes: budget.soft,
        ..Default::default()
    };
    let mut decided = 0u32;
    let mut level = 0u32;
    let mut reason = "draw-cap";
    let mut white_score = 0.5;
    let mut plies = 0;
    while plies < adj.max_plies {
        let b = &pos.board;
        let white = b.side_to_move() == chess::board::Color::White;
        if !has_legal_move(b) {
            if b.checkers().is_empty() {
                reason = "stalemate";
            } else {
                reason = "mate";
                white_score = if white { 0.0 } else { 1.0 };
            }
            break;
        }
        if b.halfmove_clock() >= 100 {
            reason = "draw-50";
            break;
        }
        if insufficient_material(b) {
            reason = "draw-material";
            break;
        }
        let key = b.hash();
        if pos.history.iter().filter(|&&k| k == key).count() >= 2 {
            reason = "draw-repetition";
            break;
        }
        stop.store(false, Relaxed);
        let r = search(&pos, &limits, opts, std::slice::from_mut(worker), tt, &stop);
        let Some(best) = r.best_move else { break };
        on_move(b, best, r.score, plies);
        decided = if r.score.abs() >= adj.win_score {
            decided + 1
        } else {
            0
        };
        level = if r.score.abs() <= adj.draw_score {
            level + 1
        } else {
            0
        };
        let winning_white = (r.score > 0) == white;
        pos.play(best);
        plies += 1;
        if decided >= adj.win_plies {
            reason = "adjudicated";
            white_score = if winning_white { 1.0 } else { 0.0 };
            break;
        }
        if adj.draw_plies > 0 && plies >= adj.draw_after && level >= adj.draw_plies {
            reason = "adjudicated-draw";
            break;
        }
    }
    GameEnd {
        plies,
        reason,
        white_score,
    }
}

/// Play game `game` from `opening` with `nodes` per move; sample up to `per_bucket` quiet
/// positions per material bucket (reservoir sampling seeded by `seed` and the game id).
pub fn play_game(
    game: u32,
    opening: &Board,
    nodes: u64,
    per_bucket: usize,
    seed: u64,
    worker: &mut Worker,
    tt: &Tt,
) -> GameRecord {
    let mut rng = SplitMix(seed ^ (u64::from(game) + 1).wrapping_mul(0xA24B_AED4_963E_E407));
    let start = Position {
        board: opening.clone(),
        history: Vec::new(),
    };
    let mut seen = [0usize; BUCKETS];
    let mut kept: [Vec<Candidate>; BUCKETS] = Default::default();
    // Pools calibrate the hand evaluation's lazy tiers: its games are the hand evaluation's.
    let hce = SearchOptions {
        net: None,
        ..Default::default()
    };
    let end = self_play(
        &start,
        NodeBudget::hard(nodes),
        &Adjudication::WINS_ONLY,
        &hce,
        worker,
        tt,
        |b, best, score, ply| {
            if score.abs() < MATE_BOUND && is_quiet(b, best) {
                let bucket = material_bucket(b);
                seen[bucket] += 1;
                let cand = Candidate {
                    game,
                    ply,
                    bucket: bucket as u8,
                    fen: to_fen(b),
                };
                if kept[bucket].len() < per_bucket {
                    kept[bucket].push(cand);
                } else {
                    let j = rng.below(seen[bucket]);
                    if j < per_bucket {
                        kept[bucket][j] = cand;
                    }
                }
            }
        },
    );
    let mut candidates: Vec<Candidate> = kept.into_iter().flatten().collect();
    candidates.sort_by_key(|c| c.ply);
    GameRecord {
        game,
        plies: end.plies,
        result: end.reason,
        candidates,
    }
}

const RAW_MAGIC: &str = "# actuary pool raw v1";

fn raw_settings(a: &BuildArgs) -> String {
    format!(
        "nodes={} per_game_bucket={} seed={} book={} eval={}",
        a.nodes,
        a.per_game_bucket,
        a.split.seed,
        a.book.display(),
        chess::eval::params::embedded_id()
    )
}

/// The complete games of a raw file, and the byte length of its complete prefix.
struct RawFile {
    settings: Option<String>,
    games: BTreeMap<u32, Vec<Candidate>>,
    complete_len: u64,
}

fn read_raw(path: &Path) -> Result<RawFile, PoolError> {
    let text = match fileio::read_to_string(path, MAX_POOL_BYTES) {
        Ok(t) => t,
        Err(fileio::FileError::Io { source, .. })
            if source.kind() == std::io::ErrorKind::NotFound =>
        {
            return Ok(RawFile {
                settings: None,
                games: BTreeMap::new(),
                complete_len: 0,
            });
        }
        Err(e) => return Err(file_err(path)(e)),
    };
    let bad = |line: usize, message: String| PoolError::Line {
        path: path.to_owned(),
        line,
        message,
    };
    let mut out = RawFile {
        settings: None,
        games: BTreeMap::new(),
        complete_len: 0,
    };
    let mut pending: BTreeMap<u32, Vec<Candidate>> = BTreeMap::new();
    let mut offset = 0u64;
    for (i, line) in text.split_inclusive('\n').enumerate() {
        offset += line.len() as u64;
        if !line.ends_with('\n') {
            break; // torn last line: dropped on resume
        }
        let line = line.trim_end();
        if let Some(rest) = line.strip_prefix(RAW_MAGIC) {
            out.settings = Some(rest.trim().to_owned());
            out.complete_len = offset;
            continue;
        }
        let f: Vec<&str> = line.split('\t').collect();
        let num = |s: &str, what: &str| -> Result<u64, PoolError> {
            s.parse::<u64>()
                .map_err(|_| bad(i + 1, format!("`{s}` is not a valid {what}")))
        };
        match f.first().copied() {
            Some("c") if f.len() == 5 => {
                let bucket = num(f[3], "bucket")?;
                if bucket as usize >= BUCKETS {
                    return Err(bad(i + 1, format!("bucket {bucket} outside 0..8")));
                }
                pending
                    .entry(num(f[1], "game id")? as u32)
                    .or_default()
                    .push(Candidate {
                        game: num(f[1], "game id")? as u32,
                        ply: num(f[2], "ply")? as u32,
                        bucket: bucket as u8,
                        fen: f[4].to_owned(),
                    });
            }
            Some("g") if f.len() == 5 => {
                let game = num(f[1], "game id")? as u32;
                let n = num(f[4], "candidate count")? as usize;
                let cands = pending.remove(&game).unwrap_or_default();
                if cands.len() != n {
                    return Err(bad(
                        i + 1,
                        format!("game {game} says {n} candidates, file has {}", cands.len()),
                    ));
                }
                out.games.insert(game, cands);
                out.complete_len = offset;
            }
            _ => {
                return Err(bad(
                    i + 1,
                    "expected `c<TAB>game<TAB>ply<TAB>bucket<TAB>fen` or `g<TAB>game<TAB>plies<TAB>result<TAB>count`".into(),
                ));
            }
        }
    }
    Ok(out)
}

/// Read the book's positions (FEN or EPD per line; blank lines and `#` comments skipped).
pub fn read_positions(path: &Path) -> Result<Vec<Board>, PoolError> {
    let text = fileio::read_to_string(path, MAX_BOOK_BYTES).map_err(file_err(path))?;
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let t = line.trim();
        if t.is_empty() || t.starts_with('#') {
            continue;
        }
        let epd = parse_epd(t).map_err(|e| PoolError::Line {
            path: path.to_owned(),
            line: i + 1,
            message: e.to_string(),
        })?;
        out.push(epd.board);
    }
    if out.is_empty() {
        return Err(PoolError::Empty {
            path: path.to_owned(),
        });
    }
    Ok(out)
}

/// How [`search_pool`] searches.
pub struct PoolSearch<'a> {
    pub depth: i32,
    pub threads: usize,
    pub hash_mb: usize,
    pub progress: bool,
    pub opts: &'a SearchOptions,
}

/// Search every position to a fixed depth, `threads` positions at once, each with a cleared
/// table and histories (so a position's tree does not depend on the others or on
/// `threads`). Each thread gets a worker and a state from `init`; `each(worker, state, index,
/// position, nodes)` runs after every search (and `begin` before it). Returns every thread's
/// worker and state, and the total nodes.
pub fn search_pool<P: Probe + Send, S: Send>(
    positions: &[PoolPosition],
    how: &PoolSearch,
    init: impl Fn() -> (Worker<P>, S) + Sync,
    begin: impl Fn(&mut Worker<P>, usize, &PoolPosition) + Sync,
    each: impl Fn(&mut Worker<P>, &mut S, u64) + Sync,
) -> (Vec<(Worker<P>, S)>, u64) {
    let bar = if how.progress {
        progress(positions.len() as u64, "positions")
    } else {
        ProgressBar::hidden()
    };
    bar.set_prefix(format!("depth {}", how.depth));
    let next = AtomicUsize::new(0);
    let nodes = std::sync::atomic::AtomicU64::new(0);
    let done = Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..how.threads.max(1) {
            s.spawn(|| {
                let (mut worker, mut state) = init();
                let tt = Tt::new(how.hash_mb);
                let stop = AtomicBool::new(false);
                let limits = Limits {
                    depth: Some(how.depth),
                    ..Default::default()
                };
                loop {
                    let i = next.fetch_add(1, Relaxed);
                    let Some(p) = positions.get(i) else { break };
                    worker.clear();
                    tt.clear();
                    stop.store(false, Relaxed);
                    begin(&mut worker, i, p);
                    let pos = chess::board::Position {
                        board: p.board.clone(),
                        history: Vec::new(),
                    };
                    let res = search(
                        &pos,
                        &limits,
                        how.opts,
                        std::slice::from_mut(&mut worker),
                        &tt,
                        &stop,
                    );
                    each(&mut worker, &mut state, res.nodes);
                    let n = nodes.fetch_add(res.nodes, Relaxed) + res.nodes;
                    bar.set_message(format!("{:.1} Mnodes", n as f64 / 1e6));
                    bar.inc(1);
                }
                done.lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .push((worker, state));
            });
        }
    });
    bar.finish_and_clear();
    (
        done.into_inner().unwrap_or_else(|e| e.into_inner()),
        nodes.into_inner(),
    )
}

/// A progress bar on stderr counting `what`. A bar draws nothing when stderr is not a
/// terminal (a log file under `nohup`, a Slurm job, CI), so then a plain line
/// ([`progress_line`]) is written once a minute instead, until the bar is finished or
/// dropped: a ten-minute run in a log still says how far it is.
pub(crate) fn progress(len: u64, what: &str) -> ProgressBar {
    let bar = ProgressBar::new(len);
    bar.set_style(
        ProgressStyle::with_template(&format!(
            "{{prefix}} [{{bar:30}}] {{pos}}/{{len}} {what}  {{msg}}  {{elapsed_precise}} ETA {{eta}}"
        ))
        .expect("valid template")
        .progress_chars("=> "),
    );
    if !std::io::IsTerminal::is_terminal(&std::io::stderr()) {
        let weak = bar.downgrade();
        let what = what.to_owned();
        std::thread::spawn(move || {
            let every = std::time::Duration::from_secs(60);
            let mut last = Instant::now();
            loop {
                std::thread::sleep(std::time::Duration::from_secs(1));
                let Some(bar) = weak.upgrade() else { return };
                if bar.is_finished() {
                    return;
                }
                if last.elapsed() >= every {
                    last = Instant::now();
                    eprintln!("{}", progress_line(&bar, &what));
                }
            }
        });
    }
    bar
}

/// The bar's state as one line for a log: `prefix: pos/len what (pct %), msg, elapsed` (no
/// total when the length is unknown, i.e. 0).
pub(crate) fn progress_line(bar: &ProgressBar, what: &str) -> String {
    let (pos, len) = (bar.position(), bar.length().unwrap_or(0));
    let mut s = bar.prefix().to_string();
    if !s.is_empty() {
        s.push_str(": ");
    }
    if len > 0 {
        s.push_str(&format!(
            "{pos}/{len} {what} ({:.1} %)",
            100.0 * pos as f64 / len as f64
        ));
    } else {
        s.push_str(&format!("{pos} {what}"));
    }
    let msg = bar.message();
    if !msg.is_empty() {
        s.push_str(&format!(", {msg}"));
    }
    let secs = bar.elapsed().as_secs();
    s.push_str(&format!(
        ", {}:{:02}:{:02} elapsed",
        secs / 3600,
        secs / 60 % 60,
        secs % 60
    ));
    s
}

/// Play the games missing from the raw file; returns how many were played now.
pub fn build_raw(a: &BuildArgs) -> Result<u32, PoolError> {
    let want = raw_settings(a);
    let raw = read_raw(&a.raw)?;
    if let Some(found) = &raw.settings
        && *found != want
    {
        return Err(PoolError::Settings {
            path: a.raw.clone(),
            found: found.clone(),
            want,
        });
    }
    let book = read_positions(&a.book)?;
    let mut perm: Vec<usize> = (0..book.len()).collect();
    SplitMix(a.split.seed ^ 0x0B00_C0DE).shuffle(&mut perm);
    let todo: Vec<u32> = (0..a.games)
        .filter(|g| !raw.games.contains_key(g))
        .collect();
    // Cut a torn tail, write the header of a new file.
    if let Some(parent) = a.raw.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent).map_err(io_err(parent))?;
    }
    // One appending handle (a regular file only) cuts the tail and then writes after it:
    // an append-mode descriptor may be truncated, and each write goes to the new end.
    let mut file = fileio::open_append(&a.raw).map_err(file_err(&a.raw))?;
    file.set_len(raw.complete_len).map_err(io_err(&a.raw))?;
    if raw.settings.is_none() {
        writeln!(file, "{RAW_MAGIC} {want}").map_err(io_err(&a.raw))?;
    }
    let bar = progress(todo.len() as u64, "games");
    bar.set_prefix("pool build");
    let next = AtomicUsize::new(0);
    let writer = Mutex::new((file, None::<std::io::Error>));
    let candidates = AtomicUsize::new(raw.games.values().map(Vec::len).sum());
    std::thread::scope(|s| {
        for _ in 0..a.threads {
            s.spawn(|| {
                let mut worker = Worker::new(0);
                let tt = Tt::new(a.hash as usize);
                loop {
                    let i = next.fetch_add(1, Relaxed);
                    let Some(&game) = todo.get(i) else { break };
                    let opening = &book[perm[game as usize % perm.len()]];
                    let rec = play_game(
                        game,
                        opening,
                        a.nodes,
                        a.per_game_bucket as usize,
                        a.split.seed,
                        &mut worker,
                        &tt,
                    );
                    let mut block = String::new();
                    for c in &rec.candidates {
                        block.push_str(&format!(
                            "c\t{}\t{}\t{}\t{}\n",
                            c.game, c.ply, c.bucket, c.fen
                        ));
                    }
                    block.push_str(&format!(
                        "g\t{}\t{}\t{}\t{}\n",
                        rec.game,
                        rec.plies,
                        rec.result,
                        rec.candidates.len()
                    ));
                    let mut w = writer.lock().unwrap_or_else(|e| e.into_inner());
                    if w.1.is_none()
                        && let Err(e) = w.0.write_all(block.as_bytes())
                    {
                        w.1 = Some(e);
                    }
                    drop(w);
                    let n =
                        candidates.fetch_add(rec.candidates.len(), Relaxed) + rec.candidates.len();
                    bar.set_message(format!("{n} candidates"));
                    bar.inc(1);
                }
            });
        }
    });
    bar.finish();
    let (_, err) = writer.into_inner().unwrap_or_else(|e| e.into_inner());
    if let Some(e) = err {
        return Err(io_err(&a.raw)(e));
    }
    Ok(todo.len() as u32)
}

/// Is game `game` on the hold-out side (one game in four)?
pub fn is_holdout_game(game: u32, seed: u64) -> bool {
    SplitMix(seed ^ 0x4F1D_0C7E ^ (u64::from(game) << 20))
        .next_u64()
        .is_multiple_of(4)
}

/// Choose `size` candidates as evenly as possible over the buckets (water filling: a
/// bucket with fewer candidates than its share gives all it has, the rest share the
/// shortfall). Returns the picks ordered round-robin over the buckets.
pub fn stratify(
    mut by_bucket: Vec<Vec<Candidate>>,
    size: usize,
    rng: &mut SplitMix,
) -> Vec<Candidate> {
    for b in by_bucket.iter_mut() {
        rng.shuffle(b);
    }
    let n = by_bucket.len();
    let mut quota = vec![0usize; n];
    let mut open: Vec<usize> = (0..n).filter(|&b| !by_bucket[b].is_empty()).collect();
    let mut remaining = size.min(by_bucket.iter().map(Vec::len).sum());
    while remaining > 0 && !open.is_empty() {
        let share = remaining / open.len();
        let extra = remaining % open.len();
        let mut still_open = Vec::new();
        let mut given = 0;
        for (k, &b) in open.iter().enumerate() {
            let want = share + usize::from(k < extra);
            let room = by_bucket[b].len() - quota[b];
            let take = want.min(room);
            quota[b] += take;
            given += take;
            if quota[b] < by_bucket[b].len() {
                still_open.push(b);
            }
        }
        remaining -= given;
        if given == 0 {
            break;
        }
        open = still_open;
    }
    let mut out = Vec::with_capacity(size);
    let max = quota.iter().copied().max().unwrap_or(0);
    for i in 0..max {
        for (b, cands) in by_bucket.iter().enumerate() {
            if i < quota[b] {
                out.push(cands[i].clone());
            }
        }
    }
    out
}

/// One pool line: the FEN, then its material bucket, game and ply as EPD operations.
pub fn pool_line(c: &Candidate) -> String {
    format!(
        "{} ; mb {}; game {}; ply {};",
        c.fen, c.bucket, c.game, c.ply
    )
}

/// Split a raw file into the two pools (games `0..games` only, when given, so that an
/// interrupted larger run splits like a complete smaller one); prints a summary per bucket.
pub fn split(raw_path: &Path, o: &SplitOpts, games: Option<u32>) -> Result<(), PoolError> {
    let mut raw = read_raw(raw_path)?;
    if let Some(n) = games {
        raw.games.retain(|&g, _| g < n);
    }
    if raw.games.is_empty() {
        return Err(PoolError::Empty {
            path: raw_path.to_owned(),
        });
    }
    let mut seen = HashSet::new();
    let mut sides: [Vec<Vec<Candidate>>; 2] =
        [vec![Vec::new(); BUCKETS], vec![Vec::new(); BUCKETS]];
    // Calibration games first, so a position shared with a hold-out game stays calibration's.
    for holdout in [false, true] {
        for (&game, cands) in &raw.games {
            if is_holdout_game(game, o.seed) != holdout {
                continue;
            }
            for c in cands {
                let board = parse_fen(&c.fen).map_err(|e| PoolError::Line {
                    path: raw_path.to_owned(),
                    line: 0,
                    message: format!("game {game} ply {}: {e}", c.ply),
                })?;
                if seen.insert(board.hash()) {
                    sides[usize::from(holdout)][c.bucket as usize].push(c.clone());
                }
            }
        }
    }
    let [calib_c, hold_c] = sides;
    for (name, cands, size, path, salt) in [
        ("calib", calib_c, o.calib_size, &o.calib, 1u64),
        ("holdout", hold_c, o.holdout_size, &o.holdout, 2u64),
    ] {
        let avail: Vec<usize> = cands.iter().map(Vec::len).collect();
        let picked = stratify(
            cands,
            size,
            &mut SplitMix(o.seed ^ salt.wrapping_mul(0x9E37)),
        );
        let mut per = [0usize; BUCKETS];
        let mut text = String::new();
        for c in &picked {
            per[c.bucket as usize] += 1;
            text.push_str(&pool_line(c));
            text.push('\n');
        }
        if let Some(dir) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(io_err(dir))?;
        }
        evidence::atomic_write(path, text.as_bytes()).map_err(|e| PoolError::Io {
            path: path.clone(),
            source: e.into_io(),
        })?;
        eprintln!(
            "{name}: {} positions -> {} (per bucket {:?}; candidates {:?})",
            picked.len(),
            path.display(),
            per,
            avail
        );
    }
    Ok(())
}

/// A position of a pool file, with its 1-based line number.
#[derive(Clone, Debug)]
pub struct PoolPosition {
    pub line: usize,
    pub board: Board,
}

/// Read a pool (or any EPD/FEN file): blank lines and `#` comments are skipped; a line that
/// does not parse is an error naming the file and the line. `limit` keeps the first N.
pub fn read_pool(path: &Path, limit: Option<usize>) -> Result<Vec<PoolPosition>, PoolError> {
    let text = fileio::read_to_string(path, MAX_POOL_BYTES).map_err(file_err(path))?;
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if limit.is_some_and(|l| out.len() >= l) {
            break;
        }
        let t = line.trim();
        if t.is_empty() || t.starts_with('#') {
            continue;
        }
        let epd = parse_epd(t).map_err(|e| PoolError::Line {
            path: path.to_owned(),
            line: i + 1,
            message: e.to_string(),
        })?;
        if !has_legal_move(&epd.board) {
            return Err(PoolError::Line {
                path: path.to_owned(),
                line: i + 1,
                message: "position has no legal move (mate or stalemate)".into(),
            });
        }
        out.push(PoolPosition {
            line: i + 1,
            board: epd.board,
        });
    }
    if out.is_empty() {
        return Err(PoolError::Empty {
            path: path.to_owned(),
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What a log gets instead of a bar: position, length, share, message, prefix.
    #[test]
    fn progress_lines_say_how_far() {
        let bar = progress(200, "epochs");
        bar.set_prefix("tune");
        bar.set_position(50);
        bar.set_message("hold-out 0.0801");
        let line = progress_line(&bar, "epochs");
        assert!(
            line.starts_with("tune: 50/200 epochs (25.0 %), hold-out 0.0801, 0:00:0"),
            "{line}"
        );
        let open = ProgressBar::new(0);
        open.set_position(7);
        assert!(progress_line(&open, "games").starts_with("7 games, "));
    }

    fn cand(game: u32, bucket: u8) -> Candidate {
        Candidate {
            game,
            ply: 0,
            bucket,
            fen: String::new(),
        }
    }

    #[test]
    fn stratify_water_fills_short_buckets() {
        // 8 buckets with 1, 2, 10, 10, 10, 10, 10, 10 candidates; 24 wanted:
        // equal share 3 each; buckets 0 and 1 give 1 and 2, the 3 missing go to the others.
        let counts = [1, 2, 10, 10, 10, 10, 10, 10];
        let by: Vec<Vec<Candidate>> = counts
            .iter()
            .enumerate()
            .map(|(b, &n)| (0..n).map(|g| cand(g, b as u8)).collect())
            .collect();
        let out = stratify(by, 24, &mut SplitMix(7));
        let mut per = [0; 8];
        out.iter().for_each(|c| per[c.bucket as usize] += 1);
        assert_eq!(per, [1, 2, 4, 4, 4, 3, 3, 3]);
        // round-robin order: the first 8 picks cover all 8 buckets
        let first: HashSet<u8> = out[..8].iter().map(|c| c.bucket).collect();
        assert_eq!(first.len(), 8);
    }

    #[test]
    fn holdout_is_about_a_quarter() {
        let n = (0..4000).filter(|&g| is_holdout_game(g, 1)).count();
        assert!((900..1100).contains(&n), "{n}");
    }

    #[test]
    fn quiet_filter() {
        // The knight on e5 hangs to the pawn on d6.
        let b = parse_fen("4k3/8/3p4/4N3/8/8/8/4K3 b - - 0 1").unwrap();
        let take = chess::board::uci_to_move(&b, "d6e5").unwrap();
        let quiet = chess::board::uci_to_move(&b, "e8e7").unwrap();
        assert!(!is_quiet(&b, quiet), "a capture wins a knight");
        assert!(!is_quiet(&b, take));
        let b = parse_fen("4k3/8/8/8/8/8/3P4/4K3 w - - 0 1").unwrap();
        let mv = chess::board::uci_to_move(&b, "d2d4").unwrap();
        assert!(is_quiet(&b, mv));
    }

    #[test]
    fn raw_file_resume_cuts_torn_tail() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("raw.txt");
        let fen = "4k3/8/8/8/8/8/3P4/4K3 w - - 0 1";
        std::fs::write(
            &p,
            format!(
                "{RAW_MAGIC} x\nc\t0\t3\t0\t{fen}\ng\t0\t10\tmate\t1\nc\t1\t2\t0\t{fen}\nc\t1\t5"
            ),
        )
        .unwrap();
        let r = read_raw(&p).unwrap();
        assert_eq!(r.games.len(), 1);
        assert_eq!(r.settings.as_deref(), Some("x"));
        let head = format!("{RAW_MAGIC} x\nc\t0\t3\t0\t{fen}\ng\t0\t10\tmate\t1\n");
        assert_eq!(r.complete_len, head.len() as u64);
        std::fs::write(&p, format!("{head}c\t1\tx\t0\t{fen}\n")).unwrap();
        let err = read_raw(&p).err().unwrap().to_string();
        assert!(err.contains("raw.txt:4:") && err.contains("ply"), "{err}");
    }

    #[test]
    fn bad_pool_line_names_file_and_line() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("pool.epd");
        std::fs::write(
            &p,
            "# comment\n4k3/8/8/8/8/8/3P4/4K3 w - - 0 1 ; mb 0;\n4k3/8/8/8 w\n",
        )
        .unwrap();
        let err = read_pool(&p, None).err().unwrap().to_string();
        assert!(err.contains("pool.epd:3:"), "{err}");
        assert_eq!(read_pool(&p, Some(1)).unwrap().len(), 1);
    }
}
