//! `summary.md`: each section's heading, paragraphs and table.
use super::section::Section;
use std::fmt::Write;

pub fn write(sections: &[Section]) -> String {
    let mut md = String::new();
    for section in sections {
        let _ = writeln!(md, "{} {}\n", "#".repeat(section.level), section.heading);
        for text in &section.text {
            let _ = writeln!(md, "{text}\n");
        }
        if let Some(table) = &section.table {
            for line in table.lines() {
                let _ = writeln!(md, "{line}");
            }
            md.push('\n');
        }
    }
    md
}
