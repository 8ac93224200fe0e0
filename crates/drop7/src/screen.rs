//! Paired screens (docs/design/drop7-SPEC.md §8): every arm plays the same seed block, then each contrast gets the
//! paired delta with bootstrap and t bounds, a gate and a verdict, written as `report.md`,
//! `report.json` and one SVG per contrast. The block is opened in the seed ledger before a
//! game is played, and only after everything that can be checked cheaply has been.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use evidence::figure::{Frame, text};
use evidence::{Arm, ArmSummary, BootstrapConfig, PairedScreen, paired_screen};
use serde::{Deserialize, Serialize};

use crate::lease::{LeaseError, Ledger, Role, opener_name, unix_now};
use crate::policy::PolicyFactory;
use crate::runner::{GameRecord, RunError, RunObserver, RunOptions, merge_shards, run_block};
use crate::seeds::{SeedBlock, Shard, ShardError};

/// The report format tag (v2: arms are `evidence::ArmSummary` fields plus game statistics;
/// the arm's name is `name`, was `policy` in v1).
pub const REPORT_FORMAT: &str = "actuary-drop7-screen-v2";

/// The largest block `play` and `screen` accept: more games than this is a typo, and the
/// runner keeps a list of the block's seeds.
pub const MAX_BLOCK_GAMES: u64 = 1 << 24;

/// The largest `screen.json` read: it names the block, the arms and the contrasts, a few KB;
/// 64 MB is generous and still refuses a wrong file before reading it.
const MAX_MANIFEST_BYTES: u64 = 64 << 20;

/// One arm's games summarised: the score statistics every paired experiment has
/// ([`ArmSummary`]) and what Drop7 adds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CohortSummary {
    #[serde(flatten)]
    pub scores: ArmSummary,
    pub seeds: SeedBlock,
    pub mean_moves: f64,
    pub clears_per_move: f64,
    pub reveals_per_move: f64,
    pub work_per_game: f64,
    pub work_per_move: f64,
    pub censored: u64,
    pub incomplete: u64,
    pub illegal: u64,
    pub wall_seconds: f64,
}

/// Scores in seed order, as an evidence arm wants them.
pub fn scores(records: &[GameRecord]) -> Vec<f64> {
    records.iter().map(|r| r.score as f64).collect()
}

/// Decisions that went wrong (incomplete searches, illegal answers): any fails the gate.
pub fn faults(records: &[GameRecord]) -> u64 {
    records.iter().map(|r| r.incomplete + r.illegal).sum()
}

impl CohortSummary {
    pub fn of(arm: &str, block: SeedBlock, records: &[GameRecord]) -> Self {
        let s = scores(records);
        let n = records.len().max(1) as f64;
        let moves: u64 = records.iter().map(|r| r.moves as u64).sum();
        let m = moves.max(1) as f64;
        let sum = |f: fn(&GameRecord) -> u64| records.iter().map(f).sum::<u64>();
        Self {
            scores: ArmSummary::of(&Arm {
                name: arm,
                scores: &s,
                faults: faults(records),
            }),
            seeds: block,
            mean_moves: moves as f64 / n,
            clears_per_move: sum(|r| r.numbered_cleared) as f64 / m,
            reveals_per_move: sum(|r| r.covers_revealed) as f64 / m,
            work_per_game: sum(|r| r.work) as f64 / n,
            work_per_move: sum(|r| r.work) as f64 / m,
            censored: records.iter().filter(|r| r.censored).count() as u64,
            incomplete: sum(|r| r.incomplete),
            illegal: sum(|r| r.illegal),
            wall_seconds: records.iter().map(|r| r.wall_seconds).sum(),
        }
    }
}

/// Why a screen could not run.
#[derive(Debug, thiserror::Error)]
pub enum ScreenError {
    #[error("a screen needs at least two arms")]
    TooFewArms,
    #[error("arm `{0}` is listed twice")]
    DuplicateArm(String),
    #[error("a contrast needs two different arms (got arm {0} against itself)")]
    SelfContrast(String),
    #[error("a screen needs at least 2 games (the bounds need a spread); {0} has 1")]
    TooFewGames(SeedBlock),
    #[error("block {block} has {count} games; at most {MAX_BLOCK_GAMES} are accepted")]
    TooManyGames { block: SeedBlock, count: u64 },
    #[error(
        "{}: this directory holds a screen of {found} on {found_seeds}, not {wanted} on {wanted_seeds}; choose another --out (or pass --force)", dir.display()
    )]
    DifferentScreen {
        dir: PathBuf,
        found: String,
        found_seeds: String,
        wanted: String,
        wanted_seeds: String,
    },
    #[error(transparent)]
    Shard(#[from] ShardError),
    #[error("{}: {message}", dir.display())]
    Merge { dir: PathBuf, message: String },
    #[error(transparent)]
    Lease(#[from] LeaseError),
    #[error(transparent)]
    Run(#[from] RunError),
    #[error(transparent)]
    Evidence(#[from] evidence::EvidenceError),
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// A screen to run.
pub struct ScreenPlan<'a> {
    /// The arms, the first the default reference; each factory names its arm.
    pub arms: Vec<PolicyFactory>,
    /// (candidate, reference) arm indices; empty = every other arm against the first.
    pub contrasts: Vec<(usize, usize)>,
    pub block: SeedBlock,
    /// Output directory: per-arm games, report.md, report.json, figures; re-running resumes.
    pub out: &'a Path,
    pub ledger: &'a Path,
    /// Open the block although another screen read it, or reuse a directory of another screen.
    pub force: bool,
    pub threads: usize,
    /// Play only this shard's part of the block, into `out/shards/K-of-N/`; `merge_screen`
    /// joins the shards into the report.
    pub shard: Option<Shard>,
}

/// What a screen run produced: the report, or one shard's games.
#[derive(Debug, Clone)]
pub enum ScreenOutcome {
    Report(ScreenReport),
    Shard {
        shard: Shard,
        block: SeedBlock,
        dir: PathBuf,
    },
}

/// What `screen.json` in the output directory records, so a resumed run is the same screen.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Manifest {
    format: String,
    seeds: SeedBlock,
    arms: Vec<String>,
    /// (candidate, reference) arm indices.
    #[serde(default)]
    contrasts: Vec<(usize, usize)>,
    #[serde(default)]
    lease: String,
}

/// The whole report.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ScreenReport {
    /// [`REPORT_FORMAT`] when written; [`read_report`] reads v1 too and keeps its tag.
    pub format: String,
    pub seeds: SeedBlock,
    pub lease: String,
    pub arms: Vec<CohortSummary>,
    pub contrasts: Vec<PairedScreen>,
}

/// Why a file is not a screen report.
#[derive(Debug, thiserror::Error)]
#[error("not a screen report (report.json of `drop7 screen`): {0}")]
pub struct NotAReport(String);

/// Read a screen report of any format version: v2 as written, v1 (snake_case contrast
/// fields, arms named `policy`, no `faults`) upgraded to v2's fields, its `format` kept so a
/// reader can say so. The screen manifest (`screen.json`, whose arms are names) is refused.
pub fn read_report(text: &str) -> Result<ScreenReport, NotAReport> {
    let bad = |why: String| NotAReport(why);
    let v: serde_json::Value = serde_json::from_str(text).map_err(|e| bad(e.to_string()))?;
    let format = v["format"].as_str().unwrap_or_default().to_owned();
    if !format.starts_with("actuary-drop7-screen") {
        return Err(bad(format!("format `{format}`")));
    }
    let v = if format.ends_with("-v1") {
        upgrade_v1(&v)
    } else {
        v
    };
    serde_json::from_value(v).map_err(|e| bad(format!("{format}: {e}")))
}

/// v1 → v2 fields: keys in camelCase, each arm's `policy` as `name`, `faults` as the games'
/// incomplete and illegal decisions (what v2 counts).
fn upgrade_v1(v: &serde_json::Value) -> serde_json::Value {
    let mut v = camel_keys(v);
    for arm in v["arms"].as_array_mut().into_iter().flatten() {
        if let Some(m) = arm.as_object_mut() {
            if let Some(p) = m.remove("policy") {
                m.entry("name").or_insert(p);
            }
            let faults = m["incomplete"].as_u64().unwrap_or(0) + m["illegal"].as_u64().unwrap_or(0);
            m.entry("faults").or_insert(faults.into());
        }
    }
    v
}

/// snake_case keys as camelCase, recursively.
fn camel_keys(v: &serde_json::Value) -> serde_json::Value {
    use serde_json::Value;
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .map(|(k, x)| {
                    let mut key = String::new();
                    let mut up = false;
                    for ch in k.chars() {
                        if ch == '_' {
                            up = true;
                        } else if up {
                            key.extend(ch.to_uppercase());
                            up = false;
                        } else {
                            key.push(ch);
                        }
                    }
                    (key, camel_keys(x))
                })
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(camel_keys).collect()),
        x => x.clone(),
    }
}

/// A name usable as a file name: ASCII letters, digits and `-`; anything else becomes `_`.
pub fn file_stem(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// Check the plan, open the block in the ledger and record the screen in `out/screen.json`,
/// playing nothing: what a job array's submission does once, so its shards only read the
/// ledger. Returns the lease id.
pub fn prepare_screen(plan: &ScreenPlan<'_>) -> Result<String, ScreenError> {
    prepare(plan).map(|(lease, ..)| lease)
}

/// Check the plan, open the block, play every arm (resumable), compare, write the report.
pub fn run_screen(
    plan: &ScreenPlan<'_>,
    observer: &dyn RunObserver,
) -> Result<ScreenOutcome, ScreenError> {
    let (lease, names, contrasts, part) = prepare(plan)?;
    // Play (this shard's part only, into its own directory).
    let dir = match plan.shard {
        Some(shard) => plan.out.join("shards").join(shard.tag()),
        None => plan.out.to_owned(),
    };
    let mut records: Vec<Vec<GameRecord>> = Vec::new();
    for (name, factory) in names.iter().zip(&plan.arms) {
        let path = dir.join(games_file(name));
        let run = run_block(
            factory,
            part,
            &RunOptions {
                threads: plan.threads,
                out: Some(&path),
            },
            observer,
        )?;
        // in seed order, so a merged set of shards writes the very same file
        write_records(&path, &run.records)?;
        records.push(run.records);
    }
    if let Some(shard) = plan.shard {
        return Ok(ScreenOutcome::Shard {
            shard,
            block: part,
            dir,
        });
    }
    write_report(plan.out, plan.block, lease, &names, &contrasts, &records)
        .map(ScreenOutcome::Report)
}

/// The lease, arm names, contrasts and the block part this run plays.
type Prepared = (String, Vec<String>, Vec<(usize, usize)>, SeedBlock);

fn prepare(plan: &ScreenPlan<'_>) -> Result<Prepared, ScreenError> {
    // 1. Everything cheap first: nothing below may burn the block.
    let names: Vec<String> = plan.arms.iter().map(|f| f().name().to_owned()).collect();
    if names.len() < 2 {
        return Err(ScreenError::TooFewArms);
    }
    for (i, n) in names.iter().enumerate() {
        if names[..i].contains(n) {
            return Err(ScreenError::DuplicateArm(n.clone()));
        }
    }
    let contrasts: Vec<(usize, usize)> = if plan.contrasts.is_empty() {
        (1..names.len()).map(|i| (i, 0)).collect()
    } else {
        plan.contrasts.clone()
    };
    if let Some(&(c, _)) = contrasts.iter().find(|(c, r)| c == r) {
        return Err(ScreenError::SelfContrast(names[c].clone()));
    }
    if plan.block.count() < 2 {
        return Err(ScreenError::TooFewGames(plan.block));
    }
    if plan.block.count() > MAX_BLOCK_GAMES {
        return Err(ScreenError::TooManyGames {
            block: plan.block,
            count: plan.block.count(),
        });
    }
    let part = match plan.shard {
        Some(shard) => shard.of(plan.block)?,
        None => plan.block,
    };
    let io = |p: &Path| {
        let p = p.to_owned();
        move |source| ScreenError::Io { path: p, source }
    };
    // A screen refused below (bad ledger, block taken) must not leave an empty directory
    // behind that the user did not have before.
    let fresh_dir = !plan.out.exists();
    std::fs::create_dir_all(plan.out).map_err(io(plan.out))?;
    let manifest_path = plan.out.join("screen.json");
    let mut manifest = Manifest {
        format: REPORT_FORMAT.into(),
        seeds: plan.block,
        arms: names.clone(),
        contrasts: contrasts.clone(),
        lease: String::new(),
    };
    if let Ok(text) = fileio::read_to_string(&manifest_path, MAX_MANIFEST_BYTES)
        && let Ok(found) = serde_json::from_str::<Manifest>(&text)
        && (found.seeds != manifest.seeds || found.arms != manifest.arms)
        && !plan.force
    {
        return Err(ScreenError::DifferentScreen {
            dir: plan.out.to_owned(),
            found: found.arms.join(","),
            found_seeds: found.seeds.to_string(),
            wanted: names.join(","),
            wanted_seeds: plan.block.to_string(),
        });
    }

    // 2. Open the block (under the ledger's lock; a resumed run or a shard whose block was
    //    opened at submission only reads the ledger), then record what this directory holds.
    let opener = opener_name(plan.out, plan.ledger);
    let opened = Ledger::load(plan.ledger).and_then(|ledger| {
        match ledger.opened_by(Role::Screen, plan.block, &opener) {
            Some(id) => Ok(id),
            None => Ledger::update(plan.ledger, |l| {
                l.open(Role::Screen, plan.block, &opener, plan.force, unix_now())
            }),
        }
    });
    let lease = match opened {
        Ok(id) => id,
        Err(e) => {
            if fresh_dir {
                // only an empty directory goes (remove_dir refuses anything else)
                let _ = std::fs::remove_dir(plan.out);
            }
            return Err(e.into());
        }
    };
    manifest.lease = lease.clone();
    let text = serde_json::to_string_pretty(&manifest).expect("manifest") + "\n";
    evidence::atomic_write(&manifest_path, text.as_bytes())?;

    Ok((lease, names, contrasts, part))
}

/// An arm's games file name.
fn games_file(arm: &str) -> String {
    format!("games-{}.jsonl", file_stem(arm))
}

/// Rewrite a results file with `records` (seed order), atomically.
fn write_records(path: &Path, records: &[GameRecord]) -> Result<(), ScreenError> {
    let text: String = records
        .iter()
        .map(|r| serde_json::to_string(r).expect("a record serialises") + "\n")
        .collect();
    evidence::atomic_write(path, text.as_bytes())?;
    Ok(())
}

/// Join the shards of a sharded screen in `out` into the games files, report and figures a
/// single process would have written. Refuses a directory without a screen, shards of
/// different counts, missing or unknown shards, a shard with games missing (resume it) or
/// games that are not its own (another block, policy or model).
pub fn merge_screen(out: &Path) -> Result<ScreenReport, ScreenError> {
    let fail = |message: String| ScreenError::Merge {
        dir: out.to_owned(),
        message,
    };
    let text = fileio::read_to_string(&out.join("screen.json"), MAX_MANIFEST_BYTES)
        .map_err(|_| fail("no screen.json: not a screen directory".into()))?;
    let m: Manifest = serde_json::from_str(&text).map_err(|e| fail(format!("screen.json: {e}")))?;
    let shards_dir = out.join("shards");
    let mut found: Vec<(Shard, PathBuf)> = Vec::new();
    let entries = std::fs::read_dir(&shards_dir)
        .map_err(|_| fail("no shards/ directory: nothing to merge".into()))?;
    for e in entries.flatten() {
        // files beside the shard directories (a scheduler's logs) are not shards
        if !e.file_type().is_ok_and(|t| t.is_dir()) {
            continue;
        }
        let name = e.file_name().to_string_lossy().into_owned();
        let shard = name
            .split_once("-of-")
            .and_then(|(k, n)| format!("{k}/{n}").parse::<Shard>().ok())
            .filter(|s| s.tag() == name)
            .ok_or_else(|| fail(format!("shards/{name} is not a shard directory (K-of-N)")))?;
        found.push((shard, e.path()));
    }
    found.sort_by_key(|(s, _)| (s.count, s.index));
    let Some(&(first, _)) = found.first() else {
        return Err(fail("shards/ is empty: nothing to merge".into()));
    };
    let n = first.count;
    if let Some((other, _)) = found.iter().find(|(s, _)| s.count != n) {
        return Err(fail(format!(
            "shards of different counts: {} and {}",
            first.tag(),
            other.tag()
        )));
    }
    // games files of arms this screen does not have make a shard foreign
    for (_, dir) in &found {
        for e in std::fs::read_dir(dir)
            .map_err(|e| fail(e.to_string()))?
            .flatten()
        {
            let f = e.file_name().to_string_lossy().into_owned();
            if f.starts_with("games-") && !m.arms.iter().any(|a| games_file(a) == f) {
                return Err(fail(format!(
                    "{}: games of an arm this screen does not have (a foreign shard)",
                    e.path().display()
                )));
            }
        }
    }
    let mut records: Vec<Vec<GameRecord>> = Vec::new();
    for arm in &m.arms {
        let parts: Vec<(Shard, PathBuf)> = found
            .iter()
            .map(|(s, dir)| (*s, dir.join(games_file(arm))))
            .collect();
        let all = merge_shards(m.seeds, Some(arm), &parts).map_err(|e| fail(e.to_string()))?;
        write_records(&out.join(games_file(arm)), &all)?;
        records.push(all);
    }
    let contrasts = if m.contrasts.is_empty() {
        (1..m.arms.len()).map(|i| (i, 0)).collect()
    } else {
        m.contrasts.clone()
    };
    write_report(out, m.seeds, m.lease.clone(), &m.arms, &contrasts, &records)
}

/// Compare and write: the contrasts, figures, report.md and report.json.
fn write_report(
    out: &Path,
    block: SeedBlock,
    lease: String,
    names: &[String],
    contrasts: &[(usize, usize)],
    records: &[Vec<GameRecord>],
) -> Result<ScreenReport, ScreenError> {
    let summaries: Vec<CohortSummary> = names
        .iter()
        .zip(records)
        .map(|(n, r)| CohortSummary::of(n, block, r))
        .collect();
    let mut results = Vec::new();
    for &(c, r) in contrasts {
        let (cs, rs) = (scores(&records[c]), scores(&records[r]));
        let s = paired_screen(
            &Arm {
                name: &names[c],
                scores: &cs,
                faults: faults(&records[c]),
            },
            &Arm {
                name: &names[r],
                scores: &rs,
                faults: faults(&records[r]),
            },
            BootstrapConfig::default(),
        )?;
        let deltas: Vec<f64> = cs.iter().zip(&rs).map(|(x, y)| x - y).collect();
        let svg = paired_figure(block, &deltas, &s);
        let path = out.join(format!(
            "paired-{}-vs-{}.svg",
            file_stem(&names[c]),
            file_stem(&names[r])
        ));
        evidence::atomic_write(&path, svg.as_bytes())?;
        results.push(s);
    }
    let report = ScreenReport {
        format: REPORT_FORMAT.into(),
        seeds: block,
        lease,
        arms: summaries,
        contrasts: results,
    };
    evidence::atomic_write(&out.join("report.md"), markdown(&report).as_bytes())?;
    let json = serde_json::to_string_pretty(&report).expect("report") + "\n";
    evidence::atomic_write(&out.join("report.json"), json.as_bytes())?;
    Ok(report)
}

/// The report as Markdown: the arms table, the contrasts table, how the bounds were made.
pub fn markdown(r: &ScreenReport) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "# Screen on seeds {} (lease `{}`)\n", r.seeds, r.lease);
    let _ = writeln!(
        s,
        "| arm | games | mean | median | Q25 | max | moves | clears/move | reveals/move | work/game | incomplete | illegal |"
    );
    let _ = writeln!(s, "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|");
    for a in &r.arms {
        let _ = writeln!(
            s,
            "| {} | {} | {:.0} | {:.0} | {:.0} | {:.0} | {:.2} | {:.3} | {:.3} | {:.4e} | {} | {} |",
            a.scores.name,
            a.scores.games,
            a.scores.mean,
            a.scores.median,
            a.scores.q25,
            a.scores.max,
            a.mean_moves,
            a.clears_per_move,
            a.reveals_per_move,
            a.work_per_game,
            a.incomplete,
            a.illegal
        );
    }
    let _ = writeln!(s);
    let _ = writeln!(
        s,
        "| contrast | delta | bootstrap LB95 | UB95 | t LB95 | W-T-L | halves | floor | gate | verdict |"
    );
    let _ = writeln!(s, "|---|--:|--:|--:|--:|--:|--:|--:|:-:|---|");
    for p in &r.contrasts {
        let _ = writeln!(
            s,
            "| {} − {} | {:+.0} | {:+.0} | {:+.0} | {:+.0} | {}-{}-{} | {:+.0} / {:+.0} | {:.0}{} | {} | {} |",
            p.candidate.name,
            p.reference.name,
            p.delta_mean,
            p.bootstrap_lb95,
            p.bootstrap_ub95,
            p.t_lb95,
            p.wins,
            p.ties,
            p.losses,
            p.first_half_mean,
            p.second_half_mean,
            p.detection_floor,
            if p.measured { "" } else { " (below floor)" },
            if p.gate.passed { "pass" } else { "fail" },
            p.verdict
        );
    }
    let _ = writeln!(
        s,
        "\nBootstrap: 20,000 resamples, NumPy default_rng(0xB0071EAF), 0.05/0.95 quantiles (each a one-sided 95 % bound). t LB95 uses the exact t quantile at n−1 df. Gate: no faults, LB > 0, t LB > 0, both halves > 0, candidate Q25 ≥ reference Q25."
    );
    s
}

/// Per-game paired differences in seed order, with the halves divider and the mean.
pub fn paired_figure(block: SeedBlock, d: &[f64], s: &PairedScreen) -> String {
    let frame = Frame {
        width: 900.0,
        height: 420.0,
        left: 80.0,
        right: 20.0,
        top: 50.0,
        bottom: 40.0,
    };
    let p = frame.plot();
    let lo = d.iter().cloned().fold(0.0f64, f64::min);
    let hi = d.iter().cloned().fold(0.0f64, f64::max);
    let span = if hi > lo { hi - lo } else { 1.0 };
    let y = |v: f64| p.y + (hi - v) / span * p.height;
    let bw = p.width / d.len().max(1) as f64;
    let title = format!(
        "{} − {}, seeds {block}: mean {:+.0}, bootstrap LB95 {:+.0}, W-T-L {}-{}-{}, {}",
        s.candidate.name,
        s.reference.name,
        s.delta_mean,
        s.bootstrap_lb95,
        s.wins,
        s.ties,
        s.losses,
        s.verdict
    );
    let mut o = frame.begin(&title, 20.0);
    for (i, &v) in d.iter().enumerate() {
        let x = p.x + i as f64 * bw;
        let (top, bottom) = (y(v.max(0.0)), y(v.min(0.0)));
        let color = if v >= 0.0 { "#2b7bb9" } else { "#d9534f" };
        let _ = writeln!(
            o,
            r#"<rect x="{x:.2}" y="{top:.2}" width="{:.2}" height="{:.2}" fill="{color}"/>"#,
            (bw * 0.85).max(0.5),
            (bottom - top).max(0.5)
        );
    }
    let hline = |o: &mut String, v: f64, style: &str| {
        let _ = writeln!(
            o,
            r#"<line x1="{}" x2="{}" y1="{:.2}" y2="{:.2}" {style}/>"#,
            p.x,
            p.right(),
            y(v),
            y(v)
        );
    };
    hline(&mut o, 0.0, r#"stroke="black""#);
    hline(
        &mut o,
        s.delta_mean,
        r#"stroke="dimgray" stroke-dasharray="6,3""#,
    );
    let xm = p.x + (d.len() / 2) as f64 * bw;
    let _ = writeln!(
        o,
        r#"<line x1="{xm:.2}" x2="{xm:.2}" y1="{}" y2="{}" stroke="darkgray" stroke-dasharray="2,4"/>"#,
        p.y,
        p.bottom()
    );
    let below = p.bottom() + 16.0;
    let first = format!("first half {:+.0}", s.first_half_mean);
    text(&mut o, p.x + 4.0, below, "start", "dimgray", &first);
    let second = format!("second half {:+.0}", s.second_half_mean);
    text(&mut o, xm + 4.0, below, "start", "dimgray", &second);
    for v in [lo, 0.0, hi] {
        text(
            &mut o,
            p.x - 6.0,
            y(v) + 4.0,
            "end",
            "black",
            &format!("{v:.0}"),
        );
    }
    let axis = "game (seed order)";
    text(
        &mut o,
        p.x + p.width / 2.0,
        frame.height - 6.0,
        "middle",
        "black",
        axis,
    );
    frame.end(o)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The committed reports of both versions read as typed reports; v1's fields land under
    /// their v2 names.
    #[test]
    fn reports_of_both_versions_read_typed() {
        let docs = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/");
        let v1 = std::fs::read_to_string(format!("{docs}screen-d3s7-vs-d2s7.json")).unwrap();
        let r = read_report(&v1).unwrap();
        assert_eq!(r.format, "actuary-drop7-screen-v1");
        assert_eq!(r.arms.len(), 2);
        assert_eq!(r.seeds, "0xa51d1000:64".parse().unwrap());
        assert!(r.arms.iter().all(|a| a.scores.name.starts_with("fair-d")));
        assert_eq!(r.contrasts[0].verdict, evidence::Verdict::Supported);
        assert!(r.contrasts[0].delta_mean > 0.0 && r.contrasts[0].bootstrap.resamples == 20_000);
        let v2 = std::fs::read_to_string(format!("{docs}drop7/screens/quant-main-C/report.json"))
            .unwrap();
        let r = read_report(&v2).unwrap();
        assert_eq!(r.format, REPORT_FORMAT);
        // what it reads is what it writes
        let again: serde_json::Value = serde_json::to_value(&r).unwrap();
        assert_eq!(
            again,
            serde_json::from_str::<serde_json::Value>(&v2).unwrap()
        );
        for bad in [
            "{}",
            "[]",
            "not json",
            r#"{"format": "actuary-drop7-screen-v2", "arms": ["a"]}"#,
        ] {
            assert!(read_report(bad).is_err(), "{bad}");
        }
        let manifest =
            r#"{"format": "actuary-drop7-screen-v2", "seeds": "0x10:4", "arms": ["a", "b"]}"#;
        assert!(read_report(manifest).is_err());
    }
    use crate::policy::BuiltinPolicy;
    use crate::runner::Silent;

    fn arm(name: &str) -> PolicyFactory {
        name.parse::<BuiltinPolicy>().unwrap().factory().unwrap()
    }

    #[test]
    fn screens_check_before_opening_and_resume_only_the_same_screen() {
        let dir = tempfile::tempdir().unwrap();
        let ledger = dir.path().join("leases.json");
        let out = dir.path().join("s");
        let plan = |arms: &[&str], seeds: &str, force: bool| ScreenPlan {
            arms: arms.iter().map(|a| arm(a)).collect(),
            contrasts: vec![],
            block: seeds.parse().unwrap(),
            out: &out,
            ledger: &ledger,
            force,
            threads: 2,
            shard: None,
        };
        // refused before the ledger is touched
        for (arms, seeds, want) in [
            (
                &["center", "leftmost", "center"][..],
                "0x10:4",
                "listed twice",
            ),
            (&["center"][..], "0x10:4", "at least two arms"),
            (&["center", "leftmost"][..], "0x10:1", "at least 2 games"),
            (&["center", "leftmost"][..], "0x0:16777217", "at most"),
        ] {
            let e = run_screen(&plan(arms, seeds, false), &Silent).unwrap_err();
            assert!(e.to_string().contains(want), "{e}");
            assert!(!ledger.exists(), "{want}: the ledger was written");
        }
        let ScreenOutcome::Report(r) =
            run_screen(&plan(&["leftmost", "center"], "0x10:6", false), &Silent).unwrap()
        else {
            panic!("a whole screen reports")
        };
        assert_eq!(r.lease, "screen-0x00000010-6");
        assert_eq!(r.arms[1].scores.name, "center");
        assert_eq!(r.contrasts[0].candidate.name, "center");
        assert_eq!(r.arms[0].scores.games, 6);
        // the paired delta is the difference of the arms' means
        let delta = r.arms[1].scores.mean - r.arms[0].scores.mean;
        assert!((r.contrasts[0].delta_mean - delta).abs() < 1e-9);
        for f in [
            "report.md",
            "report.json",
            "screen.json",
            "paired-center-vs-leftmost.svg",
        ] {
            assert!(out.join(f).exists(), "{f}");
        }
        // same screen resumes; another set of arms in the same directory is refused
        run_screen(&plan(&["leftmost", "center"], "0x10:6", false), &Silent).unwrap();
        let e = run_screen(&plan(&["leftmost", "random"], "0x10:6", false), &Silent).unwrap_err();
        assert!(
            e.to_string().contains("holds a screen of leftmost,center"),
            "{e}"
        );
        // the block was opened by this directory: another directory is refused
        let other = dir.path().join("t");
        let p2 = ScreenPlan {
            out: &other,
            ..plan(&["leftmost", "random"], "0x10:6", false)
        };
        let e = run_screen(&p2, &Silent).unwrap_err();
        assert!(e.to_string().contains("already opened"), "{e}");
    }

    /// Three shards, then a merge: the same games files (but wall times), the same report.md,
    /// report.json (but wall times) and figure as one process; incomplete and foreign shards
    /// are refused.
    #[test]
    fn shards_merge_into_the_single_process_screen() {
        let dir = tempfile::tempdir().unwrap();
        let ledger = dir.path().join("leases.json");
        let plan = |out: &'static str, shard: Option<Shard>, seeds: &str| ScreenPlan {
            arms: vec![arm("leftmost"), arm("fair-d1s7")],
            contrasts: vec![],
            block: seeds.parse().unwrap(),
            out: Box::leak(dir.path().join(out).into_boxed_path()),
            ledger: Box::leak(ledger.clone().into_boxed_path()),
            force: true,
            threads: 1,
            shard,
        };
        run_screen(&plan("one", None, "0x40:11"), &Silent).unwrap();
        let shard = |k| Some(Shard { index: k, count: 3 });
        for k in [0, 2] {
            run_screen(&plan("many", shard(k), "0x40:11"), &Silent).unwrap();
        }
        let many = dir.path().join("many");
        let e = merge_screen(&many).unwrap_err().to_string();
        assert!(e.contains("missing shards: 1-of-3"), "{e}");
        run_screen(&plan("many", shard(1), "0x40:11"), &Silent).unwrap();
        // a shard with a game missing is refused, naming it
        let g = many.join("shards/1-of-3/games-leftmost.jsonl");
        let full = std::fs::read_to_string(&g).unwrap();
        let short: String = full.lines().skip(1).map(|l| l.to_string() + "\n").collect();
        std::fs::write(&g, &short).unwrap();
        let e = merge_screen(&many).unwrap_err().to_string();
        assert!(
            e.contains("shard 1-of-3 has 3 of 4 games of `leftmost`"),
            "{e}"
        );
        std::fs::write(&g, &full).unwrap();
        merge_screen(&many).unwrap();
        let one = dir.path().join("one");
        let no_wall = |p: &Path| {
            std::fs::read_to_string(p)
                .unwrap()
                .lines()
                .map(|l| {
                    let mut v: serde_json::Value = serde_json::from_str(l).unwrap();
                    v.as_object_mut().unwrap().remove("wallSeconds");
                    v
                })
                .collect::<Vec<_>>()
        };
        for f in ["games-leftmost.jsonl", "games-fair-d1s7.jsonl"] {
            assert_eq!(no_wall(&one.join(f)), no_wall(&many.join(f)), "{f}");
        }
        for f in ["report.md", "paired-fair-d1s7-vs-leftmost.svg"] {
            assert_eq!(
                std::fs::read(one.join(f)).unwrap(),
                std::fs::read(many.join(f)).unwrap(),
                "{f}"
            );
        }
        // a shard from another block is foreign
        let other = dir.path().join("other");
        run_screen(&plan("other", shard(1), "0x80:11"), &Silent).unwrap();
        std::fs::copy(
            other.join("shards/1-of-3/games-leftmost.jsonl"),
            many.join("shards/1-of-3/games-leftmost.jsonl"),
        )
        .unwrap();
        let e = merge_screen(&many).unwrap_err().to_string();
        assert!(e.contains("foreign shard"), "{e}");
    }

    /// Issue 17's race, 20 times: three screens on disjoint blocks and two on one block start
    /// at once; every lease is recorded, exactly one of the pair opens the shared block, and
    /// every results line is a whole record.
    #[test]
    fn concurrent_screens_keep_every_lease_and_open_a_block_once() {
        for round in 0..20u32 {
            let dir = tempfile::tempdir().unwrap();
            let ledger = dir.path().join("leases.json");
            let base = 0x1000 * (round + 1);
            let jobs: Vec<(String, u32)> = (0..5)
                .map(|i| (format!("s{i}"), base + 0x10 * i.min(3)))
                .collect();
            let results: Vec<Result<ScreenOutcome, ScreenError>> = std::thread::scope(|sc| {
                let handles: Vec<_> = jobs
                    .iter()
                    .map(|(name, start)| {
                        let out = dir.path().join(name);
                        let ledger = &ledger;
                        sc.spawn(move || {
                            let plan = ScreenPlan {
                                arms: vec![arm("leftmost"), arm("center")],
                                contrasts: vec![],
                                block: SeedBlock::new(*start, 2).unwrap(),
                                out: &out,
                                ledger,
                                force: false,
                                threads: 1,
                                shard: None,
                            };
                            run_screen(&plan, &Silent)
                        })
                    })
                    .collect();
                handles.into_iter().map(|h| h.join().unwrap()).collect()
            });
            // jobs 3 and 4 share a block: exactly one may open it
            let ok: Vec<bool> = results.iter().map(|r| r.is_ok()).collect();
            assert!(ok[..3].iter().all(|&o| o), "round {round}: {results:?}");
            assert!(
                ok[3] ^ ok[4],
                "round {round}: both or neither opened the shared block"
            );
            let loser = if ok[3] { &results[4] } else { &results[3] };
            let e = loser.as_ref().err().unwrap().to_string();
            assert!(e.contains("already opened"), "{e}");
            let l = Ledger::load(&ledger).unwrap();
            assert_eq!(l.leases.len(), 4, "round {round}: a lease was lost");
            for (name, _) in &jobs {
                for f in ["games-leftmost.jsonl", "games-center.jsonl"] {
                    let Ok(text) = std::fs::read_to_string(dir.path().join(name).join(f)) else {
                        continue;
                    };
                    for line in text.lines() {
                        serde_json::from_str::<GameRecord>(line).expect("a whole record");
                    }
                }
            }
        }
    }

    #[test]
    fn cohort_summary_is_arm_summary_plus_game_statistics() {
        let run = run_block(
            &arm("center"),
            "0x20:4".parse().unwrap(),
            &RunOptions::default(),
            &Silent,
        )
        .unwrap();
        let c = CohortSummary::of("center", run.block, &run.records);
        let mut s: Vec<f64> = scores(&run.records);
        let mean = s.iter().sum::<f64>() / 4.0;
        s.sort_by(f64::total_cmp);
        assert_eq!(c.scores.games, 4);
        assert!((c.scores.mean - mean).abs() < 1e-9);
        assert_eq!(c.scores.max, s[3]);
        let moves: u32 = run.records.iter().map(|r| r.moves).sum();
        assert_eq!(c.mean_moves, moves as f64 / 4.0);
        let v = serde_json::to_value(&c).unwrap();
        assert_eq!(v["name"], "center");
        assert_eq!(v["seeds"], "0x00000020:4");
        assert!(v["meanMoves"].is_number());
    }
}
