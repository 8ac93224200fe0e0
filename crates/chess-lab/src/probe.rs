//! Pruning calibration probes (issue 14): what a search worker records while `actuary
//! collect` or `actuary calibrate surprise` runs. The search decides *where* a probe fires and
//! whether its event happened ([`chess::search::prune::ProbeMode`]); this module only counts,
//! per cell and per pool position, so every rate can be bounded by Wilson (nodes as draws)
//! and by the position-clustered bootstrap (positions as draws: one tree is one cluster).

use chess::search::Probe;
use chess::search::prune::{FH_CELLS, ProbeMode, RFP_CELLS, SURPRISE_CELLS};

/// Counts of one cell: trials and events.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CellCount {
    pub n: u64,
    pub k: u64,
}

/// What one pool position contributed: its non-empty cells.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PositionCells {
    pub index: usize,
    pub line: usize,
    pub nodes: u64,
    pub cells: Vec<(u32, CellCount)>,
}

/// The recorder a worker carries during a pruning calibration run.
#[derive(Clone, Debug)]
pub struct CellProbe {
    pub mode: ProbeMode,
    current: Vec<CellCount>,
    touched: Vec<u32>,
    index: usize,
    line: usize,
}

/// Cells of a mode's table.
pub fn cells_of(mode: ProbeMode) -> usize {
    match mode {
        ProbeMode::Fh => FH_CELLS,
        ProbeMode::Rfp => RFP_CELLS,
        ProbeMode::Surprise(_) => SURPRISE_CELLS,
    }
}

impl CellProbe {
    pub fn new(mode: ProbeMode) -> Self {
        Self {
            mode,
            current: vec![CellCount::default(); cells_of(mode)],
            touched: Vec::new(),
            index: 0,
            line: 0,
        }
    }

    /// Start recording pool position `index` (from file line `line`).
    pub fn begin(&mut self, index: usize, line: usize) {
        self.index = index;
        self.line = line;
    }

    #[inline]
    pub fn record(&mut self, cell: usize, event: bool) {
        let c = &mut self.current[cell];
        if c.n == 0 {
            self.touched.push(cell as u32);
        }
        c.n += 1;
        c.k += event as u64;
    }

    /// The finished position's cells (sorted), and a clean slate for the next.
    pub fn finish(&mut self, nodes: u64) -> PositionCells {
        self.touched.sort_unstable();
        let cells = self
            .touched
            .drain(..)
            .map(|c| {
                let v = std::mem::take(&mut self.current[c as usize]);
                (c, v)
            })
            .collect();
        PositionCells {
            index: self.index,
            line: self.line,
            nodes,
            cells,
        }
    }
}

impl Probe for CellProbe {
    #[inline]
    fn mode(&self) -> Option<ProbeMode> {
        Some(self.mode)
    }
    #[inline]
    fn record(&mut self, cell: usize, event: bool) {
        CellProbe::record(self, cell, event);
    }
}

/// Pool totals per cell.
pub fn totals(records: &[PositionCells], cells: usize) -> Vec<CellCount> {
    let mut t = vec![CellCount::default(); cells];
    for r in records {
        for &(c, v) in &r.cells {
            t[c as usize].n += v.n;
            t[c as usize].k += v.k;
        }
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;
    use chess::search::prune::Mechanism;

    #[test]
    fn records_per_position_and_resets() {
        let mut p = CellProbe::new(ProbeMode::Surprise(Mechanism::Rfp));
        p.begin(3, 10);
        p.record(5, true);
        p.record(5, false);
        p.record(2, false);
        let r = p.finish(100);
        assert_eq!(r.index, 3);
        assert_eq!(r.line, 10);
        assert_eq!(
            r.cells,
            vec![(2, CellCount { n: 1, k: 0 }), (5, CellCount { n: 2, k: 1 })]
        );
        p.begin(4, 11);
        p.record(5, false);
        let r2 = p.finish(7);
        assert_eq!(r2.cells, vec![(5, CellCount { n: 1, k: 0 })]);
        let t = totals(&[r, r2], SURPRISE_CELLS);
        assert_eq!(t[5], CellCount { n: 3, k: 1 });
        assert_eq!(t[2], CellCount { n: 1, k: 0 });
    }
}
