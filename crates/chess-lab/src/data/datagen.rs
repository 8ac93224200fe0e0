//! `datagen`: labelled positions for the evaluation tuner (issue 15, item 1).
//!
//! Fixed-node self-play from the openings of a book, each game opened further by a few
//! seeded random plies (so two games from one book line differ). Every quiet position of a
//! game (not in check, the engine's move neither a capture nor a promotion, no capture that
//! wins material by SEE, no mate score) is written once per game with the search score and,
//! when the game is over, its result:
//!
//! ```text
//! # actuary datagen v1 nodes=5000 random_plies=4 seed=1 book=data/chess/books/2moves_v1.epd
//! r1bqkb1r/pppp1ppp/2n2n2/4p3/2B1P3/5N2/PPPP1PPP/RNBQK2R w KQkq - 4 4 | 31 | 0.5
//! ...
//! # game 17 plies 96 draw-repetition positions 41
//! ```
//!
//! `FEN | score | result`: the score in centipawns from White's view, the result White's
//! (1, 0.5, 0) — the text format of common NNUE trainers, so other tools read it too. A
//! game's positions and its `# game` line are appended in one write; a rerun with the same
//! file resumes: finished games are kept, a torn last block is cut off, only missing game
//! ids are played, and a file made with other settings is refused. Each game is a function
//! of (game id, settings), so the content does not depend on `--threads` or interruptions,
//! only the order of the games does. Duplicates across games are left in the file and
//! dropped by `actuary tune` when it loads the data.

use crate::data::pool::{
    Adjudication, PoolError, SplitMix, is_quiet, progress, read_positions, self_play,
};
use chess::board::{Position, legal_moves, to_fen};
use chess::search::Worker;
use chess::search::params::MATE_BOUND;
use chess::search::tt::Tt;
use std::collections::{BTreeSet, HashSet};
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering::Relaxed};
use std::time::Instant;

const MAGIC: &str = "# actuary datagen v1";

/// `actuary datagen`: `--corpus DIR` (binary game records in chunks, the self-play corpus)
/// or `--out FILE` (the `FEN | score | result` text of issue 15).
#[derive(Debug, clap::Args)]
pub struct DatagenArgs {
    /// Number of games. With --out: game ids 0..N (ids already in the file are skipped);
    /// with --corpus: N more games after the corpus's largest id, or with --first-id F the
    /// ids F..F+N not played yet [default: until stopped].
    #[arg(long, value_name = "N", required_unless_present = "corpus",
          value_parser = clap::value_parser!(u32).range(1..))]
    pub games: Option<u32>,
    /// Node budget of every move: the hard limit, inside an iteration, when --soft-nodes is
    /// given.
    #[arg(long, value_name = "N", default_value_t = 5000, value_parser = clap::value_parser!(u64).range(1..=100_000_000))]
    pub nodes: u64,
    /// Soft node limit of every move (--corpus): no new iteration starts once N nodes are
    /// searched, and the one under way may go on to --nodes. Every stored move and score is
    /// then a whole iteration's (docs/chess/corpus.md prices it against the hard limit
    /// alone).
    #[arg(long, value_name = "N", requires = "corpus", value_parser = clap::value_parser!(u64).range(1..=100_000_000))]
    pub soft_nodes: Option<u64>,
    /// Games played at once (one search thread each).
    #[arg(long, value_name = "T", default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..=256))]
    pub threads: u64,
    /// Output file (`FEN | score | result` lines), appended one game at a time; rerunning
    /// with the same file and settings resumes it.
    #[arg(
        long,
        value_name = "FILE",
        required_unless_present = "corpus",
        conflicts_with = "corpus"
    )]
    pub out: Option<PathBuf>,
    /// Corpus directory (e.g. data/chess/selfplay): every position of every game as compact
    /// binary records, in chunks of at most 48 MB listed with their SHA-256 in
    /// DIR/manifest.jsonl. A run continues the part being written (or closes it if it was
    /// made with other settings) and closes it when it ends; one writer at a time.
    #[arg(long, value_name = "DIR")]
    pub corpus: Option<PathBuf>,
    /// First game id of the series this corpus plays (--corpus), for a Slurm job array whose
    /// task K writes a corpus of its own with --first-id BASE+K×GAMES --games GAMES (see
    /// scripts/datagen-slurm.sh; `actuary corpus-merge` enters the tasks' chunks into the main
    /// corpus). The run plays ids from N, or after the corpus's largest id when that is N or
    /// more; with --games G it stops before N+G, so a killed task resubmitted plays only the
    /// rest of its series, never the next task's ids. A corpus holding an id at or beyond
    /// N+G is refused. A game is a function of (id, settings): disjoint series, disjoint
    /// games. Without it ids continue after the largest, and --games counts from there
    /// (the first game of an empty corpus is 0).
    #[arg(long, value_name = "N", requires = "corpus",
          value_parser = clap::value_parser!(u64).range(..=(1 << 60)))]
    pub first_id: Option<u64>,
    /// Only close the corpus's part being written (after a killed run) and exit.
    #[arg(long, requires = "corpus")]
    pub close: bool,
    /// Openings (--corpus): `book` lines then random plies, or `startpos` then random plies.
    #[arg(long, value_name = "FROM", default_value = "book", value_parser = ["book", "startpos"])]
    pub opening: String,
    /// An opening whose search scores beyond this many centipawns is drawn again (up to 16
    /// times; --corpus; 0 keeps every opening).
    #[arg(long, value_name = "CP", default_value_t = 400, value_parser = clap::value_parser!(i32).range(0..=10_000))]
    pub opening_max_score: i32,
    /// Win adjudication (--corpus): |score| at or beyond CP for --win-plies plies in a row
    /// (both sides' searches; the last score's side wins).
    #[arg(long, value_name = "CP", default_value_t = 1000, value_parser = clap::value_parser!(i32).range(100..=30_000))]
    pub win_score: i32,
    /// Plies of a decided score before a win is adjudicated (--corpus).
    #[arg(long, value_name = "N", default_value_t = 6, value_parser = clap::value_parser!(u32).range(1..=100))]
    pub win_plies: u32,
    /// Draw adjudication (--corpus): |score| at most CP for --draw-plies plies in a row.
    #[arg(long, value_name = "CP", default_value_t = 10, value_parser = clap::value_parser!(i32).range(0..=200))]
    pub draw_score: i32,
    /// Plies of a level score before a draw is adjudicated (--corpus; 0: never).
    #[arg(long, value_name = "N", default_value_t = 10, value_parser = clap::value_parser!(u32).range(0..=400))]
    pub draw_plies: u32,
    /// No draw adjudication before this ply (--corpus).
    #[arg(long, value_name = "PLY", default_value_t = 70, value_parser = clap::value_parser!(u32).range(0..=400))]
    pub draw_after: u32,
    /// Opening book (EPD/FEN per line); game g starts from line `perm[g]` of a seeded shuffle.
    #[arg(
        long,
        value_name = "FILE",
        default_value = "data/chess/books/2moves_v1.epd"
    )]
    pub book: PathBuf,
    /// Random legal plies played after the book line or start position (seeded by --seed
    /// and the game id) [default: 4 with --out, 8 with --corpus].
    #[arg(long, value_name = "K", value_parser = clap::value_parser!(u32).range(0..=40))]
    pub random_plies: Option<u32>,
    /// Seed of the opening order and the random plies.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Transposition table per game thread, in MB (cleared before every game).
    #[arg(long, value_name = "MB", default_value_t = 16, value_parser = clap::value_parser!(u64).range(1..=4096))]
    pub hash: u64,
}

/// Why datagen could not run. A file that cannot be read or written, or a bad line, is a
/// [`PoolError`] (`Io`, `Line`): the same errors, with the same messages, as `pool build`.
#[derive(Debug, thiserror::Error)]
pub enum DatagenError {
    #[error(
        "{}: made with other settings ({found}); use another --out or the same settings ({want})",
        path.display()
    )]
    Settings {
        path: PathBuf,
        found: String,
        want: String,
    },
    #[error("{}: another process is writing this file (it is locked)", path.display())]
    Locked { path: PathBuf },
    /// `--first-id F --games G` on a corpus that holds ids past its series: another series'
    /// corpus, or the main one (a task's series is played into a directory of its own).
    #[error(
        "{}: holds game id {largest}, past the series --first-id {first} --games {games} (ids {first}..={last}); a series is played into a corpus of its own",
        path.display()
    )]
    BeyondSeries {
        path: PathBuf,
        largest: u64,
        first: u64,
        games: u64,
        last: u64,
    },
    /// A soft limit at or above the hard one would never act.
    #[error(
        "--soft-nodes {soft} must be below --nodes {nodes} (the hard limit of the iteration under way)"
    )]
    SoftNodes { soft: u64, nodes: u64 },
    #[error(transparent)]
    File(#[from] PoolError),
}

fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> DatagenError + '_ {
    move |source| {
        DatagenError::File(PoolError::Io {
            path: path.to_owned(),
            source,
        })
    }
}

impl DatagenArgs {
    fn settings(&self) -> String {
        format!(
            "nodes={} random_plies={} seed={} book={} eval={}",
            self.nodes,
            self.plies(),
            self.seed,
            self.book.display(),
            chess::nnue::embedded_id()
        )
    }

    /// Random plies after the opening, with the mode's default.
    fn plies(&self) -> u32 {
        self.random_plies
            .unwrap_or(if self.corpus.is_some() { 8 } else { 4 })
    }

    /// The text file (`--out`), which clap requires when there is no corpus.
    fn out(&self) -> &Path {
        self.out
            .as_deref()
            .expect("clap requires --out without --corpus")
    }

    /// The text mode (`--out FILE`); the corpus mode is [`crate::data::selfplay::run`].
    pub fn run(&self) -> Result<ExitCode, crate::LabError> {
        let t0 = Instant::now();
        let (games, positions) = generate(self)?;
        let secs = t0.elapsed().as_secs_f64();
        eprintln!(
            "datagen: {games} games, {positions} positions in {secs:.0} s ({:.0} positions/s, {} threads)",
            positions as f64 / secs.max(1e-9),
            self.threads
        );
        Ok(ExitCode::SUCCESS)
    }
}

/// What an existing output file holds: its settings, the finished game ids, and the byte
/// length up to the end of the last finished game.
struct Existing {
    settings: Option<String>,
    games: BTreeSet<u32>,
    positions: usize,
    whole_len: u64,
}

fn read_existing(path: &Path) -> Result<Existing, DatagenError> {
    let mut out = Existing {
        settings: None,
        games: BTreeSet::new(),
        positions: 0,
        whole_len: 0,
    };
    // A datagen file is a few hundred MB at most; 4 GB is the limit `tune` reads it with.
    let text = match fileio::read(path, 4 << 30) {
        Ok(t) => t,
        Err(fileio::FileError::Io { source, .. })
            if source.kind() == std::io::ErrorKind::NotFound =>
        {
            return Ok(out);
        }
        Err(e) => return Err(io_err(path)(e.into_io())),
    };
    let bad = |line: usize, message: String| {
        DatagenError::File(PoolError::Line {
            path: path.to_owned(),
            line,
            message,
        })
    };
    let mut offset = 0u64;
    let mut pending = 0usize;
    for (i, raw) in text.split_inclusive(|&b| b == b'\n').enumerate() {
        offset += raw.len() as u64;
        if !raw.ends_with(b"\n") {
            break; // a torn last line: cut on resume
        }
        let line = std::str::from_utf8(raw)
            .map_err(|_| bad(i + 1, "not UTF-8 text".into()))?
            .trim_end();
        if let Some(rest) = line.strip_prefix(MAGIC) {
            if i != 0 {
                return Err(bad(i + 1, "a second header".into()));
            }
            out.settings = Some(rest.trim().to_owned());
            out.whole_len = offset;
        } else if let Some(rest) = line.strip_prefix("# game ") {
            let w: Vec<&str> = rest.split_whitespace().collect();
            let game = w.first().and_then(|g| g.parse::<u32>().ok());
            let count = w
                .iter()
                .position(|x| *x == "positions")
                .and_then(|k| w.get(k + 1))
                .and_then(|n| n.parse::<usize>().ok());
            match (game, count) {
                (Some(g), Some(n)) if n == pending => {
                    out.games.insert(g);
                    out.positions += n;
                    pending = 0;
                    out.whole_len = offset;
                }
                (Some(g), Some(n)) => {
                    return Err(bad(
                        i + 1,
                        format!("game {g} says {n} positions, the file has {pending} before it"),
                    ));
                }
                _ => {
                    return Err(bad(
                        i + 1,
                        "expected `# game ID plies N REASON positions N`".into(),
                    ));
                }
            }
        } else if i == 0 {
            return Err(bad(
                1,
                format!("not a datagen file (no `{MAGIC}` header); use another --out"),
            ));
        } else if line.split(" | ").count() == 3 {
            pending += 1;
        } else {
            return Err(bad(i + 1, "expected `FEN | score | result`".into()));
        }
    }
    Ok(out)
}

/// One finished game as the text block appended to the file.
fn game_block(
    game: u32,
    start: &Position,
    a: &DatagenArgs,
    worker: &mut Worker,
    tt: &Tt,
) -> (String, usize) {
    let mut seen = HashSet::new();
    let mut lines: Vec<(String, i32)> = Vec::new();
    let end = self_play(
        start,
        crate::data::pool::NodeBudget::hard(a.nodes),
        &Adjudication::WINS_ONLY,
        &chess::search::smp::SearchOptions::default(),
        worker,
        tt,
        |b, best, score, _| {
            if score.abs() < MATE_BOUND && is_quiet(b, best) && seen.insert(b.hash()) {
                let white = if b.side_to_move() == chess::board::Color::White {
                    score
                } else {
                    -score
                };
                lines.push((to_fen(b), white));
            }
        },
    );
    let result = match end.white_score {
        1.0 => "1.0",
        0.0 => "0.0",
        _ => "0.5",
    };
    let mut block = String::with_capacity(lines.len() * 80 + 64);
    for (fen, score) in &lines {
        block.push_str(&format!("{fen} | {score} | {result}\n"));
    }
    block.push_str(&format!(
        "# game {game} plies {} {} positions {}\n",
        end.plies,
        end.reason,
        lines.len()
    ));
    (block, lines.len())
}

/// The start of game `game`: its book line and `random_plies` seeded random moves (fewer if
/// the game would end).
fn opening(book: &[chess::board::Board], perm: &[usize], game: u32, a: &DatagenArgs) -> Position {
    let mut pos = Position {
        board: book[perm[game as usize % perm.len()]].clone(),
        history: Vec::new(),
    };
    let mut rng = SplitMix(a.seed ^ 0xDA7A_6E17 ^ (u64::from(game) + 1).wrapping_mul(0x9E37_79B9));
    random_plies(&mut pos, &mut rng, a.plies());
    pos
}

/// Play `n` random legal moves from `pos`, each uniform among the moves that leave the other
/// side a legal move (so every game has something to play); fewer if there is none.
pub(crate) fn random_plies(pos: &mut Position, rng: &mut SplitMix, n: u32) {
    for _ in 0..n {
        let playable: Vec<_> = legal_moves(&pos.board)
            .into_iter()
            .filter(|&m| {
                let mut b = pos.board.clone();
                b.play_unchecked(m);
                chess::search::has_legal_move(&b)
            })
            .collect();
        if playable.is_empty() {
            break;
        }
        pos.play(playable[rng.below(playable.len())]);
    }
}

/// Play the games missing from `--out`; returns (games played now, positions written now).
pub fn generate(a: &DatagenArgs) -> Result<(usize, usize), DatagenError> {
    let want = a.settings();
    let book = read_positions(&a.book)?;
    if let Some(parent) = a.out().parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent).map_err(io_err(parent))?;
    }
    // The handle that holds the lock and cuts the torn tail: an appending one (a regular
    // file only, created if absent); an append-mode descriptor may be locked and truncated.
    let file = fileio::open_append(a.out()).map_err(|e| io_err(a.out())(e.into_io()))?;
    // One writer per file for the whole run: a second datagen on it is refused.
    match file.try_lock() {
        Ok(()) => {}
        Err(std::fs::TryLockError::WouldBlock) => {
            return Err(DatagenError::Locked {
                path: a.out().to_owned(),
            });
        }
        Err(std::fs::TryLockError::Error(_)) => {} // no locks on this file system
    }
    let existing = read_existing(a.out())?;
    if let Some(found) = &existing.settings
        && *found != want
    {
        return Err(DatagenError::Settings {
            path: a.out().to_owned(),
            found: found.clone(),
            want,
        });
    }
    file.set_len(existing.whole_len).map_err(io_err(a.out()))?;
    let mut file = fileio::open_append(a.out()).map_err(|e| io_err(a.out())(e.into_io()))?;
    if existing.settings.is_none() {
        writeln!(file, "{MAGIC} {want}").map_err(io_err(a.out()))?;
    }
    let mut perm: Vec<usize> = (0..book.len()).collect();
    SplitMix(a.seed ^ 0x0B00_C0DE).shuffle(&mut perm);
    let todo: Vec<u32> = (0..a.games.expect("clap requires --games with --out"))
        .filter(|g| !existing.games.contains(g))
        .collect();
    let bar = progress(todo.len() as u64, "games");
    bar.set_prefix("datagen");
    let next = AtomicUsize::new(0);
    let written = AtomicU64::new(0);
    let t0 = Instant::now();
    let writer = Mutex::new((file, None::<std::io::Error>));
    std::thread::scope(|s| {
        for _ in 0..a.threads {
            s.spawn(|| {
                let mut worker = Worker::new(0);
                let tt = Tt::new(a.hash as usize);
                loop {
                    let i = next.fetch_add(1, Relaxed);
                    let Some(&game) = todo.get(i) else { break };
                    let start = opening(&book, &perm, game, a);
                    let (block, n) = game_block(game, &start, a, &mut worker, &tt);
                    let mut w = writer.lock().unwrap_or_else(|e| e.into_inner());
                    if w.1.is_some() {
                        break;
                    }
                    if let Err(e) = w.0.write_all(block.as_bytes()) {
                        w.1 = Some(e);
                        break;
                    }
                    drop(w);
                    let total = written.fetch_add(n as u64, Relaxed) + n as u64;
                    bar.set_message(format!(
                        "{} positions ({:.0}/s)",
                        existing.positions as u64 + total,
                        total as f64 / t0.elapsed().as_secs_f64().max(1e-9)
                    ));
                    bar.inc(1);
                }
            });
        }
    });
    bar.finish();
    let (file, err) = writer.into_inner().unwrap_or_else(|e| e.into_inner());
    if let Some(e) = err {
        return Err(io_err(a.out())(e));
    }
    file.sync_all().map_err(io_err(a.out()))?;
    Ok((todo.len(), written.into_inner() as usize))
}

/// Arguments as clap gives them by default, with small searches, for tests.
#[cfg(test)]
pub(crate) fn test_args(threads: u64) -> DatagenArgs {
    DatagenArgs {
        games: None,
        nodes: 300,
        soft_nodes: None,
        threads,
        out: None,
        corpus: None,
        first_id: None,
        close: false,
        opening: "book".into(),
        opening_max_score: 400,
        win_score: 1000,
        win_plies: 6,
        draw_score: 10,
        draw_plies: 10,
        draw_after: 70,
        book: PathBuf::from(format!(
            "{}/../../data/chess/books/2moves_v1.epd",
            env!("CARGO_MANIFEST_DIR")
        )),
        random_plies: None,
        seed: 7,
        hash: 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(out: &Path, games: u32) -> DatagenArgs {
        let mut a = test_args(2);
        a.games = Some(games);
        a.out = Some(out.to_owned());
        a.random_plies = Some(4);
        a
    }

    /// Sorted game blocks: the content, whatever the order the threads wrote them in.
    fn blocks(path: &Path) -> Vec<String> {
        let text = std::fs::read_to_string(path).unwrap();
        let mut out = Vec::new();
        let mut cur = String::new();
        for l in text.lines().skip(1) {
            cur.push_str(l);
            cur.push('\n');
            if l.starts_with("# game ") {
                out.push(std::mem::take(&mut cur));
            }
        }
        out.sort();
        out
    }

    #[test]
    fn games_are_labelled_quiet_and_resume_to_the_same_file() {
        let d = tempfile::tempdir().unwrap();
        let whole = d.path().join("whole.txt");
        generate(&args(&whole, 6)).unwrap();
        let want = blocks(&whole);
        assert_eq!(want.len(), 6);
        // Every position line: a legal FEN, a score, White's result agreeing with its game.
        let mut n = 0;
        for b in &want {
            let result = b.lines().next().and_then(|l| l.rsplit(" | ").next());
            for l in b.lines().filter(|l| !l.starts_with('#')) {
                let f: Vec<&str> = l.split(" | ").collect();
                assert_eq!(f.len(), 3, "{l}");
                let board = chess::board::parse_fen(f[0]).unwrap();
                assert!(board.checkers().is_empty(), "{l}");
                f[1].parse::<i32>().unwrap();
                assert!(["1.0", "0.5", "0.0"].contains(&f[2]), "{l}");
                assert_eq!(Some(f[2]), result, "one result per game");
                n += 1;
            }
        }
        assert!(n > 20, "{n} positions");
        // Stopped after 3 games with a torn fourth, resumed to 6: the same games.
        let part = d.path().join("part.txt");
        generate(&args(&part, 3)).unwrap();
        let text = std::fs::read_to_string(&part).unwrap();
        std::fs::write(&part, format!("{text}8/8/8/8/8/8/8/K6k w - - 0 1 | 3")).unwrap();
        generate(&args(&part, 6)).unwrap();
        assert_eq!(blocks(&part), want);
        // Other settings are refused; so is a file that is not datagen's.
        let mut other = args(&part, 6);
        other.nodes = 301;
        let e = generate(&other).unwrap_err().to_string();
        assert!(e.contains("made with other settings"), "{e}");
        let foreign = d.path().join("foreign.txt");
        std::fs::write(&foreign, "hello\n").unwrap();
        let e = generate(&args(&foreign, 1)).unwrap_err().to_string();
        assert!(e.contains("foreign.txt:1: not a datagen file"), "{e}");
    }
}
