//! The SVG figure of a run's trajectory: every parameter's value against the pairs played.

use std::fmt::Write as _;

use evidence::figure::{Frame, Plot, text};

use super::algorithm::Param;
use super::state::{State, TrajectoryLine};

/// Line colours, one a parameter; parameters past the tenth use them again, dashed.
const COLOURS: [&str; 10] = [
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
    "#bcbd22", "#17becf",
];

/// At most this many trajectory lines are drawn, and the last one: a long run's thousands of
/// batches would make the figure heavier, not clearer.
const MAX_LINES: usize = 400;

/// The parameter trajectories as an SVG: each parameter's value as a fraction of its
/// [min, max] range against the pairs played, at most 400 points a line.
pub fn figure(state: &State, lines: &[TrajectoryLine]) -> String {
    // The legend, two parameters a row, goes under the plot: the canvas grows with it.
    let legend_height = 16.0 * state.params.len().div_ceil(2) as f64;
    let frame = Frame {
        width: 760.0,
        height: 420.0 + legend_height,
        left: 56.0,
        right: 20.0,
        top: 36.0,
        bottom: 40.0 + legend_height,
    };
    let plot = frame.plot();
    let pairs = state.setup.schedule.pairs;
    let mut o = frame.begin(
        &format!(
            "SPSA trajectory: {} of {} pairs, {}",
            state.pairs_done, pairs, state.setup.time_control
        ),
        22.0,
    );
    axes(&mut o, plot, pairs);
    let picked = thinned(lines);
    for (k, q) in state.params.iter().enumerate() {
        let colour = COLOURS[k % COLOURS.len()];
        let dash = if k >= COLOURS.len() {
            r#" stroke-dasharray="4 2""#
        } else {
            ""
        };
        let pts = points(plot, pairs, q, &picked);
        let _ = writeln!(
            o,
            r#"<polyline points="{pts}" fill="none" stroke="{colour}" stroke-width="1.2"{dash}/>"#
        );
        legend_entry(&mut o, plot, k, q, colour, dash);
    }
    frame.end(o)
}

/// The plot's border and labels: `min`, `mid` and `max` up the left (every line is drawn as
/// a fraction of its own range, so the axis has no units), 0 and the schedule's length in
/// pairs along the bottom.
fn axes(o: &mut String, plot: Plot, pairs: u64) {
    let _ = writeln!(
        o,
        r##"<rect x="{:.1}" y="{:.1}" width="{:.1}" height="{:.1}" fill="none" stroke="#999"/>"##,
        plot.x, plot.y, plot.width, plot.height
    );
    for (f, label) in [(0.0, "min"), (0.5, "mid"), (1.0, "max")] {
        let y = plot.bottom() - f * plot.height;
        text(o, plot.x - 6.0, y + 4.0, "end", "#555", label);
    }
    text(o, plot.x, plot.bottom() + 16.0, "start", "#555", "0");
    text(
        o,
        plot.right(),
        plot.bottom() + 16.0,
        "end",
        "#555",
        &format!("{pairs} pairs"),
    );
}

/// The trajectory lines to draw: every `stride`-th, so that about `MAX_LINES` remain, and
/// the last (where the run stands).
fn thinned(lines: &[TrajectoryLine]) -> Vec<&TrajectoryLine> {
    let stride = lines.len().div_ceil(MAX_LINES).max(1);
    lines
        .iter()
        .enumerate()
        .filter(|(i, _)| i % stride == 0 || *i + 1 == lines.len())
        .map(|(_, l)| l)
        .collect()
}

/// The points of `q`'s line (an SVG `points` list): its start at 0 pairs, then its value on
/// every picked trajectory line that holds it; x is the pairs played as a share of the
/// schedule's `pairs`, y the value as a share of its range.
fn points(plot: Plot, pairs: u64, q: &Param, picked: &[&TrajectoryLine]) -> String {
    let total = pairs.max(1) as f64;
    let xs = |played: u64| plot.x + plot.width * played as f64 / total;
    let frac = |v: f64| ((v - q.min) / (q.max - q.min)).clamp(0.0, 1.0);
    let y = |v: f64| plot.bottom() - frac(v) * plot.height;
    let mut pts = format!("{:.1},{:.1}", xs(0), y(q.start));
    for l in picked {
        if let Some(v) = l.values.get(&q.name).and_then(serde_json::Value::as_f64) {
            let _ = write!(pts, " {:.1},{:.1}", xs(l.pairs), y(v));
        }
    }
    pts
}

/// Parameter `k`'s legend entry, two a row under the plot: a stroke of its line's colour and
/// dash, and `name: start → value [min, max]`.
fn legend_entry(o: &mut String, plot: Plot, k: usize, q: &Param, colour: &str, dash: &str) {
    let (col, row) = (k % 2, k / 2);
    let lx = plot.x + col as f64 * plot.width / 2.0;
    let ly = plot.bottom() + 36.0 + row as f64 * 16.0;
    let _ = writeln!(
        o,
        r#"<line x1="{lx:.1}" y1="{:.1}" x2="{:.1}" y2="{:.1}" stroke="{colour}" stroke-width="2"{dash}/>"#,
        ly - 4.0,
        lx + 18.0,
        ly - 4.0
    );
    let value = if q.float {
        format!("{:.3}", q.value)
    } else {
        format!("{:.1}", q.value)
    };
    text(
        o,
        lx + 24.0,
        ly,
        "start",
        "#222",
        &format!(
            "{}: {} → {value} [{}, {}]",
            q.name,
            q.shown(q.start),
            q.shown(q.min),
            q.shown(q.max)
        ),
    );
}
