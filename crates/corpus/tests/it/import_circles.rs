//! The laboratory (`chess-lab`) has no import circle: no module reaches itself through the
//! `crate::` paths its files name (issue 66). A circle makes a change in one file a change
//! in all of them, and the folders (calibrate/, data/, fit/) mean something only if each
//! one's files depend one way.
//!
//! A file's module path comes from where it lies (`src/calibrate/probe.rs` is
//! `calibrate::probe`; `mod.rs` and `lib.rs` are their folder's module); an arrow from file A
//! to module M is any `crate::M` path in A (in a `use` or inline, `{...}` groups too), unit
//! tests and comments left out. A module's own folder file (`mod.rs`, `lib.rs`) is left out as a target:
//! a parent declares its children, and a child naming its parent's items would show up as
//! the parent's arrow to it.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../chess-lab/src")
}

/// `calibrate::probe` for `src/calibrate/probe.rs`, `calibrate` for `src/calibrate/mod.rs`,
/// `` for `src/lib.rs`.
fn module_of(file: &Path) -> String {
    let rel = file.strip_prefix(src()).unwrap().with_extension("");
    let mut parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if matches!(parts.last().map(String::as_str), Some("mod" | "lib")) {
        parts.pop();
    }
    parts.join("::")
}

/// Every `crate::a::b...` path in `code`, `{...}` groups expanded one level.
fn crate_paths(code: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = code;
    while let Some(i) = rest.find("crate::") {
        rest = &rest[i + "crate::".len()..];
        let head: String = rest
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':')
            .collect();
        let head = head.trim_end_matches(':').to_string();
        let after = &rest[head.len()..];
        if let Some(group) = after
            .strip_prefix("::{")
            .or_else(|| after.strip_prefix("{"))
        {
            let inner = &group[..group.find('}').unwrap_or(group.len())];
            for item in inner.split(',') {
                let item = item.trim();
                if !item.is_empty() {
                    out.push(format!("{head}::{item}"));
                }
            }
        }
        out.push(head);
    }
    out
}

/// The module a path names: its longest prefix that is one of `modules`.
fn target<'m>(path: &str, modules: &'m BTreeSet<String>) -> Option<&'m String> {
    let parts: Vec<&str> = path.split("::").collect();
    (1..=parts.len())
        .rev()
        .map(|n| parts[..n].join("::"))
        .find_map(|p| modules.get(&p))
}

#[test]
fn the_laboratory_has_no_import_circle() {
    let files = crate::common::files_under(&src(), "rs");
    let module_files: BTreeMap<String, PathBuf> =
        files.iter().map(|f| (module_of(f), f.clone())).collect();
    let folders: BTreeSet<String> = files
        .iter()
        .filter(|f| {
            f.file_name()
                .is_some_and(|n| n == "mod.rs" || n == "lib.rs")
        })
        .map(|f| module_of(f))
        .collect();
    let modules: BTreeSet<String> = module_files.keys().cloned().collect();
    let mut arrows: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (m, f) in &module_files {
        let text = fs::read_to_string(f).unwrap();
        let code = text.split("\n#[cfg(test)]").next().unwrap_or(&text);
        // Comments name modules without importing them (doc links).
        let code: String = code
            .lines()
            .filter(|l| !l.trim_start().starts_with("//"))
            .collect::<Vec<_>>()
            .join("\n");
        for p in crate_paths(&code) {
            if let Some(t) = target(&p, &modules)
                && t != m
                && !folders.contains(t)
            {
                arrows.entry(m.clone()).or_default().insert(t.clone());
            }
        }
    }
    // A depth-first search for a path back to where it started.
    fn reaches(
        from: &str,
        to: &str,
        arrows: &BTreeMap<String, BTreeSet<String>>,
        seen: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        for next in arrows.get(from).into_iter().flatten() {
            if next == to {
                return Some(vec![next.clone()]);
            }
            if seen.insert(next.clone())
                && let Some(mut path) = reaches(next, to, arrows, seen)
            {
                path.insert(0, next.clone());
                return Some(path);
            }
        }
        None
    }
    let circles: Vec<String> = arrows
        .keys()
        .filter_map(|m| {
            reaches(m, m, &arrows, &mut BTreeSet::new())
                .map(|p| format!("{m} -> {}", p.join(" -> ")))
        })
        .collect();
    assert!(
        circles.is_empty(),
        "import circles:\n{}",
        circles.join("\n")
    );
    // The scan sees the laboratory's real arrows (a parser that found none would pass).
    let probe = arrows.get("calibrate::surprise").expect("surprise imports");
    assert!(probe.contains("calibrate::probe"), "{probe:?}");
    assert!(
        arrows
            .get("fit::nettrain")
            .is_some_and(|a| a.contains("data::corpus"))
    );
}

/// The path reader expands groups and stops at the path's end.
#[test]
fn crate_paths_are_read_with_their_groups() {
    let code =
        "use crate::calibrate::probe::{CellCount, totals};\nlet x = crate::data::pool::read(p);";
    let paths = crate_paths(code);
    assert!(
        paths.contains(&"calibrate::probe::CellCount".to_string()),
        "{paths:?}"
    );
    assert!(paths.contains(&"data::pool::read".to_string()), "{paths:?}");
}
