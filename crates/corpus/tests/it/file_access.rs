//! Every file a binary reads or writes by a user-given path goes through the `fileio` crate
//! (regular files only, bounded reads, atomic replacing writes; issue 68). This test finds the
//! file access that goes around it: each raw `File::open`, `fs::read`, `fs::read_to_string`,
//! `fs::write`, `File::create` and `OpenOptions::new` in the sources (a file's unit tests
//! excluded) must be listed, with its count and the reason it may stay, in
//! `tests/data/raw-file-access.txt`. A new raw access fails the test until it goes through
//! `fileio` or is listed with a reason; one that went through `fileio` fails it until its
//! line is lowered, so the list only shrinks.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

const PATTERNS: [&str; 6] = [
    "File::open(",
    "fs::read(",
    "fs::read_to_string(",
    "fs::write(",
    "File::create(",
    "OpenOptions::new(",
];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Raw accesses in a source text, its unit tests (from `#[cfg(test)]` on) left out.
fn raw_accesses(text: &str) -> usize {
    let code = text.split("\n#[cfg(test)]").next().unwrap_or(text);
    code.lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .map(|l| PATTERNS.iter().filter(|p| l.contains(*p)).count())
        .sum()
}

/// Every crate's `src/` and `build.rs`, but `fileio`'s own.
fn counted() -> BTreeMap<String, usize> {
    let root = root();
    let mut files = Vec::new();
    let mut crates: Vec<_> = fs::read_dir(root.join("crates"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    crates.sort();
    for c in crates {
        if c.file_name().is_some_and(|n| n == "fileio") {
            continue;
        }
        files.extend(crate::common::files_under(&c.join("src"), "rs"));
        if c.join("build.rs").exists() {
            files.push(c.join("build.rs"));
        }
    }
    files
        .into_iter()
        .filter_map(|p| {
            let n = raw_accesses(&fs::read_to_string(&p).unwrap());
            let rel = p.strip_prefix(&root).unwrap().display().to_string();
            (n > 0).then_some((rel, n))
        })
        .collect()
}

/// `path count reason` lines of the allowance list.
fn allowed() -> BTreeMap<String, usize> {
    let list = root().join("crates/corpus/tests/data/raw-file-access.txt");
    fs::read_to_string(&list)
        .unwrap()
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|l| {
            let mut w = l.split_whitespace();
            let path = w.next().unwrap().to_string();
            let n: usize = w.next().and_then(|n| n.parse().ok()).expect(l);
            assert!(w.next().is_some(), "no reason given: {l}");
            (path, n)
        })
        .collect()
}

#[test]
fn file_access_goes_through_fileio() {
    let (found, allowed) = (counted(), allowed());
    let mut wrong = Vec::new();
    for (path, &n) in &found {
        match allowed.get(path) {
            None => wrong.push(format!(
                "{path}: {n} raw file access(es); use fileio (or list it with a reason)"
            )),
            Some(&a) if n > a => wrong.push(format!(
                "{path}: {n} raw file accesses, {a} listed; the new one must use fileio"
            )),
            Some(&a) if n < a => wrong.push(format!(
                "{path}: {n} raw file accesses, {a} listed; lower the list to {n}"
            )),
            _ => {}
        }
    }
    for path in allowed.keys().filter(|p| !found.contains_key(*p)) {
        wrong.push(format!(
            "{path}: listed, but no raw access is left; remove its line"
        ));
    }
    assert!(wrong.is_empty(), "\n{}", wrong.join("\n"));
}

/// The scan sees what it must: each pattern, once a line each, and not in comments or unit
/// tests.
#[test]
fn the_scan_counts_raw_calls_outside_tests_and_comments() {
    let text = "fn a() { std::fs::read(p); File::open(q); }\n// fs::write(x)\n\
                fn b() { OpenOptions::new().open(p); fs::read_to_string(p); }\n\
                #[cfg(test)]\nmod tests { fn c() { fs::write(p, b); } }\n";
    assert_eq!(raw_accesses(text), 4);
    assert_eq!(raw_accesses("fileio::read(p, 10)"), 0);
}
