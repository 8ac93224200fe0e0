//! `arbiter`: gauntlets, pairwise matches and SPRT tests between UCI engines.
//!
//! Human text (the progress line and the final table) goes to stderr; the JSON report goes to
//! `--report FILE`, or to stdout when no `--report` is given, so stdout is only ever JSON.
//!
//! Exit status: 0 the match was played (or stopped by the SPRT); 2 it was refused before the
//! first game (a bad value, an engine that does not start or answer the UCI handshake, an
//! unusable book, an output that cannot be written); 1 it started and could not finish
//! (a PGN write failed, an engine could no longer be started) or the report could not be
//! written (it then goes to stdout).

use std::io::{ErrorKind as IoErrorKind, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context;
use arbiter::book::Book;
use arbiter::engine::{Engine, EngineSpec};
use arbiter::game::{Adjudication, GameConfig, Limit};
use arbiter::rules::{STARTPOS, parse_position};
use arbiter::sprt::SprtParam;
use arbiter::spsa::{Param, Schedule, Setup, SpsaConfig, State};
use arbiter::tournament::{
    MAX_CONCURRENCY, MAX_DEPTH, MAX_GAMES, MAX_HANG_TIMEOUT_SECONDS, MAX_TIME_MARGIN_MS,
    MatchConfig, run, text,
};
use clap::error::{ContextKind, ContextValue, ErrorKind};
use clap::{ArgMatches, CommandFactory, FromArgMatches, Parser, ValueEnum};
use evidence::Sprt;

/// Play UCI engines against each other and report Elo with error bars.
///
/// Output: the progress line and the final table go to stderr; the JSON report goes to
/// the --report file, or to stdout without --report (stdout carries nothing else).
///
/// Before the first game every engine is started once (UCI handshake within --hang-timeout),
/// the book is read and checked, and --report, --pgn and --log are checked writable; any
/// failure there refuses the match with one line on stderr and exit status 2. A match that
/// cannot go on (a PGN write fails, an engine can no longer be started) stops with exit
/// status 1; the games counted so far are in the PGN, whole. A report that cannot be
/// written at the end goes to stdout instead (exit status 1). A closed stdout ends quietly.
///
/// Example: a gauntlet at 10+0.1, two games at a time, openings from a book:
///
///   arbiter --engine name=actuary cmd=target/release/actuary \
///           --engine name=glaurung cmd=/usr/games/glaurung \
///           --engine name=sf1 cmd=/usr/games/stockfish option.Skill\ Level=1 \
///           --book data/chess/books/2moves_v1.epd --tc 10+0.1 --games 100 \
///           --concurrency 2 --pgn gauntlet.pgn --report gauntlet.json --log logs
///
/// A match that was stopped (a crash, the end of a session) goes on where it was with the
/// same command and --resume; its PGN is read back and its games are not played again:
///
///   arbiter --engine name=new cmd=./new --engine name=old cmd=./old --tc 2+0.02 \
///           --games 3000 --sprt elo0=0 elo1=10 --book 2moves_v1.epd --seed 7 \
///           --pgn sprt.pgn --report sprt.json --resume
///
/// The score of games already played, from their PGN files alone (no engine is run):
///
///   arbiter --score run1.pgn run2.pgn --sprt elo0=0 elo1=10
///
/// SPSA over an engine's UCI spin options (OpenBench's input and schedule, resumable):
///
///   arbiter spsa --help
#[derive(Parser)]
#[command(name = "arbiter", version, verbatim_doc_comment)]
#[command(group(clap::ArgGroup::new("limit").args(["tc", "nodes", "depth"])))]
// `arbiter spsa ...` is a command of its own: none of the match's flags may come before it,
// and their requirements (--engine, a limit) are not its.
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
// `--help` is the help; `arbiter help` stays an unexpected argument, as before `spsa`.
#[command(disable_help_subcommand = true)]
struct Cli {
    /// An engine: name=NAME cmd=PATH [arg=ARG ...] [option.NAME=VALUE ...] (the name defaults
    /// to the command's file name; options are sent with setoption). Give two or more.
    #[arg(long, value_name = "KEY=VALUE", num_args = 1.., required_unless_present = "score")]
    engine: Vec<String>,
    /// Seed of the random book order.
    #[arg(long, default_value_t = 1, allow_negative_numbers = true)]
    seed: u64,
    #[command(flatten)]
    play: PlayArgs,
    /// Games per engine pair (rounded up to an even number: game pairs), 1 to 100000000.
    #[arg(long, default_value_t = 100, allow_negative_numbers = true,
          value_parser = clap::value_parser!(u32).range(1..=MAX_GAMES as i64))]
    games: u32,
    /// Pentanomial SPRT on logistic Elo, e.g. `--sprt elo0=0 elo1=5 [alpha=0.05 beta=0.05]`
    /// (needs exactly two engines; finite elo0 < elo1 within ±1000; alpha and beta in (0, 1)
    /// with alpha + beta < 1; each key at most once).
    #[arg(long, value_name = "KEY=VALUE", num_args = 1.., value_parser = parse_sprt_param)]
    sprt: Option<Vec<SprtParam>>,
    /// Append every game to this PGN file (locked while the match runs; a regular file,
    /// a character device such as /dev/null, or a pipe with a reader).
    #[arg(long, value_name = "FILE")]
    pgn: Option<PathBuf>,
    /// Write the JSON report to this file instead of stdout (replaced atomically at the end;
    /// must be absent or a regular file in a writable directory).
    #[arg(long, value_name = "FILE")]
    report: Option<PathBuf>,
    /// Keep each engine process's stderr in DIR/<engine>-game<N>.log (N: the match's game
    /// number from 1); without it, engines' stderr is discarded.
    #[arg(long, value_name = "DIR")]
    log: Option<PathBuf>,
    /// With more than two engines, play every pair instead of a gauntlet of the first.
    #[arg(long)]
    round_robin: bool,
    /// The PGN Event tag and the report's title.
    #[arg(long, default_value = "actuary match")]
    event: String,
    /// No progress line on stderr (the final table is still printed there).
    #[arg(long)]
    quiet: bool,
    /// Chess960 (Fischer random): every engine gets `setoption name UCI_Chess960 value
    /// true`, castling moves are exchanged king-takes-rook, book castling fields may be X-FEN
    /// or Shredder-FEN, and the PGN says `[Variant "Chess960"]` with Shredder-FEN FEN tags.
    #[arg(long)]
    chess960: bool,
    /// Continue the match whose games are in --pgn: every whole game pair there is counted
    /// (W/D/L, pentanomial, SPRT, faults) and not played again; a pair cut off at the end of
    /// the file by a kill is removed and replayed. Give the first run's engines (same names,
    /// same order), --event, time control, --book, --book-order and --seed: a game that does
    /// not fit them refuses the match with its line. --games is the match's total, so the
    /// same command can be run until it is done. Without the file, the match starts afresh.
    #[arg(long, requires = "pgn")]
    resume: bool,
    /// Play nothing: score the games of PGN files this arbiter wrote (whole game pairs, in
    /// file order, several files summed per engine pair) and print the same table and JSON
    /// report as a match. With --sprt, also where the test would have stopped. A pair cut off
    /// at the end of a file is left out with a note.
    #[arg(long, value_name = "PGN", num_args = 1.., conflicts_with_all = [
        "engine", "tc", "nodes", "depth", "book", "pgn", "log", "resume", "round_robin",
        "adjudicate"])]
    score: Option<Vec<PathBuf>>,
    // `arbiter spsa`; none: a match, or --score.
    #[command(subcommand)]
    cmd: Option<Cmd>,
}

// The commands besides a match and --score. (A doc comment here would become clap's about
// of `arbiter`, before the one of `Cli` replaces it.)
#[derive(clap::Subcommand)]
enum Cmd {
    // The help of `arbiter spsa` is `SpsaArgs`'s doc comment.
    Spsa(SpsaArgs),
}

/// How the book is walked.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum BookOrder {
    /// Shuffled, seeded by --seed.
    Random,
    /// In file order.
    Sequential,
}

/// How games are played: the limit, the openings, the clock rules and the parallelism. Shared
/// by a match and `arbiter spsa`, so both read these flags alike.
#[derive(clap::Args)]
struct PlayArgs {
    /// Time control BASE+INC in seconds, e.g. 10+0.1 (BASE alone: no increment);
    /// 0.001 <= BASE <= 86400, 0 <= INC <= 3600.
    #[arg(long, value_name = "BASE+INC", value_parser = parse_tc, allow_hyphen_values = true)]
    tc: Option<Limit>,
    /// Fixed nodes per move (instead of a clock).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..), allow_negative_numbers = true)]
    nodes: Option<u64>,
    /// Fixed depth per move (instead of a clock), 1 to 1000.
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=MAX_DEPTH as i64),
          allow_negative_numbers = true)]
    depth: Option<u32>,
    /// Openings: an EPD/FEN file, one position per line (each played twice, colours swapped);
    /// the start position when omitted. Blank and `#` lines are ignored; a line that is not a
    /// legal position refuses the book; positions where the game is already over (mate,
    /// stalemate, fifty moves, dead draw) are skipped, counted on stderr, never played.
    #[arg(long, value_name = "FILE")]
    book: Option<PathBuf>,
    /// Order in which book positions are used.
    #[arg(long, value_enum, default_value_t = BookOrder::Random)]
    book_order: BookOrder,
    /// Games (for spsa: game pairs) played at the same time, 1 to 256.
    #[arg(long, default_value_t = 1, allow_negative_numbers = true,
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new()
              .range(1..=MAX_CONCURRENCY as u64))]
    concurrency: usize,
    /// Clock tolerance before a time forfeit, ms, 0 to 60000.
    #[arg(long, value_name = "MS", default_value_t = 50, allow_negative_numbers = true,
          value_parser = clap::value_parser!(u64).range(0..=MAX_TIME_MARGIN_MS))]
    timemargin: u64,
    /// Seconds an engine may take to answer the UCI handshake, or a fixed nodes/depth search,
    /// before it counts as hung, 1 to 86400.
    #[arg(long, value_name = "SECONDS", default_value_t = 60, allow_negative_numbers = true,
          value_parser = clap::value_parser!(u64).range(1..=MAX_HANG_TIMEOUT_SECONDS))]
    hang_timeout: u64,
    /// Score adjudication (off by default): RESIGN_CP,RESIGN_MOVES,DRAW_CP,DRAW_MOVES,DRAW_AFTER,
    /// e.g. 1000,3,10,8,40 (resign when both engines see ≥ RESIGN_CP for RESIGN_MOVES moves each;
    /// draw when both see |score| ≤ DRAW_CP for DRAW_MOVES moves each after DRAW_AFTER moves;
    /// 1 <= RESIGN_CP <= 30000, 0 <= DRAW_CP <= 30000, a count of 0 turns its rule off).
    #[arg(long, value_name = "LIST", value_parser = parse_adjudication, allow_hyphen_values = true)]
    adjudicate: Option<Adjudication>,
}

impl PlayArgs {
    /// The one limit clap let through (the `limit` group), if any.
    fn limit(&self) -> Option<Limit> {
        match (self.tc, self.nodes, self.depth) {
            (Some(tc), _, _) => Some(tc),
            (_, Some(n), _) => Some(Limit::Nodes(n)),
            (_, _, Some(d)) => Some(Limit::Depth(d)),
            _ => None,
        }
    }

    /// The openings of --book (skipped positions noted on stderr), or the start position.
    fn openings(&self, chess960: bool) -> anyhow::Result<Vec<cozy_chess::Board>> {
        Ok(match &self.book {
            Some(p) => {
                let book = Book::load_with(p, chess960)?;
                if let Some(n) = book.skipped_note(p) {
                    note(&format!("{n}\n"));
                }
                book.openings
            }
            None => vec![parse_position(STARTPOS)?],
        })
    }

    /// How each game is played under these flags.
    fn game(&self, limit: Limit, chess960: bool) -> GameConfig {
        GameConfig {
            limit,
            margin_ms: self.timemargin,
            hang_timeout: Duration::from_secs(self.hang_timeout),
            adjudication: self.adjudicate,
            chess960,
        }
    }
}

fn parse_tc(s: &str) -> Result<Limit, arbiter::game::TcError> {
    Limit::parse_tc(s)
}

fn parse_adjudication(s: &str) -> Result<Adjudication, arbiter::game::AdjudicationError> {
    s.parse()
}

fn parse_sprt_param(w: &str) -> Result<SprtParam, arbiter::sprt::SprtError> {
    w.parse()
}

/// A command-line error found after parsing, in clap's format (exit code 2).
fn usage_error(kind: ErrorKind, message: String) -> ! {
    cmdline::usage_error::<Cli>(kind, message)
}

/// Why the program failed, and its exit status.
struct Failure {
    error: anyhow::Error,
    /// 2: refused before the first game; 1: the match or its report failed.
    status: u8,
}

impl<E: Into<anyhow::Error>> From<E> for Failure {
    fn from(e: E) -> Self {
        Failure {
            error: e.into(),
            status: 2,
        }
    }
}

/// Write to stderr, best effort (a closed stderr must not turn a played match into a failure).
fn note(text: &str) {
    let _ = std::io::stderr().write_all(text.as_bytes());
}

/// Print the report on stdout; a reader that went away (`| head`) ends quietly.
fn print_stdout(text: &str) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() != IoErrorKind::BrokenPipe => {
            Err(anyhow::Error::new(e).context("cannot write the report to standard output"))
        }
        _ => Ok(()),
    }
}

/// The same file named twice (literally, or both existing and resolving alike).
fn same_file(a: &Path, b: &Path) -> bool {
    a == b
        || matches!(
            (std::fs::canonicalize(a), std::fs::canonicalize(b)),
            (Ok(x), Ok(y)) if x == y
        )
}

/// Write the report where --report says (or to stdout); a report that cannot be written
/// goes to stdout instead with exit status 1.
fn deliver(report: &arbiter::tournament::Report, to: Option<&Path>) -> Result<(), Failure> {
    note(&text(report));
    let json = serde_json::to_string_pretty(report).context("the report")? + "\n";
    let failed = |error: anyhow::Error| Failure { error, status: 1 };
    match to {
        Some(p) => {
            if let Err(e) = evidence::atomic_write(p, json.as_bytes()) {
                // Keep the result: the report goes to stdout instead.
                print_stdout(&json).map_err(failed)?;
                return Err(failed(anyhow::anyhow!(
                    "--report {}: {}; the report was written to standard output instead",
                    p.display(),
                    e.into_io()
                )));
            }
        }
        None => print_stdout(&json).map_err(failed)?,
    }
    Ok(())
}

/// Parse the command line (a match, --score, or `arbiter spsa`), or exit by the workspace's
/// conventions (`cmdline`: help on stdout, a refusal as one `error:` line with status 2).
fn parse_cli() -> (Cli, ArgMatches) {
    let parsed = Cli::command()
        .try_get_matches()
        .and_then(|m| Cli::from_arg_matches(&m).map(|cli| (cli, m)));
    match parsed {
        Ok(p) => p,
        Err(e) => std::process::exit(cmdline::report(&as_before_subcommands(e))),
    }
}

/// A word that clap refuses as a command (`arbiter foo`, `arbiter --nodes 10 foo`, or
/// `arbiter --quiet spsa`: `spsa` must come first) refused as before `spsa` was a command:
/// "unexpected argument 'foo' found" rather than "unrecognized subcommand 'foo'" or "the
/// subcommand 'foo' cannot be used with '--nodes <NODES>'", which would call a stray word a
/// command. Every other error is left as it is.
fn as_before_subcommands(e: clap::Error) -> clap::Error {
    // Both kinds (a word that is no command, a word after a flag) hold the word as their
    // `InvalidSubcommand`.
    if matches!(
        e.kind(),
        ErrorKind::InvalidSubcommand | ErrorKind::ArgumentConflict
    ) && let Some(ContextValue::String(word)) = e.get(ContextKind::InvalidSubcommand)
    {
        return Cli::command().error(
            ErrorKind::UnknownArgument,
            format!("unexpected argument '{word}' found"),
        );
    }
    e
}

/// A match, or with --score the score of games already played.
fn match_main(cli: &Cli, matches: &ArgMatches) -> Result<(), Failure> {
    let sprt = cli.sprt.as_ref().map(|params| {
        arbiter::sprt::from_params(params)
            .unwrap_or_else(|e| usage_error(ErrorKind::ValueValidation, format!("--sprt: {e}")))
    });
    match &cli.score {
        Some(files) => score_main(files, sprt, cli.report.as_deref()),
        None => play_match(cli, matches, sprt),
    }
}

/// --score: the table and the report of the games in `files`, from the files alone (no
/// engine is run); --report must not name one of them.
fn score_main(files: &[PathBuf], sprt: Option<Sprt>, report: Option<&Path>) -> Result<(), Failure> {
    if let Some(r) = report {
        if files.iter().any(|f| same_file(r, f)) {
            usage_error(
                ErrorKind::ArgumentConflict,
                "--report names one of the --score files".into(),
            );
        }
        arbiter::output::check_report(r)?;
    }
    for f in files {
        if !f.is_file() {
            return Err(anyhow::anyhow!("--score {}: not a readable file", f.display()).into());
        }
    }
    let (scored, notes) =
        arbiter::tournament::score(files, sprt).map_err(|e| anyhow::anyhow!("--score {e}"))?;
    for n in notes {
        note(&format!("--score {n}\n"));
    }
    deliver(&scored, report)
}

/// A match between the --engine groups. Everything that can be checked before the first
/// game is (the flags, the engines' words, the book, --report), so that a refusal costs no
/// game; then the match, and its report.
fn play_match(cli: &Cli, matches: &ArgMatches, sprt: Option<Sprt>) -> Result<(), Failure> {
    let Some(limit) = cli.play.limit() else {
        usage_error(
            ErrorKind::MissingRequiredArgument,
            "one of --tc, --nodes or --depth is required for a match".into(),
        );
    };
    let engines = match_engines(cli, matches);
    if let (Some(r), Some(p)) = (&cli.report, &cli.pgn)
        && same_file(r, p)
    {
        usage_error(
            ErrorKind::ArgumentConflict,
            "--report and --pgn name the same file".into(),
        );
    }
    let openings = cli.play.openings(cli.chess960)?;
    if let Some(r) = &cli.report {
        arbiter::output::check_report(r)?;
    }
    let cfg = MatchConfig {
        engines,
        round_robin: cli.round_robin,
        openings,
        random_openings: cli.play.book_order == BookOrder::Random,
        seed: cli.seed,
        games: cli.games,
        concurrency: cli.play.concurrency,
        game: cli.play.game(limit, cli.chess960),
        sprt,
        pgn: cli.pgn.clone(),
        log_dir: cli.log.clone(),
        event: cli.event.clone(),
        quiet: cli.quiet,
        resume: cli.resume,
    };
    let report = run(&cfg).map_err(|e| Failure {
        status: if e.started() { 1 } else { 2 },
        error: e.into(),
    })?;
    deliver(&report, cli.report.as_deref())
}

/// The match's engines, one a --engine group, in order (with --chess960, each is sent
/// `UCI_Chess960` first); a group that is not an engine, or fewer than two groups, is a usage
/// error naming --engine.
fn match_engines(cli: &Cli, matches: &ArgMatches) -> Vec<EngineSpec> {
    // clap keeps the values of each `--engine` occurrence together: one group per engine.
    // The words are parsed here rather than by clap so that the message quotes a word with a
    // line break on one line.
    let groups: Vec<Vec<String>> = matches
        .get_occurrences::<String>("engine")
        .map(|o| o.map(|g| g.cloned().collect()).collect())
        .unwrap_or_default();
    debug_assert_eq!(cli.engine.len(), groups.iter().map(Vec::len).sum::<usize>());
    let mut engines: Vec<EngineSpec> = groups
        .into_iter()
        .map(|words| {
            EngineSpec::parse(&words).unwrap_or_else(|e| {
                usage_error(ErrorKind::ValueValidation, format!("--engine: {e}"))
            })
        })
        .collect();
    if cli.chess960 {
        // Before the engine's own options, so an explicit option.UCI_Chess960= still wins.
        for e in &mut engines {
            e.options
                .insert(0, ("UCI_Chess960".to_owned(), "true".to_owned()));
        }
    }
    if engines.len() < 2 {
        usage_error(
            ErrorKind::TooFewValues,
            "give two or more --engine groups".into(),
        );
    }
    engines
}

/// Tune an engine's UCI options by SPSA: game pairs between θ + cΔ and θ − cΔ.
///
/// Each iteration perturbs every parameter by ±c (random signs), plays one game pair (an
/// opening, colours swapped) between the two perturbed engines, and moves each parameter by
/// r · c · (wins − losses) · sign. Input and gains are OpenBench's: one parameter a line,
/// `name, int|float, start, min, max, c_end, r_end` (for actuary: `actuary spsa-input`);
/// c and r shrink over --pairs iterations to c_end and r_end (A = --a-ratio · pairs,
/// exponents --alpha, --gamma).
///
/// The state (--state, JSON) is replaced atomically after every batch of --concurrency
/// pairs, the trajectory (--trajectory, JSON lines) grows by one line a batch; a stopped run
/// goes on with the same command and --resume (at most one batch is lost; with --nodes or
/// --depth the result is the same as without the stop: every draw is seeded by --seed and
/// the iteration). At the
/// end the current values are printed on stdout as input lines (the start of a longer
/// tune) and, with --svg, the trajectory is drawn.
///
/// Example: the search constants of actuary at 2+0.02, two pairs at a time, for an hour:
///
///   actuary spsa-input > params.txt
///   arbiter spsa --engine cmd=target/release/actuary arg=--lab option.Hash=16 --params params.txt \
///       --pairs 20000 --tc 2+0.02 --book data/chess/books/2moves_v1.epd --concurrency 2 \
///       --state spsa.json --trajectory spsa.jsonl --svg spsa.svg --max-minutes 60 --resume
#[derive(clap::Args)]
#[command(verbatim_doc_comment)]
#[command(group(clap::ArgGroup::new("limit").args(["tc", "nodes", "depth"]).required(true)))]
struct SpsaArgs {
    /// The engine: cmd=PATH [arg=ARG ...] [option.NAME=VALUE ...] (options sent to both sides
    /// before the tuned ones).
    #[arg(long, value_name = "KEY=VALUE", num_args = 1.., required = true)]
    engine: Vec<String>,
    /// OpenBench SPSA input: `name, int|float, start, min, max, c_end, r_end` a line (blank
    /// lines and `#` comments ignored); the name is the UCI option.
    #[arg(long, value_name = "FILE")]
    params: PathBuf,
    /// Iterations (game pairs) of the schedule, 1 to 100000000: the run ends there.
    #[arg(long, allow_negative_numbers = true,
          value_parser = clap::value_parser!(u64).range(1..=arbiter::spsa::MAX_PAIRS))]
    pairs: u64,
    #[command(flatten)]
    play: PlayArgs,
    /// Seed of the perturbations, the rounding and the book order.
    #[arg(long, default_value_t = 1, allow_negative_numbers = true)]
    seed: u64,
    /// The run's state file (JSON); refused if it exists, unless --resume.
    #[arg(long, value_name = "FILE")]
    state: PathBuf,
    /// Continue the run in --state (same engine, params, schedule, seed, limits and book).
    #[arg(long)]
    resume: bool,
    /// Append one JSON line per batch: pairs played, the batch's scores, the values.
    #[arg(long, value_name = "FILE")]
    trajectory: Option<PathBuf>,
    /// Append every game that ended in a fault (time, illegal move, crash, hang) as PGN, its
    /// Round the iteration and the game (1 or 2) of the pair; the state counts them by kind.
    #[arg(long, value_name = "FILE")]
    faults: Option<PathBuf>,
    /// Draw the trajectory at the end (needs --trajectory).
    #[arg(long, value_name = "FILE", requires = "trajectory")]
    svg: Option<PathBuf>,
    /// Stop once this many pairs were played in this run (at the end of the batch under way:
    /// a multiple of --concurrency).
    #[arg(long, value_name = "PAIRS", value_parser = clap::value_parser!(u64).range(1..),
          allow_negative_numbers = true)]
    stop_after: Option<u64>,
    /// Stop at the first batch boundary after this many minutes (0.1 to 10080).
    #[arg(long, value_name = "MINUTES", value_parser = parse_minutes, allow_negative_numbers = true)]
    max_minutes: Option<f64>,
    /// A = this fraction of --pairs, in (0, 10].
    #[arg(long, default_value_t = 0.1, value_parser = parse_gain_exponent, allow_negative_numbers = true)]
    a_ratio: f64,
    /// Exponent of the learning-rate decay, in (0, 10].
    #[arg(long, default_value_t = 0.602, value_parser = parse_gain_exponent, allow_negative_numbers = true)]
    alpha: f64,
    /// Exponent of the perturbation decay, in (0, 10].
    #[arg(long, default_value_t = 0.101, value_parser = parse_gain_exponent, allow_negative_numbers = true)]
    gamma: f64,
    /// No progress line on stderr.
    #[arg(long)]
    quiet: bool,
}

fn parse_minutes(s: &str) -> Result<f64, String> {
    s.parse::<f64>()
        .ok()
        .filter(|m| (0.1..=10_080.0).contains(m))
        .ok_or_else(|| format!("expected minutes from 0.1 to 10080, got '{s}'"))
}

fn parse_gain_exponent(s: &str) -> Result<f64, String> {
    s.parse::<f64>()
        .ok()
        .filter(|v| *v > 0.0 && *v <= 10.0)
        .ok_or_else(|| format!("expected a number in (0, 10], got '{s}'"))
}

/// `arbiter spsa`: the tune; then its summary on stderr and the values reached on stdout, as
/// input lines (the start of a longer tune).
fn spsa_main(args: &SpsaArgs) -> Result<(), Failure> {
    let cfg = spsa_config(args)?;
    let state = arbiter::spsa::run(&cfg).map_err(|e| Failure {
        status: if e.refused() { 2 } else { 1 },
        error: e.into(),
    })?;
    note(&spsa_summary(&state, &args.state));
    // Every game a fault: the values moved by forfeits alone, which is no tune to report.
    let games = 2 * state.pairs_done;
    if games > 0 && state.faults == games {
        return Err(Failure {
            status: 1,
            error: anyhow::anyhow!(
                "all {games} games ended in a fault (see the kinds above): the values are \
                 not a tune; check the engine, the limits and --hang-timeout"
            ),
        });
    }
    let mut out = String::new();
    for p in &state.params {
        out.push_str(&p.input_line());
        out.push('\n');
    }
    print_stdout(&out).map_err(|error| Failure { error, status: 1 })
}

/// The run the flags of `arbiter spsa` ask for, checked before any game (a refusal exits
/// with status 2): the engine's words, the parameters, distinct files, the book, and an engine
/// that starts and answers the handshake.
fn spsa_config(args: &SpsaArgs) -> Result<SpsaConfig, Failure> {
    let engine = EngineSpec::parse(&args.engine)
        .unwrap_or_else(|e| usage_error(ErrorKind::ValueValidation, format!("--engine: {e}")));
    // A parameter a line: 16 MB is far beyond any tune, and /dev/zero is not a parameter file.
    let text = fileio::read_to_string(&args.params, 16 << 20)
        .map_err(|e| anyhow::anyhow!("--params {}: {}", args.params.display(), e.into_io()))?;
    let params = arbiter::spsa::parse_params(&text)
        .map_err(|e| anyhow::anyhow!("--params {}: {e}", args.params.display()))?;
    let limit = args
        .play
        .limit()
        .expect("clap requires one of --tc, --nodes, --depth");
    check_distinct_files(args);
    let openings = args.play.openings(false)?;
    // Before any game: the engine must start and answer the handshake, declaring every
    // tuned option with room for its range.
    let declared = Engine::probe_options(&engine, Duration::from_secs(args.play.hang_timeout))
        .map_err(|e| anyhow::anyhow!("--engine {}: {e}", engine.cmd))?;
    if let Err(e) = arbiter::spsa::check_against_engine(&params, &declared) {
        usage_error(
            ErrorKind::ValueValidation,
            format!("--params {}: {e}", args.params.display()),
        );
    }
    // Every output file is checked before the first game, not at its first write hours in.
    for (flag, path) in [
        ("--faults", &args.faults),
        ("--trajectory", &args.trajectory),
        ("--svg", &args.svg),
    ] {
        if let Some(p) = path
            && let Err(e) = fileio::check_target(p)
        {
            usage_error(ErrorKind::ValueValidation, format!("{flag} {e}"));
        }
    }
    let setup = spsa_setup(args, engine, limit, openings.len(), &params);
    Ok(SpsaConfig {
        setup,
        params,
        openings,
        game: args.play.game(limit, false),
        concurrency: args.play.concurrency,
        state: args.state.clone(),
        trajectory: args.trajectory.clone(),
        svg: args.svg.clone(),
        faults_pgn: args.faults.clone(),
        resume: args.resume,
        stop_after: args.stop_after,
        max_seconds: args.max_minutes.map(|m| m * 60.0),
        quiet: args.quiet,
    })
}

/// Refuse (a usage error) two of --state, --params, --trajectory, --svg and --faults that name
/// the same file: the run would overwrite its own input, or write two outputs into one file.
fn check_distinct_files(args: &SpsaArgs) {
    let files: Vec<&PathBuf> = [
        Some(&args.state),
        Some(&args.params),
        args.trajectory.as_ref(),
        args.svg.as_ref(),
        args.faults.as_ref(),
    ]
    .into_iter()
    .flatten()
    .collect();
    if files
        .iter()
        .enumerate()
        .any(|(i, a)| files[i + 1..].iter().any(|b| same_file(a, b)))
    {
        usage_error(
            ErrorKind::ArgumentConflict,
            "--state, --params, --trajectory, --svg and --faults must name different files".into(),
        );
    }
}

/// What the run is started with, as its state keeps it: a resumed run must be given the same
/// (`openings`: the book's number of playable positions).
fn spsa_setup(
    args: &SpsaArgs,
    engine: EngineSpec,
    limit: Limit,
    openings: usize,
    params: &[Param],
) -> Setup {
    let mut schedule = Schedule::new(args.pairs);
    schedule.a_ratio = args.a_ratio;
    schedule.alpha = args.alpha;
    schedule.gamma = args.gamma;
    Setup {
        engine,
        schedule,
        seed: args.seed,
        time_control: limit.pgn_tag(),
        book: args.play.book.as_ref().map(|p| p.display().to_string()),
        openings,
        random_openings: args.play.book_order == BookOrder::Random,
        adjudication: args.play.adjudicate.map(|a| {
            format!(
                "{},{},{},{},{}",
                a.resign_cp, a.resign_moves, a.draw_cp, a.draw_moves, a.draw_after
            )
        }),
        concurrency: args.play.concurrency,
        params: params.iter().map(|p| p.input_line()).collect(),
    }
}

/// The line on stderr at the end of `arbiter spsa`: the pairs played of the schedule, the
/// games' results and faults by kind, and where the state is.
fn spsa_summary(state: &State, state_file: &Path) -> String {
    let w = state.plus;
    let k = state.fault_kinds;
    let unknown = state.faults.saturating_sub(k.total());
    format!(
        "spsa: {} of {} pairs played ({} games: plus {}-{}-{} against minus, {} faults: \
         {} on time, {} illegal moves, {} crashes, {} hangs{}); state in {}\n",
        state.pairs_done,
        state.setup.schedule.pairs,
        2 * state.pairs_done,
        w.wins,
        w.draws,
        w.losses,
        state.faults,
        k.time,
        k.illegal_move,
        k.crash,
        k.hang,
        if unknown > 0 {
            format!(", {unknown} of unknown kind from before kinds were kept")
        } else {
            String::new()
        },
        state_file.display()
    )
}

fn main() -> ExitCode {
    let (cli, matches) = parse_cli();
    let result = match &cli.cmd {
        Some(Cmd::Spsa(args)) => {
            // Two --engine flags would merge into one engine's words (the second `cmd=`
            // silently winning): spsa tunes one engine, given once.
            let groups = matches
                .subcommand_matches("spsa")
                .and_then(|m| m.get_occurrences::<String>("engine"))
                .map_or(0, |o| o.count());
            if groups > 1 {
                usage_error(
                    ErrorKind::ArgumentConflict,
                    format!(
                        "--engine given {groups} times: spsa tunes one engine, one --engine group"
                    ),
                );
            }
            spsa_main(args)
        }
        None => match_main(&cli, &matches),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(f) => {
            note(&format!(
                "error: {}\n",
                cmdline::error_text(f.error.chain())
            ));
            ExitCode::from(f.status)
        }
    }
}
