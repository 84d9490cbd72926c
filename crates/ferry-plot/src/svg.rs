//! Writes the shapes of a chart as a standalone SVG document. Numbers are printed with one
//! decimal, so the same chart always gives the same text.

use std::fmt::Write;

use crate::scene::{Anchor, Marker, Rgb, Shape, CHAR_H, HEIGHT, WIDTH};

pub(crate) fn render(shapes: &[Shape]) -> String {
    let mut out = String::new();
    out.push_str("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    out.push_str(&format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{WIDTH}\" height=\"{HEIGHT}\" \
         viewBox=\"0 0 {WIDTH} {HEIGHT}\" font-family=\"sans-serif\" font-size=\"16\">\n"
    ));
    for shape in shapes {
        write_shape(&mut out, shape).expect("writing into a String cannot fail");
    }
    out.push_str("</svg>\n");
    out
}

fn write_shape(out: &mut String, shape: &Shape) -> std::fmt::Result {
    match shape {
        Shape::Rect {
            x,
            y,
            w,
            h,
            fill,
            stroke,
        } => writeln!(
            out,
            "<rect x=\"{x:.1}\" y=\"{y:.1}\" width=\"{w:.1}\" height=\"{h:.1}\" fill=\"{}\" \
             stroke=\"{}\" shape-rendering=\"crispEdges\"/>",
            fill.map_or("none".to_string(), colour),
            stroke.map_or("none".to_string(), colour),
        ),
        Shape::Line {
            points,
            colour: c,
            width,
        } => {
            let points: Vec<String> = points
                .iter()
                .map(|(x, y)| format!("{x:.1},{y:.1}"))
                .collect();
            let crisp = if *width <= 1.0 {
                " shape-rendering=\"crispEdges\""
            } else {
                ""
            };
            writeln!(
                out,
                "<polyline points=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"{width:.1}\" \
                 stroke-linejoin=\"round\"{crisp}/>",
                points.join(" "),
                colour(*c),
            )
        }
        Shape::Marker {
            x,
            y,
            marker,
            colour: c,
        } => {
            let c = colour(*c);
            match marker {
                Marker::Circle => {
                    writeln!(
                        out,
                        "<circle cx=\"{x:.1}\" cy=\"{y:.1}\" r=\"3.5\" fill=\"{c}\"/>"
                    )
                }
                Marker::Square => writeln!(
                    out,
                    "<rect x=\"{:.1}\" y=\"{:.1}\" width=\"7\" height=\"7\" fill=\"{c}\"/>",
                    x - 3.5,
                    y - 3.5
                ),
                Marker::Diamond => writeln!(
                    out,
                    "<polygon points=\"{x:.1},{:.1} {:.1},{y:.1} {x:.1},{:.1} {:.1},{y:.1}\" \
                     fill=\"{c}\"/>",
                    y - 4.5,
                    x + 4.5,
                    y + 4.5,
                    x - 4.5
                ),
            }
        }
        Shape::Text {
            x,
            y,
            text,
            anchor,
            vertical,
            bold,
        } => {
            let anchor = match anchor {
                Anchor::Start => "start",
                Anchor::Middle => "middle",
                Anchor::End => "end",
            };
            let weight = if *bold {
                " font-weight=\"bold\" font-size=\"18\""
            } else {
                ""
            };
            // The layout places text by the top of its cells; SVG places it by its baseline.
            let (bx, by, rotate) = if *vertical {
                let bx = x + CHAR_H;
                (bx, *y, format!(" transform=\"rotate(-90 {bx:.1} {y:.1})\""))
            } else {
                (*x, y + CHAR_H, String::new())
            };
            writeln!(
                out,
                "<text x=\"{bx:.1}\" y=\"{by:.1}\" text-anchor=\"{anchor}\"{weight}{rotate}>{}</text>",
                escape(text)
            )
        }
    }
}

fn colour([r, g, b]: Rgb) -> String {
    format!("#{r:02x}{g:02x}{b:02x}")
}

/// Text made safe for XML content and attributes; characters XML 1.0 forbids become `?`.
pub(crate) fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\t' | '\n' | '\r' => out.push(c),
            c if c < ' ' || c == '\u{fffe}' || c == '\u{ffff}' => out.push('?'),
            c => out.push(c),
        }
    }
    out
}
