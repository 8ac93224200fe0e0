//! The n-tuple crate's errors: each names the file, layout or setting at fault, so the
//! command line can print it as one line.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("bad layout `{spec}`: {reason}")]
    Layout { spec: String, reason: String },
    /// Not enough memory for a table set (the message says how much is needed and free).
    #[error("{0}")]
    Memory(String),
    /// A model file that is not what it should be: truncated, corrupt, hash mismatch.
    #[error("{}: {message}", path.display())]
    Model { path: PathBuf, message: String },
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    /// Two models that must share a layout (to be averaged) do not.
    #[error("the layouts differ: `{0}` and `{1}`")]
    LayoutsDiffer(String, String),
    #[error("layout `{0}` already has fill buckets")]
    AlreadyFilled(String),
    /// A factor for never-updated entries ([`crate::model::untouched_scale`]) outside 0 to 1.
    #[error("`{0}` is not a number from 0 to 1 (0 = zero, 1 = unchanged)")]
    UntouchedScale(String),
    /// A policy name or model reference that does not parse or resolve.
    #[error("{0}")]
    Policy(String),
    /// A training run that cannot start or resume as asked.
    #[error("{0}")]
    Train(String),
    #[error(transparent)]
    Lease(#[from] drop7::lease::LeaseError),
    #[error(transparent)]
    Run(#[from] drop7::runner::RunError),
    #[error(transparent)]
    Evidence(#[from] evidence::EvidenceError),
}

impl Error {
    pub(crate) fn io(path: &std::path::Path) -> impl FnOnce(std::io::Error) -> Error + '_ {
        move |source| Error::Io {
            path: path.to_owned(),
            source,
        }
    }
}
