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

/// Parse `dNsK` (e.g. `d3s7`) into (depth, samples): depth 1–8, samples 1–64.
pub fn parse_depth_samples(s: &str) -> Option<(u32, u32)> {
    let rest = s.strip_prefix('d')?;
    let (d, k) = rest.split_once('s')?;
    let (d, k) = (d.parse().ok()?, k.parse().ok()?);
    ((1..=8).contains(&d) && (1..=64).contains(&k)).then_some((d, k))
}

/// [`parse_depth_samples`] with a refusal that says what is accepted (a training run's
/// `--validation-search`).
pub fn depth_samples(s: &str) -> Result<(u32, u32), PolicyError> {
    parse_depth_samples(s).ok_or_else(|| PolicyError::DepthSamples(s.to_owned()))
}

/// Parse a search name: `dNsK` (e.g. `d3s7`), optionally `-topJ` (e.g. `d4s7-top3`): at the
/// last depth only the J root columns the previous iteration valued best are searched
/// ([`SearchConfig::final_top`], J 1–6; a risky shortcut priced by `drop7 topk`).
pub fn parse_search(s: &str) -> Option<(u32, u32, Option<u32>)> {
    let (dk, top) = match s.split_once("-top") {
        Some((dk, j)) => {
            let j = j.parse::<u32>().ok().filter(|j| (1..=6).contains(j))?;
            (dk, Some(j))
        }
        None => (s, None),
    };
    let (d, k) = parse_depth_samples(dk)?;
    // At depth 1 there is no previous iteration to rank the columns.
    (top.is_none() || d >= 2).then_some((d, k, top))
}

/// The `-topJ` suffix of a search name (empty for the full search).
pub fn top_suffix(top: Option<u32>) -> String {
    top.map(|j| format!("-top{j}")).unwrap_or_default()
}

/// A policy this crate builds, by name.
///
/// `random` is a uniform choice driven by a hash of the public state (a fair policy: it sees
/// only what a policy may see); `trace-random` is the reference trace format's policy, whose
/// stream is seeded by the *game seed* — that makes it reproduce the reference traces, and
/// also makes it no policy at all in the SPEC's sense, so it exists only for `trace` and the
/// simulator benchmark and has no factory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BuiltinPolicy {
    Random,
    TraceRandom,
    Center,
    Leftmost,
    /// Fair expectimax with the frozen 18-term leaf: depth, samples, and (`-topJ`) the root
    /// columns searched at the last depth.
    Fair {
        depth: u32,
        samples: u32,
        top: Option<u32>,
    },
}

/// A policy name that does not parse, or a policy that cannot play whole games.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PolicyError {
    #[error("unknown policy `{0}`: expected one of {BUILTIN_POLICIES}")]
    Unknown(String),
    #[error(
        "bad search `{0}`: expected dNsK with depth 1-8 and samples 1-64, e.g. d3s7, optionally -topJ with J 1-6 from depth 2, e.g. d4s7-top3"
    )]
    Search(String),
    #[error(
        "`trace-random` draws from the game seed, which a policy may not see: it exists only for `drop7 trace` and `drop7 bench`; use `random` to play games"
    )]
    NotAPolicy,
    #[error("`{0}` is not dNsK with depth 1-8 and samples 1-64, e.g. d3s7")]
    DepthSamples(String),
    #[error("`{0}` is not a search: expected fair-dNsK[-topJ], e.g. fair-d3s7")]
    NotASearch(String),
}

/// Names this crate knows.
pub const BUILTIN_POLICIES: &str =
    "random, trace-random, center, leftmost, fair-dNsK (e.g. fair-d3s7, fair-d4s7, fair-d4s7-top3)";

impl std::str::FromStr for BuiltinPolicy {
    type Err = PolicyError;
    fn from_str(s: &str) -> Result<Self, PolicyError> {
        Ok(match s {
            "random" => Self::Random,
            "trace-random" => Self::TraceRandom,
            "center" => Self::Center,
            "leftmost" => Self::Leftmost,
            _ => match s.strip_prefix("fair-") {
                Some(dk) => {
                    let (depth, samples, top) =
                        parse_search(dk).ok_or_else(|| PolicyError::Search(dk.to_owned()))?;
                    Self::Fair {
                        depth,
                        samples,
                        top,
                    }
                }
                None => return Err(PolicyError::Unknown(s.to_owned())),
            },
        })
    }
}

impl std::fmt::Display for BuiltinPolicy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Random => f.write_str("random"),
            Self::TraceRandom => f.write_str("trace-random"),
            Self::Center => f.write_str("center"),
            Self::Leftmost => f.write_str("leftmost"),
            Self::Fair {
                depth,
                samples,
                top,
            } => write!(f, "fair-d{depth}s{samples}{}", top_suffix(*top)),
        }
    }
}

/// A fair search named as a policy, `fair-dNsK[-topJ]` (`drop7 search --policy`, a batch
/// line's `"policy"`): the fields of [`BuiltinPolicy::Fair`], every other policy refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FairSearch {
    pub depth: u32,
    pub samples: u32,
    /// `-topJ`: only the J best root columns at the last depth.
    pub top: Option<u32>,
}

impl std::str::FromStr for FairSearch {
    type Err = PolicyError;
    fn from_str(s: &str) -> Result<Self, PolicyError> {
        match s.parse::<BuiltinPolicy>()? {
            BuiltinPolicy::Fair {
                depth,
                samples,
                top,
            } => Ok(Self {
                depth,
                samples,
                top,
            }),
            other => Err(PolicyError::NotASearch(other.to_string())),
        }
    }
}

impl FairSearch {
    /// The search's configuration, as the `fair-…` policy of the same name searches.
    pub fn config(self) -> SearchConfig {
        SearchConfig::fair(self.depth, self.samples).with_top(self.top)
    }
}

impl BuiltinPolicy {
    /// Fresh instances of the policy (one per worker thread), named as
    /// [`Display`](std::fmt::Display) writes it.
    pub fn factory(self) -> Result<PolicyFactory, PolicyError> {
        let f: PolicyFactory = match self {
            Self::TraceRandom => return Err(PolicyError::NotAPolicy),
            Self::Random => std::sync::Arc::new(|| Box::new(StateRandom) as Box<dyn Policy>),
            Self::Center => std::sync::Arc::new(|| {
                Box::new(Simple {
                    name: "center",
                    rule: center_column,
                }) as Box<dyn Policy>
            }),
            Self::Leftmost => std::sync::Arc::new(|| {
                Box::new(Simple {
                    name: "leftmost",
                    rule: leftmost_column,
                }) as Box<dyn Policy>
            }),
            Self::Fair {
                depth,
                samples,
                top,
            } => {
                let name = self.to_string();
                std::sync::Arc::new(move || {
                    Box::new(SearchPolicy::new(
                        name.clone(),
                        FairLeaf::default(),
                        SearchConfig::fair(depth, samples).with_top(top),
                    )) as Box<dyn Policy>
                })
            }
        };
        Ok(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> BuiltinPolicy {
        s.parse().unwrap()
    }

    #[test]
    fn names() {
        assert_eq!(parse_depth_samples("d3s7"), Some((3, 7)));
        assert_eq!(parse_depth_samples("d0s7"), None);
        assert_eq!(parse_depth_samples("d3"), None);
        assert_eq!(
            p("fair-d2s5"),
            BuiltinPolicy::Fair {
                depth: 2,
                samples: 5,
                top: None
            }
        );
        assert_eq!(parse_search("d4s7-top3"), Some((4, 7, Some(3))));
        assert_eq!(parse_search("d3s7"), Some((3, 7, None)));
        for bad in [
            "d4s7-top0",
            "d4s7-top7",
            "d1s7-top2",
            "d4s7-top",
            "d4s7-topx",
        ] {
            assert_eq!(parse_search(bad), None, "{bad}");
        }
        let e = "fair-d4s7-top9"
            .parse::<BuiltinPolicy>()
            .unwrap_err()
            .to_string();
        assert!(e.contains("-topJ with J 1-6"), "{e}");
        for name in [
            "random",
            "trace-random",
            "center",
            "leftmost",
            "fair-d4s7",
            "fair-d3s7-top2",
        ] {
            assert_eq!(p(name).to_string(), name);
        }
        let e = "fair-x".parse::<BuiltinPolicy>().unwrap_err().to_string();
        assert!(e.contains("dNsK"), "{e}");
        let e = "greedy".parse::<BuiltinPolicy>().unwrap_err().to_string();
        assert!(
            e.contains("unknown policy `greedy`") && e.contains("fair-dNsK"),
            "{e}"
        );
        assert_eq!(
            p("trace-random").factory().err(),
            Some(PolicyError::NotAPolicy)
        );
        let s = PublicState {
            board: Board::start(),
            next: 3,
            moves_remaining: 5,
        };
        let play = |name: &str| p(name).factory().unwrap()().choose(&s).column;
        assert_eq!(play("center"), Some(3));
        assert_eq!(play("leftmost"), Some(0));
        let r = play("random").unwrap();
        assert_eq!(play("random"), Some(r), "deterministic");
        assert_eq!(p("fair-d2s7").factory().unwrap()().name(), "fair-d2s7");
    }

    /// `dNsK` alone (a validation search) and `fair-dNsK[-topJ]` as a search, refused with
    /// the messages the command line prints.
    #[test]
    fn searches_by_name() {
        assert_eq!(depth_samples("d3s7"), Ok((3, 7)));
        assert_eq!(depth_samples("d8s64"), Ok((8, 64)));
        assert_eq!(
            depth_samples("d9s9").unwrap_err().to_string(),
            "`d9s9` is not dNsK with depth 1-8 and samples 1-64, e.g. d3s7"
        );
        assert_eq!(
            "fair-d4s7-top3".parse::<FairSearch>(),
            Ok(FairSearch {
                depth: 4,
                samples: 7,
                top: Some(3)
            })
        );
        let c = "fair-d4s5-top2".parse::<FairSearch>().unwrap().config();
        assert_eq!((c.depth, c.samples, c.final_top), (4, 5, Some(2)));
        assert_eq!(c.table, crate::search::TableKind::Direct(1 << 20));
        assert_eq!(
            "random".parse::<FairSearch>().unwrap_err().to_string(),
            "`random` is not a search: expected fair-dNsK[-topJ], e.g. fair-d3s7"
        );
        assert_eq!(
            "fair-d9s7".parse::<FairSearch>(),
            Err(PolicyError::Search("d9s7".into()))
        );
    }
}
