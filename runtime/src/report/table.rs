//! Aligned text tables, as every listing of the `pmu` command prints them, or the same rows
//! as comma-separated values.

/// A table: a header row and data rows, columns padded to the widest cell. Columns listed in
/// `right` are right-aligned (numbers).
pub struct TextTable {
    header: Vec<String>,
    rows: Vec<Vec<String>>,
    right: Vec<usize>,
}

impl TextTable {
    /// A table with these column headings and no rows yet.
    pub fn new(header: &[&str]) -> Self {
        Self {
            header: header.iter().map(|h| h.to_string()).collect(),
            rows: Vec::new(),
            right: Vec::new(),
        }
    }

    /// Right-aligns the columns at these positions (counted from 0).
    pub fn right_align(mut self, columns: &[usize]) -> Self {
        self.right = columns.to_vec();
        self
    }

    /// Adds a row, a cell per column.
    pub fn row(&mut self, cells: Vec<String>) {
        self.rows.push(cells);
    }

    /// The table as text: a line per row, cells two spaces apart, no trailing blanks.
    pub fn render(&self) -> String {
        let columns = self.header.len();
        let mut widths: Vec<usize> = self.header.iter().map(|h| h.chars().count()).collect();
        for r in &self.rows {
            for (i, c) in r.iter().enumerate().take(columns) {
                widths[i] = widths[i].max(c.chars().count());
            }
        }
        let mut out = String::new();
        for r in std::iter::once(&self.header).chain(&self.rows) {
            let mut line = String::new();
            for (i, c) in r.iter().enumerate().take(columns) {
                if i > 0 {
                    line.push_str("  ");
                }
                let pad = widths[i] - c.chars().count();
                if self.right.contains(&i) {
                    line.push_str(&" ".repeat(pad));
                    line.push_str(c);
                } else {
                    line.push_str(c);
                    if i + 1 < columns {
                        line.push_str(&" ".repeat(pad));
                    }
                }
            }
            out.push_str(line.trim_end());
            out.push('\n');
        }
        out
    }

    /// The table as values separated by `sep`, a line per row, each cell as [`csv_cell`].
    pub fn separated(&self, sep: &str) -> String {
        std::iter::once(&self.header)
            .chain(&self.rows)
            .map(|r| {
                let cells: Vec<String> = r.iter().map(|c| csv_cell(c, sep)).collect();
                cells.join(sep) + "\n"
            })
            .collect()
    }
}

/// A cell of separated values: in quotes, its own quotes doubled, where it holds `sep` or a
/// quote (RFC 4180); as it is otherwise.
pub fn csv_cell(cell: &str, sep: &str) -> String {
    if cell.contains(sep) || cell.contains('"') {
        format!("\"{}\"", cell.replace('"', "\"\""))
    } else {
        cell.to_string()
    }
}
