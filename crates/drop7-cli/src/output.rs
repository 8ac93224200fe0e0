//! Writing results to stdout: a reader that stops early (`| head`) ends the command quietly
//! with success; any other write or flush error (a full disk, `> /dev/full`) is an error, so
//! a command never exits 0 having lost its output.

use std::io::{ErrorKind, Write};

/// Write one line; `Ok(false)` if the reader has gone (stop producing).
pub fn write_line(out: &mut impl Write, line: &str) -> anyhow::Result<bool> {
    let mut buf = String::with_capacity(line.len() + 1);
    buf.push_str(line);
    buf.push('\n');
    match out.write_all(buf.as_bytes()) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == ErrorKind::BrokenPipe => Ok(false),
        Err(e) => Err(anyhow::Error::new(e).context("writing to standard output")),
    }
}

/// Flush, treating a gone reader as success.
pub fn flush(out: &mut impl Write) -> anyhow::Result<()> {
    match out.flush() {
        Err(e) if e.kind() != ErrorKind::BrokenPipe => {
            Err(anyhow::Error::new(e).context("writing to standard output"))
        }
        _ => Ok(()),
    }
}

/// Print one line (or several joined by `\n`) to stdout and flush.
pub fn print_line(line: &str) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    if write_line(&mut out, line)? {
        flush(&mut out)?;
    }
    Ok(())
}

/// Print text as it is (its own newlines) to stdout and flush.
pub fn print_text(text: &str) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()) {
        Err(e) if e.kind() == ErrorKind::BrokenPipe => Ok(()),
        Err(e) => Err(anyhow::Error::new(e).context("writing to standard output")),
        Ok(()) => flush(&mut out),
    }
}
