//! GitHub pipe tables whose cells cannot break the table.
use crate::number::DASH;

/// How a column's cells line up (its delimiter cell: `---` or `---:`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Align {
    #[default]
    Left,
    Right,
}

/// A GitHub pipe table: a heading, rows of cells, and how each column aligns.
#[derive(Debug, Clone)]
pub struct Table {
    headers: Vec<String>,
    align: Vec<Align>,
    rows: Vec<Vec<String>>,
    placeholder: bool,
}

impl Table {
    /// A table with these headings, every column aligned left. An empty one gets one row of
    /// `—` (see [`Table::without_placeholder`]).
    pub fn new<S: AsRef<str>>(headers: &[S]) -> Self {
        Table {
            headers: headers.iter().map(|h| h.as_ref().to_string()).collect(),
            align: vec![Align::Left; headers.len()],
            rows: Vec::new(),
            placeholder: true,
        }
    }

    /// The same table with each column aligned as given (`align` names every column).
    pub fn aligned(mut self, align: &[Align]) -> Self {
        assert_eq!(align.len(), self.headers.len(), "an alignment for every column");
        self.align = align.to_vec();
        self
    }

    /// The same table without the row of `—` when it is empty: its heading alone.
    pub fn without_placeholder(mut self) -> Self {
        self.placeholder = false;
        self
    }

    pub fn row(&mut self, cells: Vec<String>) {
        debug_assert_eq!(cells.len(), self.headers.len(), "a row must fill every column");
        self.rows.push(cells);
    }

    pub fn headers(&self) -> &[String] {
        &self.headers
    }

    pub fn rows(&self) -> &[Vec<String>] {
        &self.rows
    }

    /// The table's lines: the heading, the delimiter row, then the rows (or, when there are
    /// none and it has its placeholder, one row of `—`, so that it reads as an empty table).
    pub fn lines(&self) -> Vec<String> {
        let delimiter: String = self
            .align
            .iter()
            .map(|a| match a {
                Align::Left => "---|",
                Align::Right => "---:|",
            })
            .collect();
        let mut out = vec![line(&self.headers), format!("|{delimiter}")];
        if self.rows.is_empty() && self.placeholder {
            out.push(line(&vec![DASH.to_string(); self.headers.len()]));
        }
        out.extend(self.rows.iter().map(|r| line(r)));
        out
    }
}

/// One row: its cells, escaped, between pipes.
fn line(cells: &[String]) -> String {
    format!("| {} |", cells.iter().map(|c| cell(c)).collect::<Vec<_>>().join(" | "))
}

/// A cell's text with the characters that would end a cell or a row neutralised: a `|` is
/// escaped (a provider label holding one must not shift the columns), a line break becomes a
/// space.
pub fn cell(text: &str) -> String {
    text.replace('|', "\\|").replace(['\n', '\r'], " ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_escape_pipes_and_line_breaks() {
        let mut t = Table::new(&["A", "B"]);
        assert_eq!(t.lines(), vec!["| A | B |", "|---|---|", "| — | — |"]);
        t.row(vec!["x|y".into(), "z\r\nw".into()]);
        assert_eq!(t.lines()[2], "| x\\|y | z  w |");
    }

    #[test]
    fn columns_align_and_an_empty_table_may_keep_its_heading_alone() {
        let t = Table::new(&["name", "rate"]).aligned(&[Align::Left, Align::Right]).without_placeholder();
        assert_eq!(t.lines(), vec!["| name | rate |", "|---|---:|"]);
    }
}
