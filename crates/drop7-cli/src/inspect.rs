//! Parity and debugging tools: `drop7 leaf`, `drop7 search` (single state or `--batch` JSON
//! lines on stdin) and the D7P protocol server.

use anyhow::{Context, bail};
use clap::Args;
use drop7::game::PublicState;
use drop7::policy::FairSearch;
use drop7::protocol::{D7pSession, StreamError, decision_json, leaf_json, serve_batch, serve_d7p};
use drop7::search::{FairLeaf, SearchConfig, Searcher, TableChoice};
use ntuple::policy::PolicySpec;
use serde::Serialize;
use serde_json::Value;

use crate::args::{BoardArg, ModelArg};
use crate::output::{print_line, print_text};

#[derive(Args)]
pub struct StateArgs {
    /// 49 digits, row-major from the top (or `startpos`).
    #[arg(long, required_unless_present = "batch")]
    board: Option<BoardArg>,
    /// The disc to drop, 1-7.
    #[arg(long, allow_negative_numbers = true, required_unless_present = "batch", value_parser = clap::value_parser!(u8).range(1..=7))]
    next: Option<u8>,
    /// Moves until the next rise, 1-5.
    #[arg(long, allow_negative_numbers = true, required_unless_present = "batch", value_parser = clap::value_parser!(u8).range(1..=5))]
    rise: Option<u8>,
    /// Read JSON lines {"board","next","rise"[,"policy"]} on stdin; one JSON line out per line
    /// in (a bad line gets {"line","error"} and the batch goes on).
    #[arg(long, conflicts_with_all = ["board", "next", "rise"])]
    batch: bool,
}

#[derive(Args)]
pub struct SearchArgs {
    #[command(flatten)]
    state: StateArgs,
    /// The search, fair-dNsK (e.g. fair-d3s7), optionally -topJ (only the best J root columns
    /// at the last depth, e.g. fair-d4s7-top3); a batch line's "policy" field overrides it.
    #[arg(long, default_value = "fair-d3s7")]
    policy: FairSearch,
    /// Transposition table: none (the reference's table-free work counts), exact (the
    /// reference LRU's counts), default (the deployment table), or a direct-mapped size of
    /// 1 to 67108864 entries (48 bytes each, rounded up to a power of two).
    #[arg(long, allow_negative_numbers = true, default_value = "default")]
    table: TableChoice,
}

/// A batch line's "policy": absent, or a `fair-dNsK` string.
fn line_policy(v: &Value) -> anyhow::Result<Option<FairSearch>> {
    match &v["policy"] {
        Value::Null => Ok(None),
        Value::String(p) => Ok(Some(p.parse()?)),
        p => bail!("\"policy\" is {p}: expected a string such as \"fair-d3s7\""),
    }
}

/// What `search` prints for a state: the library's decision object and, last, how long the
/// search took.
#[derive(Serialize)]
struct TimedDecision {
    #[serde(flatten)]
    decision: Value,
    seconds: f64,
}

/// Search `s` with `cfg`, timed: the object `search` prints for the state.
fn search_json(s: &PublicState, cfg: SearchConfig) -> Value {
    let t0 = std::time::Instant::now();
    let d = Searcher::new(FairLeaf::default(), cfg).decide(s);
    let timed = TimedDecision {
        decision: decision_json(s, &cfg, &d),
        seconds: t0.elapsed().as_secs_f64(),
    };
    serde_json::to_value(timed).expect("a decision serialises")
}

/// Run `f` on one state from the flags, or on every stdin line with `--batch`
/// ([`drop7::protocol::serve_batch`]: a bad line is answered with its error, the batch goes on).
fn each_state(
    a: &StateArgs,
    mut f: impl FnMut(&PublicState, &Value) -> anyhow::Result<Value>,
) -> anyhow::Result<()> {
    if a.batch {
        let mut out = std::io::stdout().lock();
        return quiet_if_gone(serve_batch(std::io::stdin().lock(), &mut out, |s, v| {
            f(s, v).map_err(|e| format!("{e:#}"))
        }));
    }
    let (Some(b), Some(n), Some(r)) = (a.board, a.next, a.rise) else {
        bail!("--board, --next and --rise are required without --batch");
    };
    let s = PublicState::checked(b.0, n as u64, r as u64)?;
    print_line(&f(&s, &Value::Null)?.to_string())
}

/// A line protocol's end: a reader that went away (`| head`) is a normal end.
fn quiet_if_gone(r: Result<(), StreamError>) -> anyhow::Result<()> {
    match r {
        Err(e) if !e.reader_gone() => Err(e.into()),
        _ => Ok(()),
    }
}

pub fn leaf(a: StateArgs) -> anyhow::Result<()> {
    each_state(&a, |s, _| Ok(leaf_json(s)))
}

pub fn search(a: SearchArgs) -> anyhow::Result<()> {
    let default_cfg = a.table.apply(a.policy.config());
    each_state(&a.state, |s, v| {
        let cfg = match line_policy(v)? {
            Some(p) => a.table.apply(p.config()),
            None => default_cfg,
        };
        Ok(search_json(s, cfg))
    })
}

#[derive(Args)]
pub struct D7pArgs {
    /// The policy that answers `go` (any `play` policy).
    #[arg(long)]
    policy: PolicySpec,
    #[command(flatten)]
    model: ModelArg,
}

/// The D7P line protocol ([`drop7::protocol::serve_d7p`]) on stdin/stdout.
pub fn d7p(a: D7pArgs) -> anyhow::Result<()> {
    let mut session = D7pSession::new(a.model.factory(&a.policy)?(), a.policy.to_string());
    let mut out = std::io::stdout().lock();
    quiet_if_gone(serve_d7p(&mut session, std::io::stdin().lock(), &mut out))
}

/// `drop7 topk`: price searching only the best k root columns at the last depth.
#[derive(Args)]
pub struct TopkArgs {
    /// The search to restrict: fair-dNsK, or ntuple-dNsK with its model.
    #[arg(long, default_value = "fair-d4s7")]
    policy: PolicySpec,
    /// The values of k to price (1-6), comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "1,2,3,4",
          value_parser = clap::value_parser!(u32).range(1..=6))]
    k: Vec<u32>,
    /// The games the positions come from, START:COUNT (fresh seeds: a block used by no
    /// screen or training).
    #[arg(long)]
    seeds: drop7::SeedBlock,
    /// Take every N-th position of each game.
    #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u64).range(1..=1000))]
    every: u64,
    /// The policy that plays those games.
    #[arg(long, default_value = "fair-d1s7")]
    games_policy: PolicySpec,
    /// Worker threads (0 = all cores).
    #[arg(long, default_value_t = 0)]
    threads: usize,
    #[command(flatten)]
    model: ModelArg,
}

/// The study as JSON: per k, how often the choice differs (Wilson and game-clustered
/// bootstrap), the mean regret in points with its bootstrap upper bound, the work ratio.
pub fn topk(a: TopkArgs) -> anyhow::Result<()> {
    drop7::runner::check_threads(a.threads)?;
    let mut models = a.model.models();
    let (depth, samples, tables) = a.policy.full_search(&mut models).context("--policy")?;
    let mut player = a.games_policy.factory(&mut models)?();
    let positions = drop7::topk::positions_from_games(a.seeds.seeds(), a.every as usize, |s| {
        player.choose(s).column
    });
    // nothing to price is a failed run, not an empty study reported as a result
    anyhow::ensure!(
        !positions.is_empty(),
        "topk: no position: every game of {} ended before move {} (lower --every)",
        a.seeds,
        a.every
    );
    let threads = match a.threads {
        0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
        t => t,
    };
    eprintln!(
        "topk: {} positions from {} games; {} at every k in {:?}, {threads} threads",
        positions.len(),
        a.seeds,
        a.policy,
        a.k
    );
    let bar = crate::progress::positions_bar(positions.len() as u64);
    let cfg = SearchConfig::fair(depth, samples);
    let tick = || bar.inc(1);
    let study = match tables {
        None => drop7::topk::study(&positions, cfg, &a.k, FairLeaf::default, threads, tick),
        Some(t) => {
            let leaf = || ntuple::play::NTupleLeaf::new(std::sync::Arc::clone(&t));
            drop7::topk::study(&positions, cfg, &a.k, leaf, threads, tick)
        }
    };
    bar.finish_and_clear();
    print_text(&(serde_json::to_string_pretty(&study)? + "\n"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        /// A batch line's "policy": a search or a refusal, never a panic. (States and D7P
        /// lines are the library's: `drop7::protocol` tests them.)
        #[test]
        fn any_policy_field_parses_or_is_refused(
            policy in prop_oneof![Just(Value::Null), "fair-d[0-9]s[0-9]{1,3}(-top[0-9])?".prop_map(Value::from),
                                  any::<i32>().prop_map(Value::from), "\\PC{0,12}".prop_map(Value::from)],
        ) {
            if let Ok(Some(FairSearch { depth: d, samples: k, top })) = line_policy(&serde_json::json!({"policy": policy})) {
                prop_assert!((1..=8).contains(&d) && (1..=64).contains(&k));
                prop_assert!(top.is_none_or(|j| (1..=6).contains(&j) && d >= 2));
            }
        }
    }
}
