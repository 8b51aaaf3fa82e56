//! Captured frames: the blank check, scaling to a size a model can take,
//! and PNG encoding.

/// A captured window: 32-bit pixels, top row first, in the BGRA order of a
/// Windows DIB (the fourth byte is not meaningful and is ignored).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Frame {
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// Four bytes per pixel, rows top first, `width * height * 4` in all.
    pub bgra: Vec<u8>,
}

/// Largest side a capture may have before scaling (a window this big is a
/// broken rectangle, not a window).
pub const MAX_CAPTURE_EDGE: u32 = 16_384;
/// `see`'s `max_edge` when none is given, and its bounds.
pub const DEFAULT_MAX_EDGE: u32 = 1280;
/// The smallest `max_edge` `see` accepts; smaller requests are raised to it.
pub const MIN_MAX_EDGE: u32 = 64;
/// The largest `max_edge` `see` accepts; larger requests are lowered to it.
pub const MAX_MAX_EDGE: u32 = 4096;

impl Frame {
    /// One colour everywhere: what `PrintWindow` gives for a window it
    /// cannot draw (GPU surfaces, protected content, minimised windows).
    /// Reporting it as a picture would be a false success: the model would
    /// take an empty frame for the window.
    pub fn is_blank(&self) -> bool {
        let mut pixels = self.bgra.chunks_exact(4);
        match pixels.next() {
            None => true,
            Some(first) => pixels.all(|p| p[..3] == first[..3]),
        }
    }

    /// The frame scaled down (never up) so its longer side is at most
    /// `max_edge`, as 8-bit RGB. Each output pixel averages the block of
    /// input pixels it covers, so thin text stays legible longer than with
    /// nearest-neighbour sampling.
    pub fn to_rgb_within(&self, max_edge: u32) -> (u32, u32, Vec<u8>) {
        let (w, h) = (self.width.max(1), self.height.max(1));
        let longer = w.max(h);
        let (ow, oh) = if longer <= max_edge {
            (w, h)
        } else {
            let scale = |side: u32| {
                ((u64::from(side) * u64::from(max_edge)).div_ceil(u64::from(longer))).max(1) as u32
            };
            (scale(w), scale(h))
        };
        let mut out = Vec::with_capacity((ow * oh * 3) as usize);
        for oy in 0..oh {
            let y0 = (u64::from(oy) * u64::from(h) / u64::from(oh)) as u32;
            let y1 = ((u64::from(oy + 1) * u64::from(h)).div_ceil(u64::from(oh)) as u32)
                .clamp(y0 + 1, h);
            for ox in 0..ow {
                let x0 = (u64::from(ox) * u64::from(w) / u64::from(ow)) as u32;
                let x1 = ((u64::from(ox + 1) * u64::from(w)).div_ceil(u64::from(ow)) as u32)
                    .clamp(x0 + 1, w);
                let mut sum = [0u64; 3];
                for y in y0..y1 {
                    for x in x0..x1 {
                        let i = ((y * w + x) * 4) as usize;
                        if let Some(p) = self.bgra.get(i..i + 3) {
                            sum[0] += u64::from(p[2]);
                            sum[1] += u64::from(p[1]);
                            sum[2] += u64::from(p[0]);
                        }
                    }
                }
                let n = u64::from((y1 - y0) * (x1 - x0));
                out.extend(sum.map(|s| (s / n) as u8));
            }
        }
        (ow, oh, out)
    }

    /// The frame as a PNG no larger than `max_edge` on its longer side,
    /// with the size it was encoded at.
    pub fn to_png(&self, max_edge: u32) -> Result<(u32, u32, Vec<u8>), String> {
        let (w, h, rgb) = self.to_rgb_within(max_edge);
        let mut bytes = Vec::new();
        let mut encoder = png::Encoder::new(&mut bytes, w, h);
        encoder.set_color(png::ColorType::Rgb);
        encoder.set_depth(png::BitDepth::Eight);
        encoder.set_compression(png::Compression::Fast);
        let mut writer = encoder.write_header().map_err(|e| e.to_string())?;
        writer.write_image_data(&rgb).map_err(|e| e.to_string())?;
        writer.finish().map_err(|e| e.to_string())?;
        Ok((w, h, bytes))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(width: u32, height: u32, pixel: impl Fn(u32, u32) -> [u8; 4]) -> Frame {
        let mut bgra = Vec::new();
        for y in 0..height {
            for x in 0..width {
                bgra.extend(pixel(x, y));
            }
        }
        Frame {
            width,
            height,
            bgra,
        }
    }

    #[test]
    fn one_colour_is_blank_whatever_the_alpha() {
        assert!(frame(4, 3, |x, _| [9, 9, 9, x as u8]).is_blank());
        assert!(
            !frame(4, 3, |x, y| if (x, y) == (3, 2) {
                [9, 9, 8, 0]
            } else {
                [9, 9, 9, 0]
            })
            .is_blank()
        );
        assert!(
            Frame {
                width: 0,
                height: 0,
                bgra: vec![]
            }
            .is_blank()
        );
    }

    #[test]
    fn scaling_keeps_the_aspect_and_averages_blocks() {
        let f = frame(4, 2, |x, _| {
            if x < 2 {
                [0, 0, 200, 0]
            } else {
                [100, 0, 0, 0]
            }
        });
        assert_eq!(f.to_rgb_within(2), (2, 1, vec![200, 0, 0, 0, 0, 100]));
        // Never scaled up.
        assert_eq!(f.to_rgb_within(100).0, 4);
        let wide = frame(2000, 10, |_, _| [1, 2, 3, 0]);
        let (w, h, rgb) = wide.to_rgb_within(1280);
        assert_eq!((w, h), (1280, 7));
        assert!(rgb.chunks(3).all(|p| p == [3, 2, 1]));
    }

    #[test]
    fn png_round_trips() {
        let f = frame(3, 2, |x, y| [x as u8 * 50, y as u8 * 100, 7, 255]);
        let (w, h, bytes) = f.to_png(1280).unwrap();
        assert_eq!((w, h), (3, 2));
        let decoder = png::Decoder::new(std::io::Cursor::new(bytes));
        let mut reader = decoder.read_info().unwrap();
        let mut buf = vec![0; reader.output_buffer_size().unwrap()];
        let info = reader.next_frame(&mut buf).unwrap();
        assert_eq!((info.width, info.height), (3, 2));
        assert_eq!(&buf[..6], &[7, 0, 0, 7, 0, 50]);
    }
}
