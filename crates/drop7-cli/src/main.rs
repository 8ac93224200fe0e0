//! `drop7`: the command line over the drop7 engine (and, later, the n-tuple learner).
//!
//! Every subcommand prints machine-readable output (JSON lines) on stdout and human notes on
//! stderr; bad input gets one `error: …` line and exit status 2, never a panic.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod inspect;
mod learn;
mod mechanics;
mod play;
mod policies;
mod screen;

/// Drop7 (Hardcore, headless) engine, bit-identical to the drop7-bench reference simulator.
#[derive(Parser)]
#[command(name = "drop7", version, about, long_about = None, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
    /// Model file for `ntuple-*` policies written without `@FILE` (or set DROP7_MODEL).
    #[arg(long, global = true)]
    model: Option<std::path::PathBuf>,
}

#[derive(Subcommand)]
enum Command {
    /// Play one headless game and print one JSON object per move in the reference trace format.
    Trace(mechanics::TraceArgs),
    /// Play one move from an arbitrary public state and print the result as JSON.
    Step(mechanics::StepArgs),
    /// Draw a board in the terminal (`.` empty, `#` solid, `x` cracked, digits numbered).
    Show(mechanics::ShowArgs),
    /// Measure simulator speed: whole random-policy games from a fixed seed block.
    Bench(mechanics::BenchArgs),
    /// Play whole games with a policy on a seed block, in parallel; one JSON line per game.
    Play(play::PlayArgs),
    /// Screen arms on identical seeds: paired contrasts with bootstrap and t bounds, gate, verdict.
    Screen(screen::ScreenArgs),
    /// The seed ledger: list leases, reserve blocks for training, validation or screens.
    Lease(screen::LeaseArgs),
    /// Train n-tuple tables by TD(0) with temporal coherence (resumable, validated).
    Train(learn::TrainArgs),
    /// Inspect, edit or promote a D7NTUP01 model file; draw a training curve.
    Model(learn::ModelArgs),
    /// Print the fair leaf value and its 18 raw terms as JSON (one state, or --batch).
    Leaf(inspect::StateArgs),
    /// Run the fair search on a state: decision, every root Q, work (one state, or --batch).
    Search(inspect::SearchArgs),
    /// Serve a policy over the D7P line protocol on stdin/stdout.
    D7p(inspect::D7pArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    policies::set_default_model(cli.model.clone());
    let result = match cli.command {
        Command::Trace(a) => mechanics::trace(a),
        Command::Step(a) => mechanics::step(a),
        Command::Show(a) => mechanics::show(a),
        Command::Bench(a) => mechanics::bench(a),
        Command::Play(a) => play::play(a),
        Command::Screen(a) => screen::screen(a),
        Command::Lease(a) => screen::lease(a),
        Command::Train(a) => learn::train(a),
        Command::Model(a) => learn::model_cmd(a),
        Command::Leaf(a) => inspect::leaf(a),
        Command::Search(a) => inspect::search(a),
        Command::D7p(a) => inspect::d7p(a),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}
