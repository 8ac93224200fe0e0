//! Piece-square tables (material included), in (middlegame, endgame) pairs, and the fixed
//! piece values of SEE and move ordering.
//!
//! The tables are parameters like every other weight (`data/chess/eval-params.txt`). Their
//! first values were PeSTO's material magnitudes plus square bonuses from a few readable
//! rules (centralisation, advancement, castled king), transcribed unchanged; `actuary tune`
//! rewrites them.

use super::S;

/// Simple single-number piece values for SEE, MVV ordering and pruning estimates.
pub(crate) const SEE_VALUE: [i32; 6] = [100, 320, 330, 500, 950, 20_000];

/// Game-phase weight by piece; 24 = all pieces on board (pure middlegame).
pub(crate) const PHASE_WEIGHT: [i32; 6] = [0, 1, 1, 2, 4, 0];
pub const PHASE_MAX: i32 = 24;

/// Material + square bonus, indexed `[piece][square from White's side]`, from the
/// generated parameters (`data/chess/eval-params.txt`). Black looks up `sq ^ 56` (rank
/// mirror).
pub(crate) const PST: [[S; 64]; 6] = super::params::PST;
