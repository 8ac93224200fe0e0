//! The frame every SVG figure shares: size, margins, white background, a title, and text
//! escaped for XML. The figures themselves (paired differences, training curves) draw inside
//! [`Frame::plot`] with their own marks; this module keeps them alike and small.

use std::fmt::Write as _;

/// An SVG canvas with margins around the plotting area.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Frame {
    pub width: f64,
    pub height: f64,
    pub left: f64,
    pub right: f64,
    pub top: f64,
    pub bottom: f64,
}

/// The plotting area inside a frame's margins.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Plot {
    pub x: f64,
    pub y: f64,
    pub width: f64,
    pub height: f64,
}

impl Plot {
    pub fn right(&self) -> f64 {
        self.x + self.width
    }
    pub fn bottom(&self) -> f64 {
        self.y + self.height
    }
}

impl Frame {
    pub fn plot(&self) -> Plot {
        Plot {
            x: self.left,
            y: self.top,
            width: self.width - self.left - self.right,
            height: self.height - self.top - self.bottom,
        }
    }

    /// The opening of the document: the `<svg>` element, a white background, and `title`
    /// (escaped) at `title_y` from the top.
    pub fn begin(&self, title: &str, title_y: f64) -> String {
        let mut o = String::new();
        let _ = writeln!(
            o,
            r#"<svg xmlns="http://www.w3.org/2000/svg" width="{}" height="{}" font-family="sans-serif" font-size="12">"#,
            self.width, self.height
        );
        let _ = writeln!(o, r#"<rect width="100%" height="100%" fill="white"/>"#);
        let _ = writeln!(
            o,
            r#"<text x="{}" y="{title_y}" font-size="14">{}</text>"#,
            self.left,
            escape(title)
        );
        o
    }

    /// Close the document.
    pub fn end(&self, mut o: String) -> String {
        o.push_str("</svg>\n");
        o
    }
}

/// A text mark (escaped) at `(x, y)`; `anchor` is `start`, `middle` or `end`.
pub fn text(o: &mut String, x: f64, y: f64, anchor: &str, fill: &str, s: &str) {
    let _ = writeln!(
        o,
        r#"<text x="{x:.2}" y="{y:.2}" text-anchor="{anchor}" fill="{fill}">{}</text>"#,
        escape(s)
    );
}

/// `s` with the five XML special characters escaped.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frame_and_escaping() {
        let f = Frame {
            width: 900.0,
            height: 400.0,
            left: 80.0,
            right: 20.0,
            top: 50.0,
            bottom: 30.0,
        };
        let p = f.plot();
        assert_eq!((p.x, p.y, p.width, p.height), (80.0, 50.0, 800.0, 320.0));
        assert_eq!((p.right(), p.bottom()), (880.0, 370.0));
        let mut o = f.begin("a < b & \"c\"", 20.0);
        text(&mut o, 1.0, 2.0, "end", "red", "x>y");
        let o = f.end(o);
        assert!(o.starts_with("<svg ") && o.ends_with("</svg>\n"));
        assert!(o.contains("a &lt; b &amp; &quot;c&quot;"));
        assert!(o.contains(">x&gt;y</text>"));
        assert!(!o.contains("a < b"));
    }
}
