//! # evidence — measurements into claims with bounds
//!
//! The statistics both games use, and nothing that knows about either game:
//!
//! | module | question it answers |
//! |---|---|
//! | [`wilson`] | how often does this prune fail, at worst? (proportions with Wilson bounds) |
//! | [`histogram`] | what margin covers 98 % of residuals? (streaming, mergeable, persisted bins) |
//! | [`clustered`] | the same rate when trials come in clusters (resample clusters, not trials) |
//! | [`paired`] | is the candidate better on the same seeds? (paired screen, bootstrap, t, gate) |
//! | [`student_t`] | exact t quantiles for the paired bound |
//! | [`elo`], [`sprt`] | how strong is the engine, and when can a match stop? |
//! | [`describe`] | mean, sd, quantiles with NumPy's conventions |
//! | [`numpy_rng`] | NumPy's `default_rng` stream, so bootstrap bounds match the reference |
//! | [`io`] | errors, atomic writes and append-only record logs |
//! | [`figure`] | the frame shared by the SVG figures |
//!
//! Every result type is `serde`-serializable: each report is also machine-readable JSON.
#![forbid(unsafe_code)]

pub mod clustered;
pub mod describe;
pub mod elo;
pub mod figure;
pub mod histogram;
pub mod io;
pub mod numpy_rng;
pub mod paired;
pub mod sprt;
pub mod student_t;
pub mod wilson;

pub use elo::EloEstimate;
pub use histogram::{Binning, Histogram};
pub use io::{EvidenceError, atomic_write, atomic_write_with, open_append};
pub use paired::{Arm, ArmSummary, BootstrapConfig, PairedScreen, Verdict, paired_screen};
pub use sprt::{Pentanomial, Sprt, SprtDecision, SprtStatus};
pub use wilson::Wilson;
