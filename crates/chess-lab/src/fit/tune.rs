//! `tune`: fit every evaluation weight to game outcomes (issue 15, items 3-4).
//!
//! Each position is traced once (`eval::trace`): the coefficient of every parameter entry,
//! split by the tier that adds it, each side's king-danger entries, the phase and the
//! pawnless scale. The evaluation is then a sparse dot product plus each side's king danger
//! (a short dot product through [`king_danger`](chess::eval::terms::king_danger), whose
//! slope the gradient follows), so an epoch over millions of positions takes a fraction of a
//! second per core, without calling the engine.
//!
//! Loss (mean over the training positions):
//! `(σ(E) − target)²`, `σ(E) = 1 / (1 + 10^(−K·E/400))`, `target = λ·result + (1 − λ)·σ(score)`,
//! plus, with `--variance-penalty V`, `V · Σ_bucket [Var(R_lazy) + Var(R_super-lazy)]`, where
//! `R` is what a cheap tier misses (the lazy tier: the full tier's terms; the super-lazy
//! tier: the lazy and full tiers' terms), tapered, in pawns, per material bucket: a smaller
//! spread means tighter lazy-exit margins (docs/design/chess-DESIGN.md §2), bought with a little fit.
//!
//! K is fitted first (golden-section search on the starting weights), then full-batch Adam.
//! A hold-out share of the positions (chosen by position hash) is scored every epoch; the
//! weights with the best hold-out loss are written, and the run stops when the hold-out loss
//! has not improved for `--patience` epochs. The run's state (weights, Adam moments, history)
//! is saved every 10 epochs next to `--out`, so `--resume` continues it.

use crate::data::pool::PoolError;
use chess::board::{Board, Color, Piece, parse_epd, parse_fen};
use chess::eval::PHASE_MAX;
use chess::eval::params::{self, COUNT, NAMES, VALUES};
use chess::eval::terms::{KING_DANGER_EG_CAP, KING_DANGER_MG_CAP};
use chess::eval::trace::trace_tiers;
use chess::eval::{S, army_scaler, material_bucket};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

/// Parameters of the optimiser: mg and eg of every entry.
const P: usize = 2 * COUNT;
const BUCKETS: usize = 8;
const STATE_FORMAT: &str = "actuary-tune-state-v1";

/// `actuary tune`.
#[derive(Debug, Clone, clap::Args)]
pub struct TuneArgs {
    /// Labelled positions, comma-separated files: `FEN | score | result` lines (what
    /// `actuary datagen` writes; result 1.0/0.5/0.0 for White) or EPD lines with the result
    /// as `c9 "1-0";` (also `"0-1"`, `"1/2-1/2"`) or `[1.0]`/`[0.5]`/`[0.0]`. `#` lines and
    /// blank lines are skipped; duplicate positions are dropped.
    #[arg(
        long,
        value_name = "FILE[,FILE]",
        value_delimiter = ',',
        required = true
    )]
    pub data: Vec<PathBuf>,
    /// Full passes over the training positions (at most; see --patience).
    #[arg(long, default_value_t = 1000, value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    pub epochs: u32,
    /// Target = λ·result + (1 − λ)·σ(search score): 1 fits the game results alone (EPD data
    /// without scores needs 1).
    #[arg(long, value_name = "L", default_value_t = 1.0, value_parser = unit_interval)]
    pub lambda: f64,
    /// Weight of the cheap tiers' residual variance (pawns², per material bucket) in the
    /// loss; 0 fits the outcomes alone.
    #[arg(long, value_name = "V", default_value_t = 0.0, value_parser = non_negative)]
    pub variance_penalty: f64,
    /// Adam step size, centipawns.
    #[arg(long, value_name = "LR", default_value_t = 1.0, value_parser = positive)]
    pub learning_rate: f64,
    /// Percent of the positions held out to score every epoch (by position hash).
    #[arg(long, value_name = "PCT", default_value_t = 5.0, value_parser = holdout_percent)]
    pub holdout: f64,
    /// Stop when the hold-out loss has not improved for this many epochs.
    #[arg(long, value_name = "EPOCHS", default_value_t = 25, value_parser = clap::value_parser!(u32).range(1..))]
    pub patience: u32,
    /// Use at most this many positions (the first, after dropping duplicates).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(100..))]
    pub limit: Option<u64>,
    /// Starting weights: a parameter file [default: the weights built into the engine].
    #[arg(long, value_name = "FILE")]
    pub from: Option<PathBuf>,
    /// Worker threads for the epochs.
    #[arg(long, value_name = "T", default_value_t = 2, value_parser = clap::value_parser!(u64).range(1..=256))]
    pub threads: u64,
    /// The tuned parameter file to write (e.g. data/chess/eval-params.txt; rebuild to use
    /// it). The run's state goes to FILE.tune-state.json.
    #[arg(long, value_name = "FILE")]
    pub out: PathBuf,
    /// Continue the run saved in FILE.tune-state.json (same data and settings).
    #[arg(long)]
    pub resume: bool,
    /// Parameters to keep at their starting values, by name as in the parameter file
    /// without indices (e.g. `PST,KS_SAFE_CHECK`): to fit new terms alone, or old ones without
    /// them, and tell apart what each contributes.
    #[arg(long, value_name = "NAME[,NAME]", value_delimiter = ',')]
    pub freeze: Vec<String>,
    /// Fit only these parameters (names as for --freeze) and keep every other at its
    /// starting value: the complement of --freeze, for fitting a few new terms in a file of
    /// hundreds.
    #[arg(
        long,
        value_name = "NAME[,NAME]",
        value_delimiter = ',',
        conflicts_with = "freeze"
    )]
    pub fit: Vec<String>,
    /// Keep at its starting value every weight with the support of fewer than N training
    /// positions (positions it moves, each counted by its middlegame share for an mg weight
    /// and the rest for an eg weight). Adam's steps do not shrink with the evidence, so a
    /// weight with little of it (the mg weight of a rook reaching 14 squares, seen mostly in
    /// endgames) can end hundreds of centipawns off, and a search steers into such positions.
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub min_support: u64,
    /// Pull every weight toward its start: L × Σ ((weight − start) / 100)² is added to the
    /// training loss (per pawn², summed over every weight; the loss itself is about 0.08). A
    /// weight the data barely determines then stays near its start instead of drifting;
    /// 1e-6 to 1e-5 is the range to try. 0 = off. Hold-out losses are reported without it.
    #[arg(long, value_name = "L", default_value_t = 0.0, value_parser = non_negative)]
    pub l2: f64,
}

/// Per weight (mg and eg of every entry, in order), whether it stays at its start: named by
/// `--freeze`, or not named by `--fit` (when given). An unknown name is refused.
fn frozen_mask(freeze: &[String], fit: &[String]) -> Result<Vec<bool>, TuneError> {
    let base = |n: &str| n.split('[').next().unwrap_or(n).to_owned();
    for (flag, names) in [("--freeze", freeze), ("--fit", fit)] {
        for f in names {
            if !params::NAMES.iter().any(|n| base(n) == *f) {
                return Err(TuneError::Data(format!(
                    "{flag}: `{f}` is not a parameter name of this engine (e.g. PST, TEMPO, KNIGHT_MOBILITY)"
                )));
            }
        }
    }
    Ok(params::NAMES
        .iter()
        .flat_map(|n| {
            let k = freeze.contains(&base(n)) || !(fit.is_empty() || fit.contains(&base(n)));
            [k, k]
        })
        .collect())
}

pub(crate) fn unit_interval(s: &str) -> Result<f64, String> {
    let v: f64 = s.parse().map_err(|_| format!("`{s}` is not a number"))?;
    (0.0..=1.0)
        .contains(&v)
        .then_some(v)
        .ok_or_else(|| format!("{v} is not within 0..=1"))
}

pub(crate) fn non_negative(s: &str) -> Result<f64, String> {
    let v: f64 = s.parse().map_err(|_| format!("`{s}` is not a number"))?;
    (v.is_finite() && v >= 0.0)
        .then_some(v)
        .ok_or_else(|| format!("{v} must be finite and >= 0"))
}

pub(crate) fn positive(s: &str) -> Result<f64, String> {
    let v: f64 = s.parse().map_err(|_| format!("`{s}` is not a number"))?;
    (v.is_finite() && v > 0.0)
        .then_some(v)
        .ok_or_else(|| format!("{v} must be finite and > 0"))
}

pub(crate) fn holdout_percent(s: &str) -> Result<f64, String> {
    let v: f64 = s.parse().map_err(|_| format!("`{s}` is not a number"))?;
    (v > 0.0 && v < 50.0)
        .then_some(v)
        .ok_or_else(|| format!("{v} must be above 0 and below 50"))
}

/// Why tuning could not run.
#[derive(Debug, thiserror::Error)]
pub enum TuneError {
    /// A file that cannot be read or written, or a bad data line: the same errors as the
    /// other tools' ([`PoolError`] `Io`, `Line`).
    #[error(transparent)]
    File(#[from] PoolError),
    #[error(transparent)]
    Params(#[from] params::ParamsError),
    #[error("{0}")]
    Data(String),
    #[error("{}: {message}", path.display())]
    State { path: PathBuf, message: String },
}

/// One labelled position.
#[derive(Clone, Debug, PartialEq)]
pub struct Labelled {
    pub board: Board,
    /// White's result: 1, 0.5, 0.
    pub result: f64,
    /// Search score, centipawns from White's view, when the data has one.
    pub score: Option<i32>,
    /// The game it comes from (datagen files: the `# game` blocks; other files: each
    /// position its own), so the hold-out split keeps a game's positions together.
    pub group: u64,
}

/// Parse one data line (see [`TuneArgs::data`]); `Ok(None)` for blank and `#` lines.
pub fn parse_line(line: &str) -> Result<Option<Labelled>, String> {
    let l = line.trim();
    if l.is_empty() || l.starts_with('#') {
        return Ok(None);
    }
    let result_of = |t: &str| -> Result<f64, String> {
        match t.trim() {
            "1.0" | "1" | "1-0" => Ok(1.0),
            "0.5" | "1/2-1/2" => Ok(0.5),
            "0.0" | "0" | "0-1" => Ok(0.0),
            other => Err(format!(
                "unknown result `{other}` (expected 1.0, 0.5, 0.0, 1-0, 1/2-1/2 or 0-1)"
            )),
        }
    };
    let f: Vec<&str> = l.split(" | ").collect();
    if f.len() == 3 {
        let board = parse_fen(f[0].trim()).map_err(|e| e.to_string())?;
        let score = f[1]
            .trim()
            .parse::<i32>()
            .ok()
            .filter(|s| s.abs() <= 32_000)
            .ok_or_else(|| format!("`{}` is not a score in centipawns", f[1].trim()))?;
        return Ok(Some(Labelled {
            board,
            result: result_of(f[2])?,
            score: Some(score),
            group: 0,
        }));
    }
    if f.len() != 1 {
        return Err("expected `FEN | score | result` or an EPD line with a result".into());
    }
    // `FEN [1.0]`
    if let Some(open) = l.rfind('[')
        && l.ends_with(']')
    {
        let board = parse_fen(l[..open].trim()).map_err(|e| e.to_string())?;
        return Ok(Some(Labelled {
            board,
            result: result_of(&l[open + 1..l.len() - 1])?,
            score: None,
            group: 0,
        }));
    }
    let epd = parse_epd(l).map_err(|e| e.to_string())?;
    let c9 =
        epd.ops.iter().find(|(op, _)| op == "c9").ok_or(
            "no result: expected a `c9 \"1-0\";` opcode, `[1.0]` or `FEN | score | result`",
        )?;
    let token = c9.1.first().map(String::as_str).unwrap_or("");
    Ok(Some(Labelled {
        board: epd.board,
        result: result_of(token)?,
        score: None,
        group: 0,
    }))
}

/// Read labelled positions from `paths`, dropping duplicate positions (by Zobrist key);
/// returns the positions and the number of duplicates dropped. A directory is a self-play
/// corpus (`datagen --corpus`), read through its loader with the default filter.
///
/// Every position's `group` (what the hold-out split keeps together) depends on the game
/// alone, never on the order of files or games: the corpus's game id; in a text datagen
/// file, the `# game ID` line's id mixed with the file's settings header; elsewhere the
/// position's own key.
pub fn load(paths: &[PathBuf], limit: Option<u64>) -> Result<(Vec<Labelled>, u64), TuneError> {
    // Position key -> its index in `out`. A repeated position keeps the copy of the game
    // with the smallest group, so which game it counts for does not depend on the order of
    // files or games either.
    let mut seen: HashMap<u64, usize> = HashMap::new();
    let mut out = Vec::new();
    let mut dups = 0;
    let full = |out: &Vec<Labelled>| limit.is_some_and(|n| out.len() as u64 >= n);
    let mut keep = |lab: Labelled, out: &mut Vec<Labelled>| {
        if !lab.board.checkers().is_empty() {
            return; // a position in check is not quiet: never a training position
        }
        match seen.get(&lab.board.hash()) {
            None => {
                seen.insert(lab.board.hash(), out.len());
                out.push(lab);
            }
            Some(&i) => {
                dups += 1;
                if lab.group < out[i].group {
                    out[i] = lab;
                }
            }
        }
    };
    for path in paths {
        if full(&out) {
            break;
        }
        if path.is_dir() {
            let loader = crate::data::corpus::Loader {
                filter: crate::data::corpus::Filter::default(),
                holdout_percent: 0.0,
            };
            loader
                .for_each(path, |s, _| {
                    if !full(&out) {
                        keep(
                            Labelled {
                                board: s.board.clone(),
                                result: f64::from(s.white_result),
                                score: Some(s.white_score),
                                group: s.game,
                            },
                            &mut out,
                        );
                    }
                })
                .map_err(|e| TuneError::Data(e.to_string()))?;
            continue;
        }
        let text = fileio::read(path, MAX_TEXT_BYTES).map_err(|e| {
            TuneError::File(PoolError::Io {
                path: path.clone(),
                source: e.into_io(),
            })
        })?;
        // The file's settings line (datagen's header), mixed into its games' groups.
        let mut tag = 0u64;
        let mut pending: Vec<Labelled> = Vec::new();
        for (i, raw) in text.split(|&b| b == b'\n').enumerate() {
            let line = std::str::from_utf8(raw).map_err(|_| {
                TuneError::File(PoolError::Line {
                    path: path.clone(),
                    line: i + 1,
                    message: "not UTF-8 text".into(),
                })
            })?;
            let lab = parse_line(line).map_err(|message| {
                TuneError::File(PoolError::Line {
                    path: path.clone(),
                    line: i + 1,
                    message,
                })
            })?;
            match lab {
                Some(lab) => pending.push(lab),
                None if i == 0 && line.starts_with('#') => tag = mix(text_hash(line)),
                None => {
                    if let Some(rest) = line.strip_prefix("# game ") {
                        let id = rest
                            .split_whitespace()
                            .next()
                            .and_then(|w| w.parse::<u64>().ok())
                            .unwrap_or(0);
                        let group = mix(tag ^ id);
                        for mut lab in pending.drain(..) {
                            lab.group = group;
                            keep(lab, &mut out);
                        }
                    }
                }
            }
            if full(&out) {
                out.truncate(limit.unwrap_or(u64::MAX) as usize);
                return Ok((out, dups));
            }
        }
        // Positions outside `# game` blocks: each its own group.
        for mut lab in pending {
            lab.group = lab.board.hash();
            keep(lab, &mut out);
        }
    }
    if let Some(n) = limit {
        out.truncate(n as usize);
    }
    Ok((out, dups))
}

/// Spreads ids and hashes over 64 bits (SplitMix64's step).
fn mix(x: u64) -> u64 {
    chess::board::mix64(x.wrapping_add(chess::board::GOLDEN_GAMMA))
}

/// FNV-1a of a line (a stable hash: the same text gives the same tag on every machine).
fn text_hash(s: &str) -> u64 {
    s.bytes().fold(0xCBF2_9CE4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01B3)
    })
}

/// The positions as sparse linear forms (structure of arrays).
#[derive(Default)]
pub struct Dataset {
    /// Coefficients of position i: `ids[start[i]..start[i+1]]`, sorted by tier; the first
    /// `n0[i]` are the super-lazy tier's, the next `n1[i]` the lazy tier's, the rest the full.
    start: Vec<u32>,
    ids: Vec<u16>,
    coefs: Vec<i16>,
    n0: Vec<u16>,
    n1: Vec<u16>,
    /// King-danger sums of position i (full tier): `dids[dstart[i]..dstart[i+1]]`, the first
    /// `dwhite[i]` White's (White attacking), the rest Black's; each side's sum enters the
    /// evaluation through [`chess::eval::terms::king_danger`].
    dstart: Vec<u32>,
    dids: Vec<u16>,
    dcoefs: Vec<i16>,
    dwhite: Vec<u16>,
    /// Middlegame share of the taper, phase / 24.
    rho: Vec<f32>,
    /// The drawishness scale when White (index 0) or Black (1) is the stronger side.
    scale: Vec<[f32; 2]>,
    bucket: Vec<u8>,
    result: Vec<f32>,
    score: Vec<Option<i32>>,
    holdout: Vec<bool>,
}

impl Dataset {
    pub fn len(&self) -> usize {
        self.rho.len()
    }

    pub fn is_empty(&self) -> bool {
        self.rho.is_empty()
    }

    fn push(&mut self, lab: &Labelled, holdout_pct: f64) {
        let b = &lab.board;
        let tiers = trace_tiers(b);
        if self.start.is_empty() {
            self.start.push(0);
            self.dstart.push(0);
        }
        let mut counts = [0u16; 3];
        for (k, t) in tiers.iter().enumerate() {
            for (i, c) in t.coef.iter().enumerate() {
                if *c != 0 {
                    self.ids.push(i as u16);
                    self.coefs.push(*c as i16);
                    counts[k] += 1;
                }
            }
        }
        self.start.push(self.ids.len() as u32);
        self.n0.push(counts[0]);
        self.n1.push(counts[1]);
        for &(id, c) in tiers[2].danger.iter().flatten() {
            self.dids.push(id);
            self.dcoefs.push(c as i16);
        }
        self.dstart.push(self.dids.len() as u32);
        self.dwhite
            .push(tiers[2].danger[Color::White as usize].len() as u16);
        let m = chess::eval::Material::from_board(b);
        self.rho.push(m.phase() as f32 / PHASE_MAX as f32);
        // The engine's taper: without pawns, a stronger side up by a minor piece or less
        // gets a quarter.
        let (wa, ba) = (army_scaler(b, Color::White), army_scaler(b, Color::Black));
        let pawnless = |c: Color| b.colored_pieces(c, Piece::Pawn).is_empty();
        let white = if pawnless(Color::White) && wa as i32 - ba as i32 <= 3 {
            0.25
        } else {
            1.0
        };
        let black = if pawnless(Color::Black) && ba as i32 - wa as i32 <= 3 {
            0.25
        } else {
            1.0
        };
        self.scale.push([white, black]);
        self.bucket.push(material_bucket(b) as u8);
        self.result.push(lab.result as f32);
        self.score.push(lab.score);
        // A fixed share of games (positions of one game share its result, so splitting
        // inside a game would let the hold-out loss see the training games), chosen as the
        // corpus loader chooses it: by the game alone.
        self.holdout
            .push(crate::data::corpus::is_holdout(lab.group, holdout_pct));
    }

    /// Trace `positions` (in parallel).
    pub fn build(positions: &[Labelled], holdout_pct: f64, threads: usize) -> Dataset {
        let chunk = positions.len().div_ceil(threads.max(1)).max(1);
        let parts: Vec<Dataset> = std::thread::scope(|s| {
            let handles: Vec<_> = positions
                .chunks(chunk)
                .map(|c| {
                    s.spawn(move || {
                        let mut d = Dataset::default();
                        for lab in c {
                            d.push(lab, holdout_pct);
                        }
                        d
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().expect("tracing thread"))
                .collect()
        });
        let mut all = Dataset::default();
        all.start.push(0);
        all.dstart.push(0);
        for p in parts {
            if p.is_empty() {
                continue;
            }
            let base = all.ids.len() as u32;
            all.start.extend(p.start[1..].iter().map(|s| s + base));
            all.ids.extend(p.ids);
            all.coefs.extend(p.coefs);
            all.n0.extend(p.n0);
            all.n1.extend(p.n1);
            let dbase = all.dids.len() as u32;
            all.dstart.extend(p.dstart[1..].iter().map(|s| s + dbase));
            all.dids.extend(p.dids);
            all.dcoefs.extend(p.dcoefs);
            all.dwhite.extend(p.dwhite);
            all.rho.extend(p.rho);
            all.scale.extend(p.scale);
            all.bucket.extend(p.bucket);
            all.result.extend(p.result);
            all.score.extend(p.score);
            all.holdout.extend(p.holdout);
        }
        all
    }

    /// Per weight (mg and eg of every entry, in order), the training (not hold-out)
    /// positions whose evaluation it moves, each counted by the share of the taper the
    /// weight gets there: the middlegame phase for mg, the rest for eg. An entry seen
    /// mostly in endgames has little evidence for its mg weight, whatever its count.
    pub fn support(&self) -> Vec<f64> {
        let mut n = vec![0f64; 2 * COUNT];
        for i in 0..self.len() {
            if self.holdout[i] {
                continue;
            }
            let rho = f64::from(self.rho[i]);
            let linear = &self.ids[self.start[i] as usize..self.start[i + 1] as usize];
            // A king-danger entry can be in both sides' sums (`KS_BASE` always is when both
            // apply): one position is one position of support.
            let danger = &self.dids[self.dstart[i] as usize..self.dstart[i + 1] as usize];
            let first = danger
                .iter()
                .enumerate()
                .filter(|&(k, id)| !danger[..k].contains(id))
                .map(|(_, id)| id);
            for id in linear.iter().chain(first) {
                let id = *id as usize;
                n[2 * id] += rho;
                n[2 * id + 1] += 1.0 - rho;
            }
        }
        n
    }

    /// Position `i`'s king danger with weights `w`: the (mg, eg) it adds (White's view), and
    /// per side (White, Black) its sign and the slopes of
    /// [`king_danger`](chess::eval::terms::king_danger) at that side's sum
    /// (mg, eg), for the chain rule. The function is the engine's without its integer
    /// rounding, so that the slopes are exact for what the tuner minimises.
    #[inline]
    fn danger(&self, i: usize, w: &[f64]) -> ((f64, f64), [DangerSlope; 2]) {
        let (s, e) = (self.dstart[i] as usize, self.dstart[i + 1] as usize);
        let split = s + self.dwhite[i] as usize;
        let mut total = (0.0, 0.0);
        let mut slopes = [DangerSlope::default(); 2];
        for (side, range) in [s..split, split..e].into_iter().enumerate() {
            if range.is_empty() {
                continue;
            }
            let (mut dm, mut de) = (0.0, 0.0);
            for k in range {
                let id = self.dids[k] as usize;
                let c = f64::from(self.dcoefs[k]);
                dm += c * w[2 * id];
                de += c * w[2 * id + 1];
            }
            let sign = if side == 0 { 1.0 } else { -1.0 };
            let mg_cap = f64::from(KING_DANGER_MG_CAP);
            let eg_cap = f64::from(KING_DANGER_EG_CAP);
            let m = dm.clamp(0.0, mg_cap);
            let g = de.clamp(0.0, eg_cap);
            total.0 += sign * m * m / 720.0;
            total.1 += sign * g / 20.0;
            slopes[side] = DangerSlope {
                sign,
                mg: if dm > 0.0 && dm < mg_cap {
                    2.0 * dm / 720.0
                } else {
                    0.0
                },
                eg: if de > 0.0 && de < eg_cap {
                    1.0 / 20.0
                } else {
                    0.0
                },
            };
        }
        (total, slopes)
    }

    /// (mg, eg) totals of position `i`'s coefficients in `range` (relative to its start).
    #[inline]
    fn dot(&self, i: usize, range: std::ops::Range<usize>, w: &[f64]) -> (f64, f64) {
        let s = self.start[i] as usize;
        let (mut mg, mut eg) = (0.0, 0.0);
        for k in s + range.start..s + range.end {
            let id = self.ids[k] as usize;
            let c = f64::from(self.coefs[k]);
            mg += c * w[2 * id];
            eg += c * w[2 * id + 1];
        }
        (mg, eg)
    }

    fn tier_ranges(&self, i: usize) -> [std::ops::Range<usize>; 3] {
        let n = (self.start[i + 1] - self.start[i]) as usize;
        let (a, b) = (
            self.n0[i] as usize,
            self.n0[i] as usize + self.n1[i] as usize,
        );
        [0..a, a..b, b..n]
    }

    /// The evaluation of position `i` with weights `w` (White's view, centipawns), and the
    /// scale it used.
    fn eval(&self, i: usize, w: &[f64]) -> (f64, f64) {
        let (mg, eg) = self.dot(i, 0..(self.start[i + 1] - self.start[i]) as usize, w);
        let ((dm, de), _) = self.danger(i, w);
        let (mg, eg) = (mg + dm, eg + de);
        let rho = f64::from(self.rho[i]);
        let v = mg * rho + eg * (1.0 - rho);
        let scale = f64::from(self.scale[i][usize::from(v <= 0.0)]);
        (v * scale, scale)
    }

    /// The cheap tiers' residuals of position `i` in pawns: (lazy, super-lazy).
    fn residuals(&self, i: usize, w: &[f64]) -> (f64, f64) {
        let [_, lazy, full] = self.tier_ranges(i);
        let rho = f64::from(self.rho[i]);
        let (fm, fe) = self.dot(i, full, w);
        let ((dm, de), _) = self.danger(i, w);
        let (fm, fe) = (fm + dm, fe + de);
        let (lm, le) = self.dot(i, lazy, w);
        let r_lazy = (fm * rho + fe * (1.0 - rho)) / 100.0;
        let r_sl = r_lazy + (lm * rho + le * (1.0 - rho)) / 100.0;
        (r_lazy, r_sl)
    }
}

/// One side's king danger at some weights: its sign in White's view and the slopes of
/// [`king_danger`](chess::eval::terms::king_danger) at its sum, middlegame and endgame.
#[derive(Clone, Copy, Default)]
struct DangerSlope {
    sign: f64,
    mg: f64,
    eg: f64,
}

fn sigmoid(k: f64, e: f64) -> f64 {
    1.0 / (1.0 + 10f64.powf(-k * e / 400.0))
}

/// What one pass over the data gives.
#[derive(Clone, Default)]
struct Pass {
    /// Sum of squared errors over training and hold-out positions.
    train_sse: f64,
    train_n: u64,
    holdout_sse: f64,
    holdout_n: u64,
    grad: Vec<f64>,
}

/// Per-bucket residual statistics of the training (or the hold-out) positions: (n, mean
/// lazy, mean super-lazy, var lazy, var super-lazy).
type BucketStats = [(f64, f64, f64, f64, f64); BUCKETS];

/// Index of the training and the hold-out positions' statistics in [`bucket_stats`].
const TRAIN: usize = 0;
const HOLDOUT: usize = 1;

/// The variance penalty's sum: Σ over buckets of Var(lazy) + Var(super-lazy), pawns².
fn variance_sum(st: &BucketStats) -> f64 {
    st.iter().map(|b| b.3 + b.4).sum()
}

/// Both splits' statistics in one pass over the data: `[TRAIN]` and `[HOLDOUT]`.
fn bucket_stats(d: &Dataset, w: &[f64], threads: usize) -> [BucketStats; 2] {
    let n = d.len();
    let chunk = n.div_ceil(threads).max(1);
    let parts: Vec<[[[f64; 5]; BUCKETS]; 2]> = std::thread::scope(|s| {
        let hs: Vec<_> = (0..n)
            .step_by(chunk)
            .map(|lo| {
                s.spawn(move || {
                    let mut acc = [[[0.0; 5]; BUCKETS]; 2];
                    for i in lo..(lo + chunk).min(n) {
                        let (a, b) = d.residuals(i, w);
                        let x = &mut acc[usize::from(d.holdout[i])][d.bucket[i] as usize];
                        x[0] += 1.0;
                        x[1] += a;
                        x[2] += b;
                        x[3] += a * a;
                        x[4] += b * b;
                    }
                    acc
                })
            })
            .collect();
        hs.into_iter()
            .map(|h| h.join().expect("stats thread"))
            .collect()
    });
    let mut out: [BucketStats; 2] = [[(0.0, 0.0, 0.0, 0.0, 0.0); BUCKETS]; 2];
    for (split, side) in out.iter_mut().enumerate() {
        for (b, o) in side.iter_mut().enumerate() {
            let mut x = [0.0; 5];
            for p in &parts {
                for k in 0..5 {
                    x[k] += p[split][b][k];
                }
            }
            if x[0] > 0.0 {
                let (ma, mb) = (x[1] / x[0], x[2] / x[0]);
                *o = (x[0], ma, mb, x[3] / x[0] - ma * ma, x[4] / x[0] - mb * mb);
            }
        }
    }
    out
}

/// The cheap tiers' residual spread: mean over the material buckets (with positions) of the
/// standard deviation, in centipawns, lazy and super-lazy.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Spread {
    pub lazy: f64,
    pub super_lazy: f64,
}

impl Spread {
    fn of(st: &BucketStats) -> Spread {
        let used: Vec<_> = st.iter().filter(|b| b.0 > 0.0).collect();
        let n = used.len().max(1) as f64;
        Spread {
            lazy: 100.0 * used.iter().map(|b| b.3.max(0.0).sqrt()).sum::<f64>() / n,
            super_lazy: 100.0 * used.iter().map(|b| b.4.max(0.0).sqrt()).sum::<f64>() / n,
        }
    }

    fn to(self, after: Spread) -> SpreadChange {
        SpreadChange {
            before: self,
            after,
        }
    }
}

/// A spread before and after tuning.
#[derive(Clone, Copy, Debug)]
pub struct SpreadChange {
    pub before: Spread,
    pub after: Spread,
}

impl std::fmt::Display for SpreadChange {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "residual spread (mean bucket sd, cp) lazy {:.1} -> {:.1}, super-lazy {:.1} -> {:.1}",
            self.before.lazy, self.after.lazy, self.before.super_lazy, self.after.super_lazy
        )
    }
}

/// Loss and gradient (of the training loss, outcome part and variance part) at `w`.
fn pass(
    d: &Dataset,
    w: &[f64],
    k: f64,
    targets: &[f32],
    penalty: Option<(f64, &BucketStats)>,
    threads: usize,
) -> Pass {
    let n = d.len();
    let chunk = n.div_ceil(threads).max(1);
    let train_n = d.holdout.iter().filter(|h| !**h).count().max(1) as f64;
    let parts: Vec<Pass> = std::thread::scope(|s| {
        let hs: Vec<_> = (0..n)
            .step_by(chunk)
            .map(|lo| {
                s.spawn(move || {
                    let mut p = Pass {
                        grad: vec![0.0; P],
                        ..Pass::default()
                    };
                    let ln10 = std::f64::consts::LN_10;
                    for i in lo..(lo + chunk).min(n) {
                        let (e, scale) = d.eval(i, w);
                        let sg = sigmoid(k, e);
                        let err = sg - f64::from(targets[i]);
                        if d.holdout[i] {
                            p.holdout_sse += err * err;
                            p.holdout_n += 1;
                            continue;
                        }
                        p.train_sse += err * err;
                        p.train_n += 1;
                        // d(err²)/dE, averaged over the training set.
                        let de = 2.0 * err * sg * (1.0 - sg) * k * ln10 / 400.0 * scale / train_n;
                        let rho = f64::from(d.rho[i]);
                        let s0 = d.start[i] as usize;
                        let s1 = d.start[i + 1] as usize;
                        let [_, lazy, full] = d.tier_ranges(i);
                        // Variance part: 2V/n_b (R − mean_b) per residual, on its tiers.
                        let (vl, vs) = match penalty {
                            Some((v, st)) if v > 0.0 => {
                                let b = &st[d.bucket[i] as usize];
                                let (rl, rs) = d.residuals(i, w);
                                (
                                    2.0 * v / b.0 * (rl - b.1) / 100.0,
                                    2.0 * v / b.0 * (rs - b.2) / 100.0,
                                )
                            }
                            _ => (0.0, 0.0),
                        };
                        for kk in s0..s1 {
                            let rel = kk - s0;
                            let mut g = de;
                            if full.contains(&rel) {
                                g += vl + vs;
                            } else if lazy.contains(&rel) {
                                g += vs;
                            }
                            let id = d.ids[kk] as usize;
                            let c = f64::from(d.coefs[kk]) * g;
                            p.grad[2 * id] += c * rho;
                            p.grad[2 * id + 1] += c * (1.0 - rho);
                        }
                        // The king danger (full tier): each entry through its side's slope.
                        let (_, slopes) = d.danger(i, w);
                        let (ds, dsplit) = (
                            d.dstart[i] as usize,
                            d.dstart[i] as usize + d.dwhite[i] as usize,
                        );
                        for kk in ds..d.dstart[i + 1] as usize {
                            let s = slopes[usize::from(kk >= dsplit)];
                            let id = d.dids[kk] as usize;
                            let c = f64::from(d.dcoefs[kk]) * (de + vl + vs) * s.sign;
                            p.grad[2 * id] += c * s.mg * rho;
                            p.grad[2 * id + 1] += c * s.eg * (1.0 - rho);
                        }
                    }
                    p
                })
            })
            .collect();
        hs.into_iter()
            .map(|h| h.join().expect("epoch thread"))
            .collect()
    });
    let mut total = Pass {
        grad: vec![0.0; P],
        ..Pass::default()
    };
    for p in parts {
        total.train_sse += p.train_sse;
        total.train_n += p.train_n;
        total.holdout_sse += p.holdout_sse;
        total.holdout_n += p.holdout_n;
        for (a, b) in total.grad.iter_mut().zip(&p.grad) {
            *a += b;
        }
    }
    total
}

/// Mean squared error of the results against σ(K·E) over the training positions.
fn result_mse(d: &Dataset, w: &[f64], k: f64) -> f64 {
    let (mut s, mut n) = (0.0f64, 0.0f64);
    for i in 0..d.len() {
        if d.holdout[i] {
            continue;
        }
        let e = sigmoid(k, d.eval(i, w).0) - f64::from(d.result[i]);
        s += e * e;
        n += 1.0;
    }
    s / n.max(1.0)
}

/// The K that minimises the result MSE at `w` (golden-section search on [0.05, 5]).
pub fn fit_k(d: &Dataset, w: &[f64]) -> f64 {
    let (mut a, mut b) = (0.05f64, 5.0f64);
    let g = (5f64.sqrt() - 1.0) / 2.0;
    let mut c = b - g * (b - a);
    let mut e = a + g * (b - a);
    let (mut fc, mut fe) = (result_mse(d, w, c), result_mse(d, w, e));
    for _ in 0..60 {
        if fc < fe {
            b = e;
            e = c;
            fe = fc;
            c = b - g * (b - a);
            fc = result_mse(d, w, c);
        } else {
            a = c;
            c = e;
            fc = fe;
            e = a + g * (b - a);
            fe = result_mse(d, w, e);
        }
    }
    (a + b) / 2.0
}

/// Everything needed to continue a run.
#[derive(Serialize, Deserialize)]
struct State {
    format: String,
    settings: String,
    epoch: u32,
    k: f64,
    weights: Vec<f64>,
    m: Vec<f64>,
    v: Vec<f64>,
    best_holdout: f64,
    /// What picks the best weights: the hold-out loss plus, with `--variance-penalty`, the
    /// same penalty on the hold-out positions (the objective the run minimises, judged on
    /// positions it does not train on). NaN in states written before it existed.
    #[serde(default = "nan")]
    best_objective: f64,
    best_epoch: u32,
    best_weights: Vec<f64>,
    /// (epoch, train loss, hold-out loss, variance penalty)
    history: Vec<(u32, f64, f64, f64)>,
    /// The variance penalty on the hold-out positions, per epoch of `history` (0 without
    /// `--variance-penalty`; empty in states written before it existed).
    #[serde(default)]
    holdout_penalty: Vec<f64>,
}

fn nan() -> f64 {
    f64::NAN
}

fn state_path(out: &Path) -> PathBuf {
    let mut s = out.as_os_str().to_owned();
    s.push(".tune-state.json");
    PathBuf::from(s)
}

impl TuneArgs {
    fn settings(&self, positions: usize) -> String {
        format!(
            "data={} positions={positions} lambda={} variance_penalty={} learning_rate={} holdout={} from={}",
            self.data
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(","),
            self.lambda,
            self.variance_penalty,
            self.learning_rate,
            self.holdout,
            self.from
                .as_ref()
                .map_or("embedded".into(), |p| p.display().to_string())
        ) + &if self.freeze.is_empty() {
            String::new()
        } else {
            format!(" freeze={}", self.freeze.join(","))
        } + &if self.fit.is_empty() {
            String::new()
        } else {
            format!(" fit={}", self.fit.join(","))
        } + &if self.min_support == 0 {
            String::new()
        } else {
            format!(" min_support={}", self.min_support)
        } + &if self.l2 == 0.0 {
            String::new()
        } else {
            format!(" l2={}", self.l2)
        }
    }

    pub fn run(&self) -> Result<ExitCode, crate::LabError> {
        let summary = tune(self)?;
        eprintln!("{summary}");
        Ok(ExitCode::SUCCESS)
    }
}

fn save_state(path: &Path, st: &State) -> Result<(), TuneError> {
    let json = serde_json::to_vec(st).map_err(|e| TuneError::State {
        path: path.to_owned(),
        message: e.to_string(),
    })?;
    evidence::atomic_write(path, &json).map_err(|e| {
        TuneError::File(PoolError::Io {
            path: path.to_owned(),
            source: e.into_io(),
        })
    })
}

/// Check `--out` before any work: an existing path must be a regular file, and its
/// directory one this run can write in (the state file goes there too). Returns the state
/// file's path and the run's lock (`FILE.tune-state.json.lock`: a second tune on the same
/// `--out` is refused while this one runs).
fn claim_out(out: &Path) -> Result<(PathBuf, std::fs::File), TuneError> {
    let bad = |why: String| TuneError::Data(format!("--out {}: {why}", out.display()));
    if let Ok(m) = std::fs::metadata(out)
        && !m.is_file()
    {
        return Err(bad("not a regular file".into()));
    }
    let dir = out
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    if !dir.is_dir() {
        return Err(bad(format!("{} is not a directory", dir.display())));
    }
    let spath = state_path(out);
    if let Ok(m) = std::fs::metadata(&spath)
        && !m.is_file()
    {
        return Err(bad(format!("{}: not a regular file", spath.display())));
    }
    // The run's lock lives in its own file beside the state (the state and the output are
    // replaced by renames, which a lock on them would not survive); creating it also proves
    // the directory writable before any work.
    let mut lpath = spath.clone().into_os_string();
    lpath.push(".lock");
    let lpath = PathBuf::from(lpath);
    let f = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .append(true)
        .open(&lpath)
        .map_err(|e| bad(format!("cannot write {}: {e}", lpath.display())))?;
    match f.try_lock() {
        Ok(()) => {}
        Err(std::fs::TryLockError::WouldBlock) => {
            return Err(bad(
                "another tune is writing it (its state file is locked)".into()
            ));
        }
        Err(std::fs::TryLockError::Error(_)) => {} // no locks on this file system
    }
    Ok((spath, f))
}

/// A saved state's numbers, checked: K positive and finite, every weight and moment finite
/// and every weight within the ±30,000 the parameter file allows.
fn check_state(st: &State) -> Result<(), String> {
    if !(st.k.is_finite() && st.k > 0.0) {
        return Err(format!("k = {} (must be finite and > 0)", st.k));
    }
    let weight_ok = |w: &f64| w.is_finite() && w.abs() <= 30_000.0;
    if let Some(w) = st
        .weights
        .iter()
        .chain(&st.best_weights)
        .find(|w| !weight_ok(w))
    {
        return Err(format!("a weight of {w} (must be finite, within ±30000)"));
    }
    if st.m.iter().chain(&st.v).any(|x| !x.is_finite()) || st.v.iter().any(|x| *x < 0.0) {
        return Err("Adam moments that are not finite (or a negative second moment)".into());
    }
    if st.m.len() != P || st.v.len() != P || st.best_weights.len() != P {
        return Err("vectors of the wrong length".into());
    }
    if st.best_epoch > st.epoch {
        return Err(format!(
            "best epoch {} after the current epoch {}",
            st.best_epoch, st.epoch
        ));
    }
    Ok(())
}

/// Run the tuner; returns a summary line.
/// The largest text file `tune` reads whole (a `--data` text file, `--from`, its state):
/// datagen's text files are a few hundred MB at most; a device or a FIFO is not one.
const MAX_TEXT_BYTES: u64 = 4 << 30;

pub fn tune(a: &TuneArgs) -> Result<String, TuneError> {
    let t0 = Instant::now();
    let (spath, _lock) = claim_out(&a.out)?;
    let start: Vec<S> = match &a.from {
        Some(p) => {
            let text = fileio::read_to_string(p, MAX_TEXT_BYTES).map_err(|e| {
                TuneError::File(PoolError::Io {
                    path: p.clone(),
                    source: e.into_io(),
                })
            })?;
            params::parse(&text, &p.display().to_string())?
        }
        None => VALUES.to_vec(),
    };
    let frozen = frozen_mask(&a.freeze, &a.fit)?;
    // The starting weights as the fit's flat list (mg, eg of every entry): the L2 pull's
    // anchor, the same on a resume (the settings hold --from).
    let start_w: Vec<f64> = start
        .iter()
        .flat_map(|s| [f64::from(s.mg), f64::from(s.eg)])
        .collect();
    let (positions, dups) = load(&a.data, a.limit)?;
    if positions.len() < 100 {
        return Err(TuneError::Data(format!(
            "{} positions: too few to tune (at least 100)",
            positions.len()
        )));
    }
    if a.lambda < 1.0 && positions.iter().any(|p| p.score.is_none()) {
        return Err(TuneError::Data(
            "--lambda below 1 needs a search score on every position; some data has none \
             (EPD results only): use --lambda 1"
                .into(),
        ));
    }
    let threads = a.threads as usize;
    let d = Dataset::build(&positions, a.holdout, threads);
    drop(positions);
    let settings = a.settings(d.len());
    let mut frozen = frozen;
    if a.min_support > 0 {
        let support = d.support();
        let mut rare = 0;
        for (j, n) in support.iter().enumerate() {
            if *n < a.min_support as f64 && !frozen[j] {
                frozen[j] = true;
                rare += 1;
            }
        }
        eprintln!(
            "tune: {rare} of {} weights (mg, eg) have the support of fewer than {} training positions: kept at their start",
            2 * COUNT,
            a.min_support
        );
    }
    eprintln!(
        "tune: {} positions ({} duplicates dropped, {} held out), traced in {:.1} s",
        d.len(),
        dups,
        d.holdout.iter().filter(|h| **h).count(),
        t0.elapsed().as_secs_f64()
    );
    let mut st = if a.resume {
        let bytes = fileio::read(&spath, MAX_TEXT_BYTES).map_err(|e| {
            TuneError::File(PoolError::Io {
                path: spath.clone(),
                source: e.into_io(),
            })
        })?;
        let st: State = serde_json::from_slice(&bytes).map_err(|e| TuneError::State {
            path: spath.clone(),
            message: format!("not a tune state ({e})"),
        })?;
        if let Err(why) = check_state(&st) {
            return Err(TuneError::State {
                path: spath.clone(),
                message: format!("not a usable tune state: {why}"),
            });
        }
        if st.format != STATE_FORMAT || st.settings != settings || st.weights.len() != P {
            return Err(TuneError::State {
                path: spath.clone(),
                message: format!(
                    "made by another run ({}); resume with the same data and settings ({settings})",
                    st.settings
                ),
            });
        }
        st
    } else {
        let w: Vec<f64> = start
            .iter()
            .flat_map(|s| [f64::from(s.mg), f64::from(s.eg)])
            .collect();
        let k = fit_k(&d, &w);
        State {
            format: STATE_FORMAT.into(),
            settings: settings.clone(),
            epoch: 0,
            k,
            best_holdout: f64::INFINITY,
            best_objective: f64::INFINITY,
            best_epoch: 0,
            best_weights: w.clone(),
            weights: w,
            m: vec![0.0; P],
            v: vec![0.0; P],
            history: Vec::new(),
            holdout_penalty: Vec::new(),
        }
    };
    if st.best_objective.is_nan() {
        // A state from before the penalised selection: it picked by the hold-out loss.
        st.best_objective = st.best_holdout;
    }
    let k = st.k;
    let targets: Vec<f32> = (0..d.len())
        .map(|i| {
            let r = f64::from(d.result[i]);
            let s = d.score[i].map_or(r, |s| sigmoid(k, f64::from(s)));
            (a.lambda * r + (1.0 - a.lambda) * s) as f32
        })
        .collect();
    eprintln!("tune: K = {k:.4}, starting at epoch {}", st.epoch);
    let bar = crate::data::pool::progress(u64::from(a.epochs), "epochs");
    bar.set_prefix("tune");
    bar.set_position(u64::from(st.epoch.min(a.epochs)));
    let (b1, b2, eps) = (0.9f64, 0.999f64, 1e-8);
    let mut stopped = "the epoch limit";
    while st.epoch < a.epochs {
        let both = (a.variance_penalty > 0.0).then(|| bucket_stats(&d, &st.weights, threads));
        let stats = both.map(|b| b[TRAIN]);
        let hold_pen = both.map_or(0.0, |b| a.variance_penalty * variance_sum(&b[HOLDOUT]));
        let p = pass(
            &d,
            &st.weights,
            k,
            &targets,
            stats.as_ref().map(|s| (a.variance_penalty, s)),
            threads,
        );
        let train = p.train_sse / p.train_n.max(1) as f64;
        let hold = p.holdout_sse / p.holdout_n.max(1) as f64;
        let pen = stats.map_or(0.0, |s| a.variance_penalty * variance_sum(&s));
        st.history.push((st.epoch, train, hold, pen));
        st.holdout_penalty.push(hold_pen);
        // Judged by the objective being minimised: with a penalty, by the loss alone the
        // start would win whenever the fit gains less than the penalty takes.
        if hold + hold_pen < st.best_objective {
            st.best_objective = hold + hold_pen;
            st.best_holdout = hold;
            st.best_epoch = st.epoch;
            st.best_weights.clone_from(&st.weights);
        }
        // Adam.
        let t = f64::from(st.epoch + 1);
        for (j, _) in frozen.iter().enumerate().filter(|(_, f)| !**f) {
            let g = p.grad[j] + 2.0 * a.l2 * (st.weights[j] - start_w[j]) / 10_000.0;
            st.m[j] = b1 * st.m[j] + (1.0 - b1) * g;
            st.v[j] = b2 * st.v[j] + (1.0 - b2) * g * g;
            let mh = st.m[j] / (1.0 - b1.powf(t));
            let vh = st.v[j] / (1.0 - b2.powf(t));
            st.weights[j] -= a.learning_rate * mh / (vh.sqrt() + eps);
        }
        st.epoch += 1;
        bar.set_message(format!(
            "train {train:.6} hold-out {hold:.6} penalty {pen:.5}"
        ));
        bar.inc(1);
        if st.epoch % 10 == 0 {
            save_state(&spath, &st)?;
        }
        if st.epoch - st.best_epoch > a.patience {
            stopped = "--patience: no better hold-out loss for that many epochs";
            break;
        }
    }
    bar.finish();
    save_state(&spath, &st)?;
    let values: Vec<S> = st
        .best_weights
        .chunks(2)
        .map(|c| S::new(c[0].round() as i32, c[1].round() as i32))
        .collect();
    let moved = values.iter().zip(&start).filter(|(a, b)| a != b).count();
    // What the variance penalty is for: the spread of what the cheap tiers miss, before and
    // after (training positions, mean over the material buckets of the standard deviation).
    let w0: Vec<f64> = start
        .iter()
        .flat_map(|s| [f64::from(s.mg), f64::from(s.eg)])
        .collect();
    let spread = Spread::of(&bucket_stats(&d, &w0, threads)[TRAIN]).to(Spread::of(
        &bucket_stats(&d, &st.best_weights, threads)[TRAIN],
    ));
    let source = format!(
        "actuary tune --data {} ({} positions), K {:.4}, lambda {}, variance penalty {},\n\
         learning rate {}, best hold-out loss {:.6} at epoch {} of {} (stopped by {}),\n\
         {spread}.",
        a.data
            .iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
            .join(","),
        d.len(),
        k,
        a.lambda,
        a.variance_penalty,
        a.learning_rate,
        st.best_holdout,
        st.best_epoch,
        st.epoch,
        stopped
    );
    // What else shaped the fit, so the file's source paragraph is enough to repeat it.
    let mut source = source;
    if let Some(from) = &a.from {
        source.push_str(&format!("\nstarting weights {}", from.display()));
    }
    if !a.freeze.is_empty() {
        source.push_str(&format!("\n--freeze {}", a.freeze.join(",")));
    }
    if !a.fit.is_empty() {
        source.push_str(&format!("\n--fit {}", a.fit.join(",")));
    }
    if a.min_support > 0 {
        source.push_str(&format!("\n--min-support {}", a.min_support));
    }
    if a.l2 > 0.0 {
        source.push_str(&format!("\n--l2 {}", a.l2));
    }
    let text = params::write(&values, &source);
    evidence::atomic_write(&a.out, text.as_bytes()).map_err(|e| {
        TuneError::File(PoolError::Io {
            path: a.out.clone(),
            source: e.into_io(),
        })
    })?;
    let first = st.history.first().map_or(f64::NAN, |h| h.2);
    Ok(format!(
        "tune: hold-out loss {first:.6} -> {:.6} (epoch {}), {spread}, {moved} of {} entries changed, {} written ({:.0} s; stopped by {stopped})",
        st.best_holdout,
        st.best_epoch,
        NAMES.len(),
        a.out.display(),
        t0.elapsed().as_secs_f64()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use chess::eval::trace::{linear_eval, trace};

    #[test]
    fn support_counts_the_training_positions_an_entry_moves() {
        let fens = [
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
            "4k3/8/8/8/8/8/8/3QK3 w - - 0 1",
            "4k3/8/8/8/8/8/8/R3K3 b - - 0 1",
            "r3k3/8/8/8/8/8/8/4K3 w - - 0 1",
        ];
        let labs: Vec<Labelled> = fens
            .iter()
            .enumerate()
            .map(|(g, f)| Labelled {
                board: parse_fen(f).unwrap(),
                result: 0.5,
                score: Some(0),
                group: g as u64,
            })
            .collect();
        let d = Dataset::build(&labs, 0.0, 1);
        let n = d.support();
        // Expected from the traces and the phases, position by position, counted here.
        let mut want = vec![0f64; 2 * COUNT];
        for l in &labs {
            let rho = chess::eval::Material::from_board(&l.board).phase() as f32 / PHASE_MAX as f32;
            let rho = f64::from(rho);
            let t = chess::eval::trace::trace(&l.board);
            let mut moved: Vec<usize> = (0..COUNT).filter(|&j| t.coef[j] != 0).collect();
            moved.extend(t.danger.iter().flatten().map(|&(j, _)| j as usize));
            moved.sort_unstable();
            moved.dedup();
            for j in moved {
                want[2 * j] += rho;
                want[2 * j + 1] += 1.0 - rho;
            }
        }
        assert_eq!(n, want);
        // The queen alone moves a queen-mobility entry; the two lone rooks (one each side)
        // each move a rook-mobility entry; all three positions are nearly pure endgames
        // (phase: queen 4, rook 2 of 24).
        let sum = |prefix: &str, eg: usize| -> f64 {
            (0..COUNT)
                .filter(|&j| NAMES[j].starts_with(prefix))
                .map(|j| n[2 * j + eg])
                .sum()
        };
        assert!((sum("QUEEN_MOBILITY", 0) + sum("QUEEN_MOBILITY", 1) - 1.0).abs() < 1e-9);
        assert!((sum("ROOK_MOBILITY", 0) + sum("ROOK_MOBILITY", 1) - 2.0).abs() < 1e-9);
        assert!(sum("ROOK_MOBILITY", 0) < 0.2 && sum("QUEEN_MOBILITY", 0) < 0.2);
    }

    #[test]
    fn freeze_keeps_the_named_parameters_and_refuses_unknown_names() {
        let m = frozen_mask(&["TEMPO".into(), "KS_SAFE_CHECK".into()], &[]).unwrap();
        assert_eq!(m.len(), 2 * COUNT);
        let kept: Vec<&str> = (0..COUNT).filter(|&i| m[2 * i]).map(|i| NAMES[i]).collect();
        assert_eq!(
            kept,
            [
                "KS_SAFE_CHECK[0]",
                "KS_SAFE_CHECK[1]",
                "KS_SAFE_CHECK[2]",
                "KS_SAFE_CHECK[3]",
                "TEMPO"
            ]
        );
        assert!(m.chunks(2).all(|c| c[0] == c[1]), "mg and eg together");
        assert!(frozen_mask(&[], &[]).unwrap().iter().all(|f| !f));
        // --fit is the complement: only the named parameters move.
        let fit = frozen_mask(&[], &["KS_SAFE_CHECK".into(), "TEMPO".into()]).unwrap();
        assert_eq!(fit, m.iter().map(|f| !f).collect::<Vec<_>>());
        let e = frozen_mask(&[], &["KING".into()]).unwrap_err().to_string();
        assert!(e.contains("--fit: `KING` is not a parameter name"), "{e}");
        let e = frozen_mask(&["KS_SAFE_CHECK[0]".into()], &[])
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("`KS_SAFE_CHECK[0]` is not a parameter name"),
            "{e}"
        );
    }

    #[test]
    fn data_lines_parse_and_bad_ones_say_why() {
        let l = parse_line("8/8/8/8/8/8/8/K6k w - - 0 1 | -35 | 0.5")
            .unwrap()
            .unwrap();
        assert_eq!((l.result, l.score), (0.5, Some(-35)));
        let e = parse_line("8/8/8/8/8/8/8/K6k w - - 0 1 c9 \"0-1\";")
            .unwrap()
            .unwrap();
        assert_eq!((e.result, e.score), (0.0, None));
        let b = parse_line("8/8/8/8/8/8/8/K6k w - - 0 1 [1.0]")
            .unwrap()
            .unwrap();
        assert_eq!(b.result, 1.0);
        assert!(parse_line("# comment").unwrap().is_none());
        for (bad, says) in [
            (
                "8/8/8/8/8/8/8/K6k w - - 0 1 | 3 | 2-0",
                "unknown result `2-0`",
            ),
            (
                "8/8/8/8/8/8/8/K6k w - - 0 1 c9 \"win\";",
                "unknown result `win`",
            ),
            (
                "8/8/8/8/8/8/8/K6k w - - 0 1 | x | 1.0",
                "`x` is not a score",
            ),
            ("8/8/8/8/8/8/8/K6k w - - 0 1", "no result"),
            ("8/8/8/8 w - - | 1 | 1.0", ""),
            ("a | b", "expected `FEN | score | result`"),
        ] {
            let e = parse_line(bad).unwrap_err();
            assert!(e.contains(says), "{bad}: {e}");
        }
    }

    #[test]
    fn bad_data_names_the_file_and_line() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("d.txt");
        std::fs::write(
            &f,
            "# x\n8/8/8/8/8/8/8/K6k w - - 0 1 | 3 | 1.0\nnonsense | 1 | 1.0\n",
        )
        .unwrap();
        let e = load(&[f], None).unwrap_err().to_string();
        assert!(e.contains("d.txt:3: "), "{e}");
    }

    fn lab_group(l: &str) -> u64 {
        l.len() as u64 * 7919 + l.bytes().map(u64::from).sum::<u64>()
    }

    #[test]
    fn positions_of_a_game_stay_on_one_side_of_the_split() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("g.txt");
        let mut text = String::new();
        let pool = format!(
            "{}/../../data/chess/pools/holdout.epd",
            env!("CARGO_MANIFEST_DIR")
        );
        for (i, l) in std::fs::read_to_string(pool)
            .unwrap()
            .lines()
            .take(2000)
            .enumerate()
        {
            text.push_str(&format!(
                "{} | 0 | 0.5\n",
                l.split(';').next().unwrap().trim()
            ));
            if i % 20 == 19 {
                text.push_str(&format!("# game {} plies 1 mate positions 20\n", i / 20));
            }
        }
        std::fs::write(&f, text).unwrap();
        let (labs, _) = load(&[f], None).unwrap();
        let data = Dataset::build(&labs, 20.0, 2);
        let mut by_game = std::collections::HashMap::new();
        for (lab, h) in labs.iter().zip(&data.holdout) {
            assert_eq!(
                *by_game.entry(lab.group).or_insert(*h),
                *h,
                "game {} split",
                lab.group
            );
        }
        let held = by_game.values().filter(|h| **h).count();
        assert!(
            (5..=40).contains(&held),
            "{held} of {} games held out",
            by_game.len()
        );
    }

    #[test]
    fn the_split_does_not_depend_on_the_order_of_games() {
        // The same 60 datagen games written in two orders (and as two files in the second
        // case) hold out the same positions.
        let d = tempfile::tempdir().unwrap();
        let pool = format!(
            "{}/../../data/chess/pools/holdout.epd",
            env!("CARGO_MANIFEST_DIR")
        );
        let lines: Vec<String> = std::fs::read_to_string(pool)
            .unwrap()
            .lines()
            .take(600)
            .map(|l| l.split(';').next().unwrap().trim().to_owned())
            .collect();
        let block = |g: usize| {
            let mut s = String::new();
            for l in &lines[g * 10..g * 10 + 10] {
                s.push_str(&format!("{l} | 0 | 0.5\n"));
            }
            s.push_str(&format!("# game {g} plies 1 mate positions 10\n"));
            s
        };
        let header = "# actuary datagen v1 nodes=5000 random_plies=4 seed=1 book=b\n";
        let forward: String = (0..60).map(block).collect();
        let backward_a: String = (30..60).rev().map(block).collect();
        let backward_b: String = (0..30).rev().map(block).collect();
        let f = d.path().join("f.txt");
        let (a, b) = (d.path().join("a.txt"), d.path().join("b.txt"));
        std::fs::write(&f, format!("{header}{forward}")).unwrap();
        std::fs::write(&a, format!("{header}{backward_a}")).unwrap();
        std::fs::write(&b, format!("{header}{backward_b}")).unwrap();
        let held = |paths: &[PathBuf]| {
            let (labs, _) = load(paths, None).unwrap();
            let data = Dataset::build(&labs, 25.0, 2);
            let set: std::collections::BTreeSet<u64> = labs
                .iter()
                .zip(&data.holdout)
                .filter(|(_, h)| **h)
                .map(|(l, _)| l.board.hash())
                .collect();
            (labs.len(), set)
        };
        let (n1, h1) = held(&[f]);
        let (n2, h2) = held(&[a, b]);
        assert_eq!(n1, n2);
        assert_eq!(h1, h2);
        assert!(!h1.is_empty() && h1.len() < n1, "{} of {n1}", h1.len());
    }

    /// The first `n` positions of a committed pool, each labelled by `label(index, line)`
    /// with its (result, game group), no score.
    fn pool_labs(name: &str, n: usize, label: impl Fn(usize, &str) -> (f64, u64)) -> Vec<Labelled> {
        let path = format!(
            "{}/../../data/chess/pools/{name}",
            env!("CARGO_MANIFEST_DIR")
        );
        std::fs::read_to_string(path)
            .unwrap()
            .lines()
            .take(n)
            .enumerate()
            .map(|(i, l)| {
                let (result, group) = label(i, l);
                Labelled {
                    board: parse_fen(l.split(';').next().unwrap().trim()).unwrap(),
                    result,
                    score: None,
                    group,
                }
            })
            .collect()
    }

    /// The tuner's float evaluation is the engine's (up to the engine's integer rounding:
    /// the taper's and the king danger's, under 2 cp together).
    #[test]
    fn dataset_eval_matches_the_engine() {
        let labs = pool_labs("holdout.epd", 3000, |_, l| (0.5, lab_group(l)));
        let d = Dataset::build(&labs, 5.0, 2);
        let w: Vec<f64> = VALUES
            .iter()
            .flat_map(|s| [f64::from(s.mg), f64::from(s.eg)])
            .collect();
        for (i, lab) in labs.iter().enumerate() {
            let engine = linear_eval(&lab.board, &trace(&lab.board), &VALUES);
            let white = if lab.board.side_to_move() == Color::White {
                engine
            } else {
                -engine
            };
            let (e, _) = d.eval(i, &w);
            assert!(
                (e - f64::from(white)).abs() < 2.0,
                "{}: {e} vs {white}",
                lab.board
            );
        }
        let held = d.holdout.iter().filter(|h| **h).count();
        assert!((90..=210).contains(&held), "{held} of 3000 held out");
    }

    /// The gradient the tuner follows is the slope of its loss, the king danger's entries
    /// (through its non-linear function) as well as the linear ones: central differences of
    /// the loss agree with it, entry by entry.
    #[test]
    fn the_gradient_is_the_slope_of_the_loss() {
        let labs = pool_labs("calib.epd", 4000, |i, _| ([0.0, 0.5, 1.0][i % 3], i as u64));
        let d = Dataset::build(&labs, 0.0, 1);
        let applied = (0..d.len())
            .filter(|&i| d.dstart[i + 1] > d.dstart[i])
            .count();
        assert!(
            applied > 20,
            "the king danger applied in {applied} positions"
        );
        // Off the integers: at integer weights a danger sum can sit exactly on the kink of
        // the function at 0, where no slope exists. The danger's entries at 30 each, whatever
        // the embedded weights are, so that every sum is on the function's rising part (an
        // endgame sum the fit made negative has no slope to check).
        let w: Vec<f64> = VALUES
            .iter()
            .enumerate()
            .flat_map(|(i, s)| {
                if NAMES[i].starts_with("KS_") {
                    [30.123, 30.123]
                } else {
                    [f64::from(s.mg) + 0.123, f64::from(s.eg) + 0.123]
                }
            })
            .collect();
        let targets = d.result.clone();
        let k = 1.0;
        let loss = |w: &[f64]| {
            let p = pass(&d, w, k, &targets, None, 1);
            p.train_sse / p.train_n as f64
        };
        let grad = pass(&d, &w, k, &targets, None, 1).grad;
        for (name, j) in [
            (
                "KS_ATTACK_UNITS[3] mg",
                2 * (params::id::KS_ATTACK_UNITS + 3),
            ),
            ("KS_ATTACK_UNITS[0] eg", 2 * params::id::KS_ATTACK_UNITS + 1),
            ("KS_SAFE_CHECK[2] mg", 2 * (params::id::KS_SAFE_CHECK + 2)),
            ("KS_BASE mg", 2 * params::id::KS_BASE),
            ("KING_SHELTER[1][1] mg", 2 * (params::id::KING_SHELTER + 9)),
            ("BISHOP_PAIR eg", 2 * params::id::BISHOP_PAIR + 1),
        ] {
            let h = 1e-3;
            let (mut up, mut down) = (w.clone(), w.clone());
            up[j] += h;
            down[j] -= h;
            let slope = (loss(&up) - loss(&down)) / (2.0 * h);
            assert!(grad[j].abs() > 1e-9, "{name}: no gradient ({})", grad[j]);
            assert!(
                (slope - grad[j]).abs() <= 1e-3 * grad[j].abs(),
                "{name}: gradient {} but the loss moves at {slope}",
                grad[j]
            );
        }
    }

    /// On data labelled by a known linear rule, the tuner moves the weights towards it: the
    /// training loss falls and the fitted K is finite.
    #[test]
    fn a_short_run_lowers_the_loss_and_resumes() {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("d.txt");
        let path = format!(
            "{}/../../data/chess/pools/calib.epd",
            env!("CARGO_MANIFEST_DIR")
        );
        // Results from a rule the weights do not know: White wins when it has more rooks'
        // mobility... here simply the side with the bishop pair wins, else a draw.
        let mut text = String::new();
        for l in std::fs::read_to_string(path).unwrap().lines().take(4000) {
            let fen = l.split(';').next().unwrap().trim();
            let b = parse_fen(fen).unwrap();
            let pair = |c: Color| b.colored_pieces(c, Piece::Bishop).len() >= 2;
            let r = match (pair(Color::White), pair(Color::Black)) {
                (true, false) => "1.0",
                (false, true) => "0.0",
                _ => "0.5",
            };
            text.push_str(&format!("{fen} | 0 | {r}\n"));
        }
        std::fs::write(&data, text).unwrap();
        let out = dir.path().join("p.txt");
        let mut a = TuneArgs {
            data: vec![data],
            epochs: 20,
            lambda: 1.0,
            variance_penalty: 0.0,
            learning_rate: 2.0,
            holdout: 10.0,
            patience: 100,
            limit: None,
            from: None,
            threads: 2,
            out: out.clone(),
            resume: false,
            freeze: Vec::new(),
            fit: Vec::new(),
            min_support: 0,
            l2: 0.0,
        };
        tune(&a).unwrap();
        let st: State = serde_json::from_slice(&std::fs::read(state_path(&out)).unwrap()).unwrap();
        assert_eq!(st.epoch, 20);
        assert!(st.k.is_finite() && st.k > 0.0);
        let (first, last) = (st.history[0].1, st.history[19].1);
        assert!(last < first, "training loss {first} -> {last}");
        // The bishop pair weight grew.
        let tuned = params::parse(&std::fs::read_to_string(&out).unwrap(), "p").unwrap();
        let id = params::id::BISHOP_PAIR;
        assert!(
            tuned[id].mg + tuned[id].eg > VALUES[id].mg + VALUES[id].eg,
            "{:?} -> {:?}",
            VALUES[id],
            tuned[id]
        );
        // Resume to 30 epochs: the history continues where it stopped.
        a.epochs = 30;
        a.resume = true;
        tune(&a).unwrap();
        let st: State = serde_json::from_slice(&std::fs::read(state_path(&out)).unwrap()).unwrap();
        assert_eq!(st.epoch, 30);
        assert_eq!(st.history.len(), 30);
        // A strong variance penalty narrows what the cheap tiers miss, and the summary and
        // the file say by how much.
        let out_v = dir.path().join("v.txt");
        let v = TuneArgs {
            out: out_v.clone(),
            variance_penalty: 1.0,
            resume: false,
            freeze: Vec::new(),
            fit: Vec::new(),
            min_support: 0,
            l2: 0.0,
            epochs: 20,
            ..a.clone()
        };
        // --freeze keeps a parameter exactly (here the one the data is about), and an L2
        // pull keeps every weight nearer its start than the free fit does.
        let moved = |file: &Path| -> (Vec<S>, f64) {
            let w = params::parse(&std::fs::read_to_string(file).unwrap(), "p").unwrap();
            let d = w
                .iter()
                .zip(VALUES.iter())
                .map(|(x, y)| f64::from((x.mg - y.mg).abs() + (x.eg - y.eg).abs()))
                .sum();
            (w, d)
        };
        let out_f = dir.path().join("f.txt");
        tune(&TuneArgs {
            out: out_f.clone(),
            resume: false,
            epochs: 20,
            freeze: vec!["BISHOP_PAIR".into()],
            ..a.clone()
        })
        .unwrap();
        let (frozen, _) = moved(&out_f);
        assert_eq!(frozen[id], VALUES[id]);
        assert!(
            std::fs::read_to_string(&out_f)
                .unwrap()
                .contains("--freeze BISHOP_PAIR")
        );
        let out_free = dir.path().join("free.txt");
        let out_l2 = dir.path().join("l2.txt");
        for (o, l2) in [(&out_free, 0.0), (&out_l2, 100.0)] {
            tune(&TuneArgs {
                out: o.clone(),
                resume: false,
                epochs: 20,
                l2,
                ..a.clone()
            })
            .unwrap();
        }
        let (_, free) = moved(&out_free);
        let (_, pulled) = moved(&out_l2);
        assert!(pulled < free, "L2 {pulled} cp moved, free {free}");
        let summary = tune(&v).unwrap();
        let num = |s: &str, key: &str| -> (f64, f64) {
            let i = s.find(key).unwrap() + key.len();
            let w: Vec<&str> = s[i..].split_whitespace().collect();
            (
                w[0].parse().unwrap(),
                w[2].trim_end_matches(',').parse().unwrap(),
            )
        };
        let (before, after) = num(&summary, "super-lazy ");
        assert!(after < before, "{summary}");
        // The best weights are those of the least penalised hold-out objective, and with this
        // penalty that is not the start (which the hold-out loss alone could pick).
        let st: State =
            serde_json::from_slice(&std::fs::read(state_path(&out_v)).unwrap()).unwrap();
        let objective: Vec<f64> = st
            .history
            .iter()
            .zip(&st.holdout_penalty)
            .map(|(h, p)| h.2 + p)
            .collect();
        assert_eq!(objective.len(), 20);
        assert!(st.holdout_penalty.iter().all(|p| *p > 0.0));
        let argmin = (0..20)
            .min_by(|&i, &j| objective[i].total_cmp(&objective[j]))
            .unwrap();
        assert_eq!(st.best_epoch as usize, argmin);
        assert!(objective[argmin] < objective[0], "{objective:?}");
        assert!(
            std::fs::read_to_string(&out_v)
                .unwrap()
                .contains("residual spread")
        );
        // Other settings refuse the state.
        a.lambda = 0.5;
        let e = tune(&a).unwrap_err().to_string();
        assert!(e.contains("made by another run"), "{e}");
    }
}
