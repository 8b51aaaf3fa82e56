//! `workflow_plan`'s routing rule: which capability a task names.
//!
//! Evidence is word overlap, kept in three kinds. *Identity* words come from
//! a capability's id and tags; *discriminating* words are identity words
//! that are not generic operations ("run", "test", "lint" say what to do,
//! not with what); *description* words come from its prose. Only
//! discriminating words select: "run the tests" names no capability, and
//! prose that happens to share a word is a hint, never a route. Ties stay
//! ties even when only one side is installed, and a clear winner that is
//! not installed is reported as such rather than quietly replaced by a
//! weaker match that is.

use super::catalog::Capability;
use super::safety::Safety;
use serde::Serialize;
use std::collections::BTreeSet;

/// Identity words that never discriminate between capabilities.
pub const GENERIC_WORDS: [&str; 15] = [
    "build", "check", "create", "current", "inspect", "lint", "package", "plan", "project",
    "route", "run", "setup", "test", "tool", "workflow",
];

/// The words of `text`: runs of `[A-Za-z0-9_.+-]`, lower-cased, each run
/// and its parts split on `- _ . +`, longer than one character, plus a
/// singular for words over three letters ending in a single `s`.
pub fn words(text: &str) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    let is_word_char = |c: char| c.is_ascii_alphanumeric() || "_.+-".contains(c);
    for run in text.split(|c: char| !is_word_char(c)) {
        let run = run.to_ascii_lowercase();
        let parts = std::iter::once(run.as_str()).chain(run.split(['-', '_', '.', '+']));
        for part in parts {
            if part.chars().count() <= 1 {
                continue;
            }
            if part.len() > 3 && part.ends_with('s') && !part.ends_with("ss") {
                found.insert(part[..part.len() - 1].to_string());
            }
            found.insert(part.to_string());
        }
    }
    found
}

fn is_generic(word: &str) -> bool {
    GENERIC_WORDS.contains(&word)
}

/// How one capability matched the task.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Candidate {
    /// The capability's id in the catalog.
    pub id: String,
    /// The capability's safety class, reported
    /// so a caller can weigh running it.
    pub safety: Safety,
    /// How many discriminating words the task
    /// shares with it; only these select.
    pub discriminating_score: usize,
    /// How many identity words (id and tags)
    /// the task shares, generic ones included.
    pub identity_score: usize,
    /// How many words the task shares with its
    /// description; a hint, never a route.
    pub description_score: usize,
    /// The shared discriminating words, sorted.
    pub discriminating_matches: Vec<String>,
    /// The shared identity words, sorted.
    pub identity_matches: Vec<String>,
    /// The shared description words, sorted.
    pub description_matches: Vec<String>,
    /// The program that would run, when one of the alternatives is found.
    pub available_tool: Option<String>,
    /// Every program the catalog lists as an alternative for the capability.
    pub configured_tools: Vec<String>,
}

impl Candidate {
    fn rank(&self) -> (usize, usize, usize) {
        (
            self.discriminating_score,
            self.identity_score,
            self.description_score,
        )
    }
}

/// The outcome of routing.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Selection {
    /// One capability matched best and one of its programs is installed.
    Selected,
    /// Several capabilities matched equally well; the task must name one.
    Ambiguous,
    /// One capability matched best, but none of its programs is installed.
    MatchedUnavailable,
    /// No discriminating word matched any capability.
    NoMatch,
}

/// Where a task was routed, with the evidence for every capability.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Route {
    /// The outcome: selected, tied, not installed or no match.
    pub selection: Selection,
    /// The unique strongest match (selected or not installed).
    pub matched: Option<String>,
    /// The capability to run, only when selected.
    pub selected: Option<String>,
    /// What would settle an unresolved route.
    pub discriminator: Option<String>,
    /// Every capability, strongest first (ties by id).
    pub candidates: Vec<Candidate>,
}

/// Routes `task` (with `context`) over `catalog`. `available` names the
/// program that would run for a capability, if any is installed; it is
/// reported, never used to break a tie.
pub fn route(
    task: &str,
    context: &str,
    catalog: &[Capability],
    available: impl Fn(&Capability) -> Option<String>,
) -> Route {
    let asked = words(&format!("{task} {context}"));
    let mut candidates: Vec<Candidate> = catalog
        .iter()
        .map(|c| {
            let mut identity = words(&c.id);
            identity.extend(words(&c.id.replace('-', " ")));
            for tag in &c.tags {
                identity.extend(words(tag));
            }
            let identity_matches: Vec<String> = asked.intersection(&identity).cloned().collect();
            let discriminating_matches: Vec<String> = identity_matches
                .iter()
                .filter(|w| !is_generic(w))
                .cloned()
                .collect();
            let description_matches: Vec<String> = asked
                .intersection(&words(&c.description))
                .cloned()
                .collect();
            Candidate {
                id: c.id.clone(),
                safety: c.safety,
                discriminating_score: discriminating_matches.len(),
                identity_score: identity_matches.len(),
                description_score: description_matches.len(),
                discriminating_matches,
                identity_matches,
                description_matches,
                available_tool: available(c),
                configured_tools: c.programs().map(str::to_string).collect(),
            }
        })
        .collect();
    candidates.sort_by(|a, b| b.rank().cmp(&a.rank()).then_with(|| a.id.cmp(&b.id)));
    let top: Vec<&Candidate> = candidates
        .iter()
        .take_while(|c| c.discriminating_score > 0 && c.rank() == candidates[0].rank())
        .collect();
    let (selection, matched, discriminator) = match top.as_slice() {
        [] => (Selection::NoMatch, None, Some(no_match_reason(&candidates))),
        [only] if only.available_tool.is_some() => {
            (Selection::Selected, Some(only.id.clone()), None)
        }
        [only] => (
            Selection::MatchedUnavailable,
            Some(only.id.clone()),
            Some(format!(
                "'{}' matches best but none of its programs ({}) is installed; install one, or name another \
                 capability in the task",
                only.id,
                only.configured_tools.join(", ")
            )),
        ),
        tied => (Selection::Ambiguous, None, Some(tie_breaker(tied))),
    };
    let selected = (selection == Selection::Selected)
        .then(|| matched.clone())
        .flatten();
    Route {
        selection,
        matched,
        selected,
        discriminator,
        candidates,
    }
}

/// Why nothing was selected: generic words only, description words only,
/// or nothing in common.
fn no_match_reason(candidates: &[Candidate]) -> String {
    let generic: BTreeSet<&str> = candidates
        .iter()
        .flat_map(|c| c.identity_matches.iter().map(String::as_str))
        .collect();
    let described: BTreeSet<&str> = candidates
        .iter()
        .flat_map(|c| c.description_matches.iter().map(String::as_str))
        .collect();
    let hint = "name the tool, language or capability id (for example 'lint-python')";
    if !generic.is_empty() {
        format!(
            "only generic words matched ({}), which say what to do but not with what; {hint}",
            generic.into_iter().collect::<Vec<_>>().join(", ")
        )
    } else if !described.is_empty() {
        format!(
            "only description words matched ({}), which never select a capability; {hint}",
            described.into_iter().collect::<Vec<_>>().join(", ")
        )
    } else {
        format!("no capability shares a word with the task; {hint}")
    }
}

/// The words each tied capability has that the others lack.
fn tie_breaker(tied: &[&Candidate]) -> String {
    let parts: Vec<String> = tied.iter().map(|c| format!("'{}'", c.id)).collect();
    format!(
        "{} match equally well; name one of them, or the word only it has (its id or a tag), in the task",
        parts.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::devenv::catalog::{builtin, parse};

    fn installed(programs: &'static [&'static str]) -> impl Fn(&Capability) -> Option<String> {
        move |c: &Capability| {
            c.programs()
                .find(|p| programs.contains(p))
                .map(str::to_string)
        }
    }

    const ALL: &[&str] = &["git", "ruff", "pylint", "eslint", "pytest", "dotnet", "gh"];

    #[test]
    fn words_split_lower_and_singularise() {
        let got: Vec<String> = words("Run lint-Python on TESTS, pass class x a.b")
            .into_iter()
            .collect();
        assert_eq!(
            got,
            [
                "a.b",
                "class",
                "lint",
                "lint-python",
                "on",
                "pass",
                "python",
                "run",
                "test",
                "tests"
            ]
        );
        // `ss` keeps its s; three letters or fewer are left alone.
        assert!(!words("class gas").contains("clas"));
        assert!(!words("gas").contains("ga"));
        assert!(words("configs").contains("config"));
    }

    #[test]
    fn routing_cases() {
        let catalog = builtin();
        // (task, context, installed programs, selection, matched id)
        type Case<'a> = (&'a str, &'a str, &'a [&'a str], Selection, Option<&'a str>);
        let cases: &[Case] = &[
            // A tag names it.
            (
                "lint the python code",
                "",
                ALL,
                Selection::Selected,
                Some("lint-python"),
            ),
            // Plural form of a tag.
            (
                "check my pull requests on github",
                "",
                ALL,
                Selection::Selected,
                Some("create-pr"),
            ),
            // Generic words alone never route.
            ("run the tests", "", ALL, Selection::NoMatch, None),
            ("build the project", "", ALL, Selection::NoMatch, None),
            // Description-only overlap never routes.
            (
                "find errors and style problems",
                "",
                ALL,
                Selection::NoMatch,
                None,
            ),
            // Two capabilities share the strongest evidence: a tie, even
            // when only one of them is installed.
            ("python", "", &["ruff"], Selection::Ambiguous, None),
            ("dotnet", "", ALL, Selection::Ambiguous, None),
            // The strongest is not installed: reported, no fall-through to
            // a weaker installed match.
            (
                "test python with pytest",
                "",
                &["ruff", "git"],
                Selection::MatchedUnavailable,
                Some("test-python"),
            ),
            // The second alternative counts.
            (
                "lint python",
                "",
                &["pylint"],
                Selection::Selected,
                Some("lint-python"),
            ),
            // Context adds evidence.
            (
                "run the tests",
                "a dotnet solution",
                ALL,
                Selection::Selected,
                Some("test-dotnet"),
            ),
            // The id spelled out.
            (
                "build-dotnet please",
                "",
                ALL,
                Selection::Selected,
                Some("build-dotnet"),
            ),
        ];
        for (task, context, have, want, matched) in cases {
            let route = route(task, context, &catalog, installed(have));
            assert_eq!(route.selection, *want, "{task} / {context}: {route:#?}");
            assert_eq!(route.matched.as_deref(), *matched, "{task}");
            assert_eq!(route.candidates.len(), catalog.len());
            assert_eq!(
                route.selected.is_some(),
                *want == Selection::Selected,
                "{task}"
            );
            assert_eq!(
                route.discriminator.is_none(),
                *want == Selection::Selected,
                "{task}"
            );
        }
    }

    #[test]
    fn reasons_name_what_matched() {
        let catalog = builtin();
        let generic = route("run the tests", "", &catalog, installed(ALL));
        assert!(
            generic
                .discriminator
                .unwrap()
                .starts_with("only generic words matched (test)")
        );
        let described = route("find style problems", "", &catalog, installed(ALL));
        assert!(
            described
                .discriminator
                .unwrap()
                .starts_with("only description words matched (problem, problems, style)")
        );
        let nothing = route("bake bread", "", &catalog, installed(ALL));
        assert!(
            nothing
                .discriminator
                .unwrap()
                .starts_with("no capability shares a word")
        );
        let tie = route("python", "", &catalog, installed(ALL));
        assert!(
            tie.discriminator
                .unwrap()
                .starts_with("'lint-python', 'test-python' match equally well")
        );
    }

    #[test]
    fn candidates_are_ranked_with_their_evidence() {
        let catalog = builtin();
        let r = route("lint python with ruff", "", &catalog, installed(ALL));
        let top = &r.candidates[0];
        assert_eq!(top.id, "lint-python");
        assert_eq!(top.discriminating_matches, ["python", "ruff"]);
        assert_eq!(top.identity_matches, ["lint", "python", "ruff"]);
        assert_eq!(top.available_tool.as_deref(), Some("ruff"));
        assert_eq!(top.configured_tools, ["ruff", "pylint"]);
        assert_eq!(r.candidates[1].id, "test-python");
    }

    #[test]
    fn a_user_capability_routes_like_a_builtin_one() {
        let user = parse(
            r#"{"replace_builtin": true, "capabilities": [
                {"id": "lint-rust", "description": "Clippy.", "safety": "read-only", "tags": ["rust", "clippy"], "argv": [["cargo", "clippy"]]}
            ]}"#,
            true,
        )
        .unwrap()
        .capabilities;
        let r = route(
            "run clippy on the rust crate",
            "",
            &user,
            installed(&["cargo"]),
        );
        assert_eq!(r.selection, Selection::Selected);
        assert_eq!(r.selected.as_deref(), Some("lint-rust"));
    }
}
