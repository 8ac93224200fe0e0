//! The command-line conventions every binary of the workspace (`actuary`, `arbiter`,
//! `drop7`) keeps, in one place so that they cannot drift apart:
//!
//! - `--help` and `--version` print to stdout and exit 0; if stdout cannot take them (a
//!   closed pipe is fine, a full disk is not) the exit status is 2 with one `error:` line.
//! - A command line that clap refuses prints **exactly one** `error:` line on stderr, naming
//!   the flag and what it accepts, and exits 2 (clap's own message spans 3–6 lines: the
//!   usage, a tip, the missing arguments one per line).
#![forbid(unsafe_code)]

use clap::error::ErrorKind;
use clap::{ArgMatches, CommandFactory, FromArgMatches};
use std::io::Write as _;

/// Exit status of a refused command line (clap's and every binary's).
pub const USAGE_STATUS: i32 = 2;

/// Parse the process's arguments as `C`, or exit as the conventions say.
pub fn parse<C: CommandFactory + FromArgMatches>() -> (C, ArgMatches) {
    parse_from::<C, _, _>(std::env::args_os()).unwrap_or_else(|status| std::process::exit(status))
}

/// Parse `args` as `C`; on a refusal (or help and version) print what the conventions say
/// and return the exit status to end with.
pub fn parse_from<C, I, T>(args: I) -> Result<(C, ArgMatches), i32>
where
    C: CommandFactory + FromArgMatches,
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    let matches = C::command()
        .try_get_matches_from(args)
        .map_err(|e| report(&e))?;
    let cli = C::from_arg_matches(&matches).map_err(|e| report(&e))?;
    Ok((cli, matches))
}

/// Print a clap error (or help) the conventions' way; returns the exit status.
pub fn report(e: &clap::Error) -> i32 {
    match e.kind() {
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => {
            let text = e.render().to_string();
            let mut out = std::io::stdout().lock();
            match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
                Ok(()) => 0,
                Err(err) if err.kind() == std::io::ErrorKind::BrokenPipe => 0,
                Err(err) => {
                    eprintln!("error: cannot write the help to stdout: {err}");
                    USAGE_STATUS
                }
            }
        }
        _ => {
            eprintln!("{}", one_line(e));
            USAGE_STATUS
        }
    }
}

/// A clap error as one line: its message (which names the flag and what it accepts) with its
/// own line breaks (the missing arguments, one per line; a value holding a line break) made
/// spaces, without the usage and tips after the blank line. A missing subcommand names the
/// usage instead.
pub fn one_line(e: &clap::Error) -> String {
    let text = e.render().to_string();
    if e.kind() == ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand {
        let usage = text
            .lines()
            .find_map(|l| l.strip_prefix("Usage: "))
            .unwrap_or("<COMMAND>");
        return format!("error: a command is missing: {usage} (add --help for the list)");
    }
    let body = text.split("\n\n").next().unwrap_or("error: bad arguments");
    let words: Vec<&str> = body
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    let line = words.join(" ");
    if line.starts_with("error:") {
        line
    } else {
        format!("error: {line}")
    }
}

/// Make a failed write to stdout end the process by the conventions instead of a panic: a
/// reader that has gone (`| head -1`, a closed pipe) ends it quietly with status 0; any other
/// write error (`> /dev/full`) prints one `error:` line and exits 2.
///
/// Why a hook: `println!` panics on a write error, and a program that prints from many
/// places (the engine's UCI loop and search threads among them) would otherwise need every
/// one of them rewritten. The hook recognises the standard library's own message for this
/// panic and leaves every other panic to the default hook.
pub fn exit_quietly_on_stdout_errors() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let msg = info
            .payload()
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| info.payload().downcast_ref::<&str>().copied())
            .unwrap_or("");
        if let Some(why) = msg.strip_prefix("failed printing to stdout: ") {
            if why.contains("Broken pipe") {
                std::process::exit(0);
            }
            eprintln!("error: writing to standard output: {why}");
            std::process::exit(USAGE_STATUS);
        }
        default(info);
    }));
}

/// An error and its causes as one line, each cause once: a cause whose text the line already
/// holds is skipped (an error that writes `{source}` into its own message would otherwise
/// print it twice: `x: Is a directory (os error 21): Is a directory (os error 21)`), and line
/// breaks inside a message become spaces.
pub fn error_text<'a>(
    chain: impl IntoIterator<Item = &'a (dyn std::error::Error + 'static)>,
) -> String {
    let mut line = String::new();
    for cause in chain {
        let text = cause.to_string();
        let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
        if text.is_empty() || line.contains(&text) {
            continue;
        }
        if !line.is_empty() {
            line.push_str(": ");
        }
        line.push_str(&text);
    }
    line
}

/// A usage error raised after parsing (a rule clap cannot express), printed and exited by
/// the conventions: one `error:` line, status 2.
pub fn usage_error<C: CommandFactory>(kind: ErrorKind, message: impl std::fmt::Display) -> ! {
    let e = C::command().error(kind, message);
    std::process::exit(report(&e))
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    /// A toy command line with the shapes clap words differently.
    #[derive(Debug, Parser)]
    #[command(name = "toy", version)]
    struct Toy {
        #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
        games: u32,
        #[arg(long)]
        name: Option<String>,
        #[arg(long, required = true)]
        out: Vec<String>,
    }

    fn err(args: &[&str]) -> String {
        let e = Toy::command().try_get_matches_from(args).unwrap_err();
        one_line(&e)
    }

    #[test]
    fn every_refusal_is_one_line_naming_the_flag() {
        let cases = [
            (vec!["toy", "--games", "x", "--out", "a"], "--games"),
            (vec!["toy", "--games", "0", "--out", "a"], "--games"),
            (vec!["toy", "--bogus"], "--bogus"),
            (vec!["toy"], "--games"),
            (vec!["toy", "--games", "3"], "--out"),
            (
                vec!["toy", "--games", "3", "--out", "a", "--name"],
                "--name",
            ),
        ];
        for (args, flag) in cases {
            let line = err(&args);
            assert!(!line.contains('\n'), "{args:?}: {line:?}");
            assert!(line.starts_with("error: "), "{args:?}: {line}");
            assert!(line.contains(flag), "{args:?}: {line} does not name {flag}");
            assert!(!line.contains("Usage:") && !line.contains("tip:"), "{line}");
        }
        // Both missing arguments are named on the one line.
        let line = err(&["toy"]);
        assert!(line.contains("--games") && line.contains("--out"), "{line}");
    }

    #[test]
    fn a_cause_in_its_errors_message_is_printed_once() {
        #[derive(Debug)]
        struct Wrap(std::io::Error);
        impl std::fmt::Display for Wrap {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                write!(f, "x.txt: {}", self.0)
            }
        }
        impl std::error::Error for Wrap {
            fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
                Some(&self.0)
            }
        }
        let e = Wrap(std::io::Error::other("Is a directory\n(os error 21)"));
        let mut chain: Vec<&(dyn std::error::Error + 'static)> = vec![&e];
        chain.extend(std::error::Error::source(&e));
        assert_eq!(error_text(chain), "x.txt: Is a directory (os error 21)");
    }

    #[test]
    fn help_and_version_are_not_errors() {
        let e = Toy::command()
            .try_get_matches_from(["toy", "--help"])
            .unwrap_err();
        assert_eq!(e.kind(), ErrorKind::DisplayHelp);
        let e = Toy::command()
            .try_get_matches_from(["toy", "--version"])
            .unwrap_err();
        assert_eq!(e.kind(), ErrorKind::DisplayVersion);
    }
}
