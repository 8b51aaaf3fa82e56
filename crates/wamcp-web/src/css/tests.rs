use super::*;

fn effect(style: &str) -> Effect {
    Style::parse(style).effect()
}

#[test]
fn every_spelling_of_display_none_removes() {
    for style in [
        "display:none",
        "DISPLAY: NONE",
        "display:/**/none",
        "display:\\6e one",
        "display:\\6E\\6F\\6E\\65",
        ";;display:none",
        "color:red;;display:none",
        "display:block;display:none",
        "display:none!important;display:block",
        "display : none ! important",
        "display:inline; display: none /* trailing */",
    ] {
        assert!(effect(style).removed, "{style:?}");
    }
}

#[test]
fn the_cascade_inside_one_attribute_is_respected() {
    for style in [
        "display:none;display:block",
        "display:none;display:block!important",
        "display: nonex",
        "display:'none'",
        "--display:none",
        "x-display:none",
        // An unclosed block swallows the rest, as in a browser.
        "{;display:none",
    ] {
        assert!(!effect(style).removed, "{style:?}");
    }
}

#[test]
fn boxes_that_render_nothing_are_removed() {
    for style in [
        "opacity:0",
        "opacity:0.0",
        "opacity:0%",
        "transform:scale(0)",
        "transform:translate(1px) scaleX(0)",
        "transform:scale(1, 0)",
        "clip:rect(0 0 0 0);position:absolute",
        "clip:rect(0,0,0,0)",
        "clip:rect(1px, 1px, 1px, 1px)",
        "clip-path:inset(50%)",
        "clip-path:inset(0 0 100% 0)",
        "clip-path:circle(0)",
        "height:0;overflow:hidden",
        "max-height:0px;overflow-y:hidden",
        "width:0;overflow:clip",
        "position:absolute;left:-9999px",
        "position:fixed;top:-2000px",
        "position:absolute;left:-100em",
        "text-indent:-9999px",
        "content-visibility:hidden",
    ] {
        assert!(effect(style).removed, "{style:?}");
    }
}

#[test]
fn small_or_partial_boxes_stay() {
    for style in [
        "opacity:0.05",
        "transform:scale(0.5)",
        "transform:rotate(0deg)",
        "clip:rect(0 100px 20px 0)",
        "clip-path:inset(10%)",
        "clip-path:circle(40%)",
        "height:1px;overflow:hidden",
        "height:0",
        "overflow:hidden",
        "position:absolute;left:-10px",
        "position:relative;left:-20px",
        "left:-9999px",
        "text-indent:-2em",
        "content-visibility:auto",
        "margin-left:-5000px;position:static;display:block",
    ] {
        assert_eq!(effect(style), Effect::default(), "{style:?}");
    }
}

#[test]
fn visibility_hides_and_shows_again() {
    assert_eq!(effect("visibility:hidden").visible, Some(false));
    assert_eq!(effect("VISIBILITY:collapse").visible, Some(false));
    assert_eq!(effect("visibility:visible").visible, Some(true));
    assert_eq!(
        effect("visibility:hidden;visibility:visible").visible,
        Some(true)
    );
    assert_eq!(effect("color:red").visible, None);
}

#[test]
fn unreadable_text_is_not_legible() {
    for style in [
        "font-size:0",
        "font-size:0px",
        "font-size:0em",
        "color:transparent",
        "color:rgba(0,0,0,0)",
        "color:#0000",
        "color:#fff;background-color:#ffffff",
        "color:white;background:#FFF",
        "color:rgb(10 20 30);background:rgb(10,20,30)",
    ] {
        assert_eq!(effect(style).legible, Some(false), "{style:?}");
    }
    for (style, want) in [
        ("font-size:1px", Some(true)),
        ("font-size:12px", Some(true)),
        ("font-size:medium", Some(true)),
        ("color:#fff;background:#000", None),
        ("color:#777", None),
        ("color:rgba(0,0,0,0.5)", None),
        ("background:white", None),
    ] {
        assert_eq!(effect(style).legible, want, "{style:?}");
    }
}

#[test]
fn hostile_styles_parse_without_trouble() {
    let deep = "x:".to_string() + &"f(".repeat(10_000);
    for style in [
        "",
        ";;;;",
        "display",
        "display:",
        ":none",
        "\\",
        "display:none\u{0}",
        "/* unterminated",
        "\"unterminated",
        "url(",
        deep.as_str(),
    ] {
        let _ = effect(style);
    }
}
