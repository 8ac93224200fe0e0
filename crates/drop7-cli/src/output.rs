//! Writing results to stdout: a reader that stops early (`| head`) ends the command quietly
//! with success; any other write or flush error (a full disk, `> /dev/full`) is an error, so
//! a command never exits 0 having lost its output.

use std::io::{BufRead, ErrorKind, Write};

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

/// The longest input line read whole (`--batch`, D7P); a batch line is about 100 bytes.
pub const MAX_LINE: usize = 1 << 16;

/// One input line: its bytes (without the newline), or, past [`MAX_LINE`], only its length
/// (the rest is read and dropped, so no line can exhaust memory).
pub enum Line {
    Text(Vec<u8>),
    TooLong(u64),
}

/// The lines of `r`, each bounded by [`MAX_LINE`] bytes in memory.
pub fn bounded_lines<R: BufRead>(mut r: R) -> impl Iterator<Item = std::io::Result<Line>> {
    let mut done = false;
    std::iter::from_fn(move || {
        if done {
            return None;
        }
        let (mut buf, mut total, mut any) = (Vec::new(), 0u64, false);
        loop {
            let chunk = match r.fill_buf() {
                Ok(c) => c,
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(e) => {
                    done = true;
                    return Some(Err(e));
                }
            };
            if chunk.is_empty() {
                done = true;
                if !any {
                    return None;
                }
                break;
            }
            any = true;
            let (len, newline) = match chunk.iter().position(|&b| b == b'\n') {
                Some(i) => (i, true),
                None => (chunk.len(), false),
            };
            let room = (MAX_LINE + 1).saturating_sub(buf.len());
            buf.extend_from_slice(&chunk[..len.min(room)]);
            total += len as u64;
            r.consume(len + newline as usize);
            if newline {
                break;
            }
        }
        Some(Ok(if total > MAX_LINE as u64 {
            Line::TooLong(total)
        } else {
            Line::Text(buf)
        }))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(input: &[u8]) -> Vec<Result<Vec<u8>, u64>> {
        bounded_lines(std::io::BufReader::with_capacity(7, input))
            .map(|l| match l.unwrap() {
                Line::Text(t) => Ok(t),
                Line::TooLong(n) => Err(n),
            })
            .collect()
    }

    #[test]
    fn lines_are_bounded() {
        assert_eq!(lines(b""), vec![]);
        assert_eq!(
            lines(b"a\n\nbc"),
            vec![Ok(b"a".to_vec()), Ok(vec![]), Ok(b"bc".to_vec())]
        );
        assert_eq!(lines(b"abc\n"), vec![Ok(b"abc".to_vec())]);
        let mut big = vec![b'x'; MAX_LINE + 5];
        big.extend_from_slice(b"\nok\n");
        assert_eq!(
            lines(&big),
            vec![Err(MAX_LINE as u64 + 5), Ok(b"ok".to_vec())]
        );
        let exact = vec![b'y'; MAX_LINE];
        assert_eq!(lines(&exact), vec![Ok(exact.clone())]);
    }
}
