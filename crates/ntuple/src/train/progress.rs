//! `progress.jsonl`: one typed record per line, written by the trainer and read back by the
//! curve (and by anyone plotting a run), so the two can never disagree about a field name.

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::Path;

use evidence::figure::{Frame, text};
use serde::{Deserialize, Serialize};

use crate::Error;

/// One line of `progress.jsonl`, tagged by `"kind"`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum ProgressRecord {
    Train(TrainPoint),
    Validation(ValidationPoint),
}

/// Training progress since the previous line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TrainPoint {
    pub moves: u64,
    pub games: u64,
    pub moves_per_second: f64,
    /// Mean score of the training games finished since the previous line.
    pub recent_mean_score: f64,
    pub recent_games: u64,
    /// Value of the opening board in rise units (a health reading).
    pub opening_value: f32,
    pub wall_seconds: f64,
    pub threads: usize,
}

/// The tables as the leaf of the validation search against the fair leaf, paired on the
/// validation block.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ValidationPoint {
    pub moves: u64,
    pub candidate_mean: f64,
    pub fair_mean: f64,
    pub margin: f64,
    pub bootstrap_lb95: f64,
    pub bootstrap_ub95: f64,
    pub t_lb95: f64,
    pub wins: usize,
    pub ties: usize,
    pub losses: usize,
    /// A new best margin: the tables were saved as best-weights.bin.
    pub best: bool,
    pub seeds: String,
}

/// Append one record as one whole line.
pub fn append_progress(path: &Path, r: &ProgressRecord) -> Result<(), Error> {
    let mut line = serde_json::to_string(r).expect("a progress record serialises");
    line.push('\n');
    evidence::open_append(path)?
        .write_all(line.as_bytes())
        .map_err(Error::io(path))
}

/// Every record of a progress file. A torn last line (a crash mid-write) is skipped; any
/// other bad line is an error naming it.
pub fn read_progress(path: &Path) -> Result<Vec<ProgressRecord>, Error> {
    // never open a FIFO or a device (it could block, or never end)
    if !std::fs::metadata(path).map_err(Error::io(path))?.is_file() {
        return Err(Error::Train(format!(
            "{}: not a regular file",
            path.display()
        )));
    }
    // A run appends a line of a few hundred bytes per report: kilobytes to tens of MB even
    // for a long run; 1 GB is far past any real progress file.
    let text = fileio::read_to_string(path, 1 << 30).map_err(|e| Error::io(path)(e.into_io()))?;
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    let mut out = Vec::with_capacity(lines.len());
    for (i, l) in lines.iter().enumerate() {
        match serde_json::from_str(l) {
            Ok(r) => out.push(r),
            Err(_) if i + 1 == lines.len() && !text.ends_with('\n') => {}
            Err(e) => {
                return Err(Error::Train(format!(
                    "{}: line {}: not a progress record: {e}",
                    path.display(),
                    i + 1
                )));
            }
        }
    }
    Ok(out)
}

/// Training curve: recent training-game mean score (left axis) and validation margins with
/// their bootstrap bounds (right axis) against training moves.
pub fn training_curve(records: &[ProgressRecord]) -> String {
    let train: Vec<&TrainPoint> = records
        .iter()
        .filter_map(|r| match r {
            ProgressRecord::Train(t) => Some(t),
            _ => None,
        })
        .collect();
    let val: Vec<&ValidationPoint> = records
        .iter()
        .filter_map(|r| match r {
            ProgressRecord::Validation(v) => Some(v),
            _ => None,
        })
        .collect();
    let frame = Frame {
        width: 900.0,
        height: 460.0,
        left: 90.0,
        right: 90.0,
        top: 40.0,
        bottom: 50.0,
    };
    let p = frame.plot();
    let xmax = train
        .iter()
        .map(|t| t.moves as f64)
        .chain(val.iter().map(|v| v.moves as f64))
        .fold(1.0f64, f64::max);
    let ymax = train
        .iter()
        .map(|t| t.recent_mean_score)
        .fold(1.0f64, f64::max);
    let (vlo, vhi) = val.iter().fold((0.0f64, 1.0f64), |(lo, hi), v| {
        (lo.min(v.bootstrap_lb95), hi.max(v.bootstrap_ub95))
    });
    let x = |m: f64| p.x + m / xmax * p.width;
    let y = |s: f64| p.bottom() - s / ymax * p.height;
    let yv = |s: f64| p.bottom() - (s - vlo) / (vhi - vlo).max(1.0) * p.height;
    let mut o = frame.begin(
        "Training: recent self-play mean score (blue, left) and validation margin vs fair with bootstrap 90 % band (red, right)",
        22.0,
    );
    let pts: Vec<String> = train
        .iter()
        .map(|t| format!("{:.1},{:.1}", x(t.moves as f64), y(t.recent_mean_score)))
        .collect();
    let _ = writeln!(
        o,
        r#"<polyline fill="none" stroke="steelblue" stroke-width="1.5" points="{}"/>"#,
        pts.join(" ")
    );
    for v in &val {
        let vx = x(v.moves as f64);
        let _ = writeln!(
            o,
            r#"<line x1="{vx:.1}" x2="{vx:.1}" y1="{:.1}" y2="{:.1}" stroke="firebrick"/>"#,
            yv(v.bootstrap_lb95),
            yv(v.bootstrap_ub95)
        );
        let _ = writeln!(
            o,
            r#"<circle cx="{vx:.1}" cy="{:.1}" r="3.5" fill="firebrick"/>"#,
            yv(v.margin)
        );
    }
    if vlo < 0.0 {
        let _ = writeln!(
            o,
            r#"<line x1="{}" x2="{}" y1="{2:.1}" y2="{2:.1}" stroke="firebrick" stroke-dasharray="4,4"/>"#,
            p.x,
            p.right(),
            yv(0.0)
        );
    }
    let _ = writeln!(
        o,
        r#"<line x1="{}" x2="{}" y1="{2}" y2="{2}" stroke="black"/>"#,
        p.x,
        p.right(),
        p.bottom()
    );
    let label = format!("training moves (max {xmax:.3e})");
    text(
        &mut o,
        p.x + p.width / 2.0,
        frame.height - 12.0,
        "middle",
        "black",
        &label,
    );
    text(
        &mut o,
        p.x - 6.0,
        p.y + 4.0,
        "end",
        "steelblue",
        &format!("{ymax:.0}"),
    );
    text(&mut o, p.x - 6.0, p.bottom(), "end", "steelblue", "0");
    text(
        &mut o,
        p.right() + 6.0,
        p.y + 4.0,
        "start",
        "firebrick",
        &format!("{vhi:+.0}"),
    );
    text(
        &mut o,
        p.right() + 6.0,
        p.bottom(),
        "start",
        "firebrick",
        &format!("{vlo:+.0}"),
    );
    frame.end(o)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The pilot run's log, written before the typed records existed, reads back whole.
    #[test]
    fn the_pilot_log_parses_into_typed_records() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/pilot-C/progress.jsonl");
        let r = read_progress(&path).unwrap();
        let lines = std::fs::read_to_string(&path).unwrap().lines().count();
        assert_eq!(r.len(), lines);
        let vals: Vec<&ValidationPoint> = r
            .iter()
            .filter_map(|x| match x {
                ProgressRecord::Validation(v) => Some(v),
                _ => None,
            })
            .collect();
        assert_eq!(vals.len(), 4);
        assert_eq!(vals[2].margin, 122803.125);
        assert!(vals[2].best);
        // and each record writes back as the same JSON object
        for (rec, line) in r
            .iter()
            .zip(std::fs::read_to_string(&path).unwrap().lines())
        {
            let a: serde_json::Value = serde_json::to_value(rec).unwrap();
            let b: serde_json::Value = serde_json::from_str(line).unwrap();
            assert_eq!(a, b);
        }
        let svg = training_curve(&r);
        assert_eq!(svg.matches("<circle").count(), 4);
    }

    #[test]
    fn a_torn_last_line_is_skipped_and_a_bad_middle_line_is_not() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("progress.jsonl");
        let rec = ProgressRecord::Train(TrainPoint {
            moves: 10,
            games: 1,
            moves_per_second: 5.0,
            recent_mean_score: 7.0,
            recent_games: 1,
            opening_value: 20.0,
            wall_seconds: 2.0,
            threads: 1,
        });
        append_progress(&p, &rec).unwrap();
        std::fs::write(&p, std::fs::read_to_string(&p).unwrap() + "{\"kind\":\"tr").unwrap();
        assert_eq!(read_progress(&p).unwrap(), vec![rec.clone()]);
        std::fs::write(
            &p,
            "garbage\n".to_string() + &serde_json::to_string(&rec).unwrap() + "\n",
        )
        .unwrap();
        let e = read_progress(&p).unwrap_err().to_string();
        assert!(e.contains("line 1"), "{e}");
    }
}
