use super::*;

#[test]
fn an_approval_is_the_exact_line_in_its_project() {
    let mut approvals = Approvals::default();
    approvals.add("/p", "npx cowsay hi");
    approvals.add("/p", "npx cowsay hi");
    let text = approvals.to_text();
    let read = Approvals::parse(&text).unwrap();
    assert_eq!(read, approvals);
    assert!(read.allows("/p", "npx cowsay hi"));
    for (project, command) in [
        ("/q", "npx cowsay hi"),
        ("/p", "npx cowsay hi && calc"),
        ("/p", "npx cowsay"),
        ("/p", "npx  cowsay hi"),
    ] {
        assert!(!read.allows(project, command), "{project} {command}");
    }
}

#[test]
fn the_oldest_go_when_a_project_holds_too_many() {
    let mut approvals = Approvals::default();
    for i in 0..=MAX_PER_PROJECT {
        approvals.add("/p", &format!("cmd {i}"));
    }
    assert!(!approvals.allows("/p", "cmd 0"));
    assert!(approvals.allows("/p", &format!("cmd {MAX_PER_PROJECT}")));
}

#[test]
fn a_malformed_file_allows_nothing() {
    for text in [
        "",
        "[]",
        "{\"projects\": {\"/p\": \"x\"}}",
        "{\"other\": 1}",
    ] {
        assert!(Approvals::parse(text).is_err(), "{text}");
    }
    assert_eq!(Approvals::parse("{}").unwrap(), Approvals::default());
}
