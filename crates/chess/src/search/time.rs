//! Time management: a soft limit (checked between iterations, scaled by best-move
//! stability) and a hard limit (checked every `TIME_CHECK_NODES` nodes inside the search).
//! Both are computed from the time left minus `Move Overhead` (`avail`): the soft limit is
//! `avail / movestogo + 0.75 · increment` (movestogo defaults to 30, clamped to 1..=40),
//! capped at 45 % of `avail`; the hard limit is three times the soft limit, capped at 70 %
//! of `avail`, so a GUI's latency cannot make us flag. With one move left before the time
//! control the caps are 80 % and 90 %. A `movetime` (less the overhead) caps both, and on
//! its own sets only the hard limit: a fixed move time is used in full.
//!
//! A `go ponder` search carries a `PonderHit`: until the UCI loop sets it no limit
//! applies (the search runs as if infinite); from then on the same limits count from the
//! moment of `ponderhit`.

use crate::board::Move;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

/// Set by the UCI loop on `ponderhit`: the moment a `go ponder` search's clock starts.
pub(crate) type PonderHit = Arc<OnceLock<Instant>>;

/// What `go` asked for.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Limits {
    pub depth: Option<i32>,
    /// The hard node limit: the search stops inside an iteration once this many are searched.
    pub nodes: Option<u64>,
    /// The soft node limit: no new iteration starts once this many are searched (the one
    /// under way finishes, up to `nodes`). Self-play data generation's budget: every move is
    /// the result of a whole iteration, and the cost per move follows the tree, not a cut.
    pub soft_nodes: Option<u64>,
    pub movetime: Option<u64>,
    pub wtime: Option<u64>,
    pub btime: Option<u64>,
    pub winc: Option<u64>,
    pub binc: Option<u64>,
    pub movestogo: Option<u64>,
    pub infinite: bool,
    pub perft: Option<u32>,
    /// `go searchmoves`: search only these root moves (empty: all legal moves).
    pub searchmoves: Vec<Move>,
}

#[derive(Clone, Debug)]
pub(crate) struct TimeManager {
    start: Instant,
    soft: Option<Duration>,
    hard: Option<Duration>,
    /// `go ponder`: no limit applies until this is set, then they count from it.
    ponder: Option<PonderHit>,
}

impl TimeManager {
    pub(crate) fn new(limits: &Limits, white_to_move: bool, overhead_ms: u64) -> Self {
        let start = Instant::now();
        if limits.infinite {
            return Self {
                start,
                soft: None,
                hard: None,
                ponder: None,
            };
        }
        let mut soft = None;
        let mut hard = None;
        let (time, inc) = if white_to_move {
            (limits.wtime, limits.winc)
        } else {
            (limits.btime, limits.binc)
        };
        if let Some(t) = time {
            let avail = t.saturating_sub(overhead_ms).max(1) as f64;
            let inc = inc.unwrap_or(0) as f64;
            let mtg = limits.movestogo.unwrap_or(30).clamp(1, 40) as f64;
            let s = (avail / mtg + inc * 0.75).min(avail * if mtg <= 1.0 { 0.8 } else { 0.45 });
            let h = (s * 3.0).min(avail * if mtg <= 1.0 { 0.9 } else { 0.7 });
            soft = Some(s);
            hard = Some(h);
        }
        if let Some(mt) = limits.movetime {
            let m = mt.saturating_sub(overhead_ms).max(1) as f64;
            // A fixed move time is used in full: no early stop between iterations.
            soft = soft.map(|s: f64| s.min(m));
            hard = Some(hard.map_or(m, |h: f64| h.min(m)));
        }
        let ms = |x: f64| Duration::from_micros((x * 1000.0) as u64);
        Self {
            start,
            soft: soft.map(ms),
            hard: hard.map(ms),
            ponder: None,
        }
    }

    /// The same limits, but counted from `ponderhit` (none apply before it).
    pub(crate) fn pondering(mut self, hit: Option<PonderHit>) -> Self {
        self.ponder = hit;
        self
    }

    /// When the limits started counting: `go`, or `ponderhit` when pondering (`None`: not yet).
    #[inline]
    fn clock_start(&self) -> Option<Instant> {
        match &self.ponder {
            None => Some(self.start),
            Some(hit) => hit.get().copied(),
        }
    }

    /// Still waiting for `ponderhit`: the answer must wait too.
    pub(crate) fn is_pondering(&self) -> bool {
        self.ponder.as_ref().is_some_and(|hit| hit.get().is_none())
    }

    pub(crate) fn elapsed_ms(&self) -> u64 {
        self.start.elapsed().as_millis() as u64
    }

    #[inline]
    pub(crate) fn hard_exceeded(&self) -> bool {
        self.hard
            .is_some_and(|h| self.clock_start().is_some_and(|t| t.elapsed() >= h))
    }

    /// Should we stop between iterations? `scale` < 1 when the best move is stable.
    pub(crate) fn soft_exceeded(&self, scale: f64) -> bool {
        self.soft.is_some_and(|s| {
            self.clock_start()
                .is_some_and(|t| t.elapsed().as_secs_f64() >= s.as_secs_f64() * scale)
        })
    }

    pub(crate) fn is_timed(&self) -> bool {
        self.hard.is_some() && self.clock_start().is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn never_more_than_remaining() {
        for (t, inc) in [
            (1000u64, 10u64),
            (50, 10),
            (10, 10),
            (0, 0),
            (10_000, 100),
            (60, 0),
        ] {
            let l = Limits {
                wtime: Some(t),
                winc: Some(inc),
                ..Default::default()
            };
            let tm = TimeManager::new(&l, true, 30);
            let h = tm.hard.unwrap().as_millis() as u64;
            assert!(h <= t.saturating_sub(30).max(1), "t={t} h={h}");
        }
    }

    #[test]
    fn pondering_waits_for_ponderhit() {
        let l = Limits {
            movetime: Some(1),
            ..Default::default()
        };
        let hit = PonderHit::default();
        let tm = TimeManager::new(&l, true, 0).pondering(Some(hit.clone()));
        std::thread::sleep(Duration::from_millis(5));
        assert!(tm.is_pondering() && !tm.is_timed() && !tm.hard_exceeded());
        assert!(!tm.soft_exceeded(0.0));
        hit.set(Instant::now()).unwrap();
        assert!(!tm.is_pondering() && tm.is_timed());
        std::thread::sleep(Duration::from_millis(5));
        assert!(tm.hard_exceeded());
    }
}
