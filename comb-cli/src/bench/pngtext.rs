//! A PNG drawing backend that renders text itself, with the public-domain 8×8 bitmap font of
//! `font8x8`, scaled to the requested size.
//!
//! plotters' own text rasteriser (feature `ttf`) needs fontconfig and FreeType at build time
//! and installed fonts at run time; a fresh server often has neither. This wrapper forwards
//! every primitive to [`BitMapBackend`] and only takes over `draw_text` and
//! `estimate_text_size`, so PNG plots have legible labels on any machine.

use plotters::prelude::BitMapBackend;
use plotters_backend::text_anchor::{HPos, VPos};
use plotters_backend::{
    BackendColor, BackendCoord, BackendStyle, BackendTextStyle, DrawingBackend, DrawingErrorKind,
};

/// [`BitMapBackend`] with built-in bitmap text.
pub struct PngBackend<'a> {
    inner: BitMapBackend<'a>,
}

impl<'a> PngBackend<'a> {
    /// A PNG of `size` pixels written to `path` on `present`.
    pub fn new(path: &'a std::path::Path, size: (u32, u32)) -> PngBackend<'a> {
        PngBackend {
            inner: BitMapBackend::new(path, size),
        }
    }
}

/// Integer scale of the 8×8 glyphs for a font size in pixels.
fn scale(size: f64) -> i32 {
    ((size / 10.0).round() as i32).max(1)
}

/// Width and height in pixels of `text` at `size` (8 px per glyph per unit of scale, one
/// pixel narrower per glyph since the glyphs carry their own spacing column).
pub fn text_size(text: &str, size: f64) -> (u32, u32) {
    let s = scale(size);
    let n = text.chars().count() as i32;
    ((n * 8 * s - s).max(0) as u32, (8 * s) as u32)
}

/// The 8×8 glyph of `c` (row bytes, bit 0 = leftmost pixel); `?` for non-ASCII.
fn glyph(c: char) -> [u8; 8] {
    let i = if c.is_ascii() {
        c as usize
    } else {
        '?' as usize
    };
    font8x8::legacy::BASIC_LEGACY[i]
}

impl DrawingBackend for PngBackend<'_> {
    type ErrorType = <BitMapBackend<'static> as DrawingBackend>::ErrorType;

    fn get_size(&self) -> (u32, u32) {
        self.inner.get_size()
    }

    fn ensure_prepared(&mut self) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.inner.ensure_prepared()
    }

    fn present(&mut self) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.inner.present()
    }

    fn draw_pixel(
        &mut self,
        point: BackendCoord,
        color: BackendColor,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.inner.draw_pixel(point, color)
    }

    fn draw_line<S: BackendStyle>(
        &mut self,
        from: BackendCoord,
        to: BackendCoord,
        style: &S,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.inner.draw_line(from, to, style)
    }

    fn draw_rect<S: BackendStyle>(
        &mut self,
        upper_left: BackendCoord,
        bottom_right: BackendCoord,
        style: &S,
        fill: bool,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.inner.draw_rect(upper_left, bottom_right, style, fill)
    }

    fn draw_path<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        path: I,
        style: &S,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.inner.draw_path(path, style)
    }

    fn draw_circle<S: BackendStyle>(
        &mut self,
        center: BackendCoord,
        radius: u32,
        style: &S,
        fill: bool,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.inner.draw_circle(center, radius, style, fill)
    }

    fn fill_polygon<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        vert: I,
        style: &S,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.inner.fill_polygon(vert, style)
    }

    fn blit_bitmap(
        &mut self,
        pos: BackendCoord,
        size: (u32, u32),
        src: &[u8],
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.inner.blit_bitmap(pos, size, src)
    }

    fn estimate_text_size<TStyle: BackendTextStyle>(
        &self,
        text: &str,
        style: &TStyle,
    ) -> Result<(u32, u32), DrawingErrorKind<Self::ErrorType>> {
        Ok(text_size(text, style.size()))
    }

    fn draw_text<TStyle: BackendTextStyle>(
        &mut self,
        text: &str,
        style: &TStyle,
        pos: BackendCoord,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        let color = style.color();
        if color.alpha == 0.0 {
            return Ok(());
        }
        let s = scale(style.size());
        let (w, h) = text_size(text, style.size());
        let (w, h) = (w as i32, h as i32);
        let anchor = style.anchor();
        let dx = match anchor.h_pos {
            HPos::Left => 0,
            HPos::Center => -w / 2,
            HPos::Right => -w,
        };
        let dy = match anchor.v_pos {
            VPos::Top => 0,
            VPos::Center => -h / 2,
            VPos::Bottom => -h,
        };
        let trans = style.transform();
        let (cw, ch) = self.get_size();
        for (i, c) in text.chars().enumerate() {
            let g = glyph(c);
            for (row, bits) in g.iter().enumerate() {
                for col in 0..8 {
                    if bits >> col & 1 == 0 {
                        continue;
                    }
                    for sy in 0..s {
                        for sx in 0..s {
                            let x = i as i32 * 8 * s + col * s + sx + dx;
                            let y = row as i32 * s + sy + dy;
                            let (x, y) = trans.transform(x, y);
                            let (x, y) = (pos.0 + x, pos.1 + y);
                            if x >= 0 && y >= 0 && x < cw as i32 && y < ch as i32 {
                                self.inner.draw_pixel((x, y), color)?;
                            }
                        }
                    }
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_and_glyphs() {
        assert_eq!(text_size("", 20.0), (0, 16));
        assert_eq!(text_size("ab", 10.0), (15, 8));
        assert_eq!(text_size("ab", 20.0), (30, 16));
        assert_eq!(glyph(' '), [0; 8]);
        assert_ne!(glyph('A'), [0; 8]);
        assert_eq!(glyph('é'), glyph('?'));
    }
}
