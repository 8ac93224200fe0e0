//! A run: batches of game pairs played at once between the two perturbed engines, each
//! batch's results folded into the state in iteration order, then the trajectory and fault
//! files appended to and the state saved.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::Instant;

use cozy_chess::Board;

use super::algorithm::{Param, Perturbation, perturb, update};
use super::figure::figure;
use super::state::{
    Setup, SpsaError, State, TrajectoryLine, first_difference, load_state, read_trajectory,
    save_state,
};
use crate::engine::EngineSpec;
use crate::game::{GameConfig, GameError, GameRecord, Outcome, play};

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
    // One run at a time on a state: two `--resume`s would both play and both write it.
    let _lock = fileio::lock(&lock_path(&cfg.state)).map_err(|e| SpsaError::State {
        path: cfg.state.clone(),
        reason: e.to_string(),
    })?;
    let mut state = start_or_resume(cfg)?;
    prepare_trajectory(cfg, state.pairs_done)?;
    let order = crate::tournament::opening_order(
        cfg.openings.len(),
        cfg.setup.random_openings,
        cfg.setup.seed,
    );
    let t0 = Instant::now();
    let mut played_now = 0u64;
    while state.pairs_done < cfg.setup.schedule.pairs && !stop_requested(cfg, played_now, t0) {
        played_now += run_batch(cfg, &order, &mut state)?;
    }
    if !cfg.quiet {
        let _ = writeln!(std::io::stderr());
    }
    draw_svg(cfg, &state)?;
    Ok(state)
}

/// The lock file of a run's state, `STATE.lock`, held while the run goes on.
pub fn lock_path(state: &Path) -> PathBuf {
    let mut p = state.as_os_str().to_owned();
    p.push(".lock");
    p.into()
}

/// The state a run starts from. With --resume and an existing --state: that run's, refused
/// if it was started with another setup. Otherwise a fresh state, saved at once, refused if
/// --state exists (a fresh run never overwrites another).
fn start_or_resume(cfg: &SpsaConfig) -> Result<State, SpsaError> {
    if cfg.resume && cfg.state.exists() {
        let s = load_state(&cfg.state)?;
        if let Some(what) = first_difference(&s.setup, &cfg.setup) {
            return Err(SpsaError::Mismatch {
                path: cfg.state.clone(),
                what,
            });
        }
        return Ok(s);
    }
    if cfg.state.exists() {
        return Err(SpsaError::StateExists {
            path: cfg.state.clone(),
        });
    }
    let s = State::new(cfg.setup.clone(), cfg.params.clone());
    save_state(&cfg.state, &s)?;
    Ok(s)
}

/// Make --trajectory fit the state before the first batch appends to it: a resumed run drops
/// the lines of batches after the state's last one (lost to a kill); a fresh run empties a
/// file left by another run, so that it never appends to it.
fn prepare_trajectory(cfg: &SpsaConfig, pairs_done: u64) -> Result<(), SpsaError> {
    let Some(t) = &cfg.trajectory else {
        return Ok(());
    };
    if cfg.resume {
        read_trajectory(t, pairs_done)?;
    } else if t.exists() {
        fileio::write_atomic(t, b"").map_err(|e| SpsaError::Trajectory {
            path: t.clone(),
            reason: e.into_io().to_string(),
        })?;
    }
    Ok(())
}

/// Whether --stop-after or --max-minutes ends the run before the next batch. Stops fall on
/// batch boundaries only: a batch is perturbed around one set of values, and cutting one
/// would change the rest of the run.
fn stop_requested(cfg: &SpsaConfig, played_now: u64, t0: Instant) -> bool {
    cfg.stop_after.is_some_and(|s| played_now >= s)
        || cfg
            .max_seconds
            .is_some_and(|m| t0.elapsed().as_secs_f64() >= m)
}

/// Play one batch and keep it: its pairs' results folded into the state in iteration order,
/// then the trajectory line, the faulted games, the state and the progress line written in
/// that order, so that a kill between two writes leaves what a resume repairs (trajectory
/// lines past the state are dropped by `read_trajectory`; faulted games appear twice rather
/// than not at all). Returns the number of pairs played.
fn run_batch(cfg: &SpsaConfig, order: &[usize], state: &mut State) -> Result<u64, SpsaError> {
    let sched = cfg.setup.schedule;
    let left = sched.pairs - state.pairs_done;
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
    let results = play_batch(cfg, order, &state.params, &perts);
    let mut scores = Vec::with_capacity(results.len());
    let mut fault_text = String::new();
    for (p, r) in perts.iter().zip(results) {
        let pair = r?;
        scores.push(pair.score);
        fault_text.push_str(&record_pair(state, p, pair, &cfg.setup.time_control));
    }
    append_trajectory(cfg, state, scores)?;
    // Before the state: a kill in between leaves a batch's faulted games twice (same
    // Round) rather than not at all.
    if let (Some(f), false) = (&cfg.faults_pgn, fault_text.is_empty()) {
        append(f, &fault_text).map_err(|reason| SpsaError::Faults {
            path: f.clone(),
            reason,
        })?;
    }
    save_state(&cfg.state, state)?;
    if !cfg.quiet {
        show_progress(state, sched.pairs);
    }
    Ok(batch)
}

/// Play the pairs of a batch at the same time, one thread a pair, each between the engine
/// with the θ + cΔ values and the one with θ − cΔ on the iteration's opening, colours
/// swapped. The results come back in iteration order.
fn play_batch(
    cfg: &SpsaConfig,
    order: &[usize],
    params: &[Param],
    perts: &[Perturbation],
) -> Vec<Result<PairOutcome, GameError>> {
    std::thread::scope(|s| {
        let handles: Vec<_> = perts
            .iter()
            .map(|p| {
                let k = p.iteration - 1;
                let opening = &cfg.openings[order[(k % order.len() as u64) as usize]];
                let plus = side(&cfg.setup.engine, "plus", params, &p.plus);
                let minus = side(&cfg.setup.engine, "minus", params, &p.minus);
                let game = cfg.game;
                s.spawn(move || -> Result<PairOutcome, GameError> {
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
    })
}

/// Fold one played pair into the state: the update of the values, the θ + cΔ engine's wins,
/// draws and losses, the faults by kind, the pairs done. Returns the PGN of the pair's
/// faulted games (Round = iteration.game), which the caller appends with the batch's.
fn record_pair(
    state: &mut State,
    p: &Perturbation,
    pair: PairOutcome,
    time_control: &str,
) -> String {
    let PairOutcome {
        score,
        outcomes,
        faulted,
    } = pair;
    update(&mut state.params, p, score);
    for (o, plus_white) in outcomes.into_iter().zip([true, false]) {
        match (o, plus_white) {
            (Outcome::Draw, _) => state.plus.draws += 1,
            (Outcome::White, true) | (Outcome::Black, false) => state.plus.wins += 1,
            _ => state.plus.losses += 1,
        }
    }
    let mut pgn = String::new();
    for (k, g) in &faulted {
        state.faults += 1;
        state.fault_kinds.add(&g.termination);
        let round = format!("{}.{k}", p.iteration);
        pgn.push_str(&crate::pgn::write(g, "arbiter spsa", &round, time_control));
    }
    state.pairs_done += 1;
    pgn
}

/// Append the batch's line to --trajectory, if given: the pairs done, the batch's scores and
/// the values after its updates (rounded to three decimals).
fn append_trajectory(cfg: &SpsaConfig, state: &State, scores: Vec<i32>) -> Result<(), SpsaError> {
    let Some(t) = &cfg.trajectory else {
        return Ok(());
    };
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
    })
}

/// The progress line on stderr, rewritten in place after every batch (best effort: a closed
/// stderr must not stop a tune): pairs, the θ + cΔ engine's W-D-L, faults, the first four
/// values.
fn show_progress(state: &State, pairs: u64) {
    let w = state.plus;
    let _ = write!(
        std::io::stderr(),
        "\r{}/{} pairs  plus-minus {}-{}-{}  faults {}  {}    ",
        state.pairs_done,
        pairs,
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

/// With --trajectory and --svg, draw the whole trajectory (as the file holds it) at the end.
fn draw_svg(cfg: &SpsaConfig, state: &State) -> Result<(), SpsaError> {
    let (Some(t), Some(svg)) = (&cfg.trajectory, &cfg.svg) else {
        return Ok(());
    };
    let lines = read_trajectory(t, state.pairs_done)?;
    let doc = figure(state, &lines);
    evidence::atomic_write(svg, doc.as_bytes()).map_err(|e| SpsaError::Svg {
        path: svg.clone(),
        reason: e.into_io().to_string(),
    })
}
