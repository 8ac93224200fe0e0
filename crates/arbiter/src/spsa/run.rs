//! SPSA — simultaneous perturbation stochastic approximation — over an engine's UCI options.
//!
//! Every iteration perturbs *all* parameters at once by ±c (one random sign per parameter),
//! plays one game pair (one opening, colours swapped) between the engine with θ + cΔ and
//! the engine with θ − cΔ, and moves every parameter by `r · c · (W − L) · Δ`: two games
//! estimate the gradient along Δ of the expected score, and the random signs make those
//! estimates unbiased for every coordinate at once. This is why SPSA can tune twenty
//! constants for the price of tuning one.
//!
//! The input and the schedule are OpenBench's, so a tune can move between the two: one line a
//! parameter, `name, int|float, start, min, max, c_end, r_end`, where `c_end` is the
//! perturbation and `r_end` the learning rate at the last iteration. With N iterations
//! (`--pairs`), A = `a_ratio` · N, α = 0.602 and γ = 0.101 by default, iteration i (from 1) uses
//!
//! ```text
//!   c_i = max(c_end · (N / i)^γ, 0.5 for integers)
//!   r_i = r_end · c_end² · ((A + N) / (A + i))^α / c_i²
//! ```
//!
//! so that c and r reach `c_end` and `r_end` exactly at i = N. Integers are sent rounded at
//! random (up with the probability of the fraction: unbiased), the same draw for both sides.
//!
//! A run is a state file (JSON, replaced atomically after every batch of `concurrency`
//! pairs) and a trajectory (JSON lines, one per batch); `--resume` continues from the state
//! and drops trajectory lines written after it, so a kill loses at most one batch. Every
//! random draw is a function of the seed and the iteration number, batches start at multiples
//! of the concurrency (which a resume must keep), and a batch's updates are applied in
//! iteration order: given the same game results, a run stopped and resumed ends exactly where
//! an uninterrupted run ends. (Games at a fixed node count or depth give the same results;
//! games on a clock do not, there the resumed run is only another sample of the same tune.)

use std::io::{BufRead, Write as _};
use std::path::{Path, PathBuf};
use std::time::Instant;

use cozy_chess::Board;
use serde::{Deserialize, Serialize};

use crate::engine::EngineSpec;
use crate::game::{GameConfig, GameError, GameRecord, Outcome, Termination, play};

/// The state file's format tag.
pub const FORMAT: &str = "arbiter-spsa-v1";
/// The largest `--pairs` (a schedule length); far beyond any budget.
pub const MAX_PAIRS: u64 = 100_000_000;

/// One tuned parameter: its OpenBench input line and its current value.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Param {
    /// The UCI option name.
    pub name: String,
    /// `float` parameters are sent with decimals; `int` ones rounded.
    pub float: bool,
    pub start: f64,
    pub min: f64,
    pub max: f64,
    /// Perturbation at the last iteration.
    pub c_end: f64,
    /// Learning rate at the last iteration.
    pub r_end: f64,
    /// The current estimate (starts at `start`).
    pub value: f64,
}

impl Param {
    /// The OpenBench input line, with `value` as its start: the input of a continued tune.
    pub fn input_line(&self) -> String {
        format!(
            "{}, {}, {}, {}, {}, {}, {}",
            self.name,
            if self.float { "float" } else { "int" },
            self.shown(self.value),
            self.shown(self.min),
            self.shown(self.max),
            self.c_end,
            self.r_end
        )
    }

    /// A value as the engine is sent it (integers rounded to nearest).
    pub fn shown(&self, v: f64) -> String {
        if self.float {
            format!("{v}")
        } else {
            format!("{}", v.round() as i64)
        }
    }
}

/// A `--params` line that cannot be used: its line number (from 1) and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {reason}")]
pub struct ParamError {
    pub line: usize,
    pub reason: String,
}

/// Parse OpenBench SPSA input: `name, int|float, start, min, max, c_end, r_end` a line;
/// blank lines and `#` comments are ignored. Every number must be finite, min < max,
/// min ≤ start ≤ max, c_end > 0 and r_end > 0; integers must be whole; names unique.
pub fn parse_params(text: &str) -> Result<Vec<Param>, ParamError> {
    let mut out: Vec<Param> = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        let bad = |reason: String| ParamError { line, reason };
        let l = raw.trim();
        if l.is_empty() || l.starts_with('#') {
            continue;
        }
        let f: Vec<&str> = l.split(',').map(str::trim).collect();
        let [name, kind, start, min, max, c_end, r_end] = f[..] else {
            return Err(bad(format!(
                "expected 7 comma-separated fields `name, int|float, start, min, max, c_end, \
                 r_end`, got {}",
                f.len()
            )));
        };
        if name.is_empty() {
            return Err(bad("empty parameter name".into()));
        }
        if out.iter().any(|p| p.name == name) {
            return Err(bad(format!("parameter `{name}` is named twice")));
        }
        let float = match kind {
            "int" => false,
            "float" => true,
            _ => return Err(bad(format!("type `{kind}` is neither int nor float"))),
        };
        let num = |what: &str, s: &str| -> Result<f64, ParamError> {
            let v: f64 = s
                .parse()
                .ok()
                .filter(|v: &f64| v.is_finite())
                .ok_or_else(|| bad(format!("{what} `{s}` is not a finite number")))?;
            if !float && ["start", "min", "max"].contains(&what) && v.fract() != 0.0 {
                return Err(bad(format!(
                    "{what} `{s}` of an int parameter is not whole"
                )));
            }
            Ok(v)
        };
        let (start, min, max) = (num("start", start)?, num("min", min)?, num("max", max)?);
        let (c_end, r_end) = (num("c_end", c_end)?, num("r_end", r_end)?);
        if min >= max {
            return Err(bad(format!("min {min} is not below max {max}")));
        }
        if !(min..=max).contains(&start) {
            return Err(bad(format!("start {start} is outside [{min}, {max}]")));
        }
        if c_end <= 0.0 || r_end <= 0.0 {
            return Err(bad("c_end and r_end must be positive".into()));
        }
        out.push(Param {
            name: name.to_owned(),
            float,
            start,
            min,
            max,
            c_end,
            r_end,
            value: start,
        });
    }
    if out.is_empty() {
        return Err(ParamError {
            line: 0,
            reason: "no parameter (one line `name, int|float, start, min, max, c_end, r_end` \
                     each)"
                .into(),
        });
    }
    Ok(out)
}

/// The gain schedule: N iterations (game pairs), A = `a_ratio` · N, exponents α and γ.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Schedule {
    pub pairs: u64,
    pub a_ratio: f64,
    pub alpha: f64,
    pub gamma: f64,
}

impl Schedule {
    /// OpenBench's and Fishtest's exponents, A = 10 % of the run.
    pub fn new(pairs: u64) -> Self {
        Self {
            pairs,
            a_ratio: 0.1,
            alpha: 0.602,
            gamma: 0.101,
        }
    }

    /// `(c_i, r_i)` of `p` at iteration `i` (from 1; iterations past N keep shrinking).
    pub fn gains(&self, p: &Param, i: u64) -> (f64, f64) {
        let n = self.pairs as f64;
        let i = i.max(1) as f64;
        let big_a = self.a_ratio * n;
        let floor = if p.float { 0.0 } else { 0.5 };
        let c = (p.c_end * (n / i).powf(self.gamma)).max(floor);
        let r =
            p.r_end * p.c_end * p.c_end * ((big_a + n) / (big_a + i)).powf(self.alpha) / (c * c);
        (c, r)
    }
}

/// splitmix64 of `x`: the iteration's random stream.
fn mix(mut x: u64) -> u64 {
    crate::tournament::splitmix(&mut x)
}

/// One iteration's perturbation: the signs, the gains and the two engines' values.
#[derive(Debug, Clone, PartialEq)]
pub struct Perturbation {
    /// Iteration number, from 1.
    pub iteration: u64,
    pub flips: Vec<i8>,
    pub c: Vec<f64>,
    pub r: Vec<f64>,
    /// Values sent to the θ + cΔ engine, and to the θ − cΔ engine (rounded, clamped).
    pub plus: Vec<f64>,
    pub minus: Vec<f64>,
}

/// The perturbation of iteration `i` (from 1) around `params`' current values; a function of
/// `seed`, `i` and the values only.
pub fn perturb(params: &[Param], sched: &Schedule, seed: u64, i: u64) -> Perturbation {
    let mut s = seed ^ i.wrapping_mul(0xd1b5_4a32_d192_ed03);
    let mut next = || {
        s = mix(s);
        s
    };
    let mut p = Perturbation {
        iteration: i,
        flips: vec![],
        c: vec![],
        r: vec![],
        plus: vec![],
        minus: vec![],
    };
    for q in params {
        let flip: i8 = if next() & 1 == 1 { 1 } else { -1 };
        // 53 random bits: a uniform draw in [0, 1).
        let u = (next() >> 11) as f64 / (1u64 << 53) as f64;
        let (c, r) = sched.gains(q, i);
        let round = |v: f64| if q.float { v } else { (v + u).floor() };
        let d = f64::from(flip) * c;
        p.plus.push(round(q.value + d).clamp(q.min, q.max));
        p.minus.push(round(q.value - d).clamp(q.min, q.max));
        p.flips.push(flip);
        p.c.push(c);
        p.r.push(r);
    }
    p
}

/// Apply one iteration's result: `score` is the θ + cΔ engine's wins less its losses over
/// the pair (−2..=2).
pub fn update(params: &mut [Param], p: &Perturbation, score: i32) {
    for (k, q) in params.iter_mut().enumerate() {
        let step = p.r[k] * p.c[k] * f64::from(score) * f64::from(p.flips[k]);
        q.value = (q.value + step).clamp(q.min, q.max);
    }
}

/// What a run was started with; a resumed run must match it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Setup {
    pub engine: EngineSpec,
    pub schedule: Schedule,
    pub seed: u64,
    pub time_control: String,
    /// The book's path as given, and its number of playable positions.
    pub book: Option<String>,
    pub openings: usize,
    pub random_openings: bool,
    pub adjudication: Option<String>,
    /// Pairs per batch (all perturbed around the same values): part of the run's
    /// arithmetic, so a resume must keep it.
    pub concurrency: usize,
    /// The input lines (name, type, start, min, max, c_end, r_end) of every parameter.
    pub params: Vec<String>,
}

/// Wins, draws and losses of the θ + cΔ engine.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Wdl {
    pub wins: u64,
    pub draws: u64,
    pub losses: u64,
}

/// A run's state: what it was started with, where the parameters are, what was played.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct State {
    pub format: String,
    pub setup: Setup,
    pub params: Vec<Param>,
    /// Iterations (game pairs) done.
    pub pairs_done: u64,
    pub plus: Wdl,
    /// Games lost on time, by a crash, a hang or an illegal move (either side).
    pub faults: u64,
    /// `faults` by kind. States written before kinds were kept lack it (all zero), so
    /// `faults` minus the sum of the kinds is the number of faults of unknown kind.
    #[serde(default)]
    pub fault_kinds: FaultKinds,
}

/// Faulted games by kind: a tune at a fast control wants to know whether its faults are
/// time losses (the control is too fast for the machine) or crashes (a bug that some
/// perturbed value provokes, which the tune would otherwise silently steer away from).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FaultKinds {
    pub time: u64,
    pub illegal_move: u64,
    pub crash: u64,
    pub hang: u64,
}

impl FaultKinds {
    /// Count one game's termination if it is a fault.
    fn add(&mut self, t: &Termination) {
        match t {
            Termination::TimeForfeit { .. } => self.time += 1,
            Termination::IllegalMove { .. } => self.illegal_move += 1,
            Termination::Crash { .. } => self.crash += 1,
            Termination::Hang { .. } => self.hang += 1,
            Termination::Board { .. } | Termination::Adjudicated { .. } => {}
        }
    }

    pub fn total(&self) -> u64 {
        self.time + self.illegal_move + self.crash + self.hang
    }
}

/// One trajectory line: after `pairs` iterations, the values (after this batch's updates)
/// and the scores of the batch's pairs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrajectoryLine {
    pub pairs: u64,
    pub scores: Vec<i32>,
    pub values: serde_json::Map<String, serde_json::Value>,
}

/// Why a run stopped or could not start.
#[derive(Debug, thiserror::Error)]
pub enum SpsaError {
    #[error("--state {}: {reason}", path.display())]
    State { path: PathBuf, reason: String },
    #[error("--state {}: cannot save the state: {reason}", path.display())]
    Save { path: PathBuf, reason: String },
    #[error("--state {} exists: give --resume to continue that run, or name another file", path.display())]
    StateExists { path: PathBuf },
    #[error(
        "--resume: --state {} was started with another {what} (give the first run's \
         --engine, --params, --pairs, --seed, --tc/--nodes/--depth, --book, --book-order, \
         --adjudicate, --concurrency and schedule)", path.display()
    )]
    Mismatch { path: PathBuf, what: String },
    #[error("--trajectory {}: {reason}", path.display())]
    Trajectory { path: PathBuf, reason: String },
    #[error("--faults {}: {reason}", path.display())]
    Faults { path: PathBuf, reason: String },
    #[error("--svg {}: {reason}", path.display())]
    Svg { path: PathBuf, reason: String },
    #[error(transparent)]
    Game(#[from] GameError),
}

impl SpsaError {
    /// Refused before any game was played (exit status 2 rather than 1).
    pub fn refused(&self) -> bool {
        matches!(
            self,
            SpsaError::StateExists { .. } | SpsaError::Mismatch { .. } | SpsaError::State { .. }
        )
    }
}

/// Everything a run needs.
pub struct SpsaConfig {
    pub setup: Setup,
    pub params: Vec<Param>,
    pub openings: Vec<Board>,
    pub game: GameConfig,
    pub concurrency: usize,
    pub state: PathBuf,
    pub trajectory: Option<PathBuf>,
    pub svg: Option<PathBuf>,
    /// Append every faulted game here as PGN (Round = iteration.game), so a fault can be
    /// replayed and diagnosed.
    pub faults_pgn: Option<PathBuf>,
    pub resume: bool,
    /// Stop at the first batch boundary once this many pairs were played in this run.
    pub stop_after: Option<u64>,
    /// Stop (at a batch boundary) once this much wall time has passed.
    pub max_seconds: Option<f64>,
    pub quiet: bool,
}

/// A played pair: the θ + cΔ engine's W − L, the two outcomes (θ + cΔ White first) and the
/// games that ended in a fault (with their number in the pair, 1 or 2).
struct PairOutcome {
    score: i32,
    outcomes: [Outcome; 2],
    faulted: Vec<(u8, GameRecord)>,
}

/// The θ + cΔ engine's points (W − L) over a pair, and the pair's faulted games.
fn pair_outcome(g1: GameRecord, g2: GameRecord) -> PairOutcome {
    let pts = |o: Outcome, plus_white: bool| match (o, plus_white) {
        (Outcome::Draw, _) => 0,
        (Outcome::White, true) | (Outcome::Black, false) => 1,
        _ => -1,
    };
    PairOutcome {
        score: pts(g1.outcome, true) + pts(g2.outcome, false),
        outcomes: [g1.outcome, g2.outcome],
        faulted: [(1, g1), (2, g2)]
            .into_iter()
            .filter(|(_, g)| g.termination.is_fault())
            .collect(),
    }
}

/// Append `text` to the file at `path` (created if missing).
fn append(path: &Path, text: &str) -> Result<(), String> {
    evidence::open_append(path)
        .map_err(evidence::EvidenceError::into_io)
        .and_then(|mut f| f.write_all(text.as_bytes()))
        .map_err(|e| e.to_string())
}

fn load_state(path: &Path) -> Result<State, SpsaError> {
    let bad = |reason: String| SpsaError::State {
        path: path.to_owned(),
        reason,
    };
    let text = std::fs::read_to_string(path).map_err(|e| bad(e.to_string()))?;
    let s: State =
        serde_json::from_str(&text).map_err(|e| bad(format!("not a state file: {e}")))?;
    if s.format != FORMAT {
        return Err(bad(format!("format `{}` is not `{FORMAT}`", s.format)));
    }
    if s.params.len() != s.setup.params.len() {
        return Err(bad("its parameters do not match its setup".into()));
    }
    Ok(s)
}

fn save_state(path: &Path, s: &State) -> Result<(), SpsaError> {
    let json = serde_json::to_string_pretty(s).expect("a state serialises") + "\n";
    evidence::atomic_write(path, json.as_bytes()).map_err(|e| SpsaError::Save {
        path: path.to_owned(),
        reason: e.into_io().to_string(),
    })
}

/// The first field of `Setup` in which `a` and `b` differ.
fn first_difference(a: &Setup, b: &Setup) -> Option<String> {
    let (va, vb) = (serde_json::to_value(a).ok()?, serde_json::to_value(b).ok()?);
    let (serde_json::Value::Object(ma), serde_json::Value::Object(mb)) = (va, vb) else {
        return None;
    };
    ma.iter()
        .find(|(k, v)| mb.get(*k) != Some(*v))
        .map(|(k, _)| k.replace('_', " "))
}

/// Read a trajectory, keeping the lines of at most `pairs_done` pairs; rewrite the file if a
/// line after that (a batch lost to a kill) had to be dropped.
pub fn read_trajectory(path: &Path, pairs_done: u64) -> Result<Vec<TrajectoryLine>, SpsaError> {
    let bad = |reason: String| SpsaError::Trajectory {
        path: path.to_owned(),
        reason,
    };
    let f = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(vec![]),
        Err(e) => return Err(bad(e.to_string())),
    };
    let mut lines = vec![];
    let mut dropped = false;
    let text: Vec<String> = std::io::BufReader::new(f)
        .lines()
        .collect::<Result<_, _>>()
        .map_err(|e| bad(e.to_string()))?;
    let last = text.iter().rposition(|l| !l.trim().is_empty());
    for (i, l) in text.iter().enumerate() {
        if l.trim().is_empty() {
            continue;
        }
        let t = match serde_json::from_str::<TrajectoryLine>(l) {
            Ok(t) => t,
            // A line cut by a kill can only be the last one: dropped.
            Err(_) if Some(i) == last => {
                dropped = true;
                continue;
            }
            Err(e) => return Err(bad(format!("line {}: {e}", i + 1))),
        };
        // Batches after the state's last one (a kill between the two writes): dropped.
        if t.pairs > pairs_done {
            dropped = true;
            continue;
        }
        lines.push(t);
    }
    if dropped {
        let mut text = String::new();
        for t in &lines {
            text.push_str(&serde_json::to_string(t).expect("serialises"));
            text.push('\n');
        }
        evidence::atomic_write(path, text.as_bytes()).map_err(|e| bad(e.into_io().to_string()))?;
    }
    Ok(lines)
}

/// The engine of one side: the base engine with the parameter values as options.
fn side(base: &EngineSpec, name: &str, params: &[Param], values: &[f64]) -> EngineSpec {
    let mut e = base.clone();
    e.name = name.into();
    for (q, v) in params.iter().zip(values) {
        e.options.push((q.name.clone(), q.shown(*v)));
    }
    e
}

/// Run (or continue) a tune; returns the state it ended with (also in `cfg.state`).
pub fn run(cfg: &SpsaConfig) -> Result<State, SpsaError> {
    let mut state = if cfg.resume && cfg.state.exists() {
        let s = load_state(&cfg.state)?;
        if let Some(what) = first_difference(&s.setup, &cfg.setup) {
            return Err(SpsaError::Mismatch {
                path: cfg.state.clone(),
                what,
            });
        }
        s
    } else {
        if cfg.state.exists() {
            return Err(SpsaError::StateExists {
                path: cfg.state.clone(),
            });
        }
        let s = State {
            format: FORMAT.into(),
            setup: cfg.setup.clone(),
            params: cfg.params.clone(),
            pairs_done: 0,
            plus: Wdl::default(),
            faults: 0,
            fault_kinds: FaultKinds::default(),
        };
        save_state(&cfg.state, &s)?;
        s
    };
    if let Some(t) = &cfg.trajectory {
        if cfg.resume {
            read_trajectory(t, state.pairs_done)?;
        } else if t.exists() {
            // A fresh run never appends to another run's trajectory.
            std::fs::write(t, b"").map_err(|e| SpsaError::Trajectory {
                path: t.clone(),
                reason: e.to_string(),
            })?;
        }
    }
    let order = crate::tournament::opening_order(
        cfg.openings.len(),
        cfg.setup.random_openings,
        cfg.setup.seed,
    );
    let sched = cfg.setup.schedule;
    let t0 = Instant::now();
    let mut played_now = 0u64;
    while state.pairs_done < sched.pairs {
        let left = sched.pairs - state.pairs_done;
        // Stops fall on batch boundaries only (a batch is perturbed around one set of
        // values; cutting one would change the rest of the run).
        if cfg.stop_after.is_some_and(|s| played_now >= s)
            || cfg
                .max_seconds
                .is_some_and(|m| t0.elapsed().as_secs_f64() >= m)
        {
            break;
        }
        // Batches start at multiples of the concurrency, so a resumed run keeps the batches
        // of an uninterrupted one.
        let conc = cfg.concurrency.max(1) as u64;
        let batch = (conc - state.pairs_done % conc).min(left).max(1);
        let perts: Vec<Perturbation> = (0..batch)
            .map(|b| {
                perturb(
                    &state.params,
                    &sched,
                    cfg.setup.seed,
                    state.pairs_done + b + 1,
                )
            })
            .collect();
        let results: Vec<Result<PairOutcome, GameError>> = std::thread::scope(|s| {
            let handles: Vec<_> = perts
                .iter()
                .map(|p| {
                    let k = p.iteration - 1;
                    let opening = &cfg.openings[order[(k % order.len() as u64) as usize]];
                    let plus = side(&cfg.setup.engine, "plus", &state.params, &p.plus);
                    let minus = side(&cfg.setup.engine, "minus", &state.params, &p.minus);
                    let game = cfg.game;
                    s.spawn(move || {
                        let none = [None, None];
                        let g1 = play(&plus, &minus, opening, &game, &none)?;
                        let g2 = play(&minus, &plus, opening, &game, &none)?;
                        Ok(pair_outcome(g1, g2))
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().expect("a game thread does not panic"))
                .collect()
        });
        let mut scores = Vec::with_capacity(results.len());
        let mut fault_text = String::new();
        for (p, r) in perts.iter().zip(results) {
            let PairOutcome {
                score,
                outcomes,
                faulted,
            } = r?;
            update(&mut state.params, p, score);
            for (o, plus_white) in outcomes.into_iter().zip([true, false]) {
                match (o, plus_white) {
                    (Outcome::Draw, _) => state.plus.draws += 1,
                    (Outcome::White, true) | (Outcome::Black, false) => state.plus.wins += 1,
                    _ => state.plus.losses += 1,
                }
            }
            for (k, g) in &faulted {
                state.faults += 1;
                state.fault_kinds.add(&g.termination);
                let round = format!("{}.{k}", p.iteration);
                fault_text.push_str(&crate::pgn::write(
                    g,
                    "arbiter spsa",
                    &round,
                    &cfg.setup.time_control,
                ));
            }
            state.pairs_done += 1;
            scores.push(score);
        }
        played_now += batch;
        if let Some(t) = &cfg.trajectory {
            let line = TrajectoryLine {
                pairs: state.pairs_done,
                scores,
                values: state
                    .params
                    .iter()
                    .map(|q| {
                        let v = (q.value * 1000.0).round() / 1000.0;
                        (q.name.clone(), serde_json::json!(v))
                    })
                    .collect(),
            };
            let text = serde_json::to_string(&line).expect("serialises") + "\n";
            append(t, &text).map_err(|reason| SpsaError::Trajectory {
                path: t.clone(),
                reason,
            })?;
        }
        // Before the state: a kill in between leaves a batch's faulted games twice (same
        // Round) rather than not at all.
        if let (Some(f), false) = (&cfg.faults_pgn, fault_text.is_empty()) {
            append(f, &fault_text).map_err(|reason| SpsaError::Faults {
                path: f.clone(),
                reason,
            })?;
        }
        save_state(&cfg.state, &state)?;
        if !cfg.quiet {
            let w = state.plus;
            let _ = write!(
                std::io::stderr(),
                "\r{}/{} pairs  plus-minus {}-{}-{}  faults {}  {}    ",
                state.pairs_done,
                sched.pairs,
                w.wins,
                w.draws,
                w.losses,
                state.faults,
                state
                    .params
                    .iter()
                    .take(4)
                    .map(|q| format!("{}={:.1}", q.name, q.value))
                    .collect::<Vec<_>>()
                    .join(" ")
            );
        }
    }
    if !cfg.quiet {
        let _ = writeln!(std::io::stderr());
    }
    if let (Some(t), Some(svg)) = (&cfg.trajectory, &cfg.svg) {
        let lines = read_trajectory(t, state.pairs_done)?;
        let doc = figure(&state, &lines);
        evidence::atomic_write(svg, doc.as_bytes()).map_err(|e| SpsaError::Svg {
            path: svg.clone(),
            reason: e.into_io().to_string(),
        })?;
    }
    Ok(state)
}

/// The parameter trajectories as an SVG: each parameter's value as a fraction of its
/// [min, max] range against the pairs played, at most 400 points a line.
pub fn figure(state: &State, lines: &[TrajectoryLine]) -> String {
    use std::fmt::Write as _;
    let frame = evidence::figure::Frame {
        width: 760.0,
        height: 420.0 + 16.0 * state.params.len().div_ceil(2) as f64,
        left: 56.0,
        right: 20.0,
        top: 36.0,
        bottom: 40.0 + 16.0 * state.params.len().div_ceil(2) as f64,
    };
    let plot = frame.plot();
    let mut o = frame.begin(
        &format!(
            "SPSA trajectory: {} of {} pairs, {}",
            state.pairs_done, state.setup.schedule.pairs, state.setup.time_control
        ),
        22.0,
    );
    let _ = writeln!(
        o,
        r##"<rect x="{:.1}" y="{:.1}" width="{:.1}" height="{:.1}" fill="none" stroke="#999"/>"##,
        plot.x, plot.y, plot.width, plot.height
    );
    for (f, label) in [(0.0, "min"), (0.5, "mid"), (1.0, "max")] {
        let y = plot.bottom() - f * plot.height;
        evidence::figure::text(&mut o, plot.x - 6.0, y + 4.0, "end", "#555", label);
    }
    let total = state.setup.schedule.pairs.max(1) as f64;
    let xs = |pairs: u64| plot.x + plot.width * pairs as f64 / total;
    evidence::figure::text(&mut o, plot.x, plot.bottom() + 16.0, "start", "#555", "0");
    evidence::figure::text(
        &mut o,
        plot.right(),
        plot.bottom() + 16.0,
        "end",
        "#555",
        &format!("{} pairs", state.setup.schedule.pairs),
    );
    const COLOURS: [&str; 10] = [
        "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
        "#bcbd22", "#17becf",
    ];
    let stride = lines.len().div_ceil(400).max(1);
    for (k, q) in state.params.iter().enumerate() {
        let colour = COLOURS[k % COLOURS.len()];
        let dash = if k >= COLOURS.len() {
            r#" stroke-dasharray="4 2""#
        } else {
            ""
        };
        let frac = |v: f64| ((v - q.min) / (q.max - q.min)).clamp(0.0, 1.0);
        let y = |v: f64| plot.bottom() - frac(v) * plot.height;
        let mut pts = format!("{:.1},{:.1}", xs(0), y(q.start));
        let picked = lines
            .iter()
            .enumerate()
            .filter(|(i, _)| i % stride == 0 || *i + 1 == lines.len())
            .map(|(_, l)| l);
        for l in picked {
            if let Some(v) = l.values.get(&q.name).and_then(serde_json::Value::as_f64) {
                let _ = write!(pts, " {:.1},{:.1}", xs(l.pairs), y(v));
            }
        }
        let _ = writeln!(
            o,
            r#"<polyline points="{pts}" fill="none" stroke="{colour}" stroke-width="1.2"{dash}/>"#
        );
        let (col, row) = (k % 2, k / 2);
        let lx = plot.x + col as f64 * plot.width / 2.0;
        let ly = plot.bottom() + 36.0 + row as f64 * 16.0;
        let _ = writeln!(
            o,
            r#"<line x1="{lx:.1}" y1="{:.1}" x2="{:.1}" y2="{:.1}" stroke="{colour}" stroke-width="2"{dash}/>"#,
            ly - 4.0,
            lx + 18.0,
            ly - 4.0
        );
        evidence::figure::text(
            &mut o,
            lx + 24.0,
            ly,
            "start",
            "#222",
            &format!(
                "{}: {} → {} [{}, {}]",
                q.name,
                q.shown(q.start),
                if q.float {
                    format!("{:.3}", q.value)
                } else {
                    format!("{:.1}", q.value)
                },
                q.shown(q.min),
                q.shown(q.max)
            ),
        );
    }
    frame.end(o)
}

#[cfg(test)]
mod tests {
    use super::*;

    const INPUT: &str = "# comment\n\nprune.rfp-margin, int, 75, 30, 150, 8, 0.002\nx, float, 0.5, 0, 1, 0.05, 0.01\n";

    #[test]
    fn parses_openbench_input_and_refuses_bad_lines() {
        let p = parse_params(INPUT).unwrap();
        assert_eq!(p.len(), 2);
        assert_eq!(p[0].name, "prune.rfp-margin");
        assert!(!p[0].float && p[1].float);
        assert_eq!((p[0].start, p[0].min, p[0].max), (75.0, 30.0, 150.0));
        assert_eq!((p[0].c_end, p[0].r_end), (8.0, 0.002));
        assert_eq!(
            p[0].input_line(),
            "prune.rfp-margin, int, 75, 30, 150, 8, 0.002"
        );
        for (bad, line, says) in [
            ("a, int, 1, 0, 2, 1", 1, "7 comma-separated"),
            ("a, long, 1, 0, 2, 1, 0.1", 1, "neither int nor float"),
            ("a, int, 1.5, 0, 2, 1, 0.1", 1, "not whole"),
            ("a, int, 3, 0, 2, 1, 0.1", 1, "outside"),
            ("a, int, 1, 2, 2, 1, 0.1", 1, "not below"),
            ("a, int, 1, 0, 2, 0, 0.1", 1, "positive"),
            ("a, float, NaN, 0, 2, 1, 0.1", 1, "finite"),
            (
                "a, int, 1, 0, 2, 1, 0.1\n\na, int, 1, 0, 2, 1, 0.1",
                3,
                "twice",
            ),
            (", int, 1, 0, 2, 1, 0.1", 1, "empty"),
            ("# nothing\n", 0, "no parameter"),
        ] {
            let e = parse_params(bad).unwrap_err();
            assert_eq!(e.line, line, "{bad}");
            assert!(e.reason.contains(says), "{bad}: {}", e.reason);
        }
    }

    #[test]
    fn schedule_ends_at_c_end_and_r_end_and_starts_wider() {
        let p = &parse_params(INPUT).unwrap()[1];
        let s = Schedule::new(1000);
        let (c, r) = s.gains(p, 1000);
        assert!(
            (c - 0.05).abs() < 1e-12 && (r - 0.01).abs() < 1e-12,
            "{c} {r}"
        );
        // At the start c is (N)^γ = 1000^0.101 ≈ 2.01 times c_end; and the step r·c, which
        // is what moves a value, is larger than at the end.
        let (c1, r1) = s.gains(p, 1);
        assert!((c1 / 0.05 - 1000f64.powf(0.101)).abs() < 1e-9, "{c1}");
        assert!(r1 * c1 > r * c);
        // An int parameter's perturbation never falls below half a unit.
        let q = Param {
            c_end: 0.1,
            ..parse_params(INPUT).unwrap()[0].clone()
        };
        assert_eq!(s.gains(&q, 1000).0, 0.5);
    }

    #[test]
    fn perturbations_are_seeded_symmetric_rounded_and_clamped() {
        let params = parse_params(INPUT).unwrap();
        let s = Schedule::new(100);
        let a = perturb(&params, &s, 7, 5);
        assert_eq!(a, perturb(&params, &s, 7, 5));
        assert_ne!(
            (0..20)
                .map(|i| perturb(&params, &s, 7, i).flips)
                .collect::<Vec<_>>(),
            (0..20)
                .map(|i| perturb(&params, &s, 8, i).flips)
                .collect::<Vec<_>>()
        );
        for i in 1..200 {
            let p = perturb(&params, &s, 3, i);
            // int: whole values one or two units apart around 75 (c ≈ 8.4 → 16.8 apart ± 1).
            assert_eq!(p.plus[0].fract(), 0.0);
            let gap = (p.plus[0] - p.minus[0]) * f64::from(p.flips[0]);
            assert!((gap - 2.0 * p.c[0]).abs() <= 1.0, "{gap} {}", p.c[0]);
            // float: exact and symmetric.
            assert!((p.plus[1] + p.minus[1] - 1.0).abs() < 1e-12);
        }
        let mut edge = params.clone();
        edge[1].value = 0.0;
        let p = perturb(&edge, &s, 3, 1);
        assert!(p.plus[1] >= 0.0 && p.minus[1] >= 0.0);
        // Both signs occur for every parameter.
        let flips: Vec<i8> = (1..50)
            .map(|i| perturb(&params, &s, 3, i).flips[0])
            .collect();
        assert!(flips.contains(&1) && flips.contains(&-1));
    }

    /// A noisy "match" between two values of one parameter whose expected score peaks at
    /// 0.3: SPSA with the OpenBench schedule must walk from 0.8 to near it.
    #[test]
    fn converges_on_a_noisy_objective_with_a_known_best() {
        let mut params =
            parse_params("x, float, 0.8, 0, 1, 0.05, 0.02\ny, float, 0.5, 0, 1, 0.05, 0.02")
                .unwrap();
        let sched = Schedule::new(4000);
        let strength = |x: f64| -((x - 0.3) * (x - 0.3));
        let mut noise = 99u64;
        for i in 1..=sched.pairs {
            let p = perturb(&params, &sched, 11, i);
            // Two games; each won by + with probability 1/2 + 3·(strength difference).
            let edge = 3.0 * (strength(p.plus[0]) - strength(p.minus[0]));
            let mut score = 0;
            for _ in 0..2 {
                let u = (mix(noise) >> 11) as f64 / (1u64 << 53) as f64;
                noise = noise.wrapping_add(1);
                score += if u < 0.5 + edge { 1 } else { -1 };
            }
            update(&mut params, &p, score);
        }
        assert!(
            (params[0].value - 0.3).abs() < 0.1,
            "x = {}",
            params[0].value
        );
        // y has no effect: it wanders but stays in range.
        assert!((0.0..=1.0).contains(&params[1].value));
    }
}
