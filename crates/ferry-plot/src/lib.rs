//! Line charts for `ferry sim --plot` and `ferry bench --plot`: one line per series, with
//! markers at the data points, ticked linear or logarithmic axes, a title and a legend.
//! Charts are written as SVG text or as PNG; the PNG is rasterised here with a built-in
//! bitmap font, so it needs no fonts or graphics libraries on the machine.
//!
//! Points that cannot be placed (non-finite, or not positive on a log axis) are skipped;
//! empty and single-point charts still render. Output is deterministic: the same chart
//! gives the same bytes.
//!
//! ```
//! let chart = ferry_plot::Chart::new("allreduce, 8 ranks", "message size (bytes)", "time (us)")
//!     .log_x()
//!     .log_y()
//!     .series("ring", vec![(8.0, 12.0), (1024.0, 30.0), (1048576.0, 2100.0)]);
//! assert!(chart.to_svg().contains("ring"));
//! ```

mod axis;
mod font;
mod raster;
mod scene;
mod svg;

use std::path::{Path, PathBuf};

/// One line of a chart: a name for the legend and `(x, y)` points, joined in order.
#[derive(Clone, Debug, PartialEq)]
pub struct Series {
    pub name: String,
    pub points: Vec<(f64, f64)>,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Scale {
    Linear,
    /// Base 10, ticked at decades.
    Log,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Chart {
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    pub x_scale: Scale,
    pub y_scale: Scale,
    pub series: Vec<Series>,
}

#[derive(Debug, thiserror::Error)]
pub enum PlotError {
    #[error("{}: unsupported chart format; the file name must end in .svg or .png", path.display())]
    UnsupportedFormat { path: PathBuf },
    #[error("cannot write chart to {}: {source}", path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
}

impl Chart {
    /// A chart with linear axes and no series.
    pub fn new(
        title: impl Into<String>,
        x_label: impl Into<String>,
        y_label: impl Into<String>,
    ) -> Chart {
        Chart {
            title: title.into(),
            x_label: x_label.into(),
            y_label: y_label.into(),
            x_scale: Scale::Linear,
            y_scale: Scale::Linear,
            series: Vec::new(),
        }
    }

    #[must_use]
    pub fn log_x(self) -> Chart {
        Chart {
            x_scale: Scale::Log,
            ..self
        }
    }

    #[must_use]
    pub fn log_y(self) -> Chart {
        Chart {
            y_scale: Scale::Log,
            ..self
        }
    }

    #[must_use]
    pub fn series(mut self, name: impl Into<String>, points: Vec<(f64, f64)>) -> Chart {
        self.series.push(Series {
            name: name.into(),
            points,
        });
        self
    }

    pub fn to_svg(&self) -> String {
        svg::render(&scene::scene(self))
    }

    /// The chart as encoded PNG bytes (RGB, 8 bits per channel).
    pub fn to_png(&self) -> Vec<u8> {
        raster::Canvas::draw(&scene::scene(self)).to_png()
    }

    /// Writes SVG or PNG by the extension of `path` (.svg / .png, case-insensitive); any other
    /// extension is an error naming the path and the accepted ones.
    pub fn write(&self, path: &Path) -> Result<(), PlotError> {
        let ext = path
            .extension()
            .and_then(|e| e.to_str())
            .map(str::to_ascii_lowercase);
        let bytes = match ext.as_deref() {
            Some("svg") => self.to_svg().into_bytes(),
            Some("png") => self.to_png(),
            _ => {
                return Err(PlotError::UnsupportedFormat {
                    path: path.to_path_buf(),
                })
            }
        };
        std::fs::write(path, bytes).map_err(|source| PlotError::Io {
            path: path.to_path_buf(),
            source,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scene::{Shape, HEIGHT, WIDTH};

    const PNG_SIGNATURE: [u8; 8] = [0x89, b'P', b'N', b'G', b'\r', b'\n', 0x1a, b'\n'];

    fn sample() -> Chart {
        Chart::new(
            "allgather <8 ranks> & \"friends\"",
            "size (bytes)",
            "time (us)",
        )
        .log_x()
        .log_y()
        .series(
            "ring",
            vec![(1.0, 5.0), (1024.0, 40.0), (1048576.0, 9000.0)],
        )
        .series(
            "bruck's <k=2>",
            vec![(1.0, 3.0), (1024.0, 60.0), (1048576.0, 15000.0)],
        )
    }

    /// Checks that every tag is closed in order and that no text or attribute holds a raw
    /// `<`, `>` or a bare `&`.
    fn assert_well_formed(xml: &str) {
        let mut open: Vec<&str> = Vec::new();
        let mut rest = xml;
        while let Some(start) = rest.find('<') {
            assert!(
                !rest[..start].contains('>'),
                "stray '>' before {:?}",
                &rest[start..]
            );
            let end = start + rest[start..].find('>').expect("unterminated tag");
            let tag = &rest[start + 1..end];
            assert!(!tag.contains('<'), "'<' inside tag {tag:?}");
            assert_eq!(
                tag.matches('"').count() % 2,
                0,
                "unbalanced quotes in {tag:?}"
            );
            if let Some(closing) = tag.strip_prefix('/') {
                assert_eq!(open.pop(), Some(closing), "mismatched </{closing}>");
            } else if !tag.starts_with('?') && !tag.ends_with('/') {
                open.push(tag.split_whitespace().next().expect("tag has a name"));
            }
            rest = &rest[end + 1..];
        }
        assert!(open.is_empty(), "unclosed tags {open:?}");
        for (i, _) in xml.match_indices('&') {
            let entity = &xml[i..xml[i..].find(';').map_or(xml.len(), |j| i + j + 1)];
            assert!(
                ["&amp;", "&lt;", "&gt;", "&quot;", "&apos;"].contains(&entity),
                "bare & at {entity:?}"
            );
        }
    }

    fn decode(bytes: &[u8]) -> (png::OutputInfo, Vec<u8>) {
        let mut reader = png::Decoder::new(std::io::Cursor::new(bytes))
            .read_info()
            .expect("valid PNG");
        let mut buf = vec![0; reader.output_buffer_size().expect("size fits in memory")];
        let info = reader.next_frame(&mut buf).expect("one frame");
        (info, buf)
    }

    #[test]
    fn svg_is_well_formed_escaped_and_names_every_series() {
        let svg = sample().to_svg();
        assert_well_formed(&svg);
        assert!(svg.contains("allgather &lt;8 ranks&gt; &amp; &quot;friends&quot;"));
        assert!(svg.contains(">ring</text>"));
        assert!(svg.contains(">bruck&apos;s &lt;k=2&gt;</text>"));
        for label in [">1<", ">1k<", ">1M<", ">10k<"] {
            assert!(svg.contains(label), "no tick label {label}");
        }
        let odd = Chart::new("bell\u{7}", "", "")
            .series("tab\there", vec![(1.0, 1.0)])
            .to_svg();
        assert_well_formed(&odd);
        assert!(odd.contains("bell?"));
    }

    #[test]
    fn points_that_cannot_be_placed_are_skipped() {
        let chart = Chart::new("t", "x", "y").log_x().log_y().series(
            "s",
            vec![
                (f64::NAN, 1.0),
                (1.0, f64::INFINITY),
                (0.0, 1.0),
                (10.0, -5.0),
                (f64::NEG_INFINITY, 2.0),
                (10.0, 100.0),
                (100.0, 1000.0),
            ],
        );
        let markers = |c: &Chart| {
            scene::scene(c)
                .iter()
                .filter(|s| matches!(s, Shape::Marker { .. }))
                .count()
        };
        // Two good points and the one in the legend.
        assert_eq!(markers(&chart), 3);
        assert!(chart.to_svg().contains(">10<"));
        decode(&chart.to_png());
        let linear = Chart {
            x_scale: Scale::Linear,
            y_scale: Scale::Linear,
            ..chart
        };
        assert_eq!(markers(&linear), 5);
    }

    #[test]
    fn degenerate_charts_still_render() {
        let charts = [
            Chart::new("", "", ""),
            Chart::new("t", "x", "y").log_x().log_y(),
            Chart::new("t", "x", "y").series("empty", vec![]),
            Chart::new("t", "x", "y").series("one", vec![(3.0, 7.0)]),
            Chart::new("t", "x", "y")
                .log_y()
                .series("one", vec![(3.0, 7.0)]),
            Chart::new("t", "x", "y").series("flat", vec![(1.0, 2.0), (2.0, 2.0), (3.0, 2.0)]),
            Chart::new("t", "x", "y").series("zero", vec![(0.0, 0.0), (0.0, 0.0)]),
            Chart::new("t", "x", "y").series("huge", vec![(-1e308, 1e-300), (1e308, 1e300)]),
        ];
        let long = Chart::new("t".repeat(300), "x".repeat(300), "y".repeat(300))
            .series("s".repeat(300), vec![(1.0, 1.0)]);
        let svg = long.to_svg();
        for c in ["t", "x", "y", "s"] {
            assert!(
                svg.contains(&format!("{}...</text>", c.repeat(20))),
                "{c} not cut"
            );
            assert!(!svg.contains(&c.repeat(100)), "{c} too long");
        }
        for chart in charts.into_iter().chain([long]) {
            assert_well_formed(&chart.to_svg());
            assert!(!chart.to_svg().contains("NaN"), "{chart:?}");
            let (info, _) = decode(&chart.to_png());
            assert_eq!((info.width, info.height), (WIDTH, HEIGHT));
        }
    }

    #[test]
    fn png_decodes_to_the_chart_with_lines_in_series_colours() {
        let chart = Chart::new("t", "x", "y").series("up", vec![(0.0, 0.0), (10.0, 10.0)]);
        let bytes = chart.to_png();
        assert_eq!(bytes[..8], PNG_SIGNATURE);
        let (info, pixels) = decode(&bytes);
        assert_eq!((info.width, info.height), (WIDTH, HEIGHT));
        assert_eq!(info.color_type, png::ColorType::Rgb);

        let (colour, _) = scene::style(0);
        let (a, b) = scene::scene(&chart)
            .into_iter()
            .find_map(|s| match s {
                Shape::Line {
                    points,
                    colour: c,
                    width,
                } if c == colour && width > 1.0 => Some((points[0], points[1])),
                _ => None,
            })
            .expect("the series is drawn as a line");
        let at = |x: f64, y: f64| {
            let i = (y as usize * WIDTH as usize + x as usize) * 3;
            [pixels[i], pixels[i + 1], pixels[i + 2]]
        };
        // Along the line, away from the markers at either end.
        for t in [0.3, 0.5, 0.7] {
            assert_eq!(
                at(a.0 + t * (b.0 - a.0), a.1 + t * (b.1 - a.1)),
                colour,
                "t = {t}"
            );
        }
        // Off the line, inside the plot but away from grid and legend.
        assert_eq!(
            at(a.0 + 0.6 * (b.0 - a.0) + 7.0, a.1 + 0.4 * (b.1 - a.1) + 3.0),
            scene::WHITE
        );
    }

    #[test]
    fn output_is_deterministic() {
        assert_eq!(sample().to_svg(), sample().to_svg());
        assert_eq!(sample().to_png(), sample().to_png());
        let many = (0..25).fold(Chart::new("t", "x", "y"), |c, i| {
            c.series(
                format!("s{i}"),
                vec![(i as f64, 1.0), (i as f64 + 1.0, 2.0)],
            )
        });
        assert_eq!(many.to_png(), many.clone().to_png());
        let styles: std::collections::HashSet<_> =
            (0..25).map(|i| format!("{:?}", scene::style(i))).collect();
        assert_eq!(styles.len(), 25);
    }

    #[test]
    fn write_picks_the_format_by_extension() {
        let dir = std::env::temp_dir().join(format!("ferry-plot-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir is writable");
        let chart = sample();
        chart.write(&dir.join("a.svg")).expect("svg written");
        chart.write(&dir.join("b.PNG")).expect("png written");
        let svg = std::fs::read(dir.join("a.svg")).expect("svg readable");
        let png = std::fs::read(dir.join("b.PNG")).expect("png readable");
        assert_eq!(svg, chart.to_svg().into_bytes());
        assert_eq!(png, chart.to_png());

        for bad in ["c.jpg", "noext", "d.svg.txt"] {
            let path = dir.join(bad);
            let err = chart.write(&path).expect_err("unsupported extension");
            assert!(matches!(err, PlotError::UnsupportedFormat { .. }));
            let msg = err.to_string();
            assert!(
                msg.contains(bad) && msg.contains(".svg") && msg.contains(".png"),
                "{msg}"
            );
            assert!(!path.exists());
        }
        let err = chart
            .write(&dir.join("missing/e.svg"))
            .expect_err("no such directory");
        assert!(matches!(err, PlotError::Io { .. }));
        std::fs::remove_dir_all(&dir).expect("temp dir removable");
    }
}
