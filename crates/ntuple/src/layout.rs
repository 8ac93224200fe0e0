//! Layouts: which pattern families are present and which are conditioned on the rise clock
//! (docs/design/drop7-SPEC.md §7). Parsed from the reference's layout strings, e.g. `rows,cols,win23,win32,phase=all`.
//!
//! # Spec order and storage order
//!
//! docs/design/drop7-SPEC.md §7 numbers the entries of a conditioned table phase-major (`phase·patterns +
//! pattern`), and model files keep that order. In memory a conditioned table is stored
//! pattern-major instead (`pattern·5 + phase`): the five phases of one pattern sit side by
//! side. Consecutive positions of a game share most of their patterns but always differ in
//! the rise clock, so in this order their reads land on the same cache lines and 2 MB pages
//! instead of on five regions hundreds of megabytes apart (the one-ply workload's features +
//! value went from 66 to 56 ns per board here). [`Layout::storage_index`] and
//! [`Layout::spec_index`] convert; [`Layout::classes`] walks the entries in spec order, which
//! is how model files are read and written.

use std::fmt;

pub(crate) mod plan;

/// Most active entries any layout has (the "wide" layout: 7+7+30+30+24+24).
pub const MAX_ACTIVE: usize = 122;

/// Rise-clock phases of a conditioned table (moves until the rise 1..5).
pub const PHASES: u64 = 5;

/// A pattern family, in the fixed layout order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Family {
    /// Each full row (7 tables, 10⁷ patterns).
    Rows,
    /// Each full column (7 tables, 10⁷ patterns).
    Cols,
    /// 2 wide × 3 tall windows (30 placements, 10⁶ patterns).
    Win23,
    /// 3 wide × 2 tall windows (30 placements, 10⁶ patterns).
    Win32,
    /// 2 wide × 4 tall windows (24 placements, 10⁸ patterns).
    Win24,
    /// 4 wide × 2 tall windows (24 placements, 10⁸ patterns).
    Win42,
}

impl Family {
    pub const ALL: [Family; 6] = [
        Family::Rows,
        Family::Cols,
        Family::Win23,
        Family::Win32,
        Family::Win24,
        Family::Win42,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Family::Rows => "rows",
            Family::Cols => "cols",
            Family::Win23 => "win23",
            Family::Win32 => "win32",
            Family::Win24 => "win24",
            Family::Win42 => "win42",
        }
    }

    /// Number of tables (placements).
    pub fn tables(self) -> u64 {
        match self {
            Family::Rows | Family::Cols => 7,
            Family::Win23 | Family::Win32 => 30,
            Family::Win24 | Family::Win42 => 24,
        }
    }

    /// Patterns per table (10^cells).
    pub fn patterns(self) -> u64 {
        match self {
            Family::Rows | Family::Cols => 10_000_000,
            Family::Win23 | Family::Win32 => 1_000_000,
            Family::Win24 | Family::Win42 => 100_000_000,
        }
    }
}

/// Phase conditioning on moves-until-rise (5 phases).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Phase {
    None,
    /// Only `cols` is conditioned.
    Cols,
    /// `rows`, `cols`, `win23`, `win32` are conditioned (never win24/win42).
    All,
}

/// Fill buckets: the whole table set repeated per bucket of how full the board is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Fill {
    None,
    /// Occupied cells 0–13, 14–20, 21–27, 28–34, 35–49.
    Occ5,
    /// Tallest column ≤3, 4, 5, 6, 7.
    Hgt5,
}

impl Fill {
    /// Bucket 0..5 of a board (0 for `None`).
    pub fn bucket(self, board: &drop7::board::Board) -> u64 {
        match self {
            Fill::None => 0,
            Fill::Occ5 => match board.occupied() {
                0..=13 => 0,
                14..=20 => 1,
                21..=27 => 2,
                28..=34 => 3,
                _ => 4,
            },
            Fill::Hgt5 => {
                let h = (0..7).map(|c| board.height(c)).max().unwrap_or(0);
                h.saturating_sub(3).min(4) as u64
            }
        }
    }
    pub fn buckets(self) -> u64 {
        if self == Fill::None { 1 } else { 5 }
    }
}

/// A parsed layout with its precomputed offsets. Serialised as its [`Layout::spec`] string
/// (a run's `checkpoint.json` records it so).
#[derive(Debug, Clone, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(into = "String", try_from = "String")]
pub struct Layout {
    pub families: Vec<Family>,
    pub phase: Phase,
    pub fill: Fill,
    /// Entries of one fill bucket (`total / buckets`).
    pub bucket_entries: u64,
    /// Per family in `families` order: (offset, entries per table, conditioned).
    pub(crate) parts: Vec<(u64, u64, bool)>,
    /// Per phase (0..5), per active entry in feature order: family offset + placement ×
    /// table size + the phase where the family is conditioned — every part of a storage
    /// index but the fill bucket and the pattern term, so extraction ends in one loop.
    pub(crate) place: [Vec<u64>; PHASES as usize],
    /// Storage stride of one pattern (5 in a conditioned family: five phases side by side;
    /// else 1) for rows, win23, win32 and cols: extraction multiplies pattern numbers by it
    /// while they are still in vector registers.
    pub(crate) common_stride: [u32; 3],
    pub(crate) cols_stride: u32,
    /// The active entries eight at a time for the byte-shuffle extraction
    /// ([`plan`]).
    pub(crate) groups: Vec<plan::Group>,
    /// Active entries per state (see [`Layout::active`]).
    active: usize,
    /// Where extraction writes the rows, win23 and win32 pattern blocks in its buffer: their
    /// place in feature order, or scratch room past the active entries when the layout lacks
    /// the family (the three are always computed together).
    pub(crate) common_at: [usize; 3],
    pub total: u64,
}

impl From<Layout> for String {
    fn from(l: Layout) -> String {
        l.spec()
    }
}

impl TryFrom<String> for Layout {
    type Error = crate::Error;
    fn try_from(s: String) -> Result<Self, crate::Error> {
        Layout::parse(&s)
    }
}

impl Layout {
    /// Parse e.g. `rows,cols,win23,win32,phase=all`. Families may come in any order (they are
    /// laid out in the fixed order); the phase item is optional (default none).
    pub fn parse(spec: &str) -> Result<Self, crate::Error> {
        let bad = |reason: String| crate::Error::Layout {
            spec: spec.to_owned(),
            reason,
        };
        let mut fams = Vec::new();
        let mut phase = Phase::None;
        let mut fill = Fill::None;
        for item in spec.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            if let Some(p) = item.strip_prefix("fill=") {
                fill = match p {
                    "none" => Fill::None,
                    "occ5" => Fill::Occ5,
                    "hgt5" => Fill::Hgt5,
                    _ => {
                        return Err(bad(format!("fill must be none, occ5 or hgt5 (got `{p}`)")));
                    }
                };
                continue;
            }
            if let Some(p) = item.strip_prefix("phase=") {
                phase = match p {
                    "none" => Phase::None,
                    "cols" => Phase::Cols,
                    "all" => Phase::All,
                    _ => {
                        return Err(bad(format!("phase must be none, cols or all (got `{p}`)")));
                    }
                };
                continue;
            }
            let f = Family::ALL
                .into_iter()
                .find(|f| f.name() == item)
                .ok_or_else(|| {
                    bad(format!(
                        "unknown family `{item}` (rows, cols, win23, win32, win24, win42)"
                    ))
                })?;
            if fams.contains(&f) {
                return Err(bad(format!("`{item}` listed twice")));
            }
            fams.push(f);
        }
        if fams.is_empty() {
            return Err(bad("no pattern family".into()));
        }
        fams.sort();
        Ok(Self::build(fams, phase, fill))
    }

    /// The same families and phase with another fill bucketing.
    pub fn with_fill(&self, fill: Fill) -> Self {
        Self::build(self.families.clone(), self.phase, fill)
    }

    fn build(families: Vec<Family>, phase: Phase, fill: Fill) -> Self {
        let mut parts = Vec::new();
        let mut place: [Vec<u64>; PHASES as usize] = Default::default();
        let mut common_stride = [1; 3];
        let mut cols_stride = 1;
        let mut off = 0u64;
        for &f in &families {
            let conditioned = match phase {
                Phase::None => false,
                Phase::Cols => f == Family::Cols,
                Phase::All => matches!(
                    f,
                    Family::Rows | Family::Cols | Family::Win23 | Family::Win32
                ),
            };
            let size = f.patterns() * if conditioned { PHASES } else { 1 };
            parts.push((off, size, conditioned));
            for (phase, place) in place.iter_mut().enumerate() {
                let shift = if conditioned { phase as u64 } else { 0 };
                place.extend((0..f.tables()).map(|p| off + p * size + shift));
            }
            let s = if conditioned { PHASES as u32 } else { 1 };
            match f {
                Family::Rows => common_stride[0] = s,
                Family::Win23 => common_stride[1] = s,
                Family::Win32 => common_stride[2] = s,
                Family::Cols => cols_stride = s,
                Family::Win24 | Family::Win42 => {}
            }
            off += f.tables() * size;
        }
        let mut common_at = [MAX_ACTIVE + 8, MAX_ACTIVE + 16, MAX_ACTIVE + 16 + 38];
        let mut at = 0;
        for &f in &families {
            match f {
                Family::Rows => common_at[0] = at,
                Family::Win23 => common_at[1] = at,
                Family::Win32 => common_at[2] = at,
                _ => {}
            }
            at += f.tables() as usize;
        }
        let mut layout = Self {
            groups: Vec::new(),
            active: families.iter().map(|f| f.tables() as usize).sum(),
            families,
            phase,
            fill,
            common_at,
            bucket_entries: off,
            parts,
            place,
            common_stride,
            cols_stride,
            total: off * fill.buckets(),
        };
        layout.groups = plan::groups(&layout);
        layout
    }

    /// The family part holding bucket-relative entry `rem`: (offset, entries per table,
    /// patterns per table, conditioned).
    fn part_of(&self, rem: u64) -> (u64, u64, u64, bool) {
        let k = self.parts.partition_point(|&(off, _, _)| off <= rem) - 1;
        let (off, size, conditioned) = self.parts[k];
        (off, size, self.families[k].patterns(), conditioned)
    }

    /// Split entry `i` (either numbering: they agree on everything but the position inside
    /// a conditioned table) into the start of its table, its offset there, the table's
    /// patterns, and whether it is conditioned.
    fn locate(&self, i: u64) -> (u64, u64, u64, bool) {
        assert!(i < self.total, "entry {i} of {}", self.total);
        let rem = i % self.bucket_entries;
        let (off, size, patterns, conditioned) = self.part_of(rem);
        let table = i - rem + off + (rem - off) / size * size;
        (table, i - table, patterns, conditioned)
    }

    /// Where the entry numbered `spec` by docs/design/drop7-SPEC.md §7 (and by model files) is stored in memory.
    pub fn storage_index(&self, spec: u64) -> u64 {
        match self.locate(spec) {
            (table, local, patterns, true) => table + local % patterns * PHASES + local / patterns,
            _ => spec,
        }
    }

    /// The docs/design/drop7-SPEC.md §7 number of the entry stored at `storage` (inverse of [`Self::storage_index`]).
    pub fn spec_index(&self, storage: u64) -> u64 {
        match self.locate(storage) {
            (table, local, patterns, true) => table + local % PHASES * patterns + local / PHASES,
            _ => storage,
        }
    }

    /// The classes of entries (one placement, one phase, one fill bucket) in spec order; the
    /// entries of a class are stored at `start + j·stride` for `j < count`, so walking the
    /// classes in order and each class by `j` visits every entry in spec (file) order.
    pub fn classes(&self) -> impl Iterator<Item = Class> + '_ {
        (0..self.fill.buckets()).flat_map(move |bucket| {
            self.families.iter().zip(&self.parts).flat_map(
                move |(&fam, &(off, size, conditioned))| {
                    let phases = if conditioned { PHASES } else { 1 };
                    (0..fam.tables()).flat_map(move |table| {
                        (0..phases).map(move |phase| Class {
                            start: bucket * self.bucket_entries + off + table * size + phase,
                            stride: phases,
                            count: fam.patterns(),
                        })
                    })
                },
            )
        })
    }

    /// Active lookups per state (one per table).
    #[inline]
    pub fn active(&self) -> usize {
        self.active
    }

    /// Canonical spec string (families in layout order, then always a phase item), as stored
    /// in model files.
    pub fn spec(&self) -> String {
        let mut s: Vec<&str> = self.families.iter().map(|f| f.name()).collect();
        let p = match self.phase {
            Phase::None => "phase=none",
            Phase::Cols => "phase=cols",
            Phase::All => "phase=all",
        };
        s.push(p);
        match self.fill {
            Fill::None => {}
            Fill::Occ5 => s.push("fill=occ5"),
            Fill::Hgt5 => s.push("fill=hgt5"),
        }
        s.join(",")
    }
}

/// One table of one phase and fill bucket, as stored: entries `start + j·stride`, `j < count`
/// (pattern `j`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Class {
    pub start: u64,
    pub stride: u64,
    pub count: u64,
}

impl fmt::Display for Layout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.spec())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spec_sizes() {
        let cases = [
            ("rows,cols,win23,win32,phase=cols", 480_000_000, 74),
            ("rows,cols,win23,win32,phase=none", 200_000_000, 74),
            ("rows,cols,win23,win32,phase=all", 1_000_000_000, 74),
            ("rows,cols,phase=cols", 420_000_000, 14),
            ("win23,win32,phase=none", 60_000_000, 60),
            (
                "rows,cols,win23,win32,win24,win42,phase=all",
                5_800_000_000,
                122,
            ),
        ];
        for (spec, total, active) in cases {
            let l = Layout::parse(spec).unwrap();
            assert_eq!(l.total, total, "{spec}");
            assert_eq!(l.active(), active, "{spec}");
            assert_eq!(l.spec(), spec);
        }
        assert_eq!(
            Layout::parse("win32,rows").unwrap().spec(),
            "rows,win32,phase=none"
        );
        assert!(
            Layout::parse("rows,diag")
                .unwrap_err()
                .to_string()
                .contains("diag")
        );
        assert!(Layout::parse("phase=all").is_err());
        assert!(Layout::parse("rows,phase=some").is_err());
        let fill = Layout::parse("rows,cols,win23,win32,phase=all,fill=occ5").unwrap();
        assert_eq!(fill.classes().count(), 5 * (74 * 5));
        assert_eq!(fill.total, 5_000_000_000);
        assert_eq!(fill.active(), 74);
        assert_eq!(fill.spec(), "rows,cols,win23,win32,phase=all,fill=occ5");
    }

    /// Storage and spec numbering are inverse bijections; the classes visit the entries in
    /// spec order, each exactly once. Layouts up to 2·10⁸ entries are walked whole (a bit
    /// per entry); larger ones at every class boundary and every 9,973rd entry, which keeps
    /// the test fast and small while still crossing every class and phase.
    #[test]
    fn storage_order_is_a_permutation_of_spec_order() {
        for spec in [
            "win23,phase=all",
            "win23,win32,phase=cols",
            "cols,win32,phase=cols,fill=hgt5",
            "rows,win23,phase=none",
        ] {
            let l = Layout::parse(spec).unwrap();
            let whole = l.total <= 200_000_000;
            let mut seen = vec![
                0u64;
                if whole {
                    l.total.div_ceil(64) as usize
                } else {
                    0
                }
            ];
            let mut next_spec = 0u64;
            for class in l.classes() {
                let check = |j: u64| {
                    let at = class.start + j * class.stride;
                    assert_eq!(l.spec_index(at), next_spec + j, "{spec}");
                    assert_eq!(l.storage_index(next_spec + j), at, "{spec}");
                    assert!(at < l.total, "{spec}");
                    at
                };
                if whole {
                    for j in 0..class.count {
                        let at = check(j);
                        let (w, b) = ((at / 64) as usize, at % 64);
                        assert_eq!(seen[w] >> b & 1, 0, "{spec}: entry {at} visited twice");
                        seen[w] |= 1 << b;
                    }
                } else {
                    for j in (0..class.count).step_by(9_973).chain([class.count - 1]) {
                        check(j);
                    }
                }
                next_spec += class.count;
            }
            assert_eq!(next_spec, l.total, "{spec}");
            if whole {
                let ones: u64 = seen.iter().map(|w| w.count_ones() as u64).sum();
                assert_eq!(ones, l.total, "{spec}");
            }
        }
        // a conditioned table keeps the five phases of a pattern side by side
        let l = Layout::parse("win23,phase=all").unwrap();
        let size = 5_000_000;
        let spec = 2 * size + 3 * 1_000_000 + 4_321; // table 2, phase 3, pattern 4,321
        assert_eq!(l.storage_index(spec), 2 * size + 4_321 * 5 + 3);
    }
}
