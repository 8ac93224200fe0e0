//! Data files the engine reads by name from a UCI option (`LazyTables`, `prune.fh-table`,
//! `prune.rfp-table`): read with the limits a GUI's typo or a hostile path needs.

/// The most bytes a data file the engine reads by name (`LazyTables`, `prune.fh-table`,
/// `prune.rfp-table`) may have: the generated tables are well under 1 MB.
pub(crate) const MAX_DATA_FILE: u64 = 16 << 20;

/// Read a data file named by an option: only a regular file (a FIFO would block the UCI
/// loop, `/dev/zero` would never end) of at most [`MAX_DATA_FILE`] bytes ([`fileio`]).
pub(crate) fn read_data_file(path: &std::path::Path) -> std::io::Result<String> {
    fileio::read_to_string(path, MAX_DATA_FILE).map_err(fileio::FileError::into_io)
}

/// FNV-1a, 64 bits: a checksum with no dependency, stable on every machine.
pub fn fnv1a64(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xCBF2_9CE4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01B3)
    })
}

/// Data lines of a table file's text: after the first (magic) line, neither blank nor `#`.
fn data_lines(text: &str) -> usize {
    text.lines()
        .skip(1)
        .filter(|l| !l.trim().is_empty() && !l.trim_start().starts_with('#'))
        .count()
}

/// A generated table file's text with its seal appended: `end <data lines> <fnv1a64 hex>`,
/// the checksum over every byte before the `end` line. Why: a table cut short (a copy
/// interrupted, a disk full) still parses line by line, and cells or margins it lost would
/// silently fall back to the formulas; the seal makes such a file an error.
pub fn seal(text: &str) -> String {
    let mut out = text.to_owned();
    if !out.ends_with('\n') {
        out.push('\n');
    }
    let line = format!(
        "end {} {:016x}\n",
        data_lines(&out),
        fnv1a64(out.as_bytes())
    );
    out.push_str(&line);
    out
}

/// The text of a sealed table file before its `end` line, if the seal holds: the `end` line
/// is the last line, and the count and checksum match. The error says what is wrong.
pub(crate) fn unseal(text: &str) -> Result<&str, String> {
    let trimmed = text.trim_end_matches(['\n', '\r']);
    let start = trimmed.rfind('\n').map_or(0, |i| i + 1);
    let last = &trimmed[start..];
    let body = &text[..start];
    let mut w = last.split_whitespace();
    let (Some("end"), Some(count), Some(sum), None) = (w.next(), w.next(), w.next(), w.next())
    else {
        return Err(
            "no `end <lines> <checksum>` line at the end: the file is cut short (or was written \
             before tables were sealed: re-run the command that made it)"
                .into(),
        );
    };
    let count: usize = count
        .parse()
        .map_err(|_| format!("`end` line: bad line count `{count}`"))?;
    if count != data_lines(body) {
        return Err(format!(
            "`end` line counts {count} data lines, the file has {}",
            data_lines(body)
        ));
    }
    let sum =
        u64::from_str_radix(sum, 16).map_err(|_| format!("`end` line: bad checksum `{sum}`"))?;
    if sum != fnv1a64(body.as_bytes()) {
        return Err(
            "checksum mismatch: the file was changed or damaged after it was written".into(),
        );
    }
    Ok(body)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sealed_text_round_trips_and_damage_is_refused() {
        let text = "magic v1\n# a comment\ncell 1 2\n\ncell 3 4\n";
        let sealed = seal(text);
        assert!(sealed.starts_with(text));
        assert!(sealed.ends_with('\n'));
        assert_eq!(
            sealed.lines().last().unwrap().split_whitespace().nth(1),
            Some("2")
        );
        assert_eq!(unseal(&sealed).unwrap(), text);
        // Cut anywhere before the end: refused.
        for cut in [text.len() - 3, text.len(), sealed.len() - 5] {
            assert!(unseal(&sealed[..cut]).is_err(), "cut at {cut}");
        }
        // A changed byte: refused.
        let changed = sealed.replacen("cell 3 4", "cell 3 5", 1);
        assert!(unseal(&changed).unwrap_err().contains("checksum"));
        // A line dropped (count and checksum both disagree).
        let dropped = sealed.replacen("cell 1 2\n", "", 1);
        assert!(unseal(&dropped).unwrap_err().contains("counts 2"));
        // The known value of FNV-1a 64 for "a".
        assert_eq!(fnv1a64(b"a"), 0xaf63_dc4c_8601_ec8c);
    }
}
