//! A whole training run (docs/design/drop7-SPEC.md §7), resumable across sittings: the seed ledger, fresh or
//! resumed tables, the TD+TC games in segments, progress lines, periodic validation against
//! the fair leaf with the best tables kept, an optional plateau stop, checkpoints, final
//! weights and the curve. The command line only maps arguments to [`TrainConfig`] and
//! draws progress from [`TrainObserver`].
//!
//! Files in the output directory: `progress.jsonl`, `checkpoint.bin` (+ `.sha256`) and
//! `checkpoint.json` (the state that survives a restart), `validation-fair-dNsK.jsonl` (the
//! control, played once), `best-weights.bin`, `final-weights.bin`, `training-curve.svg`.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::time::Instant;

use drop7::SeedBlock;
use drop7::lease::{Ledger, Role, opener_name, unix_now};
use drop7::policy::BuiltinPolicy;
use drop7::runner::{GameRecord, RunOptions, Silent, run_block};
use drop7::screen::{faults, scores};
use evidence::{Arm, BootstrapConfig, paired_screen};
use serde::{Deserialize, Serialize};

use super::progress::{ProgressRecord, TrainPoint, ValidationPoint, append_progress};
use super::{Counters, Plan, opening_value, run_until};
use crate::Error;
use crate::layout::Layout;
use crate::model;
use crate::tables::{OPTIMISTIC_TOTAL, Tables};

/// Everything a run needs.
#[derive(Debug, Clone)]
pub struct TrainConfig {
    pub layout: Layout,
    /// Training games take the block's seeds in order, wrapping.
    pub seeds: SeedBlock,
    pub alpha: f32,
    /// Stop at this many training moves in total (a resumed run may raise it).
    pub target_moves: u64,
    /// Worker threads (1 = deterministic).
    pub threads: usize,
    pub checkpoint_every: u64,
    /// 0 = never validate.
    pub validate_every: u64,
    pub validation_seeds: SeedBlock,
    /// (depth, samples) of the validation search: `ntuple-dNsK` against `fair-dNsK`.
    pub validation_search: (u32, u32),
    /// Stop when the mean of the last four validation margins is not above the four before.
    pub plateau: bool,
    /// A progress line every this many moves.
    pub report_every: u64,
    pub out: PathBuf,
    pub ledger: PathBuf,
    /// Continue from `out/checkpoint.*` (refused if any setting that shapes what is learned or
    /// measured differs; the target, threads and cadences may change).
    pub resume: bool,
    /// Sibling afterstates learned from per move (`train::sibling_updates`); 0 = plain TD.
    pub siblings: u32,
    /// Start from these weights instead of fresh tables (same layout). A weights file starts
    /// fresh temporal-coherence accumulators (fresh step sizes, as the reference's
    /// continuation runs did); a checkpoint file keeps its own.
    pub warm_start: Option<PathBuf>,
}

/// What survives a restart (`checkpoint.json`). The settings block is compared on resume.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct TrainState {
    layout: Layout,
    seeds: SeedBlock,
    alpha: f32,
    /// Absent in checkpoints written before these were recorded (then not compared).
    #[serde(default)]
    validation_seeds: Option<SeedBlock>,
    #[serde(default)]
    validation_search: Option<String>,
    #[serde(default)]
    validate_every: Option<u64>,
    /// 0 in checkpoints written before sibling updates existed (they did none).
    #[serde(default)]
    siblings: u32,
    /// The warm-start file and its SHA-256, if the run began from one.
    #[serde(default)]
    warm_start: Option<String>,
    moves: u64,
    games: u64,
    cursor: u64,
    best_margin: Option<f64>,
    best_moves: Option<u64>,
    validation_margins: Vec<f64>,
    wall_seconds: f64,
    checkpoint_sha256: String,
}

/// Where a run ended.
#[derive(Debug, Clone, PartialEq)]
pub struct TrainSummary {
    pub moves: u64,
    pub games: u64,
    pub wall_seconds: f64,
    pub final_sha256: String,
    pub best_margin: Option<f64>,
    pub best_moves: Option<u64>,
    /// The plateau rule stopped the run before its target.
    pub plateaued: bool,
}

/// What a run reports as it goes. Every method has a silent default.
pub trait TrainObserver {
    /// A sentence for the person watching ("allocating …", "new best …").
    fn note(&self, _message: &str) {}
    /// A record just appended to `progress.jsonl`.
    fn progress(&self, _record: &ProgressRecord) {}
}

impl TrainObserver for () {}

/// The mean of the last four margins is not above the mean of the four before.
pub fn plateau_reached(margins: &[f64]) -> bool {
    let n = margins.len();
    n >= 8 && {
        let last: f64 = margins[n - 4..].iter().sum::<f64>() / 4.0;
        let before: f64 = margins[n - 8..n - 4].iter().sum::<f64>() / 4.0;
        last <= before
    }
}

/// A training run, set up (ledger, tables, state) and ready to [`Trainer::run`].
pub struct Trainer {
    cfg: TrainConfig,
    /// Held for the run's life: a second trainer on the same directory is refused.
    _lock: std::fs::File,
    tables: Arc<Tables>,
    st: TrainState,
    control: Option<Vec<GameRecord>>,
}

impl Trainer {
    fn search_name(&self) -> String {
        let (d, k) = self.cfg.validation_search;
        format!("d{d}s{k}")
    }

    /// Register the blocks, then start fresh tables or load the checkpoint (checking that
    /// this is the same run), and play the fair validation control once.
    pub fn new(cfg: TrainConfig, obs: &dyn TrainObserver) -> Result<Self, Error> {
        check_settings(&cfg)?;
        if cfg.out.exists() && !cfg.out.is_dir() {
            return Err(Error::Train(format!(
                "--out {}: exists and is not a directory (a run writes a directory)",
                cfg.out.display()
            )));
        }
        std::fs::create_dir_all(&cfg.out).map_err(Error::io(&cfg.out))?;
        let lock_path = cfg.out.join(".train.lock");
        let lock = fileio::lock(&lock_path).map_err(|e| match e {
            fileio::LockError::Held { .. } => Error::Train(format!(
                "{}: another training run is using this directory",
                cfg.out.display()
            )),
            fileio::LockError::File(e) => Error::io(&lock_path)(e.into_io()),
        })?;
        remove_stale_temporaries(&cfg.out, obs);
        let ckpt = cfg.out.join("checkpoint.bin");
        let state_path = cfg.out.join("checkpoint.json");
        let (d, k) = cfg.validation_search;
        let search = format!("d{d}s{k}");

        let st = if cfg.resume {
            // The run's state is a small JSON (kilobytes); 64 MB is far past any real one.
            let text = fileio::read_to_string(&state_path, 64 << 20).map_err(|e| {
                Error::Train(format!(
                    "--resume: {}: {}",
                    state_path.display(),
                    e.into_io()
                ))
            })?;
            let st: TrainState = serde_json::from_str(&text)
                .map_err(|e| Error::Train(format!("{}: {e}", state_path.display())))?;
            check_same_run(&st, &cfg, &search)?;
            // progress written after the checkpoint belongs to training that is now replayed
            keep_progress_until(&cfg.out.join("progress.jsonl"), st.moves)?;
            Some(st)
        } else {
            if state_path.exists() {
                return Err(Error::Train(format!(
                    "{} already holds a training run; pass --resume to continue it or choose another --out",
                    cfg.out.display()
                )));
            }
            // a log without a checkpoint is from a run that died before its first checkpoint
            let progress = cfg.out.join("progress.jsonl");
            if progress.exists() {
                obs.note(&format!(
                    "{}: no checkpoint, so starting afresh; the old progress.jsonl is replaced",
                    cfg.out.display()
                ));
                std::fs::remove_file(&progress).map_err(Error::io(&progress))?;
            }
            None
        };

        // A warm start is read (and its layout checked) before any lease is taken.
        let warm = match (&st, &cfg.warm_start) {
            (None, Some(path)) => {
                // The layout from the header first: a mismatch is refused before the (long)
                // load and before any progress note.
                let layout_mismatch = |found: &str| {
                    Error::Train(format!(
                        "--warm-start {}: its layout is `{found}`, the run's is `{}` (give --layout {found})",
                        path.display(),
                        cfg.layout.spec(),
                    ))
                };
                let header = model::read_info(path)?;
                if header.layout.spec() != cfg.layout.spec() {
                    return Err(layout_mismatch(&header.layout.spec()));
                }
                obs.note(&format!("warm start from {} ...", path.display()));
                let (t, info) = model::load(path, true)?;
                if t.layout.spec() != cfg.layout.spec() {
                    return Err(layout_mismatch(&t.layout.spec()));
                }
                Some((t, format!("{} sha256 {}", path.display(), info.sha256)))
            }
            _ => None,
        };

        // Seed discipline: training and validation blocks must not overlap screens.
        let opener = opener_name(&cfg.out, &cfg.ledger);
        Ledger::update(&cfg.ledger, |l| {
            l.open(Role::Training, cfg.seeds, &opener, false, unix_now())?;
            if cfg.validate_every > 0 {
                l.open(
                    Role::Validation,
                    cfg.validation_seeds,
                    &opener,
                    false,
                    unix_now(),
                )?;
            }
            Ok(())
        })?;

        let (tables, st) = match st {
            Some(st) => {
                obs.note(&format!(
                    "resuming from {} at {} moves",
                    ckpt.display(),
                    st.moves
                ));
                let (t, info) = model::load(&ckpt, true)?;
                if info.sha256 != st.checkpoint_sha256 {
                    return Err(Error::Train(format!(
                        "--resume: {} does not match {} (sha256 {} vs {})",
                        ckpt.display(),
                        state_path.display(),
                        info.sha256,
                        st.checkpoint_sha256
                    )));
                }
                (t, st)
            }
            None => {
                obs.note(&format!(
                    "allocating {} ({} entries, {:.1} GB with accumulators) ...",
                    cfg.layout,
                    cfg.layout.total,
                    crate::tables::bytes_needed(&cfg.layout, true) as f64 / 1e9
                ));
                let (t, warm) = match warm {
                    None => (
                        Tables::new(cfg.layout.clone(), OPTIMISTIC_TOTAL, true)?,
                        None,
                    ),
                    Some((t, desc)) => (t, Some(desc)),
                };
                let st = TrainState {
                    layout: cfg.layout.clone(),
                    seeds: cfg.seeds,
                    alpha: cfg.alpha,
                    validation_seeds: Some(cfg.validation_seeds),
                    validation_search: Some(search.clone()),
                    validate_every: Some(cfg.validate_every),
                    siblings: cfg.siblings,
                    warm_start: warm,
                    moves: 0,
                    games: 0,
                    cursor: 0,
                    best_margin: None,
                    best_moves: None,
                    validation_margins: vec![],
                    wall_seconds: 0.0,
                    checkpoint_sha256: String::new(),
                };
                (t, st)
            }
        };
        let mut trainer = Self {
            cfg,
            _lock: lock,
            tables: Arc::new(tables),
            st,
            control: None,
        };
        if trainer.cfg.validate_every > 0 {
            trainer.control = Some(trainer.play_control(obs)?);
        }
        Ok(trainer)
    }

    /// The fair control on the validation block, played once and kept in the run directory.
    fn play_control(&self, obs: &dyn TrainObserver) -> Result<Vec<GameRecord>, Error> {
        let (depth, samples) = self.cfg.validation_search;
        let fair = BuiltinPolicy::Fair {
            depth,
            samples,
            top: None,
        };
        let path = self
            .cfg
            .out
            .join(format!("validation-fair-{}.jsonl", self.search_name()));
        let have = drop7::runner::load_records(&path, &fair.to_string())?;
        if (have.len() as u64) < self.cfg.validation_seeds.count() {
            obs.note(&format!(
                "playing the {fair} control on {} ...",
                self.cfg.validation_seeds
            ));
        }
        let run = run_block(
            &fair.factory().expect("a fair policy"),
            self.cfg.validation_seeds,
            &RunOptions {
                threads: self.cfg.threads,
                out: Some(&path),
            },
            &Silent,
        )?;
        Ok(run.records)
    }

    /// The tables being trained.
    pub fn tables(&self) -> &Arc<Tables> {
        &self.tables
    }

    /// Train to the target (or a plateau), then write the final weights and the curve.
    pub fn run(mut self, obs: &dyn TrainObserver) -> Result<TrainSummary, Error> {
        let cfg = self.cfg.clone();
        let progress = cfg.out.join("progress.jsonl");
        let counters = Counters::default();
        counters.moves.store(self.st.moves, Relaxed);
        counters.games.store(self.st.games, Relaxed);
        counters.cursor.store(self.st.cursor, Relaxed);
        let stop = AtomicBool::new(false);
        let t_start = Instant::now();
        let wall_before = self.st.wall_seconds;
        let next_mark = |moves: u64, every: u64| (moves / every + 1) * every;
        let checkpoint_every = cfg.checkpoint_every.max(1);
        let mut next_ckpt = next_mark(self.st.moves, checkpoint_every);
        let mut next_val = match cfg.validate_every {
            0 => u64::MAX,
            every => next_mark(self.st.moves, every),
        };
        let mut plateaued = false;
        while self.st.moves < cfg.target_moves && !stop.load(Relaxed) {
            let until = (self.st.moves + cfg.report_every.max(1))
                .min(cfg.target_moves)
                .min(next_ckpt)
                .min(next_val);
            let t0 = Instant::now();
            let m0 = self.st.moves;
            let plan = Plan {
                threads: cfg.threads,
                block: cfg.seeds,
                alpha: cfg.alpha,
                siblings: cfg.siblings,
            };
            run_until(&self.tables, &counters, until, plan, &stop);
            self.st.moves = counters.moves.load(Relaxed);
            self.st.games = counters.games.load(Relaxed);
            self.st.cursor = counters.cursor.load(Relaxed);
            let rg = counters.recent_games.swap(0, Relaxed).max(1);
            let point = ProgressRecord::Train(TrainPoint {
                moves: self.st.moves,
                games: self.st.games,
                moves_per_second: (self.st.moves - m0) as f64
                    / t0.elapsed().as_secs_f64().max(1e-9),
                recent_mean_score: counters.recent_score.swap(0, Relaxed) as f64 / rg as f64,
                recent_games: rg,
                opening_value: opening_value(&self.tables),
                wall_seconds: wall_before + t_start.elapsed().as_secs_f64(),
                threads: cfg.threads,
            });
            self.st.wall_seconds = wall_before + t_start.elapsed().as_secs_f64();
            append_progress(&progress, &point)?;
            obs.progress(&point);
            if self.st.moves >= next_val
                || (self.st.moves >= cfg.target_moves && cfg.validate_every > 0)
            {
                next_val = next_mark(self.st.moves, cfg.validate_every);
                let v = self.validate(obs)?;
                append_progress(&progress, &v)?;
                obs.progress(&v);
                if cfg.plateau && plateau_reached(&self.st.validation_margins) {
                    obs.note("plateau: the mean of the last four margins is not above the four before; stopping");
                    plateaued = true;
                    stop.store(true, Relaxed);
                }
            }
            if self.st.moves >= next_ckpt || self.st.moves >= cfg.target_moves || stop.load(Relaxed)
            {
                next_ckpt = next_mark(self.st.moves, checkpoint_every);
                self.checkpoint(obs)?;
            }
        }
        let final_sha256 = model::save(&self.tables, &cfg.out.join("final-weights.bin"), false)?;
        let svg = super::training_curve(&super::read_progress(&progress)?);
        evidence::atomic_write(&cfg.out.join("training-curve.svg"), svg.as_bytes())?;
        Ok(TrainSummary {
            moves: self.st.moves,
            games: self.st.games,
            wall_seconds: self.st.wall_seconds,
            final_sha256,
            best_margin: self.st.best_margin,
            best_moves: self.st.best_moves,
            plateaued,
        })
    }

    /// The tables as the validation search's leaf against the fair control; a new best
    /// margin saves them as best-weights.bin.
    fn validate(&mut self, obs: &dyn TrainObserver) -> Result<ProgressRecord, Error> {
        let block = self.cfg.validation_seeds;
        obs.note(&format!(
            "validating at {} moves on {block} ...",
            self.st.moves
        ));
        let name = format!("ntuple-{}", self.search_name());
        let f = crate::play::factory(
            Some(self.cfg.validation_search),
            None,
            name.clone(),
            self.tables.clone(),
        );
        let opts = RunOptions {
            threads: self.cfg.threads,
            out: None,
        };
        let cand = run_block(&f, block, &opts, &Silent)?.records;
        let control = self.control.as_ref().expect("the control was played");
        let (cs, rs) = (scores(&cand), scores(control));
        let s = paired_screen(
            &Arm {
                name: &name,
                scores: &cs,
                faults: faults(&cand),
            },
            &Arm {
                name: "fair",
                scores: &rs,
                faults: faults(control),
            },
            BootstrapConfig::default(),
        )?;
        let improved = self.st.best_margin.is_none_or(|b| s.delta_mean > b);
        if improved {
            self.st.best_margin = Some(s.delta_mean);
            self.st.best_moves = Some(self.st.moves);
            let hash = model::save(&self.tables, &self.cfg.out.join("best-weights.bin"), false)?;
            obs.note(&format!(
                "new best: margin {:+.0} (LB {:+.0}), best-weights.bin sha256 {hash}",
                s.delta_mean, s.bootstrap_lb95
            ));
        }
        self.st.validation_margins.push(s.delta_mean);
        Ok(ProgressRecord::Validation(ValidationPoint {
            moves: self.st.moves,
            candidate_mean: s.candidate.mean,
            fair_mean: s.reference.mean,
            margin: s.delta_mean,
            bootstrap_lb95: s.bootstrap_lb95,
            bootstrap_ub95: s.bootstrap_ub95,
            t_lb95: s.t_lb95,
            wins: s.wins,
            ties: s.ties,
            losses: s.losses,
            best: improved,
            seeds: block.to_string(),
        }))
    }

    /// Tables with accumulators, then the state that names their hash (in that order: a crash
    /// between the two leaves a state whose hash no longer matches, which resume refuses).
    fn checkpoint(&mut self, obs: &dyn TrainObserver) -> Result<(), Error> {
        obs.note(&format!("checkpoint at {} moves ...", self.st.moves));
        self.st.checkpoint_sha256 =
            model::save(&self.tables, &self.cfg.out.join("checkpoint.bin"), true)?;
        let text = serde_json::to_string_pretty(&self.st).expect("state") + "\n";
        evidence::atomic_write(&self.cfg.out.join("checkpoint.json"), text.as_bytes())?;
        Ok(())
    }
}

/// Settings that cannot make sense, refused before anything is allocated or written.
fn check_settings(cfg: &TrainConfig) -> Result<(), Error> {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let bad = |m: String| Err(Error::Train(m));
    if !cfg.alpha.is_finite() || cfg.alpha < 0.0 {
        return bad(format!(
            "--alpha {}: the learning rate must be a finite number ≥ 0",
            cfg.alpha
        ));
    }
    if cfg.target_moves == 0 {
        return bad("--moves 0: nothing to train (give the total number of training moves)".into());
    }
    if cfg.checkpoint_every == 0 {
        return bad("--checkpoint-every 0: checkpoints need a positive interval".into());
    }
    if cfg.report_every == 0 {
        return bad("--report-every 0: progress lines need a positive interval".into());
    }
    if cfg.siblings > 6 {
        return bad(format!(
            "--siblings {}: a move has at most 6 other columns (use 0 to 6)",
            cfg.siblings
        ));
    }
    if cfg.resume && cfg.warm_start.is_some() {
        return bad(
            "--warm-start with --resume: a resumed run continues its own checkpoint".into(),
        );
    }
    if let Some(w) = &cfg.warm_start
        && !w.is_file()
    {
        return bad(format!("--warm-start {}: no such model file", w.display()));
    }
    if cfg.threads == 0 || cfg.threads > 4 * cores {
        return bad(format!(
            "--threads {}: use 1 to {} (this machine has {cores} cores)",
            cfg.threads,
            4 * cores
        ));
    }
    Ok(())
}

/// Remove temporary files a killed save left (`.NAME.XXXXXX.tmp`; a checkpoint's is 12 GB for
/// arm C). Only called with the directory's lock held, so no save is in flight.
fn remove_stale_temporaries(dir: &Path, obs: &dyn TrainObserver) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if name.starts_with('.') && name.ends_with(".tmp") && std::fs::remove_file(e.path()).is_ok()
        {
            obs.note(&format!("removed {name}, left by an interrupted save"));
        }
    }
}

/// Drop progress records past `moves` (written after the checkpoint a resume starts from).
fn keep_progress_until(path: &Path, moves: u64) -> Result<(), Error> {
    if !path.exists() {
        return Ok(());
    }
    let kept: String = super::read_progress(path)?
        .into_iter()
        .filter(|r| match r {
            ProgressRecord::Train(t) => t.moves <= moves,
            ProgressRecord::Validation(v) => v.moves <= moves,
        })
        .map(|r| serde_json::to_string(&r).expect("record") + "\n")
        .collect();
    evidence::atomic_write(path, kept.as_bytes())?;
    Ok(())
}

/// Refuse to resume a different run: every setting that shapes what is learned or measured
/// must equal the stored one.
fn check_same_run(st: &TrainState, cfg: &TrainConfig, search: &str) -> Result<(), Error> {
    let mut diffs = Vec::new();
    let mut cmp = |what: &str, stored: String, given: String| {
        if stored != given {
            diffs.push(format!("{what} `{stored}` (given `{given}`)"));
        }
    };
    cmp("layout", st.layout.spec(), cfg.layout.spec());
    cmp("seeds", st.seeds.to_string(), cfg.seeds.to_string());
    cmp("alpha", st.alpha.to_string(), cfg.alpha.to_string());
    if let Some(v) = &st.validation_seeds {
        cmp(
            "validation seeds",
            v.to_string(),
            cfg.validation_seeds.to_string(),
        );
    }
    if let Some(v) = &st.validation_search {
        cmp("validation search", v.clone(), search.to_owned());
    }
    if let Some(v) = st.validate_every {
        cmp(
            "validate-every",
            v.to_string(),
            cfg.validate_every.to_string(),
        );
    }
    cmp(
        "siblings",
        st.siblings.to_string(),
        cfg.siblings.to_string(),
    );
    if cfg.target_moves < st.moves {
        diffs.push(format!(
            "moves: the run is at {} already (given target {})",
            st.moves, cfg.target_moves
        ));
    }
    if diffs.is_empty() {
        Ok(())
    } else {
        Err(Error::Train(format!(
            "--resume: {} is a different run: it has {}",
            cfg.out.display(),
            diffs.join(", ")
        )))
    }
}

/// Defaults shared by the command line and the tests' small runs.
impl TrainConfig {
    /// A run of `layout` into `out`, with the command line's defaults otherwise.
    pub fn new(layout: Layout, out: &Path, ledger: &Path, target_moves: u64) -> Self {
        Self {
            layout,
            seeds: "0xa5300000:2031616".parse().expect("default block"),
            alpha: 1.0,
            target_moves,
            threads: 2,
            checkpoint_every: 50_000_000,
            validate_every: 50_000_000,
            validation_seeds: "0xa52f2240:64".parse().expect("default block"),
            validation_search: (3, 7),
            plateau: false,
            report_every: 2_000_000,
            out: out.to_owned(),
            ledger: ledger.to_owned(),
            resume: false,
            siblings: 0,
            warm_start: None,
        }
    }

    /// `--checkpoint-every auto`: every 5 × 10⁷ moves per started GB a checkpoint of `layout`
    /// holds (weights and both accumulators, 12 bytes an entry). The small layouts keep
    /// 5 × 10⁷; arm C's 12 GB are written every 6 × 10⁸ moves, not 20 times in a 10⁹-move run.
    pub fn auto_checkpoint_every(layout: &Layout) -> u64 {
        let gb = crate::tables::bytes_needed(layout, true)
            .div_ceil(1 << 30)
            .max(1);
        50_000_000 * gb
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn small(dir: &Path, target: u64) -> TrainConfig {
        TrainConfig {
            seeds: "0x70000000:5000".parse().unwrap(),
            threads: 1,
            checkpoint_every: 4_000,
            validate_every: 1_000,
            validation_seeds: "0x71000000:4".parse().unwrap(),
            validation_search: (1, 1),
            report_every: 1_000,
            ..TrainConfig::new(
                Layout::parse("win23,phase=none").unwrap(),
                &dir.join("run"),
                &dir.join("leases.json"),
                target,
            )
        }
    }

    /// The main run's committed `checkpoint.json` (written when its fields were strings)
    /// reads into the typed state and writes back the same JSON.
    #[test]
    fn committed_checkpoint_states_read_typed() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../docs/main-C/checkpoint.json"
        );
        let text = std::fs::read_to_string(path).unwrap();
        let st: TrainState = serde_json::from_str(&text).unwrap();
        assert_eq!(st.layout.spec(), "rows,cols,win23,win32,phase=all");
        assert_eq!(st.seeds, "0xa5300000:2031616".parse().unwrap());
        assert_eq!(st.validation_seeds, Some("0xa52f2240:64".parse().unwrap()));
        let again = serde_json::to_value(&st).unwrap();
        assert_eq!(
            again,
            serde_json::from_str::<serde_json::Value>(&text).unwrap()
        );
        let bad = text.replace("rows,cols,win23,win32,phase=all", "rows,diagonals");
        assert!(serde_json::from_str::<TrainState>(&bad).is_err());
    }

    #[test]
    fn auto_checkpoints_scale_with_the_bytes_written() {
        // The small layout: 60 M entries × 12 bytes = 0.72 GB, one started GB.
        let small = Layout::parse("win23,win32,phase=none").unwrap();
        assert_eq!(TrainConfig::auto_checkpoint_every(&small), 50_000_000);
        // The default layout (arm C) is about 10⁹ entries: 12 GB, every 6 × 10⁸ moves.
        let c = Layout::parse("rows,cols,win23,win32,phase=all").unwrap();
        let gb = (c.total * 12).div_ceil(1 << 30);
        assert!(gb >= 10, "{gb}");
        assert_eq!(TrainConfig::auto_checkpoint_every(&c), 50_000_000 * gb);
    }

    #[test]
    fn bad_settings_and_a_second_trainer_are_refused() {
        let _heavy = crate::heavy_test();
        let dir = tempfile::tempdir().unwrap();
        for (f, want) in [
            (
                &(|c: &mut TrainConfig| c.alpha = f32::NAN) as &dyn Fn(&mut TrainConfig),
                "--alpha NaN",
            ),
            (&|c: &mut TrainConfig| c.alpha = -1.0, "--alpha -1"),
            (
                &|c: &mut TrainConfig| c.alpha = f32::INFINITY,
                "--alpha inf",
            ),
            (
                &|c: &mut TrainConfig| c.checkpoint_every = 0,
                "--checkpoint-every 0",
            ),
            (
                &|c: &mut TrainConfig| c.threads = 100_000,
                "--threads 100000",
            ),
            (&|c: &mut TrainConfig| c.siblings = 7, "--siblings 7"),
            (
                &|c: &mut TrainConfig| c.warm_start = Some("/nonexistent/w.bin".into()),
                "--warm-start /nonexistent/w.bin: no such model file",
            ),
        ] {
            let mut c = small(dir.path(), 1_000);
            f(&mut c);
            let e = Trainer::new(c, &()).err().unwrap().to_string();
            assert!(e.contains(want), "{want}: {e}");
            assert!(
                !dir.path().join("run").exists(),
                "{want}: wrote before refusing"
            );
        }
        // a stale temporary file is removed; a second trainer on the directory is refused
        std::fs::create_dir_all(dir.path().join("run")).unwrap();
        std::fs::write(dir.path().join("run/.checkpoint.bin.AbC123.tmp"), b"x").unwrap();
        let first = Trainer::new(small(dir.path(), 1_000), &()).unwrap();
        assert!(!dir.path().join("run/.checkpoint.bin.AbC123.tmp").exists());
        let e = Trainer::new(small(dir.path(), 1_000), &())
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("another training run"), "{e}");
        drop(first);
    }

    #[test]
    fn plateau_rule() {
        assert!(!plateau_reached(&[1.0; 7]));
        assert!(plateau_reached(&[1.0; 8]));
        assert!(!plateau_reached(&[1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.5]));
        assert!(plateau_reached(&[5.0, 5.0, 5.0, 5.0, 1.0, 9.0, 9.0, 1.0]));
    }

    /// Resumed single-thread training ends bit-identical to an uninterrupted run; resume
    /// refuses other settings; validation writes the control once, keeps the best tables
    /// and logs typed records.
    #[test]
    fn resume_is_exact_and_refuses_another_run() {
        let _heavy = crate::heavy_test();
        let dir = tempfile::tempdir().unwrap();
        let whole = Trainer::new(small(dir.path(), 8_000), &())
            .unwrap()
            .run(&())
            .unwrap();
        std::fs::rename(dir.path().join("run"), dir.path().join("whole")).unwrap();

        let first = Trainer::new(small(dir.path(), 4_000), &())
            .unwrap()
            .run(&())
            .unwrap();
        assert!(first.moves >= 4_000 && first.moves < 8_000);
        // a fresh start over a run is refused
        let e = Trainer::new(small(dir.path(), 8_000), &())
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("already holds a training run"), "{e}");
        // resume with different settings is refused, naming each difference
        let resume = |f: &dyn Fn(&mut TrainConfig)| {
            let mut c = small(dir.path(), 8_000);
            c.resume = true;
            f(&mut c);
            c
        };
        for (change, want) in [
            (
                &(|c: &mut TrainConfig| c.alpha = 0.5) as &dyn Fn(&mut TrainConfig),
                "alpha `1` (given `0.5`)",
            ),
            (
                &|c: &mut TrainConfig| c.seeds = "0x70000000:4999".parse().unwrap(),
                "seeds `0x70000000:5000`",
            ),
            (
                &|c: &mut TrainConfig| c.validation_search = (2, 1),
                "validation search `d1s1`",
            ),
            (
                &|c: &mut TrainConfig| c.validation_seeds = "0x72000000:4".parse().unwrap(),
                "validation seeds",
            ),
            (
                &|c: &mut TrainConfig| c.layout = Layout::parse("win32,phase=none").unwrap(),
                "layout `win23,phase=none`",
            ),
            (
                &|c: &mut TrainConfig| c.siblings = 2,
                "siblings `0` (given `2`)",
            ),
        ] {
            let e = Trainer::new(resume(change), &()).err().unwrap().to_string();
            assert!(
                e.contains("different run") && e.contains(want),
                "{want}: {e}"
            );
        }
        let second = Trainer::new(resume(&|_| {}), &())
            .unwrap()
            .run(&())
            .unwrap();
        assert_eq!(second.moves, whole.moves);
        assert_eq!(second.games, whole.games);
        assert_eq!(
            second.final_sha256, whole.final_sha256,
            "resumed run diverged"
        );

        let run = dir.path().join("run");
        let log = super::super::read_progress(&run.join("progress.jsonl")).unwrap();
        let vals = log
            .iter()
            .filter(|r| matches!(r, ProgressRecord::Validation(_)))
            .count();
        assert_eq!(vals, 8, "a validation every 1,000 moves");
        assert!(run.join("best-weights.bin").exists() && run.join("training-curve.svg").exists());
        let control = std::fs::read_to_string(run.join("validation-fair-d1s1.jsonl")).unwrap();
        assert_eq!(control.lines().count(), 4, "the control is played once");
        // the ledger holds the training and validation blocks
        let ledger = Ledger::load(&dir.path().join("leases.json")).unwrap();
        let roles: Vec<Role> = ledger.leases.iter().map(|l| l.role).collect();
        assert_eq!(roles, [Role::Training, Role::Validation]);
    }

    /// A warm start begins from the given weights (a run of α = 0 ends where it began, bit
    /// for bit), records the file, and refuses a file of another layout.
    #[test]
    fn warm_start_begins_from_the_given_weights() {
        let _heavy = crate::heavy_test();
        let dir = tempfile::tempdir().unwrap();
        let mut c = small(dir.path(), 3_000);
        c.validate_every = 0;
        let first = Trainer::new(c, &()).unwrap().run(&()).unwrap();
        let weights = dir.path().join("run/final-weights.bin");
        let mut c = small(dir.path(), 1_000);
        c.out = dir.path().join("warm");
        c.validate_every = 0;
        c.alpha = 0.0;
        c.siblings = 1;
        c.warm_start = Some(weights.clone());
        let warm = Trainer::new(c.clone(), &()).unwrap().run(&()).unwrap();
        assert_eq!(
            warm.final_sha256, first.final_sha256,
            "α = 0 from the warm start"
        );
        let state = std::fs::read_to_string(dir.path().join("warm/checkpoint.json")).unwrap();
        assert!(state.contains(&first.final_sha256), "{state}");
        let mut other = c.clone();
        other.out = dir.path().join("other");
        other.layout = Layout::parse("win32,phase=none").unwrap();
        let e = Trainer::new(other, &()).err().unwrap().to_string();
        assert!(e.contains("its layout is `win23,phase=none`"), "{e}");
    }

    /// With α = 0 nothing is learned: the first validation is the best (saved once), every
    /// later margin equals it, and the plateau rule stops the run at the eighth validation.
    #[test]
    fn best_weights_and_plateau() {
        let _heavy = crate::heavy_test();
        let dir = tempfile::tempdir().unwrap();
        let mut c = small(dir.path(), 100_000);
        c.alpha = 0.0;
        c.plateau = true;
        let s = Trainer::new(c, &()).unwrap().run(&()).unwrap();
        assert!(s.plateaued);
        assert!(
            s.moves < 9_000,
            "stopped at the eighth validation, not the target"
        );
        let log = super::super::read_progress(&dir.path().join("run/progress.jsonl")).unwrap();
        let vals: Vec<&ValidationPoint> = log
            .iter()
            .filter_map(|r| match r {
                ProgressRecord::Validation(v) => Some(v),
                _ => None,
            })
            .collect();
        assert_eq!(vals.len(), 8);
        assert!(vals[0].best && vals[1..].iter().all(|v| !v.best));
        assert!(vals.iter().all(|v| v.margin == vals[0].margin));
        assert_eq!(s.best_moves, Some(vals[0].moves));
        let (best, _) = model::load(&dir.path().join("run/best-weights.bin"), false).unwrap();
        let fresh = Tables::new(best.layout.clone(), OPTIMISTIC_TOTAL, false).unwrap();
        assert!(
            best.weights
                .iter()
                .zip(&fresh.weights)
                .all(|(a, b)| a.load(Relaxed) == b.load(Relaxed)),
            "α = 0 leaves the tables as they started"
        );
    }
}
