//! Scheduling: game pairs (one opening, colours swapped) over engine pairs, played by N
//! workers; results into W/D/L, pentanomial counts, Elo and the SPRT.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::Relaxed};

use cozy_chess::Board;
use evidence::{EloEstimate, Pentanomial, Sprt, SprtDecision, SprtStatus};
use serde::Serialize;

use crate::engine::EngineSpec;
use crate::game::{GameConfig, GameRecord, Outcome, Termination, play};

/// Everything a match needs.
pub struct MatchConfig {
    pub engines: Vec<EngineSpec>,
    /// With more than two engines: every pair (true) or engine 0 against each other (false).
    pub round_robin: bool,
    pub openings: Vec<Board>,
    /// Shuffle the book (seeded) instead of taking it in order.
    pub random_openings: bool,
    pub seed: u64,
    /// Games per engine pair (rounded up to an even number: pairs of games).
    pub games: u32,
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

/// A match that cannot start.
#[derive(Debug, thiserror::Error)]
pub enum MatchError {
    #[error("a match needs at least two engines")]
    TooFewEngines,
    #[error("two engines are named `{0}`; give each a distinct name=")]
    DuplicateName(String),
    #[error("an SPRT needs exactly two engines")]
    SprtNeedsTwo,
    #[error("no openings")]
    NoOpenings,
    #[error("cannot open the PGN file")]
    Pgn(#[source] evidence::EvidenceError),
    #[error("cannot create the log directory {}", path.display())]
    LogDir {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
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
    pub games: u32,
    pub pairs: Vec<PairResult>,
    pub stopped_by_sprt: bool,
}

struct Tally {
    results: Vec<PairResult>,
    played: u32,
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
pub fn run(cfg: &MatchConfig) -> Result<Report, MatchError> {
    let n = cfg.engines.len();
    if n < 2 {
        return Err(MatchError::TooFewEngines);
    }
    let names: Vec<&String> = cfg.engines.iter().map(|e| &e.name).collect();
    for (i, a) in names.iter().enumerate() {
        if names[..i].contains(a) {
            return Err(MatchError::DuplicateName(a.to_string()));
        }
    }
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
    if cfg.openings.is_empty() {
        return Err(MatchError::NoOpenings);
    }
    if let Some(dir) = &cfg.log_dir {
        std::fs::create_dir_all(dir).map_err(|source| MatchError::LogDir {
            path: dir.clone(),
            source,
        })?;
    }
    let mut order: Vec<usize> = (0..cfg.openings.len()).collect();
    if cfg.random_openings {
        let mut s = cfg.seed;
        for i in (1..order.len()).rev() {
            let j = (splitmix(&mut s) % (i as u64 + 1)) as usize;
            order.swap(i, j);
        }
    }
    let game_pairs = cfg.games.div_ceil(2);
    // Jobs interleave engine pairs so a gauntlet makes progress on every opponent at once.
    let jobs: Vec<(usize, u32)> = (0..game_pairs)
        .flat_map(|k| (0..pairs.len()).map(move |p| (p, k)))
        .collect();
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
    let pgn = match &cfg.pgn {
        Some(p) => Some(Mutex::new(
            evidence::open_append(p).map_err(MatchError::Pgn)?,
        )),
        None => None,
    };
    let next = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    let total = jobs.len() as u32 * 2;
    let tc = cfg.game.limit.pgn_tag();
    std::thread::scope(|s| {
        for _ in 0..cfg.concurrency.max(1) {
            s.spawn(|| {
                loop {
                    if stop.load(Relaxed) {
                        break;
                    }
                    let j = next.fetch_add(1, Relaxed);
                    let Some(&(p, k)) = jobs.get(j) else { break };
                    let (a, b) = pairs[p];
                    let opening = &cfg.openings[order[k as usize % order.len()]];
                    // Games 2j+1 (a has White) and 2j+2 (b has White) of the match.
                    let logs = |game: usize, white: usize, black: usize| {
                        [white, black].map(|e| {
                            cfg.log_dir
                                .as_deref()
                                .map(|d| log_path(d, &cfg.engines[e].name, game))
                        })
                    };
                    let (ea, eb) = (&cfg.engines[a], &cfg.engines[b]);
                    let g1 = play(ea, eb, opening, &cfg.game, &logs(2 * j + 1, a, b));
                    let g2 = play(eb, ea, opening, &cfg.game, &logs(2 * j + 2, b, a));
                    if let Some(w) = &pgn {
                        let mut f = w.lock().expect("pgn lock");
                        for (i, g) in [&g1, &g2].into_iter().enumerate() {
                            let round = format!("{}.{}", k + 1, i + 1);
                            let _ = f.write_all(
                                crate::pgn::write(g, &cfg.event, &round, &tc).as_bytes(),
                            );
                        }
                        let _ = f.flush();
                    }
                    let mut t = tally.lock().expect("tally lock");
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
                        eprint!(
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
            });
        }
    });
    if !cfg.quiet {
        eprintln!();
    }
    let t = tally.into_inner().expect("tally");
    Ok(Report {
        event: cfg.event.clone(),
        time_control: tc,
        games: t.played,
        pairs: t.results,
        stopped_by_sprt: stop.load(Relaxed),
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
