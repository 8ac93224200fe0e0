//! Whole games: the one game loop under a policy, the resumable block runner every command
//! and the trainer use (`play`, `screen`, training validation), and the reference-random
//! loop behind benchmarks and sampled test states.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::Relaxed};
use std::time::Instant;

use serde::{Deserialize, Serialize};

use crate::game::{Game, PublicState, TraceRandom};
use crate::policy::{Policy, PolicyFactory};
use crate::seeds::{SeedBlock, seed_hex};

/// One finished game.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GameRecord {
    /// The arm: the policy's name as the run labelled it (with its model, if any).
    pub policy: String,
    pub seed_hex: String,
    pub seed: u32,
    pub score: u64,
    pub moves: u32,
    /// Stopped at the move cap rather than by game over.
    pub censored: bool,
    pub numbered_cleared: u64,
    pub covers_revealed: u64,
    pub work: u64,
    /// Decisions whose search did not finish its depth.
    pub incomplete: u64,
    /// Answers that were not a legal column (the game then stops: a policy fault).
    pub illegal: u64,
    pub wall_seconds: f64,
}

/// Play game `seed` to the end (or the 2,000-move cap) with `policy`.
pub fn play_game(seed: u32, policy: &mut dyn Policy) -> GameRecord {
    let t0 = Instant::now();
    let mut game = Game::new(seed);
    let mut r = GameRecord {
        policy: policy.name().to_owned(),
        seed_hex: seed_hex(seed),
        seed,
        score: 0,
        moves: 0,
        censored: false,
        numbered_cleared: 0,
        covers_revealed: 0,
        work: 0,
        incomplete: 0,
        illegal: 0,
        wall_seconds: 0.0,
    };
    while !game.finished() {
        let choice = policy.choose(&game.public());
        r.work += choice.work;
        r.incomplete += (!choice.complete) as u64;
        let Some(column) = choice.column else {
            r.illegal += 1;
            break;
        };
        match game.play(column, &mut ()) {
            Ok(out) => {
                r.numbered_cleared += out.cleared as u64;
                r.covers_revealed += out.revealed as u64;
            }
            Err(_) => {
                r.illegal += 1;
                break;
            }
        }
    }
    r.score = game.score;
    r.moves = game.moves_played;
    r.censored = game.censored();
    r.wall_seconds = t0.elapsed().as_secs_f64();
    r
}

/// Play game `seed` with the reference trace policy (its Mulberry32 stream from the seed),
/// calling `visit(state, column)` before each move; `visit` may stop the game early.
/// Allocation-free: benchmarks time it.
#[inline]
pub fn play_trace_random(
    seed: u32,
    mut visit: impl FnMut(&Game, usize) -> ControlFlow<()>,
) -> Game {
    let mut game = Game::new(seed);
    let mut policy = TraceRandom::new(seed);
    while !game.finished() {
        let Some(c) = policy.choose(&game.board) else {
            break;
        };
        if visit(&game, c).is_break() {
            break;
        }
        game.play(c, &mut ())
            .expect("the policy plays legal columns");
    }
    game
}

/// Totals of a block of reference-random games: identical on every run and every machine.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct BlockTotals {
    pub games: u64,
    pub moves: u64,
    pub score: u64,
}

/// Play every game of `block` with the reference trace policy, single thread, no allocation.
pub fn trace_random_block(block: SeedBlock) -> BlockTotals {
    let mut t = BlockTotals::default();
    for seed in block.seeds() {
        let game = play_trace_random(seed, |_, _| ControlFlow::Continue(()));
        t.games += 1;
        t.moves += game.moves_played as u64;
        t.score += game.score;
    }
    t
}

/// `n` states (with the column the reference-random policy then played) from consecutive
/// reference-random games starting at `seed`: realistic inputs for benchmarks and tests.
pub fn sample_states(seed: u32, n: usize) -> Vec<(PublicState, usize)> {
    let mut out = Vec::with_capacity(n);
    let mut seed = seed;
    while out.len() < n {
        play_trace_random(seed, |g, c| {
            out.push((g.public(), c));
            if out.len() < n {
                ControlFlow::Continue(())
            } else {
                ControlFlow::Break(())
            }
        });
        seed = seed.wrapping_add(1);
    }
    out
}

/// Single-thread decision times of a policy along its own games from seed `start`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DecisionTiming {
    pub decisions: u32,
    pub seconds: f64,
    pub worst_seconds: f64,
    pub work: u64,
}

/// Time the first `decisions` decisions of `policy` playing games `start, start+1, …`;
/// `tick` is called after each (a progress bar).
pub fn time_decisions(
    policy: &mut dyn Policy,
    start: u32,
    decisions: u32,
    mut tick: impl FnMut(),
) -> Result<DecisionTiming, RunError> {
    let mut t = DecisionTiming {
        decisions: 0,
        seconds: 0.0,
        worst_seconds: 0.0,
        work: 0,
    };
    let mut seed = start;
    while t.decisions < decisions {
        let mut game = Game::new(seed);
        while !game.finished() && t.decisions < decisions {
            let t0 = Instant::now();
            let choice = policy.choose(&game.public());
            let dt = t0.elapsed().as_secs_f64();
            t.seconds += dt;
            t.worst_seconds = t.worst_seconds.max(dt);
            t.work += choice.work;
            t.decisions += 1;
            tick();
            let column = choice.column.ok_or(RunError::NoColumn { seed })?;
            game.play(column, &mut ())
                .map_err(|_| RunError::NoColumn { seed })?;
        }
        seed = seed.wrapping_add(1);
    }
    Ok(t)
}

/// Why a block could not be run or resumed.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{}: line {line} was played by `{found}`, not `{arm}`; use another output file", path.display())]
    ForeignArm {
        path: PathBuf,
        line: usize,
        found: String,
        arm: String,
    },
    #[error("{}: line {line} is not a game record, and records follow it; fix or remove the file", path.display())]
    Corrupt { path: PathBuf, line: usize },
    #[error("{}: another process is writing this results file (it is locked)", path.display())]
    Busy { path: PathBuf },
    #[error("{}: not a regular file (a results file must be a regular file, or not exist yet)", path.display())]
    NotAFile { path: PathBuf },
    #[error("--threads {threads}: use at most {most} (4 per core)")]
    Threads { threads: usize, most: usize },
    /// The observer asked to stop (`played` games were finished, and written if there is a
    /// results file).
    #[error("stopped after {played} games")]
    Stopped { played: usize },
    #[error("{0}")]
    Merge(String),
    #[error("the policy gave no legal column in a live game (seed {seed:#010x})")]
    NoColumn { seed: u32 },
}

/// The largest results file read whole (by [`merge_play_file`]): a record line is some 300
/// bytes, so 1 KiB a game of the largest block `play` accepts is generous (and the merged
/// records are held in memory anyway).
const MAX_RESULTS_BYTES: u64 = crate::screen::MAX_BLOCK_GAMES * 1024;

fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> RunError + '_ {
    move |source| RunError::Io {
        path: path.to_owned(),
        source,
    }
}

/// Records already in the results file `path` for arm `arm`, by seed.
///
/// The file is append-only JSON lines. A last line cut short by a crash is dropped and the
/// file truncated to the last whole record (byte offsets are counted as read, so CRLF files
/// are cut in the right place); a last record that is whole but lacks its newline gets one, so
/// the next append starts a fresh line. A bad line with records after it is an error: that is
/// not a crash, and guessing would lose data.
pub fn load_records(path: &Path, arm: &str) -> Result<BTreeMap<u32, GameRecord>, RunError> {
    let mut done = BTreeMap::new();
    // A regular file only (fileio): read line by line, so no size limit is needed.
    let file = match fileio::open(path) {
        Ok(f) => f,
        Err(fileio::FileError::Io { source, .. })
            if source.kind() == std::io::ErrorKind::NotFound =>
        {
            return Ok(done);
        }
        Err(e) => return Err(io_err(path)(e.into_io())),
    };
    let mut reader = BufReader::new(file);
    let (mut good_len, mut line_no) = (0u64, 0usize);
    let mut buf = Vec::new();
    let mut torn: Option<usize> = None;
    let mut needs_newline = false;
    loop {
        buf.clear();
        let n = reader.read_until(b'\n', &mut buf).map_err(io_err(path))?;
        if n == 0 {
            break;
        }
        line_no += 1;
        let text = String::from_utf8_lossy(&buf);
        let trimmed = text.trim_end_matches(['\n', '\r']);
        if trimmed.trim().is_empty() {
            if torn.is_none() {
                good_len += n as u64;
            }
            continue;
        }
        if let Some(bad) = torn {
            let _ = bad;
            return Err(RunError::Corrupt {
                path: path.to_owned(),
                line: line_no - 1,
            });
        }
        match serde_json::from_str::<GameRecord>(trimmed) {
            Ok(r) => {
                if r.policy != arm {
                    return Err(RunError::ForeignArm {
                        path: path.to_owned(),
                        line: line_no,
                        found: r.policy,
                        arm: arm.to_owned(),
                    });
                }
                done.insert(r.seed, r);
                good_len += n as u64;
                needs_newline = !buf.ends_with(b"\n");
            }
            Err(_) => torn = Some(line_no),
        }
    }
    if torn.is_some() {
        // Opened for appending (a regular file only), which truncates as well.
        let f = evidence::open_append(path).map_err(|e| io_err(path)(e.into_io()))?;
        f.set_len(good_len).map_err(io_err(path))?;
        needs_newline = false;
        // the record before a torn line had its newline (it was not the last line)
    }
    if needs_newline {
        evidence::open_append(path)
            .map_err(|e| io_err(path)(e.into_io()))?
            .write_all(b"\n")
            .map_err(io_err(path))?;
    }
    Ok(done)
}

/// What a block run reports as it goes (a progress bar, a log). Called from worker threads.
pub trait RunObserver: Sync {
    /// Before the first game: `done` games were found in the results file, `todo` remain.
    fn started(&self, _arm: &str, _done: usize, _todo: usize) {}
    /// After each newly played game (already written to the results file).
    fn finished_game(&self, _record: &GameRecord) {}
    /// Whether to stop before the next game (a caller's Ctrl-C): the run then ends with
    /// [`RunError::Stopped`], every game finished so far written and kept for a resume.
    fn stop(&self) -> bool {
        false
    }
}

/// An observer that reports nothing.
pub struct Silent;
impl RunObserver for Silent {}

/// How to run a block.
#[derive(Default)]
pub struct RunOptions<'a> {
    /// Worker threads; 0 = all cores.
    pub threads: usize,
    /// Append one JSON line per game here; seeds already in it are not replayed (resume).
    pub out: Option<&'a Path>,
}

/// A block's games in seed order, with what was resumed and played.
#[derive(Debug, Clone)]
pub struct BlockRun {
    pub arm: String,
    pub block: SeedBlock,
    pub records: Vec<GameRecord>,
    /// Games found in the results file.
    pub resumed: usize,
    /// Games played now.
    pub played: usize,
    /// Wall time of this run's play.
    pub seconds: f64,
}

/// The most worker threads a command may ask for: 4 per core. More only slows the work,
/// and thousands fail to spawn (a panic, where every command should refuse with one line).
pub fn max_threads() -> usize {
    4 * std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Refuse a thread count over [`max_threads`] (0 is the caller's "all cores").
pub fn check_threads(threads: usize) -> Result<(), RunError> {
    let most = max_threads();
    if threads > most {
        return Err(RunError::Threads { threads, most });
    }
    Ok(())
}

/// Play every seed of `block` not yet in `opts.out`, in parallel, with policies from
/// `factory` (one per worker); the arm is the policies' name. Each game is appended to the
/// results file as one whole line as soon as it ends, under an exclusive lock on the file
/// for the whole run (a second process writing the same file is refused). Returns every
/// record of the block in seed order, resumed ones included.
pub fn run_block(
    factory: &PolicyFactory,
    block: SeedBlock,
    opts: &RunOptions<'_>,
    observer: &dyn RunObserver,
) -> Result<BlockRun, RunError> {
    check_threads(opts.threads)?;
    let first = factory();
    let arm = first.name().to_owned();
    let writer = match opts.out {
        Some(p) => {
            // a device or pipe (`--out /dev/stdout`) would be read back by the resume scan
            if let Ok(m) = std::fs::metadata(p)
                && !m.is_file()
            {
                return Err(RunError::NotAFile { path: p.to_owned() });
            }
            let f = evidence::open_append(p).map_err(|e| io_err(p)(e.into_io()))?;
            f.try_lock().map_err(|e| match e {
                std::fs::TryLockError::WouldBlock => RunError::Busy { path: p.to_owned() },
                std::fs::TryLockError::Error(e) => io_err(p)(e),
            })?;
            Some((p, Mutex::new(f)))
        }
        None => None,
    };
    let mut done = match opts.out {
        Some(p) => load_records(p, &arm)?,
        None => BTreeMap::new(),
    };
    let todo: Vec<u32> = block.seeds().filter(|s| !done.contains_key(s)).collect();
    let resumed = block.count() as usize - todo.len();
    observer.started(&arm, resumed, todo.len());
    let threads = match opts.threads {
        0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
        n => n,
    }
    .min(todo.len().max(1));
    let next = AtomicUsize::new(0);
    let failed = AtomicBool::new(false);
    let error: Mutex<Option<RunError>> = Mutex::new(None);
    let t0 = Instant::now();
    let first = Mutex::new(Some(first));
    let played: Vec<GameRecord> = std::thread::scope(|s| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                s.spawn(|| {
                    let mut policy = first
                        .lock()
                        .expect("policy slot")
                        .take()
                        .unwrap_or_else(|| factory());
                    let mut out = Vec::new();
                    while !failed.load(Relaxed) && !observer.stop() {
                        let Some(&seed) = todo.get(next.fetch_add(1, Relaxed)) else {
                            break;
                        };
                        let r = play_game(seed, policy.as_mut());
                        if let Some((path, w)) = &writer {
                            let mut line = serde_json::to_string(&r).expect("a record serialises");
                            line.push('\n');
                            let written = w.lock().expect("writer lock").write_all(line.as_bytes());
                            if let Err(e) = written {
                                failed.store(true, Relaxed);
                                error
                                    .lock()
                                    .expect("error slot")
                                    .get_or_insert(io_err(path)(e));
                                break;
                            }
                        }
                        observer.finished_game(&r);
                        out.push(r);
                    }
                    out
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|h| h.join().expect("a game worker panicked"))
            .collect()
    });
    if let Some(e) = error.into_inner().expect("error slot") {
        return Err(e);
    }
    if observer.stop() {
        return Err(RunError::Stopped {
            played: played.len(),
        });
    }
    let played_n = played.len();
    for r in played {
        done.insert(r.seed, r);
    }
    Ok(BlockRun {
        arm,
        block,
        records: block.seeds().filter_map(|s| done.remove(&s)).collect(),
        resumed,
        played: played_n,
        seconds: t0.elapsed().as_secs_f64(),
    })
}

/// Join the results files of a block's shards (`(shard, file)`, every shard of one count
/// exactly once) into the block's records in seed order: the one shard check behind
/// `merge play` and `merge screen`. Refuses shards of different counts, missing or repeated
/// shards, a shard with games missing, games outside a shard's part, and files of another
/// arm. `arm` names the arm; `None` takes it from the first record found.
pub fn merge_shards(
    block: SeedBlock,
    arm: Option<&str>,
    parts: &[(crate::seeds::Shard, PathBuf)],
) -> Result<Vec<GameRecord>, RunError> {
    let fail = |m: String| RunError::Merge(m);
    let Some((first, _)) = parts.first() else {
        return Err(fail("no shard files to merge".into()));
    };
    let n = first.count;
    let mut seen = vec![false; n as usize];
    for (s, p) in parts {
        if s.count != n {
            return Err(fail(format!(
                "{}: shard {} of a different count than {}",
                p.display(),
                s.tag(),
                first.tag()
            )));
        }
        if std::mem::replace(&mut seen[s.index as usize], true) {
            return Err(fail(format!(
                "{}: shard {} given twice",
                p.display(),
                s.tag()
            )));
        }
    }
    let missing: Vec<String> = (0..n)
        .filter(|k| !seen[*k as usize])
        .map(|k| crate::seeds::Shard { index: k, count: n }.tag())
        .collect();
    if !missing.is_empty() {
        return Err(fail(format!("missing shards: {}", missing.join(", "))));
    }
    let mut sorted: Vec<&(crate::seeds::Shard, PathBuf)> = parts.iter().collect();
    sorted.sort_by_key(|(s, _)| s.index);
    let mut name: Option<String> = arm.map(str::to_owned);
    let mut all = Vec::with_capacity(block.count() as usize);
    for (s, p) in sorted {
        let part = s.of(block).map_err(|e| fail(e.to_string()))?;
        let name = name.get_or_insert_with(|| {
            // The arm of the first whole record, read up to it only (a regular file, fileio).
            fileio::open(p)
                .ok()
                .and_then(|f| {
                    BufReader::new(f)
                        .split(b'\n')
                        .map_while(Result::ok)
                        .find_map(|l| serde_json::from_slice::<GameRecord>(&l).ok())
                        .map(|r| r.policy)
                })
                .unwrap_or_default()
        });
        let mut got = load_records(p, name)?;
        if let Some(seed) = got.keys().find(|x| part.index_of(**x).is_none()) {
            return Err(fail(format!(
                "{}: seed {seed:#010x} is not in shard {} ({part}): a foreign shard",
                p.display(),
                s.tag()
            )));
        }
        if (got.len() as u64) < part.count() {
            return Err(fail(format!(
                "shard {} has {} of {} games of `{name}`; resume it before merging",
                s.tag(),
                got.len(),
                part.count()
            )));
        }
        all.extend(part.seeds().filter_map(|x| got.remove(&x)));
    }
    Ok(all)
}

/// `FILE.shard-K-of-N`: where `play --shard K/N --out FILE` writes its part of the block, and
/// where [`merge_play_file`] looks for it.
pub fn shard_file(file: &Path, shard: crate::seeds::Shard) -> PathBuf {
    let mut name = file.as_os_str().to_owned();
    name.push(format!(".shard-{}", shard.tag()));
    PathBuf::from(name)
}

/// The shard files `FILE.shard-K-of-N` beside `file`, in directory order. A name with the
/// prefix that is not a shard, or a shard that is not a regular file, is an error (merging
/// around it would hide a mistake).
pub fn find_shard_files(file: &Path) -> Result<Vec<(crate::seeds::Shard, PathBuf)>, RunError> {
    let dir = file
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let stem = file
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let prefix = format!("{stem}.shard-");
    let mut parts = Vec::new();
    for e in std::fs::read_dir(dir).map_err(io_err(dir))?.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let Some(tag) = name.strip_prefix(&prefix) else {
            continue;
        };
        if !std::fs::metadata(e.path()).is_ok_and(|m| m.is_file()) {
            return Err(RunError::NotAFile { path: e.path() });
        }
        let shard = tag
            .split_once("-of-")
            .and_then(|(k, n)| format!("{k}/{n}").parse().ok())
            .ok_or_else(|| {
                RunError::Merge(format!("{name}: not a shard file (FILE.shard-K-of-N)"))
            })?;
        parts.push((shard, e.path()));
    }
    Ok(parts)
}

/// What [`merge_play_file`] joined.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MergedPlay {
    pub shards: usize,
    pub games: usize,
}

/// `drop7 merge play FILE --seeds BLOCK`: join the `FILE.shard-K-of-N` files of a sharded
/// `play` into FILE, in seed order, as one process would have written it. FILE is a results
/// file like `play --out`'s, so its lock is held for the whole merge (a `play` writing it is
/// not overwritten); lines FILE holds that the shards do not (another arm's games, games
/// played into it) are refused unless `force`.
pub fn merge_play_file(file: &Path, block: SeedBlock, force: bool) -> Result<MergedPlay, RunError> {
    let parts = find_shard_files(file)?;
    let records = merge_shards(block, None, &parts)
        .map_err(|e| RunError::Merge(format!("{}: {e}", file.display())))?;
    if let Ok(m) = std::fs::metadata(file)
        && !m.is_file()
    {
        return Err(RunError::NotAFile {
            path: file.to_owned(),
        });
    }
    let held = evidence::open_append(file).map_err(|e| io_err(file)(e.into_io()))?;
    held.try_lock().map_err(|e| match e {
        std::fs::TryLockError::WouldBlock => RunError::Busy {
            path: file.to_owned(),
        },
        std::fs::TryLockError::Error(e) => io_err(file)(e),
    })?;
    let line = |r: &GameRecord| serde_json::to_string(r).expect("a record serialises");
    let merged: std::collections::HashSet<String> = records.iter().map(line).collect();
    let text =
        fileio::read_to_string(file, MAX_RESULTS_BYTES).map_err(|e| io_err(file)(e.into_io()))?;
    let foreign = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .filter(|l| {
            serde_json::from_str::<GameRecord>(l).map_or(true, |r| !merged.contains(&line(&r)))
        })
        .count();
    if foreign > 0 && !force {
        return Err(RunError::Merge(format!(
            "{}: holds {foreign} line(s) the shards do not (another arm's games, or games played into it); --force replaces them",
            file.display()
        )));
    }
    let text: String = records.iter().map(|r| line(r) + "\n").collect();
    evidence::atomic_write(file, text.as_bytes()).map_err(|e| io_err(file)(e.into_io()))?;
    drop(held);
    Ok(MergedPlay {
        shards: parts.len(),
        games: records.len(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::BuiltinPolicy;

    fn center() -> PolicyFactory {
        "center"
            .parse::<BuiltinPolicy>()
            .unwrap()
            .factory()
            .unwrap()
    }

    #[test]
    fn block_runs_resume_and_match_a_fresh_run() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("g.jsonl");
        let block: SeedBlock = "0x2d700000:12".parse().unwrap();
        let opts = RunOptions {
            threads: 2,
            out: Some(&out),
        };
        let fresh = run_block(&center(), block, &RunOptions::default(), &Silent).unwrap();
        assert_eq!(fresh.records.len(), 12);
        assert!(fresh.records.windows(2).all(|w| w[0].seed + 1 == w[1].seed));
        // a partial file (first 5 games) plus a torn sixth line, then resume
        let first5: SeedBlock = "0x2d700000:5".parse().unwrap();
        run_block(&center(), first5, &opts, &Silent).unwrap();
        let mut f = evidence::open_append(&out).unwrap();
        f.write_all(b"{\"policy\":\"cen").unwrap();
        let run = run_block(&center(), block, &opts, &Silent).unwrap();
        assert_eq!((run.resumed, run.played), (5, 7));
        let strip = |v: &[GameRecord]| {
            v.iter()
                .map(|r| GameRecord {
                    wall_seconds: 0.0,
                    ..r.clone()
                })
                .collect::<Vec<_>>()
        };
        assert_eq!(strip(&run.records), strip(&fresh.records));
        let text = std::fs::read_to_string(&out).unwrap();
        assert_eq!(text.lines().count(), 12);
        assert!(
            text.lines()
                .all(|l| serde_json::from_str::<GameRecord>(l).is_ok())
        );
        // a foreign arm in the file is refused
        let e = run_block(
            &"leftmost"
                .parse::<BuiltinPolicy>()
                .unwrap()
                .factory()
                .unwrap(),
            block,
            &opts,
            &Silent,
        )
        .unwrap_err();
        assert!(e.to_string().contains("played by `center`"), "{e}");
    }

    #[test]
    fn resume_handles_crlf_and_a_missing_final_newline() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("g.jsonl");
        let block: SeedBlock = "0x2d700100:3".parse().unwrap();
        let run = run_block(&center(), block, &RunOptions::default(), &Silent).unwrap();
        let lines: Vec<String> = run
            .records
            .iter()
            .map(|r| serde_json::to_string(r).unwrap())
            .collect();
        // CRLF records, then a torn line: truncation must keep both whole records intact
        std::fs::write(&out, format!("{}\r\n{}\r\n{{\"sco", lines[0], lines[1])).unwrap();
        let got = load_records(&out, "center").unwrap();
        assert_eq!(got.len(), 2);
        assert_eq!(
            std::fs::read_to_string(&out).unwrap(),
            format!("{}\r\n{}\r\n", lines[0], lines[1])
        );
        // a whole last record without its newline gets one before anything is appended
        std::fs::write(&out, &lines[0]).unwrap();
        assert_eq!(load_records(&out, "center").unwrap().len(), 1);
        assert_eq!(
            std::fs::read_to_string(&out).unwrap(),
            format!("{}\n", lines[0])
        );
        // a bad line in the middle is an error, and the file is left alone
        let middle = format!("{}\nnot json\n{}\n", lines[0], lines[1]);
        std::fs::write(&out, &middle).unwrap();
        let e = load_records(&out, "center").unwrap_err().to_string();
        assert!(e.contains("line 2"), "{e}");
        assert_eq!(std::fs::read_to_string(&out).unwrap(), middle);
    }

    #[test]
    fn devices_and_absurd_thread_counts_are_refused() {
        let block: SeedBlock = "0x2d700000:2".parse().unwrap();
        let dev = Path::new("/dev/null");
        let e = run_block(
            &center(),
            block,
            &RunOptions {
                threads: 1,
                out: Some(dev),
            },
            &Silent,
        );
        assert!(matches!(e, Err(RunError::NotAFile { .. })));
        let e = run_block(
            &center(),
            block,
            &RunOptions {
                threads: 100_000,
                out: None,
            },
            &Silent,
        );
        assert!(matches!(e, Err(RunError::Threads { .. })));
    }

    #[test]
    fn a_second_writer_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("g.jsonl");
        let f = evidence::open_append(&out).unwrap();
        f.lock().unwrap();
        let block: SeedBlock = "0x2d700000:2".parse().unwrap();
        let e = run_block(
            &center(),
            block,
            &RunOptions {
                threads: 1,
                out: Some(&out),
            },
            &Silent,
        )
        .unwrap_err();
        assert!(matches!(e, RunError::Busy { .. }), "{e}");
    }

    #[test]
    fn sampled_states_follow_the_reference_random_games() {
        // the reference's own trace of its random policy (data/drop7/vectors, from the
        // reference implementation): each move's disc, column and the board after it
        let text = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../data/drop7/vectors/traces-random.jsonl"
        ))
        .unwrap();
        let vector: Vec<serde_json::Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        let first: Vec<&serde_json::Value> = vector
            .iter()
            .filter(|v| v["seedHex"] == "0x2d700000")
            .collect();
        assert_eq!(first.len(), 35);
        let s = sample_states(0x2d70_0000, 300);
        assert_eq!(s.len(), 300);
        // the first game's states: the board before each move (the start, then the board the
        // vector gives after the move before), the disc and the column the vector played
        let mut board = crate::board::Board::start().to_string();
        for (i, ((state, column), v)) in s.iter().zip(&first).enumerate() {
            assert_eq!(state.board.to_string(), board, "move {}", i + 1);
            assert_eq!(
                u64::from(state.next),
                v["disc"].as_u64().unwrap(),
                "move {}",
                i + 1
            );
            assert_eq!(
                *column as u64,
                v["column"].as_u64().unwrap(),
                "move {}",
                i + 1
            );
            board = v["board"].as_str().unwrap().to_owned();
        }
        // the block runner counts the vector's moves: 35 + 30 + 25
        let t = trace_random_block("0x2d700000:3".parse().unwrap());
        assert_eq!((t.games, t.moves), (3, 90));
    }
}
