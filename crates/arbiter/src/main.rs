//! `arbiter`: gauntlets, pairwise matches and SPRT tests between UCI engines.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use arbiter::engine::EngineSpec;
use arbiter::game::{Adjudication, GameConfig, Limit};
use arbiter::rules::{STARTPOS, parse_position};
use arbiter::tournament::{MatchConfig, run, text};
use clap::Parser;
use evidence::Sprt;

/// Play UCI engines against each other and report Elo with error bars.
///
/// Example: a gauntlet at 10+0.1, two games at a time, openings from a book:
///
///   arbiter --engine name=actuary cmd=target/release/actuary \
///           --engine name=glaurung cmd=/usr/games/glaurung \
///           --engine name=sf1 cmd=/usr/games/stockfish option.Skill\ Level=1 \
///           --book data/chess/books/2moves_v1.epd --tc 10+0.1 --games 100 \
///           --concurrency 2 --pgn gauntlet.pgn --report gauntlet.json
#[derive(Parser)]
#[command(name = "arbiter", version, verbatim_doc_comment)]
struct Cli {
    /// An engine: name=NAME cmd=PATH [arg=ARG ...] [option.NAME=VALUE ...]. Two or more.
    #[arg(long, num_args = 1.., required = true)]
    engine: Vec<String>,
    /// Openings: an EPD/FEN file, one position per line (each played twice, colours swapped).
    #[arg(long)]
    book: Option<PathBuf>,
    /// Book order: sequential or random (seeded by --seed).
    #[arg(long, default_value = "random")]
    book_order: String,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Time control BASE+INC in seconds, e.g. 10+0.1.
    #[arg(long, conflicts_with_all = ["nodes", "depth"])]
    tc: Option<String>,
    /// Fixed nodes per move.
    #[arg(long, conflicts_with = "depth")]
    nodes: Option<u64>,
    /// Fixed depth per move.
    #[arg(long)]
    depth: Option<u32>,
    /// Games per engine pair (rounded up to an even number).
    #[arg(long, default_value_t = 100)]
    games: u32,
    /// Games played at the same time.
    #[arg(long, default_value_t = 1)]
    concurrency: usize,
    /// Pentanomial SPRT, e.g. `--sprt elo0=0 elo1=5 [alpha=0.05 beta=0.05]` (logistic Elo).
    #[arg(long, num_args = 1..)]
    sprt: Option<Vec<String>>,
    /// Append every game to this PGN file.
    #[arg(long)]
    pgn: Option<PathBuf>,
    /// Write the final report as JSON here.
    #[arg(long)]
    report: Option<PathBuf>,
    /// With more than two engines, play every pair instead of a gauntlet of the first.
    #[arg(long)]
    round_robin: bool,
    /// Clock tolerance before a time forfeit, ms.
    #[arg(long, default_value_t = 50)]
    timemargin: u64,
    /// Seconds a fixed nodes/depth search may take before the engine counts as hung.
    #[arg(long, default_value_t = 60)]
    hang_timeout: u64,
    /// Score adjudication (off by default): RESIGN_CP,RESIGN_MOVES,DRAW_CP,DRAW_MOVES,DRAW_AFTER, e.g. 1000,3,10,8,40.
    #[arg(long)]
    adjudicate: Option<String>,
    #[arg(long, default_value = "actuary match")]
    event: String,
    #[arg(long)]
    quiet: bool,
}

/// The words of each `--engine` occurrence (clap flattens them; the grouping matters).
fn engine_groups(args: impl Iterator<Item = String>) -> Vec<Vec<String>> {
    let mut groups: Vec<Vec<String>> = Vec::new();
    let mut inside = false;
    for a in args {
        if a == "--engine" {
            groups.push(Vec::new());
            inside = true;
        } else if a.starts_with("--") {
            inside = false;
        } else if inside {
            groups.last_mut().expect("an --engine group").push(a);
        }
    }
    groups
}

fn parse_sprt(words: &[String]) -> Result<Sprt, String> {
    let mut s = Sprt::new(0.0, 5.0);
    for w in words {
        let (k, v) = w
            .split_once('=')
            .ok_or_else(|| format!("bad --sprt `{w}`: elo0=, elo1=, alpha=, beta="))?;
        let v: f64 = v.parse().map_err(|_| format!("bad --sprt value `{w}`"))?;
        match k {
            "elo0" => s.elo0 = v,
            "elo1" => s.elo1 = v,
            "alpha" => s.alpha = v,
            "beta" => s.beta = v,
            _ => return Err(format!("bad --sprt `{w}`")),
        }
    }
    if s.elo1 <= s.elo0 {
        return Err("--sprt needs elo1 > elo0".into());
    }
    Ok(s)
}

fn real_main() -> Result<(), String> {
    let cli = Cli::parse();
    let _ = &cli.engine; // parsed by clap for --help and validation; grouped below
    let engines = engine_groups(std::env::args().skip(1))
        .iter()
        .map(|w| EngineSpec::parse(w))
        .collect::<Result<Vec<_>, _>>()?;
    let limit = match (cli.tc.as_deref(), cli.nodes, cli.depth) {
        (Some(tc), _, _) => Limit::parse_tc(tc)?,
        (_, Some(n), _) => Limit::Nodes(n),
        (_, _, Some(d)) => Limit::Depth(d),
        _ => return Err("give one of --tc, --nodes or --depth".into()),
    };
    let openings = match &cli.book {
        Some(p) => {
            let text = std::fs::read_to_string(p).map_err(|e| format!("{}: {e}", p.display()))?;
            text.lines()
                .enumerate()
                .filter(|(_, l)| !l.trim().is_empty() && !l.starts_with('#'))
                .map(|(i, l)| {
                    parse_position(l).map_err(|e| format!("{}:{}: {e}", p.display(), i + 1))
                })
                .collect::<Result<Vec<_>, _>>()?
        }
        None => vec![parse_position(STARTPOS)?],
    };
    let adjudication = match &cli.adjudicate {
        None => None,
        Some(s) => {
            let v: Vec<i64> = s
                .split(',')
                .map(|x| {
                    x.trim()
                        .parse()
                        .map_err(|_| format!("bad --adjudicate `{s}`"))
                })
                .collect::<Result<_, _>>()?;
            let [rc, rm, dc, dm, da] = v[..] else {
                return Err(format!("bad --adjudicate `{s}`: five numbers"));
            };
            Some(Adjudication {
                resign_cp: rc as i32,
                resign_moves: rm as u32,
                draw_cp: dc as i32,
                draw_moves: dm as u32,
                draw_after: da as u32,
            })
        }
    };
    let random_openings = match cli.book_order.as_str() {
        "random" => true,
        "sequential" => false,
        o => return Err(format!("bad --book-order `{o}`: random or sequential")),
    };
    let cfg = MatchConfig {
        engines,
        round_robin: cli.round_robin,
        openings,
        random_openings,
        seed: cli.seed,
        games: cli.games,
        concurrency: cli.concurrency,
        game: GameConfig {
            limit,
            margin_ms: cli.timemargin,
            hang_timeout: Duration::from_secs(cli.hang_timeout),
            adjudication,
        },
        sprt: cli.sprt.as_deref().map(parse_sprt).transpose()?,
        pgn: cli.pgn.clone(),
        event: cli.event.clone(),
        quiet: cli.quiet,
    };
    let report = run(&cfg)?;
    print!("{}", text(&report));
    let json = serde_json::to_string_pretty(&report).map_err(|e| e.to_string())? + "\n";
    match &cli.report {
        Some(p) => evidence::atomic_write(p, json.as_bytes()).map_err(|e| e.to_string())?,
        None => println!("{json}"),
    }
    Ok(())
}

fn main() -> ExitCode {
    match real_main() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}
