//! Aligned plain-text tables for the CLI's list commands, their cells, and writing them
//! out.

use std::io::Write;

/// Writes `text` to standard output as it is.
pub fn write_out(text: &str) -> crate::Result<()> {
    std::io::stdout()
        .lock()
        .write_all(text.as_bytes())
        .map_err(crate::Error::WriteOutput)
}

/// `text` on one line, cut to `max` characters with `...`.
pub fn cell(text: &str, max: usize) -> String {
    let line = text.replace('\n', " ");
    if line.chars().count() > max {
        line.chars().take(max.saturating_sub(3)).collect::<String>() + "..."
    } else {
        line
    }
}

/// `header` and `rows` as columns padded to their widest cell, two spaces apart, without
/// trailing spaces; one line each.
pub fn render(header: &[&str], rows: &[Vec<String>]) -> String {
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for row in rows {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.chars().count());
        }
    }
    let line = |cells: Vec<&str>| {
        let mut text = cells
            .iter()
            .zip(&widths)
            .map(|(cell, width)| format!("{cell:<width$}"))
            .collect::<Vec<_>>()
            .join("  ");
        text.truncate(text.trim_end().len());
        text + "\n"
    };
    let mut out = line(header.to_vec());
    for row in rows {
        out += &line(row.iter().map(String::as_str).collect());
    }
    out
}
