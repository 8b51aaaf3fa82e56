use super::*;

fn effect(style: &str) -> Effect {
    Style::parse(style).effect("div")
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
        "opacity:0.01",
        "opacity:-1",
        "opacity:calc(0)",
        "transform:scale(0)",
        "transform:translate(1px) scaleX(0)",
        "transform:scale(1, 0)",
        "clip:rect(0 0 0 0);position:absolute",
        "clip:rect(0,0,0,0);position:absolute",
        "position:fixed;clip:rect(1px, 1px, 1px, 1px)",
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
        "position:absolute;left:-999px",
        "margin-top:-5000px",
        "margin-left:-5000px",
        "position:relative;left:-3000px",
        "position:absolute;right:100vw",
        "contain:paint;height:0",
        "position:absolute;top:-600px",
        "position:fixed;right:-2000px",
        "position:fixed;top:900px",
        "position:fixed;left:1300px",
        "position:fixed;bottom:-600px",
        "position:absolute;left:calc(-9999px)",
        "transform:translateX(-9999px)",
        "transform:translate(-50vw, -2000px)",
        "translate:-9999px 0",
        "transform:matrix(0,0,0,0,0,0)",
        "transform:scale(.001)",
        "transform:scale(.05)",
        "transform:rotateX(90deg)",
        "transform:rotateY(0.25turn)",
        "transform:skewX(90deg)",
        "filter:blur(50px)",
        "letter-spacing:-1em",
        "letter-spacing:-20px",
        "scale:0",
        "zoom:0.01",
        "filter:opacity(0)",
        "height:1px;overflow:hidden",
        "height:0;overflow:auto",
        "overflow:hidden clip;height:0",
        "block-size:0;overflow:hidden",
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
        "height:3px;overflow:hidden",
        "height:0.5em;overflow:hidden",
        "height:0",
        "overflow:hidden",
        "position:absolute;left:-10px",
        "position:absolute;left:-200px",
        "position:fixed;top:700px",
        "position:absolute;top:900px",
        "transform:translateX(-20px)",
        "transform:scale(0.9)",
        "transform:rotateX(45deg)",
        "filter:blur(1px)",
        "letter-spacing:-0.02em",
        "letter-spacing:2px",
        "clip:rect(0 0 0 0)",
        "height:0;padding-bottom:56.25%;overflow:hidden",
        "filter:opacity(0.5)",
        "zoom:0.8",
        "position:relative;left:-20px",
        "left:-9999px",
        "text-indent:-2em",
        "content-visibility:auto",
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
fn font_sizes_are_worked_out_in_pixels() {
    let px = |style: &str, parent: f32| Style::parse(style).font_px(parent);
    for (style, parent, want) in [
        ("font-size:0", 16.0, Some(0.0)),
        ("font-size:12px", 16.0, Some(12.0)),
        ("font-size:1rem", 4.0, Some(16.0)),
        ("font-size:1.25rem", 16.0, Some(20.0)),
        ("font-size:0.5em", 10.0, Some(5.0)),
        ("font-size:0.1em", 16.0, Some(1.6)),
        ("font-size:10%", 16.0, Some(1.6)),
        ("font-size:2vw", 16.0, Some(25.6)),
        ("font-size:0.5in", 16.0, Some(48.0)),
        ("font-size:12pt", 16.0, Some(16.0)),
        ("font-size:calc(0px)", 16.0, Some(0.0)),
        ("font-size:min(0px, 2em)", 16.0, Some(0.0)),
        ("font-size:clamp(1rem, 2vw, 2rem)", 16.0, Some(25.6)),
        ("font-size:medium", 4.0, Some(16.0)),
        ("font-size:smaller", 12.0, Some(10.0)),
        ("font:0/0 a", 16.0, Some(0.0)),
        ("font:bold 2vw/1.2 sans-serif", 16.0, Some(25.6)),
        ("font:italic bold 1px serif", 16.0, Some(1.0)),
        ("font-size:inherit", 16.0, None),
        ("color:red", 16.0, None),
    ] {
        let got = px(style, parent);
        assert!(
            match (got, want) {
                (Some(a), Some(b)) => (a - b).abs() < 0.01,
                (a, b) => a == b,
            },
            "{style:?} in {parent}px: {got:?}"
        );
    }
}

/// Whether text styled `inner` inside an element styled `outer` on a white
/// page can be seen.
fn seen(outer: &str, inner: &str) -> bool {
    Paint::canvas(true)
        .inside(&Style::parse(outer), Hints::default())
        .inside(&Style::parse(inner), Hints::default())
        .seen
}

#[test]
fn text_coloured_like_its_background_is_not_seen() {
    for (outer, inner) in [
        ("", "color:transparent"),
        ("", "color:rgba(0,0,0,0)"),
        ("", "color:#0000"),
        ("", "color:hsl(0 0% 0% / 0)"),
        ("", "color:hsla(120, 50%, 50%, 0)"),
        ("", "color:color(srgb 0 0 0 / 0)"),
        ("", "color:oklch(0.5 0.1 20 / 0%)"),
        ("", "color:white"),
        ("", "color:#fefefe"),
        ("", "color:rgb(255 255 255)"),
        ("", "color:hsl(0, 0%, 100%)"),
        ("background:#000", "color:#000"),
        ("background-color:#000", "color:#010101"),
        ("color:#fff;background:#fff", ""),
        ("", "color:#fff;background-color:#ffffff"),
        ("", "color:red;-webkit-text-fill-color:transparent"),
        ("", "color:snow"),
        ("", "color:ivory"),
        ("background:navy", "color:navy"),
        ("", "color:oklch(1 0 0)"),
        ("", "color:lab(100 0 0)"),
        ("", "color:hwb(0 100% 0%)"),
        ("", "color:color(srgb 1 1 1)"),
        ("", "color:Canvas"),
        ("", "color:white;color:nonsense"),
        ("", "color:rgba(0,0,0,0.01)"),
        ("background:rgb(0,0,0)", "color:#000"),
        ("background:#000 repeat", "color:black"),
        ("", "color:#000;background:currentcolor"),
        ("background:linear-gradient(#fff,#fff)", "color:#fff"),
        (
            "background:url(x.png);background-image:none;background-color:#000",
            "color:#000",
        ),
        ("", "color:color-mix(in srgb, white 100%, black)"),
        ("", "color:light-dark(white, black)"),
        ("", "color:#fff;color:black red"),
        ("", "color:snow"),
        ("", "color:ivory"),
        ("background:navy", "color:navy"),
        ("", "color:oklch(1 0 0)"),
        ("", "color:lab(100 0 0)"),
        ("", "color:hwb(0 100% 0%)"),
        ("", "color:color(srgb 1 1 1)"),
        ("", "color:Canvas"),
        ("", "color:white;color:nonsense"),
        ("", "color:rgba(0,0,0,0.01)"),
        ("background:rgb(0,0,0)", "color:#000"),
        ("background:#000 repeat", "color:black"),
        ("", "color:#000;background:currentcolor"),
    ] {
        assert!(!seen(outer, inner), "{outer:?} / {inner:?}");
    }
    for (outer, inner) in [
        ("", ""),
        ("", "color:#777"),
        ("", "color:#eee"),
        ("", "color:rgba(0,0,0,0.5)"),
        ("background:#000", "color:#fff"),
        ("background:url(hero.jpg)", "color:#fff"),
        ("background:linear-gradient(#000,#333)", "color:white"),
        ("color:transparent", "color:#000"),
        (
            "",
            "color:transparent;background-clip:text;background-image:linear-gradient(red,blue)",
        ),
        ("", "color:transparent;-webkit-text-fill-color:#000"),
        ("background:rgba(0,0,0,0.1)", "color:#333"),
        ("background:none", "color:#000"),
        ("background-image:url(x.jpg)", "color:#fff"),
        ("background-image:linear-gradient(#000,#333)", "color:#fff"),
        ("", "color:color-mix(in srgb, black 50%, white)"),
        ("", "color:oklch(0.6 0.2 30)"),
        ("", "color:red;color:LinkText"),
        ("color-scheme:dark", "color:white"),
        ("background:none", "color:#000"),
        ("", "color:oklch(0.6 0.2 30)"),
        ("", "color:red;color:LinkText"),
        ("color-scheme:dark", "color:white"),
    ] {
        assert!(seen(outer, inner), "{outer:?} / {inner:?}");
    }
    let unknown_page = Paint::canvas(false).inside(&Style::parse("color:#fff"), Hints::default());
    assert!(unknown_page.seen, "a page with linked sheets may be dark");
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
