//! `summary.html`: the sections as one self-contained page (inline style and SVG, no script),
//! each chart a line per provider by run date.
use super::section::{Chart, Section};
use crate::discover::format_utc;
use inferbench_present::axis::Scale;
use inferbench_present::html::{text_and_quotes as escape, Element, PALETTE};
use inferbench_present::markdown::Table;
use inferbench_present::number::plain;
use std::fmt::Write;

const HEAD: &str = "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" \
     content=\"width=device-width, initial-scale=1\"><title>inferbench: comparison of runs</title><style>\
     body{font:14px/1.45 system-ui,sans-serif;margin:1.5rem auto;max-width:72rem;padding:0 1rem;color:#222}\
     table{border-collapse:collapse;margin:.5rem 0 1.25rem;display:block;overflow-x:auto}\
     th,td{border:1px solid #ccc;padding:.2rem .45rem;text-align:left;vertical-align:top}\
     th{background:#f3f3f3}code{background:#f3f3f3;padding:0 .2rem}\
     .chart{width:100%;max-width:640px;height:auto;display:block}</style></head><body>\n";

pub fn write(sections: &[Section]) -> String {
    let mut page = String::from(HEAD);
    for section in sections {
        let _ = writeln!(page, "<h{0}>{1}</h{0}>", section.level, inline(&section.heading));
        for text in &section.text {
            let _ = writeln!(page, "<p>{}</p>", inline(text));
        }
        if let Some(c) = &section.chart {
            page.push_str(&chart(c));
            page.push('\n');
        }
        if let Some(table) = &section.table {
            page.push_str(&html_table(table));
            page.push('\n');
        }
    }
    page.push_str("</body></html>\n");
    page
}

/// A table: its heading in `<th>` cells, then its rows.
fn html_table(table: &Table) -> String {
    let mut out = String::from("<table>");
    let row = |out: &mut String, tag: &str, cells: &[String]| {
        out.push_str("<tr>");
        for cell in cells {
            let _ = write!(out, "<{tag}>{}</{tag}>", inline(cell));
        }
        out.push_str("</tr>");
    };
    row(&mut out, "th", table.headers());
    for cells in table.rows() {
        row(&mut out, "td", cells);
    }
    out.push_str("</table>");
    out
}

/// Markdown text with its code spans as `<code>`, everything escaped.
fn inline(text: &str) -> String {
    let mut out = String::new();
    for (i, part) in text.split('`').enumerate() {
        if i % 2 == 1 {
            let _ = write!(out, "<code>{}</code>", escape(part));
        } else {
            out.push_str(&escape(part));
        }
    }
    out
}

/// How many of the palette's colours the lines take in turn: the first ten.
const COLOURS: usize = 10;

/// The chart's size and margins (the right one holds the providers' names).
const W: f64 = 640.0;
const H: f64 = 240.0;
const LEFT: f64 = 60.0;
const RIGHT: f64 = 150.0;
const TOP: f64 = 12.0;
const BOTTOM: f64 = 28.0;

/// A line chart: x the run date, y the value, one line per provider; nothing without points.
fn chart(c: &Chart) -> String {
    let points: Vec<(i64, f64)> = c.series.iter().flat_map(|(_, p)| p.iter().copied()).collect();
    if points.is_empty() {
        return String::new();
    }
    let (t0, t1) = points.iter().fold((i64::MAX, i64::MIN), |(a, b), p| (a.min(p.0), b.max(p.0)));
    let (v0, v1) = points.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), p| (a.min(p.1), b.max(p.1)));
    let (v0, v1) = if v1 > v0 { (v0, v1) } else { (v0 - 1.0, v1 + 1.0) };
    // Run dates are whole microseconds, exact as f64 until the year 2255; a single date lands
    // in the middle.
    let dates = Scale::linear(t0 as f64, t1 as f64, LEFT, W - RIGHT);
    let x = |t: i64| dates.at(t as f64);
    // The value's share of the range measured down from the top: the chart's own arithmetic,
    // kept so that a coordinate printed with one decimal never moves by a rounding.
    let y = |v: f64| TOP + (1.0 - (v - v0) / (v1 - v0)) * (H - TOP - BOTTOM);
    let mut svg = Element::new("svg")
        .a("class", "chart")
        .a("viewBox", format!("0 0 {W} {H}"))
        .a("role", "img")
        .a("aria-label", format!("{} by run date", c.label));
    for (x2, y1) in [(W - RIGHT, H - BOTTOM), (LEFT, TOP)] {
        svg.push(Element::new("line").a("x1", LEFT).a("y1", y1).a("x2", x2).a("y2", H - BOTTOM).a("stroke", "#888"));
    }
    for (v, y) in [(v0, H - BOTTOM), (v1, TOP + 10.0)] {
        svg.push(label(LEFT - 4.0, y, "end").raw(&escape(&c.value(v))));
    }
    // The first and last dates at either end; when they are the same day (one run date, or
    // runs hours apart) one label, centred, since two would be drawn over each other.
    let (first_day, last_day) = (format_utc(t0)[..10].to_string(), format_utc(t1)[..10].to_string());
    let days = if first_day == last_day {
        vec![((x(t0) + x(t1)) / 2.0, "middle", first_day)]
    } else {
        vec![(x(t0), "start", first_day), (x(t1), "end", last_day)]
    };
    for (at, anchor, day) in days {
        svg.push(label(at, H - 8.0, anchor).raw(&escape(&day)));
    }
    for (i, (provider, points)) in c.series.iter().enumerate() {
        let color = PALETTE[i % COLOURS];
        if points.len() > 1 {
            let path: Vec<String> =
                points.iter().map(|(t, v)| format!("{},{}", plain(x(*t), 1), plain(y(*v), 1))).collect();
            svg.push(
                Element::new("polyline")
                    .a("fill", "none")
                    .a("stroke", color)
                    .a("stroke-width", "1.5")
                    .a("points", path.join(" ")),
            );
        }
        for (j, (t, v)) in points.iter().enumerate() {
            let partial = c.partial.get(i).and_then(|p| p.get(j)).copied().unwrap_or(false);
            let (fill, note) = if partial { ("#fff", ", partial run") } else { (color, "") };
            let title = format!("{provider}: {} ({}{note})", c.value(*v), format_utc(*t));
            svg.push(
                Element::new("circle")
                    .a("cx", plain(x(*t), 1))
                    .a("cy", plain(y(*v), 1))
                    .a("r", "2.5")
                    .a("fill", fill)
                    .a("stroke", color)
                    .child(Element::new("title").raw(&escape(&title))),
            );
        }
        let name = Element::new("text").a("x", W - RIGHT + 8.0).a("y", TOP + 12.0 + 14.0 * i as f64);
        svg.push(name.a("font-size", "11").a("fill", color).raw(&escape(provider)));
    }
    svg.close()
}

/// A text label at (`x`, `y`), anchored as `anchor` says.
fn label(x: f64, y: f64, anchor: &str) -> Element {
    Element::new("text").a("x", x).a("y", y).a("text-anchor", anchor).a("font-size", "11")
}
