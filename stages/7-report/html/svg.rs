//! A small SVG (and HTML) writer: elements with attributes in the order given, text and
//! attribute values escaped, numbers printed with a bounded number of decimals so the same
//! inputs always give the same bytes. No layout engine: the charts place everything
//! themselves in a fixed viewBox, and the browser scales it.
use std::fmt::Write;

/// `text` safe as element content: `&`, `<` and `>` escaped.
pub fn text(s: &str) -> String {
    escaped(s, false)
}

/// `s` safe inside a double-quoted attribute value: also `"` and `'` escaped, and control
/// characters other than tab and newline dropped (they cannot appear in XML).
pub fn attr(s: &str) -> String {
    escaped(s, true)
}

fn escaped(s: &str, attribute: bool) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' if attribute => out.push_str("&quot;"),
            '\'' if attribute => out.push_str("&#39;"),
            '\t' | '\n' if attribute => out.push(c),
            c if attribute && c.is_control() => {}
            c => out.push(c),
        }
    }
    out
}

/// A coordinate with at most two decimals and no needless zeros (`12`, `3.5`, `0.25`).
pub fn n(x: f64) -> String {
    if !x.is_finite() {
        return "0".to_string();
    }
    let mut s = format!("{:.2}", (x * 100.0).round() / 100.0);
    while s.contains('.') && (s.ends_with('0') || s.ends_with('.')) {
        s.pop();
    }
    if s == "-0" {
        s = "0".to_string();
    }
    s
}

/// An element being written: `Element::new("rect").a("x", 1).a("class", "bar").close()`.
/// Attribute values are escaped; children are appended with `child` or `raw`.
pub struct Element {
    name: &'static str,
    head: String,
    body: String,
}

impl Element {
    pub fn new(name: &'static str) -> Self {
        Element { name, head: format!("<{name}"), body: String::new() }
    }

    /// An attribute whose value is escaped.
    pub fn a(mut self, key: &str, value: impl std::fmt::Display) -> Self {
        let _ = write!(self.head, " {key}=\"{}\"", attr(&value.to_string()));
        self
    }

    /// A bare boolean attribute (`hidden`).
    pub fn flag(mut self, key: &str, on: bool) -> Self {
        if on {
            let _ = write!(self.head, " {key}");
        }
        self
    }

    /// Escaped text content.
    pub fn text(mut self, s: &str) -> Self {
        self.body.push_str(&text(s));
        self
    }

    /// A child element.
    pub fn child(mut self, e: Element) -> Self {
        self.body.push_str(&e.close());
        self
    }

    /// Already-escaped markup (the output of another writer).
    pub fn raw(mut self, markup: &str) -> Self {
        self.body.push_str(markup);
        self
    }

    pub fn push(&mut self, e: Element) {
        self.body.push_str(&e.close());
    }

    /// The element's markup; empty SVG elements are self-closed, HTML ones closed explicitly.
    pub fn close(self) -> String {
        const VOID: [&str; 9] = ["rect", "line", "circle", "polyline", "path", "meta", "br", "input", "polygon"];
        if self.body.is_empty() && VOID.contains(&self.name) {
            if matches!(self.name, "meta" | "br" | "input") {
                format!("{}>", self.head)
            } else {
                format!("{}/>", self.head)
            }
        } else {
            format!("{}>{}</{}>", self.head, self.body, self.name)
        }
    }
}

/// An `<svg>` with a viewBox of `w × h` user units that scales to its container's width.
pub fn svg(chart: &str, series: &[String], w: f64, h: f64, label: &str) -> Element {
    Element::new("svg")
        .a("xmlns", "http://www.w3.org/2000/svg")
        .a("viewBox", format!("0 0 {} {}", n(w), n(h)))
        .a("role", "img")
        .a("aria-label", label)
        .a("data-chart", chart)
        .a("data-series", series.join(","))
}

/// A polyline through `points`.
pub fn polyline(points: &[(f64, f64)]) -> Element {
    let mut p = String::with_capacity(points.len() * 12);
    for (i, (x, y)) in points.iter().enumerate() {
        if i > 0 {
            p.push(' ');
        }
        let _ = write!(p, "{},{}", n(*x), n(*y));
    }
    Element::new("polyline").a("points", p).a("fill", "none")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_and_attributes_are_escaped() {
        assert_eq!(text("a<b & c>d \"q\""), "a&lt;b &amp; c&gt;d \"q\"");
        assert_eq!(attr("x\"><script>'&\u{1}"), "x&quot;&gt;&lt;script&gt;&#39;&amp;");
        let e = Element::new("text").a("data-series", "A\"B").text("<1 & 2>").close();
        assert_eq!(e, "<text data-series=\"A&quot;B\">&lt;1 &amp; 2&gt;</text>");
    }

    #[test]
    fn empty_shapes_self_close_and_containers_do_not() {
        assert_eq!(Element::new("rect").a("x", n(1.0)).close(), "<rect x=\"1\"/>");
        assert_eq!(Element::new("g").close(), "<g></g>");
        assert_eq!(Element::new("div").flag("hidden", true).close(), "<div hidden></div>");
    }

    #[test]
    fn numbers_are_short_and_stable() {
        assert_eq!([n(12.0), n(3.5), n(0.254), n(-0.001), n(f64::NAN)], ["12", "3.5", "0.25", "0", "0"]);
        let p = polyline(&[(0.0, 1.0), (2.5, 3.333)]).close();
        assert_eq!(p, "<polyline points=\"0,1 2.5,3.33\" fill=\"none\"/>");
    }
}
