//! `trace`, `step`, `show`, `bench`: the bare rules and their speed.

use std::io::BufWriter;
use std::time::Instant;

use anyhow::{Context, bail};
use clap::Args;
use drop7::game::{Game, TraceRandom};
use drop7::policy::BuiltinPolicy;
use drop7::rng::seed_hex;
use drop7::runner::{time_decisions, trace_random_block};
use drop7::seeds::{SeedBlock, parse_seed};
use drop7::trace::traced_move;
use ntuple::policy::PolicySpec;
use serde::Serialize;

use crate::args::{BoardArg, ModelArg};
use crate::output::{print_line, write_line};

#[derive(Args)]
pub struct TraceArgs {
    /// Game seed, decimal or 0x-hex (e.g. 0x2d700000).
    #[arg(long, allow_negative_numbers = true, value_parser = parse_seed)]
    seed: u32,
    /// Who plays: `trace-random` (the reference trace policy, a Mulberry32 stream from the
    /// seed: reproduces the reference traces), or any policy `play` takes (random, center,
    /// leftmost, fair-dNsK, ntuple-...).
    #[arg(long, default_value = "trace-random")]
    policy: PolicySpec,
    /// Stop after this many moves (the research cap is 2000).
    #[arg(long, allow_negative_numbers = true, default_value_t = 2000)]
    max_moves: u32,
    #[command(flatten)]
    model: ModelArg,
}

pub fn trace(a: TraceArgs) -> anyhow::Result<()> {
    let mut game = Game::new(a.seed).with_cap(a.max_moves);
    // the reference trace policy draws from the game seed, so it is not a `Policy`
    let mut trace_random = TraceRandom::new(a.seed);
    let mut policy = match &a.policy {
        PolicySpec::Builtin(BuiltinPolicy::TraceRandom) => None,
        spec => Some(a.model.factory(spec)?()),
    };
    let mut choose = |g: &Game| match policy.as_mut() {
        None => trace_random.choose(&g.board),
        Some(p) => p.choose(&g.public()).column,
    };
    let stdout = std::io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    while !game.finished() {
        let Some(column) = choose(&game) else {
            bail!("the policy gave no legal column in a live game");
        };
        let line = traced_move(&mut game, column)?;
        let text = serde_json::to_string(&line).expect("a trace line serialises");
        if !write_line(&mut out, &text)? {
            return Ok(());
        }
    }
    crate::output::flush(&mut out)
}

#[derive(Args)]
pub struct StepArgs {
    /// 49 digits, row-major from the top (0 empty, 1-7 numbered, 8 solid, 9 cracked), or
    /// `startpos`.
    #[arg(long)]
    board: BoardArg,
    /// The disc to drop, 1-7.
    #[arg(long, allow_negative_numbers = true)]
    next: u8,
    /// Moves until the next rise before this move, 1-5.
    #[arg(long, allow_negative_numbers = true)]
    rise: u8,
    /// Column 0-6.
    #[arg(long, allow_negative_numbers = true)]
    column: usize,
    /// Seed of the Mulberry32 reveal stream, used raw (not mixed), decimal or 0x-hex.
    #[arg(long, allow_negative_numbers = true, default_value = "0", value_parser = parse_seed)]
    reveal_seed: u32,
}

pub fn step(a: StepArgs) -> anyhow::Result<()> {
    let result = drop7::trace::step(&a.board.0, a.next, a.rise, a.column, a.reveal_seed)?;
    print_line(&serde_json::to_string(&result).expect("a step serialises"))
}

#[derive(Args)]
pub struct ShowArgs {
    /// 49 digits, row-major from the top; `startpos` for the opening board.
    #[arg(long)]
    board: BoardArg,
}

pub fn show(a: ShowArgs) -> anyhow::Result<()> {
    crate::output::print_text(&a.board.0.render())
}

#[derive(Args)]
pub struct BenchArgs {
    /// Time a policy's decisions instead of the bare simulator (e.g. fair-d3s7, fair-d4s7,
    /// ntuple-d3s7): it plays its own games from --start, and the first --decisions
    /// decisions are timed on one thread.
    #[arg(long)]
    policy: Option<PolicySpec>,
    /// Decisions to time with --policy (at least 1).
    #[arg(long, allow_negative_numbers = true, default_value_t = 50, value_parser = clap::value_parser!(u32).range(1..))]
    decisions: u32,
    /// First seed of the block, decimal or 0x-hex.
    #[arg(long, allow_negative_numbers = true, default_value = "0x2d700000", value_parser = parse_seed)]
    start: u32,
    /// Number of reference-random games (seeds start, start+1, ...) for the simulator bench.
    #[arg(long, allow_negative_numbers = true, default_value_t = 400_000)]
    games: u32,
    /// Print the result as one JSON object instead of text.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    model: ModelArg,
}

/// `bench --json` of the simulator: one compact object, keys in this order.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SimulatorBench {
    start: String,
    games: u64,
    moves: u64,
    score: u64,
    seconds: f64,
    moves_per_second: f64,
    threads: u32,
}

/// `bench --policy … --json`: one compact object, keys in this order.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct PolicyBench<'a> {
    policy: &'a str,
    start: String,
    decisions: u32,
    seconds_per_decision: f64,
    worst_seconds: f64,
    work_per_decision: f64,
    work_per_second: f64,
    threads: u32,
}

pub fn bench(a: BenchArgs) -> anyhow::Result<()> {
    if let Some(spec) = &a.policy {
        return bench_policy(&a, spec);
    }
    let block = SeedBlock::new(a.start, a.games as u64).context("--start/--games")?;
    let t0 = Instant::now();
    let totals = trace_random_block(block);
    let secs = t0.elapsed().as_secs_f64();
    let mps = totals.moves as f64 / secs;
    if a.json {
        let j = SimulatorBench {
            start: seed_hex(a.start),
            games: totals.games,
            moves: totals.moves,
            score: totals.score,
            seconds: secs,
            moves_per_second: mps,
            threads: 1,
        };
        print_line(&serde_json::to_string(&j).expect("a bench serialises"))
    } else {
        print_line(&format!(
            "seeds {block}  games {}  moves {}  total score {}\ntime {secs:.3} s  {:.2} M moves/s  {:.0} games/s (1 thread)",
            totals.games,
            totals.moves,
            totals.score,
            mps / 1e6,
            totals.games as f64 / secs
        ))
    }
}

/// Time single-thread decisions of a policy along its own games from `start`.
fn bench_policy(a: &BenchArgs, spec: &PolicySpec) -> anyhow::Result<()> {
    let mut policy = a.model.factory(spec)?();
    let bar = crate::progress::decisions_bar(a.decisions as u64);
    let t = time_decisions(policy.as_mut(), a.start, a.decisions, || bar.inc(1))?;
    bar.finish_and_clear();
    let n = t.decisions as f64;
    let per = t.seconds / n;
    let name = policy.name();
    if a.json {
        let j = PolicyBench {
            policy: name,
            start: seed_hex(a.start),
            decisions: t.decisions,
            seconds_per_decision: per,
            worst_seconds: t.worst_seconds,
            work_per_decision: t.work as f64 / n,
            work_per_second: t.work as f64 / t.seconds,
            threads: 1,
        };
        print_line(&serde_json::to_string(&j).expect("a bench serialises"))
    } else {
        print_line(&format!(
            "{name}: {} decisions from {}  {:.1} ms/decision (worst {:.1} ms)  work/decision {:.0}  {:.2} M work/s (1 thread)",
            t.decisions,
            seed_hex(a.start),
            per * 1e3,
            t.worst_seconds * 1e3,
            t.work as f64 / n,
            t.work as f64 / t.seconds / 1e6
        ))
    }
}
