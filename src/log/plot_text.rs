//! The PNG plot's text, set glyph by glyph with each glyph's ink where the font puts it.
//!
//! plotters' own ab_glyph text drawing starts every glyph's ink at the start of its advance: it
//! leaves out the glyph's left side bearing. In a monospace font that pushes narrow glyphs
//! (`:`, `[`, `(`) to the left of their cell and leaves a gap after them ("10: 00: 00",
//! "orders[ 0]"). [`TextFixed`] wraps a backend, sets text itself with the same font, size,
//! anchor and rotation as plotters would, and passes every other call through unchanged.

use std::sync::OnceLock;

use ab_glyph::{Font, FontRef, ScaleFont};
use plotters_backend::text_anchor::{HPos, VPos};
use plotters_backend::{
    BackendColor, BackendCoord, BackendStyle, BackendTextStyle, DrawingBackend, DrawingErrorKind,
};

/// The font the plot's text is set in (DejaVu Sans Mono, shipped in assets/fonts).
pub(crate) const FONT_BYTES: &[u8] = include_bytes!("../../assets/fonts/DejaVuSansMono.ttf");

fn font() -> Option<&'static FontRef<'static>> {
    static FONT: OnceLock<Option<FontRef<'static>>> = OnceLock::new();
    FONT.get_or_init(|| FontRef::try_from_slice(FONT_BYTES).ok())
        .as_ref()
}

/// Each covered pixel of `text` at `size` pixels, relative to the top left of its line box
/// (the box plotters' layout gives: the sum of the advances wide, `size / 1.24` high), with
/// its coverage from 0 to 1.
pub(crate) fn glyph_pixels(size: f64, text: &str) -> Vec<(i32, i32, f32)> {
    let Some(font) = font() else {
        return Vec::new();
    };
    let scaled = font.as_scaled(size as f32);
    let mut pixels = Vec::new();
    let mut pen = 0f32;
    let mut prev = None;
    for c in text.chars() {
        let id = scaled.glyph_id(c);
        if let Some(p) = prev {
            pen += scaled.kern(p, id);
        }
        prev = Some(id);
        let glyph = id.with_scale_and_position(size as f32, ab_glyph::point(pen, 0.0));
        if let Some(outline) = scaled.outline_glyph(glyph) {
            let bounds = outline.px_bounds();
            // The same vertical placement as plotters', so lines and labels stay where they were.
            let top = ((size as f32) / 2.0 + bounds.min.y) as i32;
            let left = bounds.min.x.floor() as i32;
            outline.draw(|x, y, coverage| pixels.push((left + x as i32, top + y as i32, coverage)));
        }
        pen += scaled.h_advance(id);
    }
    pixels
}

/// A backend whose text is set by [`glyph_pixels`]; everything else goes to the inner backend.
pub(crate) struct TextFixed<B>(pub B);

impl<B: DrawingBackend> DrawingBackend for TextFixed<B> {
    type ErrorType = B::ErrorType;

    fn get_size(&self) -> (u32, u32) {
        self.0.get_size()
    }

    fn ensure_prepared(&mut self) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.0.ensure_prepared()
    }

    fn present(&mut self) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.0.present()
    }

    fn draw_pixel(
        &mut self,
        point: BackendCoord,
        color: BackendColor,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.0.draw_pixel(point, color)
    }

    fn draw_line<S: BackendStyle>(
        &mut self,
        from: BackendCoord,
        to: BackendCoord,
        style: &S,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.0.draw_line(from, to, style)
    }

    fn draw_rect<S: BackendStyle>(
        &mut self,
        upper_left: BackendCoord,
        bottom_right: BackendCoord,
        style: &S,
        fill: bool,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.0.draw_rect(upper_left, bottom_right, style, fill)
    }

    fn draw_path<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        path: I,
        style: &S,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.0.draw_path(path, style)
    }

    fn draw_circle<S: BackendStyle>(
        &mut self,
        center: BackendCoord,
        radius: u32,
        style: &S,
        fill: bool,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.0.draw_circle(center, radius, style, fill)
    }

    fn fill_polygon<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        vert: I,
        style: &S,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.0.fill_polygon(vert, style)
    }

    fn draw_text<S: BackendTextStyle>(
        &mut self,
        text: &str,
        style: &S,
        pos: BackendCoord,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        let color = style.color();
        if color.alpha == 0.0 {
            return Ok(());
        }
        let ((min_x, min_y), (max_x, max_y)) = style
            .layout_box(text)
            .map_err(|e| DrawingErrorKind::FontError(Box::new(e)))?;
        let (width, height) = (max_x - min_x, max_y - min_y);
        let dx = match style.anchor().h_pos {
            HPos::Left => 0,
            HPos::Right => -width,
            HPos::Center => -width / 2,
        };
        let dy = match style.anchor().v_pos {
            VPos::Top => 0,
            VPos::Center => -height / 2,
            VPos::Bottom => -height,
        };
        let transform = style.transform();
        let (w, h) = self.get_size();
        for (x, y, coverage) in glyph_pixels(style.size(), text) {
            let (x, y) = transform.transform(x + dx - min_x, y + dy - min_y);
            let (x, y) = (pos.0 + x, pos.1 + y);
            if x >= 0 && x < w as i32 && y >= 0 && y < h as i32 {
                let ink = BackendColor {
                    alpha: color.alpha * f64::from(coverage),
                    rgb: color.rgb,
                };
                self.0.draw_pixel((x, y), ink)?;
            }
        }
        Ok(())
    }

    fn estimate_text_size<S: BackendTextStyle>(
        &self,
        text: &str,
        style: &S,
    ) -> Result<(u32, u32), DrawingErrorKind<Self::ErrorType>> {
        self.0.estimate_text_size(text, style)
    }

    fn blit_bitmap(
        &mut self,
        pos: BackendCoord,
        size: (u32, u32),
        src: &[u8],
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.0.blit_bitmap(pos, size, src)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The columns with ink, from the first to the last.
    fn ink_columns(size: f64, text: &str) -> (i32, i32) {
        let xs: Vec<i32> = glyph_pixels(size, text)
            .into_iter()
            .filter(|(_, _, c)| *c > 0.25)
            .map(|(x, _, _)| x)
            .collect();
        (*xs.iter().min().unwrap(), *xs.iter().max().unwrap())
    }

    fn advance(size: f64) -> f32 {
        let font = font().unwrap().as_scaled(size as f32);
        font.h_advance(font.glyph_id('0'))
    }

    #[test]
    fn a_narrow_glyph_sits_in_the_middle_of_its_cell() {
        // In a monospace font every glyph has the same advance; a colon's ink is centred in it.
        for size in [12.0, 15.0, 20.0] {
            let cell = advance(size);
            for c in [":", "[", "]", "(", ")", "0", "|"] {
                let (first, last) = ink_columns(size, c);
                let centre = (first + last + 1) as f32 / 2.0;
                assert!(
                    (centre - cell / 2.0).abs() <= 1.5,
                    "{c:?} at {size}px: ink {first}..={last}, cell {cell}"
                );
            }
        }
    }

    #[test]
    fn the_gaps_in_a_time_label_are_even() {
        // "10:00:00" set as one string: a colon's ink is as far from the digit before it as from
        // the digit after it (plotters' own layout put it against the digit before and left a
        // gap of most of a cell after it).
        let size = 15.0;
        let mut inked: Vec<i32> = glyph_pixels(size, "10:00:00")
            .into_iter()
            .filter(|(_, _, c)| *c > 0.25)
            .map(|(x, _, _)| x)
            .collect();
        inked.sort_unstable();
        inked.dedup();
        let gaps: Vec<i32> = inked
            .windows(2)
            .map(|w| w[1] - w[0] - 1)
            .filter(|g| *g > 0)
            .collect();
        assert_eq!(
            gaps.len(),
            7,
            "one gap between each two of the 8 glyphs: {gaps:?}"
        );
        for (before, after) in [(gaps[1], gaps[2]), (gaps[4], gaps[5])] {
            assert!((before - after).abs() <= 1, "a colon off centre: {gaps:?}");
        }
        assert!(
            gaps.iter().all(|g| *g <= 5),
            "a gap wider than a narrow glyph: {gaps:?}"
        );
        let (first, last) = (inked[0], inked[inked.len() - 1]);
        assert!(
            (last - first) as f32 <= 8.0 * advance(size),
            "{first}..={last}"
        );
    }
}
