//! Every weight of the evaluation, generated at build time from
//! `data/chess/eval-params.txt` (see `crates/chess/build.rs`): one constant per parameter,
//! plus the flat list ([`VALUES`], [`NAMES`], [`id`]) that the trace and the tuner index.
//!
//! Constants, not a table read at run time: tuned weights cost the engine nothing.

use super::S;

include!(concat!(env!("OUT_DIR"), "/eval_params.rs"));

/// `(index in VALUES, value)` of a parameter entry: `p!(DOUBLED)`, `p!(PASSED_BY_RANK[r])`,
/// `p!(PST[piece][sq])`. Index and value come from the same generated name, so an evaluation
/// term and its trace coefficient cannot refer to different weights.
macro_rules! p {
    ($name:ident) => {
        ($crate::eval::params::id::$name, $crate::eval::params::$name)
    };
    ($name:ident [$i:expr]) => {{
        let i = $i;
        (
            $crate::eval::params::id::$name + i,
            $crate::eval::params::$name[i],
        )
    }};
    ($name:ident [$i:expr] [$j:expr]) => {{
        let (i, j) = ($i, $j);
        let row = $crate::eval::params::$name[0].len();
        (
            $crate::eval::params::id::$name + i * row + j,
            $crate::eval::params::$name[i][j],
        )
    }};
}
pub(crate) use p;

/// The parameter file this build was made from.
pub(crate) const EMBEDDED: &str = include_str!("../../../../data/chess/eval-params.txt");

/// The hand evaluation's identity: `hce:` and an FNV-1a hash of every entry's name and
/// weights (comments do not count). Reports and resumable runs record it, so a run begun
/// with other weights, or another layout of them, is not silently continued with these.
pub fn embedded_id() -> String {
    id_of(&VALUES)
}

/// The identity of `values` under this engine's names (what [`embedded_id`] hashes).
fn id_of(values: &[S]) -> String {
    let mut h: u64 = 0xCBF2_9CE4_8422_2325;
    let mut eat = |bytes: &[u8]| {
        for b in bytes {
            h = (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01B3);
        }
    };
    for (name, v) in NAMES.iter().zip(values) {
        eat(name.as_bytes());
        eat(&v.mg.to_le_bytes());
        eat(&v.eg.to_le_bytes());
    }
    format!("hce:{h:016x}")
}

/// A parameter file that does not fit this engine.
#[derive(Debug, thiserror::Error)]
#[error("{origin}:{line}: {message}")]
pub struct ParamsError {
    pub origin: String,
    pub line: usize,
    pub message: String,
}

/// Read a parameter file (the format of `data/chess/eval-params.txt`): every entry of this
/// engine, by name and in order, as `NAME mg eg`. `origin` names the file in errors.
pub fn parse(text: &str, origin: &str) -> Result<Vec<S>, ParamsError> {
    let err = |line: usize, message: String| ParamsError {
        origin: origin.to_owned(),
        line,
        message,
    };
    let mut out = Vec::with_capacity(COUNT);
    let mut last = 0;
    for (i, raw) in text.lines().enumerate() {
        let l = raw.trim();
        if l.is_empty() || l.starts_with('#') {
            continue;
        }
        last = i + 1;
        let w: Vec<&str> = l.split_whitespace().collect();
        let Some(&want) = NAMES.get(out.len()) else {
            return Err(err(
                i + 1,
                format!("more entries than this engine's {COUNT}"),
            ));
        };
        if w.len() != 3 || w[0] != want {
            return Err(err(i + 1, format!("expected `{want} mg eg`")));
        }
        let num = |s: &str| {
            s.parse::<i32>()
                .ok()
                .filter(|v| v.abs() <= 30_000)
                .ok_or_else(|| err(i + 1, format!("`{s}` is not an integer within ±30000")))
        };
        out.push(S::new(num(w[1])?, num(w[2])?));
    }
    if out.len() != COUNT {
        return Err(err(
            last,
            format!(
                "{} entries, this engine has {COUNT} (next: {})",
                out.len(),
                NAMES[out.len()]
            ),
        ));
    }
    Ok(out)
}

/// A parameter file with `values`: the embedded file's layout and comments, its `# source:`
/// paragraph (that line and the `#   ` lines after it) replaced by `source` (one or more
/// lines, written as comments).
pub fn write(values: &[S], source: &str) -> String {
    assert_eq!(values.len(), COUNT, "one value per entry");
    let mut out = String::with_capacity(EMBEDDED.len() + source.len());
    let mut k = 0;
    let mut in_source = false;
    for raw in EMBEDDED.lines() {
        let l = raw.trim();
        if l.starts_with("# source:") {
            in_source = true;
            for (i, s) in source.lines().enumerate() {
                out.push_str(if i == 0 { "# source: " } else { "#   " });
                out.push_str(s);
                out.push('\n');
            }
            continue;
        }
        // The old paragraph's continuation lines.
        if in_source && raw.starts_with("#   ") {
            continue;
        }
        in_source = false;
        if l.is_empty() || l.starts_with('#') {
            out.push_str(raw);
        } else {
            let v = values[k];
            out.push_str(&format!("{} {} {}", NAMES[k], v.mg, v.eg));
            k += 1;
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_flat_list_indexes_the_constants() {
        assert_eq!(NAMES.len(), COUNT);
        assert_eq!(p!(PST[1][28]), (id::PST + 64 + 28, PST[1][28]));
        assert_eq!(VALUES[id::PST + 64 + 28], PST[1][28]);
        assert_eq!(NAMES[id::PASSED_BY_RANK + 6], "PASSED_BY_RANK[6]");
        assert_eq!(VALUES[id::TEMPO], TEMPO);
        assert_eq!(NAMES[COUNT - 1], "TEMPO");
        // Names are unique.
        let mut n = NAMES.to_vec();
        n.sort_unstable();
        n.dedup();
        assert_eq!(n.len(), COUNT);
        // The identity follows the weights: one weight changed by one changes it, and the
        // same weights give the same id.
        let id = embedded_id();
        assert!(id.starts_with("hce:") && id.len() == 20, "{id}");
        let mut v = VALUES.to_vec();
        assert_eq!(id_of(&v), id);
        v[id::TEMPO] = S::new(v[id::TEMPO].mg + 1, v[id::TEMPO].eg);
        assert_ne!(id_of(&v), id);
    }

    #[test]
    fn files_round_trip_and_bad_files_name_the_line() {
        // The embedded file reads back to the constants build.rs made from it.
        assert_eq!(parse(EMBEDDED, "embedded").unwrap(), VALUES.to_vec());
        let mut v = VALUES.to_vec();
        v[id::TEMPO] = S::new(-3, 17);
        v[id::PST + 100] = S::new(400, 401);
        let text = write(&v, "a test\nsecond line");
        assert_eq!(parse(&text, "t").unwrap(), v);
        assert!(
            text.contains("# source: a test\n#   second line\n"),
            "{text}"
        );
        assert_eq!(text.matches("# source:").count(), 1);
        // The damaged files are made from whatever weights are embedded (tuned or not).
        let t = VALUES[id::TEMPO];
        let tempo = format!("TEMPO {} {}", t.mg, t.eg);
        assert!(EMBEDDED.contains(&format!("\n{tempo}\n")), "{tempo}");
        for (bad, says) in [
            (
                EMBEDDED.replacen(&tempo, &format!("TEMPO {}", t.mg), 1),
                "expected `TEMPO mg eg`",
            ),
            (
                EMBEDDED.replacen(&tempo, &format!("TEMPO {} x", t.mg), 1),
                "`x` is not an integer",
            ),
            (
                // The data line, not a mention in a comment (the source paragraph may name it).
                EMBEDDED.replacen("\nDOUBLED ", "\nDOUBLE ", 1),
                "expected `DOUBLED mg eg`",
            ),
            (EMBEDDED.replacen(&tempo, "", 1), "entries, this engine has"),
            (format!("{EMBEDDED}EXTRA 1 1\n"), "more entries"),
        ] {
            let e = parse(&bad, "f.txt").unwrap_err().to_string();
            assert!(e.starts_with("f.txt:") && e.contains(says), "{e}");
        }
    }
}
