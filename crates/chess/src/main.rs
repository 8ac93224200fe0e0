//! `actuary`: a UCI chess engine. With no subcommand it speaks UCI on stdin/stdout (what
//! GUIs, cutechess, fastchess and OpenBench expect); the subcommands are the tools in
//! `chess::tools` (`actuary --help` lists them, `actuary <tool> --help` documents each).
#![forbid(unsafe_code)]

use std::process::ExitCode;

use anyhow::Context;
use chess::tools::Tool;
use chess::uci::Engine;
use clap::{CommandFactory, FromArgMatches, Parser};

/// actuary: a UCI chess engine whose risky shortcuts are priced by measured tables.
///
/// Without a subcommand it runs the UCI protocol on stdin/stdout (for GUIs and match
/// runners). `actuary bench` prints the OpenBench signature line
/// "Bench: <nodes> nodes <nps> nps" last.
#[derive(Debug, Parser)]
#[command(name = "actuary", version)]
struct Cli {
    #[command(subcommand)]
    tool: Option<Tool>,
}

fn run() -> anyhow::Result<ExitCode> {
    let matches = Cli::command().get_matches();
    let cli = Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
    match &cli.tool {
        None => {
            Engine::new().run_stdin();
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
            eprintln!("error: {e:#}");
            ExitCode::from(2)
        }
    }
}
