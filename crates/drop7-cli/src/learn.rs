//! `drop7 train` and `drop7 model …`: the n-tuple learner's command line.

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::time::Instant;

use clap::{Args, Subcommand};
use drop7::lease::{Ledger, Role};
use drop7::runner::GameRecord;
use evidence::{Arm, BootstrapConfig, paired_screen};
use ntuple::layout::{Fill, Layout};
use ntuple::model;
use ntuple::tables::{OPTIMISTIC_TOTAL, Tables};
use ntuple::train::{Counters, Plan, play_block, run_until};
use serde::{Deserialize, Serialize};

use crate::mechanics::CliResult;
use crate::play::SeedBlock;

#[derive(Args)]
pub struct TrainArgs {
    /// Layout, e.g. rows,cols,win23,win32,phase=all (arm C, 10⁹ entries, 12 GB while training).
    #[arg(long, default_value = "rows,cols,win23,win32,phase=all")]
    layout: String,
    /// Training seed block <start>:<count>; games take seeds in order, wrapping.
    #[arg(long, default_value = "0xa5300000:2031616")]
    seeds: String,
    /// Stop after this many training moves in total (e.g. 2e8 or 200000000).
    #[arg(long)]
    moves: String,
    /// Worker threads (1 = deterministic).
    #[arg(long, default_value_t = 2)]
    threads: usize,
    /// Output directory: progress.jsonl, checkpoint.bin, best-weights.bin, training-curve.svg.
    #[arg(long)]
    out: PathBuf,
    /// Learning rate α.
    #[arg(long, default_value_t = 1.0)]
    alpha: f32,
    /// Write a resumable checkpoint (weights + accumulators) every this many moves.
    #[arg(long, default_value = "5e7")]
    checkpoint_every: String,
    /// Validate every this many moves (0 = never): the tables as the d3s7 leaf against
    /// fair-d3s7 on the validation block; the best point is kept as best-weights.bin.
    #[arg(long, default_value = "5e7")]
    validate_every: String,
    /// Validation block <start>:<count>.
    #[arg(long, default_value = "0xa52f2240:64")]
    validation_seeds: String,
    /// Search used for validation games, as dNsK (candidate ntuple-dNsK vs fair-dNsK).
    #[arg(long, default_value = "d3s7")]
    validation_search: String,
    /// Stop when the mean of the last four validation margins is not above the four before.
    #[arg(long)]
    plateau: bool,
    /// Continue from OUT/checkpoint.bin.
    #[arg(long)]
    resume: bool,
    /// A progress line every this many moves.
    #[arg(long, default_value = "2e6")]
    report_every: String,
    /// Seed ledger: the training and validation blocks are registered there.
    #[arg(long, env = "DROP7_LEDGER", default_value = "drop7-leases.json")]
    ledger: PathBuf,
}

fn parse_count(s: &str) -> Result<u64, String> {
    let v: f64 = s
        .trim()
        .replace('_', "")
        .parse()
        .map_err(|_| format!("bad count `{s}` (e.g. 2e8 or 200000000)"))?;
    if !(0.0..1e19).contains(&v) {
        return Err(format!("bad count `{s}`"));
    }
    Ok(v as u64)
}

/// What survives a restart.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct TrainState {
    layout: String,
    seeds: String,
    alpha: f32,
    moves: u64,
    games: u64,
    cursor: u64,
    best_margin: Option<f64>,
    best_moves: Option<u64>,
    validation_margins: Vec<f64>,
    wall_seconds: f64,
    checkpoint_sha256: String,
}

fn append_progress(out: &Path, line: &serde_json::Value) -> Result<(), String> {
    let p = out.join("progress.jsonl");
    let mut f = evidence::open_append(&p).map_err(|e| e.to_string())?;
    writeln!(f, "{line}").map_err(|e| format!("{}: {e}", p.display()))
}

fn records_file(path: &Path) -> Option<Vec<GameRecord>> {
    let text = std::fs::read_to_string(path).ok()?;
    text.lines().map(|l| serde_json::from_str(l).ok()).collect()
}

pub fn train(a: TrainArgs) -> CliResult {
    let layout = Layout::parse(&a.layout)?;
    let block = SeedBlock::parse(&a.seeds)?;
    let vblock = SeedBlock::parse(&a.validation_seeds)?;
    let target = parse_count(&a.moves)?;
    let checkpoint_every = parse_count(&a.checkpoint_every)?.max(1);
    let validate_every = parse_count(&a.validate_every)?;
    let report_every = parse_count(&a.report_every)?.max(1000);
    drop7::policy::parse_depth_samples(&a.validation_search).ok_or_else(|| {
        format!(
            "bad --validation-search `{}`: dNsK, e.g. d3s7",
            a.validation_search
        )
    })?;
    std::fs::create_dir_all(&a.out).map_err(|e| format!("{}: {e}", a.out.display()))?;
    let ckpt = a.out.join("checkpoint.bin");
    let state_path = a.out.join("checkpoint.json");

    // Seed discipline: training and validation blocks must not overlap screens.
    let opener = std::fs::canonicalize(&a.out)
        .unwrap_or(a.out.clone())
        .display()
        .to_string();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let mut ledger = Ledger::load(&a.ledger)?;
    ledger.open(
        Role::Training,
        block.start,
        block.count,
        &opener,
        false,
        now,
    )?;
    if validate_every > 0 {
        ledger.open(
            Role::Validation,
            vblock.start,
            vblock.count,
            &opener,
            false,
            now,
        )?;
    }
    ledger.save(&a.ledger)?;

    let (tables, mut st) = if a.resume {
        let text = std::fs::read_to_string(&state_path)
            .map_err(|e| format!("--resume: {}: {e}", state_path.display()))?;
        let st: TrainState =
            serde_json::from_str(&text).map_err(|e| format!("{}: {e}", state_path.display()))?;
        if st.layout != layout.spec() {
            return Err(format!(
                "--resume: the checkpoint has layout `{}`, not `{}`",
                st.layout,
                layout.spec()
            ));
        }
        eprintln!("resuming from {} at {} moves", ckpt.display(), st.moves);
        let (t, info) = model::load(&ckpt, true)?;
        if info.sha256 != st.checkpoint_sha256 {
            return Err(format!(
                "--resume: {} does not match {} (sha256 {} vs {})",
                ckpt.display(),
                state_path.display(),
                info.sha256,
                st.checkpoint_sha256
            ));
        }
        (Arc::new(t), st)
    } else {
        if state_path.exists() {
            return Err(format!(
                "{} already holds a training run; pass --resume to continue it or choose another --out",
                a.out.display()
            ));
        }
        eprintln!(
            "allocating {} ({} entries, {:.1} GB with accumulators) ...",
            layout,
            layout.total,
            ntuple::tables::bytes_needed(&layout, true) as f64 / 1e9
        );
        let t = Tables::new(layout.clone(), OPTIMISTIC_TOTAL, true)?;
        let st = TrainState {
            layout: layout.spec(),
            seeds: block.to_string(),
            alpha: a.alpha,
            moves: 0,
            games: 0,
            cursor: 0,
            best_margin: None,
            best_moves: None,
            validation_margins: vec![],
            wall_seconds: 0.0,
            checkpoint_sha256: String::new(),
        };
        (Arc::new(t), st)
    };

    // The fair control on the validation block is played once and kept.
    let control_path = a
        .out
        .join(format!("validation-fair-{}.jsonl", a.validation_search));
    let control = if validate_every > 0 {
        match records_file(&control_path).filter(|r| r.len() == vblock.count as usize) {
            Some(r) => Some(r),
            None => {
                eprintln!(
                    "playing the fair-{} control on {vblock} ...",
                    a.validation_search
                );
                let f = drop7::policy::builtin(&format!("fair-{}", a.validation_search))
                    .expect("fair policy");
                let r = play_block(&f, vblock.start, vblock.count, a.threads);
                let text: String = r
                    .iter()
                    .map(|g| serde_json::to_string(g).expect("record") + "\n")
                    .collect();
                evidence::atomic_write(&control_path, text.as_bytes())
                    .map_err(|e| e.to_string())?;
                Some(r)
            }
        }
    } else {
        None
    };

    let counters = Counters::default();
    counters.moves.store(st.moves, Relaxed);
    counters.games.store(st.games, Relaxed);
    counters.cursor.store(st.cursor, Relaxed);
    let stop = AtomicBool::new(false);
    let bar = indicatif::ProgressBar::new(target);
    bar.set_style(
        indicatif::ProgressStyle::with_template(
            "[{bar:30}] {human_pos}/{human_len} moves  {msg}  {elapsed_precise} ETA {eta}",
        )
        .expect("template")
        .progress_chars("=> "),
    );
    bar.set_position(st.moves);
    let t_start = Instant::now();
    let wall_before = st.wall_seconds;
    let next_mark = |moves: u64, every: u64| (moves / every + 1) * every;
    let mut next_ckpt = next_mark(st.moves, checkpoint_every);
    let mut next_val = if validate_every > 0 {
        next_mark(st.moves, validate_every)
    } else {
        u64::MAX
    };
    while st.moves < target && !stop.load(Relaxed) {
        let until = (st.moves + report_every)
            .min(target)
            .min(next_ckpt)
            .min(next_val);
        let t0 = Instant::now();
        let m0 = st.moves;
        run_until(
            &tables,
            &counters,
            until,
            Plan {
                threads: a.threads,
                start: block.start,
                count: block.count,
                alpha: a.alpha,
            },
            &stop,
        );
        st.moves = counters.moves.load(Relaxed);
        st.games = counters.games.load(Relaxed);
        st.cursor = counters.cursor.load(Relaxed);
        let dt = t0.elapsed().as_secs_f64();
        let rate = (st.moves - m0) as f64 / dt.max(1e-9);
        let rg = counters.recent_games.swap(0, Relaxed).max(1);
        let recent_mean = counters.recent_score.swap(0, Relaxed) as f64 / rg as f64;
        st.wall_seconds = wall_before + t_start.elapsed().as_secs_f64();
        bar.set_position(st.moves);
        bar.set_message(format!(
            "{:.0} moves/s  {} games  recent mean {:.0}",
            rate, st.games, recent_mean
        ));
        append_progress(
            &a.out,
            &serde_json::json!({"kind": "train", "moves": st.moves, "games": st.games, "movesPerSecond": rate,
                "recentMeanScore": recent_mean, "recentGames": rg, "openingValue": ntuple::train::opening_value(&tables),
                "wallSeconds": st.wall_seconds, "threads": a.threads}),
        )?;
        if st.moves >= next_val || (st.moves >= target && validate_every > 0) {
            next_val = next_mark(st.moves, validate_every);
            let control = control.as_ref().expect("control played");
            bar.suspend(|| eprintln!("validating at {} moves on {vblock} ...", st.moves));
            let name = format!("ntuple-{}", a.validation_search);
            let f = ntuple::play::factory(&name, tables.clone()).expect("ntuple search policy");
            let cand = play_block(&f, vblock.start, vblock.count, a.threads);
            let cs: Vec<f64> = cand.iter().map(|g| g.score as f64).collect();
            let rs: Vec<f64> = control.iter().map(|g| g.score as f64).collect();
            let faults = |r: &[GameRecord]| r.iter().map(|g| g.incomplete + g.illegal).sum::<u64>();
            let s = paired_screen(
                &Arm {
                    name: &name,
                    scores: &cs,
                    faults: faults(&cand),
                },
                &Arm {
                    name: "fair",
                    scores: &rs,
                    faults: faults(control),
                },
                BootstrapConfig::default(),
            )
            .map_err(|e| e.to_string())?;
            let improved = st.best_margin.is_none_or(|b| s.delta_mean > b);
            if improved {
                st.best_margin = Some(s.delta_mean);
                st.best_moves = Some(st.moves);
                let hash = model::save(&tables, &a.out.join("best-weights.bin"), false)?;
                bar.suspend(|| {
                    eprintln!(
                        "new best: margin {:+.0} (LB {:+.0}), best-weights.bin sha256 {hash}",
                        s.delta_mean, s.bootstrap_lb95
                    )
                });
            }
            st.validation_margins.push(s.delta_mean);
            append_progress(
                &a.out,
                &serde_json::json!({"kind": "validation", "moves": st.moves, "candidateMean": s.candidate.mean,
                    "fairMean": s.reference.mean, "margin": s.delta_mean, "bootstrapLb95": s.bootstrap_lb95,
                    "bootstrapUb95": s.bootstrap_ub95, "tLb95": s.t_lb95, "wins": s.wins, "ties": s.ties,
                    "losses": s.losses, "best": improved, "seeds": vblock.to_string()}),
            )?;
            let v = &st.validation_margins;
            if a.plateau && v.len() >= 8 {
                let last: f64 = v[v.len() - 4..].iter().sum::<f64>() / 4.0;
                let before: f64 = v[v.len() - 8..v.len() - 4].iter().sum::<f64>() / 4.0;
                if last <= before {
                    bar.suspend(|| eprintln!("plateau: mean of the last four margins {last:+.0} ≤ the four before {before:+.0}; stopping"));
                    stop.store(true, Relaxed);
                }
            }
        }
        if st.moves >= next_ckpt || st.moves >= target || stop.load(Relaxed) {
            next_ckpt = next_mark(st.moves, checkpoint_every);
            bar.suspend(|| eprintln!("checkpoint at {} moves ...", st.moves));
            st.checkpoint_sha256 = model::save(&tables, &ckpt, true)?;
            let text = serde_json::to_string_pretty(&st).map_err(|e| e.to_string())? + "\n";
            evidence::atomic_write(&state_path, text.as_bytes()).map_err(|e| e.to_string())?;
        }
    }
    bar.finish_and_clear();
    let hash = model::save(&tables, &a.out.join("final-weights.bin"), false)?;
    let svg = training_curve(&a.out.join("progress.jsonl"))?;
    evidence::atomic_write(&a.out.join("training-curve.svg"), svg.as_bytes())
        .map_err(|e| e.to_string())?;
    println!(
        "trained {} moves in {} games, {:.0} s wall ({} threads); final-weights.bin sha256 {hash}; best validation margin {} at {} moves",
        st.moves,
        st.games,
        st.wall_seconds,
        a.threads,
        st.best_margin.map_or("-".into(), |m| format!("{m:+.0}")),
        st.best_moves.map_or("-".into(), |m| m.to_string())
    );
    Ok(())
}

/// Training curve from progress.jsonl: recent training-game mean score and validation
/// margins (with bootstrap bounds) against moves.
pub fn training_curve(progress: &Path) -> Result<String, String> {
    let text =
        std::fs::read_to_string(progress).map_err(|e| format!("{}: {e}", progress.display()))?;
    let lines: Vec<serde_json::Value> = text
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    let train: Vec<(f64, f64)> = lines
        .iter()
        .filter(|v| v["kind"] == "train")
        .filter_map(|v| Some((v["moves"].as_f64()?, v["recentMeanScore"].as_f64()?)))
        .collect();
    let val: Vec<(f64, f64, f64, f64)> = lines
        .iter()
        .filter(|v| v["kind"] == "validation")
        .filter_map(|v| {
            Some((
                v["moves"].as_f64()?,
                v["margin"].as_f64()?,
                v["bootstrapLb95"].as_f64()?,
                v["bootstrapUb95"].as_f64()?,
            ))
        })
        .collect();
    let (w, h, ml, mr, mt, mb) = (900.0, 460.0, 90.0, 90.0, 40.0, 50.0);
    let (pw, ph) = (w - ml - mr, h - mt - mb);
    let xmax = train
        .iter()
        .map(|p| p.0)
        .chain(val.iter().map(|p| p.0))
        .fold(1.0f64, f64::max);
    let ymax = train.iter().map(|p| p.1).fold(1.0f64, f64::max);
    let (vlo, vhi) = val
        .iter()
        .fold((0.0f64, 1.0f64), |(lo, hi), p| (lo.min(p.2), hi.max(p.3)));
    let x = |m: f64| ml + m / xmax * pw;
    let y = |s: f64| mt + ph - s / ymax * ph;
    let yv = |s: f64| mt + ph - (s - vlo) / (vhi - vlo).max(1.0) * ph;
    let mut o = String::new();
    let _ = writeln!(
        o,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(o, r#"<rect width="100%" height="100%" fill="white"/>"#);
    let _ = writeln!(
        o,
        r#"<text x="{ml}" y="22" font-size="14">Training: recent self-play mean score (blue, left) and validation margin vs fair with bootstrap 90 % band (red, right)</text>"#
    );
    let pts: Vec<String> = train
        .iter()
        .map(|p| format!("{:.1},{:.1}", x(p.0), y(p.1)))
        .collect();
    let _ = writeln!(
        o,
        r#"<polyline fill="none" stroke="steelblue" stroke-width="1.5" points="{}"/>"#,
        pts.join(" ")
    );
    for p in &val {
        let _ = writeln!(
            o,
            r#"<line x1="{0:.1}" x2="{0:.1}" y1="{1:.1}" y2="{2:.1}" stroke="firebrick"/>"#,
            x(p.0),
            yv(p.2),
            yv(p.3)
        );
        let _ = writeln!(
            o,
            r#"<circle cx="{:.1}" cy="{:.1}" r="3.5" fill="firebrick"/>"#,
            x(p.0),
            yv(p.1)
        );
    }
    if vlo < 0.0 {
        let _ = writeln!(
            o,
            r#"<line x1="{ml}" x2="{0}" y1="{1:.1}" y2="{1:.1}" stroke="firebrick" stroke-dasharray="4,4"/>"#,
            ml + pw,
            yv(0.0)
        );
    }
    let _ = writeln!(
        o,
        r#"<line x1="{ml}" x2="{}" y1="{}" y2="{}" stroke="black"/>"#,
        ml + pw,
        mt + ph,
        mt + ph
    );
    let _ = writeln!(
        o,
        r#"<text x="{}" y="{}" text-anchor="middle">training moves (max {xmax:.3e})</text>"#,
        ml + pw / 2.0,
        h - 12.0
    );
    let _ = writeln!(
        o,
        r#"<text x="{}" y="{}" text-anchor="end" fill="steelblue">{ymax:.0}</text>"#,
        ml - 6.0,
        mt + 4.0
    );
    let _ = writeln!(
        o,
        r#"<text x="{}" y="{}" text-anchor="end" fill="steelblue">0</text>"#,
        ml - 6.0,
        mt + ph
    );
    let _ = writeln!(
        o,
        r#"<text x="{}" y="{}" fill="firebrick">{vhi:+.0}</text>"#,
        ml + pw + 6.0,
        mt + 4.0
    );
    let _ = writeln!(
        o,
        r#"<text x="{}" y="{}" fill="firebrick">{vlo:+.0}</text>"#,
        ml + pw + 6.0,
        mt + ph
    );
    o.push_str("</svg>\n");
    Ok(o)
}

#[derive(Args)]
pub struct ModelArgs {
    #[command(subcommand)]
    action: ModelAction,
}

#[derive(Subcommand)]
enum ModelAction {
    /// Layout, entries, hash and weight statistics of a model file.
    Info { file: PathBuf },
    /// Apply an edit and write a new file.
    Edit {
        file: PathBuf,
        /// Set every never-updated entry to 0.
        #[arg(long, conflicts_with = "class_mean")]
        zero_untouched: bool,
        /// Set every never-updated entry to its table's mean of updated entries.
        #[arg(long)]
        class_mean: bool,
        #[arg(long)]
        out: PathBuf,
    },
    /// Copy the tables into 5 fill buckets (occ5: occupied cells; hgt5: tallest column).
    Promote {
        file: PathBuf,
        #[arg(long)]
        fill: String,
        #[arg(long)]
        out: PathBuf,
    },
    /// Draw the training curve of a run directory (its progress.jsonl) as SVG.
    Curve { dir: PathBuf },
}

pub fn model_cmd(a: ModelArgs) -> CliResult {
    match a.action {
        ModelAction::Info { file } => {
            let (t, info) = model::load(&file, false)?;
            let s = model::stats(&t);
            let j = serde_json::json!({"file": file.display().to_string(), "sha256": info.sha256, "verified": info.verified,
                "hasCoherence": info.has_coherence, "stats": s});
            println!(
                "{}",
                serde_json::to_string_pretty(&j).map_err(|e| e.to_string())?
            );
            Ok(())
        }
        ModelAction::Edit {
            file,
            zero_untouched,
            class_mean,
            out,
        } => {
            if !zero_untouched && !class_mean {
                return Err("model edit: choose --zero-untouched or --class-mean".into());
            }
            let (t, _) = model::load(&file, false)?;
            let n = if zero_untouched {
                model::zero_untouched(&t)
            } else {
                model::class_mean(&t)
            };
            let hash = model::save(&t, &out, false)?;
            println!(
                "{n} entries changed; wrote {} (sha256 {hash})",
                out.display()
            );
            Ok(())
        }
        ModelAction::Promote { file, fill, out } => {
            let fill = match fill.as_str() {
                "occ5" => Fill::Occ5,
                "hgt5" => Fill::Hgt5,
                f => return Err(format!("bad --fill `{f}`: occ5 or hgt5")),
            };
            let (t, _) = model::load(&file, false)?;
            let p = model::promote(&t, fill, false)?;
            drop(t);
            let hash = model::save(&p, &out, false)?;
            println!(
                "wrote {} with layout {} (sha256 {hash})",
                out.display(),
                p.layout
            );
            Ok(())
        }
        ModelAction::Curve { dir } => {
            let svg = training_curve(&dir.join("progress.jsonl"))?;
            let p = dir.join("training-curve.svg");
            evidence::atomic_write(&p, svg.as_bytes()).map_err(|e| e.to_string())?;
            println!("wrote {}", p.display());
            Ok(())
        }
    }
}
