use super::*;

fn style_of(css: &str, html: &str, limit: usize) -> Option<Style> {
    let mut sheets = Sheets::with_limit(limit);
    sheets.add(css);
    let document = scraper::Html::parse_fragment(html);
    let target = scraper::Selector::parse("#t").unwrap();
    let element = document.select(&target).next().unwrap();
    let mut ancestors = Ancestors::default();
    for ancestor in element.ancestors().filter_map(scraper::ElementRef::wrap) {
        ancestors.enter(ancestor.value());
    }
    sheets.styles_for(
        element,
        element.value().attr("style").unwrap_or(""),
        &ancestors,
    )
}

#[test]
fn the_cascade_orders_by_importance_origin_specificity_and_source() {
    let display = |css: &str, html: &str| {
        let style = style_of(css, html, usize::MAX).unwrap();
        style.keyword("display").map(str::to_string)
    };
    let html = r#"<div class="a"><p id="t" class="x y">text</p></div>"#;
    assert_eq!(display(".x{display:none}", html).as_deref(), Some("none"));
    assert_eq!(
        display(".x{display:none}.y{display:block}", html).as_deref(),
        Some("block")
    );
    assert_eq!(
        display("p.x{display:none}.y{display:block}", html).as_deref(),
        Some("none")
    );
    assert_eq!(
        display(".a .x{display:none}#t{display:block}", html).as_deref(),
        Some("block")
    );
    assert_eq!(
        display("#t{display:none!important}#t{display:block}", html).as_deref(),
        Some("none")
    );
    assert_eq!(
        display(".x{display:\\6e one}", html).as_deref(),
        Some("none")
    );
    assert_eq!(
        display("div > p:not(.z){display:none}", html).as_deref(),
        Some("none")
    );
    assert_eq!(display(".b .x{display:none}", html), None);
    assert_eq!(display("p:hover{display:none}", html), None);
    assert_eq!(display("@media print{.x{display:none}}", html), None);
    assert_eq!(
        display("@font-face{font-family:x}.x{display:none}", html).as_deref(),
        Some("none")
    );
    let inline = r#"<p id="t" class="x" style="display:block">text</p>"#;
    assert_eq!(
        display(".x{display:none}", inline).as_deref(),
        Some("block")
    );
    assert_eq!(
        display(".x{display:none !important}", inline).as_deref(),
        Some("none")
    );
}

#[test]
fn media_blocks_count_when_they_match_a_desktop_window() {
    let display = |css: &str| {
        style_of(css, r#"<p id="t" class="x">text</p>"#, usize::MAX)
            .unwrap()
            .keyword("display")
            .map(str::to_string)
    };
    assert_eq!(
        display("@media (min-width:768px){.x{display:none}}").as_deref(),
        Some("none")
    );
    assert_eq!(display("@media (max-width:767px){.x{display:none}}"), None);
    assert_eq!(
        display(".x{display:none}@media (min-width:99999px){.x{display:block}}").as_deref(),
        Some("none")
    );
    assert_eq!(
        display("@supports (display:grid){.x{display:none}}").as_deref(),
        Some("none")
    );
    assert_eq!(
        display("@supports not (display:grid){.x{display:none}}"),
        None
    );
    assert_eq!(
        display("@container (min-width:1px){.x{display:none}}").as_deref(),
        Some("none")
    );
    assert_eq!(
        display("@container card (min-width:99999px){.x{display:none}}"),
        None
    );
    assert_eq!(
        display("@layer base{.x{display:none}}").as_deref(),
        Some("none")
    );
    assert_eq!(display("@scope (.card){.x{display:none}}"), None);
    assert_eq!(
        display("@layer b, a; @layer a{.x{display:none}} @layer b{.x{display:block}}").as_deref(),
        Some("none")
    );
    assert_eq!(
        display("@layer a{.x{display:none}} @layer b{.x{display:block}}").as_deref(),
        Some("block")
    );
    assert_eq!(
        display("@layer a{.x{display:none!important}} @layer b{.x{display:block!important}}")
            .as_deref(),
        Some("none")
    );
    assert_eq!(
        display("@layer a{@layer c{.x{display:none}}} @layer a.c{.x{color:red}} .y{}").as_deref(),
        Some("none")
    );
    assert_eq!(display("@scope (.card) to (.end){.x{display:none}}"), None);
    assert_eq!(
        display(".x{display:none}@layer b{.x{display:block}}").as_deref(),
        Some("none")
    );
    assert_eq!(
        display("@layer b{.x{display:none!important}}.x{display:block!important}").as_deref(),
        Some("none")
    );
}

#[test]
fn rules_needing_an_ancestor_skip_elements_without_one() {
    // `.space-y-4 > :not([hidden]) ~ :not([hidden])`: the parent must
    // have the class, whatever the siblings are.
    let css = ".space-y-4 > :not([hidden]) ~ :not([hidden]){display:none}";
    let inside = r#"<div class="space-y-4"><p>a</p><p id="t">b</p></div>"#;
    let outside = r#"<div><p>a</p><p id="t">b</p></div>"#;
    let display = |html: &str| {
        style_of(css, html, usize::MAX)
            .unwrap()
            .keyword("display")
            .map(str::to_string)
    };
    assert_eq!(display(inside).as_deref(), Some("none"));
    assert_eq!(display(outside), None);
    let mut sheets = Sheets::default();
    sheets.add(css);
    assert_eq!(sheets.rules[0].ancestor.as_deref(), Some(".space-y-4"));
}

#[test]
fn the_work_limit_stops_matching() {
    let rules: String = (0..50)
        .map(|i| format!(":not(.z{i}){{display:none}}"))
        .collect();
    let html = r#"<p id="t">text</p>"#;
    assert!(style_of(&rules, html, 49).is_none());
    assert!(style_of(&rules, html, 50).is_some());
}

#[test]
fn nesting_is_measured_outside_comments_and_strings() {
    let deep = "@media screen{".repeat(MAX_CSS_NESTING + 1);
    assert!(nests_too_deeply(&deep));
    assert!(nests_too_deeply(&(":not(".repeat(100_000) + "p")));
    assert!(!nests_too_deeply(&"@media screen{".repeat(MAX_CSS_NESTING)));
    let quoted = format!(
        ".x::after{{content:\"{}\"}}/* {} */.y{{}}",
        "(".repeat(100),
        "{".repeat(100)
    );
    assert!(!nests_too_deeply(&quoted));
    assert!(!nests_too_deeply(&format!(
        ".x{{content:\"\\\"{}\"}}",
        "(".repeat(100)
    )));
    assert!(!nests_too_deeply(&"\\(".repeat(100)));
}

#[test]
fn hostile_sheets_parse_without_trouble() {
    let deep_blocks = "@media screen{".repeat(MAX_CSS_NESTING) + ".x{display:none}";
    let deep_selector = ":not(".repeat(MAX_CSS_NESTING) + "p";
    for css in [
        "",
        "}}}{{{",
        "/* unterminated",
        ".x{display:none",
        "@media",
        "@media screen{",
        "@import url(https://evil.test/a.css);",
        deep_blocks.as_str(),
        deep_selector.as_str(),
    ] {
        let _ = style_of(css, r#"<p id="t" class="x">text</p>"#, usize::MAX);
    }
}
