//! Streaming histograms that merge, persist every raw bin, and answer any percentile.
//!
//! Why raw bins and not a running percentile: a calibration run is expensive, and the
//! question asked of it changes (p98 today, p95 tomorrow). Keeping every bin lets any
//! percentile be read back later without re-running the searches.

use std::fmt::Write as _;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::io::{EvidenceError, atomic_write};

/// How the range `[lo, hi)` is cut into bins. Values outside go to underflow / overflow.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Binning {
    /// `bins` bins of equal width `(hi − lo)/bins`.
    Linear { lo: f64, hi: f64, bins: usize },
    /// `bins` bins of equal width in `ln x` (requires `0 < lo < hi`): for quantities that
    /// span orders of magnitude (node counts, work, times).
    Log { lo: f64, hi: f64, bins: usize },
}

impl Binning {
    fn validate(&self) -> Result<(), EvidenceError> {
        let (lo, hi, bins, log) = match *self {
            Binning::Linear { lo, hi, bins } => (lo, hi, bins, false),
            Binning::Log { lo, hi, bins } => (lo, hi, bins, true),
        };
        if !(lo.is_finite() && hi.is_finite() && lo < hi) || bins == 0 {
            return Err(EvidenceError::invalid(format!(
                "histogram range must be finite with lo < hi and bins > 0 (got {lo}..{hi}, {bins} bins)"
            )));
        }
        if log && lo <= 0.0 {
            return Err(EvidenceError::invalid(format!(
                "log-spaced bins need lo > 0 (got {lo})"
            )));
        }
        Ok(())
    }

    /// Number of in-range bins.
    pub fn bins(&self) -> usize {
        match *self {
            Binning::Linear { bins, .. } | Binning::Log { bins, .. } => bins,
        }
    }

    /// Lower edge of bin `i` (`i == bins` gives the upper edge of the last bin).
    pub fn edge(&self, i: usize) -> f64 {
        match *self {
            Binning::Linear { lo, hi, bins } => {
                if i == bins {
                    hi
                } else {
                    lo + (hi - lo) * (i as f64) / (bins as f64)
                }
            }
            Binning::Log { lo, hi, bins } => {
                if i == bins {
                    hi
                } else {
                    (lo.ln() + (hi.ln() - lo.ln()) * (i as f64) / (bins as f64)).exp()
                }
            }
        }
    }

    /// Which slot a value falls in: `None` for underflow, `Some(bins)` for overflow.
    fn slot(&self, x: f64) -> Option<usize> {
        let (lo, hi, bins) = match *self {
            Binning::Linear { lo, hi, bins } | Binning::Log { lo, hi, bins } => (lo, hi, bins),
        };
        if x < lo {
            return None;
        }
        if x >= hi {
            return Some(bins);
        }
        let frac = match *self {
            Binning::Linear { .. } => (x - lo) / (hi - lo),
            Binning::Log { .. } => (x.ln() - lo.ln()) / (hi.ln() - lo.ln()),
        };
        let mut i = ((frac * bins as f64) as usize).min(bins - 1);
        // Guard the edges against rounding so that edge(i) <= x < edge(i+1) always holds.
        while i > 0 && x < self.edge(i) {
            i -= 1;
        }
        while i + 1 < bins && x >= self.edge(i + 1) {
            i += 1;
        }
        Some(i)
    }
}

/// A histogram of f64 observations. Merging two histograms with the same binning is exact
/// (counts add, min/max combine), so a calibration can run on many threads or many
/// machines and be summed afterwards.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Histogram {
    binning: Binning,
    counts: Vec<u64>,
    underflow: u64,
    overflow: u64,
    total: u64,
    /// Smallest and largest value seen (NaN-free; `None` while empty). They bound the
    /// underflow and overflow slots when a percentile lands there.
    min: Option<f64>,
    max: Option<f64>,
}

impl Histogram {
    /// An empty histogram. Errors on an invalid range (lo ≥ hi, no bins, log with lo ≤ 0).
    pub fn new(binning: Binning) -> Result<Self, EvidenceError> {
        binning.validate()?;
        Ok(Self {
            binning,
            counts: vec![0; binning.bins()],
            underflow: 0,
            overflow: 0,
            total: 0,
            min: None,
            max: None,
        })
    }

    /// Integer-valued data (centipawns, counts): one bin per integer in `[lo, hi)`, so the
    /// percentiles are those of the raw data up to the interpolation inside a unit bin.
    pub fn integers(lo: i64, hi: i64) -> Result<Self, EvidenceError> {
        let bins = usize::try_from(hi - lo)
            .map_err(|_| EvidenceError::invalid("integer histogram needs lo < hi"))?;
        Self::new(Binning::Linear {
            lo: lo as f64,
            hi: hi as f64,
            bins,
        })
    }

    pub fn binning(&self) -> Binning {
        self.binning
    }
    pub fn total(&self) -> u64 {
        self.total
    }
    pub fn underflow(&self) -> u64 {
        self.underflow
    }
    pub fn overflow(&self) -> u64 {
        self.overflow
    }
    /// The raw in-range bin counts.
    pub fn counts(&self) -> &[u64] {
        &self.counts
    }
    pub fn min(&self) -> Option<f64> {
        self.min
    }
    pub fn max(&self) -> Option<f64> {
        self.max
    }

    /// Record one observation. NaN is ignored (it has no rank).
    #[inline]
    pub fn add(&mut self, x: f64) {
        self.add_n(x, 1);
    }

    /// Record `n` observations of the same value.
    pub fn add_n(&mut self, x: f64, n: u64) {
        if x.is_nan() || n == 0 {
            return;
        }
        match self.binning.slot(x) {
            None => self.underflow += n,
            Some(i) if i == self.counts.len() => self.overflow += n,
            Some(i) => self.counts[i] += n,
        }
        self.total += n;
        self.min = Some(self.min.map_or(x, |m| m.min(x)));
        self.max = Some(self.max.map_or(x, |m| m.max(x)));
    }

    /// Add another histogram's counts into this one. Errors if the binnings differ.
    pub fn merge(&mut self, other: &Histogram) -> Result<(), EvidenceError> {
        if self.binning != other.binning {
            return Err(EvidenceError::invalid(format!(
                "cannot merge histograms with different binning ({:?} vs {:?})",
                self.binning, other.binning
            )));
        }
        for (a, b) in self.counts.iter_mut().zip(&other.counts) {
            *a += b;
        }
        self.underflow += other.underflow;
        self.overflow += other.overflow;
        self.total += other.total;
        self.min = match (self.min, other.min) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        self.max = match (self.max, other.max) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        };
        Ok(())
    }

    /// The `p`-th percentile (0 ≤ p ≤ 100), `None` if empty.
    ///
    /// The target rank is `p/100 · total`; the bin holding that rank is found by walking the
    /// cumulative counts, and the value is interpolated linearly inside that bin:
    /// `edge_lo + (rank − below)/count · (edge_hi − edge_lo)`. The underflow slot spans
    /// `[min, lo)`, overflow `[hi, max]`, and the result is clamped to `[min, max]`, so the
    /// estimate is never outside the data. The error against the exact percentile of the raw
    /// data is at most one bin width.
    pub fn percentile(&self, p: f64) -> Option<f64> {
        if self.total == 0 || !(0.0..=100.0).contains(&p) {
            return None;
        }
        let (min, max) = (self.min?, self.max?);
        let rank = p / 100.0 * self.total as f64;
        let bins = self.counts.len();
        let mut below = 0.0;
        // Slots in order: underflow, bins 0..bins, overflow.
        for slot in 0..bins + 2 {
            let (count, lo, hi) = match slot {
                0 => (self.underflow, min, self.binning.edge(0)),
                s if s == bins + 1 => (self.overflow, self.binning.edge(bins), max),
                s => (
                    self.counts[s - 1],
                    self.binning.edge(s - 1),
                    self.binning.edge(s),
                ),
            };
            if count == 0 {
                continue;
            }
            let c = count as f64;
            if below + c >= rank {
                let frac = ((rank - below) / c).clamp(0.0, 1.0);
                let (lo, hi) = (lo.max(min), hi.min(max));
                return Some((lo + frac * (hi - lo)).clamp(min, max));
            }
            below += c;
        }
        Some(max)
    }

    /// The text form: a header, then one line for **every** bin (zeros included) so the file
    /// is the histogram, not a summary of it.
    pub fn to_text(&self) -> String {
        let mut s = String::new();
        s.push_str("# evidence-histogram v1\n");
        let (kind, lo, hi, bins) = match self.binning {
            Binning::Linear { lo, hi, bins } => ("linear", lo, hi, bins),
            Binning::Log { lo, hi, bins } => ("log", lo, hi, bins),
        };
        let _ = writeln!(s, "binning {kind} {lo:?} {hi:?} {bins}");
        let _ = writeln!(s, "total {}", self.total);
        let _ = writeln!(
            s,
            "min {}",
            self.min.map_or("none".into(), |v| format!("{v:?}"))
        );
        let _ = writeln!(
            s,
            "max {}",
            self.max.map_or("none".into(), |v| format!("{v:?}"))
        );
        let _ = writeln!(s, "underflow {}", self.underflow);
        let _ = writeln!(s, "overflow {}", self.overflow);
        s.push_str("# bin lo hi count\n");
        for (i, c) in self.counts.iter().enumerate() {
            let _ = writeln!(
                s,
                "{i} {:?} {:?} {c}",
                self.binning.edge(i),
                self.binning.edge(i + 1)
            );
        }
        s
    }

    /// Parse the text form written by [`Histogram::to_text`]. Errors name the line.
    pub fn from_text(text: &str) -> Result<Self, EvidenceError> {
        let mut lines = text
            .lines()
            .enumerate()
            .filter(|(_, l)| !l.trim().is_empty() && !l.starts_with('#'));
        let mut next = |key: &str| -> Result<(usize, Vec<String>), EvidenceError> {
            let (no, line) = lines
                .next()
                .ok_or_else(|| EvidenceError::parse(0, format!("missing `{key}` line")))?;
            let parts: Vec<String> = line.split_whitespace().map(str::to_owned).collect();
            if parts.first().map(String::as_str) != Some(key) {
                return Err(EvidenceError::parse(
                    no + 1,
                    format!("expected `{key} ...`, found `{line}`"),
                ));
            }
            Ok((no + 1, parts))
        };
        let num = |no: usize, s: &str| -> Result<f64, EvidenceError> {
            s.parse::<f64>()
                .map_err(|_| EvidenceError::parse(no, format!("`{s}` is not a number")))
        };
        let int = |no: usize, s: &str| -> Result<u64, EvidenceError> {
            s.parse::<u64>()
                .map_err(|_| EvidenceError::parse(no, format!("`{s}` is not a count")))
        };
        let (no, b) = next("binning")?;
        if b.len() != 5 {
            return Err(EvidenceError::parse(no, "binning needs: kind lo hi bins"));
        }
        let (lo, hi) = (num(no, &b[2])?, num(no, &b[3])?);
        let bins = int(no, &b[4])? as usize;
        let binning = match b[1].as_str() {
            "linear" => Binning::Linear { lo, hi, bins },
            "log" => Binning::Log { lo, hi, bins },
            k => return Err(EvidenceError::parse(no, format!("unknown binning `{k}`"))),
        };
        let mut h = Histogram::new(binning)?;
        let (no, t) = next("total")?;
        let total = int(no, t.get(1).map_or("", |s| s))?;
        let opt = |no: usize, v: &[String]| -> Result<Option<f64>, EvidenceError> {
            match v.get(1).map(String::as_str) {
                Some("none") => Ok(None),
                Some(s) => num(no, s).map(Some),
                None => Err(EvidenceError::parse(no, "missing value")),
            }
        };
        let (no, m) = next("min")?;
        h.min = opt(no, &m)?;
        let (no, m) = next("max")?;
        h.max = opt(no, &m)?;
        let (no, u) = next("underflow")?;
        h.underflow = int(no, u.get(1).map_or("", |s| s))?;
        let (no, o) = next("overflow")?;
        h.overflow = int(no, o.get(1).map_or("", |s| s))?;
        for i in 0..bins {
            let (no, parts) = next(&i.to_string())?;
            if parts.len() != 4 {
                return Err(EvidenceError::parse(
                    no,
                    "bin line needs: index lo hi count",
                ));
            }
            h.counts[i] = int(no, &parts[3])?;
        }
        let sum: u64 = h.counts.iter().sum::<u64>() + h.underflow + h.overflow;
        if sum != total {
            return Err(EvidenceError::invalid(format!(
                "histogram file is inconsistent: bins sum to {sum} but total says {total}"
            )));
        }
        h.total = total;
        Ok(h)
    }

    /// Write the text form atomically (temporary file, then rename): a crash never leaves a
    /// half-written histogram behind.
    pub fn save(&self, path: &Path) -> Result<(), EvidenceError> {
        atomic_write(path, self.to_text().as_bytes())
    }

    /// Read a histogram saved by [`Histogram::save`] (a regular file of at most 64 MB: one
    /// line of some 50 bytes a bin, and the histograms in use have thousands of bins, not a
    /// million).
    pub fn load(path: &Path) -> Result<Self, EvidenceError> {
        const MAX_HISTOGRAM_BYTES: u64 = 64 << 20;
        let text = fileio::read_to_string(path, MAX_HISTOGRAM_BYTES)
            .map_err(|e| EvidenceError::io(path, e.into_io()))?;
        Self::from_text(&text).map_err(|e| e.in_file(path))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Exact percentile of raw data by the same rank convention (nearest rank, for checking
    /// that the histogram is within one bin width).
    fn exact_rank(sorted: &[f64], p: f64) -> f64 {
        let rank = (p / 100.0 * sorted.len() as f64).ceil().max(1.0) as usize;
        sorted[rank - 1]
    }

    #[test]
    fn integer_percentiles_match_sorted_data() {
        let data: Vec<f64> = (0..1000)
            .map(|i| ((i * 7919) % 401) as f64 - 200.0)
            .collect();
        let mut h = Histogram::integers(-300, 300).unwrap();
        data.iter().for_each(|&x| h.add(x));
        let mut sorted = data.clone();
        sorted.sort_by(f64::total_cmp);
        for p in [1.0, 2.0, 5.0, 25.0, 50.0, 75.0, 95.0, 98.0, 99.0] {
            let got = h.percentile(p).unwrap();
            let want = exact_rank(&sorted, p);
            // the value lies in the unit bin [want, want+1)
            assert!(
                got >= want - 1e-9 && got <= want + 1.0,
                "p{p}: got {got} want {want}"
            );
        }
        assert_eq!(h.percentile(0.0), Some(-200.0));
        assert_eq!(h.percentile(100.0), Some(200.0));
    }

    #[test]
    fn interpolates_inside_a_bin() {
        // 10 values all in bin [0, 10): p50 is halfway through the bin's mass.
        let mut h = Histogram::new(Binning::Linear {
            lo: 0.0,
            hi: 10.0,
            bins: 1,
        })
        .unwrap();
        for _ in 0..10 {
            h.add(5.0);
        }
        // clamped to [min, max] = [5, 5]
        assert_eq!(h.percentile(50.0), Some(5.0));
        let mut h = Histogram::new(Binning::Linear {
            lo: 0.0,
            hi: 10.0,
            bins: 1,
        })
        .unwrap();
        h.add(0.0);
        h.add(9.0);
        // rank 1 of 2 in a bin spanning [0, 9] after clamping → 4.5
        assert_eq!(h.percentile(50.0), Some(4.5));
    }

    #[test]
    fn log_bins_edges_and_slots() {
        let b = Binning::Log {
            lo: 1.0,
            hi: 1000.0,
            bins: 3,
        };
        assert!((b.edge(1) - 10.0).abs() < 1e-9);
        assert!((b.edge(2) - 100.0).abs() < 1e-9);
        let mut h = Histogram::new(b).unwrap();
        for x in [0.5, 1.0, 9.99, 10.0, 500.0, 1000.0, 5000.0] {
            h.add(x);
        }
        assert_eq!(h.counts(), &[2, 1, 1]);
        assert_eq!((h.underflow(), h.overflow()), (1, 2));
    }

    #[test]
    fn text_round_trip_and_errors() {
        let mut h = Histogram::new(Binning::Log {
            lo: 0.1,
            hi: 1e6,
            bins: 40,
        })
        .unwrap();
        for i in 0..500 {
            h.add(1.37f64.powi(i % 60) * 0.05);
        }
        let text = h.to_text();
        assert_eq!(Histogram::from_text(&text).unwrap(), h);
        let broken = text.replace("total 500", "total 499");
        assert!(Histogram::from_text(&broken).is_err());
        let truncated: String = text.lines().take(20).collect::<Vec<_>>().join("\n");
        let err = Histogram::from_text(&truncated).unwrap_err().to_string();
        assert!(err.contains("missing"), "{err}");
    }

    #[test]
    fn save_and_load() {
        let dir = std::env::temp_dir().join(format!("evidence-hist-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("h.txt");
        let mut h = Histogram::integers(-5, 5).unwrap();
        h.add(-7.0);
        h.add(3.0);
        h.save(&path).unwrap();
        assert_eq!(Histogram::load(&path).unwrap(), h);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn merge_rejects_other_binning() {
        let mut a = Histogram::integers(0, 10).unwrap();
        let b = Histogram::integers(0, 11).unwrap();
        assert!(a.merge(&b).is_err());
    }

    fn hist_of(xs: &[f64]) -> Histogram {
        let mut h = Histogram::new(Binning::Linear {
            lo: -50.0,
            hi: 50.0,
            bins: 37,
        })
        .unwrap();
        xs.iter().for_each(|&x| h.add(x));
        h
    }

    proptest! {
        #[test]
        fn merge_is_associative_and_equals_one_pass(
            a in proptest::collection::vec(-80.0f64..80.0, 0..50),
            b in proptest::collection::vec(-80.0f64..80.0, 0..50),
            c in proptest::collection::vec(-80.0f64..80.0, 0..50),
        ) {
            let (ha, hb, hc) = (hist_of(&a), hist_of(&b), hist_of(&c));
            let mut left = ha.clone();
            left.merge(&hb).unwrap();
            left.merge(&hc).unwrap();
            let mut bc = hb.clone();
            bc.merge(&hc).unwrap();
            let mut right = ha.clone();
            right.merge(&bc).unwrap();
            prop_assert_eq!(&left, &right);
            let all: Vec<f64> = a.iter().chain(&b).chain(&c).copied().collect();
            prop_assert_eq!(&left, &hist_of(&all));
        }

        #[test]
        fn percentile_within_one_bin_of_raw(xs in proptest::collection::vec(-49.0f64..49.0, 1..300), p in 0.0f64..100.0) {
            let h = hist_of(&xs);
            let mut sorted = xs.clone();
            sorted.sort_by(f64::total_cmp);
            let got = h.percentile(p).unwrap();
            let want = exact_rank(&sorted, p);
            let width = 100.0 / 37.0;
            prop_assert!((got - want).abs() <= width + 1e-9, "got {} want {}", got, want);
            prop_assert!(got >= sorted[0] && got <= sorted[sorted.len() - 1]);
        }
    }
}
