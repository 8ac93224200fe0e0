//! Calibration instrumentation of lazy evaluation (issue 13): a [`Recorder`] a search worker
//! carries only while `actuary calibrate` runs. At every evaluation call it records
//!
//! * the per-side terms each cheap tier missed ([`chess::eval::side_terms`]) into raw
//!   histograms by bucket (`residual`);
//! * at every early exit, whether the full evaluation lands on the other side of the bound
//!   (`marginsafety`), per material bucket and per per-side bucket pair;
//! * which tier decided, per material bucket (`exitrate`).
//!
//! Everything is also kept per pool position ([`PositionRecord`]), so bounds can resample
//! positions (the search tree of one position is one cluster, not independent draws).
//!
//! The whole module, and the hook in the search, exist only with the `calibration` cargo
//! feature (on by default); without it the engine is the same minus this code.

use chess::board::{Board, Color};
use chess::eval::{EvalOutcome, Evaluator, Material, Tier, side_bucket, side_terms};
use evidence::Histogram;
use std::collections::BTreeMap;

/// Residual histograms cover −`HIST_RANGE`..`HIST_RANGE` centipawns in unit bins (values
/// outside go to the under/overflow slots, which keep min and max).
pub const HIST_RANGE: i64 = 1500;

/// The histogram families, in file order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Kind {
    /// Per side, by own bucket: what the lazy tier misses besides the king term.
    Lazy = 0,
    /// Per side, by own bucket: what the super-lazy tier misses besides the king term.
    SuperLazy = 1,
    /// Per side, by the attacker's bucket: the side's own king term.
    King = 2,
    /// Per node, by material bucket: full − lazy from the side to move's view.
    MissedLazy = 3,
    /// Per node, by material bucket: full − super-lazy from the side to move's view.
    MissedSuperLazy = 4,
}

impl Kind {
    pub const ALL: [Kind; 5] = [
        Kind::Lazy,
        Kind::SuperLazy,
        Kind::King,
        Kind::MissedLazy,
        Kind::MissedSuperLazy,
    ];
    pub fn name(self) -> &'static str {
        match self {
            Kind::Lazy => "lazy",
            Kind::SuperLazy => "superlazy",
            Kind::King => "king",
            Kind::MissedLazy => "missed_lazy",
            Kind::MissedSuperLazy => "missed_superlazy",
        }
    }
    pub fn from_name(s: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| k.name() == s)
    }
    /// How the bucket index of this family is defined.
    pub fn bucketing(self) -> &'static str {
        match self {
            Kind::Lazy | Kind::SuperLazy => "own side bucket (army/4)",
            Kind::King => "attacker's side bucket (army/4)",
            Kind::MissedLazy | Kind::MissedSuperLazy => "material bucket (both armies/8)",
        }
    }
}

/// Index of a cheap tier in the safety tables: 0 super-lazy, 1 lazy.
pub fn cheap_index(tier: Tier) -> usize {
    if tier == Tier::SuperLazy { 0 } else { 1 }
}

/// Exits and wrong exits.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Count {
    pub exits: u64,
    pub wrong: u64,
}

impl Count {
    fn add(&mut self, o: Count) {
        self.exits += o.exits;
        self.wrong += o.wrong;
    }
}

/// Safety counts: `[cheap tier][material bucket]` and `[cheap tier][my][opp]`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Safety {
    pub by_material: [[Count; 8]; 2],
    pub by_pair: [[[Count; 8]; 8]; 2],
}

impl Safety {
    pub fn merge(&mut self, o: &Safety) {
        for t in 0..2 {
            for b in 0..8 {
                self.by_material[t][b].add(o.by_material[t][b]);
                for c in 0..8 {
                    self.by_pair[t][b][c].add(o.by_pair[t][b][c]);
                }
            }
        }
    }
}

/// What one pool position's search contributed.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PositionRecord {
    /// Index in the pool (0-based) and the pool file's line.
    pub index: usize,
    pub line: usize,
    pub nodes: u64,
    /// Raw samples per `[kind][bucket]` (how much of each histogram this tree is).
    pub sample_counts: [[u64; 8]; 5],
    /// Sparse raw samples, (kind, bucket, value) → count; kept only on request.
    pub samples: BTreeMap<(Kind, u8, i32), u64>,
    pub safety: Safety,
    /// `[material bucket][tier]` evaluation calls decided by each tier.
    pub exits: [[u64; 3]; 8],
}

/// The per-thread instrumentation.
#[derive(Clone, Debug)]
pub struct Recorder {
    /// Record residual samples (the other tallies are always kept).
    pub residual: bool,
    /// Keep the sparse per-position samples too (for `positions.txt`).
    pub per_position_samples: bool,
    pub current: PositionRecord,
    /// The histograms of every position this recorder saw, `[kind][bucket]`.
    pub hist: Vec<[Histogram; 8]>,
}

/// An empty set of histograms, `[kind][bucket]`.
pub fn empty_histograms() -> Vec<[Histogram; 8]> {
    let h = Histogram::integers(-HIST_RANGE, HIST_RANGE).expect("valid range");
    Kind::ALL
        .iter()
        .map(|_| std::array::from_fn(|_| h.clone()))
        .collect()
}

impl Recorder {
    pub fn new(residual: bool, per_position_samples: bool) -> Self {
        Self {
            residual,
            per_position_samples: residual && per_position_samples,
            current: PositionRecord::default(),
            hist: if residual {
                empty_histograms()
            } else {
                Vec::new()
            },
        }
    }

    /// Start recording a new pool position.
    pub fn begin(&mut self, index: usize, line: usize) {
        self.current = PositionRecord {
            index,
            line,
            ..Default::default()
        };
    }

    /// The record of the position just searched.
    pub fn finish(&mut self, nodes: u64) -> PositionRecord {
        let mut r = std::mem::take(&mut self.current);
        r.nodes = nodes;
        r
    }

    #[inline]
    fn sample(&mut self, kind: Kind, bucket: usize, value: i32) {
        self.hist[kind as usize][bucket].add(value as f64);
        self.current.sample_counts[kind as usize][bucket] += 1;
        if self.per_position_samples {
            *self
                .current
                .samples
                .entry((kind, bucket as u8, value))
                .or_default() += 1;
        }
    }

    /// One evaluation call of the search: `out` is what the search used; `alpha`/`beta`
    /// the window it was asked with.
    pub fn observe(
        &mut self,
        board: &Board,
        mat: &Material,
        alpha: i32,
        beta: i32,
        out: &EvalOutcome,
        eval: &mut Evaluator,
    ) {
        let stm = board.side_to_move();
        let (wa, ba) = (mat.army(Color::White), mat.army(Color::Black));
        let mb = (((wa + ba) / 8).min(7)) as usize;
        self.current.exits[mb][out.tier as usize] += 1;
        let need_full = self.residual || out.tier != Tier::Full;
        if !need_full {
            return;
        }
        let full = if out.tier == Tier::Full {
            out.score
        } else {
            eval.tier(board, mat, Tier::Full)
        };
        if out.tier != Tier::Full {
            let my = side_bucket(mat.army(stm));
            let opp = side_bucket(mat.army(!stm));
            let high = out.score >= beta;
            let wrong = if high { full < beta } else { full > alpha };
            let t = cheap_index(out.tier);
            let c = Count {
                exits: 1,
                wrong: wrong as u64,
            };
            self.current.safety.by_material[t][mb].add(c);
            self.current.safety.by_pair[t][my][opp].add(c);
        }
        if !self.residual {
            return;
        }
        let terms = side_terms(board, mat.phase());
        let bucket = [side_bucket(wa), side_bucket(ba)];
        for c in 0..2 {
            self.sample(Kind::Lazy, bucket[c], terms.lazy[c]);
            self.sample(Kind::SuperLazy, bucket[c], terms.super_lazy[c]);
            self.sample(Kind::King, bucket[1 - c], terms.king[c]);
        }
        let lazy = eval.tier(board, mat, Tier::Lazy);
        let sl = eval.tier(board, mat, Tier::SuperLazy);
        self.sample(Kind::MissedLazy, mb, full - lazy);
        self.sample(Kind::MissedSuperLazy, mb, full - sl);
    }
}

/// Everything a calibration run measured, merged over positions.
#[derive(Clone, Debug)]
pub struct Totals {
    /// `[kind][bucket]`.
    pub hist: Vec<[Histogram; 8]>,
    pub safety: Safety,
    pub exits: [[u64; 3]; 8],
    pub nodes: u64,
    pub positions: usize,
}

/// The lazy-evaluation calibration hooks into the search through its evaluation calls.
impl chess::search::Probe for Recorder {
    #[inline]
    fn observe_eval(
        &mut self,
        board: &Board,
        mat: &Material,
        alpha: i32,
        beta: i32,
        out: &EvalOutcome,
        eval: &mut Evaluator,
    ) {
        self.observe(board, mat, alpha, beta, out, eval);
    }
}

impl Totals {
    pub fn new() -> Self {
        Self {
            hist: empty_histograms(),
            safety: Safety::default(),
            exits: [[0; 3]; 8],
            nodes: 0,
            positions: 0,
        }
    }

    /// Add a recorder's histograms (exact: counts add).
    pub fn merge_histograms(&mut self, hist: &[[Histogram; 8]]) {
        for (mine, theirs) in self.hist.iter_mut().zip(hist) {
            for (a, b) in mine.iter_mut().zip(theirs) {
                a.merge(b).expect("same binning");
            }
        }
    }

    /// Add one position's safety and exit tallies (histograms come from
    /// [`Totals::merge_histograms`]).
    pub fn add(&mut self, r: &PositionRecord) {
        self.safety.merge(&r.safety);
        for b in 0..8 {
            for t in 0..3 {
                self.exits[b][t] += r.exits[b][t];
            }
        }
        self.nodes += r.nodes;
        self.positions += 1;
    }
}

impl Default for Totals {
    fn default() -> Self {
        Self::new()
    }
}

// ----- Results files ---------------------------------------------------------------------

/// First line of a `calibrate residual` results file.
pub const RESIDUAL_MAGIC: &str = "# actuary calibrate residual v1";

/// Why a results file was refused. Messages name the file and the line.
#[derive(Debug, thiserror::Error)]
pub enum ResultsError {
    #[error("{}: {source}", path.display())]
    Io {
        path: std::path::PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{}:{line}: {message}", path.display())]
    Line {
        path: std::path::PathBuf,
        line: usize,
        message: String,
    },
}

/// The histograms of a residual run and how they were made.
#[derive(Clone, Debug)]
pub struct ResidualFile {
    /// `# key value` header lines (pool, positions, depth, lazy, tables, nodes, seconds).
    pub meta: Vec<(String, String)>,
    /// `[kind][bucket]`.
    pub hist: Vec<[Histogram; 8]>,
}

impl ResidualFile {
    pub fn meta(&self, key: &str) -> Option<&str> {
        self.meta
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// The text form: header, then every histogram with **every** bin, then `== end`.
    pub fn to_text(&self) -> String {
        let mut s = format!("{RESIDUAL_MAGIC}\n");
        for (k, v) in &self.meta {
            s.push_str(&format!("# {k} {v}\n"));
        }
        for kind in Kind::ALL {
            for (b, h) in self.hist[kind as usize].iter().enumerate() {
                s.push_str(&format!("== {} {b}\n", kind.name()));
                s.push_str(&h.to_text());
            }
        }
        s.push_str("== end\n");
        s
    }

    /// Parse the text form; `path` names the file in errors.
    pub fn from_text(text: &str, path: &std::path::Path) -> Result<Self, ResultsError> {
        let err = |line: usize, message: String| ResultsError::Line {
            path: path.to_owned(),
            line,
            message,
        };
        let lines: Vec<&str> = text.lines().collect();
        if lines.first().map(|l| l.trim_end()) != Some(RESIDUAL_MAGIC) {
            return Err(err(
                1,
                format!("not a `calibrate residual` results file (expected `{RESIDUAL_MAGIC}`)"),
            ));
        }
        let mut meta = Vec::new();
        let mut i = 1;
        while i < lines.len() && !lines[i].starts_with("==") {
            if let Some(rest) = lines[i].strip_prefix("# ") {
                let (k, v) = rest.split_once(' ').unwrap_or((rest, ""));
                meta.push((k.to_owned(), v.to_owned()));
            }
            i += 1;
        }
        let mut hist = empty_histograms();
        let mut seen = vec![[false; 8]; Kind::ALL.len()];
        let mut ended = false;
        while i < lines.len() {
            let head = lines[i].trim_end();
            let start = i + 1; // 1-based line of the section header
            let rest = head.strip_prefix("== ").ok_or_else(|| {
                err(
                    start,
                    format!("expected a `== kind bucket` line, found `{head}`"),
                )
            })?;
            if rest == "end" {
                ended = true;
                break;
            }
            let (kname, bucket) = rest.split_once(' ').unwrap_or((rest, ""));
            let kind = Kind::from_name(kname)
                .ok_or_else(|| err(start, format!("unknown histogram `{kname}`")))?;
            let b: usize = bucket
                .parse()
                .ok()
                .filter(|b| *b < 8)
                .ok_or_else(|| err(start, format!("bucket `{bucket}` is not 0..7")))?;
            i += 1;
            let body_start = i;
            while i < lines.len() && !lines[i].starts_with("==") {
                i += 1;
            }
            let body = lines[body_start..i].join("\n");
            let h = Histogram::from_text(&body).map_err(|e| match e {
                evidence::EvidenceError::Parse { line, message, .. } => err(
                    if line == 0 {
                        i.max(1)
                    } else {
                        body_start + line
                    },
                    format!("{} {b}: {message}", kind.name()),
                ),
                other => err(start, format!("{} {b}: {other}", kind.name())),
            })?;
            if h.binning() != hist[kind as usize][b].binning() {
                return Err(err(
                    start,
                    format!("{} {b}: unexpected binning {:?}", kind.name(), h.binning()),
                ));
            }
            hist[kind as usize][b] = h;
            seen[kind as usize][b] = true;
        }
        if !ended {
            return Err(err(
                lines.len(),
                "truncated: the file ends without its `== end` line".into(),
            ));
        }
        for kind in Kind::ALL {
            if let Some(b) = (0..8).find(|&b| !seen[kind as usize][b]) {
                return Err(err(
                    lines.len(),
                    format!("histogram `{} {b}` is missing", kind.name()),
                ));
            }
        }
        Ok(Self { meta, hist })
    }

    pub fn load(path: &std::path::Path) -> Result<Self, ResultsError> {
        // A residual file is a few histograms of text (kilobytes to a few MB); 256 MB is far
        // past any real one and still refuses a device or a stray huge file.
        let text = fileio::read_to_string(path, 256 << 20).map_err(|e| ResultsError::Io {
            path: path.to_owned(),
            source: e.into_io(),
        })?;
        Self::from_text(&text, path)
    }
}

/// One line per position: what its search contributed (the clusters of every bound).
///
/// ```text
/// p <index> line <pool line> nodes <n>
/// n <kind> <8 sample counts by bucket>        (residual runs)
/// s <kind> <bucket> <value>:<count> ...       (with --per-position-samples)
/// x <tier> <material bucket> <exits> <wrong>  (tier 0 super-lazy, 1 lazy; non-zero only)
/// y <tier> <my> <opp> <exits> <wrong>
/// e <material bucket> <super-lazy> <lazy> <full>
/// ```
pub fn positions_text(records: &[PositionRecord]) -> String {
    let mut s = String::from("# actuary calibrate positions v1\n");
    for r in records {
        s.push_str(&format!(
            "p {} line {} nodes {}\n",
            r.index, r.line, r.nodes
        ));
        for kind in Kind::ALL {
            let c = &r.sample_counts[kind as usize];
            if c.iter().any(|&x| x > 0) {
                let v: Vec<String> = c.iter().map(u64::to_string).collect();
                s.push_str(&format!("n {} {}\n", kind.name(), v.join(" ")));
            }
        }
        let mut last: Option<(Kind, u8)> = None;
        for (&(kind, b, v), &n) in &r.samples {
            if last != Some((kind, b)) {
                if last.is_some() {
                    s.push('\n');
                }
                s.push_str(&format!("s {} {b}", kind.name()));
                last = Some((kind, b));
            }
            s.push_str(&format!(" {v}:{n}"));
        }
        if last.is_some() {
            s.push('\n');
        }
        for t in 0..2 {
            for b in 0..8 {
                let c = r.safety.by_material[t][b];
                if c.exits > 0 {
                    s.push_str(&format!("x {t} {b} {} {}\n", c.exits, c.wrong));
                }
                for o in 0..8 {
                    let c = r.safety.by_pair[t][b][o];
                    if c.exits > 0 {
                        s.push_str(&format!("y {t} {b} {o} {} {}\n", c.exits, c.wrong));
                    }
                }
            }
        }
        for (b, e) in r.exits.iter().enumerate() {
            if e.iter().any(|&x| x > 0) {
                s.push_str(&format!("e {b} {} {} {}\n", e[0], e[1], e[2]));
            }
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn sample_file() -> ResidualFile {
        let mut hist = empty_histograms();
        for (i, kind) in Kind::ALL.iter().enumerate() {
            for (b, h) in hist[*kind as usize].iter_mut().enumerate() {
                for v in -(b as i32)..=(i as i32 * 3) {
                    h.add(v as f64);
                }
            }
        }
        hist[0][0].add(5000.0); // overflow survives the round trip
        ResidualFile {
            meta: vec![
                ("pool".into(), "p.epd".into()),
                ("depth".into(), "3".into()),
            ],
            hist,
        }
    }

    #[test]
    fn residual_file_round_trip() {
        let f = sample_file();
        let back = ResidualFile::from_text(&f.to_text(), Path::new("r.txt")).unwrap();
        assert_eq!(back.meta, f.meta);
        assert_eq!(back.hist, f.hist);
        assert_eq!(back.meta("depth"), Some("3"));
    }

    #[test]
    fn residual_file_errors_name_file_and_line() {
        let text = sample_file().to_text();
        let p = Path::new("res.txt");
        let e = ResidualFile::from_text("hello\n", p)
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("res.txt:1: not a `calibrate residual`"),
            "{e}"
        );
        // truncated in the middle of a histogram
        let cut: String = text.lines().take(5000).collect::<Vec<_>>().join("\n");
        let e = ResidualFile::from_text(&cut, p).unwrap_err().to_string();
        assert!(e.starts_with("res.txt:") && e.contains("missing"), "{e}");
        // truncated at a section boundary: no `== end`
        let cut = text.replace("== end\n", "");
        let e = ResidualFile::from_text(&cut, p).unwrap_err().to_string();
        assert!(e.contains("truncated"), "{e}");
        // a corrupted count names its line
        let line_no = text.lines().position(|l| l == "== king 3").unwrap() + 1;
        let bad = text.replacen(
            "== king 3\n# evidence-histogram v1\nbinning",
            "== king 3\n# evidence-histogram v1\nbinnig",
            1,
        );
        let e = ResidualFile::from_text(&bad, p).unwrap_err().to_string();
        assert!(e.starts_with(&format!("res.txt:{}:", line_no + 2)), "{e}");
        let e = ResidualFile::from_text(&text.replacen("== lazy 1", "== lazy 9", 1), p)
            .unwrap_err()
            .to_string();
        assert!(e.contains("bucket `9`"), "{e}");
    }
}
