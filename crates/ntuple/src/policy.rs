//! Every policy by name, the n-tuple ones included, parsed once at the command line:
//! [`PolicySpec`] (`FromStr`/`Display`) and the [`Models`] cache that loads each model file
//! once and names the arm by the file's name and SHA-256 (never by a machine's path).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use drop7::policy::{BuiltinPolicy, PolicyFactory, parse_search, top_suffix};

use crate::Error;
use crate::model::{self, LoadInfo};
use crate::tables::Tables;

/// A policy as the command line names it: a built-in one, or an n-tuple policy over a model
/// (`ntuple-1ply`, `ntuple-dNsK`, optionally `@FILE`; without it the default model is used).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum PolicySpec {
    Builtin(BuiltinPolicy),
    NTuple {
        /// `None` = one-ply (`ntuple-1ply`); else the fair search's (depth, samples).
        search: Option<(u32, u32)>,
        /// `-topJ`: only the J best root columns at the last depth (with a search only).
        top: Option<u32>,
        model: Option<PathBuf>,
    },
}

/// Every accepted policy form, for messages and `--help`.
pub const POLICIES: &str = "random, trace-random, center, leftmost, fair-dNsK (e.g. fair-d3s7), ntuple-1ply, ntuple-dNsK (e.g. ntuple-d3s7), the searches optionally -topJ (e.g. ntuple-d4s7-top3), the ntuple ones optionally @MODEL-FILE";

impl std::str::FromStr for PolicySpec {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self, Error> {
        let Some(rest) = s.strip_prefix("ntuple-") else {
            return s.parse::<BuiltinPolicy>().map(Self::Builtin).map_err(|e| {
                Error::Policy(match e {
                    drop7::policy::PolicyError::Unknown(_) => {
                        format!("unknown policy `{s}`: expected one of {POLICIES}")
                    }
                    e => e.to_string(),
                })
            });
        };
        let (kind, model) = match rest.split_once('@') {
            Some((k, f)) if !f.is_empty() => (k, Some(PathBuf::from(f))),
            Some(_) => return Err(Error::Policy(format!("policy `{s}`: nothing after `@`"))),
            None => (rest, None),
        };
        let (search, top) = match kind {
            "1ply" => (None, None),
            dk => {
                let (d, k, top) = parse_search(dk).ok_or_else(|| {
                    Error::Policy(format!(
                        "bad n-tuple policy `{s}`: expected ntuple-1ply or ntuple-dNsK with depth 1-8 and samples 1-64 (e.g. ntuple-d3s7), optionally -topJ with J 1-6 from depth 2 (e.g. ntuple-d4s7-top3)"
                    ))
                })?;
                (Some((d, k)), top)
            }
        };
        Ok(Self::NTuple { search, top, model })
    }
}

impl std::fmt::Display for PolicySpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Builtin(b) => b.fmt(f),
            Self::NTuple { search, top, model } => {
                f.write_str("ntuple-")?;
                match search {
                    None => f.write_str("1ply")?,
                    Some((d, k)) => write!(f, "d{d}s{k}{}", top_suffix(*top))?,
                }
                if let Some(m) = model {
                    write!(f, "@{}", m.display())?;
                }
                Ok(())
            }
        }
    }
}

impl PolicySpec {
    /// The policy kind without its model file (`ntuple-d3s7`, `fair-d3s7`).
    pub fn kind(&self) -> String {
        match self {
            Self::NTuple { search, top, .. } => Self::NTuple {
                search: *search,
                top: *top,
                model: None,
            }
            .to_string(),
            b => b.to_string(),
        }
    }

    /// Whether the policy needs a model file.
    pub fn needs_model(&self) -> bool {
        matches!(self, Self::NTuple { .. })
    }

    /// Fresh instances (one per worker thread). An n-tuple policy without `@FILE` takes
    /// `models`' default file. The arm is named by [`LoadedModel::label`].
    pub fn factory(&self, models: &mut Models) -> Result<PolicyFactory, Error> {
        match self {
            Self::Builtin(b) => b.factory().map_err(|e| Error::Policy(e.to_string())),
            Self::NTuple { search, top, model } => {
                let path = match model {
                    Some(p) => p.clone(),
                    None => models.default.clone().ok_or_else(|| {
                        Error::Policy(format!(
                            "policy `{self}` needs a model: write `{self}@FILE`, or pass --model FILE (or set DROP7_MODEL)"
                        ))
                    })?,
                };
                let m = models.get(&path)?;
                let label = format!("{}@{}", self.kind(), m.label());
                Ok(crate::play::factory(*search, *top, label, m.tables.clone()))
            }
        }
    }

    /// The unrestricted search a `drop7 topk` study restricts: depth, samples and the
    /// n-tuple tables (`None`: the fair leaf). A policy that is not a search, or one already
    /// restricted by `-topJ`, is refused (the study sets the restriction itself).
    pub fn full_search(&self, models: &mut Models) -> Result<FullSearch, Error> {
        match self {
            Self::Builtin(BuiltinPolicy::Fair {
                depth,
                samples,
                top: None,
            }) => Ok((*depth, *samples, None)),
            Self::NTuple {
                search: Some((d, k)),
                top: None,
                model,
            } => {
                let path = model
                    .clone()
                    .or_else(|| models.default.clone())
                    .ok_or_else(|| {
                        Error::Policy(format!("{self}: needs a model (@FILE or --model)"))
                    })?;
                Ok((*d, *k, Some(Arc::clone(&models.get(&path)?.tables))))
            }
            p => Err(Error::Policy(format!(
                "`{p}`: expected a search without -topJ, fair-dNsK or ntuple-dNsK"
            ))),
        }
    }

    /// Rough single-thread milliseconds per decision on this project's 2-core machine, for a
    /// job array's time limit (`screen --emit-slurm`, which doubles it): the fair search's
    /// measured times (README speed tables) scaled by (K/7)^depth, an n-tuple leaf at about
    /// half the fair leaf's cost, and `-topJ` at its measured share of the full search's work
    /// (docs/drop7/topk: J = 2, 3, 4 cost 0.39, 0.53, 0.66 of it, about (J + 1)/7.5).
    pub fn ms_per_decision(&self) -> f64 {
        let search = |d: u32| match d {
            0 | 1 => 0.1,
            2 => 1.0,
            3 => 25.0,
            4 => 550.0,
            _ => 15_000.0,
        };
        let share = |top: &Option<u32>| top.map_or(1.0, |j| ((j as f64 + 1.0) / 7.5).min(1.0));
        let scaled = |d: u32, k: u32| search(d) * (k as f64 / 7.0).powi(d as i32);
        match self {
            Self::Builtin(BuiltinPolicy::Fair {
                depth,
                samples,
                top,
            }) => scaled(*depth, *samples) * share(top),
            Self::NTuple {
                search: Some((d, k)),
                top,
                ..
            } => 0.5 * scaled(*d, *k) * share(top),
            _ => 0.05,
        }
    }
}

/// The (candidate, reference) arm indices of a screen contrast written
/// `CANDIDATE:REFERENCE` (`drop7 screen --contrast`), each side a policy as `--arms` names
/// it. The text is split at its first `:`; the candidate is parsed and looked up in `arms`
/// before the reference, so the first fault in the text is the one reported.
pub fn contrast_indices(text: &str, arms: &[PolicySpec]) -> Result<(usize, usize), Error> {
    let (candidate, reference) = text.split_once(':').ok_or_else(|| {
        Error::Policy(format!(
            "bad --contrast `{text}`: expected CANDIDATE:REFERENCE"
        ))
    })?;
    let find = |name: &str| -> Result<usize, Error> {
        let spec: PolicySpec = name.parse()?;
        arms.iter().position(|p| *p == spec).ok_or_else(|| {
            Error::Policy(format!(
                "--contrast names `{name}`, which is not one of --arms"
            ))
        })
    };
    Ok((find(candidate)?, find(reference)?))
}

/// What [`PolicySpec::full_search`] returns: depth, samples, and the n-tuple tables (or
/// `None` for the fair leaf).
pub type FullSearch = (u32, u32, Option<Arc<Tables>>);

/// A loaded model and how results name it.
#[derive(Clone)]
pub struct LoadedModel {
    pub tables: Arc<Tables>,
    /// The file's name without its directory.
    pub file_name: String,
    pub info: LoadInfo,
}

impl LoadedModel {
    /// `FILE#SHA` with the first 12 hex digits of the SHA-256: unambiguous across runs that
    /// reuse a file name (every run writes `best-weights.bin`), free of local paths.
    pub fn label(&self) -> String {
        format!("{}#{}", self.file_name, &self.info.sha256[..12])
    }
}

/// Called after a model file is loaded.
type OnLoad = Box<dyn Fn(&Path, &LoadedModel)>;

/// Model files loaded once each and shared by every policy that names them. Passed
/// explicitly (no process-wide state), so a test or a server can hold several.
#[derive(Default)]
pub struct Models {
    /// The file for n-tuple policies written without `@FILE`.
    pub default: Option<PathBuf>,
    loaded: HashMap<PathBuf, LoadedModel>,
    on_load: Option<OnLoad>,
}

impl Models {
    pub fn new(default: Option<PathBuf>) -> Self {
        Self {
            default,
            ..Self::default()
        }
    }

    /// Call `f` after each file is loaded (to tell the user its layout and hash).
    pub fn on_load(mut self, f: impl Fn(&Path, &LoadedModel) + 'static) -> Self {
        self.on_load = Some(Box::new(f));
        self
    }

    /// The model in `path`, loaded (frozen, without accumulators) on first use.
    pub fn get(&mut self, path: &Path) -> Result<&LoadedModel, Error> {
        if !self.loaded.contains_key(path) {
            let (tables, info) = model::load(path, false)?;
            let m = LoadedModel {
                tables: Arc::new(tables),
                file_name: path
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default(),
                info,
            };
            if let Some(f) = &self.on_load {
                f(path, &m);
            }
            self.loaded.insert(path.to_owned(), m);
        }
        Ok(&self.loaded[path])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::Layout;
    use crate::tables::OPTIMISTIC_TOTAL;

    fn spec(s: &str) -> PolicySpec {
        s.parse().unwrap()
    }

    #[test]
    fn names_round_trip_and_refuse() {
        for s in [
            "random",
            "trace-random",
            "center",
            "leftmost",
            "fair-d3s7",
            "ntuple-1ply",
            "ntuple-d4s7",
            "ntuple-d3s7@runs/a b/best-weights.bin",
            "ntuple-d4s7-top3@m.d7pk",
            "fair-d4s7-top2",
        ] {
            assert_eq!(spec(s).to_string(), s);
        }
        assert_eq!(spec("ntuple-d3s7@x.bin").kind(), "ntuple-d3s7");
        assert_eq!(spec("ntuple-d4s7-top3@x.bin").kind(), "ntuple-d4s7-top3");
        assert!(spec("ntuple-1ply").needs_model() && !spec("fair-d2s7").needs_model());
        for (bad, want) in [
            ("greedy", "unknown policy `greedy`"),
            ("ntuple-d9s7", "ntuple-dNsK"),
            ("ntuple-d3s7@", "nothing after"),
            ("fair-d3", "dNsK"),
            ("ntuple-1ply-top2", "ntuple-1ply or"),
            ("ntuple-d4s7-top7", "-topJ with J 1-6"),
            ("ntuple-d1s7-top1", "from depth 2"),
        ] {
            let e = bad.parse::<PolicySpec>().unwrap_err().to_string();
            assert!(e.contains(want), "{bad}: {e}");
        }
        let mut models = Models::new(None);
        let e = spec("ntuple-d3s7")
            .factory(&mut models)
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("needs a model"), "{e}");
        let e = spec("trace-random")
            .factory(&mut models)
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("only for `drop7 trace`"), "{e}");
    }

    #[test]
    fn decision_time_estimates_follow_depth_samples_and_restriction() {
        let ms = |s: &str| spec(s).ms_per_decision();
        assert!(ms("fair-d4s7") > 10.0 * ms("fair-d3s7"));
        assert!(ms("fair-d3s3") < ms("fair-d3s7"));
        // the n-tuple leaf is cheaper than the fair leaf; -top3 about half the full search
        assert!(ms("ntuple-d4s7") < ms("fair-d4s7"));
        let r = ms("ntuple-d4s7-top3") / ms("ntuple-d4s7");
        assert!((0.45..0.6).contains(&r), "{r}");
        assert!(ms("fair-d4s7-top6") <= ms("fair-d4s7"));
        assert!(ms("center") < ms("fair-d1s7"));
    }

    #[test]
    fn a_topk_study_takes_only_an_unrestricted_search() {
        let mut models = Models::new(None);
        let (d, k, t) = spec("fair-d4s5").full_search(&mut models).unwrap();
        assert_eq!((d, k), (4, 5));
        assert!(t.is_none());
        for (bad, want) in [
            ("center", "expected a search"),
            ("ntuple-1ply", "expected a search"),
            ("fair-d4s7-top3", "without -topJ"),
            ("ntuple-d3s7", "needs a model"),
        ] {
            let e = spec(bad)
                .full_search(&mut models)
                .err()
                .unwrap()
                .to_string();
            assert!(e.contains(want), "{bad}: {e}");
        }
    }

    /// A contrast names two arms by index, candidate first; the first fault in its text is
    /// the one reported, with the message `drop7 screen` prints.
    #[test]
    fn contrasts_name_two_arms() {
        let arms = [spec("center"), spec("leftmost"), spec("fair-d2s7")];
        assert_eq!(contrast_indices("fair-d2s7:center", &arms).unwrap(), (2, 0));
        assert_eq!(
            contrast_indices("leftmost:fair-d2s7", &arms).unwrap(),
            (1, 2)
        );
        // the same arm twice is the screen's to refuse
        assert_eq!(contrast_indices("center:center", &arms).unwrap(), (0, 0));
        let refusal = |text: &str| contrast_indices(text, &arms).unwrap_err().to_string();
        assert_eq!(
            refusal("center"),
            "bad --contrast `center`: expected CANDIDATE:REFERENCE"
        );
        assert_eq!(
            refusal("random:center"),
            "--contrast names `random`, which is not one of --arms"
        );
        // the candidate's fault comes first, though the reference does not parse either
        assert_eq!(
            refusal("random:greedy"),
            "--contrast names `random`, which is not one of --arms"
        );
        assert!(refusal("center:greedy").starts_with("unknown policy `greedy`"));
        // split at the first colon
        assert!(refusal("center:leftmost:x").starts_with("unknown policy `leftmost:x`"));
    }

    /// A model is loaded once for every policy that names it; arms are named by file name and
    /// hash, not by the path they were loaded from.
    #[test]
    fn models_load_once_and_name_arms_by_file_and_hash() {
        let _heavy = crate::heavy_test();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("m.bin");
        let t = Tables::new(
            Layout::parse("win23,phase=none").unwrap(),
            OPTIMISTIC_TOTAL,
            false,
        )
        .unwrap();
        let sha = crate::model::save(&t, &path, false).unwrap();
        drop(t);
        let loads = std::rc::Rc::new(std::cell::Cell::new(0));
        let seen = loads.clone();
        let mut models =
            Models::new(Some(path.clone())).on_load(move |_, _| seen.set(seen.get() + 1));
        let a = spec("ntuple-d1s1").factory(&mut models).unwrap();
        let b = spec(&format!("ntuple-1ply@{}", path.display()))
            .factory(&mut models)
            .unwrap();
        assert_eq!(loads.get(), 1);
        assert_eq!(a().name(), format!("ntuple-d1s1@m.bin#{}", &sha[..12]));
        assert_eq!(b().name(), format!("ntuple-1ply@m.bin#{}", &sha[..12]));
        assert!(!a().name().contains(dir.path().to_str().unwrap()));
    }
}
