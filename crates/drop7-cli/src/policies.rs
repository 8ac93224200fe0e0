//! Policy names → factories. Built-in drop7 policies, plus the n-tuple policies
//! (`ntuple-1ply`, `ntuple-dNsK`) over a model file: `ntuple-d3s7@path/model.bin`, or the
//! `--model` / `DROP7_MODEL` file. Models are loaded once per path and shared.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use drop7::policy::{BUILTIN_POLICIES, PolicyFactory, builtin};
use ntuple::tables::Tables;

static MODELS: Mutex<Option<HashMap<PathBuf, Arc<Tables>>>> = Mutex::new(None);
static DEFAULT_MODEL: Mutex<Option<PathBuf>> = Mutex::new(None);

/// Set the model file used by `ntuple-*` names without `@FILE`.
pub fn set_default_model(path: Option<PathBuf>) {
    *DEFAULT_MODEL.lock().expect("model lock") =
        path.or_else(|| std::env::var_os("DROP7_MODEL").map(PathBuf::from));
}

/// Load (once) and share a model file.
pub fn model(path: &Path) -> Result<Arc<Tables>, String> {
    let mut guard = MODELS.lock().expect("model lock");
    let cache = guard.get_or_insert_with(HashMap::new);
    if let Some(t) = cache.get(path) {
        return Ok(t.clone());
    }
    eprintln!("loading model {} ...", path.display());
    let (t, info) = ntuple::model::load(path, false)?;
    eprintln!(
        "model {}: layout {}, sha256 {}{}",
        path.display(),
        t.layout,
        info.sha256,
        match info.verified {
            Some(true) => " (verified)",
            _ => " (no .sha256 sidecar to check against)",
        }
    );
    let t = Arc::new(t);
    cache.insert(path.to_owned(), t.clone());
    Ok(t)
}

pub fn factory(name: &str) -> Result<PolicyFactory, String> {
    if let Some(f) = builtin(name) {
        return Ok(f);
    }
    if name.starts_with("ntuple-") {
        let (policy, path) = match name.split_once('@') {
            Some((p, f)) => (p, PathBuf::from(f)),
            None => {
                let p = DEFAULT_MODEL.lock().expect("model lock").clone().ok_or_else(|| {
                    format!("policy `{name}` needs a model: write `{name}@FILE`, or pass --model FILE (or set DROP7_MODEL)")
                })?;
                (name, p)
            }
        };
        let tables = model(&path)?;
        return ntuple::play::factory(policy, tables)
            .ok_or_else(|| format!("unknown n-tuple policy `{policy}`: expected ntuple-1ply or ntuple-dNsK (e.g. ntuple-d3s7)"));
    }
    Err(format!(
        "unknown policy `{name}`: expected one of {BUILTIN_POLICIES}, ntuple-1ply, ntuple-dNsK (with a model)"
    ))
}
