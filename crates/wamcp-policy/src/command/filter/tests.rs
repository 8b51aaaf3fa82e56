use super::*;
use crate::command::tokenize::tokenize;

fn filter(stage: &str) -> Filter {
    parse_filter(&tokenize(stage).unwrap()).unwrap_or_else(|e| panic!("{stage:?} refused: {e}"))
}

fn refusal(stage: &str) -> String {
    parse_filter(&tokenize(stage).unwrap()).expect_err(stage)
}

const TEXT: &str = "alpha\nBeta error\ngamma\nerror: delta\nepsilon (x|y)\n";

#[test]
fn each_spelling_does_what_its_program_does() {
    let cases: &[(&str, &str)] = &[
        ("head", TEXT),
        ("head -n 2", "alpha\nBeta error\n"),
        ("head -2", "alpha\nBeta error\n"),
        ("head -n2", "alpha\nBeta error\n"),
        ("head --lines=1", "alpha\n"),
        ("tail -n 2", "error: delta\nepsilon (x|y)\n"),
        ("tail -1", "epsilon (x|y)\n"),
        ("Select-Object -First 1", "alpha\n"),
        ("select -first 1", "alpha\n"),
        ("Select-Object -Last 2", "error: delta\nepsilon (x|y)\n"),
        ("select -l 1", "epsilon (x|y)\n"),
        ("grep error", "Beta error\nerror: delta\n"),
        ("grep -i beta", "Beta error\n"),
        ("grep beta", ""),
        ("grep -v error", "alpha\ngamma\nepsilon (x|y)\n"),
        ("grep -c error", "2\n"),
        ("grep -n error", "2:Beta error\n4:error: delta\n"),
        ("grep -in BETA", "2:Beta error\n"),
        // Basic syntax: `\|` is alternation, a bare `|` or `(` is text.
        (r"grep 'alpha\|gamma'", "alpha\ngamma\n"),
        ("grep '(x|y)'", "epsilon (x|y)\n"),
        ("grep -E 'alpha|gamma'", "alpha\ngamma\n"),
        ("grep -F '(x|y)'", "epsilon (x|y)\n"),
        ("grep -e alpha -e gamma", "alpha\ngamma\n"),
        ("grep -w delta", "error: delta\n"),
        ("grep -w elt", ""),
        // Select-String: a regular expression, case-insensitive by default.
        ("Select-String error", "Beta error\nerror: delta\n"),
        ("Select-String BETA", "Beta error\n"),
        ("Select-String -Pattern BETA -CaseSensitive", ""),
        ("sls -SimpleMatch '(x|y)'", "epsilon (x|y)\n"),
        (
            "Select-String error -NotMatch",
            "alpha\ngamma\nepsilon (x|y)\n",
        ),
        // findstr: space-separated words are alternatives, case-sensitive.
        ("findstr 'alpha gamma'", "alpha\ngamma\n"),
        ("findstr /i BETA", "Beta error\n"),
        ("findstr /c:'error: d'", "error: delta\n"),
        ("findstr /v /i error", "alpha\ngamma\nepsilon (x|y)\n"),
        ("wc -l", "5\n"),
        ("Measure-Object -Line", "5\n"),
        ("Out-Null", ""),
        ("cat", TEXT),
        ("Out-String", TEXT),
        (
            "sort",
            "Beta error\nalpha\nepsilon (x|y)\nerror: delta\ngamma\n",
        ),
        (
            "sort -r",
            "gamma\nerror: delta\nepsilon (x|y)\nalpha\nBeta error\n",
        ),
        (
            "Sort-Object -Descending",
            "gamma\nerror: delta\nepsilon (x|y)\nalpha\nBeta error\n",
        ),
    ];
    for (stage, want) in cases {
        assert_eq!(filter(stage).apply(TEXT), *want, "{stage}");
    }
}

#[test]
fn what_is_not_performed_is_refused_with_what_is() {
    for (stage, says) in [
        ("awk '{print $1}'", "performs only head, tail"),
        ("sort -k 2", "-k"),
        ("cat file.txt", "performs only"),
        ("xargs rm", "Run 'xargs' as a command of its own"),
        ("head -c 10", "head -c"),
        ("head -n", "plain line count"),
        ("tail -f", "tail -f"),
        ("grep -r error src", "-r"),
        ("grep error src/main.rs", "search_files"),
        ("grep -A 3 error", "-A"),
        ("grep", "needs a pattern"),
        ("Select-Object -Skip 2", "-First N"),
        ("Select-Object Name", "-First N"),
        ("Select-String -Path x error", "-Path"),
        ("findstr /s error", "/s"),
        ("wc -c", "performs only"),
        ("grep -E '('", "not one wamcp can read"),
    ] {
        let got = refusal(stage);
        assert!(got.contains(says), "{stage}: {got}");
    }
}

#[test]
fn only_a_line_selecting_filter_can_fail() {
    assert!(filter("grep x").selects());
    assert!(filter("findstr x").selects());
    assert!(!filter("grep -c x").selects());
    assert!(!filter("head").selects());
}

#[test]
fn sort_and_uniq_read_numbers_and_repeats() {
    let numbers = "10 ten\n9 nine\n10 ten\n-1 minus\n";
    assert_eq!(
        filter("sort -n").apply(numbers),
        "-1 minus\n9 nine\n10 ten\n10 ten\n"
    );
    assert_eq!(
        filter("sort -nu").apply(numbers),
        "-1 minus\n9 nine\n10 ten\n"
    );
    assert_eq!(
        filter("sort -rn").apply(numbers),
        "10 ten\n10 ten\n9 nine\n-1 minus\n"
    );
    assert_eq!(filter("uniq").apply("a\na\nb\na\n"), "a\nb\na\n");
    assert_eq!(filter("Sort-Object -Unique").apply("b\na\nb\n"), "a\nb\n");
}
