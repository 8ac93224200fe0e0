//! Scheduling: game pairs (one opening, colours swapped) over engine pairs, played by N
//! workers; results into W/D/L, pentanomial counts, Elo and the SPRT.

use std::collections::HashSet;
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
use crate::record;

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
    /// Continue the match in `pgn`: the whole game pairs already there are counted, not
    /// replayed (see [`crate::record`]).
    pub resume: bool,
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
    #[error("--resume needs --pgn (the file of the match to continue)")]
    ResumeNeedsPgn,
    /// The PGN to continue is unreadable or not this match's (names, event, time control,
    /// openings): playing on would mix two matches in one score.
    #[error("--resume {0}")]
    Resume(crate::record::ReadError),
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
        let chess960 = cfg.game.chess960;
        if let Err(e) = crate::rules::parse_position_with(&crate::rules::fen(b, chess960), chess960)
        {
            return Err(MatchError::BadOpening(i + 1, e));
        }
        if let Some(end) = crate::book::game_over(b) {
            return Err(MatchError::FinishedOpening(i + 1, end.describe()));
        }
    }
    if cfg.event.chars().any(char::is_control) {
        return Err(MatchError::Event);
    }
    if cfg.resume && cfg.pgn.is_none() {
        return Err(MatchError::ResumeNeedsPgn);
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
    /// Where the SPRT first reached a bound. A running match stops there (games already
    /// under way still finish and count); `--score` reads on to the end of its files.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sprt_stop: Option<SprtStop>,
    /// Per engine of the pair: [first, second].
    pub time_losses: [u32; 2],
    pub crashes: [u32; 2],
    pub illegal_moves: [u32; 2],
    pub hangs: [u32; 2],
}

/// The point where an SPRT reached a bound.
#[derive(Debug, Clone, Copy, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SprtStop {
    /// Games of the pair counted at that point.
    pub games: u32,
    pub decision: SprtDecision,
    pub llr: f64,
    /// Elo estimate (logistic) at that point.
    pub elo: f64,
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

/// splitmix64, for the seeded opening shuffle (and SPSA's draws).
pub(crate) fn splitmix(x: &mut u64) -> u64 {
    *x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *x;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The order in which `n` book positions are used: a Fisher–Yates shuffle seeded by `seed`,
/// or file order. Game pair k (from 0) plays position `order[k % n]`.
pub(crate) fn opening_order(n: usize, random: bool, seed: u64) -> Vec<usize> {
    let mut order: Vec<usize> = (0..n).collect();
    if random {
        let mut s = seed;
        for i in (1..order.len()).rev() {
            let j = (splitmix(&mut s) % (i as u64 + 1)) as usize;
            order.swap(i, j);
        }
    }
    order
}

fn half_points(o: Outcome, first_is_white: bool) -> u8 {
    match (o, first_is_white) {
        (Outcome::Draw, _) => 1,
        (Outcome::White, true) | (Outcome::Black, false) => 2,
        _ => 0,
    }
}

/// A game's fault and who committed it, as the PGN records it.
fn fault_of(g: &GameRecord) -> (record::Fault, &str) {
    match &g.termination {
        Termination::TimeForfeit { loser } => (record::Fault::Time, loser),
        Termination::Crash { loser } => (record::Fault::Crash, loser),
        Termination::IllegalMove { loser, .. } => (record::Fault::Illegal, loser),
        Termination::Hang { loser } => (record::Fault::Hang, loser),
        _ => (record::Fault::None, ""),
    }
}

impl PairResult {
    fn new(first: &str, second: &str) -> Self {
        PairResult {
            first: first.to_owned(),
            second: second.to_owned(),
            games: 0,
            wins: 0,
            draws: 0,
            losses: 0,
            pentanomial: Pentanomial::default(),
            elo: EloEstimate::from_wdl(0, 0, 0),
            sprt: None,
            sprt_stop: None,
            time_losses: [0; 2],
            crashes: [0; 2],
            illegal_moves: [0; 2],
            hangs: [0; 2],
        }
    }

    /// Count one game pair: the first engine's half points in each game and each game's
    /// fault with its culprit. Returns whether the SPRT (if any) has now decided.
    fn add(
        &mut self,
        half: [u8; 2],
        faults: [(record::Fault, &str); 2],
        sprt: Option<Sprt>,
    ) -> bool {
        for h in half {
            match h {
                2 => self.wins += 1,
                1 => self.draws += 1,
                _ => self.losses += 1,
            }
        }
        for (fault, loser) in faults {
            let who = usize::from(loser != self.first);
            match fault {
                record::Fault::Time => self.time_losses[who] += 1,
                record::Fault::Crash => self.crashes[who] += 1,
                record::Fault::Illegal => self.illegal_moves[who] += 1,
                record::Fault::Hang => self.hangs[who] += 1,
                record::Fault::None => {}
            }
        }
        self.games += 2;
        self.pentanomial.add_pair(half[0], half[1]);
        self.elo = EloEstimate::from_pentanomial(&self.pentanomial);
        let Some(sprt) = sprt else { return false };
        let st = sprt.status(&self.pentanomial);
        self.sprt = Some(st);
        let decided = st.decision != SprtDecision::Continue;
        if decided && self.sprt_stop.is_none() {
            self.sprt_stop = Some(SprtStop {
                games: self.games,
                decision: st.decision,
                llr: st.llr,
                elo: self.elo.elo,
            });
        }
        decided
    }

    /// Count a pair read back from a PGN.
    fn add_record(&mut self, pair: &record::Pair, sprt: Option<Sprt>) -> bool {
        let faults = pair.games.each_ref().map(|g| {
            let loser = match g.outcome {
                Outcome::White => g.black.as_str(),
                Outcome::Black => g.white.as_str(),
                Outcome::Draw => "",
            };
            (g.fault, loser)
        });
        self.add(pair.half_points(), faults, sprt)
    }
}

/// Score PGN files this arbiter wrote, without playing (`arbiter --score`): every whole game
/// pair of every file, in order, per engine pair (the first engine of a pair is the one with
/// White in its first game). With an SPRT, `sprt_stop` says where the test
/// would have stopped had the games been played in this order. A cut-off game pair at the end
/// of a file is left out and named in the returned notes.
pub fn score(
    paths: &[PathBuf],
    sprt: Option<Sprt>,
) -> Result<(Report, Vec<String>), record::ReadError> {
    let mut results: Vec<PairResult> = Vec::new();
    let (mut events, mut tcs, mut notes) = (Vec::<String>::new(), Vec::<String>::new(), Vec::new());
    let mut played = 0u64;
    let mut stopped = false;
    // A file named twice (or by two names) would count its games twice.
    let mut seen_files: Vec<PathBuf> = Vec::new();
    for path in paths {
        let real = path.canonicalize().unwrap_or_else(|_| path.clone());
        if seen_files.contains(&real) {
            return Err(record::ReadError {
                path: path.clone(),
                line: None,
                reason: "given twice: its games would count twice".into(),
            });
        }
        seen_files.push(real);
        let file = record::read(path)?;
        if let Some((line, why)) = &file.tail {
            notes.push(format!(
                "{} line {line}: {why}; not counted",
                path.display()
            ));
        }
        for pair in &file.pairs {
            let g = &pair.games[0];
            for (seen, v) in [(&mut events, &g.event), (&mut tcs, &g.time_control)] {
                if !seen.contains(v) {
                    seen.push(v.clone());
                }
            }
            let i = match results
                .iter()
                .position(|r| r.first == pair.first() && r.second == pair.second())
            {
                Some(i) => i,
                None => {
                    if sprt.is_some() && !results.is_empty() {
                        return Err(record::ReadError {
                            path: path.clone(),
                            line: Some(g.line),
                            reason: format!(
                                "--sprt needs one engine pair, and `{}` vs `{}` is a second",
                                pair.first(),
                                pair.second()
                            ),
                        });
                    }
                    results.push(PairResult::new(pair.first(), pair.second()));
                    results.len() - 1
                }
            };
            stopped |= results[i].add_record(pair, sprt);
            played += 2;
        }
    }
    let report = Report {
        event: if events.is_empty() {
            "no games".into()
        } else {
            events.join(" + ")
        },
        time_control: tcs.join(", "),
        games: played,
        pairs: results,
        stopped_by_sprt: stopped,
    };
    Ok((report, notes))
}

/// The plan of a match: which engine pairs play, and which game pair of which engine pair each
/// job is. Job j plays game pair j / pairs of engine pair j % pairs: the jobs interleave engine
/// pairs, so a gauntlet makes progress on every opponent at once.
struct Schedule<'a> {
    cfg: &'a MatchConfig,
    /// Engine pairs (first, second) by index into `cfg.engines`.
    pairs: Vec<(usize, usize)>,
    /// Book position of game pair k: `order[k % order.len()]`.
    order: Vec<usize>,
    game_pairs: u64,
}

impl<'a> Schedule<'a> {
    /// Two engines: one pair; more: every pair (`round_robin`) or engine 0 against each other.
    fn new(cfg: &'a MatchConfig) -> Result<Self, MatchError> {
        let n = cfg.engines.len();
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
        Ok(Self {
            cfg,
            pairs,
            order: opening_order(cfg.openings.len(), cfg.random_openings, cfg.seed),
            game_pairs: u64::from(cfg.games.div_ceil(2)),
        })
    }

    fn jobs(&self) -> u64 {
        self.game_pairs * self.pairs.len() as u64
    }

    /// Job j: (engine pair, game pair k from 0).
    fn job(&self, j: u64) -> (usize, u64) {
        let n = self.pairs.len() as u64;
        ((j % n) as usize, j / n)
    }

    /// The job of game pair k of engine pair p.
    fn job_of(&self, p: usize, k: u64) -> u64 {
        k * self.pairs.len() as u64 + p as u64
    }

    fn opening(&self, k: u64) -> &'a Board {
        &self.cfg.openings[self.order[(k % self.order.len() as u64) as usize]]
    }

    fn name(&self, e: usize) -> &'a str {
        &self.cfg.engines[e].name
    }

    /// Empty results, one per engine pair.
    fn tally(&self) -> Tally {
        Tally {
            results: self
                .pairs
                .iter()
                .map(|&(a, b)| PairResult::new(self.name(a), self.name(b)))
                .collect(),
            played: 0,
        }
    }
}

/// Resume: count the whole game pairs already in the match's PGN into `t`, after checking
/// that each is this match's (event, time control, engine pair, game pair, opening) and none
/// is there twice; a cut-off pair at the end is removed (it is played again). Returns the
/// jobs already done and whether the SPRT had already decided.
fn resume(
    sched: &Schedule,
    w: &PgnWriter,
    path: &Path,
    tc: &str,
    t: &mut Tally,
) -> Result<(HashSet<u64>, bool), MatchError> {
    let cfg = sched.cfg;
    let file = record::read(path).map_err(MatchError::Resume)?;
    let (mut done, mut decided) = (HashSet::new(), false);
    for pair in &file.pairs {
        let g = &pair.games[0];
        let bad = |reason: String| {
            MatchError::Resume(record::ReadError {
                path: path.to_owned(),
                line: Some(g.line),
                reason,
            })
        };
        if g.event != cfg.event {
            return Err(bad(format!(
                "Event \"{}\" is not this match's --event \"{}\"",
                g.event, cfg.event
            )));
        }
        if g.time_control != tc {
            return Err(bad(format!(
                "TimeControl \"{}\" is not this match's \"{tc}\"",
                g.time_control
            )));
        }
        let p = sched
            .pairs
            .iter()
            .position(|&(a, b)| sched.name(a) == pair.first() && sched.name(b) == pair.second())
            .ok_or_else(|| {
                bad(format!(
                    "`{}` vs `{}` is not an engine pair of this match (give the engines \
                     with the names and in the order of the first run)",
                    pair.first(),
                    pair.second()
                ))
            })?;
        let k = g.pair - 1;
        if k >= sched.game_pairs {
            return Err(bad(format!(
                "game pair {} is beyond --games {} of this match",
                g.pair, cfg.games
            )));
        }
        let scheduled = crate::rules::fen(sched.opening(k), cfg.game.chess960);
        let standard_start = (!cfg.game.chess960).then_some(crate::rules::STARTPOS);
        if g.fen.as_deref().or(standard_start) != Some(scheduled.as_str()) {
            return Err(bad(format!(
                "game pair {} began from another opening than this match gives it (give \
                 the first run's --book, --book-order and --seed)",
                g.pair
            )));
        }
        if !done.insert(sched.job_of(p, k)) {
            return Err(bad(format!("game pair {} is in the file twice", g.pair)));
        }
        decided |= t.results[p].add_record(pair, cfg.sprt);
        t.played += 2;
    }
    if let Some((line, why)) = &file.tail {
        w.cut_back(file.whole_len).map_err(|e| {
            MatchError::Output(OutputError::Pgn {
                path: path.to_owned(),
                reason: format!("cannot cut off the unfinished game pair: {e}"),
            })
        })?;
        let _ = writeln!(
            std::io::stderr(),
            "--resume {} line {line}: {why}; removed, that pair is played again",
            path.display()
        );
    }
    if !cfg.quiet {
        let _ = writeln!(
            std::io::stderr(),
            "--resume: {} games already played are counted ({} game pairs left)",
            t.played,
            sched.jobs() - done.len() as u64
        );
    }
    Ok((done, decided))
}

/// Referee one job: games 2j+1 (the pair's first engine has White) and 2j+2 (colours
/// swapped) from the same opening, each engine's stderr to its log.
fn play_job(sched: &Schedule, j: u64) -> Result<[GameRecord; 2], GameError> {
    let cfg = sched.cfg;
    let (p, k) = sched.job(j);
    let (a, b) = sched.pairs[p];
    let logs = |game: u64, white: usize, black: usize| {
        [white, black].map(|e| {
            cfg.log_dir
                .as_deref()
                .map(|d| log_path(d, sched.name(e), game as usize))
        })
    };
    let (ea, eb) = (&cfg.engines[a], &cfg.engines[b]);
    let opening = sched.opening(k);
    let g1 = play(ea, eb, opening, &cfg.game, &logs(2 * j + 1, a, b))?;
    let g2 = play(eb, ea, opening, &cfg.game, &logs(2 * j + 2, b, a))?;
    Ok([g1, g2])
}

/// The PGN of game pair k, written in one append: the pair is the unit of the score
/// (pentanomial), so the PGN holds exactly the games counted.
fn pair_pgn(cfg: &MatchConfig, k: u64, tc: &str, games: &[GameRecord; 2]) -> String {
    let mut record = String::new();
    for (i, g) in games.iter().enumerate() {
        let round = format!("{}.{}", k + 1, i + 1);
        record.push_str(&crate::pgn::write(g, &cfg.event, &round, tc));
    }
    record
}

impl Tally {
    /// Count a played game pair of engine pair p; true if the SPRT has decided.
    fn count(&mut self, p: usize, [g1, g2]: &[GameRecord; 2], sprt: Option<Sprt>) -> bool {
        let half = [
            half_points(g1.outcome, true),
            half_points(g2.outcome, false),
        ];
        let decided = self.results[p].add(half, [fault_of(g1), fault_of(g2)], sprt);
        self.played += 2;
        decided
    }

    /// The progress line on stderr after a pair of engine pair p (best effort: a closed
    /// stderr must not stop the match).
    fn progress(&self, total: u64, p: usize) {
        let r = &self.results[p];
        let llr = r.sprt.map_or(String::new(), |s| {
            format!(
                "  LLR {:.2} [{:.2}, {:.2}]",
                s.llr, s.lower_bound, s.upper_bound
            )
        });
        let _ = write!(
            std::io::stderr(),
            "\r{}/{} games  {} vs {}: {}-{}-{}  Elo {:+.1} ± {:.1}{llr}    ",
            self.played,
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

/// Run the match; PGN games are appended as they finish.
///
/// The steps: check ([`check_config`], the `Schedule`, [`check_engines`]), prepare the log
/// directory and the PGN file (see [`crate::output`]), resume from the PGN, then workers take
/// jobs in order — referee a game pair, record it, count it, report progress — until the jobs
/// run out, the SPRT decides or something fails. A failure before the first game is a
/// [`MatchError`] with nothing played; a failure once games are under way (a PGN write, an
/// engine that can no longer be started) stops the match with [`MatchError::Stopped`].
pub fn run(cfg: &MatchConfig) -> Result<Report, MatchError> {
    check_config(cfg)?;
    let sched = Schedule::new(cfg)?;
    check_engines(cfg)?;
    if let Some(dir) = &cfg.log_dir {
        crate::output::prepare_log_dir(dir)?;
    }
    let pgn = match &cfg.pgn {
        Some(p) => Some(PgnWriter::open(p)?),
        None => None,
    };
    let tc = cfg.game.limit.pgn_tag();
    let mut t = sched.tally();
    // jobs already played (a resumed match): counted now, skipped by the workers
    let (done, decided) = match (&pgn, &cfg.pgn) {
        (Some(w), Some(path)) if cfg.resume => resume(&sched, w, path, &tc, &mut t)?,
        _ => (HashSet::new(), false),
    };
    let jobs = sched.jobs();
    let tally = Mutex::new(t);
    let next = AtomicU64::new(0);
    let stop = AtomicBool::new(decided);
    let stopped_by_sprt = AtomicBool::new(decided);
    let fault: Mutex<Option<Fault>> = Mutex::new(None);
    let fail = |f: Fault| {
        let mut slot = fault.lock().unwrap_or_else(|p| p.into_inner());
        slot.get_or_insert(f);
        stop.store(true, Relaxed);
    };
    let worker = || {
        while !stop.load(Relaxed) {
            let j = next.fetch_add(1, Relaxed);
            if j >= jobs {
                break;
            }
            if done.contains(&j) {
                continue;
            }
            let (p, k) = sched.job(j);
            let games = match play_job(&sched, j) {
                Ok(g) => g,
                Err(e) => {
                    fail(Fault::Game(e));
                    break;
                }
            };
            if let Some(w) = &pgn
                && let Err(source) = w.append(&pair_pgn(cfg, k, &tc, &games))
            {
                fail(Fault::Pgn {
                    path: w.path().to_owned(),
                    source,
                });
                break;
            }
            let mut t = tally.lock().unwrap_or_else(|p| p.into_inner());
            if t.count(p, &games, cfg.sprt) {
                stopped_by_sprt.store(true, Relaxed);
                stop.store(true, Relaxed);
            }
            if !cfg.quiet {
                t.progress(jobs * 2, p);
            }
        }
    };
    std::thread::scope(|s| {
        let workers = (cfg.concurrency as u64).min(jobs).max(1) as usize;
        for i in 0..workers {
            let spawned = std::thread::Builder::new()
                .name(format!("arbiter-worker-{i}"))
                .spawn_scoped(s, worker);
            if let Err(e) = spawned {
                if i == 0 {
                    fail(Fault::Thread(e));
                }
                // otherwise play on with the workers there are
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
    for p in &r.pairs {
        if let Some(st) = p.sprt_stop {
            s.push_str(&format!(
                "\nSPRT {} vs {}: {:?} after {} games (LLR {:.2}, Elo {:+.1} there).",
                p.first, p.second, st.decision, st.games, st.llr, st.elo
            ));
        }
    }
    s.push_str("\nElo is logistic, for the first engine of each pair; faults are first/second. SPRT: pentanomial GSPRT, logistic Elo.\n");
    s
}
