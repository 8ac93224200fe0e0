//! `actuary datagen --corpus DIR`: fixed-node self-play into the binary corpus
//! ([`crate::data::corpus`]), every position of every game kept.
//!
//! Game `id` is a function of (id, settings): its opening (a book line chosen by a seeded
//! shuffle, or the start position, then `random_plies` seeded random moves, drawn again while
//! a short search scores it beyond `opening_max_score`) and its moves (one thread, a cleared
//! table and histories, a node budget per move). So the corpus does not depend on `--threads`
//! or interruptions, only the order of the games in a chunk does. A run plays ids after the
//! largest in the corpus, or a series of its own from `--first-id` (a Slurm job array's task,
//! [`id_range`]); a killed run loses only the games it was playing.
//!
//! The record starts after the book line and the random plies: its start FEN is the first
//! searched position, and every stored ply is a searched move.
//!
//! Games end by the rules, by win adjudication (the last `win_plies` searches in a row, both
//! sides', all scored |score| ≥ `win_score`; the side the last score favours wins), by draw
//! adjudication (at least `draw_after` plies and the last `draw_plies` searches all scored
//! |score| ≤ `draw_score`) or at the ply cap; the order of the checks is
//! [`crate::data::pool::self_play`]'s (docs/chess/corpus-format.md, "Games").

use crate::data::corpus::{CorpusError, CorpusWriter, EndReason, Game, Ply, Settings};
use crate::data::datagen::{DatagenArgs, DatagenError, random_plies};
use crate::data::pool::{
    Adjudication, MAX_GAME_PLIES, SplitMix, progress, read_positions, self_play,
};
use chess::board::{Board, Position, to_fen};
use chess::search::Worker;
use chess::search::smp::{SearchOptions, search};
use chess::search::time::Limits;
use chess::search::tt::Tt;
use std::collections::{BTreeMap, HashSet};
use std::path::Path;
use std::process::ExitCode;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::time::Instant;

/// Openings drawn per game before the last one is kept whatever its score.
const OPENING_TRIES: u64 = 16;
/// Distinct positions remembered for the repeat rates (about 50 MB of keys).
const REPEAT_WINDOW: usize = 2_000_000;

/// The commit of the working tree, for the chunk header (`unknown` outside a git checkout).
fn commit() -> String {
    let out = std::process::Command::new("git")
        .args(["rev-parse", "--short=12", "HEAD"])
        .stderr(std::process::Stdio::null())
        .output();
    match out {
        Ok(o) if o.status.success() => String::from_utf8_lossy(&o.stdout).trim().to_owned(),
        _ => "unknown".into(),
    }
}

/// The settings these arguments make games with (`bench`: the engine's signature).
pub fn settings(a: &DatagenArgs, bench: u64) -> Settings {
    Settings {
        nodes: a.nodes,
        soft_nodes: a.soft_nodes,
        opening: a.opening.clone(),
        book: (a.opening == "book").then(|| a.book.display().to_string()),
        random_plies: a.random_plies.unwrap_or(8),
        opening_max_score: a.opening_max_score,
        seed: a.seed,
        adjudication: Adjudication {
            win_score: a.win_score,
            win_plies: a.win_plies,
            draw_score: a.draw_score,
            draw_plies: a.draw_plies,
            draw_after: a.draw_after,
            max_plies: MAX_GAME_PLIES,
        },
        hash_mb: a.hash,
        bench,
    }
}

/// `datagen --corpus DIR [--close]`.
pub fn run(a: &DatagenArgs, dir: &Path) -> Result<ExitCode, crate::LabError> {
    let t0 = Instant::now();
    if let Some(soft) = a.soft_nodes.filter(|&soft| soft >= a.nodes) {
        let nodes = a.nodes;
        return Err(crate::data::datagen::DatagenError::SoftNodes { soft, nodes }.into());
    }
    // The signature of the engine that plays (a chunk holds one engine's games).
    let bench = chess::bench::run_bench(chess::bench::DEFAULT_BENCH_DEPTH, false).nodes;
    let s = settings(a, bench);
    let mut w = CorpusWriter::open(dir, s.clone(), &commit()).map_err(corpus_err)?;
    if a.close {
        match w.close().map_err(corpus_err)? {
            Some(e) => eprintln!(
                "datagen: closed {} ({} games, {} positions, sha256 {})",
                e.chunk, e.games, e.positions, e.sha256
            ),
            None => eprintln!("datagen: no part to close in {}", dir.display()),
        }
        return Ok(ExitCode::SUCCESS);
    }
    let r = generate(a, &s, &mut w)?;
    let closed = w.close_part().map_err(corpus_err)?;
    let secs = t0.elapsed().as_secs_f64();
    eprintln!(
        "datagen: {} games, {} positions in {secs:.0} s ({:.0} positions/s, {} threads); \
         openings repeated {:.2} %, positions repeated {:.2} %",
        r.games,
        r.positions,
        r.positions as f64 / secs.max(1e-9),
        a.threads,
        100.0 * r.opening_repeats as f64 / r.counted_games.max(1) as f64,
        100.0 * r.position_repeats as f64 / r.counted_positions.max(1) as f64,
    );
    if let Some(e) = closed {
        eprintln!(
            "datagen: closed {} ({} games, {} positions, sha256 {})",
            e.chunk, e.games, e.positions, e.sha256
        );
    }
    Ok(ExitCode::SUCCESS)
}

fn corpus_err(e: CorpusError) -> crate::LabError {
    crate::LabError::Corpus(e)
}

/// What a run made.
#[derive(Debug, Default)]
pub struct RunCounts {
    pub games: u64,
    pub positions: u64,
    /// Games whose start position an earlier game of this run already had (among the
    /// `counted_games` first games).
    pub opening_repeats: u64,
    /// Positions (by Zobrist key) an earlier game of this run already had (among the
    /// `counted_positions` first positions).
    pub position_repeats: u64,
    pub counted_games: u64,
    pub counted_positions: u64,
}

/// The game ids a run plays, `first..end` (`end` is `u64::MAX` without `--games`), given
/// `next`, one past the corpus's largest id (0 for an empty corpus). Without `--first-id`:
/// `games` ids from `next`, as always. With `--first-id F`: from F, or from `next` once the
/// corpus has reached F, and with `--games G` ending before F+G. So the corpus of job-array
/// task K (F = BASE + K×G) plays exactly the series F..F+G however often the task is killed
/// and resubmitted; "G more after the largest" would run a resubmitted task into task K+1's
/// ids. A corpus already past F+G is another series' (or the main corpus): refused.
pub fn id_range(
    first_id: Option<u64>,
    games: Option<u32>,
    next: u64,
    dir: &Path,
) -> Result<std::ops::Range<u64>, DatagenError> {
    let games = games.map(u64::from);
    let Some(first) = first_id else {
        return Ok(next..games.map_or(u64::MAX, |g| next.saturating_add(g)));
    };
    let end = games.map_or(u64::MAX, |g| first.saturating_add(g));
    if next > end {
        return Err(DatagenError::BeyondSeries {
            path: dir.to_owned(),
            largest: next - 1,
            first,
            games: end - first,
            last: end - 1,
        });
    }
    Ok(next.max(first)..end)
}

/// Play `--games` games (or until killed) into `w`: the ids of [`id_range`].
pub fn generate(
    a: &DatagenArgs,
    s: &Settings,
    w: &mut CorpusWriter,
) -> Result<RunCounts, crate::LabError> {
    let book = if s.opening == "book" {
        read_positions(&a.book)?
    } else {
        vec![Board::default()]
    };
    let mut perm: Vec<usize> = (0..book.len()).collect();
    SplitMix(s.seed ^ 0x0B00_C0DE).shuffle(&mut perm);
    let ids = id_range(a.first_id, a.games, w.next_id(), w.dir())?;
    let (first, end) = (ids.start, ids.end);
    if ids.is_empty() {
        // (only with --first-id and --games, so `end` is at least 1)
        eprintln!(
            "datagen: {} holds its series up to id {}; nothing to play",
            w.dir().display(),
            end - 1
        );
    }
    let bar = progress(if a.games.is_some() { end - first } else { 0 }, "games");
    bar.set_prefix("datagen");
    let next = AtomicU64::new(first);
    let t0 = Instant::now();
    // Games are written in id order: a finished game waits in `done` until every lower id of
    // the run is written. A chunk that closes itself at its size limit then ends at an id
    // below every id of the next one (a game still in flight on another thread would
    // otherwise land in the next chunk, and the two id ranges would interleave at the seam).
    let shared = Mutex::new(Shared {
        w,
        counts: RunCounts::default(),
        openings: HashSet::new(),
        positions: HashSet::new(),
        err: None,
        done: BTreeMap::new(),
        want: first,
    });
    let failed = AtomicBool::new(false);
    std::thread::scope(|sc| {
        for _ in 0..a.threads {
            sc.spawn(|| {
                let mut worker = Worker::new(0);
                let tt = Tt::new(s.hash_mb as usize);
                while !failed.load(Relaxed) {
                    let id = next.fetch_add(1, Relaxed);
                    if id >= end {
                        break;
                    }
                    let played = play(id, s, &book, &perm, &mut worker, &tt);
                    let mut g = shared.lock().unwrap_or_else(|e| e.into_inner());
                    if g.err.is_some() {
                        break;
                    }
                    g.done.insert(id, played);
                    let written = g.write_in_order();
                    if g.err.is_some() {
                        failed.store(true, Relaxed);
                        break;
                    }
                    let (pg, pp) = g.w.part_counts();
                    bar.set_message(format!(
                        "{} positions ({:.0}/s); part: {pg} games, {pp} positions",
                        g.counts.positions,
                        g.counts.positions as f64 / t0.elapsed().as_secs_f64().max(1e-9)
                    ));
                    drop(g);
                    bar.inc(written);
                }
            });
        }
    });
    bar.finish();
    let sh = shared.into_inner().unwrap_or_else(|e| e.into_inner());
    match sh.err {
        Some(e) => Err(corpus_err(e)),
        None => Ok(sh.counts),
    }
}

/// What the datagen threads share: the writer, the run's counts, and the games finished
/// ahead of a lower id still being played.
struct Shared<'a> {
    w: &'a mut CorpusWriter,
    counts: RunCounts,
    openings: HashSet<u64>,
    positions: HashSet<u64>,
    err: Option<CorpusError>,
    /// Finished games (with their position keys) not yet written, by id.
    done: BTreeMap<u64, (Game, Vec<u64>)>,
    /// The next id to write.
    want: u64,
}

impl Shared<'_> {
    /// Write every finished game whose lower ids are all written; returns how many.
    fn write_in_order(&mut self) -> u64 {
        let mut n = 0;
        while let Some((game, keys)) = self.done.remove(&self.want) {
            self.want += 1;
            if let Err(e) = self.w.push(&game) {
                self.err = Some(e);
                break;
            }
            n += 1;
            self.counts.games += 1;
            self.counts.positions += game.plies.len() as u64;
            // Repeats are counted over the run's first REPEAT_WINDOW positions (a background
            // run has no end: its memory must not grow with it).
            if self.positions.len() < REPEAT_WINDOW {
                self.counts.counted_games += 1;
                self.counts.opening_repeats += !self.openings.insert(keys[0]) as u64;
                for k in &keys {
                    self.counts.counted_positions += 1;
                    self.counts.position_repeats += !self.positions.insert(*k) as u64;
                }
            }
        }
        n
    }
}

/// The opening of game `id`: the book line (or start position) and the random plies, drawn
/// again while a one-move search scores it beyond the limit.
fn opening(
    id: u64,
    s: &Settings,
    book: &[Board],
    perm: &[usize],
    worker: &mut Worker,
    tt: &Tt,
) -> Position {
    let line = &book[perm[(id % perm.len() as u64) as usize]];
    let mut last = None;
    for attempt in 0..OPENING_TRIES {
        let mut pos = Position {
            board: line.clone(),
            history: Vec::new(),
        };
        let mut rng = SplitMix(
            s.seed ^ 0x0CE9_1A7E ^ (id + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ attempt << 56,
        );
        random_plies(&mut pos, &mut rng, s.random_plies);
        if s.opening_max_score == 0 {
            return pos;
        }
        worker.clear();
        tt.clear();
        let limits = Limits {
            nodes: Some(s.nodes),
            soft_nodes: s.soft_nodes,
            ..Default::default()
        };
        let stop = AtomicBool::new(false);
        let r = search(
            &pos,
            &limits,
            &SearchOptions::default(),
            std::slice::from_mut(worker),
            tt,
            &stop,
        );
        if r.score.abs() <= s.opening_max_score {
            return pos;
        }
        last = Some(pos);
    }
    last.expect("at least one try")
}

/// Play game `id`; returns it and the Zobrist key of every position (start first). The
/// game's `millis` is wall-clock time from the start of the opening's draw to its end.
pub fn play(
    id: u64,
    s: &Settings,
    book: &[Board],
    perm: &[usize],
    worker: &mut Worker,
    tt: &Tt,
) -> (Game, Vec<u64>) {
    let t0 = Instant::now();
    let start = opening(id, s, book, perm, worker, tt);
    let mut plies = Vec::with_capacity(200);
    let mut keys = vec![start.board.hash()];
    let end = self_play(
        &start,
        crate::data::pool::NodeBudget {
            hard: s.nodes,
            soft: s.soft_nodes,
        },
        &s.adjudication,
        &SearchOptions::default(),
        worker,
        tt,
        |b, best, score, ply| {
            if ply > 0 {
                keys.push(b.hash());
            }
            plies.push(Ply {
                mv: best,
                score: score.clamp(-32_000, 32_000) as i16,
            });
        },
    );
    let reason = match end.reason {
        "mate" => EndReason::Mate,
        "stalemate" => EndReason::Stalemate,
        "draw-50" => EndReason::FiftyMoves,
        "draw-material" => EndReason::Material,
        "draw-repetition" => EndReason::Repetition,
        "adjudicated" => EndReason::AdjudicatedWin,
        "adjudicated-draw" => EndReason::AdjudicatedDraw,
        _ => EndReason::Cap,
    };
    let game = Game {
        id,
        millis: t0.elapsed().as_millis().min(u128::from(u32::MAX)) as u32,
        white_points2: (end.white_score * 2.0) as u8,
        reason,
        start: to_fen(&start.board),
        plies,
    };
    (game, keys)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::corpus::{Filter, Loader, read_manifest};
    use crate::data::merge::merge_corpora;

    /// `--first-id F --games G` plays the series F..F+G and nothing past it, however often
    /// it is run; without it, G more after the largest id (the rule before job arrays).
    #[test]
    fn a_series_from_first_id_stays_within_itself() {
        let d = Path::new("task-3");
        assert_eq!(id_range(None, Some(5), 0, d).unwrap(), 0..5);
        assert_eq!(id_range(None, Some(5), 12, d).unwrap(), 12..17);
        assert_eq!(id_range(None, None, 12, d).unwrap(), 12..u64::MAX);
        // --first-id 300 --games 100 on a corpus that is empty, below, partway, done
        assert_eq!(id_range(Some(300), Some(100), 0, d).unwrap(), 300..400);
        assert_eq!(id_range(Some(300), Some(100), 42, d).unwrap(), 300..400);
        assert_eq!(id_range(Some(300), Some(100), 357, d).unwrap(), 357..400);
        assert!(id_range(Some(300), Some(100), 400, d).unwrap().is_empty());
        assert_eq!(id_range(Some(300), None, 5000, d).unwrap(), 5000..u64::MAX);
        let e = id_range(Some(300), Some(100), 401, d)
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "task-3: holds game id 400, past the series --first-id 300 --games 100 \
             (ids 300..=399); a series is played into a corpus of its own"
        );
    }

    /// Issue 67: two job-array tasks' series, one stopped and resubmitted twice, merged into
    /// a main corpus: it holds each id of both series once, in id order, chunk by chunk.
    #[test]
    fn task_series_resume_within_themselves_and_merge() {
        let d = tempfile::tempdir().unwrap();
        let (t0, t1, main) = (
            d.path().join("t0"),
            d.path().join("t1"),
            d.path().join("main"),
        );
        let s = settings(&crate::data::datagen::test_args(1), 1);
        let play = |dir: &Path, first: u64, games: u32| {
            let mut a = crate::data::datagen::test_args(1);
            a.first_id = Some(first);
            a.games = Some(games);
            let mut w = CorpusWriter::open(dir, s.clone(), "t").unwrap();
            let r = generate(&a, &s, &mut w).unwrap();
            w.close_part().unwrap();
            r.games
        };
        assert_eq!(play(&t0, 0, 3), 3);
        // task 1 (ids 3..6): stopped after two games, resubmitted, resubmitted again
        assert_eq!(play(&t1, 3, 2), 2);
        assert_eq!(play(&t1, 3, 3), 1);
        assert_eq!(play(&t1, 3, 3), 0);
        let r = merge_corpora(&main, &[t1.clone(), t0.clone()]).unwrap();
        assert_eq!(r.entered.len(), 3);
        let ids: Vec<(u64, u64)> = read_manifest(&main)
            .unwrap()
            .iter()
            .map(|e| (e.first_game, e.last_game))
            .collect();
        assert_eq!(ids, [(0, 2), (3, 4), (5, 5)]);
        let l = Loader {
            filter: Filter::default(),
            holdout_percent: 0.0,
        };
        assert_eq!(l.for_each(&main, |_, _| {}).unwrap().games, 6);
    }

    /// Session 49's defect: a chunk that closed itself at its size limit while another
    /// thread had a lower id in flight let that game land in the next chunk, so the two id
    /// ranges overlapped and `actuary corpus` refused the corpus. Small chunks and four
    /// threads make many seams; every range must stay disjoint and every id appear once.
    #[test]
    fn chunks_closed_at_the_size_limit_have_disjoint_id_ranges() {
        let d = tempfile::tempdir().unwrap();
        let mut a = crate::data::datagen::test_args(4);
        a.games = Some(24);
        let s = settings(&a, 1);
        let mut w = CorpusWriter::open(d.path(), s.clone(), "t").unwrap();
        w.set_chunk_bytes(600);
        generate(&a, &s, &mut w).unwrap();
        w.close_part().unwrap();
        let m = read_manifest(d.path()).unwrap();
        assert!(
            m.len() >= 4,
            "{} chunks: the size limit never closed one",
            m.len()
        );
        for (i, e) in m.iter().enumerate() {
            for b in &m[..i] {
                assert!(
                    e.first_game > b.last_game || e.last_game < b.first_game,
                    "{} {}..={} overlaps {} {}..={}",
                    e.chunk,
                    e.first_game,
                    e.last_game,
                    b.chunk,
                    b.first_game,
                    b.last_game
                );
            }
        }
        let ids: Vec<u64> = crate::data::corpus::games_by_id(d.path())
            .unwrap()
            .iter()
            .map(|g| g.id)
            .collect();
        assert_eq!(ids, (0..24).collect::<Vec<_>>());
    }

    #[test]
    fn corpus_games_are_deterministic_by_id_whatever_the_threads() {
        let d = tempfile::tempdir().unwrap();
        let one = d.path().join("one");
        let two = d.path().join("two");
        let mut a = crate::data::datagen::test_args(1);
        a.games = Some(6);
        let s = settings(&a, 1);
        let mut w = CorpusWriter::open(&one, s.clone(), "t").unwrap();
        generate(&a, &s, &mut w).unwrap();
        w.close_part().unwrap();
        // The same ids in two runs of 3 (the second continuing the first), on 2 threads.
        a.threads = 2;
        a.games = Some(3);
        for _ in 0..2 {
            let mut w = CorpusWriter::open(&two, s.clone(), "t").unwrap();
            generate(&a, &s, &mut w).unwrap();
            w.close_part().unwrap();
        }
        let games = |dir: &Path| crate::data::corpus::games_by_id(dir).unwrap();
        let (g1, g2) = (games(&one), games(&two));
        assert_eq!(g1.len(), 6);
        assert_eq!(
            g1.iter().map(|g| g.id).collect::<Vec<_>>(),
            [0, 1, 2, 3, 4, 5]
        );
        assert_eq!(g1, g2);
        assert_eq!(read_manifest(&two).unwrap().len(), 2);
        // Every game replays legally, ends as its reason says, and its result fits it.
        let l = Loader {
            filter: Filter::ALL,
            holdout_percent: 0.0,
        };
        let counts = l.for_each(&one, |_, _| {}).unwrap();
        assert_eq!(counts.games, 6);
        assert_eq!(
            counts.positions,
            g1.iter().map(|g| g.plies.len() as u64).sum::<u64>()
        );
        for g in &g1 {
            assert!(
                g.plies.len() > 10,
                "game {} has {} plies",
                g.id,
                g.plies.len()
            );
            match g.reason {
                EndReason::AdjudicatedDraw | EndReason::Repetition | EndReason::Cap => {
                    assert_eq!(g.white_points2, 1)
                }
                EndReason::Mate | EndReason::AdjudicatedWin => assert_ne!(g.white_points2, 1),
                _ => {}
            }
        }
    }
}
