//! One game between two engines, refereed move by move.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use cozy_chess::{Board, Color};
use serde::Serialize;

use crate::engine::{Engine, EngineError, EngineSpec, Stderr, deadline_after};
use crate::rules::{BoardEnd, Position, from_uci_with};

/// How long each side may think.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Limit {
    /// Base time and increment per move, in milliseconds (`10+0.1` = 10,000 + 100).
    Clock {
        base_ms: u64,
        inc_ms: u64,
    },
    Nodes(u64),
    Depth(u32),
}

/// The longest base time `--tc` accepts, in seconds (a day).
pub const MAX_BASE_SECONDS: f64 = 86_400.0;
/// The largest increment `--tc` accepts, in seconds (an hour).
pub const MAX_INC_SECONDS: f64 = 3_600.0;

/// A time control that is not `BASE+INC` within bounds.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "expected BASE+INC in seconds, e.g. 10+0.1 (or BASE alone), with 0.001 <= BASE <= 86400 \
     and 0 <= INC <= 3600"
)]
pub struct TcError;

/// A refused `--adjudicate` value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "expected five comma-separated integers RESIGN_CP,RESIGN_MOVES,DRAW_CP,DRAW_MOVES,DRAW_AFTER \
     (1 <= RESIGN_CP <= 30000, 0 <= DRAW_CP <= 30000, counts >= 0 where 0 turns that rule off), \
     e.g. 1000,3,10,8,40"
)]
pub struct AdjudicationError;

impl Limit {
    /// Parse `10+0.1` (seconds, kept to the millisecond); `--nodes`/`--depth` values are built
    /// directly. The base must round to at least 1 ms and be at most [`MAX_BASE_SECONDS`]; the
    /// increment at most [`MAX_INC_SECONDS`]: the clock arithmetic never overflows.
    pub fn parse_tc(s: &str) -> Result<Self, TcError> {
        let (b, i) = s.split_once('+').unwrap_or((s, "0"));
        let ms = |x: &str, max: f64| {
            let v = x.trim().parse::<f64>().ok()?;
            (v.is_finite() && v >= 0.0 && v <= max).then(|| (v * 1000.0).round() as u64)
        };
        match (ms(b, MAX_BASE_SECONDS), ms(i, MAX_INC_SECONDS)) {
            (Some(base_ms), Some(inc_ms)) if base_ms >= 1 => Ok(Limit::Clock { base_ms, inc_ms }),
            _ => Err(TcError),
        }
    }

    /// The PGN TimeControl tag.
    pub fn pgn_tag(&self) -> String {
        match *self {
            Limit::Clock { base_ms, inc_ms } => {
                format!("{}+{}", base_ms as f64 / 1000.0, inc_ms as f64 / 1000.0)
            }
            Limit::Nodes(n) => format!("nodes={n}"),
            Limit::Depth(d) => format!("depth={d}"),
        }
    }
}

/// Optional score-based adjudication (off unless asked for).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Adjudication {
    /// Resign when both engines agree one side is at least this many centipawns behind …
    pub resign_cp: i32,
    /// … for this many consecutive moves of each side.
    pub resign_moves: u32,
    /// Draw when both report |score| ≤ this …
    pub draw_cp: i32,
    /// … for this many consecutive moves each …
    pub draw_moves: u32,
    /// … once this many full moves have been played.
    pub draw_after: u32,
}

impl std::str::FromStr for Adjudication {
    type Err = AdjudicationError;

    /// `RESIGN_CP,RESIGN_MOVES,DRAW_CP,DRAW_MOVES,DRAW_AFTER`, e.g. `1000,3,10,8,40`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let w: Vec<&str> = s.split(',').map(str::trim).collect();
        let [rc, rm, dc, dm, da] = w[..] else {
            return Err(AdjudicationError);
        };
        let cp = |x: &str, min: i32| {
            x.parse::<i32>()
                .ok()
                .filter(|v| (min..=30_000).contains(v))
                .ok_or(AdjudicationError)
        };
        let count = |x: &str| x.parse::<u32>().map_err(|_| AdjudicationError);
        Ok(Adjudication {
            resign_cp: cp(rc, 1)?,
            resign_moves: count(rm)?,
            draw_cp: cp(dc, 0)?,
            draw_moves: count(dm)?,
            draw_after: count(da)?,
        })
    }
}

/// Referee settings.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct GameConfig {
    pub limit: Limit,
    /// Clock tolerance before a time forfeit, ms.
    pub margin_ms: u64,
    /// How long a fixed-nodes/depth search may take before the engine is declared hung.
    pub hang_timeout: Duration,
    pub adjudication: Option<Adjudication>,
    /// Chess960: engines get `UCI_Chess960`, castling is king-takes-rook, FENs Shredder-FEN.
    pub chess960: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Outcome {
    White,
    Black,
    Draw,
}

impl Outcome {
    pub fn pgn(self) -> &'static str {
        match self {
            Outcome::White => "1-0",
            Outcome::Black => "0-1",
            Outcome::Draw => "1/2-1/2",
        }
    }
    fn win_for(c: Color) -> Self {
        if c == Color::White {
            Outcome::White
        } else {
            Outcome::Black
        }
    }
}

/// Why the game ended, from the arbiter's point of view.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum Termination {
    Board { rule: String },
    TimeForfeit { loser: String },
    IllegalMove { loser: String, text: String },
    Crash { loser: String },
    Hang { loser: String },
    Adjudicated { rule: String },
}

impl Termination {
    pub fn describe(&self) -> String {
        match self {
            Termination::Board { rule } => rule.clone(),
            Termination::TimeForfeit { loser } => format!("{loser} loses on time"),
            Termination::IllegalMove { loser, text } => {
                format!("{loser} plays an illegal move ({text})")
            }
            Termination::Crash { loser } => format!("{loser} crashed"),
            Termination::Hang { loser } => format!("{loser} stopped answering"),
            Termination::Adjudicated { rule } => format!("adjudicated: {rule}"),
        }
    }
    /// A loss by a fault (time, illegal move, crash, hang) rather than by the board or an
    /// adjudication.
    pub fn is_fault(&self) -> bool {
        !matches!(
            self,
            Termination::Board { .. } | Termination::Adjudicated { .. }
        )
    }

    /// PGN `Termination` tag value.
    pub fn pgn_tag(&self) -> &'static str {
        match self {
            Termination::Board { .. } => "normal",
            Termination::TimeForfeit { .. } => "time forfeit",
            Termination::IllegalMove { .. } => "rules infraction",
            Termination::Crash { .. } | Termination::Hang { .. } => "abandoned",
            Termination::Adjudicated { .. } => "adjudication",
        }
    }
}

/// A finished game.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct GameRecord {
    pub white: String,
    pub black: String,
    /// Played under Chess960 rules of notation (the PGN says `Variant "Chess960"`).
    pub chess960: bool,
    pub start_fen: String,
    pub moves_san: Vec<String>,
    pub moves_uci: Vec<String>,
    pub outcome: Outcome,
    pub termination: Termination,
    pub wall_seconds: f64,
}

/// What an engine's last `info … score` said, from its own point of view, in centipawns
/// clamped to ±30,000 (a mate in N: ±(30,000 − N)); any integer the engine sends is safe.
fn parse_score(line: &str) -> Option<i32> {
    let mut it = line.split_whitespace();
    while let Some(w) = it.next() {
        if w == "score" {
            let (kind, v) = (it.next()?, it.next()?.parse::<i64>().ok()?);
            let v = match kind {
                "cp" => v.clamp(-30_000, 30_000),
                "mate" if v > 0 => 30_000 - v.min(10_000),
                "mate" => -30_000 - v.max(-10_000),
                _ => return None,
            };
            return i32::try_from(v).ok();
        }
    }
    None
}

/// A game that could not be played for a reason that is not the engines' fault: the match
/// must stop rather than score it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GameError {
    #[error("engine `{name}`: {source}")]
    Setup {
        name: String,
        #[source]
        source: EngineError,
    },
}

/// How a game ended: the result and why.
type Ending = (Outcome, Termination);

/// The side that has the move loses: `names[me]` committed `fault`.
fn forfeit(me: usize, fault: impl FnOnce(String) -> Termination, names: &[String; 2]) -> Ending {
    let winner = if me == 0 {
        Outcome::Black
    } else {
        Outcome::White
    };
    (winner, fault(names[me].clone()))
}

/// Start both engines and bring them to `ucinewgame` + `isready`, each within the hang
/// timeout. An engine that fails its handshake loses the game (`Ok(Err(ending))`, the other
/// engine is stopped); one that cannot be started at all, or whose log cannot be created, is
/// a [`GameError`].
fn start_engines(
    specs: [&EngineSpec; 2],
    cfg: &GameConfig,
    stderr_logs: &[Option<PathBuf>; 2],
    names: &[String; 2],
) -> Result<Result<Vec<Engine>, Ending>, GameError> {
    let handshake = cfg.hang_timeout;
    let mut engines = Vec::with_capacity(2);
    for (i, spec) in specs.into_iter().enumerate() {
        let stderr = stderr_logs[i].as_deref().map_or(Stderr::Null, Stderr::File);
        match Engine::start(spec, handshake, stderr).and_then(|mut e| {
            e.send("ucinewgame")?;
            e.sync(handshake)?;
            Ok(e)
        }) {
            Ok(e) => engines.push(e),
            Err(source @ (EngineError::Spawn { .. } | EngineError::Log { .. })) => {
                return Err(GameError::Setup {
                    name: names[i].clone(),
                    source,
                });
            }
            Err(e) => {
                let fault = match e {
                    EngineError::Timeout { .. } => |loser| Termination::Hang { loser },
                    _ => |loser| Termination::Crash { loser },
                };
                for e in engines {
                    e.quit();
                }
                return Ok(Err(forfeit(i, fault, names)));
            }
        }
    }
    Ok(Ok(engines))
}

/// The clocks of a timed game, in milliseconds (bounded by `Limit::parse_tc`; every step
/// saturates anyway). Under a node or depth limit there is no clock and the hang timeout
/// bounds each move.
struct Clock {
    limit: Limit,
    left: [i64; 2],
    margin_ms: i64,
    hang: Duration,
}

impl Clock {
    fn new(cfg: &GameConfig) -> Self {
        let left = match cfg.limit {
            Limit::Clock { base_ms, .. } => [i64::try_from(base_ms).unwrap_or(i64::MAX); 2],
            _ => [0; 2],
        };
        Clock {
            limit: cfg.limit,
            left,
            margin_ms: i64::try_from(cfg.margin_ms).unwrap_or(i64::MAX),
            hang: cfg.hang_timeout,
        }
    }

    /// The `go` command for the side to move.
    fn go(&self) -> String {
        match self.limit {
            Limit::Clock { inc_ms, .. } => format!(
                "go wtime {} btime {} winc {inc_ms} binc {inc_ms}",
                self.left[0].max(1),
                self.left[1].max(1)
            ),
            Limit::Nodes(n) => format!("go nodes {n}"),
            Limit::Depth(d) => format!("go depth {d}"),
        }
    }

    /// When side `me` must have answered: its time plus the margin, or the hang timeout.
    fn deadline(&self, me: usize) -> Instant {
        match self.limit {
            Limit::Clock { .. } => deadline_after(Duration::from_millis(
                self.left[me].max(0).saturating_add(self.margin_ms) as u64,
            )),
            _ => deadline_after(self.hang),
        }
    }

    /// A missed deadline: a time forfeit on a clock, a hang otherwise.
    fn missed(&self) -> fn(String) -> Termination {
        match self.limit {
            Limit::Clock { .. } => |loser| Termination::TimeForfeit { loser },
            _ => |loser| Termination::Hang { loser },
        }
    }

    /// Charge side `me` for a move that took `elapsed_ms` and add the increment; false if its
    /// time ran out beyond the margin.
    fn charge(&mut self, me: usize, elapsed_ms: i64) -> bool {
        let Limit::Clock { inc_ms, .. } = self.limit else {
            return true;
        };
        self.left[me] = self.left[me].saturating_sub(elapsed_ms);
        if self.left[me] < -self.margin_ms {
            return false;
        }
        self.left[me] = self.left[me].saturating_add(i64::try_from(inc_ms).unwrap_or(i64::MAX));
        true
    }
}

/// Score adjudication: each side's reported scores, and the rules of [`Adjudication`].
struct Adjudicator {
    rules: Adjudication,
    /// Per side, its scores from its own point of view, oldest first.
    scores: [Vec<i32>; 2],
}

impl Adjudicator {
    /// After side `me` moved reporting `score` (`plies` played so far): the ending, if the
    /// last scores of both engines agree that the game is decided or drawn.
    fn after_move(&mut self, me: usize, score: i32, plies: usize) -> Option<Ending> {
        let adj = self.rules;
        self.scores[me].push(score);
        // The latest n scores of side i, from White's point of view.
        let recent = |i: usize, n: u32| -> Option<Vec<i32>> {
            let v = &self.scores[i];
            (v.len() >= n as usize && n > 0).then(|| {
                v[v.len() - n as usize..]
                    .iter()
                    .map(|&s| if i == 0 { s } else { -s })
                    .collect()
            })
        };
        if let (Some(a), Some(b)) = (recent(0, adj.resign_moves), recent(1, adj.resign_moves)) {
            for (outcome, sign, side) in
                [(Outcome::White, 1, "White"), (Outcome::Black, -1, "Black")]
            {
                if a.iter().chain(&b).all(|&s| sign * s >= adj.resign_cp) {
                    let rule = format!("both engines ≥ +{} cp for {side}", adj.resign_cp);
                    return Some((outcome, Termination::Adjudicated { rule }));
                }
            }
        }
        if plies as u64 >= 2 * u64::from(adj.draw_after)
            && let (Some(a), Some(b)) = (recent(0, adj.draw_moves), recent(1, adj.draw_moves))
            && a.iter().chain(&b).all(|&s| s.abs() <= adj.draw_cp)
        {
            let rule = format!("both engines within ±{} cp", adj.draw_cp);
            return Some((Outcome::Draw, Termination::Adjudicated { rule }));
        }
        None
    }
}

/// Play one game from `start`. Engines are started here and always stopped; each one's
/// stderr goes to its file in `stderr_logs` ([white, black]) when given. An engine that
/// fails its handshake (within `cfg.hang_timeout`) loses the game; an engine that cannot be
/// started at all, or a log file that cannot be created, is a [`GameError`].
///
/// Each move: the board's own ending first, then the side to move gets the position and its
/// `go`, must answer `bestmove` before its deadline (`Clock`), is charged its time, must
/// name a legal move, and then the scores are adjudicated (`Adjudicator`).
pub fn play(
    white: &EngineSpec,
    black: &EngineSpec,
    start: &Board,
    cfg: &GameConfig,
    stderr_logs: &[Option<PathBuf>; 2],
) -> Result<GameRecord, GameError> {
    let t0 = Instant::now();
    let mut pos = Position::new_with(start, cfg.chess960);
    let names = [white.name.clone(), black.name.clone()];
    let finish = |pos: Position, (outcome, termination): Ending| GameRecord {
        white: names[0].clone(),
        black: names[1].clone(),
        chess960: pos.chess960,
        start_fen: pos.start_fen,
        moves_san: pos.moves_san,
        moves_uci: pos.moves_uci,
        outcome,
        termination,
        wall_seconds: t0.elapsed().as_secs_f64(),
    };
    let mut engines = match start_engines([white, black], cfg, stderr_logs, &names)? {
        Ok(e) => e,
        Err(ending) => return Ok(finish(pos, ending)),
    };
    let mut clock = Clock::new(cfg);
    let mut adjudicator = cfg.adjudication.map(|rules| Adjudicator {
        rules,
        scores: [vec![], vec![]],
    });
    let ending = loop {
        if let Some(end) = pos.end() {
            let outcome = if end == BoardEnd::Checkmate {
                Outcome::win_for(!pos.side_to_move())
            } else {
                Outcome::Draw
            };
            let rule = end.describe().to_owned();
            break (outcome, Termination::Board { rule });
        }
        let me = if pos.side_to_move() == Color::White {
            0
        } else {
            1
        };
        let e = &mut engines[me];
        let sent = e
            .send(&pos.uci_command())
            .and_then(|()| e.send(&clock.go()));
        let started = Instant::now();
        let mut score = None;
        let reply = sent.and_then(|()| {
            e.read_until(
                clock.deadline(me),
                |l| {
                    if l.starts_with("info")
                        && let Some(s) = parse_score(l)
                    {
                        score = Some(s);
                    }
                },
                |l| l.starts_with("bestmove"),
            )
        });
        let elapsed = i64::try_from(started.elapsed().as_millis()).unwrap_or(i64::MAX);
        let line = match reply {
            Ok(l) => l,
            Err(EngineError::Timeout { .. }) => break forfeit(me, clock.missed(), &names),
            Err(_) => break forfeit(me, |loser| Termination::Crash { loser }, &names),
        };
        if !clock.charge(me, elapsed) {
            break forfeit(me, |loser| Termination::TimeForfeit { loser }, &names);
        }
        let text = line
            .split_whitespace()
            .nth(1)
            .unwrap_or("(none)")
            .to_owned();
        let Ok(mv) = from_uci_with(&pos.board, &text, pos.chess960) else {
            break forfeit(me, |loser| Termination::IllegalMove { loser, text }, &names);
        };
        pos.play(mv);
        if let (Some(adj), Some(s)) = (adjudicator.as_mut(), score)
            && let Some(ending) = adj.after_move(me, s, pos.moves_uci.len())
        {
            break ending;
        }
    };
    for e in engines {
        e.quit();
    }
    Ok(finish(pos, ending))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_clock_charges_increments_and_flags_beyond_the_margin() {
        let cfg = GameConfig {
            limit: Limit::parse_tc("1+0.1").unwrap(),
            margin_ms: 50,
            hang_timeout: Duration::from_secs(5),
            adjudication: None,
            chess960: false,
        };
        let mut c = Clock::new(&cfg);
        assert_eq!(c.go(), "go wtime 1000 btime 1000 winc 100 binc 100");
        assert!(c.charge(0, 400));
        assert_eq!(c.left, [700, 1000]);
        // 700 ms left: 740 ms is within the 50 ms margin, 760 beyond it
        let mut d = Clock {
            left: c.left,
            ..Clock::new(&cfg)
        };
        assert!(c.charge(0, 740));
        assert!(!d.charge(0, 760));
        assert_eq!(
            c.missed()("a".into()),
            Termination::TimeForfeit { loser: "a".into() }
        );
        let nodes = Clock::new(&GameConfig {
            limit: Limit::Nodes(500),
            ..cfg
        });
        assert_eq!(nodes.go(), "go nodes 500");
        assert_eq!(
            nodes.missed()("b".into()),
            Termination::Hang { loser: "b".into() }
        );
    }

    #[test]
    fn adjudication_needs_both_engines_to_agree() {
        let rules = Adjudication {
            resign_cp: 600,
            resign_moves: 2,
            draw_cp: 10,
            draw_moves: 2,
            draw_after: 3,
        };
        let mut a = Adjudicator {
            rules,
            scores: [vec![], vec![]],
        };
        // White thinks it is winning; Black (its own view) agrees only on its second move
        assert_eq!(a.after_move(0, 700, 1), None);
        assert_eq!(a.after_move(1, -650, 2), None);
        assert_eq!(a.after_move(0, 800, 3), None);
        let (outcome, t) = a.after_move(1, -900, 4).unwrap();
        assert_eq!(outcome, Outcome::White);
        assert!(t.describe().contains("for White"), "{}", t.describe());
        // Black winning, seen from each side's own point of view
        let mut b = Adjudicator {
            rules,
            scores: [vec![], vec![]],
        };
        for (me, s) in [(0, -700), (1, 700), (0, -700)] {
            assert_eq!(b.after_move(me, s, 1), None);
        }
        assert_eq!(b.after_move(1, 650, 4).unwrap().0, Outcome::Black);
        // a draw only after draw_after full moves (6 plies here)
        let mut c = Adjudicator {
            rules,
            scores: [vec![], vec![]],
        };
        for (ply, me) in [(1, 0), (2, 1), (3, 0), (4, 1), (5, 0)] {
            assert_eq!(c.after_move(me, 0, ply), None, "ply {ply}");
        }
        assert_eq!(c.after_move(1, 5, 6).unwrap().0, Outcome::Draw);
    }

    #[test]
    fn tc_and_scores() {
        assert_eq!(
            Limit::parse_tc("10+0.1"),
            Ok(Limit::Clock {
                base_ms: 10_000,
                inc_ms: 100
            })
        );
        assert_eq!(
            Limit::parse_tc("1+0.01"),
            Ok(Limit::Clock {
                base_ms: 1_000,
                inc_ms: 10
            })
        );
        assert_eq!(
            Limit::parse_tc("60"),
            Ok(Limit::Clock {
                base_ms: 60_000,
                inc_ms: 0
            })
        );
        assert_eq!(Limit::parse_tc("x+1"), Err(TcError));
        assert_eq!(Limit::parse_tc("0+1"), Err(TcError));
        for bad in [
            "1e16+0",
            "86400.001",
            "10+3600.5",
            "nan",
            "inf+0",
            "10+-1",
            "0.0004",
            "-0",
            "",
            "+",
            "10+0.1+1",
        ] {
            assert_eq!(Limit::parse_tc(bad), Err(TcError), "{bad}");
        }
        assert_eq!(
            Limit::parse_tc("86400+3600"),
            Ok(Limit::Clock {
                base_ms: 86_400_000,
                inc_ms: 3_600_000
            })
        );
        assert_eq!(
            "1000, 3,10,8,40".parse(),
            Ok(Adjudication {
                resign_cp: 1000,
                resign_moves: 3,
                draw_cp: 10,
                draw_moves: 8,
                draw_after: 40
            })
        );
        for bad in [
            "-1000,3,10,8,40",
            "0,3,10,8,40",
            "1000,3,-10,8,40",
            "40000,3,10,8,40",
            "1000,3,10,8",
            "1000,3,10,8,40,1",
            "1000,-3,10,8,40",
            "a,3,10,8,40",
        ] {
            assert_eq!(bad.parse::<Adjudication>(), Err(AdjudicationError), "{bad}");
        }
        assert_eq!(
            parse_score("info depth 5 score cp -31 nodes 100 pv e2e4"),
            Some(-31)
        );
        assert_eq!(
            parse_score("info depth 9 score mate 3 pv a1a8"),
            Some(29_997)
        );
        assert_eq!(parse_score("info string hello"), None);
        assert_eq!(parse_score("info score cp -2147483648"), Some(-30_000));
        assert_eq!(parse_score("info score cp 99999999999999"), Some(30_000));
        assert_eq!(parse_score("info score mate -2147483648"), Some(-20_000));
        assert_eq!(parse_score("info score mate 99999999999"), Some(20_000));
    }
}
