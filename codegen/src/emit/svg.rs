//! SVG bit-field diagrams: a picture per register layout, 32 bits per row, most significant
//! bit on the left, each field a labelled box coloured by access, with the bit numbers of each
//! field's edges above it; a name too long for its box is a number there and an entry in the
//! key under the diagram. A unit's diagrams share one file, stacked and captioned, with a
//! `<view>` per register so `unit.svg#view-Type` shows one alone: one file per unit rather than
//! per register keeps generation fast where creating files is slow.

use std::fmt::Write;

use crate::model::{Access, Field, Register};

const CELL: u32 = 28;
const ROW_HEIGHT: u32 = 74;
const MARGIN: u32 = 10;

/// Shared styling, so each element carries only its position and class.
const STYLE: &str = "<style>text{text-anchor:middle}.n{fill:#555;font-size:10px}.a{fill:#555;font-size:9px}.c{text-anchor:start;font-weight:bold}\
rect{stroke:#000}.rw{fill:#e2f0d9}.ro{fill:#dbe9f6}.wo{fill:#fbe5c8}.rs{fill:#d9d9d9}.ig{fill:#eee}</style>";

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

fn class(access: Access) -> &'static str {
    match access {
        Access::Rsv | Access::Rv => "rs",
        Access::Ig => "ig",
        Access::Ro | Access::RoV => "ro",
        Access::Wo | Access::W1c | Access::Rw1c => "wo",
        Access::Rw | Access::RwV => "rw",
    }
}

/// Characters of the 11 px monospace font that fit in `px` pixels.
fn chars_in(px: u32) -> usize {
    (px / 7) as usize
}

/// Fields whose name does not fit in their box get a number shown in the box and a key entry
/// (`1 pmi_in_use`) under the diagram, so every name is readable in the picture itself.
/// Returns each field's number (0: the name fits) and the key's lines.
fn key(reg: &Register) -> (Vec<u32>, Vec<String>) {
    let mut numbers = Vec::with_capacity(reg.fields.len());
    let mut entries = Vec::new();
    for f in &reg.fields {
        // The narrowest part of the field in any row decides.
        let ranges = f.ranges();
        let w = (0..reg.width / 32)
            .flat_map(|row| {
                let (hi, lo) = (reg.width - 1 - row * 32, reg.width - 32 - row * 32);
                ranges
                    .iter()
                    .filter(move |r| r.msb >= lo && r.lsb <= hi)
                    .map(move |r| (r.msb.min(hi) - r.lsb.max(lo) + 1) * CELL)
            })
            .min()
            .unwrap_or(CELL);
        if f.name.chars().count() <= chars_in(w.saturating_sub(4)) {
            numbers.push(0);
        } else {
            let n = entries.len() as u32 + 1;
            numbers.push(n);
            entries.push(format!("{n} {} ({})", f.name, f.bits_phrase()));
        }
    }
    // Entries joined into lines as wide as the diagram.
    let per_line = chars_in(CELL * 32);
    let mut lines: Vec<String> = Vec::new();
    for e in entries {
        match lines.last_mut() {
            Some(l) if l.chars().count() + 3 + e.chars().count() <= per_line => {
                l.push_str(" · ");
                l.push_str(&e);
            }
            _ => lines.push(e),
        }
    }
    (numbers, lines)
}

/// Height of one register's diagram, caption and key included.
fn diagram_height(reg: &Register) -> u32 {
    24 + ROW_HEIGHT * (reg.width / 32) + 16 * key(reg).1.len() as u32
}

/// The diagrams of every register of a unit, in one SVG.
pub fn unit_svg(registers: &[Register]) -> String {
    let width = MARGIN * 2 + CELL * 32;
    let legend = 18;
    let height = MARGIN * 2 + registers.iter().map(diagram_height).sum::<u32>() + legend;
    let mut s = String::with_capacity(
        512 + registers
            .iter()
            .map(|r| r.fields.len() * 300)
            .sum::<usize>(),
    );
    // Writing to a String cannot fail.
    let _ = write!(
        s,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{height}\" viewBox=\"0 0 {width} {height}\" font-family=\"monospace\" font-size=\"11\">\n{STYLE}\n<rect width=\"{width}\" height=\"{height}\" fill=\"#fff\" stroke=\"none\"/>\n"
    );
    let mut y = MARGIN;
    for reg in registers {
        let h = diagram_height(reg);
        let _ = write!(
            s,
            "<view id=\"view-{}\" viewBox=\"0 {} {width} {}\"/>\n<text x=\"{MARGIN}\" y=\"{}\" class=\"c\">{}</text>\n",
            reg.type_name,
            y.saturating_sub(MARGIN),
            h + MARGIN,
            y + 12,
            escape(&reg.name)
        );
        let (numbers, key_lines) = key(reg);
        register_rows(reg, &numbers, y + 20, &mut s);
        let key_top = y + 20 + ROW_HEIGHT * (reg.width / 32);
        for (i, line) in key_lines.iter().enumerate() {
            let _ = writeln!(
                s,
                "<text x=\"{MARGIN}\" y=\"{}\" style=\"text-anchor:start\">{}</text>",
                key_top + 16 * i as u32,
                escape(line)
            );
        }
        y += h;
    }
    let _ = writeln!(
        s,
        "<text x=\"{MARGIN}\" y=\"{}\" class=\"n\" style=\"text-anchor:start\">green rw · blue ro · orange wo/w1c · grey reserved · light grey ignored</text>\n</svg>",
        height - 6
    );
    s
}

/// The rows of one register's diagram, starting at `top`.
fn register_rows(reg: &Register, numbers: &[u32], top: u32, s: &mut String) {
    let rows = reg.width / 32;
    for row in 0..rows {
        // Row 0 is the top row and shows the highest 32 bits.
        let hi = reg.width - 1 - row * 32;
        let lo = hi - 31;
        let y = top + row * ROW_HEIGHT;
        for (f, &number) in reg.fields.iter().zip(numbers) {
            for piece in pieces(f) {
                if piece.msb < lo || piece.lsb > hi {
                    continue;
                }
                field_box(f, &piece, number, (hi, lo, y), s);
            }
        }
    }
}

/// One contiguous piece of a field: a range of its bits, and for a field of several ranges the
/// value bits that range holds (`11:8`), so each piece is labelled as part of one field.
struct Piece {
    msb: u32,
    lsb: u32,
    value_bits: Option<String>,
}

/// A field's pieces, most significant first: the field itself, or each of its ranges.
fn pieces(f: &Field) -> Vec<Piece> {
    let ranges = f.ranges();
    let mut at = f.width();
    ranges
        .iter()
        .map(|r| {
            at -= r.width();
            let top = at + r.width() - 1;
            Piece {
                msb: r.msb,
                lsb: r.lsb,
                value_bits: f.is_split().then(|| {
                    if top == at {
                        format!("[{at}]")
                    } else {
                        format!("[{top}:{at}]")
                    }
                }),
            }
        })
        .collect()
}

/// One piece's box within the row of bits `hi` to `lo` at height `y`: its edge bit numbers
/// above it, the name (or its key number) and the access kind inside; a piece of a split field
/// adds the value bits it holds (`event[11:8]`).
fn field_box(f: &Field, piece: &Piece, number: u32, (hi, lo, y): (u32, u32, u32), s: &mut String) {
    // The part of the piece inside this row.
    let (fhi, flo) = (piece.msb.min(hi), piece.lsb.max(lo));
    let x = MARGIN + (hi - fhi) * CELL;
    let w = (fhi - flo + 1) * CELL;
    let bit_x = |bit: u32| MARGIN + (hi - bit) * CELL + CELL / 2;
    let _ = write!(
        s,
        "<text class=\"n\" x=\"{}\" y=\"{}\">{fhi}</text>",
        bit_x(fhi),
        y + 12
    );
    if flo != fhi {
        let _ = write!(
            s,
            "<text class=\"n\" x=\"{}\" y=\"{}\">{flo}</text>",
            bit_x(flo),
            y + 12
        );
    }
    // A name that does not fit shows as its number in the key below the diagram.
    let label = if number == 0 {
        f.name.to_string()
    } else {
        number.to_string()
    };
    // Under the name: the access kind, and for a piece of a split field its value bits.
    let under = match &piece.value_bits {
        Some(bits) => format!("{} {bits}", f.access.as_str()),
        None => f.access.as_str().to_string(),
    };
    let _ = write!(
        s,
        "\n<rect class=\"{}\" x=\"{x}\" y=\"{}\" width=\"{w}\" height=\"30\"><title>{} ({}, {})</title></rect><text x=\"{}\" y=\"{}\">{}</text><text class=\"a\" x=\"{}\" y=\"{}\">{}</text>\n",
        class(f.access),
        y + 18,
        escape(&f.name),
        f.bits_phrase(),
        f.access.as_str(),
        x + w / 2,
        y + 37,
        escape(&label),
        x + w / 2,
        y + 60,
        escape(&under)
    );
}
