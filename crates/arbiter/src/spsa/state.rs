//! A run's files: the state (what it was started with, where the parameters are, what was
//! played), loaded and saved atomically; the trajectory, read back on a resume; and the
//! errors of a run.

use std::io::BufRead;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::algorithm::{Param, Schedule};
use crate::engine::EngineSpec;
use crate::game::{GameError, Termination};

/// The state file's format tag.
pub const FORMAT: &str = "arbiter-spsa-v1";

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

impl State {
    /// The state of a run that has played nothing yet: every parameter at its start.
    pub(super) fn new(setup: Setup, params: Vec<Param>) -> Self {
        State {
            format: FORMAT.into(),
            setup,
            params,
            pairs_done: 0,
            plus: Wdl::default(),
            faults: 0,
            fault_kinds: FaultKinds::default(),
        }
    }
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
    pub(super) fn add(&mut self, t: &Termination) {
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

/// The largest state file read back (a line a parameter: far beyond any tune).
const MAX_STATE_BYTES: u64 = 256 << 20;

/// The state in `path`, refused unless it is a state file of this format whose parameters
/// match its setup.
pub(super) fn load_state(path: &Path) -> Result<State, SpsaError> {
    let bad = |reason: String| SpsaError::State {
        path: path.to_owned(),
        reason,
    };
    let text =
        fileio::read_to_string(path, MAX_STATE_BYTES).map_err(|e| bad(e.into_io().to_string()))?;
    let s: State =
        serde_json::from_str(&text).map_err(|e| bad(format!("not a state file: {e}")))?;
    if s.format != FORMAT {
        return Err(bad(format!("format `{}` is not `{FORMAT}`", s.format)));
    }
    if s.params.len() != s.setup.params.len() {
        return Err(bad("its parameters do not match its setup".into()));
    }
    consistent(&s).map_err(bad)?;
    Ok(s)
}

/// The counts of a state agree with each other: a hand-edited state (`pairs_done` 10¹², 41
/// pairs of 40, more faults than games) is refused rather than resumed (issue 68, minor).
fn consistent(s: &State) -> Result<(), String> {
    let pairs = s.pairs_done;
    if pairs > s.setup.schedule.pairs {
        return Err(format!(
            "{pairs} pairs done of a run of {}",
            s.setup.schedule.pairs
        ));
    }
    let games = s.plus.wins + s.plus.draws + s.plus.losses;
    if games != 2 * pairs {
        return Err(format!(
            "{games} games scored for {pairs} pairs (two games a pair)"
        ));
    }
    if s.faults > games || s.fault_kinds.total() > s.faults {
        return Err(format!(
            "{} faults ({} by kind) in {games} games",
            s.faults,
            s.fault_kinds.total()
        ));
    }
    for p in &s.params {
        if !(p.min..=p.max).contains(&p.value) {
            return Err(format!(
                "parameter {}: value {} outside {}..={}",
                p.name, p.value, p.min, p.max
            ));
        }
    }
    Ok(())
}

/// Replace the state in `path` atomically: a kill leaves the old state or the new one.
pub(super) fn save_state(path: &Path, s: &State) -> Result<(), SpsaError> {
    let json = serde_json::to_string_pretty(s).expect("a state serialises") + "\n";
    evidence::atomic_write(path, json.as_bytes()).map_err(|e| SpsaError::Save {
        path: path.to_owned(),
        reason: e.into_io().to_string(),
    })
}

/// The first field of `Setup` in which `a` and `b` differ.
pub(super) fn first_difference(a: &Setup, b: &Setup) -> Option<String> {
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
    let f = match fileio::open(path).map_err(fileio::FileError::into_io) {
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
