//! Every relative link in the README, the changelog and `docs/` names a file that exists, and
//! every `#anchor` into a Markdown file names one of its headings. The README is the map to
//! each claim's command and output: a link that moved with a file (a write-up renamed, a
//! heading reworded) leaves a reader at a dead end, and nothing else would notice.
//!
//! A link starting with `/` is read from the repository root, as GitHub does, except in
//! `docs/design/seeds/`: those copies keep their original site's links (`/learn/...`), which
//! point outside the repository. URLs are skipped. Inline links only (the documentation uses
//! no reference-style ones).

use std::collections::HashSet;
use std::fs;
use std::path::{Component, Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// GitHub's anchor for a heading: lower case; letters, digits, `_`, `-` and spaces kept (the
/// spaces as `-`), everything else dropped; a repeated anchor gets `-1`, `-2`, ...
fn anchors(markdown: &str) -> HashSet<String> {
    let mut seen = HashSet::new();
    for line in prose_lines(markdown) {
        let Some(text) = line.strip_prefix('#') else {
            continue;
        };
        let text = text.trim_start_matches('#');
        if !text.starts_with(' ') {
            continue;
        }
        // an optional closing sequence of `#`s is not part of the heading
        let slug: String = text
            .trim()
            .trim_end_matches('#')
            .trim_end()
            .to_lowercase()
            .chars()
            .filter(|&c| c.is_alphanumeric() || c == '_' || c == '-' || c == ' ')
            .map(|c| if c == ' ' { '-' } else { c })
            .collect();
        let mut candidate = slug.clone();
        let mut n = 1;
        while !seen.insert(candidate.clone()) {
            candidate = format!("{slug}-{n}");
            n += 1;
        }
    }
    seen
}

/// The lines outside code blocks (fenced by three or more backquotes or tildes).
fn prose_lines(markdown: &str) -> impl Iterator<Item = &str> {
    let mut in_code = false;
    markdown.lines().filter(move |line| {
        let t = line.trim_start();
        if t.starts_with("```") || t.starts_with("~~~") {
            in_code = !in_code;
            return false;
        }
        !in_code
    })
}

/// The targets of inline links `[text](target)` outside code blocks and code spans.
fn link_targets(markdown: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in prose_lines(markdown) {
        // drop code spans: a `](x)` inside backquotes is text, not a link
        let mut plain = String::new();
        for (i, part) in line.split('`').enumerate() {
            if i % 2 == 0 {
                plain.push_str(part);
            }
        }
        let mut rest = plain.as_str();
        while let Some(at) = rest.find("](") {
            let after = &rest[at + 2..];
            let end = after.find([')', ' ']).unwrap_or(after.len());
            out.push(after[..end].to_string());
            rest = &after[end..];
        }
    }
    out
}

/// `base/relative` with `.` and `..` folded (no file system access, so a missing file is
/// reported as missing rather than failing to canonicalise).
fn join(base: &Path, relative: &str) -> PathBuf {
    let mut out = PathBuf::new();
    for c in base.join(relative).components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

#[test]
fn documentation_links_resolve() {
    let root = root();
    let mut files = vec![root.join("README.md"), root.join("CHANGELOG.md")];
    files.extend(crate::common::files_under(&root.join("docs"), "md"));
    let mut broken = Vec::new();
    let mut checked = 0;
    for file in &files {
        let text = fs::read_to_string(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        let dir = file.parent().unwrap();
        for target in link_targets(&text) {
            let seed_copy = file.starts_with(root.join("docs/design/seeds"));
            if target.is_empty()
                || (target.starts_with('/') && seed_copy)
                || target.starts_with('<')
                || target.contains("://")
                || target.starts_with("mailto:")
            {
                continue;
            }
            checked += 1;
            let (path, anchor) = match target.split_once('#') {
                Some((p, a)) => (p, Some(a)),
                None => (target.as_str(), None),
            };
            let dest = if path.is_empty() {
                file.clone()
            } else if let Some(from_root) = path.strip_prefix('/') {
                join(&root, from_root)
            } else {
                join(dir, path)
            };
            let shown = file.strip_prefix(&root).unwrap_or(file).display();
            if !dest.exists() {
                broken.push(format!("{shown}: {target} (no such file)"));
                continue;
            }
            if let Some(anchor) = anchor
                && dest.extension().is_some_and(|x| x == "md")
                && !anchors(&fs::read_to_string(&dest).unwrap()).contains(anchor)
            {
                broken.push(format!("{shown}: {target} (no such heading)"));
            }
        }
    }
    assert!(
        checked > 300,
        "only {checked} links found: is the parser broken?"
    );
    assert!(
        broken.is_empty(),
        "{} broken links:\n{}",
        broken.len(),
        broken.join("\n")
    );
}

#[test]
fn anchors_follow_github() {
    let a = anchors(
        "# Speed: 7.81× the reference (issue 35)\n## Speed: 7.81× the reference (issue 35)\n\
         ```\n# not a heading\n```\n~~~\n# nor this\n~~~\n#not-a-heading\n\
         ### `arbiter spsa` — SPSA\n## Closed ##\n",
    );
    let want: HashSet<String> = [
        "speed-781-the-reference-issue-35",
        "speed-781-the-reference-issue-35-1",
        "arbiter-spsa--spsa",
        "closed",
    ]
    .into_iter()
    .map(String::from)
    .collect();
    assert_eq!(a, want);
}

#[test]
fn links_in_code_are_not_links() {
    let t = link_targets("see [a](x.md#h) and `[b](y.md)`\n```\n[c](z.md)\n```\n[d](w.md \"t\")");
    assert_eq!(t, ["x.md#h", "w.md"]);
}
