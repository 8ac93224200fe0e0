//! Scheduling: game pairs (one opening, colours swapped) over engine pairs, played by N
//! workers; results into W/D/L, pentanomial counts, Elo and the SPRT.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::time::Duration;

use cozy_chess::Board;
use evidence::{EloEstimate, Pentanomial, Sprt, SprtDecision, SprtStatus};
use serde::Serialize;

use crate::engine::{Engine, EngineSpec};
use crate::game::{
    GameConfig, GameError, GameRecord, Limit, MAX_BASE_SECONDS, MAX_INC_SECONDS, Outcome,
    Termination, play,
};
use crate::output::{OutputError, PgnWriter};

/// Everything a match needs.
pub struct MatchConfig {
    pub engines: Vec<EngineSpec>,
    /// With more than two engines: every pair (true) or engine 0 against each other (false).
    pub round_robin: bool,
    /// Start positions; none may be a finished game (see [`crate::book`]).
    pub openings: Vec<Board>,
    /// Shuffle the book (seeded) instead of taking it in order.
    pub random_openings: bool,
    pub seed: u64,
    /// Games per engine pair (rounded up to an even number: pairs of games), 1 to
    /// [`MAX_GAMES`].
    pub games: u32,
    /// Games at once, 1 to [`MAX_CONCURRENCY`].
    pub concurrency: usize,
    pub game: GameConfig,
    pub sprt: Option<Sprt>,
    pub pgn: Option<PathBuf>,
    /// Each engine process's stderr goes to `DIR/<engine>-game<N>.log` (N counts the games
    /// of the match from 1, in scheduling order); without it, stderr is discarded.
    pub log_dir: Option<PathBuf>,
    pub event: String,
    pub quiet: bool,
}

/// The most games per engine pair.
pub const MAX_GAMES: u32 = 100_000_000;
/// The most games at once.
pub const MAX_CONCURRENCY: usize = 256;
/// The longest `--hang-timeout`, seconds (a day).
pub const MAX_HANG_TIMEOUT_SECONDS: u64 = 86_400;
/// The largest `--timemargin`, ms (a minute).
pub const MAX_TIME_MARGIN_MS: u64 = 60_000;
/// The deepest fixed-depth search.
pub const MAX_DEPTH: u32 = 1_000;

/// A match that cannot start (nothing has been played or written).
#[derive(Debug, thiserror::Error)]
pub enum MatchError {
    #[error("a match needs at least two engines")]
    TooFewEngines,
    #[error("two engines are named `{0}`; give each a distinct name=")]
    DuplicateName(String),
    #[error("--sprt needs exactly two engines")]
    SprtNeedsTwo,
    #[error("--sprt: {0}")]
    Sprt(#[from] crate::sprt::SprtError),
    #[error("no openings")]
    NoOpenings,
    #[error("opening {0}: {1}")]
    BadOpening(usize, crate::rules::RulesError),
    #[error("opening {0} is a finished game ({1}); it cannot be played")]
    FinishedOpening(usize, &'static str),
    #[error("{flag} must be between {min} and {max} (got {got})")]
    OutOfRange {
        flag: &'static str,
        min: u64,
        max: u64,
        got: u64,
    },
    #[error("--tc: {0}")]
    Tc(#[from] crate::game::TcError),
    #[error("--event must not hold control characters")]
    Event,
    #[error("--engine name={name}: {reason}")]
    Engine { name: String, reason: String },
    #[error(transparent)]
    Output(#[from] OutputError),
    /// The match started and could not go on: the games played so far are in the PGN, no
    /// game was scored that was not played.
    #[error("the match stopped after {played} games: {fault}")]
    Stopped { played: u64, fault: Fault },
}

/// What stopped a running match.
#[derive(Debug, thiserror::Error)]
pub enum Fault {
    #[error("cannot write the PGN {}: {source}", path.display())]
    Pgn {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(transparent)]
    Game(#[from] GameError),
    #[error("cannot start a worker thread: {0}")]
    Thread(std::io::Error),
}

impl MatchError {
    /// Whether games were played before the failure (the match started).
    pub fn started(&self) -> bool {
        matches!(self, MatchError::Stopped { .. })
    }
}

/// The checks that need no process or file: counts, bounds, names, openings, SPRT.
pub fn check_config(cfg: &MatchConfig) -> Result<(), MatchError> {
    if cfg.engines.len() < 2 {
        return Err(MatchError::TooFewEngines);
    }
    let names: Vec<&String> = cfg.engines.iter().map(|e| &e.name).collect();
    for (i, a) in names.iter().enumerate() {
        if names[..i].contains(a) {
            return Err(MatchError::DuplicateName(a.to_string()));
        }
    }
    let range = |flag, min: u64, max: u64, got: u64| {
        if (min..=max).contains(&got) {
            Ok(())
        } else {
            Err(MatchError::OutOfRange {
                flag,
                min,
                max,
                got,
            })
        }
    };
    range("--games", 1, MAX_GAMES.into(), cfg.games.into())?;
    range(
        "--concurrency",
        1,
        MAX_CONCURRENCY as u64,
        cfg.concurrency as u64,
    )?;
    let hang = cfg.game.hang_timeout;
    if hang.is_zero() || hang > Duration::from_secs(MAX_HANG_TIMEOUT_SECONDS) {
        return Err(MatchError::OutOfRange {
            flag: "--hang-timeout",
            min: 1,
            max: MAX_HANG_TIMEOUT_SECONDS,
            got: hang.as_secs(),
        });
    }
    range("--timemargin", 0, MAX_TIME_MARGIN_MS, cfg.game.margin_ms)?;
    match cfg.game.limit {
        Limit::Clock { base_ms, inc_ms } => {
            let max_base = (MAX_BASE_SECONDS * 1000.0) as u64;
            let max_inc = (MAX_INC_SECONDS * 1000.0) as u64;
            if !(1..=max_base).contains(&base_ms) || inc_ms > max_inc {
                return Err(MatchError::Tc(crate::game::TcError));
            }
        }
        Limit::Nodes(n) => range("--nodes", 1, u64::MAX, n)?,
        Limit::Depth(d) => range("--depth", 1, MAX_DEPTH.into(), d.into())?,
    }
    if let Some(s) = &cfg.sprt {
        crate::sprt::check(s)?;
    }
    if cfg.openings.is_empty() {
        return Err(MatchError::NoOpenings);
    }
    for (i, b) in cfg.openings.iter().enumerate() {
        if let Err(e) = crate::rules::parse_position(&b.to_string()) {
            return Err(MatchError::BadOpening(i + 1, e));
        }
        if let Some(end) = crate::book::game_over(b) {
            return Err(MatchError::FinishedOpening(i + 1, end.describe()));
        }
    }
    if cfg.event.chars().any(char::is_control) {
        return Err(MatchError::Event);
    }
    Ok(())
}

/// Start every engine once (spawn, `uci`, options, `isready`, each answer within the hang
/// timeout) and quit it: an engine that cannot play is refused before the first game.
pub fn check_engines(cfg: &MatchConfig) -> Result<(), MatchError> {
    for e in &cfg.engines {
        Engine::probe(e, cfg.game.hang_timeout).map_err(|reason| MatchError::Engine {
            name: e.name.clone(),
            reason: format!("cmd={}: {reason}", e.cmd),
        })?;
    }
    Ok(())
}

/// The stderr log of engine `name` in game `game` (a name made safe for a file name).
pub fn log_path(dir: &Path, name: &str, game: usize) -> PathBuf {
    let safe: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '_'
            }
        })
        .collect();
    dir.join(format!("{safe}-game{game}.log"))
}

/// Results of one engine pair, from the first engine's point of view.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PairResult {
    pub first: String,
    pub second: String,
    pub games: u32,
    pub wins: u32,
    pub draws: u32,
    pub losses: u32,
    pub pentanomial: Pentanomial,
    /// Elo of `first` over `second` (logistic), 95 % interval from the pentanomial variance.
    pub elo: EloEstimate,
    pub sprt: Option<SprtStatus>,
    /// Per engine of the pair: [first, second].
    pub time_losses: [u32; 2],
    pub crashes: [u32; 2],
    pub illegal_moves: [u32; 2],
    pub hangs: [u32; 2],
}

/// The final report.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Report {
    pub event: String,
    pub time_control: String,
    pub games: u64,
    pub pairs: Vec<PairResult>,
    pub stopped_by_sprt: bool,
}

struct Tally {
    results: Vec<PairResult>,
    played: u64,
}

/// splitmix64, for the seeded opening shuffle.
fn splitmix(x: &mut u64) -> u64 {
    *x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *x;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

fn half_points(o: Outcome, first_is_white: bool) -> u8 {
    match (o, first_is_white) {
        (Outcome::Draw, _) => 1,
        (Outcome::White, true) | (Outcome::Black, false) => 2,
        _ => 0,
    }
}

fn note_faults(r: &mut PairResult, g: &GameRecord) {
    let who = |name: &str| if name == r.first { 0 } else { 1 };
    match &g.termination {
        Termination::TimeForfeit { loser } => r.time_losses[who(loser)] += 1,
        Termination::Crash { loser } => r.crashes[who(loser)] += 1,
        Termination::IllegalMove { loser, .. } => r.illegal_moves[who(loser)] += 1,
        Termination::Hang { loser } => r.hangs[who(loser)] += 1,
        _ => {}
    }
}

/// Run the match; PGN games are appended as they finish.
///
/// Before the first game: [`check_config`], [`check_engines`], then the log directory and
/// the PGN file are prepared (see [`crate::output`]). A failure there is a [`MatchError`]
/// with nothing played; a failure once games are under way (a PGN write, an engine that can
/// no longer be started) stops the match with [`MatchError::Stopped`].
pub fn run(cfg: &MatchConfig) -> Result<Report, MatchError> {
    check_config(cfg)?;
    let n = cfg.engines.len();
    let names: Vec<&String> = cfg.engines.iter().map(|e| &e.name).collect();
    let pairs: Vec<(usize, usize)> = if n == 2 {
        vec![(0, 1)]
    } else if cfg.round_robin {
        (0..n)
            .flat_map(|i| (i + 1..n).map(move |j| (i, j)))
            .collect()
    } else {
        (1..n).map(|j| (0, j)).collect()
    };
    if cfg.sprt.is_some() && pairs.len() != 1 {
        return Err(MatchError::SprtNeedsTwo);
    }
    check_engines(cfg)?;
    if let Some(dir) = &cfg.log_dir {
        crate::output::prepare_log_dir(dir)?;
    }
    let pgn = match &cfg.pgn {
        Some(p) => Some(PgnWriter::open(p)?),
        None => None,
    };
    let mut order: Vec<usize> = (0..cfg.openings.len()).collect();
    if cfg.random_openings {
        let mut s = cfg.seed;
        for i in (1..order.len()).rev() {
            let j = (splitmix(&mut s) % (i as u64 + 1)) as usize;
            order.swap(i, j);
        }
    }
    let game_pairs = u64::from(cfg.games.div_ceil(2));
    // Job j plays game pair j / pairs of engine pair j % pairs: the jobs interleave engine
    // pairs so a gauntlet makes progress on every opponent at once.
    let jobs = game_pairs * pairs.len() as u64;
    let tally = Mutex::new(Tally {
        results: pairs
            .iter()
            .map(|&(a, b)| PairResult {
                first: names[a].clone(),
                second: names[b].clone(),
                games: 0,
                wins: 0,
                draws: 0,
                losses: 0,
                pentanomial: Pentanomial::default(),
                elo: EloEstimate::from_wdl(0, 0, 0),
                sprt: None,
                time_losses: [0; 2],
                crashes: [0; 2],
                illegal_moves: [0; 2],
                hangs: [0; 2],
            })
            .collect(),
        played: 0,
    });
    let next = AtomicU64::new(0);
    let stop = AtomicBool::new(false);
    let stopped_by_sprt = AtomicBool::new(false);
    let fault: Mutex<Option<Fault>> = Mutex::new(None);
    let fail = |f: Fault| {
        let mut slot = fault.lock().unwrap_or_else(|p| p.into_inner());
        slot.get_or_insert(f);
        stop.store(true, Relaxed);
    };
    let total = jobs * 2;
    let tc = cfg.game.limit.pgn_tag();
    let workers = (cfg.concurrency as u64).min(jobs).max(1) as usize;
    let worker = || {
        loop {
            if stop.load(Relaxed) {
                break;
            }
            let j = next.fetch_add(1, Relaxed);
            if j >= jobs {
                break;
            }
            let (p, k) = ((j % pairs.len() as u64) as usize, j / pairs.len() as u64);
            let (a, b) = pairs[p];
            let opening = &cfg.openings[order[(k % order.len() as u64) as usize]];
            // Games 2j+1 (a has White) and 2j+2 (b has White) of the match.
            let logs = |game: u64, white: usize, black: usize| {
                [white, black].map(|e| {
                    cfg.log_dir
                        .as_deref()
                        .map(|d| log_path(d, &cfg.engines[e].name, game as usize))
                })
            };
            let (ea, eb) = (&cfg.engines[a], &cfg.engines[b]);
            let games = play(ea, eb, opening, &cfg.game, &logs(2 * j + 1, a, b)).and_then(|g1| {
                play(eb, ea, opening, &cfg.game, &logs(2 * j + 2, b, a)).map(|g2| (g1, g2))
            });
            let (g1, g2) = match games {
                Ok(g) => g,
                Err(e) => {
                    fail(Fault::Game(e));
                    break;
                }
            };
            if let Some(w) = &pgn {
                // The pair is the unit of the score (pentanomial): one write for both games,
                // so the PGN holds exactly the games counted.
                let mut record = String::new();
                for (i, g) in [&g1, &g2].into_iter().enumerate() {
                    let round = format!("{}.{}", k + 1, i + 1);
                    record.push_str(&crate::pgn::write(g, &cfg.event, &round, &tc));
                }
                if let Err(source) = w.append(&record) {
                    fail(Fault::Pgn {
                        path: w.path().to_owned(),
                        source,
                    });
                    break;
                }
            }
            let mut t = tally.lock().unwrap_or_else(|p| p.into_inner());
            let r = &mut t.results[p];
            let (h1, h2) = (
                half_points(g1.outcome, true),
                half_points(g2.outcome, false),
            );
            for h in [h1, h2] {
                match h {
                    2 => r.wins += 1,
                    1 => r.draws += 1,
                    _ => r.losses += 1,
                }
            }
            note_faults(r, &g1);
            note_faults(r, &g2);
            r.games += 2;
            r.pentanomial.add_pair(h1, h2);
            r.elo = EloEstimate::from_pentanomial(&r.pentanomial);
            if let Some(sprt) = cfg.sprt {
                let st = sprt.status(&r.pentanomial);
                r.sprt = Some(st);
                if st.decision != SprtDecision::Continue {
                    stopped_by_sprt.store(true, Relaxed);
                    stop.store(true, Relaxed);
                }
            }
            t.played += 2;
            if !cfg.quiet {
                let r = &t.results[p];
                let llr = r.sprt.map_or(String::new(), |s| {
                    format!(
                        "  LLR {:.2} [{:.2}, {:.2}]",
                        s.llr, s.lower_bound, s.upper_bound
                    )
                });
                // Progress is best effort: a closed stderr must not stop the match.
                let _ = write!(
                    std::io::stderr(),
                    "\r{}/{} games  {} vs {}: {}-{}-{}  Elo {:+.1} ± {:.1}{llr}    ",
                    t.played,
                    total,
                    r.first,
                    r.second,
                    r.wins,
                    r.draws,
                    r.losses,
                    r.elo.elo,
                    r.elo.error
                );
            }
        }
    };
    std::thread::scope(|s| {
        for i in 0..workers {
            let spawned = std::thread::Builder::new()
                .name(format!("arbiter-worker-{i}"))
                .spawn_scoped(s, worker);
            if let Err(e) = spawned {
                if i == 0 {
                    fail(Fault::Thread(e));
                }
                // Otherwise play on with the workers there are.
                break;
            }
        }
    });
    if !cfg.quiet {
        let _ = writeln!(std::io::stderr());
    }
    let t = tally.into_inner().unwrap_or_else(|p| p.into_inner());
    let mut fault = fault.into_inner().unwrap_or_else(|p| p.into_inner());
    if fault.is_none()
        && let Some(w) = &pgn
        && let Err(source) = w.finish()
    {
        fault = Some(Fault::Pgn {
            path: w.path().to_owned(),
            source,
        });
    }
    if let Some(fault) = fault {
        return Err(MatchError::Stopped {
            played: t.played,
            fault,
        });
    }
    Ok(Report {
        event: cfg.event.clone(),
        time_control: tc,
        games: t.played,
        pairs: t.results,
        stopped_by_sprt: stopped_by_sprt.load(Relaxed),
    })
}

/// The report as a text table.
pub fn text(r: &Report) -> String {
    let mut s = format!("{} — {} games at {}\n\n", r.event, r.games, r.time_control);
    s.push_str("| pair | games | W-D-L | score | Elo (95 %) | pentanomial 0-½-1-1½-2 | LLR | time losses | crashes | illegal | hangs |\n");
    s.push_str("|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n");
    for p in &r.pairs {
        let llr = p.sprt.map_or("-".to_owned(), |x| {
            format!(
                "{:.2} [{:.2}, {:.2}] {:?}",
                x.llr, x.lower_bound, x.upper_bound, x.decision
            )
        });
        let c = p.pentanomial.counts;
        s.push_str(&format!(
            "| {} vs {} | {} | {}-{}-{} | {:.1} % | {:+.1} [{:+.1}, {:+.1}] | {}-{}-{}-{}-{} | {llr} | {}/{} | {}/{} | {}/{} | {}/{} |\n",
            p.first,
            p.second,
            p.games,
            p.wins,
            p.draws,
            p.losses,
            100.0 * p.elo.score,
            p.elo.elo,
            p.elo.lower,
            p.elo.upper,
            c[0],
            c[1],
            c[2],
            c[3],
            c[4],
            p.time_losses[0],
            p.time_losses[1],
            p.crashes[0],
            p.crashes[1],
            p.illegal_moves[0],
            p.illegal_moves[1],
            p.hangs[0],
            p.hangs[1],
        ));
    }
    s.push_str("\nElo is logistic, for the first engine of each pair; faults are first/second. SPRT: pentanomial GSPRT, logistic Elo.\n");
    s
}
