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
//!
//! The code is in four parts, each using only those before it: `algorithm` (the mathematics
//! above, no I/O), `state` (the state and trajectory files, and a run's errors), `figure` (the
//! trajectory drawn) and `run` (the games, and the files written after every batch). Their
//! public items are all here.

mod algorithm;
mod figure;
mod run;
mod state;

pub use algorithm::{
    MAX_PAIRS, Param, ParamError, Perturbation, Schedule, check_against_engine, parse_params,
    perturb, update,
};
pub use figure::figure;
pub use run::{SpsaConfig, lock_path, run};
pub use state::{
    FORMAT, FaultKinds, Setup, SpsaError, State, TrajectoryLine, Wdl, read_trajectory,
};
