//! Policies by name. A policy is a deterministic function of the public state only: it
//! never sees the seed, the score, the level or the move number.

use crate::board::Board;
use crate::game::{PublicState, center_column, leftmost_column};
use crate::rng::mix32;
use crate::search::{FairLeaf, Leaf, SearchConfig, Searcher, state_hash};

/// What a policy answered, with the cost of the answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Choice {
    /// `None` only when no column is legal.
    pub column: Option<usize>,
    /// Search work spent (0 for non-searching policies).
    pub work: u64,
    /// False if a search stopped before its full depth (budget).
    pub complete: bool,
}

/// A move chooser. One instance per thread; `choose` may keep scratch state (tables).
pub trait Policy: Send {
    fn name(&self) -> &str;
    fn choose(&mut self, state: &PublicState) -> Choice;
}

/// Makes fresh policy instances (one per worker thread).
pub type PolicyFactory = std::sync::Arc<dyn Fn() -> Box<dyn Policy> + Send + Sync>;

/// Uniform over legal columns, driven by a hash of the public state (so it is a
/// deterministic function of what a policy may see, unlike the reference trace policy).
pub struct StateRandom;

impl Policy for StateRandom {
    fn name(&self) -> &str {
        "random"
    }
    fn choose(&mut self, s: &PublicState) -> Choice {
        let mask = s.board.legal_mask();
        let n = mask.count_ones() as u64;
        let column = (n > 0).then(|| {
            let b = mix32(state_hash(&s.board, s.next, s.moves_remaining) ^ 0x5241_4e44) as u64;
            let mut m = mask;
            for _ in 0..((b * n) >> 32) {
                m &= m - 1;
            }
            m.trailing_zeros() as usize
        });
        Choice {
            column,
            work: 0,
            complete: true,
        }
    }
}

/// A fixed column rule (`center`, `leftmost`).
pub struct Simple {
    name: &'static str,
    rule: fn(&Board) -> Option<usize>,
}

impl Policy for Simple {
    fn name(&self) -> &str {
        self.name
    }
    fn choose(&mut self, s: &PublicState) -> Choice {
        Choice {
            column: (self.rule)(&s.board),
            work: 0,
            complete: true,
        }
    }
}

/// Fair expectimax over any leaf.
pub struct SearchPolicy<L: Leaf> {
    name: String,
    searcher: Searcher<L>,
}

impl<L: Leaf> SearchPolicy<L> {
    pub fn new(name: String, leaf: L, config: SearchConfig) -> Self {
        Self {
            name,
            searcher: Searcher::new(leaf, config),
        }
    }
}

impl<L: Leaf> Policy for SearchPolicy<L> {
    fn name(&self) -> &str {
        &self.name
    }
    fn choose(&mut self, s: &PublicState) -> Choice {
        let d = self.searcher.decide(s);
        Choice {
            column: d.column,
            work: d.work,
            complete: d.completed(self.searcher.config.depth),
        }
    }
}

/// Parse `dNsK` (e.g. `d3s7`) into (depth, samples).
pub fn parse_depth_samples(s: &str) -> Option<(u32, u32)> {
    let rest = s.strip_prefix('d')?;
    let (d, k) = rest.split_once('s')?;
    let (d, k) = (d.parse().ok()?, k.parse().ok()?);
    ((1..=8).contains(&d) && (1..=64).contains(&k)).then_some((d, k))
}

/// Names this crate knows: `random`, `center`, `leftmost`, `fair-dNsK`.
pub const BUILTIN_POLICIES: &str =
    "random, center, leftmost, fair-dNsK (e.g. fair-d3s7, fair-d4s7)";

/// A factory for a built-in policy name, or `None` if the name is not built in.
pub fn builtin(name: &str) -> Option<PolicyFactory> {
    let f: PolicyFactory = match name {
        "random" => std::sync::Arc::new(|| Box::new(StateRandom) as Box<dyn Policy>),
        "center" => std::sync::Arc::new(|| {
            Box::new(Simple {
                name: "center",
                rule: center_column,
            }) as Box<dyn Policy>
        }),
        "leftmost" => std::sync::Arc::new(|| {
            Box::new(Simple {
                name: "leftmost",
                rule: leftmost_column,
            }) as Box<dyn Policy>
        }),
        _ => {
            let (d, k) = parse_depth_samples(name.strip_prefix("fair-")?)?;
            let owned = name.to_owned();
            std::sync::Arc::new(move || {
                Box::new(SearchPolicy::new(
                    owned.clone(),
                    FairLeaf::default(),
                    SearchConfig::fair(d, k),
                )) as Box<dyn Policy>
            })
        }
    };
    Some(f)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert_eq!(parse_depth_samples("d3s7"), Some((3, 7)));
        assert_eq!(parse_depth_samples("d0s7"), None);
        assert_eq!(parse_depth_samples("d3"), None);
        assert!(builtin("fair-d2s5").is_some());
        assert!(builtin("fair-x").is_none());
        assert!(builtin("greedy").is_none());
        let s = PublicState {
            board: Board::start(),
            next: 3,
            moves_remaining: 5,
        };
        assert_eq!(builtin("center").unwrap()().choose(&s).column, Some(3));
        assert_eq!(builtin("leftmost").unwrap()().choose(&s).column, Some(0));
        let r = builtin("random").unwrap()().choose(&s).column.unwrap();
        assert_eq!(
            builtin("random").unwrap()().choose(&s).column,
            Some(r),
            "deterministic"
        );
    }
}
