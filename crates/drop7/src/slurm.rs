//! Slurm job arrays for sharded screens (`drop7 screen --emit-slurm N`): one task per shard,
//! each resuming from its own per-game files, merged by `drop7 merge screen` (docs/drop7/slurm.md).
//! Every value that reaches the script is quoted for the shell or refused, so no path or name
//! can add a command.

use crate::seeds::SeedBlock;
use std::path::{Path, PathBuf};

/// Why a job script cannot be written.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum SlurmError {
    #[error(
        "--emit-slurm: {what} {value:?} holds a control character, which a job script cannot carry"
    )]
    Control { what: String, value: String },
    #[error(
        "--emit-slurm: {what} `{value}` has characters an #SBATCH line cannot carry safely (use letters, digits and / . _ - + , @ = ~)"
    )]
    Sbatch { what: String, value: String },
}

/// A Slurm time limit: MM, MM:SS, HH:MM:SS, D-HH, D-HH:MM or D-HH:MM:SS (digits only;
/// minutes and seconds after the first field below 60, hours after days below 24).
pub fn slurm_time(s: &str) -> Result<String, String> {
    let bad = || {
        format!(
            "{s:?} is not a Slurm time limit: use HH:MM:SS (or MM, MM:SS, D-HH, D-HH:MM, D-HH:MM:SS)"
        )
    };
    let (days, rest) = match s.split_once('-') {
        Some((d, r)) => (Some(d), r),
        None => (None, s),
    };
    let parts: Vec<&str> = rest.split(':').collect();
    let digits = |p: &str| !p.is_empty() && p.len() <= 6 && p.bytes().all(|b| b.is_ascii_digit());
    if !(days.is_none_or(digits) && parts.len() <= 3 && parts.iter().all(|p| digits(p))) {
        return Err(bad());
    }
    // `99:99:99` is refused rather than handed to sbatch.
    let n: Vec<u64> = parts
        .iter()
        .map(|p| p.parse().unwrap_or(u64::MAX))
        .collect();
    let in_range = match (days.is_some(), n.as_slice()) {
        (false, [_]) => true,
        (false, [_, s]) => *s < 60,
        (false, [_, m, s]) => *m < 60 && *s < 60,
        (true, [h]) => *h < 24,
        (true, [h, m]) => *h < 24 && *m < 60,
        (true, [h, m, s]) => *h < 24 && *m < 60 && *s < 60,
        _ => false,
    };
    if in_range {
        Ok(s.to_owned())
    } else {
        Err(bad())
    }
}

/// `s` as one shell word: single-quoted, a `'` inside written `'\''`. Control characters
/// (a line break would end the command) are refused.
pub fn shell_word(what: &str, s: &str) -> Result<String, SlurmError> {
    if s.chars().any(char::is_control) {
        return Err(SlurmError::Control {
            what: what.into(),
            value: s.into(),
        });
    }
    Ok(format!("'{}'", s.replace('\'', "'\\''")))
}

/// A path for an `#SBATCH` line, which Slurm splits itself: plain characters only.
pub fn sbatch_path(what: &str, p: &Path) -> Result<String, SlurmError> {
    let s = p.display().to_string();
    let plain = |c: char| c.is_ascii_alphanumeric() || "/._-+,@=~".contains(c);
    if !s.chars().all(plain) {
        return Err(SlurmError::Sbatch {
            what: what.into(),
            value: s,
        });
    }
    Ok(s)
}

/// A sharded screen as a Slurm job array.
#[derive(Debug, Clone)]
pub struct ScreenJob {
    /// The `drop7` executable the tasks run.
    pub exe: PathBuf,
    /// The arms' policy names, in order.
    pub arms: Vec<String>,
    pub seeds: SeedBlock,
    /// The screen directory and the seed ledger (made absolute in the script).
    pub out: PathBuf,
    pub ledger: PathBuf,
    pub model: Option<PathBuf>,
    pub shards: u32,
    pub cpus: u32,
    /// `--time`; `None`: estimated from `ms_per_decision`.
    pub time: Option<String>,
    /// The arms' summed single-thread milliseconds per decision (for the time estimate).
    pub ms_per_decision: f64,
}

impl ScreenJob {
    /// The time limit: as given, or the estimate (130 decisions a game, doubled, + 10 min).
    pub fn time_limit(&self) -> String {
        match &self.time {
            Some(t) => t.clone(),
            None => {
                let games = self.seeds.count().div_ceil(u64::from(self.shards)) as f64;
                let secs = (games * 130.0 * self.ms_per_decision / 1e3 / f64::from(self.cpus) * 2.0)
                    as u64
                    + 600;
                format!("{:02}:{:02}:{:02}", secs / 3600, secs / 60 % 60, secs % 60)
            }
        }
    }

    /// The job script, one task per shard.
    pub fn script(&self) -> Result<String, SlurmError> {
        let abs = |p: &Path| std::path::absolute(p).unwrap_or_else(|_| p.to_owned());
        let games = self.seeds.count().div_ceil(u64::from(self.shards)) as f64;
        let time = self.time_limit();
        let names = self.arms.join(",");
        let arms = shell_word("--arms", &names)?;
        let model = match &self.model {
            Some(m) => format!(
                " --model {}",
                shell_word("--model", &abs(m).display().to_string())?
            ),
            None => String::new(),
        };
        let out = abs(&self.out);
        let log_dir = sbatch_path("--out", &out)?;
        let out = shell_word("--out", &out.display().to_string())?;
        let exe = shell_word("the drop7 executable", &self.exe.display().to_string())?;
        let ledger = shell_word("--ledger", &abs(&self.ledger).display().to_string())?;
        let shards = shell_word("--out", &format!("{log_dir}/shards"))?;
        Ok(format!(
            "#!/bin/bash
# drop7 screen of {names} on {seeds}, as {n} shards ({games:.0} games per arm per shard at most).
# Submit, then merge when every shard is done:
#   jid=$(sbatch --parsable THIS_SCRIPT)
#   sbatch --dependency=afterok:$jid --wrap \"{exe} merge screen {log_dir}\"
# A shard that is killed resumes where it stopped when resubmitted (sbatch --array=K THIS_SCRIPT).
#SBATCH --job-name=drop7-screen
#SBATCH --array=0-{last}
#SBATCH --cpus-per-task={cpus}
#SBATCH --time={time}
#SBATCH --output={log_dir}/shards/slurm-%A_%a.log
set -euo pipefail
mkdir -p {shards}
exec {exe} screen --arms {arms} --seeds {seeds} --out {out} --ledger {ledger}{model} \\
  --threads \"${{SLURM_CPUS_PER_TASK:-{cpus}}}\" --shard slurm --quiet
",
            seeds = self.seeds,
            n = self.shards,
            last = self.shards - 1,
            cpus = self.cpus,
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_limits_in_every_slurm_form_and_nothing_else() {
        for ok in ["90", "90:30", "12:00:00", "2-12", "2-12:30", "2-12:30:15"] {
            assert_eq!(slurm_time(ok).as_deref(), Ok(ok), "{ok}");
        }
        for bad in [
            "",
            "99:99:99",
            "1:60",
            "2-24",
            "2-1:60",
            "a:00",
            "1:2:3:4",
            "-1",
            "1-",
            "12:00:00 ; rm",
        ] {
            assert!(slurm_time(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn shell_words_are_quoted_and_control_characters_refused() {
        assert_eq!(shell_word("x", "a b").unwrap(), "'a b'");
        assert_eq!(shell_word("x", "it's").unwrap(), "'it'\\''s'");
        assert_eq!(shell_word("x", "$(rm -rf /)").unwrap(), "'$(rm -rf /)'");
        assert!(matches!(
            shell_word("--out", "a\nb"),
            Err(SlurmError::Control { .. })
        ));
        assert!(sbatch_path("--out", Path::new("/a b")).is_err());
        assert_eq!(
            sbatch_path("--out", Path::new("/a/b-c_d.e")).unwrap(),
            "/a/b-c_d.e"
        );
    }

    #[test]
    fn the_script_runs_every_shard_with_quoted_values() {
        let job = ScreenJob {
            exe: "/opt/drop7".into(),
            arms: vec!["fair-d2s7".into(), "fair-d3s7".into()],
            seeds: SeedBlock::new(0xa51d1000, 64).unwrap(),
            out: "/r/scr".into(),
            ledger: "/r/drop7-leases.json".into(),
            model: None,
            shards: 4,
            cpus: 2,
            time: None,
            ms_per_decision: 26.0,
        };
        let s = job.script().unwrap();
        assert!(s.contains("#SBATCH --array=0-3\n"), "{s}");
        assert!(s.contains("#SBATCH --cpus-per-task=2\n"));
        assert!(s.contains("exec '/opt/drop7' screen --arms 'fair-d2s7,fair-d3s7' --seeds 0xa51d1000:64 --out '/r/scr'"));
        assert!(s.contains("--shard slurm --quiet"));
        // 16 games a shard × 130 decisions × 26 ms / 2 CPUs × 2 + 600 s = 654 s.
        assert_eq!(job.time_limit(), "00:10:54");
        let bad = ScreenJob {
            out: "/r/sc r".into(),
            ..job
        };
        assert!(matches!(bad.script(), Err(SlurmError::Sbatch { .. })));
    }
}
