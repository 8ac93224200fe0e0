//! Turns `data/chess/eval-params.txt` (every evaluation weight, written by `actuary tune`)
//! into Rust constants, so tuned weights cost the engine nothing at run time: the search sees
//! plain `const`s it can fold, exactly as if they were typed in the source.
//!
//! Emitted into `$OUT_DIR/eval_params.rs` (included by `eval::params`):
//! - one `pub const NAME: S` (or `[S; N]`, `[[S; M]; N]`) per parameter, in file order;
//! - `id::NAME`: the index of its first entry in the flat list;
//! - `COUNT`, `NAMES` (one per entry, e.g. `PST[1][28]`) and `VALUES` (the flat list), which
//!   the trace and the tuner use.
//!
//! A malformed file stops the build with the file and line.

use std::fmt::Write as _;
use std::path::Path;

const FILE: &str = "../../data/chess/eval-params.txt";

struct Param {
    name: String,
    /// Array shape: [] scalar, [n], or [n, m].
    shape: Vec<usize>,
    values: Vec<(i32, i32)>,
}

fn fail(line: usize, why: &str) -> ! {
    panic!("{FILE} line {line}: {why}");
}

/// `NAME`, `NAME[i]` or `NAME[i][j]`.
fn split_name(s: &str, line: usize) -> (String, Vec<usize>) {
    let (base, rest) = s.split_at(s.find('[').unwrap_or(s.len()));
    if base.is_empty()
        || !base
            .chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
        || base.starts_with(|c: char| c.is_ascii_digit())
    {
        fail(line, &format!("`{s}` is not an upper-case NAME"));
    }
    let mut idx = Vec::new();
    let mut r = rest;
    while !r.is_empty() {
        let close = r
            .find(']')
            .filter(|_| r.starts_with('['))
            .unwrap_or_else(|| fail(line, &format!("`{s}`: indices must be [i] or [i][j]")));
        let n: usize = r[1..close]
            .parse()
            .unwrap_or_else(|_| fail(line, &format!("`{s}`: index is not a number")));
        idx.push(n);
        r = &r[close + 1..];
    }
    if idx.len() > 2 {
        fail(line, &format!("`{s}`: at most two indices"));
    }
    (base.to_owned(), idx)
}

fn main() {
    println!("cargo:rerun-if-changed={FILE}");
    println!("cargo:rerun-if-changed=build.rs");
    let text = std::fs::read_to_string(FILE).unwrap_or_else(|e| panic!("{FILE}: {e}"));
    let mut params: Vec<Param> = Vec::new();
    // Per parameter, the indices seen so far, to check they come in row-major order.
    let mut seen_idx: Vec<Vec<Vec<usize>>> = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        let l = raw.trim();
        if l.is_empty() || l.starts_with('#') {
            continue;
        }
        let w: Vec<&str> = l.split_whitespace().collect();
        if w.len() != 3 {
            fail(line, "expected `NAME mg eg`");
        }
        let num = |s: &str| -> i32 {
            s.parse::<i32>()
                .ok()
                .filter(|v| v.abs() <= 30_000)
                .unwrap_or_else(|| {
                    fail(
                        line,
                        &format!("`{s}` is not an integer within ±30000 centipawns"),
                    )
                })
        };
        let (mg, eg) = (num(w[1]), num(w[2]));
        let (base, idx) = split_name(w[0], line);
        match params.iter().position(|p| p.name == base) {
            Some(k) if k + 1 == params.len() => {
                if idx.len() != seen_idx[k][0].len() {
                    fail(line, &format!("`{}` changes its number of indices", w[0]));
                }
                seen_idx[k].push(idx);
                params[k].values.push((mg, eg));
            }
            Some(_) => fail(
                line,
                &format!("`{base}` appears again after another parameter"),
            ),
            None => {
                params.push(Param {
                    name: base,
                    shape: Vec::new(),
                    values: vec![(mg, eg)],
                });
                seen_idx.push(vec![idx]);
            }
        }
    }
    if params.is_empty() {
        panic!("{FILE}: no parameters");
    }
    // Shapes: indices must enumerate a full row-major grid from 0.
    for (p, idx) in params.iter_mut().zip(&seen_idx) {
        let dims = idx[0].len();
        let shape: Vec<usize> = (0..dims)
            .map(|d| idx.iter().map(|v| v[d]).max().unwrap_or(0) + 1)
            .collect();
        let mut expect = vec![0usize; dims];
        for v in idx {
            if *v != expect {
                panic!(
                    "{FILE}: {} entries must run {}..., in order (found {:?} where {:?} was due)",
                    p.name,
                    if dims == 0 { "once" } else { "from [0]" },
                    v,
                    expect
                );
            }
            // Next index in row-major order.
            for d in (0..dims).rev() {
                expect[d] += 1;
                if expect[d] < shape[d] {
                    break;
                }
                expect[d] = 0;
            }
        }
        if idx.len() != shape.iter().product::<usize>() {
            panic!("{FILE}: {} is not a full grid {:?}", p.name, shape);
        }
        p.shape = shape;
    }

    let s = |&(mg, eg): &(i32, i32)| format!("S::new({mg}, {eg})");
    let mut out =
        String::from("// Generated by build.rs from data/chess/eval-params.txt; do not edit.\n");
    let mut names = Vec::new();
    let mut ids = String::new();
    let mut flat = Vec::new();
    for p in &params {
        let _ = writeln!(ids, "    pub const {}: usize = {};", p.name, flat.len());
        match p.shape.as_slice() {
            [] => {
                let _ = writeln!(out, "pub const {}: S = {};", p.name, s(&p.values[0]));
                names.push(p.name.clone());
            }
            [n] => {
                let v: Vec<String> = p.values.iter().map(s).collect();
                let _ = writeln!(out, "pub const {}: [S; {n}] = [{}];", p.name, v.join(", "));
                names.extend((0..*n).map(|i| format!("{}[{i}]", p.name)));
            }
            [n, m] => {
                let rows: Vec<String> = p
                    .values
                    .chunks(*m)
                    .map(|r| format!("[{}]", r.iter().map(s).collect::<Vec<_>>().join(", ")))
                    .collect();
                let _ = writeln!(
                    out,
                    "pub const {}: [[S; {m}]; {n}] = [{}];",
                    p.name,
                    rows.join(",\n    ")
                );
                for i in 0..*n {
                    names.extend((0..*m).map(|j| format!("{}[{i}][{j}]", p.name)));
                }
            }
            _ => unreachable!("at most two indices"),
        }
        flat.extend(p.values.iter().map(s));
    }
    let _ = writeln!(
        out,
        "/// Index of each parameter's first entry in [`VALUES`].\npub mod id {{\n{ids}}}"
    );
    let _ = writeln!(
        out,
        "/// Number of entries.\npub const COUNT: usize = {};",
        flat.len()
    );
    let quoted: Vec<String> = names.iter().map(|n| format!("{n:?}")).collect();
    let _ = writeln!(
        out,
        "/// Each entry's name as the file writes it.\npub const NAMES: [&str; COUNT] = [{}];",
        quoted.join(", ")
    );
    let _ = writeln!(
        out,
        "/// Every entry, in file order.\npub const VALUES: [S; COUNT] = [{}];",
        flat.join(", ")
    );
    let dest =
        Path::new(&std::env::var("OUT_DIR").expect("cargo sets OUT_DIR")).join("eval_params.rs");
    std::fs::write(&dest, out).unwrap_or_else(|e| panic!("{}: {e}", dest.display()));
}
