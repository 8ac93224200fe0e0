//! `arbiter`: gauntlets, pairwise matches and SPRT tests between UCI engines.
//!
//! Human text (the progress line and the final table) goes to stderr; the JSON report goes to
//! `--report FILE`, or to stdout when no `--report` is given, so stdout is only ever JSON.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, bail};
use arbiter::engine::{EngineField, EngineSpec};
use arbiter::game::{Adjudication, GameConfig, Limit};
use arbiter::rules::{STARTPOS, parse_position};
use arbiter::tournament::{MatchConfig, run, text};
use clap::error::ErrorKind;
use clap::{CommandFactory, FromArgMatches, Parser, ValueEnum};
use evidence::Sprt;

/// Play UCI engines against each other and report Elo with error bars.
///
/// Output: the progress line and the final table go to stderr; the JSON report goes to
/// the --report file, or to stdout without --report (stdout carries nothing else).
///
/// Example: a gauntlet at 10+0.1, two games at a time, openings from a book:
///
///   arbiter --engine name=actuary cmd=target/release/actuary \
///           --engine name=glaurung cmd=/usr/games/glaurung \
///           --engine name=sf1 cmd=/usr/games/stockfish option.Skill\ Level=1 \
///           --book data/chess/books/2moves_v1.epd --tc 10+0.1 --games 100 \
///           --concurrency 2 --pgn gauntlet.pgn --report gauntlet.json --log logs
#[derive(Parser)]
#[command(name = "arbiter", version, verbatim_doc_comment)]
#[command(group(clap::ArgGroup::new("limit").required(true).args(["tc", "nodes", "depth"])))]
struct Cli {
    /// An engine: name=NAME cmd=PATH [arg=ARG ...] [option.NAME=VALUE ...] (the name defaults
    /// to the command's file name; options are sent with setoption). Give two or more.
    #[arg(long, value_name = "KEY=VALUE", num_args = 1.., required = true, value_parser = parse_engine_field)]
    engine: Vec<EngineField>,
    /// Openings: an EPD/FEN file, one position per line (each played twice, colours swapped);
    /// the start position when omitted.
    #[arg(long, value_name = "FILE")]
    book: Option<PathBuf>,
    /// Order in which book positions are used.
    #[arg(long, value_enum, default_value_t = BookOrder::Random)]
    book_order: BookOrder,
    /// Seed of the random book order.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Time control BASE+INC in seconds, e.g. 10+0.1 (BASE alone: no increment).
    #[arg(long, value_name = "BASE+INC", value_parser = parse_tc)]
    tc: Option<Limit>,
    /// Fixed nodes per move (instead of a clock).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    nodes: Option<u64>,
    /// Fixed depth per move (instead of a clock).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    depth: Option<u32>,
    /// Games per engine pair (rounded up to an even number: game pairs).
    #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u32).range(1..))]
    games: u32,
    /// Games played at the same time.
    #[arg(long, default_value_t = 1,
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    concurrency: usize,
    /// Pentanomial SPRT on logistic Elo, e.g. `--sprt elo0=0 elo1=5 [alpha=0.05 beta=0.05]`
    /// (needs exactly two engines; elo1 > elo0, alpha and beta in (0, 1)).
    #[arg(long, value_name = "KEY=VALUE", num_args = 1.., value_parser = parse_sprt_param)]
    sprt: Option<Vec<SprtParam>>,
    /// Append every game to this PGN file.
    #[arg(long, value_name = "FILE")]
    pgn: Option<PathBuf>,
    /// Write the JSON report to this file instead of stdout.
    #[arg(long, value_name = "FILE")]
    report: Option<PathBuf>,
    /// Keep each engine process's stderr in DIR/<engine>-game<N>.log (N: the match's game
    /// number from 1); without it, engines' stderr is discarded.
    #[arg(long, value_name = "DIR")]
    log: Option<PathBuf>,
    /// With more than two engines, play every pair instead of a gauntlet of the first.
    #[arg(long)]
    round_robin: bool,
    /// Clock tolerance before a time forfeit, ms.
    #[arg(long, value_name = "MS", default_value_t = 50)]
    timemargin: u64,
    /// Seconds a fixed nodes/depth search may take before the engine counts as hung.
    #[arg(long, value_name = "SECONDS", default_value_t = 60,
          value_parser = clap::value_parser!(u64).range(1..))]
    hang_timeout: u64,
    /// Score adjudication (off by default): RESIGN_CP,RESIGN_MOVES,DRAW_CP,DRAW_MOVES,DRAW_AFTER,
    /// e.g. 1000,3,10,8,40 (resign when both engines see ≥ RESIGN_CP for RESIGN_MOVES moves each;
    /// draw when both see |score| ≤ DRAW_CP for DRAW_MOVES moves each after DRAW_AFTER moves).
    #[arg(long, value_name = "LIST", value_parser = parse_adjudication)]
    adjudicate: Option<Adjudication>,
    /// The PGN Event tag and the report's title.
    #[arg(long, default_value = "actuary match")]
    event: String,
    /// No progress line on stderr (the final table is still printed there).
    #[arg(long)]
    quiet: bool,
}

/// How the book is walked.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum BookOrder {
    /// Shuffled, seeded by --seed.
    Random,
    /// In file order.
    Sequential,
}

/// One `key=value` word of `--sprt`.
#[derive(Clone, Copy, Debug)]
enum SprtParam {
    Elo0(f64),
    Elo1(f64),
    Alpha(f64),
    Beta(f64),
}

fn parse_engine_field(w: &str) -> Result<EngineField, arbiter::engine::EngineSpecError> {
    w.parse()
}

fn parse_tc(s: &str) -> Result<Limit, arbiter::game::TcError> {
    Limit::parse_tc(s)
}

fn parse_adjudication(s: &str) -> Result<Adjudication, arbiter::game::AdjudicationError> {
    s.parse()
}

fn parse_sprt_param(w: &str) -> anyhow::Result<SprtParam> {
    const KEYS: &str = "expected elo0=, elo1=, alpha= or beta= with a number";
    let Some((k, v)) = w.split_once('=') else {
        bail!("{KEYS}");
    };
    let Ok(v) = v.parse::<f64>() else {
        bail!("`{v}` is not a number; {KEYS}");
    };
    if !v.is_finite() {
        bail!("`{v}` is not finite");
    }
    let probability = |v: f64| {
        if v > 0.0 && v < 1.0 {
            Ok(v)
        } else {
            Err(anyhow::anyhow!("{k} must be in (0, 1)"))
        }
    };
    Ok(match k {
        "elo0" => SprtParam::Elo0(v),
        "elo1" => SprtParam::Elo1(v),
        "alpha" => SprtParam::Alpha(probability(v)?),
        "beta" => SprtParam::Beta(probability(v)?),
        _ => bail!("unknown key `{k}`; {KEYS}"),
    })
}

/// A command-line error found after parsing, in clap's format (exit code 2).
fn usage_error(kind: ErrorKind, message: String) -> ! {
    Cli::command().error(kind, message).exit()
}

fn real_main() -> anyhow::Result<()> {
    let matches = Cli::command().get_matches();
    let cli = Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
    // clap keeps the values of each `--engine` occurrence together: one group per engine.
    let groups: Vec<Vec<EngineField>> = matches
        .get_occurrences::<EngineField>("engine")
        .map(|o| o.map(|g| g.cloned().collect()).collect())
        .unwrap_or_default();
    debug_assert_eq!(cli.engine.len(), groups.iter().map(Vec::len).sum::<usize>());
    let engines: Vec<EngineSpec> = groups
        .into_iter()
        .map(|fields| {
            EngineSpec::from_fields(fields).unwrap_or_else(|e| {
                usage_error(ErrorKind::ValueValidation, format!("--engine: {e}"))
            })
        })
        .collect();
    if engines.len() < 2 {
        usage_error(
            ErrorKind::TooFewValues,
            "give two or more --engine groups".into(),
        );
    }
    let sprt = cli.sprt.as_ref().map(|params| {
        let mut s = Sprt::new(0.0, 5.0);
        for p in params {
            match *p {
                SprtParam::Elo0(v) => s.elo0 = v,
                SprtParam::Elo1(v) => s.elo1 = v,
                SprtParam::Alpha(v) => s.alpha = v,
                SprtParam::Beta(v) => s.beta = v,
            }
        }
        if s.elo1 <= s.elo0 {
            usage_error(
                ErrorKind::ValueValidation,
                format!(
                    "--sprt needs elo1 > elo0 (got elo0={} elo1={})",
                    s.elo0, s.elo1
                ),
            );
        }
        s
    });
    let limit = match (cli.tc, cli.nodes, cli.depth) {
        (Some(tc), _, _) => tc,
        (_, Some(n), _) => Limit::Nodes(n),
        (_, _, Some(d)) => Limit::Depth(d),
        _ => unreachable!("clap requires one of --tc, --nodes, --depth"),
    };
    let openings = match &cli.book {
        Some(p) => {
            let text = std::fs::read_to_string(p)
                .with_context(|| format!("cannot read the book {}", p.display()))?;
            text.lines()
                .enumerate()
                .filter(|(_, l)| !l.trim().is_empty() && !l.starts_with('#'))
                .map(|(i, l)| {
                    parse_position(l).with_context(|| format!("{}:{}", p.display(), i + 1))
                })
                .collect::<anyhow::Result<Vec<_>>>()?
        }
        None => vec![parse_position(STARTPOS)?],
    };
    let cfg = MatchConfig {
        engines,
        round_robin: cli.round_robin,
        openings,
        random_openings: cli.book_order == BookOrder::Random,
        seed: cli.seed,
        games: cli.games,
        concurrency: cli.concurrency,
        game: GameConfig {
            limit,
            margin_ms: cli.timemargin,
            hang_timeout: Duration::from_secs(cli.hang_timeout),
            adjudication: cli.adjudicate,
        },
        sprt,
        pgn: cli.pgn.clone(),
        log_dir: cli.log.clone(),
        event: cli.event.clone(),
        quiet: cli.quiet,
    };
    let report = run(&cfg).context("the match cannot start")?;
    eprint!("{}", text(&report));
    let json = serde_json::to_string_pretty(&report)? + "\n";
    match &cli.report {
        Some(p) => evidence::atomic_write(p, json.as_bytes())
            .with_context(|| format!("cannot write the report {}", p.display()))?,
        None => print!("{json}"),
    }
    Ok(())
}

fn main() -> ExitCode {
    match real_main() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(2)
        }
    }
}
