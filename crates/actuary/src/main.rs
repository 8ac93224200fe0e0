//! `actuary`: a UCI chess engine. With no subcommand it speaks UCI on stdin/stdout (what
//! GUIs, cutechess, fastchess and OpenBench expect); the subcommands are the engine's own
//! tools and, in the default build, the laboratory's (`actuary --help` lists them, `actuary
//! <tool> --help` documents each). `cargo build -p actuary --no-default-features` (what the
//! OpenBench `make` runs) builds the engine alone.
#![forbid(unsafe_code)]

mod tools;

use std::process::ExitCode;

use anyhow::Context;
use clap::Parser;
use tools::Tool;

/// actuary: a UCI chess engine whose risky shortcuts are priced by measured tables.
///
/// Without a subcommand it runs the UCI protocol on stdin/stdout (for GUIs and match
/// runners). `actuary bench` prints the OpenBench signature line
/// `Bench: <nodes> nodes <nps> nps` last.
#[derive(Debug, Parser)]
#[command(name = "actuary", version)]
struct Cli {
    /// Speak UCI with the laboratory's options listed too (`prune.*`, `LazyEval`,
    /// `LazyTables`, `NetLazyTables`), for tuners that check what they set against the
    /// handshake. A GUI is shown only the options a player sets; the engine accepts the
    /// laboratory's either way.
    #[arg(long)]
    lab: bool,
    #[command(subcommand)]
    tool: Option<Tool>,
}

fn run() -> anyhow::Result<ExitCode> {
    cmdline::exit_quietly_on_stdout_errors();
    let (cli, matches) = cmdline::parse::<Cli>();
    match &cli.tool {
        None => {
            chess::run(cli.lab);
            Ok(ExitCode::SUCCESS)
        }
        Some(tool) => {
            let name = matches.subcommand_name().unwrap_or("tool");
            tool.run().with_context(|| format!("actuary {name}"))
        }
    }
}

fn main() -> ExitCode {
    match run() {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {}", cmdline::error_text(e.chain()));
            ExitCode::from(2)
        }
    }
}
