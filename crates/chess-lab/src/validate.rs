//! `validate`: the seed's validation protocol — one variable at a time against a saved
//! baseline, on several suites, side by side.
//!
//! A side is a UCI engine (any binary, ours or another) plus UCI options, so "the build before
//! this change" and "this build with `prune.lmp=table`" are compared the same way. Every
//! position is searched from a fresh game (`ucinewgame`) with a fixed depth, node count or
//! time; we read the last `info ... depth ... nodes` line, the `bestmove`, and our engine's
//! `info string prune ...` counters. `--save-baseline NAME` keeps the baseline's results so
//! the next change is compared without re-running it.

use arbiter::engine::{Engine, EngineError, EngineSpec, Stderr, deadline_after};
use chess::board::{Position, parse_epd, parse_san, uci_to_move};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

/// `actuary validate`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "SPEC is `[PATH][@NAME=VALUE,...]`: an engine binary (default: this \
actuary) and UCI options, e.g. `./old-actuary`, `@prune.lmp=table,prune.efp=off`, or \
`saved:NAME` for a baseline kept with --save-baseline.\n\nExample:\n  actuary validate \
--baseline ./actuary-before --candidate @prune.lmp=table \\\n    --suites \
data/chess/suites/wac.epd,data/chess/suites/sts.epd,data/chess/pools/holdout.epd --depth 10 \
--limit 300"
)]
pub struct ValidateArgs {
    /// The reference side (SPEC, or `saved:NAME`).
    #[arg(long, value_name = "SPEC")]
    pub baseline: String,
    /// The side under test (SPEC).
    #[arg(long, value_name = "SPEC")]
    pub candidate: String,
    /// Comma-separated EPD files; positions with `bm`/`am` are scored, others only counted.
    #[arg(long, value_name = "FILES", value_delimiter = ',', required = true)]
    pub suites: Vec<PathBuf>,
    /// Search every position to this depth.
    #[arg(long, group = "search_limit", value_parser = clap::value_parser!(i32).range(1..=100))]
    pub depth: Option<i32>,
    /// Search every position for this many nodes.
    #[arg(long, group = "search_limit", value_parser = clap::value_parser!(u64).range(1..))]
    pub nodes: Option<u64>,
    /// Search every position for this many milliseconds.
    #[arg(long, value_name = "MS", group = "search_limit", value_parser = clap::value_parser!(u64).range(1..))]
    pub movetime: Option<u64>,
    /// Use only the first N positions of each suite.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub limit: Option<u64>,
    /// Hash (MB) for both sides.
    #[arg(long, value_name = "MB", default_value_t = 64)]
    pub hash: u32,
    /// Give up on an engine that has not answered a position after this many seconds.
    #[arg(long, value_name = "S", default_value_t = 600, value_parser = clap::value_parser!(u64).range(1..=86_400))]
    pub timeout: u64,
    /// Keep the baseline's results under this name (in --store) for later runs.
    #[arg(long, value_name = "NAME")]
    pub save_baseline: Option<String>,
    /// Where saved baselines live.
    #[arg(long, value_name = "DIR", default_value = ".actuary-validate")]
    pub store: PathBuf,
    /// Also write the side-by-side comparison as JSON here.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
}

/// Why validation could not run.
#[derive(Debug, thiserror::Error)]
pub enum ValidateError {
    #[error("{spec}: {message}")]
    Spec { spec: String, message: String },
    #[error("{engine}: {message}")]
    Engine { engine: String, message: String },
    #[error("{}:{line}: {message}", path.display())]
    Suite {
        path: PathBuf,
        line: usize,
        message: String,
    },
    #[error("cannot read {}: {source}", path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("saved baseline {name}: {message}")]
    Saved { name: String, message: String },
    #[error("{}: {message}", path.display())]
    Output { path: PathBuf, message: String },
    #[error("give exactly one of --depth, --nodes, --movetime")]
    NoLimit,
    #[error(transparent)]
    Evidence(#[from] evidence::io::EvidenceError),
}

/// One side: a binary and its UCI options.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Side {
    pub binary: PathBuf,
    pub options: Vec<(String, String)>,
}

/// Parse `[PATH][@NAME=VALUE,...]` (`self_exe` when no path is given).
pub fn parse_spec(spec: &str, self_exe: &Path) -> Result<Side, ValidateError> {
    let err = |m: &str| ValidateError::Spec {
        spec: spec.to_string(),
        message: m.to_string(),
    };
    let (path, opts) = match spec.split_once('@') {
        Some((p, o)) => (p, o),
        None => (spec, ""),
    };
    let binary = if path.trim().is_empty() {
        self_exe.to_path_buf()
    } else {
        PathBuf::from(path.trim())
    };
    let mut options = Vec::new();
    for kv in opts.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let (k, v) = kv
            .split_once('=')
            .ok_or_else(|| err(&format!("option '{kv}' is not NAME=VALUE")))?;
        if k.trim().is_empty() {
            return Err(err("empty option name"));
        }
        options.push((k.trim().to_string(), v.trim().to_string()));
    }
    Ok(Side { binary, options })
}

/// What one position's search gave.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct PositionResult {
    pub id: String,
    pub depth: i32,
    pub nodes: u64,
    /// Nodes when the previous iteration finished (0 if only one was reported).
    pub prev_nodes: u64,
    pub ms: u64,
    pub best: String,
    /// `Some(true/false)` when the position has `bm`/`am`.
    pub solved: Option<bool>,
    pub prunes: BTreeMap<String, u64>,
}

/// A side's results on one suite.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct SuiteResult {
    pub suite: String,
    pub limit: String,
    pub positions: Vec<PositionResult>,
}

impl SuiteResult {
    pub fn solved(&self) -> (usize, usize) {
        let scored = self.positions.iter().filter_map(|p| p.solved);
        let (mut s, mut n) = (0, 0);
        for ok in scored {
            n += 1;
            s += ok as usize;
        }
        (s, n)
    }
    pub fn nodes(&self) -> u64 {
        self.positions.iter().map(|p| p.nodes).sum()
    }
    pub fn ms(&self) -> u64 {
        self.positions.iter().map(|p| p.ms).sum()
    }
    /// Effective branching factor: geometric mean over positions of the last iteration's
    /// node ratio (positions with two reported iterations).
    pub fn ebf(&self) -> Option<f64> {
        let logs: Vec<f64> = self
            .positions
            .iter()
            .filter(|p| p.prev_nodes > 0 && p.nodes > p.prev_nodes)
            .map(|p| (p.nodes as f64 / p.prev_nodes as f64).ln())
            .collect();
        (!logs.is_empty()).then(|| (logs.iter().sum::<f64>() / logs.len() as f64).exp())
    }
    /// Median completed depth (a mean would be dominated by solved mates, where iterative
    /// deepening races to the depth limit).
    pub fn median_depth(&self) -> f64 {
        let mut d: Vec<i32> = self.positions.iter().map(|p| p.depth).collect();
        d.sort_unstable();
        match d.len() {
            0 => 0.0,
            n if n % 2 == 1 => d[n / 2] as f64,
            n => (d[n / 2 - 1] + d[n / 2]) as f64 / 2.0,
        }
    }
    pub fn prunes(&self) -> BTreeMap<String, u64> {
        let mut m = BTreeMap::new();
        for p in &self.positions {
            for (k, v) in &p.prunes {
                *m.entry(k.clone()).or_insert(0) += v;
            }
        }
        m
    }
}

/// A running UCI engine: the arbiter's client (one UCI client in the workspace), its stderr
/// kept (the last lines) so that a failure quotes what the engine said.
struct Uci {
    name: String,
    engine: Option<Engine>,
    timeout: Duration,
}

impl Uci {
    fn start(side: &Side, hash: u32, timeout: u64) -> Result<Uci, ValidateError> {
        let name = side.binary.display().to_string();
        let mut options = vec![("Hash".to_owned(), hash.to_string())];
        options.extend(side.options.iter().cloned());
        let spec = EngineSpec {
            name: name.clone(),
            cmd: name.clone(),
            args: vec![],
            options,
        };
        let timeout = Duration::from_secs(timeout);
        let engine =
            Engine::start(&spec, timeout, Stderr::Capture).map_err(|e| ValidateError::Engine {
                engine: name.clone(),
                message: match e {
                    EngineError::Spawn { reason, .. } => format!("cannot start: {reason}"),
                    e => e.to_string(),
                },
            })?;
        let e = Uci {
            name,
            engine: Some(engine),
            timeout,
        };
        // Our engine reports a rejected option as `info string error: ...`.
        if let Some(m) = e.engine().option_errors().last() {
            return Err(e.fail(&format!("rejected an option: {m}")));
        }
        Ok(e)
    }

    fn engine(&self) -> &Engine {
        self.engine.as_ref().expect("running until dropped")
    }

    fn fail(&self, m: &str) -> ValidateError {
        ValidateError::Engine {
            engine: self.name.clone(),
            message: m.to_string(),
        }
    }

    /// Run `f` on the engine; its error names the engine.
    fn with<T>(
        &mut self,
        f: impl FnOnce(&mut Engine, Duration) -> Result<T, EngineError>,
    ) -> Result<T, ValidateError> {
        let timeout = self.timeout;
        let r = f(
            self.engine.as_mut().expect("running until dropped"),
            timeout,
        );
        r.map_err(|e| self.fail(&e.to_string()))
    }

    /// Search one position; returns the result without `id`/`solved`.
    fn search(&mut self, fen: &str, go: &str) -> Result<PositionResult, ValidateError> {
        self.with(|e, t| {
            e.send("ucinewgame")?;
            e.send(&format!("position fen {fen}"))?;
            e.sync(t)
        })?;
        let start = Instant::now();
        let mut r = PositionResult::default();
        let line = self.with(|e, t| {
            e.send(go)?;
            e.read_until(
                deadline_after(t),
                |l| {
                    if let Some(rest) = l.strip_prefix("info string prune ") {
                        for kv in rest.split_whitespace() {
                            if let Some((k, v)) = kv.split_once('=')
                                && let Ok(v) = v.parse::<u64>()
                            {
                                r.prunes.insert(k.to_string(), v);
                            }
                        }
                    } else if l.starts_with("info ") && !l.starts_with("info string") {
                        let t: Vec<&str> = l.split_whitespace().collect();
                        let get = |k: &str| {
                            t.iter()
                                .position(|&x| x == k)
                                .and_then(|i| t.get(i + 1))
                                .and_then(|v| v.parse::<u64>().ok())
                        };
                        // A line with a depth, nodes and a score closes an iteration (or part
                        // of it).
                        if let (Some(d), Some(n)) = (get("depth"), get("nodes"))
                            && t.contains(&"score")
                        {
                            if d as i32 > r.depth {
                                r.prev_nodes = r.nodes;
                                r.depth = d as i32;
                            }
                            r.nodes = n;
                        }
                    }
                },
                |l| l.starts_with("bestmove"),
            )
        })?;
        r.ms = start.elapsed().as_millis() as u64;
        r.best = line
            .strip_prefix("bestmove")
            .and_then(|rest| rest.split_whitespace().next())
            .unwrap_or("")
            .to_string();
        Ok(r)
    }
}

impl Drop for Uci {
    fn drop(&mut self) {
        if let Some(e) = self.engine.take() {
            e.quit();
        }
    }
}

/// A suite position: FEN, id and the moves (UCI) that solve / fail it.
struct Item {
    fen: String,
    id: String,
    bm: Vec<String>,
    am: Vec<String>,
}

fn read_suite(path: &Path, limit: Option<u64>) -> Result<Vec<Item>, ValidateError> {
    // An EPD suite is kilobytes to a few MB; 256 MB is far past any real one.
    let text = fileio::read_to_string(path, 256 << 20).map_err(|e| ValidateError::Read {
        path: path.to_owned(),
        source: e.into_io(),
    })?;
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if limit.is_some_and(|l| out.len() as u64 >= l) {
            break;
        }
        let t = line.trim();
        if t.is_empty() || t.starts_with('#') {
            continue;
        }
        let err = |m: String| ValidateError::Suite {
            path: path.to_owned(),
            line: i + 1,
            message: m,
        };
        let epd = parse_epd(t).map_err(|e| err(e.to_string()))?;
        let pos = Position {
            board: epd.board.clone(),
            history: Vec::new(),
        };
        let moves = |op: &str| -> Result<Vec<String>, ValidateError> {
            epd.op(op)
                .unwrap_or_default()
                .iter()
                .map(|san| {
                    parse_san(&pos.board, san)
                        .map(|m| chess::board::move_to_uci(&pos.board, m))
                        .map_err(|e| err(format!("{op} '{san}': {e}")))
                })
                .collect()
        };
        out.push(Item {
            fen: chess::board::to_fen(&epd.board),
            id: epd.id(),
            bm: moves("bm")?,
            am: moves("am")?,
        });
    }
    Ok(out)
}

fn limit_text(a: &ValidateArgs) -> Result<(String, String), ValidateError> {
    match (a.depth, a.nodes, a.movetime) {
        (Some(d), None, None) => Ok((format!("depth {d}"), format!("go depth {d}"))),
        (None, Some(n), None) => Ok((format!("nodes {n}"), format!("go nodes {n}"))),
        (None, None, Some(ms)) => Ok((format!("movetime {ms}"), format!("go movetime {ms}"))),
        _ => Err(ValidateError::NoLimit),
    }
}

fn run_side(
    side: &Side,
    suites: &[(PathBuf, Vec<Item>)],
    a: &ValidateArgs,
    label: &str,
) -> Result<Vec<SuiteResult>, ValidateError> {
    let (limit, go) = limit_text(a)?;
    let mut engine = Uci::start(side, a.hash, a.timeout)?;
    let total: usize = suites.iter().map(|s| s.1.len()).sum();
    let bar = crate::data::pool::progress(total as u64, "positions");
    bar.set_prefix(label.to_string());
    let mut out = Vec::new();
    for (path, items) in suites {
        let mut res = SuiteResult {
            suite: path.display().to_string(),
            limit: limit.clone(),
            positions: Vec::with_capacity(items.len()),
        };
        for it in items {
            let mut r = engine.search(&it.fen, &go)?;
            r.id = it.id.clone();
            if !(it.bm.is_empty() && it.am.is_empty()) {
                // Accept the move whichever castling notation the engine used.
                let played = Position {
                    board: it.fen.parse().expect("FEN written by us"),
                    history: Vec::new(),
                };
                let canon = uci_to_move(&played.board, &r.best)
                    .map(|m| chess::board::move_to_uci(&played.board, m))
                    .unwrap_or_else(|_| r.best.clone());
                r.solved =
                    Some((it.bm.is_empty() || it.bm.contains(&canon)) && !it.am.contains(&canon));
            }
            res.positions.push(r);
            bar.inc(1);
        }
        out.push(res);
    }
    bar.finish_and_clear();
    Ok(out)
}

#[derive(Debug, Serialize, Deserialize)]
struct Saved {
    format: String,
    side: Side,
    results: Vec<SuiteResult>,
}

fn saved_path(store: &Path, name: &str) -> Result<PathBuf, ValidateError> {
    if name.is_empty()
        || !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
        || name.starts_with('.')
    {
        return Err(ValidateError::Saved {
            name: name.to_string(),
            message: "names are letters, digits, '-', '_' and '.' (not leading)".into(),
        });
    }
    Ok(store.join(format!("{name}.json")))
}

/// The side-by-side table.
pub fn comparison_text(base: &[SuiteResult], cand: &[SuiteResult]) -> String {
    let mut s = String::new();
    for (b, c) in base.iter().zip(cand) {
        s.push_str(&format!(
            "\n{} ({} positions, {})\n",
            b.suite,
            b.positions.len(),
            b.limit
        ));
        s.push_str(&format!(
            "{:<22}{:>16}{:>16}\n",
            "", "baseline", "candidate"
        ));
        let row = |name: &str, x: String, y: String| format!("{name:<22}{x:>16}{y:>16}\n");
        let (bs, bn) = b.solved();
        let (cs, cn) = c.solved();
        if bn > 0 {
            s.push_str(&row("solved", format!("{bs}/{bn}"), format!("{cs}/{cn}")));
        }
        s.push_str(&row(
            "total nodes",
            b.nodes().to_string(),
            c.nodes().to_string(),
        ));
        s.push_str(&row(
            "median depth",
            format!("{:.1}", b.median_depth()),
            format!("{:.1}", c.median_depth()),
        ));
        let ebf = |r: &SuiteResult| r.ebf().map_or("-".into(), |e| format!("{e:.3}"));
        s.push_str(&row("EBF", ebf(b), ebf(c)));
        s.push_str(&row(
            "time (s)",
            format!("{:.1}", b.ms() as f64 / 1000.0),
            format!("{:.1}", c.ms() as f64 / 1000.0),
        ));
        let nps =
            |r: &SuiteResult| format!("{:.0}", r.nodes() as f64 * 1000.0 / r.ms().max(1) as f64);
        s.push_str(&row("nps", nps(b), nps(c)));
        let (bp, cp) = (b.prunes(), c.prunes());
        let keys: std::collections::BTreeSet<&String> = bp.keys().chain(cp.keys()).collect();
        for k in keys {
            let v = |m: &BTreeMap<String, u64>| m.get(k).map_or("-".into(), |v| v.to_string());
            s.push_str(&row(&format!("fired: {k}"), v(&bp), v(&cp)));
        }
        let changed: Vec<&str> = b
            .positions
            .iter()
            .zip(&c.positions)
            .filter(|(x, y)| x.solved.is_some() && x.solved != y.solved)
            .map(|(_, y)| y.id.as_str())
            .collect();
        if !changed.is_empty() {
            s.push_str(&format!("solved differently: {}\n", changed.join(", ")));
        }
    }
    s
}

impl ValidateArgs {
    pub fn run(&self) -> Result<ExitCode, crate::LabError> {
        Ok(self.validate()?)
    }

    fn validate(&self) -> Result<ExitCode, ValidateError> {
        let (limit, _) = limit_text(self)?;
        // The output is checked before any engine runs (a run can take an hour): not a
        // directory or device, in a directory that exists.
        if let Some(p) = &self.json {
            let dir = p
                .parent()
                .filter(|d| !d.as_os_str().is_empty())
                .unwrap_or(Path::new("."));
            let bad = std::fs::metadata(p).is_ok_and(|m| !m.is_file()) || !dir.is_dir();
            if bad {
                return Err(ValidateError::Output {
                    path: p.clone(),
                    message: "--json must name a regular file in an existing directory".into(),
                });
            }
        }
        let me = std::env::current_exe().map_err(|source| ValidateError::Read {
            path: PathBuf::from("<current executable>"),
            source,
        })?;
        let suites: Vec<(PathBuf, Vec<Item>)> = self
            .suites
            .iter()
            .map(|p| Ok((p.clone(), read_suite(p, self.limit)?)))
            .collect::<Result<_, ValidateError>>()?;
        let cand = parse_spec(&self.candidate, &me)?;
        let base = match self.baseline.strip_prefix("saved:") {
            Some(name) => {
                let path = saved_path(&self.store, name)?;
                // A saved baseline is a small JSON of results (kilobytes to a few MB); 64 MB
                // is far past any real one.
                let text =
                    fileio::read_to_string(&path, 64 << 20).map_err(|e| ValidateError::Read {
                        path: path.clone(),
                        source: e.into_io(),
                    })?;
                let saved: Saved =
                    serde_json::from_str(&text).map_err(|e| ValidateError::Saved {
                        name: name.to_string(),
                        message: e.to_string(),
                    })?;
                let mut picked = Vec::new();
                for (p, items) in &suites {
                    let want = p.display().to_string();
                    let r = saved
                        .results
                        .iter()
                        .find(|r| r.suite == want && r.limit == limit)
                        .filter(|r| r.positions.len() == items.len())
                        .ok_or_else(|| ValidateError::Saved {
                            name: name.to_string(),
                            message: format!(
                                "has no results for {want} at {limit} with {} positions",
                                items.len()
                            ),
                        })?;
                    picked.push(r.clone());
                }
                eprintln!("baseline: saved {name} ({})", path.display());
                picked
            }
            None => {
                let side = parse_spec(&self.baseline, &me)?;
                let r = run_side(&side, &suites, self, "baseline")?;
                if let Some(name) = &self.save_baseline {
                    let path = saved_path(&self.store, name)?;
                    std::fs::create_dir_all(&self.store).map_err(|source| ValidateError::Read {
                        path: self.store.clone(),
                        source,
                    })?;
                    let saved = Saved {
                        format: "actuary-validate-baseline v1".into(),
                        side,
                        results: r.clone(),
                    };
                    let json = serde_json::to_string_pretty(&saved).expect("serialises");
                    evidence::io::atomic_write(&path, json.as_bytes())?;
                    eprintln!("saved baseline {name} to {}", path.display());
                }
                r
            }
        };
        let c = run_side(&cand, &suites, self, "candidate")?;
        println!("baseline:  {}", self.baseline);
        println!("candidate: {}", self.candidate);
        print!("{}", comparison_text(&base, &c));
        if let Some(p) = &self.json {
            let v = serde_json::json!({
                "format": "actuary-validate v1",
                "baseline": self.baseline,
                "candidate": self.candidate,
                "baseline_results": base,
                "candidate_results": c,
            });
            evidence::io::atomic_write(p, v.to_string().as_bytes())?;
        }
        Ok(ExitCode::SUCCESS)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_parse_and_reject() {
        let me = Path::new("/bin/me");
        assert_eq!(
            parse_spec("@prune.lmp=table, prune.efp=off", me).unwrap(),
            Side {
                binary: me.into(),
                options: vec![
                    ("prune.lmp".into(), "table".into()),
                    ("prune.efp".into(), "off".into())
                ]
            }
        );
        assert_eq!(
            parse_spec("./old", me).unwrap().binary,
            PathBuf::from("./old")
        );
        assert!(
            parse_spec("@lmp", me)
                .unwrap_err()
                .to_string()
                .contains("NAME=VALUE")
        );
        assert!(parse_spec("@=x", me).is_err());
        assert!(saved_path(Path::new("s"), "../x").is_err());
        assert!(saved_path(Path::new("s"), "base-1").is_ok());
    }

    #[test]
    fn ebf_and_solved_totals() {
        let p = |nodes, prev, solved| PositionResult {
            nodes,
            prev_nodes: prev,
            solved,
            ..Default::default()
        };
        let r = SuiteResult {
            suite: "x".into(),
            limit: "depth 3".into(),
            positions: vec![
                p(400, 100, Some(true)),
                p(900, 100, Some(false)),
                p(5, 0, None),
            ],
        };
        assert_eq!(r.solved(), (1, 2));
        assert_eq!(r.nodes(), 1305);
        assert_eq!(r.median_depth(), 0.0);
        // Geometric mean of 4 and 9.
        assert!((r.ebf().unwrap() - 6.0).abs() < 1e-9);
    }
}
