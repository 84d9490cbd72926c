//! Lays a chart out as a list of shapes in pixel coordinates. Both back ends draw the same
//! list, so SVG and PNG agree on everything but glyph shapes. Text is measured with the
//! bitmap font at twice its size, which the SVG text fits inside.

use crate::axis::{usable, Axis};
use crate::{font, Chart};

pub(crate) const WIDTH: u32 = 800;
pub(crate) const HEIGHT: u32 = 500;
/// Size of one character cell: the 5x7 glyph plus a column of spacing, doubled; descenders
/// hang below it.
pub(crate) const TEXT_SCALE: usize = 2;
pub(crate) const CHAR_W: f64 = ((font::COLS + 1) * TEXT_SCALE) as f64;
pub(crate) const CHAR_H: f64 = (font::CAP_ROWS * TEXT_SCALE) as f64;

pub(crate) type Rgb = [u8; 3];
pub(crate) const BLACK: Rgb = [0, 0, 0];
pub(crate) const WHITE: Rgb = [255, 255, 255];
const GRID: Rgb = [225, 225, 225];
const FRAME: Rgb = [110, 110, 110];

/// Ten colours that stay apart from each other; series past the tenth reuse them with
/// another marker shape.
const PALETTE: [Rgb; 10] = [
    [31, 119, 180],
    [255, 127, 14],
    [44, 160, 44],
    [214, 39, 40],
    [148, 103, 189],
    [140, 86, 75],
    [227, 119, 194],
    [127, 127, 127],
    [188, 189, 34],
    [23, 190, 207],
];

#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Marker {
    Circle,
    Square,
    Diamond,
}

pub(crate) fn style(series: usize) -> (Rgb, Marker) {
    const MARKERS: [Marker; 3] = [Marker::Circle, Marker::Square, Marker::Diamond];
    (
        PALETTE[series % PALETTE.len()],
        MARKERS[(series / PALETTE.len()) % MARKERS.len()],
    )
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Anchor {
    Start,
    Middle,
    End,
}

/// Something to draw. `Text` is placed by the top of its character cells; `vertical` text
/// reads bottom to top, with `x` at the top of its cells.
#[derive(Clone, Debug)]
pub(crate) enum Shape {
    Rect {
        x: f64,
        y: f64,
        w: f64,
        h: f64,
        fill: Option<Rgb>,
        stroke: Option<Rgb>,
    },
    Line {
        points: Vec<(f64, f64)>,
        colour: Rgb,
        width: f64,
    },
    Marker {
        x: f64,
        y: f64,
        marker: Marker,
        colour: Rgb,
    },
    Text {
        x: f64,
        y: f64,
        text: String,
        anchor: Anchor,
        vertical: bool,
        bold: bool,
    },
}

fn text_width(s: &str) -> f64 {
    s.chars().count() as f64 * CHAR_W
}

/// `s`, cut short with "..." if it is wider than `width`.
fn fit(s: &str, width: f64) -> String {
    let max = (width / CHAR_W).max(4.0) as usize;
    if s.chars().count() <= max {
        s.to_string()
    } else {
        s.chars().take(max - 3).chain("...".chars()).collect()
    }
}

fn text(x: f64, y: f64, s: &str, anchor: Anchor) -> Shape {
    Shape::Text {
        x,
        y,
        text: s.to_string(),
        anchor,
        vertical: false,
        bold: false,
    }
}

fn hairline(from: (f64, f64), to: (f64, f64), colour: Rgb) -> Shape {
    Shape::Line {
        points: vec![from, to],
        colour,
        width: 1.0,
    }
}

/// The chart as shapes, back to front.
pub(crate) fn scene(chart: &Chart) -> Vec<Shape> {
    let (w, h) = (WIDTH as f64, HEIGHT as f64);
    let usable_point = |&(x, y): &(f64, f64)| usable(chart.x_scale, x) && usable(chart.y_scale, y);
    let points: Vec<Vec<(f64, f64)>> = chart
        .series
        .iter()
        .map(|s| s.points.iter().copied().filter(usable_point).collect())
        .collect();
    let x_axis = Axis::new(chart.x_scale, points.iter().flatten().map(|p| p.0));
    let y_axis = Axis::new(chart.y_scale, points.iter().flatten().map(|p| p.1));

    // Margins: title on top; y label, y tick labels and ticks on the left; ticks, x tick
    // labels and x label below; half the last x tick label on the right.
    const PAD: f64 = 12.0;
    const TICK: f64 = 5.0;
    let widest_y = y_axis
        .ticks
        .iter()
        .map(|t| text_width(&t.label))
        .fold(0.0, f64::max);
    let last_x = x_axis.ticks.last().map_or(0.0, |t| text_width(&t.label));
    let left = PAD + CHAR_H + 10.0 + widest_y + 6.0 + TICK;
    let right = w - PAD.max(last_x / 2.0 + 6.0);
    let top = PAD + CHAR_H + 16.0;
    let bottom = h - (PAD + CHAR_H + 10.0 + CHAR_H + 6.0 + TICK);
    let px = |x: f64| left + x_axis.fraction(x) * (right - left);
    let py = |y: f64| bottom - y_axis.fraction(y) * (bottom - top);

    let mut shapes = vec![Shape::Rect {
        x: 0.0,
        y: 0.0,
        w,
        h,
        fill: Some(WHITE),
        stroke: None,
    }];
    for t in &x_axis.ticks {
        let x = px(t.value);
        shapes.push(hairline((x, top), (x, bottom), GRID));
        shapes.push(hairline((x, bottom), (x, bottom + TICK), BLACK));
        shapes.push(text(x, bottom + TICK + 6.0, &t.label, Anchor::Middle));
    }
    for t in &y_axis.ticks {
        let y = py(t.value);
        shapes.push(hairline((left, y), (right, y), GRID));
        shapes.push(hairline((left - TICK, y), (left, y), BLACK));
        shapes.push(text(
            left - TICK - 6.0,
            y - CHAR_H / 2.0,
            &t.label,
            Anchor::End,
        ));
    }
    shapes.push(Shape::Rect {
        x: left,
        y: top,
        w: right - left,
        h: bottom - top,
        fill: None,
        stroke: Some(FRAME),
    });
    let title = Shape::Text {
        x: w / 2.0,
        y: PAD,
        text: fit(&chart.title, w - 2.0 * PAD),
        anchor: Anchor::Middle,
        vertical: false,
        bold: true,
    };
    shapes.push(title);
    shapes.push(text(
        (left + right) / 2.0,
        h - PAD - CHAR_H,
        &fit(&chart.x_label, right - left),
        Anchor::Middle,
    ));
    shapes.push(Shape::Text {
        x: PAD,
        y: (top + bottom) / 2.0,
        text: fit(&chart.y_label, bottom - top),
        anchor: Anchor::Middle,
        vertical: true,
        bold: false,
    });

    let pixels: Vec<Vec<(f64, f64)>> = points
        .iter()
        .map(|s| s.iter().map(|&(x, y)| (px(x), py(y))).collect())
        .collect();
    for (i, line) in pixels.iter().enumerate() {
        let (colour, marker) = style(i);
        if line.len() > 1 {
            shapes.push(Shape::Line {
                points: line.clone(),
                colour,
                width: 2.0,
            });
        }
        for &(x, y) in line {
            shapes.push(Shape::Marker {
                x,
                y,
                marker,
                colour,
            });
        }
    }
    shapes.extend(legend(chart, &pixels, (left, top, right, bottom)));
    shapes
}

/// A boxed legend in the corner of the plot area that hides the fewest data.
fn legend(chart: &Chart, pixels: &[Vec<(f64, f64)>], plot: (f64, f64, f64, f64)) -> Vec<Shape> {
    const ROW: f64 = CHAR_H + 8.0;
    const SWATCH: f64 = 24.0;
    if chart.series.is_empty() {
        return Vec::new();
    }
    let (left, top, right, bottom) = plot;
    // Long names are cut so the box never covers more than two thirds of the plot's width.
    let room = (right - left) * 2.0 / 3.0 - SWATCH - 28.0;
    let names: Vec<String> = chart.series.iter().map(|s| fit(&s.name, room)).collect();
    let bw = 10.0 + SWATCH + 8.0 + names.iter().map(|n| text_width(n)).fold(0.0, f64::max) + 10.0;
    let bh = 8.0 + ROW * names.len() as f64;
    let corners = [
        (right - 8.0 - bw, top + 8.0),
        (left + 8.0, top + 8.0),
        (right - 8.0 - bw, bottom - 8.0 - bh),
        (left + 8.0, bottom - 8.0 - bh),
    ];
    // Count points, and samples along the lines between them, inside each candidate box.
    let hidden = |&(bx, by): &(f64, f64)| {
        let inside = |(x, y): (f64, f64)| x >= bx && x <= bx + bw && y >= by && y <= by + bh;
        let samples = pixels.iter().flat_map(|s| {
            s.windows(2).flat_map(|w| {
                let ((x0, y0), (x1, y1)) = (w[0], w[1]);
                (0..8).map(move |k| {
                    let t = k as f64 / 8.0;
                    (x0 + t * (x1 - x0), y0 + t * (y1 - y0))
                })
            })
        });
        pixels
            .iter()
            .flatten()
            .copied()
            .chain(samples)
            .filter(|&p| inside(p))
            .count()
    };
    let &(bx, by) = corners
        .iter()
        .min_by_key(|c| hidden(c))
        .expect("there are four corners");

    let mut shapes = vec![Shape::Rect {
        x: bx,
        y: by,
        w: bw,
        h: bh,
        fill: Some(WHITE),
        stroke: Some(FRAME),
    }];
    for (i, name) in names.iter().enumerate() {
        let (colour, marker) = style(i);
        let y = by + 8.0 + ROW * i as f64;
        let mid = y + CHAR_H / 2.0;
        let (x0, x1) = (bx + 10.0, bx + 10.0 + SWATCH);
        shapes.push(Shape::Line {
            points: vec![(x0, mid), (x1, mid)],
            colour,
            width: 2.0,
        });
        shapes.push(Shape::Marker {
            x: (x0 + x1) / 2.0,
            y: mid,
            marker,
            colour,
        });
        shapes.push(text(x1 + 8.0, y, name, Anchor::Start));
    }
    shapes
}
