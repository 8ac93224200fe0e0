//! UCI protocol: `parse_command` turns a line into a [`Command`] (never panics, returns a
//! readable error), and [`Engine`] executes commands. The search runs on its own thread so
//! that `stop`, `isready` and `quit` are answered while it thinks.

use crate::board::{BoardError, Position, STARTPOS_FEN, to_fen};
use crate::eval::{LazyMargins, Tier, eval_tier};
use crate::perft::perft_divide_stoppable;
use crate::search::Worker;
use crate::search::params::DEFAULT_MOVE_OVERHEAD_MS;
use crate::search::prune::{PruneConfig, PruneTables};
use crate::search::smp::{SearchOptions, exit_breakdown, search};
use crate::search::time::{Limits, PonderHit};
use crate::search::tt::Tt;
use std::io::{BufRead, Read};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::thread::JoinHandle;

pub(crate) const ENGINE_NAME: &str = "actuary";
pub(crate) const ENGINE_AUTHOR: &str = "the actuary developers";

pub(crate) const HASH_DEFAULT: usize = 64;
pub const HASH_MAX: usize = 65_536;
pub(crate) const THREADS_MAX: usize = 256;
pub(crate) const MULTIPV_MAX: usize = 64;
/// Search time when `go` gives only the other side's clock (say `btime` with White to
/// move): no idea how much time we have, so answer quickly rather than never.
pub(crate) const NO_CLOCK_MOVETIME_MS: u64 = 100;

/// A refused input line (printed as `info string error: ...`).
#[derive(Debug, Clone, thiserror::Error)]
pub enum UciError {
    #[error("unknown command '{0}'")]
    UnknownCommand(String),
    #[error("'{0}' needs a value")]
    MissingValue(&'static str),
    #[error("bad value '{value}' for '{what}'")]
    BadValue { what: &'static str, value: String },
    #[error("setoption needs 'name'")]
    SetOptionNoName,
    #[error("setoption: empty option name")]
    SetOptionEmptyName,
    #[error("position startpos: unexpected tokens before 'moves'")]
    StartposExtraTokens,
    #[error("position fen: missing FEN")]
    MissingFen,
    #[error("position needs 'startpos' or 'fen'")]
    PositionKind,
    #[error("go: unknown token '{0}'")]
    GoToken(String),
    #[error("go searchmoves: {0}")]
    SearchMoves(BoardError),
    #[error("option '{name}': bad value '{value}'")]
    OptionValue { name: String, value: String },
    #[error("option '{name}': {value} outside {lo}..{hi}")]
    OptionRange {
        name: String,
        value: u64,
        lo: u64,
        hi: u64,
    },
    #[error("unknown option '{0}'")]
    UnknownOption(String),
    #[error("LazyTables: {0}")]
    Tables(String),
    #[error("NetLazyTables: {0}")]
    NetTables(String),
    #[error("EvalFile: {0}")]
    Net(String),
    #[error("option '{name}': {message}")]
    Prune { name: String, message: String },
    #[error(transparent)]
    Board(#[from] BoardError),
    #[error("no position to search: the last 'position' was refused")]
    NoPosition,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Command {
    Uci,
    IsReady,
    UciNewGame,
    SetOption {
        name: String,
        value: String,
    },
    Position {
        fen: Option<String>,
        moves: Vec<String>,
    },
    Go(Box<GoArgs>),
    Stop,
    PonderHit,
    Quit,
    /// Research console: default fixed depth for subsequent `go` (0 clears).
    Sd(i32),
    /// Research console: default fixed node count for subsequent `go` (0 clears).
    Sn(u64),
    /// Print the position and its evaluation tiers.
    Display,
    Empty,
}

/// A parsed `go`: the search limits plus what needs the position to mean anything.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct GoArgs {
    pub limits: Limits,
    pub ponder: bool,
    /// `searchmoves` as written; checked against the position when the search starts.
    pub searchmoves: Vec<String>,
}

/// The words that end a `searchmoves` list (any other `go` token).
const GO_KEYWORDS: [&str; 13] = [
    "depth",
    "nodes",
    "movetime",
    "wtime",
    "btime",
    "winc",
    "binc",
    "movestogo",
    "mate",
    "perft",
    "infinite",
    "ponder",
    "searchmoves",
];

fn num<T: std::str::FromStr>(tok: Option<&&str>, what: &'static str) -> Result<T, UciError> {
    let t = tok.ok_or(UciError::MissingValue(what))?;
    t.parse::<T>().map_err(|_| UciError::BadValue {
        what,
        value: (*t).to_owned(),
    })
}

/// Clock values may be negative in some GUIs when the clock ran out; clamp to 0.
fn clock(tok: Option<&&str>, what: &'static str) -> Result<u64, UciError> {
    let v: i64 = num(tok, what)?;
    Ok(v.max(0) as u64)
}

/// Parse one input line.
pub fn parse_command(line: &str) -> Result<Command, UciError> {
    let toks: Vec<&str> = line.split_whitespace().collect();
    let Some(&head) = toks.first() else {
        return Ok(Command::Empty);
    };
    match head {
        "uci" => Ok(Command::Uci),
        "isready" => Ok(Command::IsReady),
        "ucinewgame" => Ok(Command::UciNewGame),
        "stop" => Ok(Command::Stop),
        "ponderhit" => Ok(Command::PonderHit),
        "quit" => Ok(Command::Quit),
        "d" | "display" | "eval" => Ok(Command::Display),
        "sd" => Ok(Command::Sd(num(toks.get(1), "sd")?)),
        "sn" => Ok(Command::Sn(num(toks.get(1), "sn")?)),
        "setoption" => {
            // setoption name <name words> [value <value words>]
            let name_at = toks
                .iter()
                .position(|&t| t == "name")
                .ok_or(UciError::SetOptionNoName)?;
            let value_at = toks.iter().position(|&t| t == "value");
            let name_end = value_at.unwrap_or(toks.len());
            if name_end <= name_at + 1 {
                return Err(UciError::SetOptionEmptyName);
            }
            let name = toks[name_at + 1..name_end].join(" ");
            let value = value_at
                .map(|v| toks[v + 1..].join(" "))
                .unwrap_or_default();
            Ok(Command::SetOption { name, value })
        }
        "position" => {
            let moves_at = toks.iter().position(|&t| t == "moves");
            let moves = moves_at
                .map(|m| toks[m + 1..].iter().map(|s| s.to_string()).collect())
                .unwrap_or_default();
            let end = moves_at.unwrap_or(toks.len());
            match toks.get(1) {
                Some(&"startpos") => {
                    if end != 2 {
                        return Err(UciError::StartposExtraTokens);
                    }
                    Ok(Command::Position { fen: None, moves })
                }
                Some(&"fen") => {
                    if end <= 2 {
                        return Err(UciError::MissingFen);
                    }
                    Ok(Command::Position {
                        fen: Some(toks[2..end].join(" ")),
                        moves,
                    })
                }
                _ => Err(UciError::PositionKind),
            }
        }
        "go" => {
            let mut g = GoArgs::default();
            let mut i = 1;
            while i < toks.len() {
                let next = toks.get(i + 1);
                match toks[i] {
                    "depth" => g.limits.depth = Some(num(next, "depth")?),
                    "nodes" => g.limits.nodes = Some(num(next, "nodes")?),
                    "movetime" => g.limits.movetime = Some(clock(next, "movetime")?),
                    "wtime" => g.limits.wtime = Some(clock(next, "wtime")?),
                    "btime" => g.limits.btime = Some(clock(next, "btime")?),
                    "winc" => g.limits.winc = Some(clock(next, "winc")?),
                    "binc" => g.limits.binc = Some(clock(next, "binc")?),
                    "movestogo" => g.limits.movestogo = Some(clock(next, "movestogo")?),
                    "mate" => {
                        g.limits.depth =
                            Some(num::<i32>(next, "mate")?.saturating_mul(2).clamp(1, 100))
                    }
                    "perft" => g.limits.perft = Some(num(next, "perft")?),
                    "infinite" => {
                        g.limits.infinite = true;
                        i += 1;
                        continue;
                    }
                    "ponder" => {
                        g.ponder = true;
                        i += 1;
                        continue;
                    }
                    "searchmoves" => {
                        // The moves run up to the next `go` keyword (usually the line's end).
                        let n = toks[i + 1..]
                            .iter()
                            .take_while(|t| !GO_KEYWORDS.contains(t))
                            .count();
                        if n == 0 {
                            return Err(UciError::MissingValue("searchmoves"));
                        }
                        g.searchmoves
                            .extend(toks[i + 1..i + 1 + n].iter().map(|t| t.to_string()));
                        i += 1 + n;
                        continue;
                    }
                    other => return Err(UciError::GoToken(other.to_owned())),
                }
                i += 2;
            }
            Ok(Command::Go(Box::new(g)))
        }
        other => Err(UciError::UnknownCommand(other.to_owned())),
    }
}

/// What the loop should do after a command.
#[derive(Debug, PartialEq, Eq)]
pub enum Flow {
    Continue,
    Quit,
}

pub struct Engine {
    pos: Position,
    tt: Arc<Tt>,
    stop: Arc<AtomicBool>,
    workers: Vec<Worker>,
    search: Option<JoinHandle<Vec<Worker>>>,
    /// The running job is a `go perft`: only `stop` and `quit` interrupt it; any other command
    /// waits for its count (piped `go perft 5` lines then all print, as Stockfish's do).
    perft_running: bool,
    /// The running `go ponder` search's clock start, set on `ponderhit`.
    ponder: Option<PonderHit>,
    threads: usize,
    hash_mb: usize,
    /// List the laboratory's options (`prune.*`, `LazyEval`, `LazyTables`, `NetLazyTables`)
    /// in answer to `uci` (`actuary --lab`). They are accepted either way; a GUI user is
    /// shown only the options a player sets ([`Engine::with_lab_options`]).
    lab_options: bool,
    multipv: usize,
    move_overhead: u64,
    default_depth: Option<i32>,
    default_nodes: Option<u64>,
    /// UCI `LazyEval`: early evaluation exits (off until an Elo test supports them).
    lazy_eval: bool,
    /// UCI `LazyTables`: the margin tables used when `LazyEval` is on with `Eval hce`.
    tables: Arc<LazyMargins>,
    /// UCI `NetLazyTables`: the margins used when `LazyEval` is on with `Eval nnue`.
    net_tables: Arc<crate::eval::netlazy::NetLazyMargins>,
    /// UCI `Eval`: the learned evaluation (`nnue`, the default since `actuary-2.nnue` won its
    /// SPRT against the hand evaluation; each later net is embedded once it won its SPRT
    /// against the one before, `actuary-9.nnue` since session 48) or the hand one (`hce`).
    use_net: bool,
    /// UCI `EvalFile`: the network `Eval nnue` uses.
    net: Arc<crate::nnue::Network>,
    /// UCI `prune.*`: every pruning switch, and the measured tables.
    prune: PruneConfig,
    /// Files behind `prune.fh-table` / `prune.rfp-table` (`None`: embedded).
    prune_files: [Option<std::path::PathBuf>; 2],
    /// UCI `UCI_Chess960`: X-FEN/Shredder-FEN castling in `position fen`, castling moves
    /// written king-takes-rook.
    chess960: bool,
    /// Searches that ended in a panic (see [`Engine::search_failures`]), counted by the
    /// search thread itself (it answers `bestmove` before it ends).
    search_failures: Arc<AtomicU64>,
    /// The last `position` was refused: `go` must not search the one before it.
    pos_refused: bool,
}

/// The longest input line read (1 MiB): a `position startpos moves ...` of a 10,000-ply game
/// is about 50 kB. A longer line is skipped to its end without being held in memory, so an
/// endless line cannot exhaust it.
pub const MAX_LINE_BYTES: usize = 1 << 20;

/// What [`read_line_capped`] read.
#[derive(Debug, PartialEq, Eq)]
pub enum Line {
    /// End of input, nothing read.
    Eof,
    /// A line (with its newline, unless the input ended first) is in the buffer.
    Whole,
    /// The line was longer than the cap: it was read to its end and dropped.
    TooLong,
}

/// Read one line into `buf` (cleared by the caller) holding at most `cap` bytes of it.
pub fn read_line_capped(
    input: &mut impl BufRead,
    buf: &mut Vec<u8>,
    cap: usize,
) -> std::io::Result<Line> {
    let n = input.by_ref().take(cap as u64 + 1).read_until(b'\n', buf)?;
    if n == 0 {
        return Ok(Line::Eof);
    }
    if buf.len() <= cap || buf.last() == Some(&b'\n') {
        return Ok(Line::Whole);
    }
    // Too long: skip the rest of the line in the reader's own buffer.
    buf.clear();
    loop {
        let chunk = input.fill_buf()?;
        if chunk.is_empty() {
            return Ok(Line::TooLong);
        }
        match chunk.iter().position(|&b| b == b'\n') {
            Some(i) => {
                input.consume(i + 1);
                return Ok(Line::TooLong);
            }
            None => {
                let len = chunk.len();
                input.consume(len);
            }
        }
    }
}

/// Value of `LazyTables` that selects the tables built into the engine.
pub(crate) const EMBEDDED_TABLES_NAME: &str = "<embedded>";

impl Default for Engine {
    fn default() -> Self {
        Self::new()
    }
}

impl Engine {
    pub fn new() -> Self {
        Self {
            pos: Position::default(),
            tt: Arc::new(Tt::new(HASH_DEFAULT)),
            stop: Arc::new(AtomicBool::new(false)),
            workers: vec![Worker::new(0)],
            search: None,
            perft_running: false,
            ponder: None,
            threads: 1,
            hash_mb: HASH_DEFAULT,
            lab_options: false,
            multipv: 1,
            move_overhead: DEFAULT_MOVE_OVERHEAD_MS,
            default_depth: None,
            default_nodes: None,
            lazy_eval: false,
            tables: LazyMargins::embedded(),
            net_tables: crate::eval::netlazy::NetLazyMargins::embedded(),
            use_net: true,
            net: crate::nnue::Network::embedded(),
            prune: PruneConfig::default(),
            prune_files: [None, None],
            chess960: false,
            search_failures: Arc::new(AtomicU64::new(0)),
            pos_refused: false,
        }
    }

    /// An engine whose `uci` answer also lists the laboratory's options (as Stockfish lists
    /// its tunables only in a `TUNE` build): for match runners and tuners that check the
    /// options they set against the handshake.
    pub(crate) fn with_lab_options() -> Self {
        Self {
            lab_options: true,
            ..Self::new()
        }
    }

    /// The `option` lines of the `uci` answer: what a player sets, then (with
    /// [`Engine::with_lab_options`]) the laboratory's.
    pub(crate) fn option_lines(&self) -> Vec<String> {
        let mut out = vec![
            format!("option name Hash type spin default {HASH_DEFAULT} min 1 max {HASH_MAX}"),
            "option name Clear Hash type button".to_string(),
            format!("option name Threads type spin default 1 min 1 max {THREADS_MAX}"),
            format!("option name MultiPV type spin default 1 min 1 max {MULTIPV_MAX}"),
            "option name Ponder type check default false".to_string(),
            "option name UCI_Chess960 type check default false".to_string(),
            format!(
                "option name Move Overhead type spin default {DEFAULT_MOVE_OVERHEAD_MS} min 0 max 5000"
            ),
            "option name Eval type combo default nnue var nnue var hce".to_string(),
            format!(
                "option name EvalFile type string default {}",
                crate::nnue::EMBEDDED_NET_NAME
            ),
        ];
        if self.lab_options {
            out.extend(lab_option_lines(&PruneConfig::default()));
        }
        out
    }

    /// Read stdin until `quit` or EOF.
    pub(crate) fn run_stdin(&mut self) {
        self.run(std::io::stdin().lock());
    }

    /// The UCI loop over `input` until `quit`, end of input or a read error. Lines are
    /// read as bytes: `BufRead::lines` fails on the first byte that is not UTF-8, which
    /// used to end the engine silently (exit 0, no answer). Such a line is refused with
    /// `info string error: ...` (quoted lossily) and the loop carries on.
    pub fn run(&mut self, mut input: impl BufRead) {
        let mut buf = Vec::new();
        loop {
            buf.clear();
            match read_line_capped(&mut input, &mut buf, MAX_LINE_BYTES) {
                Ok(Line::Eof) => break,
                Ok(Line::Whole) => {}
                Ok(Line::TooLong) => {
                    println!("info string error: line ignored, longer than {MAX_LINE_BYTES} bytes");
                    continue;
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    println!("info string error: cannot read input: {e}");
                    break;
                }
            }
            let flow = match std::str::from_utf8(&buf) {
                Ok(line) => self.handle_line(line),
                Err(e) => {
                    let text = String::from_utf8_lossy(&buf);
                    println!(
                        "info string error: line ignored, not UTF-8 ({e}): '{}'",
                        text.trim_end()
                    );
                    Flow::Continue
                }
            };
            if flow == Flow::Quit {
                return;
            }
        }
        self.stop_search();
    }

    /// Handle one line; errors are reported as `info string error: ...`.
    pub fn handle_line(&mut self, line: &str) -> Flow {
        match parse_command(line).and_then(|c| self.execute(c)) {
            Ok(flow) => flow,
            Err(e) => {
                println!("info string error: {e}");
                match line.split_whitespace().next() {
                    // A refused `go` still owes the GUI its `bestmove` (it would wait for
                    // ever): a search still running answers its own `go` first. (`go perft`
                    // owes none.)
                    Some("go") if !line.split_whitespace().any(|w| w == "perft") => {
                        self.stop_search();
                        println!("bestmove {}", self.fallback_move());
                    }
                    // A refused `position` leaves no position: the next `go` must not answer
                    // for the one before it.
                    Some("position") => self.pos_refused = true,
                    _ => {}
                }
                Flow::Continue
            }
        }
    }

    pub fn is_searching(&self) -> bool {
        self.search.as_ref().is_some_and(|h| !h.is_finished())
    }

    /// The move to answer with when no search can run: the first legal move, `0000` if none.
    fn fallback_move(&self) -> String {
        if self.pos_refused {
            return "0000".into();
        }
        crate::board::legal_moves(&self.pos.board)
            .first()
            .map(|&m| crate::board::move_to_uci_with(&self.pos.board, m, self.chess960))
            .unwrap_or_else(|| "0000".into())
    }

    /// The position the next `go` searches.
    pub fn position(&self) -> &Position {
        &self.pos
    }

    /// How many searches ended in a panic (reported as `info string error`, the engine going
    /// on with fresh workers): a test's way to see a failure the protocol swallows.
    pub fn search_failures(&self) -> u64 {
        self.search_failures.load(Relaxed)
    }

    /// Stop a running search (if any) and take the workers back.
    pub fn stop_search(&mut self) {
        self.end_job(!self.perft_running);
    }

    /// `stop` and `quit`: end whatever runs, a `go perft` too.
    fn interrupt(&mut self) {
        self.end_job(true);
    }

    /// Wait for the running search or perft, telling it to stop first when `stop`.
    fn end_job(&mut self, stop: bool) {
        self.perft_running = false;
        if let Some(h) = self.search.take() {
            if stop {
                self.stop.store(true, Relaxed);
            }
            match h.join() {
                Ok(w) => self.workers = w,
                Err(_) => {
                    self.search_failures.fetch_add(1, Relaxed);
                    println!("info string error: search thread failed; state reset");
                    self.workers = (0..self.threads).map(Worker::new).collect();
                }
            }
        }
    }

    pub fn execute(&mut self, cmd: Command) -> Result<Flow, UciError> {
        match cmd {
            Command::Empty => {}
            Command::Uci => {
                println!("id name {ENGINE_NAME}");
                println!("id author {ENGINE_AUTHOR}");
                for line in self.option_lines() {
                    println!("{line}");
                }
                println!("uciok");
            }
            Command::IsReady => println!("readyok"),
            Command::UciNewGame => {
                self.stop_search();
                self.forget_searches();
                self.pos = Position::default();
            }
            Command::SetOption { name, value } => {
                self.stop_search();
                self.set_option(&name, &value)?;
            }
            Command::Position { fen, moves } => {
                let mut pos =
                    Position::from_fen_with(fen.as_deref().unwrap_or(STARTPOS_FEN), self.chess960)?;
                for m in &moves {
                    pos.play_uci(m)?;
                }
                self.pos = pos;
                self.pos_refused = false;
            }
            Command::Go(g) => {
                self.stop_search();
                if self.pos_refused {
                    return Err(UciError::NoPosition);
                }
                if let Some(d) = g.limits.perft {
                    // On the search thread, so that `stop` (read by this loop meanwhile) can
                    // end a count that would take hours (issue 36).
                    let board = self.pos.board.clone();
                    let chess960 = self.chess960;
                    let stop = Arc::clone(&self.stop);
                    stop.store(false, Relaxed);
                    let workers = std::mem::take(&mut self.workers);
                    self.perft_running = true;
                    self.search = Some(std::thread::spawn(move || {
                        match perft_divide_stoppable(&board, d, chess960, &stop) {
                            Some((lines, total)) => {
                                let mut out = String::new();
                                for (m, n) in lines {
                                    out.push_str(&format!("{m}: {n}\n"));
                                }
                                println!("{out}\nNodes searched: {total}");
                            }
                            None => println!("info string perft {d} stopped"),
                        }
                        workers
                    }));
                    return Ok(Flow::Continue);
                }
                self.start_search(&g)?;
            }
            Command::Stop => self.interrupt(),
            Command::PonderHit => {
                // The move we pondered on was played: the `go ponder`'s limits start now.
                // Outside a ponder search (or a second time) there is nothing to do.
                if let Some(hit) = &self.ponder {
                    let _ = hit.set(std::time::Instant::now());
                }
            }
            Command::Quit => {
                self.interrupt();
                return Ok(Flow::Quit);
            }
            Command::Sd(d) => {
                self.default_depth = (d > 0).then_some(d);
                println!("info string default depth {d}");
            }
            Command::Sn(n) => {
                self.default_nodes = (n > 0).then_some(n);
                println!("info string default nodes {n}");
            }
            Command::Display => {
                let b = &self.pos.board;
                println!("info string fen {}", to_fen(b));
                println!(
                    "info string eval super-lazy {} lazy {} full {} nnue {} (side to move)",
                    eval_tier(b, Tier::SuperLazy),
                    eval_tier(b, Tier::Lazy),
                    eval_tier(b, Tier::Full),
                    self.net.evaluate(b)
                );
            }
        }
        Ok(Flow::Continue)
    }

    /// Empty the hash table and every thread's histories (`ucinewgame`, `Clear Hash`); the
    /// search must be stopped.
    fn forget_searches(&mut self) {
        self.tt.clear();
        for w in &mut self.workers {
            w.clear();
        }
    }

    fn set_option(&mut self, name: &str, value: &str) -> Result<(), UciError> {
        let int = |lo: u64, hi: u64| -> Result<u64, UciError> {
            let v: u64 = value.trim().parse().map_err(|_| UciError::OptionValue {
                name: name.to_owned(),
                value: value.to_owned(),
            })?;
            if v < lo || v > hi {
                return Err(UciError::OptionRange {
                    name: name.to_owned(),
                    value: v,
                    lo,
                    hi,
                });
            }
            Ok(v)
        };
        match name.to_ascii_lowercase().as_str() {
            "hash" => {
                let mb = int(1, HASH_MAX as u64)? as usize;
                if mb != self.hash_mb {
                    // Free the old table first: its memory may be what the new one needs.
                    self.tt = Arc::new(Tt::new_clamped(1).tt);
                    // Never abort on a size the machine cannot hold (the advertised max is
                    // 64 GB): take what fits and say so.
                    let c = Tt::new_clamped(mb);
                    if let Some(why) = &c.reason {
                        println!("info string Hash clamped to {} MB ({why})", c.mb);
                    }
                    self.tt = Arc::new(c.tt);
                    self.hash_mb = mb;
                }
            }
            // The GUI button most engines offer: forget what earlier searches learned (hash
            // table and every thread's histories) without the position reset of `ucinewgame`.
            "clear hash" => self.forget_searches(),
            "threads" => {
                let n = int(1, THREADS_MAX as u64)? as usize;
                if n != self.threads {
                    self.workers = (0..n).map(Worker::new).collect();
                    self.threads = n;
                }
            }
            "multipv" => self.multipv = int(1, MULTIPV_MAX as u64)? as usize,
            "move overhead" => self.move_overhead = int(0, 5000)?,
            "lazyeval" => {
                self.lazy_eval = match value.trim().to_ascii_lowercase().as_str() {
                    "true" => true,
                    "false" => false,
                    _ => {
                        return Err(UciError::OptionValue {
                            name: name.to_owned(),
                            value: value.to_owned(),
                        });
                    }
                }
            }
            "lazytables" => {
                let v = value.trim();
                self.tables = if v.is_empty() || v == EMBEDDED_TABLES_NAME {
                    LazyMargins::embedded()
                } else {
                    Arc::new(
                        LazyMargins::load(std::path::Path::new(v))
                            .map_err(|e| UciError::Tables(e.to_string()))?,
                    )
                };
            }
            "netlazytables" => {
                let v = value.trim();
                self.net_tables = if v.is_empty() || v == EMBEDDED_TABLES_NAME {
                    crate::eval::netlazy::NetLazyMargins::embedded()
                } else {
                    Arc::new(
                        crate::eval::netlazy::NetLazyMargins::load(std::path::Path::new(v))
                            .map_err(|e| UciError::NetTables(e.to_string()))?,
                    )
                };
            }
            "eval" => {
                self.use_net = match value.trim().to_ascii_lowercase().as_str() {
                    "hce" => false,
                    "nnue" => true,
                    _ => {
                        return Err(UciError::OptionValue {
                            name: name.to_owned(),
                            value: value.to_owned(),
                        });
                    }
                }
            }
            "evalfile" => {
                let v = value.trim();
                self.net = if v.is_empty() || v == crate::nnue::EMBEDDED_NET_NAME {
                    crate::nnue::Network::embedded()
                } else {
                    Arc::new(
                        crate::nnue::Network::load(std::path::Path::new(v))
                            .map_err(|e| UciError::Net(format!("{v}: {e}")))?,
                    )
                };
            }
            "uci_chess960" => {
                self.chess960 = match value.trim().to_ascii_lowercase().as_str() {
                    "true" => true,
                    "false" => false,
                    _ => {
                        return Err(UciError::OptionValue {
                            name: name.to_owned(),
                            value: value.to_owned(),
                        });
                    }
                };
            }
            "ponder" | "uci_showwdl" => {}
            "prune.fh-table" | "prune.rfp-table" => {
                let v = value.trim();
                let slot = usize::from(name.eq_ignore_ascii_case("prune.rfp-table"));
                self.prune_files[slot] =
                    (!v.is_empty() && v != EMBEDDED_TABLES_NAME).then(|| v.into());
                let t = PruneTables::load(
                    self.prune_files[0].as_deref(),
                    self.prune_files[1].as_deref(),
                )
                .map_err(|e| UciError::Prune {
                    name: name.to_owned(),
                    message: e.to_string(),
                })?;
                self.prune.tables = Arc::new(t);
            }
            n if n.starts_with("prune.") => {
                self.prune
                    .set(&n["prune.".len()..], value)
                    .map_err(|message| UciError::Prune {
                        name: name.to_owned(),
                        message,
                    })?
            }
            _ => return Err(UciError::UnknownOption(name.to_owned())),
        }
        Ok(())
    }

    fn start_search(&mut self, g: &GoArgs) -> Result<(), UciError> {
        let mut limits = Limits {
            perft: None,
            ..g.limits.clone()
        };
        for m in &g.searchmoves {
            let mv =
                crate::board::uci_to_move(&self.pos.board, m).map_err(UciError::SearchMoves)?;
            limits.searchmoves.push(mv);
        }
        if limits.depth.is_none() {
            limits.depth = self.default_depth;
        }
        if limits.nodes.is_none() {
            limits.nodes = self.default_nodes;
        }
        // Only the side to move's clock limits the search (TimeManager reads no other).
        // `go btime 100` with White to move used to count as limited and search forever.
        let (ours, theirs) = if crate::search::white_to_move(&self.pos.board) {
            (limits.wtime, limits.btime)
        } else {
            (limits.btime, limits.wtime)
        };
        let mut has_limit = limits.depth.is_some()
            || limits.nodes.is_some()
            || limits.movetime.is_some()
            || ours.is_some();
        // Any clock field (the other side's time, an increment alone, movestogo) without our
        // own time: answer quickly rather than search until `stop`.
        let some_clock = theirs.is_some()
            || limits.winc.is_some()
            || limits.binc.is_some()
            || limits.movestogo.is_some();
        if !has_limit && some_clock && !limits.infinite {
            println!(
                "info string go has no clock for the side to move; searching {NO_CLOCK_MOVETIME_MS} ms"
            );
            limits.movetime = Some(NO_CLOCK_MOVETIME_MS);
            has_limit = true;
        }
        if !has_limit {
            limits.infinite = true;
        }
        // `go ponder`: search without limits until `ponderhit` (then the limits above,
        // counted from that moment) or `stop`.
        self.ponder = g.ponder.then(PonderHit::default);
        if self.lazy_eval && self.use_net {
            let net = self.net.id();
            if self.net_tables.fitted_to() != Some(net.as_str()) {
                println!(
                    "info string NetLazyTables were fitted to {}, not to the net in use ({net}): re-fit them with actuary calibrate net-residual",
                    self.net_tables.fitted_to().unwrap_or("an unnamed net")
                );
            }
        }
        let opts = SearchOptions {
            multipv: self.multipv,
            move_overhead_ms: self.move_overhead,
            verbose: true,
            lazy: (self.lazy_eval && !self.use_net).then(|| Arc::clone(&self.tables)),
            net: self.use_net.then(|| Arc::clone(&self.net)),
            net_lazy: (self.lazy_eval && self.use_net).then(|| Arc::clone(&self.net_tables)),
            prune: self.prune.clone(),
            ponder: self.ponder.clone(),
            chess960: self.chess960,
        };
        let mut workers = std::mem::take(&mut self.workers);
        if workers.is_empty() {
            workers = (0..self.threads).map(Worker::new).collect();
        }
        let tt = Arc::clone(&self.tt);
        let stop = Arc::clone(&self.stop);
        stop.store(false, Relaxed);
        let pos = self.pos.clone();
        let chess960 = self.chess960;
        let failures = Arc::clone(&self.search_failures);
        let fallback = self.fallback_move();
        let handle = std::thread::Builder::new()
            .stack_size(64 << 20)
            .spawn(move || {
                // A panic in the search must still answer the `go` (a GUI waits for its
                // `bestmove`); the workers are rebuilt, since the search left them half-done.
                let r = match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    search(&pos, &limits, &opts, &mut workers, &tt, &stop)
                })) {
                    Ok(r) => r,
                    Err(_) => {
                        failures.fetch_add(1, Relaxed);
                        println!("info string error: the search failed; state reset");
                        println!("bestmove {fallback}");
                        let n = workers.len();
                        return (0..n).map(Worker::new).collect();
                    }
                };
                if r.threads < workers.len() {
                    println!(
                        "info string only {} of {} search threads could start (memory or thread limit)",
                        r.threads,
                        workers.len()
                    );
                }
                println!("info string eval exits {}", exit_breakdown(&r.exits));
                println!("info string prune {}", r.prunes.pairs());
                let best = r
                    .best_move
                    .map(|m| crate::board::move_to_uci_with(&pos.board, m, chess960))
                    .unwrap_or_else(|| "0000".into());
                let ponder = match (r.best_move, r.ponder) {
                    (Some(b), Some(p)) => {
                        let mut after = pos.board.clone();
                        after.play_unchecked(b);
                        after
                            .is_legal(p)
                            .then(|| crate::board::move_to_uci_with(&after, p, chess960))
                    }
                    _ => None,
                };
                match ponder {
                    Some(p) => println!("bestmove {best} ponder {p}"),
                    None => println!("bestmove {best}"),
                }
                workers
            });
        match handle {
            Ok(h) => self.search = Some(h),
            Err(e) => {
                // A GUI waits for `bestmove`: answer with a legal move (or 0000) anyway.
                println!("info string error: cannot start search thread: {e}");
                println!("bestmove {}", self.fallback_move());
                self.workers = (0..self.threads).map(Worker::new).collect();
            }
        }
        Ok(())
    }
}

/// The laboratory's option lines: lazy evaluation, then `option name prune.* ...` (one per
/// knob of [`crate::search::prune::knobs`], typed by its kind, plus the two table files),
/// with `cfg`'s values as defaults.
pub(crate) fn lab_option_lines(cfg: &PruneConfig) -> Vec<String> {
    use crate::search::prune::{SwitchKind, knobs};
    let mut out = vec![
        "option name LazyEval type check default false".to_string(),
        format!("option name LazyTables type string default {EMBEDDED_TABLES_NAME}"),
        format!("option name NetLazyTables type string default {EMBEDDED_TABLES_NAME}"),
    ];
    out.extend(knobs().map(|k| {
        let v = k.get(cfg);
        let key = k.name();
        match k.kind() {
            SwitchKind::OnOff => {
                format!("option name prune.{key} type check default {}", v == "on")
            }
            SwitchKind::Range { min, max } => {
                format!("option name prune.{key} type spin default {v} min {min} max {max}")
            }
            SwitchKind::Choice(names) => {
                let vars: String = names.iter().map(|x| format!(" var {x}")).collect();
                format!("option name prune.{key} type combo default {v}{vars}")
            }
        }
    }));
    out.push(format!(
        "option name prune.fh-table type string default {EMBEDDED_TABLES_NAME}"
    ));
    out.push(format!(
        "option name prune.rfp-table type string default {EMBEDDED_TABLES_NAME}"
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::prune::{EfpMode, Source};

    #[test]
    fn prune_options_are_listed_and_set() {
        let lines = lab_option_lines(&PruneConfig::default());
        assert!(
            lines.contains(
                &"option name prune.lmp type combo default formula var off var formula var table var union"
                    .to_string()
            )
        );
        assert!(lines.contains(&"option name prune.razor type check default true".to_string()));
        assert!(
            lines.contains(&"option name prune.rfp-depth type spin default 8 min 1 max 10".into())
        );
        let mut e = Engine::new();
        e.set_option("prune.lmp", "table").unwrap();
        e.set_option("Prune.EFP", "tiers").unwrap();
        e.set_option("prune.razor", "false").unwrap();
        assert_eq!(e.prune.lmp, Source::Table);
        assert_eq!(e.prune.efp, EfpMode::Tiers);
        assert!(!e.prune.razor);
        let err = e.set_option("prune.lmp", "sometimes").unwrap_err();
        assert!(err.to_string().contains("prune.lmp"), "{err}");
        let err = e
            .set_option("prune.fh-table", "/nonexistent/fh.txt")
            .unwrap_err();
        assert!(err.to_string().contains("/nonexistent/fh.txt"), "{err}");
        e.set_option("prune.fh-table", "<embedded>").unwrap();
    }

    #[test]
    fn clear_hash_empties_the_table_a_search_filled() {
        let mut e = Engine::new();
        e.set_option("Hash", "1").unwrap();
        e.execute(parse_command("position startpos").unwrap())
            .unwrap();
        e.execute(parse_command("go depth 8").unwrap()).unwrap();
        e.end_job(false);
        assert!(
            e.tt.hashfull() > 0,
            "a depth-8 search left the 1 MB table empty"
        );
        e.execute(parse_command("setoption name Clear Hash").unwrap())
            .unwrap();
        assert_eq!(e.tt.hashfull(), 0, "Clear Hash left entries behind");
        assert_eq!(e.hash_mb, 1, "Clear Hash changed the table's size");
    }

    /// A GUI sees the options a player sets; the laboratory's only with `--lab`, and they
    /// are accepted either way (match scripts set `prune.*` on the plain engine).
    #[test]
    fn the_default_lists_player_options_and_the_lab_build_lists_the_rest() {
        let names = |e: &Engine| -> Vec<String> {
            e.option_lines()
                .iter()
                .map(|l| {
                    let rest = l.strip_prefix("option name ").expect(l);
                    rest[..rest.find(" type ").expect(l)].to_string()
                })
                .collect()
        };
        let plain = names(&Engine::new());
        assert_eq!(
            plain,
            [
                "Hash",
                "Clear Hash",
                "Threads",
                "MultiPV",
                "Ponder",
                "UCI_Chess960",
                "Move Overhead",
                "Eval",
                "EvalFile"
            ]
        );
        let lab = names(&Engine::with_lab_options());
        assert_eq!(lab[..plain.len()], plain[..]);
        for want in [
            "LazyEval",
            "LazyTables",
            "prune.lmp",
            "prune.rfp-margin",
            "prune.fh-table",
        ] {
            assert!(lab.iter().any(|n| n == want), "{want} missing from --lab");
        }
        assert!(lab.len() > 40, "{} lab options", lab.len());
        // Accepted without --lab all the same.
        let mut e = Engine::new();
        e.set_option("prune.rfp-margin", "75").unwrap();
        e.set_option("LazyEval", "true").unwrap();
        assert_eq!(e.prune.tune.rfp_margin, 75);
        assert!(e.lazy_eval);
        // The removed options are unknown now.
        assert!(e.set_option("HashWays", "4").is_err());
        assert!(e.set_option("prune.probcut", "on").is_err());
    }

    #[test]
    fn parse_errors_not_panics() {
        for line in [
            "position",
            "position fen",
            "position startpos moves",
            "go depth",
            "go depth x",
            "go wtime -100",
            "setoption",
            "setoption name",
            "sd",
            "blah",
            "position fen 8/8/8 w",
            "\u{0}\u{1}",
            "go nodes 99999999999999999999999",
        ] {
            let _ = parse_command(line);
        }
        assert_eq!(
            parse_command("go wtime -100").unwrap(),
            Command::Go(Box::new(GoArgs {
                limits: Limits {
                    wtime: Some(0),
                    ..Default::default()
                },
                ..Default::default()
            }))
        );
        assert!(parse_command("go depth x").is_err());
        let Command::Go(g) =
            parse_command("go searchmoves e2e4 d2d4 wtime 100 movestogo 5").unwrap()
        else {
            panic!("not a go");
        };
        assert_eq!(g.searchmoves, ["e2e4", "d2d4"]);
        assert_eq!((g.limits.wtime, g.limits.movestogo), (Some(100), Some(5)));
        assert!(parse_command("go searchmoves").is_err());
        assert!(parse_command("go searchmoves infinite").is_err());
        assert!(
            matches!(parse_command("setoption name Move Overhead value 50").unwrap(), Command::SetOption { name, value } if name == "Move Overhead" && value == "50")
        );
    }
}
