//! The reference vectors (`data/drop7/vectors/`), read the one way every module reads them.

use std::path::PathBuf;

use serde_json::Value;

/// The directory of the reference vectors.
pub fn vectors() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../data/drop7/vectors")
}

/// The records of the JSON-lines file `name` of the vectors (blank lines skipped).
pub fn read_lines(name: &str) -> Vec<Value> {
    let path = vectors().join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}
