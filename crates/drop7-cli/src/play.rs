//! `drop7 play`: whole games in parallel, one JSON line per game, resumable.

use std::collections::BTreeMap;
use std::fs::OpenOptions;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Instant;

use clap::Args;
use drop7::policy::PolicyFactory;
use drop7::rng::{parse_seed, seed_hex};
use drop7::runner::{GameRecord, play_game};
use indicatif::{ProgressBar, ProgressStyle};
use rayon::prelude::*;

use crate::mechanics::CliResult;

/// A block of consecutive seeds `start, start+1, …` (wrapping).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SeedBlock {
    pub start: u32,
    pub count: u32,
}

impl SeedBlock {
    /// Parse `<start>:<count>` (each decimal or 0x-hex).
    pub fn parse(s: &str) -> Result<Self, String> {
        let (a, b) = s.split_once(':').ok_or_else(|| {
            format!("bad seed block `{s}`: expected <start>:<count>, e.g. 0xa52f2140:256")
        })?;
        let start = parse_seed(a)?;
        let count =
            parse_seed(b).map_err(|_| format!("bad seed block `{s}`: count must be a number"))?;
        if count == 0 {
            return Err(format!("bad seed block `{s}`: count must be at least 1"));
        }
        Ok(Self { start, count })
    }
    pub fn seeds(&self) -> impl Iterator<Item = u32> + '_ {
        (0..self.count).map(|i| self.start.wrapping_add(i))
    }
}

impl std::fmt::Display for SeedBlock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", seed_hex(self.start), self.count)
    }
}

#[derive(Args)]
pub struct PlayArgs {
    /// Policy: random, center, leftmost, fair-dNsK (e.g. fair-d3s7), ntuple-… with --model.
    #[arg(long)]
    pub policy: String,
    /// Seed block <start>:<count>, e.g. 0xa52f2140:256.
    #[arg(long)]
    pub seeds: String,
    /// Worker threads (default: all cores).
    #[arg(long)]
    pub threads: Option<usize>,
    /// Append one JSON line per game here; seeds already in the file are skipped (resume).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// No progress bar.
    #[arg(long)]
    pub quiet: bool,
}

/// Records already in `path` for this policy (seed → record). A torn last line from a crash
/// is dropped and the file truncated to the last whole line.
pub fn load_records(path: &Path, policy: &str) -> Result<BTreeMap<u32, GameRecord>, String> {
    let mut done = BTreeMap::new();
    let Ok(file) = std::fs::File::open(path) else {
        return Ok(done);
    };
    let mut good_len = 0u64;
    let mut torn = false;
    for (i, line) in BufReader::new(file).lines().enumerate() {
        let line = line.map_err(|e| format!("{}: {e}", path.display()))?;
        if torn {
            return Err(format!(
                "{}: line {} follows an unreadable line; fix or remove the file",
                path.display(),
                i + 1
            ));
        }
        match serde_json::from_str::<GameRecord>(&line) {
            Ok(r) => {
                if r.policy != policy {
                    return Err(format!(
                        "{}: line {} was played by `{}`, not `{policy}`; use another --out file",
                        path.display(),
                        i + 1,
                        r.policy
                    ));
                }
                done.insert(r.seed, r);
                good_len += line.len() as u64 + 1;
            }
            Err(_) => torn = true,
        }
    }
    if torn {
        let f = OpenOptions::new()
            .write(true)
            .open(path)
            .map_err(|e| format!("{}: {e}", path.display()))?;
        f.set_len(good_len)
            .map_err(|e| format!("{}: {e}", path.display()))?;
        eprintln!(
            "note: {}: dropped a torn last line (interrupted run)",
            path.display()
        );
    }
    Ok(done)
}

/// Play every seed of `block` not yet in `out`, in parallel; returns all records in seed
/// order (including the ones found in `out`).
pub fn run_block(
    factory: &PolicyFactory,
    policy: &str,
    block: SeedBlock,
    threads: Option<usize>,
    out: Option<&Path>,
    quiet: bool,
) -> Result<Vec<GameRecord>, String> {
    let mut done = match out {
        Some(p) => load_records(p, policy)?,
        None => BTreeMap::new(),
    };
    let todo: Vec<u32> = block.seeds().filter(|s| !done.contains_key(s)).collect();
    if !done.is_empty() && !quiet {
        eprintln!(
            "resuming: {} of {} games already in the output",
            block.count as usize - todo.len(),
            block.count
        );
    }
    let writer = match out {
        Some(p) => Some(Mutex::new(
            evidence::open_append(p).map_err(|e| e.to_string())?,
        )),
        None => None,
    };
    let bar = if quiet {
        ProgressBar::hidden()
    } else {
        ProgressBar::new(todo.len() as u64)
    };
    bar.set_style(
        ProgressStyle::with_template(
            "{prefix} [{bar:30}] {pos}/{len} games  {msg}  {elapsed_precise} ETA {eta}",
        )
        .expect("valid template")
        .progress_chars("=> "),
    );
    bar.set_prefix(policy.to_owned());
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads.unwrap_or(0))
        .build()
        .map_err(|e| e.to_string())?;
    let stats = Mutex::new((0u64, 0u64));
    let t0 = Instant::now();
    let results: Result<Vec<GameRecord>, String> = pool.install(|| {
        todo.par_iter()
            .map_init(
                || factory(),
                |chooser, &seed| {
                    let mut r = play_game(seed, chooser.as_mut());
                    // The arm as named on the command line (with its model file, if any), so
                    // two models under one policy name never share a results file.
                    r.policy = policy.to_owned();
                    if let Some(w) = &writer {
                        let line = serde_json::to_string(&r).map_err(|e| e.to_string())?;
                        let mut f = w.lock().expect("writer lock");
                        writeln!(f, "{line}")
                            .and_then(|()| f.flush())
                            .map_err(|e| format!("writing results: {e}"))?;
                    }
                    let mut s = stats.lock().expect("stats lock");
                    s.0 += r.score;
                    s.1 += 1;
                    bar.set_message(format!("mean {:.0}", s.0 as f64 / s.1 as f64));
                    bar.inc(1);
                    Ok(r)
                },
            )
            .collect()
    });
    bar.finish_and_clear();
    for r in results? {
        done.insert(r.seed, r);
    }
    if !quiet && !todo.is_empty() {
        eprintln!(
            "{} games in {:.1} s",
            todo.len(),
            t0.elapsed().as_secs_f64()
        );
    }
    Ok(block.seeds().filter_map(|s| done.remove(&s)).collect())
}

/// Summary of a cohort (printed by `play`, used by `screen`).
#[derive(Debug, Clone, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CohortSummary {
    pub policy: String,
    pub seeds: String,
    pub games: usize,
    pub mean: f64,
    pub median: f64,
    pub q25: f64,
    pub max: f64,
    pub mean_moves: f64,
    pub clears_per_move: f64,
    pub reveals_per_move: f64,
    pub work_per_game: f64,
    pub work_per_move: f64,
    pub censored: u64,
    pub incomplete: u64,
    pub illegal: u64,
    pub wall_seconds: f64,
}

pub fn summarize(policy: &str, block: SeedBlock, records: &[GameRecord]) -> CohortSummary {
    let scores: Vec<f64> = records.iter().map(|r| r.score as f64).collect();
    let mut sorted = scores.clone();
    sorted.sort_by(f64::total_cmp);
    let n = records.len().max(1) as f64;
    let moves: u64 = records.iter().map(|r| r.moves as u64).sum();
    let m = moves.max(1) as f64;
    let sum = |f: fn(&GameRecord) -> u64| records.iter().map(f).sum::<u64>();
    CohortSummary {
        policy: policy.to_owned(),
        seeds: block.to_string(),
        games: records.len(),
        mean: evidence::describe::mean(&scores),
        median: evidence::describe::quantile_sorted(&sorted, 0.5),
        q25: evidence::describe::quantile_sorted(&sorted, 0.25),
        max: sorted.last().copied().unwrap_or(f64::NAN),
        mean_moves: moves as f64 / n,
        clears_per_move: sum(|r| r.numbered_cleared) as f64 / m,
        reveals_per_move: sum(|r| r.covers_revealed) as f64 / m,
        work_per_game: sum(|r| r.work) as f64 / n,
        work_per_move: sum(|r| r.work) as f64 / m,
        censored: records.iter().filter(|r| r.censored).count() as u64,
        incomplete: sum(|r| r.incomplete),
        illegal: sum(|r| r.illegal),
        wall_seconds: records.iter().map(|r| r.wall_seconds).sum(),
    }
}

pub fn play(a: PlayArgs) -> CliResult {
    let block = SeedBlock::parse(&a.seeds)?;
    let factory = crate::policies::factory(&a.policy)?;
    let records = run_block(
        &factory,
        &a.policy,
        block,
        a.threads,
        a.out.as_deref(),
        a.quiet,
    )?;
    let s = summarize(&a.policy, block, &records);
    println!(
        "{} on {}: {} games  mean {:.2}  median {:.0}  Q25 {:.0}  max {:.0}  moves {:.2}  work/move {:.1}  censored {}  incomplete {}  illegal {}",
        s.policy,
        s.seeds,
        s.games,
        s.mean,
        s.median,
        s.q25,
        s.max,
        s.mean_moves,
        s.work_per_move,
        s.censored,
        s.incomplete,
        s.illegal
    );
    println!("{}", serde_json::to_string(&s).map_err(|e| e.to_string())?);
    Ok(())
}
