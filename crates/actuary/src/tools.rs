//! The engine's own subcommands (`bench`, `perft`, `perft-suite`, `suite`): their
//! arguments and output; the work is in the `chess` library. With the `lab` feature the
//! laboratory's subcommands (`chess_lab::LabCommand`) join them.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

use anyhow::Context;
use chess::bench::{DEFAULT_BENCH_DEPTH, run_bench_opts};
use chess::board::Board;
use chess::eval::LazyMargins;
use chess::perft::perft_divide_with;
use chess::search::prune::PruneConfig;
use chess::search::smp::exit_breakdown;
use chess::suite::{SuiteLimit, print_report, run_suite_with};

/// The `actuary` subcommands (UCI when none is given).
#[derive(Debug, clap::Subcommand)]
pub enum Tool {
    /// Search the fixed bench positions to a fixed depth; the last line is
    /// `Bench: <nodes> nodes <nps> nps` (the node count is the build's signature for OpenBench).
    Bench(BenchArgs),
    /// Count the leaf nodes of the legal move tree, per root move and in total.
    Perft(PerftArgs),
    /// Check every position of a perft suite (`FEN ;D1 n ;D2 n ...`) up to a depth.
    PerftSuite(PerftSuiteArgs),
    /// Search every position of an EPD test suite and check its `bm`/`am` moves (and the
    /// `c8`/`c9` points of STS files).
    Suite(SuiteArgs),
    /// Print the search constants SPSA may tune as OpenBench's SPSA input, one
    /// `name, int, value, min, max, c_end, r_end` line each (the UCI option is the name).
    SpsaInput(SpsaInputArgs),
    #[cfg(feature = "lab")]
    #[command(flatten)]
    Lab(chess_lab::LabCommand),
}

impl Tool {
    /// Run the tool; the exit code says whether its checks passed.
    pub fn run(&self) -> anyhow::Result<ExitCode> {
        match self {
            Tool::Bench(a) => a.run(),
            Tool::Perft(a) => a.run(),
            Tool::PerftSuite(a) => a.run(),
            Tool::Suite(a) => a.run(),
            Tool::SpsaInput(a) => {
                if a.markdown {
                    print!("{}", chess::search::params::tunables_markdown());
                    println!();
                    print!("{}", chess::search::prune::switches_markdown());
                } else {
                    for l in chess::search::params::spsa_lines(&Default::default()) {
                        println!("{l}");
                    }
                }
                Ok(ExitCode::SUCCESS)
            }
            #[cfg(feature = "lab")]
            Tool::Lab(c) => Ok(c.run()?),
        }
    }
}

/// The most bytes an input file (an EPD or perft suite) may have: the largest suites in use
/// (STS, 1500 positions) are well under 1 MB, so 64 MB is generous and still refuses
/// `/dev/zero` or a wrong file before it is read into memory.
const MAX_SUITE_BYTES: u64 = 64 << 20;

/// A whole input file (a regular file, at most [`MAX_SUITE_BYTES`]), or an error naming it.
fn read(path: &Path) -> anyhow::Result<String> {
    fileio::read_to_string(path, MAX_SUITE_BYTES)
        .map_err(fileio::FileError::into_io)
        .with_context(|| format!("cannot read {}", path.display()))
}

/// `actuary spsa-input [--markdown]`.
#[derive(Debug, clap::Args)]
pub struct SpsaInputArgs {
    /// Print the tables of docs/chess/search.md instead: the constants (option, default,
    /// range, step, meaning), then the mechanisms' switches (values, default, meaning).
    #[arg(long)]
    pub markdown: bool,
}

/// `actuary bench [DEPTH] [--lazy-eval [--tables FILE]] [--set SWITCHES]`.
#[derive(Debug, clap::Args)]
pub struct BenchArgs {
    /// Search depth for every position (the signature is defined at the default).
    #[arg(default_value_t = DEFAULT_BENCH_DEPTH, value_parser = clap::value_parser!(i32).range(1..))]
    pub depth: i32,
    /// Research flag: search with lazy evaluation exits (UCI `LazyEval true`). The signature
    /// is defined with them off.
    #[arg(long)]
    pub lazy_eval: bool,
    /// Margin tables for --lazy-eval: the hand evaluation's (`actuary calibrate tables`) with
    /// `--eval hce`, the net's (`actuary calibrate net-residual`) with `--eval nnue`
    /// [default: the tables built into the engine].
    #[arg(long, value_name = "FILE", requires = "lazy_eval")]
    pub tables: Option<std::path::PathBuf>,
    /// Research flag: pruning switches `name=value[,...]` (the UCI `prune.*` options without
    /// the prefix, e.g. `gate=classic,lmp=table`). The signature is defined without them.
    #[arg(long, value_name = "SWITCHES", default_value = "")]
    pub set: String,
    /// The evaluation, `nnue` (the learned one) or `hce` (the hand evaluation), as UCI `Eval`
    /// [default: nnue; hce with --lazy-eval, as before the net had lazy exits]. The
    /// signature is defined with `nnue` and the embedded net.
    #[arg(long, value_name = "EVAL",
          value_parser = clap::builder::PossibleValuesParser::new(["hce", "nnue"]))]
    pub eval: Option<String>,
    /// The network for --eval nnue (UCI `EvalFile`) [default: the net built into the engine].
    #[arg(long, value_name = "FILE")]
    pub eval_file: Option<std::path::PathBuf>,
    /// The instruction set of the net's inference loops: `portable`, `avx2` or `avx512`
    /// [default: the widest this CPU runs]. Every path computes the same numbers (the
    /// signature does not change), so this is for comparing their speed.
    #[arg(long, value_name = "PATH", value_parser = chess::nnue::Simd::parse)]
    pub simd: Option<chess::nnue::Simd>,
}

impl BenchArgs {
    /// One line per position, then the evaluation exit breakdown, then
    /// `Bench: <nodes> nodes <nps> nps` (OpenBench parses the last line).
    pub fn run(&self) -> anyhow::Result<ExitCode> {
        let eval = match (self.eval.as_deref(), self.lazy_eval) {
            (Some(e), _) => e,
            (None, true) => "hce",
            (None, false) => "nnue",
        };
        // --lazy-eval: the hand evaluation's tiers with `hce`, the net's exits with `nnue`.
        let (lazy, net_lazy) = match (self.lazy_eval, eval) {
            (false, _) => (None, None),
            (true, "hce") => (
                Some(Arc::new(match &self.tables {
                    Some(p) => LazyMargins::load(p)?,
                    None => (*LazyMargins::embedded()).clone(),
                })),
                None,
            ),
            (true, _) => (
                None,
                Some(match &self.tables {
                    Some(p) => Arc::new(chess::eval::netlazy::NetLazyMargins::load(p)?),
                    None => chess::eval::netlazy::NetLazyMargins::embedded(),
                }),
            ),
        };
        let prune = switches(&self.set)?;
        if let Some(path) = self.simd {
            path.choose().map_err(|e| anyhow::anyhow!("--simd: {e}"))?;
        }
        let net = network(eval, self.eval_file.as_deref())?;
        let opts = chess::search::smp::SearchOptions {
            lazy,
            net_lazy,
            prune,
            net,
            ..Default::default()
        };
        let r = run_bench_opts(self.depth, true, opts);
        println!("Eval exits: {}", exit_breakdown(&r.exits));
        if eval == "nnue" {
            println!("SIMD: {}", chess::nnue::Simd::chosen().name());
        }
        println!("Bench: {} nodes {} nps", r.nodes, r.nps);
        Ok(ExitCode::SUCCESS)
    }
}

/// The defaults with `--set SWITCHES` applied.
fn switches(set: &str) -> anyhow::Result<PruneConfig> {
    let mut prune = PruneConfig::default();
    prune
        .set_all(set)
        .map_err(|e| anyhow::anyhow!("--set: {e}"))?;
    Ok(prune)
}

/// The network `--eval EVAL [--eval-file FILE]` asks for: `None` for the hand evaluation.
fn network(
    eval: &str,
    eval_file: Option<&Path>,
) -> anyhow::Result<Option<Arc<chess::nnue::Network>>> {
    if eval == "hce" && eval_file.is_some() {
        anyhow::bail!("--eval-file: a network file needs --eval nnue (the evaluation is hce)");
    }
    Ok(match (eval_file, eval) {
        (_, "hce") => None,
        (Some(p), _) => {
            Some(Arc::new(chess::nnue::Network::load(p).map_err(|e| {
                anyhow::anyhow!("--eval-file {}: {e}", p.display())
            })?))
        }
        (None, _) => Some(chess::nnue::Network::embedded()),
    })
}

/// `actuary perft <DEPTH> [FEN...]`.
#[derive(Debug, clap::Args)]
pub struct PerftArgs {
    /// Chess960: read X-FEN/Shredder-FEN castling and print castling moves king-takes-rook
    /// (as Stockfish does with `UCI_Chess960`).
    #[arg(long)]
    pub chess960: bool,
    /// Depth in plies.
    pub depth: u32,
    /// The position as FEN, quoted or not (4 to 6 fields; clocks default to `0 1`); the start
    /// position when omitted.
    #[arg(num_args = 0.., allow_hyphen_values = true, trailing_var_arg = true)]
    pub fen: Vec<String>,
}

impl PerftArgs {
    /// `move: count` per root move, then `Nodes searched: <total>` (Stockfish's format).
    pub fn run(&self) -> anyhow::Result<ExitCode> {
        let board = if self.fen.is_empty() {
            Board::default()
        } else {
            chess::board::parse_fen_with(&self.fen.join(" "), self.chess960)?
        };
        let start = Instant::now();
        let (lines, total) = perft_divide_with(&board, self.depth, self.chess960);
        for (m, n) in lines {
            println!("{m}: {n}");
        }
        println!();
        eprintln!("time {} ms", start.elapsed().as_millis());
        println!("Nodes searched: {total}");
        Ok(ExitCode::SUCCESS)
    }
}

/// `actuary perft-suite <FILE> [MAX_DEPTH]`.
#[derive(Debug, clap::Args)]
pub struct PerftSuiteArgs {
    /// Perft suite, one `FEN ;D1 n ;D2 n ...` line per position (`#` lines are comments).
    pub file: PathBuf,
    /// Check every position at depths 1 to this one.
    #[arg(default_value_t = 5, value_parser = clap::value_parser!(u32).range(1..))]
    pub max_depth: u32,
}

impl PerftSuiteArgs {
    /// A `FAIL` line per wrong count and a `BAD` line per line that cannot be read (the
    /// rest of the suite still runs), then a summary; exit 1 on any of them. A suite with
    /// nothing to check up to the depth (no `;D1`..`;Dn` counts) is refused (exit 2).
    pub fn run(&self) -> anyhow::Result<ExitCode> {
        let text = read(&self.file)?;
        let start = Instant::now();
        let depth = self.max_depth;
        let (checks, unreadable) = chess::perft::run_perft_suite_lenient(&text, depth);
        if checks.is_empty() && unreadable.is_empty() {
            anyhow::bail!(
                "{}: no ;D1..;D{depth} counts to check (a perft suite line is `FEN ;D1 n ;D2 n ...`)",
                self.file.display()
            );
        }
        let bad: Vec<_> = checks.iter().filter(|c| c.got != c.expected).collect();
        for c in &bad {
            println!(
                "FAIL line {} depth {}: expected {} got {} ({})",
                c.line, c.depth, c.expected, c.got, c.fen
            );
        }
        for e in &unreadable {
            // The error and its causes on one line (`line 3: ...: why`).
            let mut text = e.to_string();
            let mut cause = std::error::Error::source(e);
            while let Some(c) = cause {
                text.push_str(&format!(": {c}"));
                cause = c.source();
            }
            println!("BAD {text}");
        }
        println!(
            "perft suite: {}/{} checks correct up to depth {depth}{} in {} ms",
            checks.len() - bad.len(),
            checks.len(),
            if unreadable.is_empty() {
                String::new()
            } else {
                format!(", {} unreadable line(s)", unreadable.len())
            },
            start.elapsed().as_millis()
        );
        Ok(if bad.is_empty() && unreadable.is_empty() {
            ExitCode::SUCCESS
        } else {
            ExitCode::FAILURE
        })
    }
}

/// `actuary suite <FILE> [--depth N | --nodes N | --movetime MS] [--hash MB] [--verbose]
/// [--eval nnue|hce] [--eval-file FILE] [--set SWITCHES]`.
#[derive(Debug, clap::Args)]
pub struct SuiteArgs {
    /// EPD file: positions with `bm` (best move) or `am` (avoid move) operations; STS files
    /// also carry `c8`/`c9` points, which are scored.
    pub file: PathBuf,
    /// Search every position to this depth.
    #[arg(long, group = "limit", value_parser = clap::value_parser!(i32).range(1..))]
    pub depth: Option<i32>,
    /// Search every position for this many nodes.
    #[arg(long, group = "limit", value_parser = clap::value_parser!(u64).range(1..))]
    pub nodes: Option<u64>,
    /// Search every position for this many milliseconds [default when no limit is given: 1000].
    #[arg(long, value_name = "MS", group = "limit", value_parser = clap::value_parser!(u64).range(1..))]
    pub movetime: Option<u64>,
    /// Transposition table size in MB (cleared before every position).
    #[arg(long, value_name = "MB", default_value_t = 64,
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=chess::uci::HASH_MAX as u64))]
    pub hash: usize,
    /// One line per position on stderr as the suite runs.
    #[arg(long)]
    pub verbose: bool,
    /// The evaluation, `nnue` (the learned one) or `hce` (the hand evaluation), as UCI `Eval`.
    #[arg(long, value_name = "EVAL", default_value = "nnue",
          value_parser = clap::builder::PossibleValuesParser::new(["hce", "nnue"]))]
    pub eval: String,
    /// The network for --eval nnue (UCI `EvalFile`) [default: the net built into the engine].
    #[arg(long, value_name = "FILE")]
    pub eval_file: Option<PathBuf>,
    /// Pruning switches `name=value[,...]` (the UCI `prune.*` options without the prefix,
    /// e.g. `se=off,lmp=table`) [default: the engine's defaults].
    #[arg(long, value_name = "SWITCHES", default_value = "")]
    pub set: String,
}

impl SuiteArgs {
    /// The limit these arguments ask for.
    pub fn limit(&self) -> SuiteLimit {
        match (self.depth, self.nodes, self.movetime) {
            (Some(d), _, _) => SuiteLimit::Depth(d),
            (_, Some(n), _) => SuiteLimit::Nodes(n),
            (_, _, Some(ms)) => SuiteLimit::MoveTime(ms),
            _ => SuiteLimit::MoveTime(1000),
        }
    }

    /// Failures, then the totals (see [`print_report`]).
    pub fn run(&self) -> anyhow::Result<ExitCode> {
        let opts = chess::search::smp::SearchOptions {
            net: network(&self.eval, self.eval_file.as_deref())?,
            prune: switches(&self.set)?,
            ..Default::default()
        };
        let text = read(&self.file)?;
        let rep = run_suite_with(&text, self.limit(), self.hash, self.verbose, opts);
        print_report(&rep);
        Ok(ExitCode::SUCCESS)
    }
}
