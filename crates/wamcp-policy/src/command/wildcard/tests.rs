use super::*;

#[test]
fn patterns_match_as_bash_matches_them() {
    for (pattern, name, want) in [
        ("*.o", "a.o", true),
        ("*.o", "a.c", false),
        ("*.o", ".hidden.o", false),
        (".*", ".hidden", true),
        ("file?.txt", "file1.txt", true),
        ("file?.txt", "file10.txt", false),
        ("[ab]*", "beta", true),
        ("[ab]*", "gamma", false),
        ("[!a]*", "beta", true),
        ("[!a]*", "alpha", false),
        ("x[0-9]", "x7", true),
        ("x[0-9]", "xa", false),
        ("a*b*c", "aXbYc", true),
        ("a*b*c", "aXbY", false),
        ("[", "[", true),
        ("*", "", true),
    ] {
        assert_eq!(matches(pattern, name), want, "{pattern} {name}");
    }
}

#[test]
fn only_the_last_part_may_hold_wildcards() {
    assert_eq!(split("src/*.rs"), Some(("src/", "*.rs")));
    assert_eq!(split("*.rs"), Some(("", "*.rs")));
    assert_eq!(split("*/x.rs"), None);
    assert!(is_pattern("--filter=*Test*"));
    assert!(!is_pattern("a[b"));
    assert!(!is_pattern("plain.txt"));
}
