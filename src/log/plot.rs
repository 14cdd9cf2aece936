//! `history --plot FILE`: each partition's committed offset over time, one step line per
//! topic-partition, with unexplained rewinds, restores and deletions marked, as SVG or PNG (by
//! the file's extension). What to draw is computed from the [`History`] first ([`Plot::of`],
//! pure); drawing it is plotters'. The PNG's text is set in the DejaVu Sans Mono font shipped in
//! `assets/fonts` (its licence beside it), so no system font is needed, and laid out by
//! [`super::plot_text`] (each glyph at its own bearing); the SVG names a generic font family and
//! leaves the text to the viewer.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use plotters::coord::Shift;
use plotters::prelude::*;

use crate::error::{Error, Result};
use crate::log::history::{ChangeKind, History};

/// Width and height of the picture (pixels; user units in SVG).
pub const SIZE: (u32, u32) = (1200, 600);
/// Partitions named in the legend; the others are counted in one more entry.
const LEGEND_PARTITIONS: usize = 16;

/// The picture's file format, from the extension of its path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PlotFormat {
    Svg,
    Png,
}

/// Where to write the plot, and in which format: checked before anything is read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlotTarget {
    pub path: PathBuf,
    pub format: PlotFormat,
}

impl PlotTarget {
    pub fn parse(path: &Path) -> Result<Self> {
        let ext = path
            .extension()
            .and_then(|e| e.to_str())
            .map(str::to_ascii_lowercase);
        let format = match ext.as_deref() {
            Some("svg") => PlotFormat::Svg,
            Some("png") => PlotFormat::Png,
            _ => {
                return Err(Error::usage(format!(
                    "--plot {}: the file name must end in .svg or .png (that picks the format)",
                    path.display()
                )))
            }
        };
        Ok(PlotTarget {
            path: path.to_path_buf(),
            format,
        })
    }
}

/// A point of the plot: (time in ms, offset).
pub type Point = (i64, i64);

/// One topic-partition's line: its runs of committed offsets as steps (a deletion ends a run).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Line {
    pub label: String,
    pub runs: Vec<Vec<Point>>,
}

/// Everything the picture shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plot {
    pub title: String,
    pub lines: Vec<Line>,
    pub rewinds: Vec<Point>,
    pub restores: Vec<Point>,
    /// Where a line ends because its offset (or the whole group) was deleted.
    pub deletions: Vec<Point>,
    /// The time and offset ranges shown.
    pub x: (i64, i64),
    pub y: (i64, i64),
}

impl Plot {
    /// What to draw for a history. Pure.
    pub fn of(h: &History) -> Plot {
        let mut lines: BTreeMap<(String, i32), Vec<Vec<Point>>> = BTreeMap::new();
        // The partitions whose line is running, and its last offset.
        let mut open: BTreeMap<(String, i32), i64> = BTreeMap::new();
        let (mut rewinds, mut restores, mut deletions) = (Vec::new(), Vec::new(), Vec::new());
        for c in &h.changes {
            let key = c.topic.clone().zip(c.partition);
            match (c.kind, key, c.offset) {
                (ChangeKind::GroupDeleted, _, _) => {
                    for (key, o) in std::mem::take(&mut open) {
                        end_run(&mut lines, &key, (c.at, o));
                        deletions.push((c.at, o));
                    }
                }
                (ChangeKind::Deletion, Some(key), _) => {
                    if let Some(o) = open.remove(&key) {
                        end_run(&mut lines, &key, (c.at, o));
                        deletions.push((c.at, o));
                    }
                }
                (kind, Some(key), Some(offset)) => {
                    let runs = lines.entry(key.clone()).or_default();
                    match open.insert(key, offset) {
                        // A step: along at the old offset, then up or down to the new one.
                        Some(before) => {
                            let run = runs.last_mut().expect("an open line has a run");
                            run.push((c.at, before));
                            run.push((c.at, offset));
                        }
                        None => runs.push(vec![(c.at, offset)]),
                    }
                    match kind {
                        ChangeKind::Rewind => rewinds.push((c.at, offset)),
                        ChangeKind::Restore => restores.push((c.at, offset)),
                        _ => {}
                    }
                }
                _ => {}
            }
        }
        let times = h.changes.iter().map(|c| c.at);
        let (first, last) = (times.clone().min().unwrap_or(0), times.max().unwrap_or(0));
        // The committed offset holds until the next change: running lines reach the end.
        let end = last + ((last - first) / 50).max(1_000);
        for (key, offset) in &open {
            end_run(&mut lines, key, (end, *offset));
        }
        let top = lines
            .values()
            .flatten()
            .flatten()
            .map(|p| p.1)
            .max()
            .unwrap_or(0);
        Plot {
            title: format!(
                "group {}: committed offsets ({} change(s))",
                h.group,
                h.changes.len()
            ),
            lines: lines
                .into_iter()
                .map(|((topic, partition), runs)| Line {
                    label: format!("{topic}[{partition}]"),
                    runs,
                })
                .collect(),
            rewinds,
            restores,
            deletions,
            x: (first - ((last - first) / 50).max(1_000), end),
            y: (0, top + (top / 10).max(1)),
        }
    }
}

/// Ends the running line of a partition at `at` (its offset holds until then).
fn end_run(lines: &mut BTreeMap<(String, i32), Vec<Vec<Point>>>, key: &(String, i32), at: Point) {
    if let Some(run) = lines.get_mut(key).and_then(|r| r.last_mut()) {
        run.push(at);
    }
}

/// Colours of the lines (the "tab10" set without its red, which marks rewinds).
const LINE_COLORS: [RGBColor; 9] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
    RGBColor(188, 189, 34),
    RGBColor(23, 190, 207),
];
const REWIND_COLOR: RGBColor = RGBColor(214, 39, 40);
const MARK_SIZE: i32 = 6;

/// The font for the text of both backends: registered once, under the family plotters uses
/// for "sans-serif".
fn register_font() -> Result<()> {
    static REGISTERED: OnceLock<bool> = OnceLock::new();
    let ok = *REGISTERED.get_or_init(|| {
        plotters::style::register_font(
            "sans-serif",
            FontStyle::Normal,
            super::plot_text::FONT_BYTES,
        )
        .is_ok()
    });
    ok.then_some(())
        .ok_or_else(|| Error::Internal("the plot's built-in font cannot be read".into()))
}

fn time_label(ms: &i64, span: i64) -> String {
    let Some(t) = chrono::DateTime::from_timestamp_millis(*ms) else {
        return ms.to_string();
    };
    let format = if span <= 86_400_000 {
        "%H:%M:%S"
    } else {
        "%Y-%m-%d %H:%M"
    };
    t.format(format).to_string()
}

/// Draws the plot on any plotters backend.
fn draw<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    p: &Plot,
) -> std::result::Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    root.fill(&WHITE)?;
    let span = p.x.1 - p.x.0;
    let mut chart = ChartBuilder::on(root)
        .caption(&p.title, ("sans-serif", 20))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(80)
        .build_cartesian_2d(p.x.0..p.x.1, p.y.0..p.y.1)?;
    chart
        .configure_mesh()
        .x_labels(8)
        .y_labels(8)
        .x_desc("commit time (UTC)")
        .y_desc("committed offset")
        .x_label_formatter(&|ms| time_label(ms, span))
        .draw()?;
    for (i, line) in p.lines.iter().enumerate() {
        let color = LINE_COLORS[i % LINE_COLORS.len()];
        for (r, run) in line.runs.iter().enumerate() {
            let drawn =
                chart.draw_series(LineSeries::new(run.iter().copied(), color.stroke_width(2)))?;
            if r == 0 && i < LEGEND_PARTITIONS {
                drawn.label(&line.label).legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2))
                });
            }
        }
    }
    if p.lines.len() > LEGEND_PARTITIONS {
        chart
            .draw_series(std::iter::empty::<Circle<Point, i32>>())?
            .label(format!(
                "and {} more partition(s)",
                p.lines.len() - LEGEND_PARTITIONS
            ))
            .legend(|(x, y)| EmptyElement::at((x, y)));
    }
    let tri = |(x, y)| TriangleMarker::new((x, y), MARK_SIZE + 1, REWIND_COLOR.filled());
    chart
        .draw_series(p.rewinds.iter().map(|&q| tri(q)))?
        .label("rewind: unexplained (flagged)")
        .legend(move |(x, y)| {
            TriangleMarker::new((x + 10, y), MARK_SIZE + 1, REWIND_COLOR.filled())
        });
    chart
        .draw_series(
            p.restores
                .iter()
                .map(|&q| Circle::new(q, MARK_SIZE, BLACK.filled())),
        )?
        .label("restore or reset by offset-vault")
        .legend(|(x, y)| Circle::new((x + 10, y), MARK_SIZE, BLACK.filled()));
    chart
        .draw_series(
            p.deletions
                .iter()
                .map(|&q| Cross::new(q, MARK_SIZE, BLACK.stroke_width(2))),
        )?
        .label("deletion or expiry")
        .legend(|(x, y)| Cross::new((x + 10, y), MARK_SIZE, BLACK.stroke_width(2)));
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()?;
    root.present()
}

fn failed(path: &Path, e: impl std::fmt::Display) -> Error {
    Error::usage(format!("--plot {}: {e}", path.display()))
}

/// The plot as an SVG document.
pub fn svg(p: &Plot) -> Result<String> {
    register_font()?;
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, SIZE).into_drawing_area();
        draw(&root, p).map_err(|e| Error::Internal(format!("draw the plot: {e}")))?;
    }
    Ok(out)
}

/// Writes the plot of a history to its file.
pub fn write(h: &History, target: &PlotTarget) -> Result<()> {
    let p = Plot::of(h);
    let path = &target.path;
    match target.format {
        PlotFormat::Svg => std::fs::write(path, svg(&p)?).map_err(|e| failed(path, e)),
        PlotFormat::Png => {
            register_font()?;
            let backend = BitMapBackend::new(path, SIZE);
            let root = super::plot_text::TextFixed(backend).into_drawing_area();
            draw(&root, &p).map_err(|e| failed(path, e))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::log::applied::{AppliedBy, AppliedRef};
    use crate::log::history::Change;

    fn change(at: i64, kind: ChangeKind, partition: i32, offset: Option<i64>) -> Change {
        Change {
            at,
            kind,
            topic: Some("orders".into()),
            partition: Some(partition),
            offset,
            previous: None,
            delta: None,
            source: (0, at),
            flagged: kind == ChangeKind::Rewind,
            by: (kind == ChangeKind::Restore).then(|| AppliedRef {
                command: AppliedBy::Restore,
                record: "r".into(),
                snapshot: "s".into(),
                undo_snapshot: None,
            }),
        }
    }

    /// Two partitions: commits, an unexplained rewind, a restore and a deletion on the first.
    fn history() -> History {
        let t = 1_796_119_200_000;
        let s = 1_000;
        History {
            group: "billing".into(),
            source_partition: 7,
            segments: 1,
            changes: vec![
                change(t, ChangeKind::Commit, 0, Some(10)),
                change(t, ChangeKind::Commit, 1, Some(4)),
                change(t + 60 * s, ChangeKind::Commit, 0, Some(40)),
                change(t + 90 * s, ChangeKind::Rewind, 0, Some(25)),
                change(t + 120 * s, ChangeKind::Commit, 1, Some(30)),
                change(t + 150 * s, ChangeKind::Restore, 0, Some(12)),
                change(t + 200 * s, ChangeKind::Deletion, 0, None),
                change(t + 240 * s, ChangeKind::Commit, 0, Some(50)),
            ],
            discontinuities: vec![],
        }
    }

    #[test]
    fn a_plot_has_a_step_line_per_partition_and_a_mark_per_event() {
        let p = Plot::of(&history());
        let t = 1_796_119_200_000;
        let s = 1_000;
        let labels: Vec<&str> = p.lines.iter().map(|l| l.label.as_str()).collect();
        assert_eq!(labels, ["orders[0]", "orders[1]"]);
        let end = p.x.1;
        assert_eq!(
            p.lines[0].runs,
            [
                vec![
                    (t, 10),
                    (t + 60 * s, 10),
                    (t + 60 * s, 40),
                    (t + 90 * s, 40),
                    (t + 90 * s, 25),
                    (t + 150 * s, 25),
                    (t + 150 * s, 12),
                    (t + 200 * s, 12),
                ],
                // After the deletion, a new run that lasts to the end.
                vec![(t + 240 * s, 50), (end, 50)],
            ]
        );
        assert_eq!(
            p.lines[1].runs,
            [vec![(t, 4), (t + 120 * s, 4), (t + 120 * s, 30), (end, 30)]]
        );
        assert_eq!(p.rewinds, [(t + 90 * s, 25)]);
        assert_eq!(p.restores, [(t + 150 * s, 12)]);
        assert_eq!(p.deletions, [(t + 200 * s, 12)]);
        assert!(p.x.0 < t && end > t + 240 * s, "{:?}", p.x);
        assert!(p.y.0 == 0 && p.y.1 > 50, "{:?}", p.y);
    }

    #[test]
    fn a_group_deletion_ends_every_line() {
        let mut h = history();
        h.changes.truncate(5);
        h.changes.push(Change {
            topic: None,
            partition: None,
            ..change(1_796_119_500_000, ChangeKind::GroupDeleted, 0, None)
        });
        let p = Plot::of(&h);
        assert_eq!(
            p.deletions,
            [(1_796_119_500_000, 25), (1_796_119_500_000, 30)]
        );
        // Every line ends there, not at the end of the plot.
        let ends: Vec<Point> = p.lines.iter().map(|l| *l.runs[0].last().unwrap()).collect();
        assert_eq!(ends, p.deletions);
        assert!(p.x.1 > 1_796_119_500_000);
    }

    #[test]
    fn the_svg_has_one_series_per_partition_and_every_marker_in_the_legend() {
        let svg = svg(&Plot::of(&history())).unwrap();
        assert!(svg.starts_with("<svg"), "{}", &svg[..80.min(svg.len())]);
        for text in [
            "orders[0]",
            "orders[1]",
            "rewind: unexplained (flagged)",
            "restore or reset by offset-vault",
            "deletion or expiry",
            "group billing: committed offsets (8 change(s))",
        ] {
            let element = format!(">\n{text}\n</text>");
            assert_eq!(svg.matches(&element).count(), 1, "{text}\n{svg}");
        }
        let stroke = |c: RGBColor| format!("stroke=\"#{:02X}{:02X}{:02X}\"", c.0, c.1, c.2);
        // Partition 0 in two runs (its offset was deleted in between), partition 1 in one; each
        // legend entry a line too.
        let lines_of = |c| {
            svg.lines()
                .filter(|l| l.contains("<polyline") && l.contains(&stroke(c)))
                .count()
        };
        assert_eq!(lines_of(LINE_COLORS[0]), 2 + 1, "{svg}");
        assert_eq!(lines_of(LINE_COLORS[1]), 1 + 1, "{svg}");
        // A marker each, and one in the legend: triangle, circle, cross.
        assert_eq!(svg.matches("<polygon").count(), 2, "{svg}");
        assert_eq!(svg.matches("<circle").count(), 2, "{svg}");
        assert_eq!(
            svg.matches("<line opacity=\"1\" stroke=\"#000000\" stroke-width=\"2\"")
                .count(),
            4,
            "{svg}"
        );
    }

    #[test]
    fn the_png_decodes_at_its_size() {
        let dir = tempfile::tempdir().unwrap();
        let target = PlotTarget::parse(&dir.path().join("h.PNG")).unwrap();
        assert_eq!(target.format, PlotFormat::Png);
        write(&history(), &target).unwrap();
        let file = std::fs::File::open(&target.path).unwrap();
        let mut reader = png::Decoder::new(std::io::BufReader::new(file))
            .read_info()
            .unwrap();
        let mut pixels = vec![0; reader.output_buffer_size()];
        let info = reader.next_frame(&mut pixels).unwrap();
        assert_eq!((info.width, info.height), SIZE);
        // Not blank: the lines and the text are drawn over the white background.
        assert!(pixels.iter().any(|b| *b != 255));
    }

    #[test]
    fn the_format_comes_from_the_extension() {
        for (path, want) in [
            ("a.svg", Some(PlotFormat::Svg)),
            ("dir/a.Png", Some(PlotFormat::Png)),
            ("a.jpg", None),
            ("plot", None),
        ] {
            let got = PlotTarget::parse(Path::new(path)).ok().map(|t| t.format);
            assert_eq!(got, want, "{path}");
        }
    }
}
