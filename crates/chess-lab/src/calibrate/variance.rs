//! `calibrate variance`: the seed's eval-variance side study. Every pruning margin is compared
//! against the static eval, so the eval's noise is part of every surprise rate. Two noise
//! measures per material bucket, set against the surprise rates the `surprise` reports give
//! per bucket:
//!
//! * **tier disagreement**, position held fixed: the spread of `full − lazy` and
//!   `full − super-lazy` (only the tier varies, so this is the eval disagreeing with itself);
//! * **sibling spread**: the standard deviation of the full eval over the position's quiet
//!   children (a node where every move evaluates alike is where "tactics can equalize
//!   anything"; it mixes real positional differences with noise, so it is read separately).
//!
//! Output: a Markdown table, JSON, and an SVG scatter of surprise rate against tier
//! disagreement (one point per mechanism and bucket).

use crate::data::pool::read_pool;
use chess::board::{Board, Move, is_tactical};
use chess::eval::{Tier, eval_tier, material_bucket};
use chess::search::prune::MATERIAL_BUCKETS;
use evidence::figure::{Frame, text};
use serde::Serialize;
use std::fmt::Write as _;
use std::path::PathBuf;

/// `actuary calibrate variance`.
#[derive(Debug, clap::Args)]
pub struct VarianceArgs {
    /// Pool of positions (EPD/FEN per line).
    #[arg(long, value_name = "FILE")]
    pub pool: PathBuf,
    /// Use only the first N positions.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub limit: Option<u64>,
    /// Directory of `calibrate surprise` reports (`<mechanism>.json`) to set against.
    #[arg(long, value_name = "DIR")]
    pub surprise: Option<PathBuf>,
    /// Directory for `variance.md`, `variance.json` and `variance.svg` [default: stdout].
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
}

/// Noise measures of one material bucket.
#[derive(Debug, Clone, Default, Serialize)]
pub struct BucketNoise {
    pub bucket: usize,
    pub positions: u64,
    /// Standard deviation of `full − lazy` and `full − super-lazy` (cp).
    pub sd_full_minus_lazy: f64,
    pub sd_full_minus_superlazy: f64,
    /// Mean over positions of the sibling-eval standard deviation (cp), positions with at
    /// least two quiet moves.
    pub mean_sibling_sd: f64,
    /// Surprise rate per mechanism in this bucket (from the reports), with its sample size.
    pub surprise: Vec<(String, f64, u64)>,
}

#[derive(Default, Clone, Copy)]
struct Moments {
    n: f64,
    sum: f64,
    sq: f64,
}

impl Moments {
    fn add(&mut self, x: f64) {
        self.n += 1.0;
        self.sum += x;
        self.sq += x * x;
    }
    fn sd(&self) -> f64 {
        if self.n < 2.0 {
            return 0.0;
        }
        let m = self.sum / self.n;
        ((self.sq / self.n - m * m).max(0.0) * self.n / (self.n - 1.0)).sqrt()
    }
    fn mean(&self) -> f64 {
        self.sum / self.n.max(1.0)
    }
}

/// Sibling-eval standard deviation over the quiet children of `board` (mover's view).
pub fn sibling_sd(board: &Board) -> Option<f64> {
    let mut moves: Vec<Move> = Vec::new();
    board.generate_moves(|ms| {
        moves.extend(ms);
        false
    });
    let mut m = Moments::default();
    for mv in moves {
        if is_tactical(board, mv) {
            continue;
        }
        let mut child = board.clone();
        child.play_unchecked(mv);
        m.add(-eval_tier(&child, Tier::Full) as f64);
    }
    (m.n >= 2.0).then(|| m.sd())
}

/// The noise table of a pool.
pub fn bucket_noise(boards: &[Board]) -> Vec<BucketNoise> {
    let mut lazy = [Moments::default(); MATERIAL_BUCKETS];
    let mut sup = [Moments::default(); MATERIAL_BUCKETS];
    let mut sib = [Moments::default(); MATERIAL_BUCKETS];
    for b in boards {
        let k = material_bucket(b);
        let full = eval_tier(b, Tier::Full) as f64;
        lazy[k].add(full - eval_tier(b, Tier::Lazy) as f64);
        sup[k].add(full - eval_tier(b, Tier::SuperLazy) as f64);
        if let Some(sd) = sibling_sd(b) {
            sib[k].add(sd);
        }
    }
    (0..MATERIAL_BUCKETS)
        .map(|k| BucketNoise {
            bucket: k,
            positions: lazy[k].n as u64,
            sd_full_minus_lazy: lazy[k].sd(),
            sd_full_minus_superlazy: sup[k].sd(),
            mean_sibling_sd: sib[k].mean(),
            surprise: Vec::new(),
        })
        .collect()
}

/// Pearson correlation of two equally long series (0 when either is constant).
pub fn pearson(x: &[f64], y: &[f64]) -> f64 {
    let n = x.len() as f64;
    if n < 2.0 {
        return 0.0;
    }
    let (mx, my) = (x.iter().sum::<f64>() / n, y.iter().sum::<f64>() / n);
    let (mut sxy, mut sxx, mut syy) = (0.0, 0.0, 0.0);
    for (a, b) in x.iter().zip(y) {
        sxy += (a - mx) * (b - my);
        sxx += (a - mx) * (a - mx);
        syy += (b - my) * (b - my);
    }
    if sxx == 0.0 || syy == 0.0 {
        0.0
    } else {
        sxy / (sxx * syy).sqrt()
    }
}

const COLOURS: [&str; 8] = [
    "#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf",
];

/// Scatter: surprise rate (y, %) against `sd(full − lazy)` (x, cp), one colour per mechanism.
pub fn scatter_svg(rows: &[BucketNoise], mechanisms: &[String]) -> String {
    let f = Frame {
        width: 720.0,
        height: 440.0,
        left: 70.0,
        right: 170.0,
        top: 40.0,
        bottom: 50.0,
    };
    let p = f.plot();
    let mut o = f.begin(
        "Surprise rate by material bucket against tier disagreement sd(full - lazy)",
        24.0,
    );
    let pts: Vec<(usize, f64, f64)> = rows
        .iter()
        .flat_map(|r| {
            r.surprise
                .iter()
                .filter(|s| s.2 > 0)
                .map(move |(m, rate, _)| {
                    let i = mechanisms.iter().position(|x| x == m).unwrap_or(0);
                    (i, r.sd_full_minus_lazy, 100.0 * rate)
                })
        })
        .collect();
    let xmax = pts.iter().map(|p| p.1).fold(1.0f64, f64::max) * 1.05;
    let ymax = pts.iter().map(|p| p.2).fold(0.1f64, f64::max) * 1.05;
    let _ = writeln!(
        o,
        r##"<rect x="{}" y="{}" width="{}" height="{}" fill="none" stroke="#888"/>"##,
        p.x, p.y, p.width, p.height
    );
    for t in 0..=4 {
        let fx = t as f64 / 4.0;
        text(
            &mut o,
            p.x + fx * p.width,
            p.bottom() + 16.0,
            "middle",
            "#333",
            &format!("{:.0}", fx * xmax),
        );
        text(
            &mut o,
            p.x - 6.0,
            p.bottom() - fx * p.height + 4.0,
            "end",
            "#333",
            &format!("{:.2}%", fx * ymax),
        );
    }
    text(
        &mut o,
        p.x + p.width / 2.0,
        p.bottom() + 36.0,
        "middle",
        "#333",
        "sd(full - lazy), cp, per material bucket",
    );
    for (i, x, y) in &pts {
        let _ = writeln!(
            o,
            r#"<circle cx="{:.2}" cy="{:.2}" r="4" fill="{}"/>"#,
            p.x + x / xmax * p.width,
            p.bottom() - y / ymax * p.height,
            COLOURS[i % COLOURS.len()]
        );
    }
    for (i, m) in mechanisms.iter().enumerate() {
        let y = p.y + 14.0 + 18.0 * i as f64;
        let _ = writeln!(
            o,
            r#"<circle cx="{:.2}" cy="{:.2}" r="4" fill="{}"/>"#,
            p.right() + 16.0,
            y - 4.0,
            COLOURS[i % COLOURS.len()]
        );
        text(&mut o, p.right() + 26.0, y, "start", "#333", m);
    }
    f.end(o)
}

impl VarianceArgs {
    pub fn run(&self) -> Result<(), crate::calibrate::probe::CollectError> {
        if let Some(dir) = self.surprise.as_ref().filter(|d| !d.is_dir()) {
            return Err(crate::calibrate::probe::CollectError::Input(format!(
                "--surprise {}: not a directory (the --out of `calibrate surprise`)",
                dir.display()
            )));
        }
        let pool = read_pool(&self.pool, self.limit.map(|l| l as usize))?;
        let boards: Vec<Board> = pool.into_iter().map(|p| p.board).collect();
        let mut rows = bucket_noise(&boards);
        let mut mechanisms = Vec::new();
        if let Some(dir) = &self.surprise {
            for m in chess::search::prune::Mechanism::ALL {
                let path = dir.join(format!("{}.json", m.name()));
                // A surprise report is a small JSON summary (kilobytes); 64 MB is far past any
                // real one. A mechanism without a report is skipped, as before; a report that
                // is not a regular file or is too large is an error, not silently skipped.
                let text = match fileio::read_to_string(&path, 64 << 20) {
                    Ok(text) => text,
                    Err(fileio::FileError::Io { .. }) => continue,
                    Err(e) => {
                        return Err(crate::calibrate::probe::CollectError::Input(e.to_string()));
                    }
                };
                let v: serde_json::Value = serde_json::from_str(&text).map_err(|e| {
                    crate::calibrate::probe::CollectError::Input(format!("{}: {e}", path.display()))
                })?;
                mechanisms.push(m.name().to_string());
                for r in v["by_material"].as_array().into_iter().flatten() {
                    let (Some(b), Some(rate), Some(n)) = (
                        r["material"].as_u64(),
                        r["rate"].as_f64(),
                        r["fired"].as_u64(),
                    ) else {
                        continue;
                    };
                    if let Some(row) = rows.get_mut(b as usize) {
                        row.surprise.push((m.name().to_string(), rate, n));
                    }
                }
            }
            if mechanisms.is_empty() {
                return Err(crate::calibrate::probe::CollectError::Input(format!(
                    "--surprise {}: no <mechanism>.json of `calibrate surprise` in it",
                    dir.display()
                )));
            }
        }
        let mut md = format!(
            "# Eval variance against surprise rates\n\n`{}`\n\nPool `{}` ({} positions). Noise per material bucket (both armies / 8): the spread of\nwhat the cheap tiers miss (position held fixed) and the mean spread of the full eval over a\nposition's quiet children. Surprise rates from `{}`.\n\n",
            std::env::args().collect::<Vec<_>>().join(" "),
            self.pool.display(),
            boards.len(),
            self.surprise
                .as_ref()
                .map_or("(none given)".into(), |d| d.display().to_string())
        );
        md.push_str("| bucket | positions | sd(full−lazy) | sd(full−super-lazy) | sibling sd |");
        for m in &mechanisms {
            let _ = write!(md, " {m} |");
        }
        md.push_str("\n|---:|---:|---:|---:|---:|");
        for _ in &mechanisms {
            md.push_str("---:|");
        }
        md.push('\n');
        for r in &rows {
            let _ = write!(
                md,
                "| {} | {} | {:.1} | {:.1} | {:.1} |",
                r.bucket,
                r.positions,
                r.sd_full_minus_lazy,
                r.sd_full_minus_superlazy,
                r.mean_sibling_sd
            );
            for m in &mechanisms {
                let cell = r
                    .surprise
                    .iter()
                    .find(|s| &s.0 == m)
                    .map_or("–".to_string(), |s| {
                        format!("{:.3}% (n {})", 100.0 * s.1, s.2)
                    });
                let _ = write!(md, " {cell} |");
            }
            md.push('\n');
        }
        if !mechanisms.is_empty() {
            md.push_str("\nPearson correlation across buckets (buckets with surprises measured):\n\n| mechanism | vs sd(full−lazy) | vs sibling sd |\n|---|---:|---:|\n");
            for m in &mechanisms {
                let (mut a, mut b, mut y) = (Vec::new(), Vec::new(), Vec::new());
                for r in &rows {
                    if let Some(s) = r.surprise.iter().find(|s| &s.0 == m && s.2 > 0) {
                        a.push(r.sd_full_minus_lazy);
                        b.push(r.mean_sibling_sd);
                        y.push(s.1);
                    }
                }
                let _ = writeln!(
                    md,
                    "| {m} | {:+.2} | {:+.2} |",
                    pearson(&a, &y),
                    pearson(&b, &y)
                );
            }
        }
        match &self.out {
            None => print!("{md}"),
            Some(dir) => {
                std::fs::create_dir_all(dir).map_err(|source| {
                    crate::calibrate::probe::CollectError::Dir {
                        path: dir.clone(),
                        source,
                    }
                })?;
                evidence::io::atomic_write(&dir.join("variance.md"), md.as_bytes())?;
                let json = serde_json::json!({
                    "format": "actuary-variance v1",
                    "pool": self.pool.display().to_string(),
                    "positions": boards.len(),
                    "buckets": rows,
                });
                evidence::io::atomic_write(
                    &dir.join("variance.json"),
                    serde_json::to_string_pretty(&json)
                        .expect("json")
                        .as_bytes(),
                )?;
                evidence::io::atomic_write(
                    &dir.join("variance.svg"),
                    scatter_svg(&rows, &mechanisms).as_bytes(),
                )?;
                print!("{md}");
                eprintln!("wrote {}/variance.{{md,json,svg}}", dir.display());
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pearson_and_moments() {
        assert!((pearson(&[1.0, 2.0, 3.0], &[2.0, 4.0, 6.0]) - 1.0).abs() < 1e-12);
        assert!((pearson(&[1.0, 2.0, 3.0], &[3.0, 2.0, 1.0]) + 1.0).abs() < 1e-12);
        assert_eq!(pearson(&[1.0, 1.0], &[2.0, 3.0]), 0.0);
        let mut m = Moments::default();
        for x in [2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0] {
            m.add(x);
        }
        // Sample sd of this classic series: sqrt(32/7).
        assert!((m.sd() - (32.0f64 / 7.0).sqrt()).abs() < 1e-12);
    }

    #[test]
    fn sibling_spread_sees_a_hanging_choice() {
        // Quiet moves of a queen that can step into a pawn's capture (big spread) vs a king
        // shuffling in a bare ending (small spread).
        let sharp: Board = "4k3/8/4p3/8/8/8/8/3QK3 w - - 0 1".parse().unwrap();
        let dull: Board = "4k3/8/8/8/8/8/8/4K3 w - - 0 1".parse().unwrap();
        let (a, b) = (sibling_sd(&sharp).unwrap(), sibling_sd(&dull).unwrap());
        assert!(a > 5.0 * b.max(1.0), "{a} vs {b}");
        let rows = bucket_noise(&[sharp, dull]);
        assert_eq!(rows.iter().map(|r| r.positions).sum::<u64>(), 2);
    }
}
