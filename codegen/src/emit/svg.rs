//! SVG bit-field diagrams: one picture per register layout, 32 bits per row, most significant
//! bit on the left, each field a labelled box, reserved fields shaded.

use crate::model::{Access, Register};

const CELL: u32 = 28;
const ROW_HEIGHT: u32 = 74;
const MARGIN: u32 = 10;

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// The diagram of one register.
pub fn register_svg(reg: &Register) -> String {
    let rows = reg.width / 32;
    let width = MARGIN * 2 + CELL * 32;
    let height = MARGIN * 2 + ROW_HEIGHT * rows + 18;
    let mut s = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{height}\" viewBox=\"0 0 {width} {height}\" font-family=\"monospace\" font-size=\"11\">\n"
    );
    s.push_str(&format!(
        "<title>{}</title>\n<rect width=\"{width}\" height=\"{height}\" fill=\"white\"/>\n",
        escape(&reg.name)
    ));
    for row in 0..rows {
        // Row 0 is the top row and shows the highest 32 bits.
        let hi = reg.width - 1 - row * 32;
        let lo = hi - 31;
        let y = MARGIN + row * ROW_HEIGHT;
        // Bit numbers above the row.
        for bit in lo..=hi {
            let x = MARGIN + (hi - bit) * CELL + CELL / 2;
            s.push_str(&format!(
                "<text x=\"{x}\" y=\"{}\" text-anchor=\"middle\" fill=\"#555\">{bit}</text>\n",
                y + 12
            ));
        }
        for f in &reg.fields {
            if f.msb < lo || f.lsb > hi {
                continue;
            }
            // The part of the field inside this row.
            let (fhi, flo) = (f.msb.min(hi), f.lsb.max(lo));
            let x = MARGIN + (hi - fhi) * CELL;
            let w = (fhi - flo + 1) * CELL;
            let fill = match f.access {
                Access::Rsv | Access::Rv => "#d9d9d9",
                Access::Ig => "#eeeeee",
                Access::Ro | Access::RoV => "#dbe9f6",
                Access::Wo | Access::W1c => "#fbe5c8",
                Access::Rw | Access::RwV => "#e2f0d9",
            };
            // The title shows the full name on hover when the label had to be cut.
            s.push_str(&format!(
                "<rect x=\"{x}\" y=\"{}\" width=\"{w}\" height=\"30\" fill=\"{fill}\" stroke=\"black\"><title>{} ({}, {})</title></rect>\n",
                y + 18,
                escape(&f.name),
                f.bits_phrase(),
                f.access.as_str()
            ));
            // Long names are cut to fit the box.
            let max_chars = (w / 7).max(1) as usize;
            let label: String = if f.name.len() > max_chars {
                f.name
                    .chars()
                    .take(max_chars.saturating_sub(1))
                    .collect::<String>()
                    + "…"
            } else {
                f.name.clone()
            };
            s.push_str(&format!(
                "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n",
                x + w / 2,
                y + 37,
                escape(&label)
            ));
            s.push_str(&format!(
                "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" fill=\"#555\" font-size=\"9\">{}</text>\n",
                x + w / 2,
                y + 60,
                escape(f.access.as_str())
            ));
        }
    }
    s.push_str(&format!(
        "<text x=\"{MARGIN}\" y=\"{}\" fill=\"#555\">green rw · blue ro · orange wo/w1c · grey reserved · light grey ignored</text>\n",
        height - 6
    ));
    s.push_str("</svg>\n");
    s
}
