//! `drop7 train` and `drop7 model …`: argument mapping over `ntuple::train::Trainer` and
//! `ntuple::model`.

use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use clap::{Args, Subcommand, ValueEnum};
use drop7::SeedBlock;
use ntuple::layout::{Fill, Layout};
use ntuple::model;
use ntuple::train::{TrainConfig, TrainSummary, Trainer};
use serde::Serialize;

use crate::args::Count;
use crate::output::print_line;
use crate::progress::TrainBar;

#[derive(Args)]
pub struct TrainArgs {
    /// Layout: families rows, cols, win23, win32, win24, win42, then phase=none|cols|all and
    /// fill=none|occ5|hgt5 (arm C: rows,cols,win23,win32,phase=all, 10⁹ entries, 12 GB while
    /// training).
    #[arg(long, default_value = "rows,cols,win23,win32,phase=all", value_parser = Layout::parse)]
    layout: Layout,
    /// Training seed block START:COUNT; games take its seeds in order, wrapping.
    #[arg(long, default_value = "0xa5300000:2031616")]
    seeds: SeedBlock,
    /// Stop after this many training moves in total (e.g. 2e8 or 200000000); a resumed run
    /// may raise it.
    #[arg(long, allow_negative_numbers = true)]
    moves: Count,
    /// Worker threads (1 = deterministic).
    #[arg(long, allow_negative_numbers = true, default_value_t = 2)]
    threads: usize,
    /// Output directory: progress.jsonl, checkpoint.bin/.json, best-weights.bin,
    /// final-weights.bin, training-curve.svg.
    #[arg(long)]
    out: PathBuf,
    /// Learning rate α.
    #[arg(long, allow_negative_numbers = true, default_value_t = 1.0)]
    alpha: f32,
    /// Write a resumable checkpoint (weights + accumulators) every this many moves, or
    /// `auto`: every 5e7 moves per started GB a checkpoint holds (12 bytes an entry), so the
    /// small layouts keep 5e7 and arm C's 12 GB tables are written every 6e8 moves, not 20
    /// times in a 1e9-move run.
    #[arg(long, allow_negative_numbers = true, default_value = "auto")]
    checkpoint_every: CheckpointEvery,
    /// Validate every this many moves (0 = never): the tables as the leaf of
    /// --validation-search against the fair leaf on the validation block; the best point is
    /// kept as best-weights.bin.
    #[arg(long, allow_negative_numbers = true, default_value = "5e7")]
    validate_every: Count,
    /// Validation block START:COUNT (must not overlap screens).
    #[arg(long, default_value = "0xa52f2240:64")]
    validation_seeds: SeedBlock,
    /// Search used for validation games, as dNsK (candidate ntuple-dNsK vs fair-dNsK).
    #[arg(long, default_value = "d3s7", value_parser = drop7::policy::depth_samples)]
    validation_search: (u32, u32),
    /// Stop when the mean of the last four validation margins is not above the four before.
    #[arg(long)]
    plateau: bool,
    /// Continue from OUT/checkpoint.bin. Refused if the layout, seeds, alpha, validation
    /// block, validation search, --validate-every or --siblings differ from the stored run;
    /// --moves, --threads, --checkpoint-every, --report-every and --plateau may change.
    #[arg(long)]
    resume: bool,
    /// Per played move, also learn from this many other columns (0-6): each is played on a
    /// copy of the game and its afterstate moved toward its own one-ply continuation. These
    /// are the boards a search values at its first ply and greedy self-play never trains;
    /// each costs about one training move.
    #[arg(long, default_value_t = 0, allow_negative_numbers = true)]
    siblings: u32,
    /// Start from this model's weights (same layout) instead of fresh tables, e.g. a main
    /// run's best-weights.bin; a weights file starts fresh step sizes, a checkpoint.bin keeps
    /// its own. Recorded with its SHA-256 in checkpoint.json.
    #[arg(long, value_name = "MODEL")]
    warm_start: Option<PathBuf>,
    /// A progress line every this many moves (at least 1000: smaller values mean 1000).
    #[arg(long, allow_negative_numbers = true, default_value = "2e6")]
    report_every: Count,
    /// Seed ledger: the training and validation blocks are registered there.
    #[arg(long, env = "DROP7_LEDGER", default_value = "drop7-leases.json")]
    ledger: PathBuf,
}

/// `--checkpoint-every`: `auto` (`None`) or a count of moves. (A newtype: clap reads an
/// `Option` field as an optional flag, not as a value that may be `auto`.)
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct CheckpointEvery(Option<u64>);

impl std::str::FromStr for CheckpointEvery {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        if s.trim() == "auto" {
            return Ok(Self(None));
        }
        s.parse::<Count>().map(|c| Self(Some(c.0)))
    }
}

/// `drop7 train`: run the trainer under a progress bar and end with its summary line.
pub fn train(a: TrainArgs) -> anyhow::Result<()> {
    let cfg = train_config(a);
    let threads = cfg.threads;
    let obs = TrainBar::new(cfg.target_moves);
    let s = Trainer::new(cfg, &obs)?.run(&obs)?;
    obs.finish();
    print_line(&summary_line(&s, threads))
}

/// The trainer's configuration from the flags: `--checkpoint-every auto` resolved for the
/// layout, `--report-every` raised to at least 1000 moves.
fn train_config(a: TrainArgs) -> TrainConfig {
    let checkpoint_every = a
        .checkpoint_every
        .0
        .unwrap_or_else(|| TrainConfig::auto_checkpoint_every(&a.layout));
    TrainConfig {
        layout: a.layout,
        seeds: a.seeds,
        alpha: a.alpha,
        target_moves: a.moves.0,
        threads: a.threads,
        checkpoint_every,
        validate_every: a.validate_every.0,
        validation_seeds: a.validation_seeds,
        validation_search: a.validation_search,
        plateau: a.plateau,
        // 0 reaches the trainer, which refuses it; otherwise at least every 1000 moves
        report_every: match a.report_every.0 {
            0 => 0,
            n => n.max(1000),
        },
        out: a.out,
        ledger: a.ledger,
        resume: a.resume,
        siblings: a.siblings,
        warm_start: a.warm_start,
    }
}

/// The line `train` ends with: what was trained, the final weights' hash, the best
/// validation point.
fn summary_line(s: &TrainSummary, threads: usize) -> String {
    format!(
        "trained {} moves in {} games, {:.0} s wall ({threads} threads); final-weights.bin sha256 {}; best validation margin {} at {} moves{}",
        s.moves,
        s.games,
        s.wall_seconds,
        s.final_sha256,
        s.best_margin.map_or("-".into(), |m| format!("{m:+.0}")),
        s.best_moves.map_or("-".into(), |m| m.to_string()),
        if s.plateaued {
            " (stopped at a plateau)"
        } else {
            ""
        }
    )
}

#[derive(Args)]
pub struct ModelArgs {
    #[command(subcommand)]
    action: ModelAction,
}

/// Fill buckets for `model promote`.
#[derive(Clone, Copy, ValueEnum)]
enum FillArg {
    /// Occupied cells 0–13, 14–20, 21–27, 28–34, 35–49.
    Occ5,
    /// Tallest column ≤3, 4, 5, 6, 7.
    Hgt5,
}

#[derive(Subcommand)]
enum ModelAction {
    /// Layout, entries, format, hash and weight statistics of a model file (JSON), after
    /// checking its bytes. Counts NaN and infinite weights (`playable` is false if there are
    /// any; such a model is refused for play, training and edits).
    Info {
        /// The model file (D7NTUP02, or D7NTUP01 with its .sha256 sidecar; .zst compressed).
        file: PathBuf,
    },
    /// Rewrite a model in the current format (D7NTUP02, with its own checksum), copying the
    /// weights and accumulators bit for bit; the source is verified first.
    Upgrade {
        /// The model file to read (D7NTUP01 with its .sha256 sidecar, or D7NTUP02).
        file: PathBuf,
        /// Where to write it (may be FILE itself; a name ending in .zst is compressed).
        #[arg(long)]
        out: PathBuf,
        /// Accept a D7NTUP01 file that has no .sha256 sidecar (nothing can check its bytes:
        /// only for a file you trust).
        #[arg(long)]
        unverified: bool,
    },
    /// Apply an edit to never-updated entries and write a new file.
    #[command(group(clap::ArgGroup::new("edit").required(true).multiple(false)))]
    Edit {
        /// The model file to read.
        file: PathBuf,
        /// Set every never-updated entry to 0 (the same as --untouched-scale 0).
        #[arg(long, group = "edit")]
        zero_untouched: bool,
        /// Set every never-updated entry to its table's mean of updated entries.
        #[arg(long, group = "edit")]
        class_mean: bool,
        /// Set every never-updated entry to F times its starting value: 0 prices an
        /// unfamiliar pattern at nothing, 1 at a fresh board's share (no change). Choose F per
        /// search depth on the validation block (a deeper search reads more unfamiliar boards).
        #[arg(long, value_name = "F", group = "edit", value_parser = model::untouched_scale)]
        untouched_scale: Option<f32>,
        /// Where to write the edited model (a name ending in .zst is compressed).
        #[arg(long)]
        out: PathBuf,
    },
    /// Average two models of one layout entry by entry and write the result: a state's value
    /// is then the mean of the two models' values (their ensemble, at one model's cost in
    /// play). Both models are held in memory at once (8 GB for a 10^9-entry layout). An entry
    /// only one model updated is no longer at its starting value afterwards, so `model edit`
    /// (which changes never-updated entries) is applied to each model before, not after.
    Average {
        /// The first model file.
        first: PathBuf,
        /// The second model file (the same layout).
        second: PathBuf,
        /// Where to write the average (may be FIRST or SECOND: it is written after both are
        /// read; a name ending in .zst is compressed).
        #[arg(long)]
        out: PathBuf,
    },
    /// Copy the tables into 5 fill buckets, each starting as the source tables.
    Promote {
        /// The model file to read.
        file: PathBuf,
        /// The bucketing.
        #[arg(long, value_enum)]
        fill: FillArg,
        /// Where to write the promoted model.
        #[arg(long)]
        out: PathBuf,
    },
    /// Pack a model for committing (D7NTPK01): only the entries training changed, each
    /// quantised to a multiple of --step from the initial value, zstd-compressed, with an
    /// embedded SHA-256. Every model command and policy reads packs like model files.
    Pack {
        /// The model file to read.
        file: PathBuf,
        /// Where to write the pack (e.g. models/run.d7pk; a .sha256 sidecar is written too).
        #[arg(long)]
        out: PathBuf,
        /// Quantisation step in rise units (17,000 points each): every packed entry is within
        /// step / 2 of its trained value.
        #[arg(long, value_name = "S", default_value_t = 0.0005)]
        step: f32,
        /// Leave out (keep at the initial value) entries within this of the initial value.
        #[arg(long, value_name = "D", default_value_t = 0.0)]
        drop_within: f32,
        /// Largest file written, in bytes (e.g. 48e6): a longer pack is written as an index at
        /// --out and parts OUT.part000, OUT.part001, … beside it, read back as one.
        #[arg(long, value_name = "BYTES", default_value = "48e6")]
        part_bytes: Count,
    },
    /// Write the model a pack describes as a D7NTUP02 file (the quantised values, exactly).
    Unpack {
        /// The pack to read.
        file: PathBuf,
        /// Where to write the model (a name ending in .zst is compressed).
        #[arg(long)]
        out: PathBuf,
    },
    /// Draw the training curve of a run directory (its progress.jsonl) as SVG.
    Curve {
        /// The run directory (holds progress.jsonl; training-curve.svg is written there).
        dir: PathBuf,
    },
}

/// `drop7 model …`: each action is one function below.
pub fn model_cmd(a: ModelArgs) -> anyhow::Result<()> {
    match a.action {
        ModelAction::Info { file } => model_info(&file),
        ModelAction::Pack {
            file,
            out,
            step,
            drop_within,
            part_bytes,
        } => model_pack(&file, &out, step, drop_within, part_bytes),
        ModelAction::Unpack { file, out } => model_unpack(&file, &out),
        ModelAction::Upgrade {
            file,
            out,
            unverified,
        } => model_upgrade(&file, &out, unverified),
        ModelAction::Edit {
            file,
            zero_untouched,
            class_mean,
            untouched_scale,
            out,
        } => model_edit(&file, zero_untouched, class_mean, untouched_scale, &out),
        ModelAction::Average { first, second, out } => model_average(&first, &second, &out),
        ModelAction::Promote { file, fill, out } => model_promote(&file, fill, &out),
        ModelAction::Curve { dir } => model_curve(&dir),
    }
}

/// `model info`: the library's report as pretty JSON, its problems as warnings on stderr.
fn model_info(file: &Path) -> anyhow::Result<()> {
    let (j, problems) = model::info_report(file)?;
    for p in &problems {
        eprintln!("warning: {}: {p}", file.display());
    }
    print_line(&serde_json::to_string_pretty(&j).expect("json"))
}

/// What `model pack` prints: the file written and what the pack holds.
#[derive(Serialize)]
struct PackOutput<'a> {
    file: String,
    pack: &'a ntuple::pack::PackInfo,
}

/// `model pack`: write the pack and print [`PackOutput`] as pretty JSON.
fn model_pack(
    file: &Path,
    out: &Path,
    step: f32,
    drop_within: f32,
    part_bytes: Count,
) -> anyhow::Result<()> {
    // checked before the model is read (a large model takes minutes to load)
    ntuple::pack::check_settings(step, drop_within).map_err(anyhow::Error::msg)?;
    let (t, _) = model::load(file, false)?;
    let info = ntuple::pack::pack(&t, out, step, drop_within, part_bytes.0)?;
    let output = PackOutput {
        file: out.display().to_string(),
        pack: &info,
    };
    // Through a `Value`, as this output always has been: it prints the pack's f32 fields as
    // their f64 widening (`0.0005000000237487257`), where serialising them directly would
    // print `0.0005`.
    let j = serde_json::to_value(output).expect("json");
    print_line(&serde_json::to_string_pretty(&j).expect("json"))
}

/// `model unpack`: write the model a pack describes and say what it holds.
fn model_unpack(file: &Path, out: &Path) -> anyhow::Result<()> {
    let (info, sha) = ntuple::pack::unpack_to(file, out)?;
    print_line(&format!(
        "wrote {} as D7NTUP02 (layout {}, {} of {} entries from the pack, sha256 {sha})",
        out.display(),
        info.layout,
        info.listed,
        info.entries
    ))
}

/// `model upgrade`: rewrite a model in the current format and say from what.
fn model_upgrade(file: &Path, out: &Path, unverified: bool) -> anyhow::Result<()> {
    let u = model::upgrade(file, out, unverified)?;
    print_line(&format!(
        "wrote {} as D7NTUP02 (layout {}, sha256 {}) from {} {} verified by {}",
        out.display(),
        u.layout,
        u.sha256,
        u.from,
        file.display(),
        u.checked_by
    ))
}

/// `model edit`: the one edit chosen (clap's group makes it exactly one) applied to the
/// never-updated entries, and the result written.
fn model_edit(
    file: &Path,
    zero_untouched: bool,
    class_mean: bool,
    untouched_scale: Option<f32>,
    out: &Path,
) -> anyhow::Result<()> {
    if !zero_untouched && !class_mean && untouched_scale.is_none() {
        bail!("model edit: choose --zero-untouched, --class-mean or --untouched-scale F");
    }
    let (t, _) = model::load(file, false)?;
    let n = if zero_untouched {
        model::zero_untouched(&t)
    } else if let Some(f) = untouched_scale {
        model::scale_untouched(&t, f)
    } else {
        model::class_mean(&t)
    };
    let hash = model::save(&t, out, false)?;
    print_line(&format!(
        "{n} entries changed; wrote {} (sha256 {hash})",
        out.display()
    ))
}

/// `model average`: the entry-by-entry mean of two models of one layout, written.
fn model_average(first: &Path, second: &Path, out: &Path) -> anyhow::Result<()> {
    let context = || format!("averaging {} with {}", first.display(), second.display());
    let (a, n) = model::average_files(first, second).with_context(context)?;
    let hash = model::save(&a, out, false)?;
    print_line(&format!(
        "{n} entries changed; wrote {} (sha256 {hash})",
        out.display()
    ))
}

/// `model promote`: the tables copied into fill buckets, written.
fn model_promote(file: &Path, fill: FillArg, out: &Path) -> anyhow::Result<()> {
    let fill = match fill {
        FillArg::Occ5 => Fill::Occ5,
        FillArg::Hgt5 => Fill::Hgt5,
    };
    let (t, _) = model::load(file, false)?;
    let p = model::promote(&t, fill, false)?;
    drop(t);
    let hash = model::save(&p, out, false)?;
    print_line(&format!(
        "wrote {} with layout {} (sha256 {hash})",
        out.display(),
        p.layout
    ))
}

/// `model curve`: the run's progress.jsonl drawn as training-curve.svg beside it.
fn model_curve(dir: &Path) -> anyhow::Result<()> {
    let records = ntuple::train::read_progress(&dir.join("progress.jsonl"))?;
    let svg = ntuple::train::training_curve(&records);
    let p = dir.join("training-curve.svg");
    evidence::atomic_write(&p, svg.as_bytes()).with_context(|| "writing the curve")?;
    print_line(&format!("wrote {}", p.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checkpoint_every_is_auto_or_a_count() {
        assert_eq!("auto".parse(), Ok(CheckpointEvery(None)));
        assert_eq!("2e8".parse(), Ok(CheckpointEvery(Some(200_000_000))));
        assert!("soon".parse::<CheckpointEvery>().is_err());
    }
}
