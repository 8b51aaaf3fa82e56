//! Colours: what a declared colour is, what the background under an
//! element is, and whether text stands out from it. Only what is needed to
//! tell text that can be read from text that cannot: exact colour spaces
//! are approximated where that cannot change the answer (a near-grey
//! `oklch()` by its lightness, `color-mix()` in sRGB).

use super::{MAX_INVISIBLE_OPACITY, Style, Value, amount, opacity, pixels};

impl Style {
    /// The colour the glyphs are painted with, when this style sets one
    /// that can be read: the fill colour if set, else `color`.
    pub fn text_colour(&self) -> Option<[u8; 4]> {
        self.get("-webkit-text-fill-color")
            .or_else(|| self.get("color"))
            .and_then(colour_of)
    }

    /// The background, when this style sets one: `Some(Some(colour))` for
    /// a plain colour, `Some(None)` for an image or gradient (whose colour
    /// is unknown), `None` when not set.
    pub fn background(&self) -> Option<Option<[u8; 4]>> {
        // The image, from the longhand when set (`none` cancels the
        // shorthand's), else from the shorthand.
        let image = match self.get("background-image") {
            Some([Value::Ident(none)]) if none == "none" => None,
            Some(longhand) => image_of(longhand),
            None => self.get("background").and_then(image_of),
        };
        let colour = self
            .get("background-color")
            .and_then(colour_of)
            .or_else(|| {
                // The one component of the shorthand that reads as a colour
                // (`#000 repeat`).
                self.get("background")?
                    .iter()
                    .find_map(|v| colour_of(std::slice::from_ref(v)))
            });
        match (image, colour) {
            // A gradient of one colour is that colour over the other.
            (Some(Some(flat)), Some(under)) if flat[3] < 128 => Some(Some(under)),
            (Some(flat), _) => Some(flat),
            (None, Some(colour)) => Some(Some(colour)),
            (None, None) if self.get("background-color").is_some() => Some(None),
            (None, None) => None,
        }
    }

    /// Whether the glyphs are drawn another way than filled: a text
    /// shadow or a stroke.
    pub fn outlines_text(&self) -> bool {
        let shadow = self
            .get("text-shadow")
            .is_some_and(|v| !matches!(v, [Value::Ident(none)] if none == "none"));
        let stroke = ["-webkit-text-stroke", "-webkit-text-stroke-width"]
            .iter()
            .any(|p| {
                self.get(p)
                    .is_some_and(|v| v.iter().filter_map(pixels).any(|px| px > 0.0))
            });
        shadow || stroke
    }

    /// Whether the glyphs are painted with a background this style sets
    /// (gradient text: `background-clip: text` over an image or colour).
    pub fn painted_by_background(&self) -> bool {
        let clipped_to_text = ["background-clip", "-webkit-background-clip"]
            .iter()
            .any(|p| self.keyword(p) == Some("text"));
        let has_background = ["background", "background-color", "background-image"]
            .iter()
            .any(|p| self.get(p).is_some());
        clipped_to_text && has_background
    }
}

/// The colours text inherits, and whether it can be seen against its
/// background. The caller walks the tree with a stack of these.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Paint {
    text: [u8; 4],
    /// `None` under an image or gradient, or when the page's background
    /// comes from a sheet that is never fetched.
    background: Option<[u8; 4]>,
    /// Whether text in this paint can be read: not
    /// transparent, not the background's colour.
    pub seen: bool,
    /// The product of the element's and its ancestors' opacity.
    opacity: f32,
}

impl Paint {
    /// The page canvas: black text on white, or on an unknown background
    /// when the page links style sheets that are never fetched.
    pub fn canvas(background_known: bool) -> Paint {
        Paint {
            text: [0, 0, 0, 255],
            background: background_known.then_some([255, 255, 255, 255]),
            seen: true,
            opacity: 1.0,
        }
    }

    /// Whether the element and its ancestors together are too faint to
    /// read.
    pub fn faded(&self) -> bool {
        self.opacity <= MAX_INVISIBLE_OPACITY
    }

    /// The paint of an element with `style` inside one painted `self`;
    /// `hints` are its presentational attributes, which its style beats.
    pub fn inside(&self, style: &Style, hints: Hints) -> Paint {
        let text = style
            .text_colour()
            .or(hints.text)
            .or_else(|| {
                style
                    .keyword("color")
                    .filter(|w| *w == "currentcolor")
                    .map(|_| self.text)
            })
            .unwrap_or(self.text);
        let dark_scheme = style.get("color-scheme").is_some_and(|v| {
            v.iter().any(|w| *w == Value::Ident("dark".into()))
                && !v.iter().any(|w| *w == Value::Ident("light".into()))
        });
        let background = match style.background().or(hints.background.map(Some)) {
            _ if dark_scheme => None,
            None if style.keyword("background") == Some("currentcolor") => Some(text),
            // A mostly opaque colour replaces the background; a faint one
            // leaves it as it was.
            Some(Some(colour)) if colour[3] >= 128 => Some(colour),
            Some(Some(_)) => self.background,
            Some(None) => None,
            None => self.background,
        };
        let seen = style.painted_by_background()
            || style.outlines_text()
            || (text[3] > MAX_INVISIBLE_ALPHA && background.is_none_or(|bg| !alike(text, bg)));
        let own_opacity = style
            .get("opacity")
            .and_then(|v| v.first())
            .and_then(opacity)
            .map_or(1.0, |o| o.clamp(0.0, 1.0));
        Paint {
            text,
            background,
            seen,
            opacity: self.opacity * own_opacity,
        }
    }
}

/// Colours an element's attributes give it (`bgcolor`, `<font color>`,
/// `<body text>`), below any style.
#[derive(Clone, Copy, Debug, Default)]
pub struct Hints {
    /// The text colour from `<font color>` or `<body text>`, as RGBA.
    pub text: Option<[u8; 4]>,
    /// The background colour from `bgcolor`, as RGBA.
    pub background: Option<[u8; 4]>,
}

impl Hints {
    /// Reads the colour attributes of an element named `tag`.
    pub fn of(tag: &str, attribute: impl Fn(&str) -> Option<String>) -> Hints {
        let colour = |name: &str| attribute(name).and_then(|value| attribute_colour(&value));
        Hints {
            text: match tag {
                "font" => colour("color"),
                "body" => colour("text"),
                _ => None,
            },
            background: colour("bgcolor"),
        }
    }
}

/// A colour attribute: `#rgb`, `#rrggbb`, the same without `#`, or a name.
fn attribute_colour(value: &str) -> Option<[u8; 4]> {
    let value = value.trim();
    let hex = value.strip_prefix('#').unwrap_or(value);
    if (hex.len() == 3 || hex.len() == 6)
        && let Some(colour) = hex_colour(&hex.to_ascii_lowercase())
    {
        return Some(colour);
    }
    colour_of(&[Value::Ident(value.to_ascii_lowercase())])
}

/// An alpha (of 255) too faint to read.
const MAX_INVISIBLE_ALPHA: u8 = 5;

/// Colours too close to tell apart (`#fefefe` on `#fff`).
fn alike(a: [u8; 4], b: [u8; 4]) -> bool {
    let distance: u32 = (0..3).map(|i| a[i].abs_diff(b[i]) as u32).sum();
    distance <= 24
}

/// A colour written as a hex value, `rgb()`/`rgba()` or one of the common
/// keywords; anything else is unknown (and never judged invisible).
pub(super) fn colour_of(values: &[Value]) -> Option<[u8; 4]> {
    match values {
        [Value::Hash(hex)] => hex_colour(hex),
        [Value::Ident(word)] => match word.as_str() {
            "transparent" => Some([0, 0, 0, 0]),
            // The light scheme's system colours.
            "canvas" | "field" => Some([255, 255, 255, 255]),
            "canvastext" | "fieldtext" => Some([0, 0, 0, 255]),
            named => cssparser::color::parse_named_color(named)
                .ok()
                .map(|(r, g, b)| [r, g, b, 255]),
        },
        [Value::Function(name, args)] if name == "hsl" || name == "hsla" => hsl_colour(args),
        // The light scheme's half.
        [Value::Function(name, args)] if name == "light-dark" => args
            .first()
            .and_then(|a| colour_of(std::slice::from_ref(a))),
        [Value::Function(name, args)] if name == "color-mix" => mixed_colour(args),
        [Value::Function(name, args)] if name == "hwb" => hwb_colour(args),
        [Value::Function(name, args)] if name == "color" => srgb_colour(args),
        [Value::Function(name, args)] if is_colour_function(name) => grey_by_lightness(name, args)
            .or_else(|| {
                alpha_of(args)
                    .filter(|alpha| *alpha == 0)
                    .map(|_| [0, 0, 0, 0])
            }),
        [Value::Function(name, args)] if name == "rgb" || name == "rgba" => {
            let numbers: Vec<&Value> = args.iter().filter(|v| !matches!(v, Value::Other)).collect();
            let channel = |v: &Value| match v {
                Value::Number(n) => Some(n.clamp(0.0, 255.0).round() as u8),
                Value::Percent(p) => Some((p.clamp(0.0, 100.0) * 2.55).round() as u8),
                _ => None,
            };
            match numbers[..] {
                [r, g, b] => Some([channel(r)?, channel(g)?, channel(b)?, 255]),
                [r, g, b, _] => Some([channel(r)?, channel(g)?, channel(b)?, alpha_of(args)?]),
                _ => None,
            }
        }
        _ => None,
    }
}

/// `color-mix(in srgb, a p%, b q%)`, mixed in sRGB whatever the space
/// named (close enough to tell white from black).
fn mixed_colour(args: &[Value]) -> Option<[u8; 4]> {
    let mut parts: Vec<([u8; 4], Option<f32>)> = Vec::new();
    for arg in args {
        match arg {
            Value::Percent(p) => {
                if let Some(last) = parts.last_mut() {
                    last.1 = Some(p / 100.0);
                }
            }
            other => {
                if let Some(colour) = colour_of(std::slice::from_ref(other)) {
                    parts.push((colour, None));
                }
            }
        }
    }
    let [(a, pa), (b, pb)] = parts[..] else {
        return None;
    };
    let share_a = match (pa, pb) {
        (Some(pa), _) => pa,
        (None, Some(pb)) => 1.0 - pb,
        (None, None) => 0.5,
    }
    .clamp(0.0, 1.0);
    let mix = |i: usize| (a[i] as f32 * share_a + b[i] as f32 * (1.0 - share_a)).round() as u8;
    Some([mix(0), mix(1), mix(2), mix(3)])
}

/// `hwb(h w b)`: white and black mixed into a hue.
fn hwb_colour(args: &[Value]) -> Option<[u8; 4]> {
    let numbers: Vec<f32> = args.iter().filter_map(amount).collect();
    let [hue, white, black, ..] = numbers[..] else {
        return None;
    };
    let (w, b) = (
        white.clamp(0.0, 100.0) / 100.0,
        black.clamp(0.0, 100.0) / 100.0,
    );
    let alpha = alpha_of(args).unwrap_or(255);
    if w + b >= 1.0 {
        let grey = (w / (w + b) * 255.0).round() as u8;
        return Some([grey, grey, grey, alpha]);
    }
    let [r, g, bl, _] = hsl_colour(&[
        Value::Number(hue),
        Value::Percent(100.0),
        Value::Percent(50.0),
    ])?;
    let mix = |c: u8| ((c as f32 / 255.0 * (1.0 - w - b) + w) * 255.0).round() as u8;
    Some([mix(r), mix(g), mix(bl), alpha])
}

/// `color(srgb r g b [/ a])` (and `srgb-linear`, read the same).
fn srgb_colour(args: &[Value]) -> Option<[u8; 4]> {
    let Some(Value::Ident(space)) = args.first() else {
        return None;
    };
    if !space.starts_with("srgb") {
        return None;
    }
    let channels: Vec<f32> = args[1..]
        .iter()
        .take_while(|v| **v != Value::Other)
        .filter_map(|v| match v {
            Value::Percent(p) => Some(p / 100.0),
            other => amount(other),
        })
        .collect();
    let [r, g, b] = channels[..] else {
        return None;
    };
    let channel = |c: f32| (c.clamp(0.0, 1.0) * 255.0).round() as u8;
    Some([
        channel(r),
        channel(g),
        channel(b),
        alpha_of(args).unwrap_or(255),
    ])
}

/// The image in a background value: `Some(None)` for a picture or a
/// gradient of several colours (what is under the text is unknown),
/// `Some(Some(colour))` for a gradient of one colour, `None` for no image.
fn image_of(values: &[Value]) -> Option<Option<[u8; 4]>> {
    values.iter().find_map(|v| match v {
        Value::Function(name, args) if name.ends_with("gradient") => {
            let stops: Vec<[u8; 4]> = args
                .iter()
                .filter_map(|a| colour_of(std::slice::from_ref(a)))
                .collect();
            let uniform = stops
                .first()
                .filter(|first| stops.iter().all(|s| s == *first));
            Some(uniform.copied())
        }
        Value::Function(name, _) if name == "url" || name == "image-set" || name == "image" => {
            Some(None)
        }
        _ => None,
    })
}

/// A near-grey `lab()`, `lch()`, `oklab()` or `oklch()`, by its lightness
/// alone (enough to tell white from black); a coloured one is unknown.
fn grey_by_lightness(name: &str, args: &[Value]) -> Option<[u8; 4]> {
    let values: Vec<&Value> = args.iter().take_while(|v| **v != Value::Other).collect();
    let [lightness, second, third] = values[..] else {
        return None;
    };
    let ok = name.starts_with("ok");
    let light = match lightness {
        Value::Percent(p) => p / 100.0,
        other if ok => amount(other)?,
        other => amount(other)? / 100.0,
    };
    // Chroma (lch) or the two axes (lab) must be near zero.
    let limit = if ok { 0.02 } else { 5.0 };
    let near_zero = |v: &Value| amount(v).is_some_and(|n| n.abs() <= limit);
    let grey = if name.ends_with("lch") {
        near_zero(second)
    } else {
        near_zero(second) && near_zero(third)
    };
    let level = (light.clamp(0.0, 1.0) * 255.0).round() as u8;
    grey.then_some([level, level, level, alpha_of(args).unwrap_or(255)])
}

fn is_colour_function(name: &str) -> bool {
    matches!(
        name,
        "hwb" | "lab" | "lch" | "oklab" | "oklch" | "color" | "color-mix" | "light-dark"
    )
}

/// The alpha after a `/` (or a fourth comma-separated argument), 0 to 255.
fn alpha_of(args: &[Value]) -> Option<u8> {
    let numbers: Vec<&Value> = args.iter().filter(|v| !matches!(v, Value::Other)).collect();
    let slash = args.iter().rposition(|v| *v == Value::Other);
    let last = match (slash, numbers.len()) {
        (Some(at), _) if at + 1 < args.len() => &args[at + 1],
        (_, 4) => numbers[3],
        _ => return None,
    };
    match last {
        Value::Number(n) => Some((n.clamp(0.0, 1.0) * 255.0).round() as u8),
        Value::Percent(p) => Some((p.clamp(0.0, 100.0) * 2.55).round() as u8),
        other => amount(other).map(|n| (n.clamp(0.0, 1.0) * 255.0).round() as u8),
    }
}

/// `hsl(h s l [/ a])`, in the comma or space syntax.
fn hsl_colour(args: &[Value]) -> Option<[u8; 4]> {
    let numbers: Vec<f32> = args.iter().filter_map(amount).collect();
    let [hue, saturation, lightness, ..] = numbers[..] else {
        return None;
    };
    let (s, l) = (
        saturation.clamp(0.0, 100.0) / 100.0,
        lightness.clamp(0.0, 100.0) / 100.0,
    );
    let channel = |n: f32| {
        let k = (n + hue.rem_euclid(360.0) / 30.0) % 12.0;
        let a = s * l.min(1.0 - l);
        ((l - a * (k - 3.0).min(9.0 - k).clamp(-1.0, 1.0)) * 255.0).round() as u8
    };
    Some([
        channel(0.0),
        channel(8.0),
        channel(4.0),
        alpha_of(args).unwrap_or(255),
    ])
}

fn hex_colour(hex: &str) -> Option<[u8; 4]> {
    let digits: Vec<u8> = hex
        .chars()
        .map(|c| c.to_digit(16).map(|d| d as u8))
        .collect::<Option<_>>()?;
    let full = |hi: u8, lo: u8| hi * 16 + lo;
    match digits[..] {
        [r, g, b] => Some([r * 17, g * 17, b * 17, 255]),
        [r, g, b, a] => Some([r * 17, g * 17, b * 17, a * 17]),
        [r1, r2, g1, g2, b1, b2] => Some([full(r1, r2), full(g1, g2), full(b1, b2), 255]),
        [r1, r2, g1, g2, b1, b2, a1, a2] => {
            Some([full(r1, r2), full(g1, g2), full(b1, b2), full(a1, a2)])
        }
        _ => None,
    }
}
