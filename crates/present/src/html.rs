//! HTML and SVG as text: escaping, an element writer that keeps attributes in the order
//! given, and the short coordinates of a chart. No layout engine: a chart places everything
//! itself in a fixed viewBox, and the browser scales it.
use std::fmt::Write;

/// `s` safe as element content: `&`, `<` and `>` escaped.
pub fn text(s: &str) -> String {
    escaped(s, Quotes::Kept, Controls::Kept)
}

/// `s` safe inside a double-quoted attribute value: also `"` and `'` escaped, and control
/// characters other than tab and newline dropped (they cannot appear in XML).
pub fn attr(s: &str) -> String {
    escaped(s, Quotes::Escaped, Controls::Dropped)
}

/// `s` as element content with the quotes escaped too (`&quot;`, `&#39;`), control characters
/// kept: how ib-compare's page writes its text, so that any of it could also stand in an
/// attribute.
pub fn text_and_quotes(s: &str) -> String {
    escaped(s, Quotes::Escaped, Controls::Kept)
}

#[derive(Clone, Copy, PartialEq)]
enum Quotes {
    Kept,
    Escaped,
}

#[derive(Clone, Copy, PartialEq)]
enum Controls {
    Kept,
    Dropped,
}

fn escaped(s: &str, quotes: Quotes, controls: Controls) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' if quotes == Quotes::Escaped => out.push_str("&quot;"),
            '\'' if quotes == Quotes::Escaped => out.push_str("&#39;"),
            '\t' | '\n' => out.push(c),
            c if controls == Controls::Dropped && c.is_control() => {}
            c => out.push(c),
        }
    }
    out
}

/// Colours of a chart's series, in the order they are handed out: distinguishable on white
/// and in print.
pub const PALETTE: [&str; 12] = [
    "#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22",
    "#393b79", "#ad494a",
];

/// A chart coordinate with at most two decimals and no needless zeros (`12`, `3.5`, `0.25`);
/// `0` for a value that is not finite.
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

/// A polyline through `points`, unfilled, its coordinates written with [`n`].
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
        assert_eq!(text_and_quotes("say \"no\" & 'go'\u{1}"), "say &quot;no&quot; &amp; &#39;go&#39;\u{1}");
        let e = Element::new("text").a("data-series", "A\"B").text("<1 & 2>").close();
        assert_eq!(e, "<text data-series=\"A&quot;B\">&lt;1 &amp; 2&gt;</text>");
    }

    #[test]
    fn empty_shapes_self_close_and_containers_do_not() {
        assert_eq!(Element::new("rect").a("x", n(1.0)).close(), "<rect x=\"1\"/>");
        assert_eq!(Element::new("g").close(), "<g></g>");
        assert_eq!(Element::new("div").flag("hidden", true).close(), "<div hidden></div>");
        assert_eq!(Element::new("br").close(), "<br>");
    }

    #[test]
    fn coordinates_are_short_and_stable() {
        assert_eq!([n(12.0), n(3.5), n(0.254), n(-0.001), n(f64::NAN)], ["12", "3.5", "0.25", "0", "0"]);
        let p = polyline(&[(0.0, 1.0), (2.5, 3.333)]).close();
        assert_eq!(p, "<polyline points=\"0,1 2.5,3.33\" fill=\"none\"/>");
    }
}
