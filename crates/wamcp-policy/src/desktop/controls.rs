//! Child controls: how a `target` names one, and which background route a
//! control accepts.
//!
//! A target is `id:<number>` (the control id), `class:<Class>` or
//! `class:<Class>[n]` (the n-th control of that class, from 0, in the
//! window's child order), `#<n>` (an accessibility element by the ref `see`
//! gave it), `text:<caption>` or any other string, which is a caption
//! (`text:#3` names a control whose caption is `#3`). Captions compare without case, surrounding spaces and the `&`
//! that marks a mnemonic, and must match whole: clicking "Delete all" when
//! the model wrote "Delete" is the kind of guess this tool never makes.

use serde::Serialize;

/// One child control as the window reports it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Control {
    /// The control's window handle, used to send it messages; never shown.
    #[serde(skip)]
    pub handle: isize,
    /// The owning process; a control can be another program's window.
    #[serde(skip)]
    pub pid: u32,
    /// The window class name (`Button`, `Edit`),
    /// which decides the routes it accepts.
    pub class: String,
    /// Its caption or text, cut when long; empty
    /// for a password or another program's control.
    pub text: String,
    /// The control id its dialog gave it, as `id:<number>` names it.
    pub id: i32,
    /// Screen coordinates: left, top, right, bottom.
    pub rect: [i32; 4],
    /// Whether the control accepts input.
    pub enabled: bool,
    /// Whether the control is shown.
    pub visible: bool,
    /// A check box's or radio button's state; `None` for controls without one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub checked: Option<bool>,
    /// A password edit: its text is never read and never typed into.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub password: bool,
    /// The window style bits, kept to tell a
    /// real button or password edit apart.
    #[serde(skip)]
    pub style: u32,
}

/// A control named by a `target` string; see the module docs for its forms.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Target {
    /// `id:<number>`: the control with this id.
    Id(i32),
    /// `class:<Class>[n]`: the n-th control of a class, from 0, in child order.
    Class {
        /// The class name, compared without case.
        class: String,
        /// Which control of that class, from 0; `0` when no `[n]` was given.
        index: usize,
    },
    /// A caption, which must match whole (without case, spaces and `&`).
    Text(String),
    /// `#<n>`: the accessibility element `see` listed under that ref.
    Ref(u32),
}

/// Longest target string accepted; captions are short.
pub const MAX_TARGET_CHARS: usize = 512;

/// Reads a `target` string, or says why it names no control.
pub fn parse_target(target: &str) -> Result<Target, String> {
    if target.chars().count() > MAX_TARGET_CHARS {
        return Err(format!(
            "target is longer than {MAX_TARGET_CHARS} characters"
        ));
    }
    if let Some(rest) = strip_prefix_ignore_case(target, "id:") {
        let id = rest
            .trim()
            .parse::<i32>()
            .map_err(|_| format!("'{target}' is not id:<number>"))?;
        return Ok(Target::Id(id));
    }
    if let Some(rest) = strip_prefix_ignore_case(target, "class:") {
        let rest = rest.trim();
        let (class, index) = match rest.strip_suffix(']').and_then(|r| r.rsplit_once('[')) {
            Some((class, n)) => (
                class.trim(),
                n.trim()
                    .parse::<usize>()
                    .map_err(|_| format!("'{target}': the index in [] must be a number from 0"))?,
            ),
            None => (rest, 0),
        };
        if class.is_empty() {
            return Err(format!("'{target}' names no class"));
        }
        return Ok(Target::Class {
            class: class.to_string(),
            index,
        });
    }
    if let Some(digits) = target.trim().strip_prefix('#')
        && !digits.is_empty()
        && digits.bytes().all(|b| b.is_ascii_digit())
    {
        return digits
            .parse::<u32>()
            .map(Target::Ref)
            .map_err(|_| format!("'{target}' is no ref see(hwnd) gave"));
    }
    let text = strip_prefix_ignore_case(target, "text:").unwrap_or(target);
    if caption_key(text).is_empty() {
        return Err(
            "the target is empty: name a control by its text, id:<n> or class:<Class>[n]".into(),
        );
    }
    Ok(Target::Text(text.to_string()))
}

fn strip_prefix_ignore_case<'a>(s: &'a str, prefix: &str) -> Option<&'a str> {
    let head = s.get(..prefix.len())?;
    head.eq_ignore_ascii_case(prefix)
        .then(|| &s[prefix.len()..])
}

/// A caption as a person reads it: `&Save` and `&&` read as "Save" and "&".
pub fn caption_key(caption: &str) -> String {
    let mut out = String::with_capacity(caption.len());
    let mut chars = caption.trim().chars().peekable();
    while let Some(c) = chars.next() {
        if c == '&' {
            if chars.peek() == Some(&'&') {
                chars.next();
                out.push('&');
            }
            continue;
        }
        out.extend(c.to_lowercase());
    }
    out.trim().to_string()
}

/// The controls a target names, as indexes into `controls`.
pub fn matches(controls: &[Control], target: &Target) -> Vec<usize> {
    match target {
        Target::Id(id) => (0..controls.len())
            .filter(|&i| controls[i].id == *id)
            .collect(),
        Target::Class { class, index } => (0..controls.len())
            .filter(|&i| controls[i].class.eq_ignore_ascii_case(class))
            .nth(*index)
            .into_iter()
            .collect(),
        // Refs name accessibility elements, never native controls.
        Target::Ref(_) => Vec::new(),
        Target::Text(text) => {
            // The caption as shown ("Fish & Chips") or as stored ("Fish && Chips").
            let plain = text.trim().to_lowercase();
            let key = caption_key(text);
            (0..controls.len())
                .filter(|&i| !controls[i].password)
                .filter(|&i| {
                    let caption = caption_key(&controls[i].text);
                    caption == key || caption == plain
                })
                .collect()
        }
    }
}

const BS_TYPEMASK: u32 = 0x0F;
const BS_GROUPBOX: u32 = 0x07;
const BS_OWNERDRAW: u32 = 0x0B;
const ES_PASSWORD: u32 = 0x20;

/// Classes that are the system button or a framework's thin wrapper of it,
/// which all handle `BM_CLICK` by clicking. Anything else that answers the
/// message may only pretend to (a render host was seen to return 1 and do
/// nothing), so nothing else gets it.
pub fn is_button(class: &str, style: u32) -> bool {
    let lower = class.to_ascii_lowercase();
    let button_class = lower == "button"
        || lower.starts_with("windowsforms10.button.")
        || matches!(
            lower.as_str(),
            "tbutton" | "tbitbtn" | "tcheckbox" | "tradiobutton"
        );
    let kind = style & BS_TYPEMASK;
    button_class && kind != BS_GROUPBOX && kind != BS_OWNERDRAW
}

/// Classes whose text `WM_SETTEXT` replaces and `WM_GETTEXT` reads back.
pub fn is_edit(class: &str) -> bool {
    let lower = class.to_ascii_lowercase();
    lower == "edit"
        || lower.starts_with("richedit")
        || lower.starts_with("windowsforms10.edit.")
        || matches!(lower.as_str(), "tedit" | "tmemo")
}

/// System classes in which the bit `ES_PASSWORD` has another meaning
/// (`BS_LEFTTEXT`, `LBS_OWNERDRAWVARIABLE`, ...), so it proves nothing.
const NOT_EDITS: [&str; 19] = [
    "button",
    "static",
    "listbox",
    "combobox",
    "scrollbar",
    "syslistview32",
    "systreeview32",
    "systabcontrol32",
    "toolbarwindow32",
    "msctls_trackbar32",
    "msctls_updown32",
    "#32770",
    "sysdatetimepick32",
    "sysmonthcal32",
    "msctls_progress32",
    "msctls_statusbar32",
    "sysheader32",
    "syslink",
    "rebarwindow32",
];

/// Whether a control may hide what is typed into it. Fails closed: any
/// class outside the known non-edit system classes with the `ES_PASSWORD`
/// bit counts, because edits come under many class names (VB6
/// `ThunderRT6TextBox`, Delphi `TMaskEdit`) and a password read is worse
/// than a control left alone. The Win32 side also asks the control for
/// its password character.
pub fn is_password(class: &str, style: u32) -> bool {
    style & ES_PASSWORD != 0
        && !is_button(class, style)
        && !NOT_EDITS.contains(&class.to_ascii_lowercase().as_str())
}

/// Short labels of the controls a window has, for a refusal that must say
/// what could have been meant. At most `limit` are listed.
pub fn describe(controls: &[Control], limit: usize) -> String {
    let mut parts: Vec<String> = controls
        .iter()
        .filter(|c| c.visible)
        .take(limit)
        .map(|c| {
            if c.text.trim().is_empty() || c.password {
                format!("{} id:{}", c.class, c.id)
            } else {
                format!("'{}' ({} id:{})", c.text.trim(), c.class, c.id)
            }
        })
        .collect();
    if parts.is_empty() {
        return "the window has no visible child controls".to_string();
    }
    let visible = controls.iter().filter(|c| c.visible).count();
    if visible > limit {
        parts.push(format!("and {} more", visible - limit));
    }
    parts.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn control(class: &str, text: &str, id: i32) -> Control {
        Control {
            class: class.into(),
            text: text.into(),
            id,
            visible: true,
            enabled: true,
            ..Control::default()
        }
    }

    #[test]
    fn targets_parse_by_prefix_and_default_to_a_caption() {
        assert_eq!(parse_target("id:1001"), Ok(Target::Id(1001)));
        assert_eq!(parse_target("ID: -5"), Ok(Target::Id(-5)));
        assert_eq!(
            parse_target("class:Edit[2]"),
            Ok(Target::Class {
                class: "Edit".into(),
                index: 2
            })
        );
        assert_eq!(
            parse_target("class:Button"),
            Ok(Target::Class {
                class: "Button".into(),
                index: 0
            })
        );
        assert_eq!(parse_target("OK"), Ok(Target::Text("OK".into())));
        // A caption that looks like a prefix is reached through text:.
        assert_eq!(parse_target("text:id:7"), Ok(Target::Text("id:7".into())));
        assert_eq!(
            parse_target("Save [2]"),
            Ok(Target::Text("Save [2]".into()))
        );
    }

    #[test]
    fn refs_are_a_hash_and_digits_and_nothing_else() {
        assert_eq!(parse_target("#12"), Ok(Target::Ref(12)));
        assert_eq!(parse_target(" #0 "), Ok(Target::Ref(0)));
        // Captions that merely start with a hash stay captions.
        for caption in ["#", "#1a", "# 3", "#-1", "C#", "#１"] {
            assert_eq!(parse_target(caption), Ok(Target::Text(caption.into())));
        }
        assert_eq!(parse_target("text:#3"), Ok(Target::Text("#3".into())));
        assert!(parse_target("#99999999999").is_err());
        let ok = Control {
            text: "#3".into(),
            ..Control::default()
        };
        assert!(matches(&[ok], &Target::Ref(3)).is_empty());
    }

    #[test]
    fn bad_targets_are_refused() {
        for bad in [
            "id:",
            "id:x",
            "id:99999999999",
            "class:",
            "class:[1]",
            "class:Edit[-1]",
            "class:Edit[a]",
            "",
            "  ",
            "&",
            "text:",
        ] {
            assert!(parse_target(bad).is_err(), "{bad:?} parsed");
        }
        assert!(parse_target(&"x".repeat(MAX_TARGET_CHARS + 1)).is_err());
    }

    #[test]
    fn captions_match_whole_without_case_or_mnemonics() {
        let controls = vec![
            control("Button", "&Save", 1),
            control("Button", "Save &all", 2),
            control("Button", "Fish && Chips", 3),
            control("Static", " Name: ", 4),
        ];
        let find = |t: &str| matches(&controls, &parse_target(t).unwrap());
        assert_eq!(find("save"), [0]);
        assert_eq!(find("SAVE ALL"), [1]);
        assert_eq!(find("fish & chips"), [2]);
        assert_eq!(find("Name:"), [3]);
        assert!(find("Sav").is_empty());
        assert!(find("Save all files").is_empty());
    }

    #[test]
    fn ids_and_classes_select_by_position() {
        let controls = vec![
            control("Edit", "", 10),
            control("Button", "OK", 11),
            control("EDIT", "", 12),
            control("Button", "OK", 13),
        ];
        let find = |t: &str| matches(&controls, &parse_target(t).unwrap());
        assert_eq!(find("class:edit[1]"), [2]);
        assert_eq!(find("class:Edit"), [0]);
        assert!(find("class:Edit[2]").is_empty());
        assert_eq!(find("id:13"), [3]);
        // Two buttons share the caption: both are reported, neither chosen.
        assert_eq!(find("OK"), [1, 3]);
    }

    #[test]
    fn a_password_edit_is_never_matched_by_its_text() {
        let mut secret = control("Edit", "hunter2", 5);
        secret.password = true;
        assert!(matches(&[secret.clone()], &Target::Text("hunter2".into())).is_empty());
        assert!(!describe(&[secret], 5).contains("hunter2"));
    }

    #[test]
    fn only_real_buttons_get_bm_click() {
        assert!(is_button("Button", 0));
        assert!(is_button("BUTTON", 0x03)); // auto checkbox
        assert!(is_button("WindowsForms10.BUTTON.app.0.141b42a_r9_ad1", 0));
        assert!(is_button("TButton", 0));
        assert!(!is_button("Button", BS_GROUPBOX));
        assert!(!is_button("Button", BS_OWNERDRAW));
        assert!(!is_button("Chrome_RenderWidgetHostHWND", 0));
        assert!(!is_button("ButtonLike", 0));
        assert!(!is_button("Static", 0));
    }

    #[test]
    fn edits_and_password_edits() {
        for class in [
            "Edit",
            "RichEdit20W",
            "RICHEDIT50W",
            "WindowsForms10.EDIT.app.0.1",
            "TMemo",
        ] {
            assert!(is_edit(class), "{class}");
        }
        assert!(!is_edit("Static"));
        assert!(!is_edit("ComboBox"));
        assert!(is_password("Edit", ES_PASSWORD | 0x80));
        assert!(!is_password("Edit", 0x80));
        // Edits under other names are password fields too.
        assert!(is_password("ThunderRT6TextBox", ES_PASSWORD));
        assert!(is_password("TMaskEdit", ES_PASSWORD));
        // The same bit means something else in these classes.
        assert!(!is_password("Button", ES_PASSWORD));
        assert!(!is_password("ListBox", ES_PASSWORD));
        // Text on the left of a checkbox, right-aligned date pickers.
        assert!(!is_password(
            "WindowsForms10.BUTTON.app.0.1",
            ES_PASSWORD | 0x03
        ));
        assert!(!is_password("TCheckBox", ES_PASSWORD));
        assert!(!is_password("SysDateTimePick32", ES_PASSWORD));
    }

    #[test]
    fn descriptions_are_bounded() {
        let controls: Vec<Control> = (0..30)
            .map(|i| control("Button", &format!("b{i}"), i))
            .collect();
        let text = describe(&controls, 3);
        assert_eq!(
            text,
            "'b0' (Button id:0), 'b1' (Button id:1), 'b2' (Button id:2), and 27 more"
        );
        assert_eq!(describe(&[], 3), "the window has no visible child controls");
    }
}
