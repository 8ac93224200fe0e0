//! `drop7`: the command line over the `drop7` and `ntuple` libraries — argument mapping and
//! output formatting only.
//!
//! Results go to stdout (text, or JSON where a command has `--json`; JSON lines for the
//! record-producing commands); progress bars and notes go to stderr. Bad input gets one
//! `error: …` line naming the flag and what it accepts, and exit status 2, never a panic.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod args;
mod inspect;
mod learn;
mod mechanics;
mod output;
mod play;
mod progress;
mod screen;
mod serve;

/// Drop7 (Hardcore, headless): an engine bit-identical to the drop7-bench reference
/// simulator, its fair expectimax search, n-tuple learning, paired screens and a seed ledger.
#[derive(Parser)]
#[command(name = "drop7", version, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

// Parsed once per process: the size of the largest variant does not matter.
#[allow(clippy::large_enum_variant)]
#[derive(Subcommand)]
enum Command {
    /// Play one headless game and print one JSON object per move in the reference trace format.
    Trace(mechanics::TraceArgs),
    /// Play one move from an arbitrary public state and print the result as JSON.
    Step(mechanics::StepArgs),
    /// Draw a board in the terminal (`.` empty, `#` solid, `x` cracked, digits numbered).
    Show(mechanics::ShowArgs),
    /// Measure speed: whole reference-random games, or a policy's decisions (--policy).
    Bench(mechanics::BenchArgs),
    /// Play whole games with a policy on a seed block, in parallel; one JSON line per game.
    Play(play::PlayArgs),
    /// Screen arms on identical seeds: paired contrasts with bootstrap and t bounds, gate, verdict.
    Screen(screen::ScreenArgs),
    /// Join the shards of a screen or a play run (job arrays) into what one process writes.
    Merge(screen::MergeArgs),
    /// The seed ledger: list leases, reserve blocks for training, validation or screens.
    Lease(screen::LeaseArgs),
    /// Train n-tuple tables by TD(0) with temporal coherence (resumable, validated).
    Train(learn::TrainArgs),
    /// Inspect, upgrade, edit or promote a model file; draw a training curve.
    Model(learn::ModelArgs),
    /// Print the fair leaf value and its 18 raw terms as JSON (one state, or --batch).
    Leaf(inspect::StateArgs),
    /// Run the fair search on a state: decision, every root Q, work (one state, or --batch).
    Search(inspect::SearchArgs),
    /// Serve a policy over the D7P line protocol on stdin/stdout.
    D7p(inspect::D7pArgs),
    /// Price searching only the best k root columns at the last depth: on positions of fresh
    /// games, how often the choice differs from the full search and the regret in points.
    Topk(inspect::TopkArgs),
    /// Serve a local web page: play with the engine's advice, replay recorded games, browse
    /// screens and training runs under --dir.
    Serve(serve::ServeArgs),
}

fn main() -> ExitCode {
    let (cli, _) = cmdline::parse::<Cli>();
    let result = match cli.command {
        Command::Trace(a) => mechanics::trace(a),
        Command::Step(a) => mechanics::step(a),
        Command::Show(a) => mechanics::show(a),
        Command::Bench(a) => mechanics::bench(a),
        Command::Play(a) => play::play(a),
        Command::Screen(a) => screen::screen(a),
        Command::Merge(a) => screen::merge(a),
        Command::Lease(a) => screen::lease(a),
        Command::Train(a) => learn::train(a),
        Command::Model(a) => learn::model_cmd(a),
        Command::Leaf(a) => inspect::leaf(a),
        Command::Search(a) => inspect::search(a),
        Command::D7p(a) => inspect::d7p(a),
        Command::Topk(a) => inspect::topk(a),
        Command::Serve(a) => serve::serve(a),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {}", one_line(&e));
            ExitCode::from(2)
        }
    }
}

/// The error and its causes on one line, each cause once: library errors already quote
/// their source (`FILE: No such file or directory`), so a cause whose text is already there
/// is not repeated.
fn one_line(e: &anyhow::Error) -> String {
    cmdline::error_text(e.chain())
}
