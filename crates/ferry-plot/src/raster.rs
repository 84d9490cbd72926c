//! Draws the shapes of a chart into an RGB buffer and encodes it as PNG. No anti-aliasing
//! and no fonts from the system: text comes from the built-in bitmap font, so the output is
//! the same bytes on every machine.

use crate::font;
use crate::scene::{Anchor, Marker, Rgb, Shape, BLACK, CHAR_W, HEIGHT, TEXT_SCALE, WIDTH};

/// An RGB image, three bytes per pixel, rows top to bottom.
pub(crate) struct Canvas {
    width: usize,
    height: usize,
    pixels: Vec<u8>,
}

/// The pixel holding coordinate `v`. Far-off coordinates are pulled in so that a line to
/// them stays a bounded amount of work.
fn cell(v: f64) -> i64 {
    let limit = 4.0 * WIDTH.max(HEIGHT) as f64;
    v.clamp(-limit, limit).floor() as i64
}

impl Canvas {
    pub fn draw(shapes: &[Shape]) -> Canvas {
        let (width, height) = (WIDTH as usize, HEIGHT as usize);
        let mut canvas = Canvas {
            width,
            height,
            pixels: vec![255; width * height * 3],
        };
        for shape in shapes {
            canvas.shape(shape);
        }
        canvas
    }

    fn set(&mut self, x: i64, y: i64, c: Rgb) {
        if (0..self.width as i64).contains(&x) && (0..self.height as i64).contains(&y) {
            let i = (y as usize * self.width + x as usize) * 3;
            self.pixels[i..i + 3].copy_from_slice(&c);
        }
    }

    fn shape(&mut self, shape: &Shape) {
        match shape {
            Shape::Rect {
                x,
                y,
                w,
                h,
                fill,
                stroke,
            } => {
                let (x0, y0, x1, y1) = (cell(*x), cell(*y), cell(x + w), cell(y + h));
                if let Some(c) = fill {
                    for py in y0..y1 {
                        for px in x0..x1 {
                            self.set(px, py, *c);
                        }
                    }
                }
                if let Some(c) = stroke {
                    let corners = [(x0, y0), (x1, y0), (x1, y1), (x0, y1), (x0, y0)];
                    for pair in corners.windows(2) {
                        self.line(pair[0], pair[1], *c, 1);
                    }
                }
            }
            Shape::Line {
                points,
                colour,
                width,
            } => {
                for pair in points.windows(2) {
                    let (a, b) = (pair[0], pair[1]);
                    let width = width.round().max(1.0) as i64;
                    self.line(
                        (cell(a.0), cell(a.1)),
                        (cell(b.0), cell(b.1)),
                        *colour,
                        width,
                    );
                }
            }
            Shape::Marker {
                x,
                y,
                marker,
                colour,
            } => {
                let (cx, cy) = (cell(*x), cell(*y));
                for dy in -4i64..=4 {
                    for dx in -4i64..=4 {
                        let on = match marker {
                            Marker::Circle => dx * dx + dy * dy <= 12,
                            Marker::Square => dx.abs() <= 3 && dy.abs() <= 3,
                            Marker::Diamond => dx.abs() + dy.abs() <= 4,
                        };
                        if on {
                            self.set(cx + dx, cy + dy, *colour);
                        }
                    }
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
                self.text(*x, *y, text, *anchor, *vertical);
                if *bold {
                    self.text(x + 1.0, *y, text, *anchor, *vertical);
                }
            }
        }
    }

    /// Bresenham's line, each step stamped with a `width` x `width` square.
    fn line(&mut self, (x0, y0): (i64, i64), (x1, y1): (i64, i64), c: Rgb, width: i64) {
        let (dx, dy) = ((x1 - x0).abs(), -(y1 - y0).abs());
        let (sx, sy) = ((x1 - x0).signum(), (y1 - y0).signum());
        let (mut x, mut y, mut err) = (x0, y0, dx + dy);
        let lo = -width / 2;
        loop {
            for oy in lo..lo + width {
                for ox in lo..lo + width {
                    self.set(x + ox, y + oy, c);
                }
            }
            if x == x1 && y == y1 {
                break;
            }
            let e2 = 2 * err;
            if e2 >= dy {
                err += dy;
                x += sx;
            }
            if e2 <= dx {
                err += dx;
                y += sy;
            }
        }
    }

    /// Text in black; `(x, y)` is the anchor point on the top edge of the cells (the left
    /// edge for vertical text, which reads bottom to top).
    fn text(&mut self, x: f64, y: f64, text: &str, anchor: Anchor, vertical: bool) {
        let s = TEXT_SCALE as i64;
        // The last cell's spacing column is not part of the text's visible width.
        let len = text.chars().count() as f64 * CHAR_W - s as f64;
        let shift = match anchor {
            Anchor::Start => 0.0,
            Anchor::Middle => len / 2.0,
            Anchor::End => len,
        };
        let (x, y) = if vertical {
            (cell(x), cell(y + shift))
        } else {
            (cell(x - shift), cell(y))
        };
        let advance = (font::COLS as i64 + 1) * s;
        for (i, ch) in text.chars().enumerate() {
            let along = i as i64 * advance;
            for (row, bits) in font::glyph(ch).iter().enumerate() {
                for col in 0..font::COLS {
                    if bits & (1 << (font::COLS - 1 - col)) == 0 {
                        continue;
                    }
                    let (u, v) = (along + col as i64 * s, row as i64 * s);
                    for (du, dv) in (0..s).flat_map(|du| (0..s).map(move |dv| (du, dv))) {
                        if vertical {
                            self.set(x + v + dv, y - u - du - 1, BLACK);
                        } else {
                            self.set(x + u + du, y + v + dv, BLACK);
                        }
                    }
                }
            }
        }
    }

    pub fn to_png(&self) -> Vec<u8> {
        let mut out = Vec::new();
        let mut encoder = png::Encoder::new(&mut out, self.width as u32, self.height as u32);
        encoder.set_color(png::ColorType::Rgb);
        encoder.set_depth(png::BitDepth::Eight);
        let mut writer = encoder
            .write_header()
            .expect("a PNG header always fits in memory");
        writer
            .write_image_data(&self.pixels)
            .expect("the buffer holds exactly width x height RGB pixels");
        writer
            .finish()
            .expect("finishing a PNG in memory cannot fail");
        out
    }
}
