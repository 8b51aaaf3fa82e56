//! Key notation for `key`: translated into strokes, never passed through.
//!
//! Two notations are accepted. A *chord* written with plus signs, `Ctrl+s`,
//! `Alt+F4`, `Ctrl+Shift+Home`: it is a chord only when every part before the
//! last is a modifier name, so `1+1` and `a+b` stay text. Otherwise the
//! SendKeys notation: `^` Ctrl and `%` Alt on the next key or `(group)`, `+`
//! Shift only before `{NAME}` or `(group)` (elsewhere it is a plus sign),
//! `{NAME}` or `{NAME n}` a named key (repeated), `{^}` `{%}` `{~}` `{{}`
//! `{}}` `{(}` `{)}` those characters, `~` Enter; every
//! other character is typed as itself.

/// Modifier keys held for one stroke.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Modifiers {
    /// Ctrl is held (`Ctrl+` or `^`).
    pub ctrl: bool,
    /// Alt is held (`Alt+` or `%`).
    pub alt: bool,
    /// Shift is held (`Shift+`, or `+` before `{NAME}` or a group).
    pub shift: bool,
    /// The Windows key is held (`Win+`); [`parse_keys`] refuses such chords.
    pub win: bool,
}

impl Modifiers {
    /// Whether any modifier is held.
    pub fn any(self) -> bool {
        self.ctrl || self.alt || self.shift || self.win
    }

    fn union(self, other: Modifiers) -> Modifiers {
        Modifiers {
            ctrl: self.ctrl || other.ctrl,
            alt: self.alt || other.alt,
            shift: self.shift || other.shift,
            win: self.win || other.win,
        }
    }
}

/// The key a stroke presses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Key {
    /// A Windows virtual-key code for a named key (Enter, F4, Home, …).
    Virtual(u16),
    /// A character, typed as itself.
    Char(char),
}

/// One key press, with the modifiers held for it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stroke {
    /// Modifiers held while the key is pressed.
    pub modifiers: Modifiers,
    /// The key pressed.
    pub key: Key,
}

/// Most strokes one call may send.
pub const MAX_STROKES: usize = 1000;
/// Largest repeat count in `{NAME n}`.
pub const MAX_REPEAT: usize = 100;

/// Longest notation accepted, and how deep `(groups)` may nest (the parser
/// recurses per group: thousands of `(` would overflow the stack).
pub const MAX_NOTATION_CHARS: usize = 4000;
/// How deep `(groups)` may nest: the parser recurses once per group.
pub const MAX_GROUP_DEPTH: usize = 8;

/// Translates `notation` into strokes, or says why it cannot.
pub fn parse_keys(notation: &str) -> Result<Vec<Stroke>, String> {
    if notation.is_empty() {
        return Err("no keys given".into());
    }
    if notation.chars().count() > MAX_NOTATION_CHARS {
        return Err(format!("longer than {MAX_NOTATION_CHARS} characters"));
    }
    let strokes = match plus_chord(notation)? {
        Some(chord) => vec![chord],
        None => {
            let mut parser = SendKeys {
                chars: notation.chars().collect(),
                at: 0,
                depth: 0,
                out: Vec::new(),
            };
            parser.sequence(Modifiers::default(), false)?;
            parser.out
        }
    };
    if strokes.iter().any(acts_on_the_shell) {
        return Err(
            "it holds a chord the Windows shell acts on (Win+..., Alt+Tab, Alt+Esc, Ctrl+Esc, \
             Ctrl+Shift+Esc), not the window; it could switch or open windows the keys that follow \
             would then reach"
                .into(),
        );
    }
    if strokes.is_empty() {
        return Err("no keys given".into());
    }
    if strokes.len() > MAX_STROKES {
        return Err(format!("more than {MAX_STROKES} keystrokes"));
    }
    Ok(strokes)
}

fn modifier_named(name: &str) -> Option<Modifiers> {
    let mut m = Modifiers::default();
    match name.trim().to_ascii_lowercase().as_str() {
        "ctrl" | "control" | "ctl" => m.ctrl = true,
        "alt" => m.alt = true,
        "shift" => m.shift = true,
        "win" | "windows" | "super" | "meta" => m.win = true,
        _ => return None,
    }
    Some(m)
}

/// Chords Windows itself acts on (switching, the Start menu, every
/// Win-key shortcut), whatever window has the focus.
fn acts_on_the_shell(stroke: &Stroke) -> bool {
    const TAB: u16 = 0x09;
    const ESC: u16 = 0x1B;
    let m = stroke.modifiers;
    // A literal tab or escape character is typed with that key.
    let (tab, esc) = match stroke.key {
        Key::Virtual(vk) => (vk == TAB, vk == ESC),
        Key::Char(c) => (c == '\t', c == '\u{1b}'),
    };
    m.win || (m.alt && tab) || ((m.alt || m.ctrl) && esc)
}

/// `Ctrl+s`: every part before the last a modifier, the last one key.
/// Shaped like a chord but ending in no key it knows (`Ctrl+Shift+`,
/// `Ctrl+Foo`) is an error, not text to type.
fn plus_chord(notation: &str) -> Result<Option<Stroke>, String> {
    let parts: Vec<&str> = notation.split('+').collect();
    // "Ctrl++" is Ctrl and the plus key.
    let (mods, last) = match parts.as_slice() {
        [mods @ .., "", ""] if !mods.is_empty() => (mods, "+"),
        [mods @ .., last] if !mods.is_empty() => (mods, *last),
        _ => return Ok(None),
    };
    let mut modifiers = Modifiers::default();
    for part in mods {
        match modifier_named(part) {
            Some(m) => modifiers = modifiers.union(m),
            None => return Ok(None),
        }
    }
    let last = last.trim();
    let inner = last
        .strip_prefix('{')
        .and_then(|l| l.strip_suffix('}'))
        .unwrap_or(last);
    let mut chars = inner.chars();
    let key = match (chars.next(), chars.next()) {
        (Some(c), None) => Key::Char(c),
        _ => Key::Virtual(
            virtual_key(inner).ok_or_else(|| format!("'{notation}' ends in no key ('{inner}')"))?,
        ),
    };
    Ok(Some(Stroke { modifiers, key }))
}

struct SendKeys {
    chars: Vec<char>,
    at: usize,
    depth: usize,
    out: Vec<Stroke>,
}

impl SendKeys {
    /// Reads strokes until the end, or until `)` when inside a group.
    fn sequence(&mut self, held: Modifiers, in_group: bool) -> Result<(), String> {
        let mut pending = Modifiers::default();
        while let Some(&c) = self.chars.get(self.at) {
            self.at += 1;
            if self.out.len() > MAX_STROKES {
                return Err(format!("more than {MAX_STROKES} keystrokes"));
            }
            let mods = held.union(pending);
            match c {
                // `+` is Shift only before a named key or a group, so that
                // `1+1` and `a+b` type what they say.
                '+' if !matches!(self.chars.get(self.at), Some('{' | '(')) => {
                    self.push(mods, Key::Char('+'), 1)
                }
                '^' | '%' | '+' => {
                    let m = match c {
                        '^' => &mut pending.ctrl,
                        '%' => &mut pending.alt,
                        _ => &mut pending.shift,
                    };
                    if *m {
                        return Err(format!(
                            "'{c}' twice before one key; write {{{c}}} for the character"
                        ));
                    }
                    *m = true;
                    continue;
                }
                '(' => {
                    if self.depth >= MAX_GROUP_DEPTH {
                        return Err(format!("groups nested deeper than {MAX_GROUP_DEPTH}"));
                    }
                    let before = self.out.len();
                    self.depth += 1;
                    self.sequence(mods, true)?;
                    self.depth -= 1;
                    if self.out.len() == before {
                        return Err("an empty group '()'".into());
                    }
                }
                ')' if in_group => {
                    if pending.any() {
                        return Err("a modifier at the end of a group modifies nothing".into());
                    }
                    return Ok(());
                }
                ')' => return Err("')' without '('; write {)} for the character".into()),
                '{' => self.braced(mods)?,
                '}' => return Err("'}' without '{'; write {}} for the character".into()),
                '~' => self.push(mods, Key::Virtual(VK_RETURN), 1),
                c => self.push(mods, Key::Char(c), 1),
            }
            pending = Modifiers::default();
        }
        if in_group {
            return Err("'(' without ')'".into());
        }
        if pending.any() {
            return Err(
                "a modifier at the end modifies nothing; write {^}, {%} or {+} for the character"
                    .into(),
            );
        }
        Ok(())
    }

    fn braced(&mut self, mods: Modifiers) -> Result<(), String> {
        // `{}}` and `{{}` name the braces themselves.
        let start = self.at;
        let close = (start + 1..self.chars.len())
            .find(|&i| self.chars[i] == '}')
            .ok_or("'{' without '}'")?;
        let body: String = self.chars[start..close].iter().collect();
        self.at = close + 1;
        let (name, count) = match body.rsplit_once(' ') {
            Some((name, n)) if !name.is_empty() && n.chars().all(|c| c.is_ascii_digit()) => {
                let n: usize = n
                    .parse()
                    .map_err(|_| format!("bad repeat count in {{{body}}}"))?;
                if n == 0 || n > MAX_REPEAT {
                    return Err(format!(
                        "a repeat count outside 1-{MAX_REPEAT} in {{{body}}}"
                    ));
                }
                (name, n)
            }
            _ => (body.as_str(), 1),
        };
        let mut chars = name.chars();
        let key = match (chars.next(), chars.next()) {
            (Some(c), None) => Key::Char(c),
            _ => Key::Virtual(virtual_key(name).ok_or_else(|| format!("unknown key {{{name}}}"))?),
        };
        self.push(mods, key, count);
        Ok(())
    }

    fn push(&mut self, modifiers: Modifiers, key: Key, count: usize) {
        for _ in 0..count {
            self.out.push(Stroke { modifiers, key });
        }
    }
}

const VK_RETURN: u16 = 0x0D;

/// The virtual-key code of a key name, as SendKeys and people spell them.
pub fn virtual_key(name: &str) -> Option<u16> {
    let lower = name.trim().to_ascii_lowercase();
    if let Some(n) = lower.strip_prefix('f').and_then(|n| n.parse::<u16>().ok()) {
        return (1..=24).contains(&n).then_some(0x6F + n);
    }
    Some(match lower.as_str() {
        "enter" | "return" => VK_RETURN,
        "tab" => 0x09,
        "esc" | "escape" => 0x1B,
        "backspace" | "bs" | "bksp" => 0x08,
        "delete" | "del" => 0x2E,
        "insert" | "ins" => 0x2D,
        "home" => 0x24,
        "end" => 0x23,
        "pgup" | "pageup" => 0x21,
        "pgdn" | "pagedown" => 0x22,
        "up" => 0x26,
        "down" => 0x28,
        "left" => 0x25,
        "right" => 0x27,
        "space" => 0x20,
        "capslock" => 0x14,
        "numlock" => 0x90,
        "scrolllock" => 0x91,
        "prtsc" | "printscreen" => 0x2C,
        "break" | "pause" => 0x13,
        "apps" | "menu" => 0x5D,
        "help" => 0x2F,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const CTRL: Modifiers = Modifiers {
        ctrl: true,
        alt: false,
        shift: false,
        win: false,
    };
    const ALT: Modifiers = Modifiers {
        ctrl: false,
        alt: true,
        shift: false,
        win: false,
    };
    const SHIFT: Modifiers = Modifiers {
        ctrl: false,
        alt: false,
        shift: true,
        win: false,
    };
    const NONE: Modifiers = Modifiers {
        ctrl: false,
        alt: false,
        shift: false,
        win: false,
    };

    fn s(modifiers: Modifiers, key: Key) -> Stroke {
        Stroke { modifiers, key }
    }

    fn text(t: &str) -> Vec<Stroke> {
        t.chars().map(|c| s(NONE, Key::Char(c))).collect()
    }

    #[test]
    fn chords_in_both_notations_mean_the_same() {
        let ctrl_s = vec![s(CTRL, Key::Char('s'))];
        assert_eq!(parse_keys("^s").unwrap(), ctrl_s);
        assert_eq!(parse_keys("Ctrl+s").unwrap(), ctrl_s);
        assert_eq!(parse_keys("control + s").unwrap(), ctrl_s);
        assert_eq!(parse_keys("^{END}").unwrap(), [s(CTRL, Key::Virtual(0x23))]);
        assert_eq!(
            parse_keys("Ctrl+End").unwrap(),
            [s(CTRL, Key::Virtual(0x23))]
        );
        assert_eq!(parse_keys("Alt+F4").unwrap(), [s(ALT, Key::Virtual(0x73))]);
        assert_eq!(parse_keys("%{F4}").unwrap(), [s(ALT, Key::Virtual(0x73))]);
        let both = Modifiers {
            ctrl: true,
            shift: true,
            ..NONE
        };
        assert_eq!(
            parse_keys("Ctrl+Shift+Home").unwrap(),
            [s(both, Key::Virtual(0x24))]
        );
        assert_eq!(
            parse_keys("^+{HOME}").unwrap(),
            [s(both, Key::Virtual(0x24))]
        );
        assert_eq!(parse_keys("Ctrl++").unwrap(), [s(CTRL, Key::Char('+'))]);
        assert_eq!(
            parse_keys("+{TAB}").unwrap(),
            [s(SHIFT, Key::Virtual(0x09))]
        );
    }

    #[test]
    fn a_plus_between_keys_that_are_not_modifiers_is_text() {
        // The bug this guards against: "1+1" typed as "11", the plus lost.
        assert_eq!(parse_keys("1+1").unwrap(), text("1+1"));
        assert_eq!(parse_keys("a+b").unwrap(), text("a+b"));
        assert_eq!(parse_keys("C++").unwrap(), text("C++"));
        assert_eq!(plus_chord("1+1"), Ok(None));
        assert_eq!(plus_chord("a+b"), Ok(None));
        assert_eq!(parse_keys("{1}{+}{1}").unwrap(), text("1+1"));
    }

    #[test]
    fn sendkeys_groups_repeats_and_escapes() {
        assert_eq!(
            parse_keys("+(ab)").unwrap(),
            [s(SHIFT, Key::Char('a')), s(SHIFT, Key::Char('b'))]
        );
        assert_eq!(
            parse_keys("{LEFT 3}").unwrap(),
            vec![s(NONE, Key::Virtual(0x25)); 3]
        );
        assert_eq!(
            parse_keys("{{}{}}{^}{%}{~}{(}{)}").unwrap(),
            text("{}^%~()")
        );
        assert_eq!(
            parse_keys("ab~").unwrap(),
            [
                s(NONE, Key::Char('a')),
                s(NONE, Key::Char('b')),
                s(NONE, Key::Virtual(0x0D))
            ]
        );
        assert_eq!(parse_keys("héllo 👋").unwrap(), text("héllo 👋"));
        assert_eq!(
            parse_keys("{enter}").unwrap(),
            [s(NONE, Key::Virtual(0x0D))]
        );
    }

    #[test]
    fn malformed_notation_is_refused() {
        for bad in [
            "",
            "^",
            "ab%",
            "^^s",
            "{NOPE}",
            "{ENTER",
            "x}",
            "(ab",
            "ab)",
            "+()",
            "(a^)",
            "{LEFT 101}",
            "{ENTER 0}",
            "Ctrl+Foo",
            "Ctrl+Shift+",
            "Alt+Tab",
            "%{TAB}",
            "Win+r",
            "Ctrl+Esc",
            "^{ESC}",
            "Alt+Esc",
            "%\t",
            "+%\t",
            "^\u{1b}",
            "Ctrl+\u{1b}",
            "%\u{1b}",
            "{F25}",
            "{F0}",
        ] {
            assert!(parse_keys(bad).is_err(), "{bad:?} parsed");
        }
        assert!(parse_keys(&"a".repeat(MAX_STROKES + 1)).is_err());
        // Deep groups would overflow the parser's stack.
        assert!(parse_keys(&"(".repeat(5000)).is_err());
        assert!(parse_keys(&format!("{}a{}", "(".repeat(9), ")".repeat(9))).is_err());
        assert_eq!(
            parse_keys(&format!("{}a{}", "(".repeat(8), ")".repeat(8)))
                .unwrap()
                .len(),
            1
        );
        assert!(parse_keys(&"a".repeat(MAX_NOTATION_CHARS + 1)).is_err());
        // Task Manager, from whichever window has the focus.
        assert!(parse_keys("Ctrl+Shift+Esc").is_err());
        assert!(parse_keys(&"{a 100}".repeat(11)).is_err());
        assert_eq!(
            parse_keys(&"a".repeat(MAX_STROKES)).unwrap().len(),
            MAX_STROKES
        );
    }
}
