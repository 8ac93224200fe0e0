//! Layouts: which pattern families are present and which are conditioned on the rise clock
//! (SPEC §7). Parsed from the reference's layout strings, e.g. `rows,cols,win23,win32,phase=all`.

use std::fmt;

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

/// A parsed layout with its precomputed offsets.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Layout {
    pub families: Vec<Family>,
    pub phase: Phase,
    pub fill: Fill,
    /// Entries of one fill bucket (`total / buckets`).
    pub bucket_entries: u64,
    /// Per family in `families` order: (offset, entries per table, conditioned).
    pub(crate) parts: Vec<(u64, u64, bool)>,
    /// Per phase (0..5), per active entry in feature order: family offset + placement ×
    /// table size + phase × patterns where the family is conditioned — every part of an
    /// index but the fill bucket and the pattern number, so extraction ends in one add loop.
    pub(crate) place: [Vec<u64>; 5],
    /// Where extraction writes the rows, win23 and win32 pattern blocks in its buffer: their
    /// place in feature order, or scratch room past the active entries when the layout lacks
    /// the family (the three are always computed together).
    pub(crate) common_at: [usize; 3],
    pub total: u64,
}

impl Layout {
    /// Parse e.g. `rows,cols,win23,win32,phase=all`. Families may come in any order (they are
    /// laid out in the fixed order); the phase item is optional (default none).
    pub fn parse(spec: &str) -> Result<Self, String> {
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
                        return Err(format!(
                            "bad layout `{spec}`: fill must be none, occ5 or hgt5 (got `{p}`)"
                        ));
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
                        return Err(format!(
                            "bad layout `{spec}`: phase must be none, cols or all (got `{p}`)"
                        ));
                    }
                };
                continue;
            }
            let f = Family::ALL
                .into_iter()
                .find(|f| f.name() == item)
                .ok_or_else(|| format!("bad layout `{spec}`: unknown family `{item}` (rows, cols, win23, win32, win24, win42)"))?;
            if fams.contains(&f) {
                return Err(format!("bad layout `{spec}`: `{item}` listed twice"));
            }
            fams.push(f);
        }
        if fams.is_empty() {
            return Err(format!("bad layout `{spec}`: no pattern family"));
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
        let mut place: [Vec<u64>; 5] = Default::default();
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
            let size = f.patterns() * if conditioned { 5 } else { 1 };
            parts.push((off, size, conditioned));
            for (phase, place) in place.iter_mut().enumerate() {
                let shift = if conditioned {
                    phase as u64 * f.patterns()
                } else {
                    0
                };
                place.extend((0..f.tables()).map(|p| off + p * size + shift));
            }
            off += f.tables() * size;
        }
        let mut common_at = [
            crate::features::MAX_ACTIVE + 8,
            crate::features::MAX_ACTIVE + 16,
            crate::features::MAX_ACTIVE + 16 + 38,
        ];
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
        Self {
            families,
            phase,
            fill,
            common_at,
            bucket_entries: off,
            parts,
            place,
            total: off * fill.buckets(),
        }
    }

    /// Active lookups per state (one per table).
    pub fn active(&self) -> usize {
        self.families.iter().map(|f| f.tables() as usize).sum()
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
        assert!(Layout::parse("rows,diag").unwrap_err().contains("diag"));
        assert!(Layout::parse("phase=all").is_err());
        assert!(Layout::parse("rows,phase=some").is_err());
        let fill = Layout::parse("rows,cols,win23,win32,phase=all,fill=occ5").unwrap();
        assert_eq!(fill.total, 5_000_000_000);
        assert_eq!(fill.active(), 74);
        assert_eq!(fill.spec(), "rows,cols,win23,win32,phase=all,fill=occ5");
    }
}
