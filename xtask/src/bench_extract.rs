//! `bench-extract`: how long `fetch_web_page`'s extraction takes on a
//! 2 MiB page, with and without a 2,000-rule style sheet that has to be
//! matched against every element (classes, ids, descendant and child
//! combinators, attribute selectors, `@media` blocks), and with 2,000
//! rules no index can narrow, which only the work limit bounds.

use std::time::{Duration, Instant};

const RULES: usize = 2_000;
const PAGE_BYTES: usize = 2 * 1024 * 1024 - 64 * 1024;
const RUNS: usize = 5;

pub fn run(args: &[String]) -> Result<(), String> {
    if !args.is_empty() {
        return Err("usage: bench-extract".into());
    }
    let sheet = style_sheet();
    let with_sheet = page(&sheet);
    let without_sheet = page("");
    // Rules every element must try: the work limit is what bounds them.
    let hostile_sheet: String = (0..RULES)
        .map(|i| format!(":not(.z{i}){{color:#333}}\n"))
        .collect();
    let hostile = page(&hostile_sheet);
    println!(
        "extraction of a {:.1} MiB page ({} elements), median of {RUNS} runs\n",
        with_sheet.len() as f64 / (1024.0 * 1024.0),
        with_sheet.matches("<p ").count() + with_sheet.matches("<span ").count()
    );
    println!("| page | median | text lines | notes |");
    println!("|---|---:|---:|---|");
    for (label, html) in [
        ("no style sheet", &without_sheet),
        ("2,000-rule style sheet", &with_sheet),
        ("2,000 rules every element must try", &hostile),
    ] {
        let (took, lines, notes) = measure(html)?;
        println!(
            "| {label} | {:.0} ms | {lines} | {} |",
            took.as_secs_f64() * 1000.0,
            if notes.is_empty() {
                "none".to_string()
            } else {
                notes.join("; ")
            }
        );
    }
    Ok(())
}

fn measure(html: &str) -> Result<(Duration, usize, Vec<String>), String> {
    let mut times = Vec::new();
    let mut last = None;
    for _ in 0..RUNS {
        let started = Instant::now();
        let page = wamcp_web::extract::extract_html(html, None)?;
        times.push(started.elapsed());
        last = Some(page);
    }
    times.sort();
    let page = last.ok_or("no run")?;
    Ok((times[RUNS / 2], page.text.lines().count(), page.notes))
}

/// Rules of the shapes real sheets have; one in ten hides something.
fn style_sheet() -> String {
    let mut css = String::new();
    for i in 0..RULES {
        let declarations = if i % 10 == 0 {
            "display:none"
        } else {
            "color:#333;margin:0 4px;font-size:14px"
        };
        let rule = match i % 5 {
            0 => format!(".c{i}{{{declarations}}}"),
            1 => format!("#id{i}{{{declarations}}}"),
            2 => format!(".wrap .c{i} span{{{declarations}}}"),
            3 => format!("section > p.c{i}{{{declarations}}}"),
            _ => format!(
                "@media (max-width:{}px){{[data-k=\"{i}\"]{{{declarations}}}}}",
                400 + i
            ),
        };
        css.push_str(&rule);
        css.push('\n');
    }
    css
}

fn page(sheet: &str) -> String {
    let mut html = format!(
        "<html><head><title>Bench</title><style>{sheet}</style></head><body><main class=\"wrap\">\n"
    );
    let mut i = 0usize;
    while html.len() < PAGE_BYTES {
        let class = i % RULES;
        html.push_str(&format!(
            "<section><p class=\"c{class}\" id=\"id{i}\" data-k=\"{class}\">Paragraph {i} of the benchmark page, \
             with <span>inline text</span> and <a href=\"https://docs.test/{i}\">a link</a>.</p></section>\n"
        ));
        i += 1;
    }
    html.push_str("</main></body></html>");
    html
}
