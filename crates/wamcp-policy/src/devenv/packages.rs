//! Package managers: the exact argv for a search, an install and the check
//! that an install took, per source, and reading their answers.
//!
//! The argv are fixed here so that what a person reviews in a plan is what
//! runs: an id is matched exactly and bound to one source (winget's
//! `--exact --source winget`), no installer may stop to ask (stdin is
//! closed; `--disable-interactivity`, `-y`, `sudo -n`), and nothing the
//! model typed can be read as an option (ids and queries never start with
//! `-`).

use serde::{Deserialize, Serialize};

/// The most characters a search query may have.
pub const MAX_QUERY_CHARS: usize = 160;
/// The most characters a package id may have.
pub const MAX_ID_CHARS: usize = 256;
/// Seconds a search may take, and an install.
pub const SEARCH_TIMEOUT_SECONDS: u64 = 90;
/// Seconds an install may take before it is killed.
pub const INSTALL_TIMEOUT_SECONDS: u64 = 600;

/// A package manager `package_search` and `package_install` can use.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
// The doc comments are for Rust readers; the schema stays the bare names.
#[schemars(description = "", transform = crate::schema::names_only)]
pub enum Source {
    /// The Windows Package Manager, its `winget` source only.
    Winget,
    /// Chocolatey (`choco`), on Windows.
    Chocolatey,
    /// Scoop, which installs for the user alone, on Windows.
    Scoop,
    /// apt on Debian and Ubuntu, through `sudo -n` unless the server is root.
    Apt,
    /// Homebrew, on macOS and Linux.
    Brew,
}

impl Source {
    /// The source as the tools' `source` argument spells it.
    pub fn name(self) -> &'static str {
        match self {
            Source::Winget => "winget",
            Source::Chocolatey => "chocolatey",
            Source::Scoop => "scoop",
            Source::Apt => "apt",
            Source::Brew => "brew",
        }
    }

    /// The search argv.
    pub fn search(self, query: &str) -> Vec<String> {
        let q = query.to_string();
        let argv: Vec<&str> = match self {
            Source::Winget => vec![
                "winget",
                "search",
                "--query",
                &q,
                "--source",
                "winget",
                "--disable-interactivity",
            ],
            Source::Chocolatey => vec!["choco", "search", &q, "--limit-output"],
            Source::Scoop => vec!["scoop", "search", &q],
            // apt-get has no search; apt-cache belongs to the same package.
            Source::Apt => vec!["apt-cache", "search", "--names-only", &q],
            Source::Brew => vec!["brew", "search", &q],
        };
        argv.into_iter().map(String::from).collect()
    }

    /// The install argv. `root` says the server runs as root (no `sudo`).
    pub fn install(self, id: &str, root: bool) -> Vec<String> {
        let argv: Vec<&str> = match self {
            Source::Winget => vec![
                "winget",
                "install",
                "--id",
                id,
                "--exact",
                "--source",
                "winget",
                "--accept-package-agreements",
                "--accept-source-agreements",
                "--disable-interactivity",
            ],
            Source::Chocolatey => vec![
                "choco",
                "install",
                id,
                "--yes",
                "--no-progress",
                "--limit-output",
            ],
            Source::Scoop => vec!["scoop", "install", id],
            // `sudo -n` fails at once where a password would be asked.
            Source::Apt if root => vec![
                "apt-get",
                "install",
                "-y",
                "-q",
                "--no-install-recommends",
                id,
            ],
            Source::Apt => vec![
                "sudo",
                "-n",
                "apt-get",
                "install",
                "-y",
                "-q",
                "--no-install-recommends",
                id,
            ],
            Source::Brew => vec!["brew", "install", id],
        };
        argv.into_iter().map(String::from).collect()
    }

    /// The argv that lists the package if it is installed now.
    pub fn verify(self, id: &str) -> Vec<String> {
        let argv: Vec<&str> = match self {
            Source::Winget => vec![
                "winget",
                "list",
                "--id",
                id,
                "--exact",
                "--source",
                "winget",
                "--disable-interactivity",
            ],
            Source::Chocolatey => vec!["choco", "list", id, "--exact", "--limit-output"],
            Source::Scoop => vec!["scoop", "list", id],
            Source::Apt => vec!["dpkg-query", "-W", "-f=${Status} ${Version}\\n", id],
            Source::Brew => vec!["brew", "list", "--versions", id],
        };
        argv.into_iter().map(String::from).collect()
    }

    /// Whether the verify run's answer shows `id` installed: the id in the
    /// column or place the manager lists it, with a version, never merely
    /// a word somewhere in a message.
    pub fn shows_installed(self, id: &str, exit_code: Option<i32>, stdout: &str) -> bool {
        if exit_code != Some(0) {
            return false;
        }
        let has_version = |v: &str| v.trim().chars().next().is_some_and(|c| c.is_ascii_digit());
        match self {
            Source::Apt => stdout.lines().any(|l| {
                l.strip_prefix("install ok installed ")
                    .is_some_and(has_version)
            }),
            Source::Chocolatey => stdout.lines().any(|l| {
                l.trim().split_once('|').is_some_and(|(name, version)| {
                    name.eq_ignore_ascii_case(id) && has_version(version)
                })
            }),
            Source::Winget => parse_table(stdout, "Id")
                .iter()
                .any(|f| f.id.eq_ignore_ascii_case(id) && has_version(&f.version)),
            Source::Scoop => parse_table(stdout, "Name").iter().any(|f| {
                f.id.eq_ignore_ascii_case(id)
                    && has_version(&f.version)
                    && !f.row.to_ascii_lowercase().contains("failed")
            }),
            Source::Brew => stdout.lines().any(|l| {
                let mut words = l.split_whitespace();
                words.next().is_some_and(|w| w.eq_ignore_ascii_case(id))
                    && words.next().is_some_and(has_version)
            }),
        }
    }

    /// For apt, the argv that shows the package named exactly `id` (apt
    /// reads a name it does not know as a pattern, and would install every
    /// package the pattern matches).
    pub fn exact_name_check(self, id: &str) -> Option<Vec<String>> {
        (self == Source::Apt).then(|| {
            ["apt-cache", "show", "--no-all-versions", id]
                .map(String::from)
                .to_vec()
        })
    }

    /// Whether the exact-name check's answer names `id` itself.
    pub fn names_exactly(self, id: &str, exit_code: Option<i32>, stdout: &str) -> bool {
        exit_code == Some(0)
            && stdout
                .lines()
                .any(|l| l.trim_end() == format!("Package: {id}"))
    }
}

/// Why a package id is refused for `source`, if it is.
pub fn id_problem(source: Source, id: &str) -> Option<String> {
    let mut chars = id.chars();
    let ok = chars.next().is_some_and(|c| c.is_ascii_alphanumeric())
        && chars.all(|c| c.is_ascii_alphanumeric() || "._+-".contains(c))
        && id.len() <= MAX_ID_CHARS;
    if !ok {
        return Some(format!(
            "package_id must be 1-{MAX_ID_CHARS} characters: a letter or digit, then letters, digits, '.', '_', '+' or '-'"
        ));
    }
    // apt reads a trailing '-' as "remove this package" (`bash-`).
    if id.ends_with('-') {
        return Some("package_id must not end with '-' (apt would read it as \"remove\")".into());
    }
    // Chocolatey reads `all` as "every package in the source".
    if source == Source::Chocolatey && id.eq_ignore_ascii_case("all") {
        return Some("'all' is Chocolatey's word for every package, not a package".into());
    }
    None
}

/// Why a search query is refused, if it is.
pub fn query_problem(query: &str) -> Option<String> {
    let trimmed = query.trim();
    if trimmed.is_empty() || query.chars().count() > MAX_QUERY_CHARS {
        return Some(format!("query must be 1-{MAX_QUERY_CHARS} characters"));
    }
    // PowerShell (behind Scoop) reads en and em dashes and the horizontal
    // bar as parameter dashes too; Windows programs read '/' as one.
    // Every dash Unicode has (category Pd), and '/'.
    const DASHES: &[char] = &[
        '-',
        '/',
        '\u{058A}',
        '\u{05BE}',
        '\u{1400}',
        '\u{1806}',
        '\u{2010}',
        '\u{2011}',
        '\u{2012}',
        '\u{2013}',
        '\u{2014}',
        '\u{2015}',
        '\u{2212}',
        '\u{2E17}',
        '\u{2E1A}',
        '\u{2E3A}',
        '\u{2E3B}',
        '\u{2E40}',
        '\u{2E5D}',
        '\u{301C}',
        '\u{3030}',
        '\u{30A0}',
        '\u{FE31}',
        '\u{FE32}',
        '\u{FE58}',
        '\u{FE63}',
        '\u{FF0D}',
        '\u{10EAD}',
    ];
    if trimmed.starts_with(DASHES) {
        return Some(
            "query must not start with a dash or '/' (it would be read as an option)".into(),
        );
    }
    // What `text::shown` would have to escape has no place in a query.
    if query
        .chars()
        .any(|c| c != '\\' && crate::text::shown(&c.to_string()) != c.to_string())
    {
        return Some("query must not hold control, invisible or layout characters".into());
    }
    None
}

/// One search result.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Found {
    /// The id an install names, exactly as the manager listed it.
    pub id: String,
    /// The package's display name; for apt, its one-line description.
    pub name: String,
    /// The version offered; empty where the manager does not say (apt).
    pub version: String,
    /// The whole line, for checks beyond the columns.
    #[serde(skip)]
    pub row: String,
}

/// Reads a search's output into results, where the format allows.
pub fn parse_search(source: Source, stdout: &str) -> Vec<Found> {
    match source {
        Source::Winget => parse_table(stdout, "Id"),
        Source::Scoop => parse_table(stdout, "Name"),
        Source::Chocolatey => stdout
            .lines()
            .filter_map(|l| {
                let (id, version) = l.trim().split_once('|')?;
                Some(Found {
                    id: id.into(),
                    name: id.into(),
                    version: version.into(),
                    row: l.into(),
                })
            })
            .collect(),
        Source::Apt => stdout
            .lines()
            .filter_map(|l| {
                let (id, description) = l.split_once(" - ")?;
                Some(Found {
                    id: id.trim().into(),
                    name: description.trim().into(),
                    version: String::new(),
                    row: l.into(),
                })
            })
            .collect(),
        Source::Brew => stdout
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with("==>"))
            .map(|l| Found {
                id: l.into(),
                name: l.into(),
                version: String::new(),
                row: l.into(),
            })
            .collect(),
    }
}

/// A table with a header line (`Name  Id  Version ...`) and a dashed rule
/// under it: columns are cut at the header's word positions.
fn parse_table(stdout: &str, id_column: &str) -> Vec<Found> {
    let lines: Vec<&str> = stdout.lines().map(|l| l.trim_end_matches('\r')).collect();
    let Some(rule) = lines.iter().position(|l| {
        let t = l.trim();
        t.len() >= 3 && t.chars().all(|c| c == '-' || c == ' ')
    }) else {
        return Vec::new();
    };
    let Some(header) = rule.checked_sub(1).map(|h| lines[h]) else {
        return Vec::new();
    };
    // Progress spinners print before the header on the same line.
    let header = header.rsplit('\r').next().unwrap_or(header);
    let chars: Vec<char> = header.chars().collect();
    let mut starts = Vec::new();
    for (i, c) in chars.iter().enumerate() {
        if !c.is_whitespace() && (i == 0 || chars[i - 1].is_whitespace()) {
            let word: String = chars[i..]
                .iter()
                .take_while(|c| !c.is_whitespace())
                .collect();
            starts.push((i, word));
        }
    }
    let column = |row: &[char], name: &str| -> String {
        let Some(at) = starts.iter().position(|(_, w)| w == name) else {
            return String::new();
        };
        let from = starts[at].0.min(row.len());
        let to = starts
            .get(at + 1)
            .map_or(row.len(), |(s, _)| (*s).min(row.len()));
        row[from..to].iter().collect::<String>().trim().to_string()
    };
    lines[rule + 1..]
        .iter()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let row: Vec<char> = l.chars().collect();
            Found {
                id: column(&row, id_column),
                name: column(&row, "Name"),
                version: column(&row, "Version"),
                row: l.to_string(),
            }
        })
        .filter(|f| !f.id.is_empty())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_winget_argv_exactly() {
        assert_eq!(
            Source::Winget.install("Git.Git", false).join(" "),
            "winget install --id Git.Git --exact --source winget --accept-package-agreements \
             --accept-source-agreements --disable-interactivity"
        );
        assert_eq!(
            Source::Winget.search("git").join(" "),
            "winget search --query git --source winget --disable-interactivity"
        );
        assert_eq!(
            Source::Apt.install("jq", false)[..3],
            ["sudo", "-n", "apt-get"]
        );
        assert_eq!(Source::Apt.install("jq", true)[0], "apt-get");
    }

    #[test]
    fn ids_and_queries_that_could_be_options_or_worse_are_refused() {
        for bad in [
            "",
            "-rf",
            "--force",
            "a b",
            "a;b",
            "a/b",
            "ä",
            &"a".repeat(257),
            "a\u{0}",
            "bash-",
        ] {
            assert!(id_problem(Source::Apt, bad).is_some(), "{bad:?}");
        }
        assert!(id_problem(Source::Chocolatey, "ALL").is_some());
        assert_eq!(id_problem(Source::Winget, "all"), None);
        for good in [
            "Git.Git",
            "python3.12",
            "g++",
            "Microsoft.VisualStudio.2022.BuildTools",
            "7zip",
            "jq",
        ] {
            assert_eq!(id_problem(Source::Apt, good), None, "{good}");
        }
        for bad in [
            "",
            "  ",
            "--version",
            " -x",
            "a\nb",
            &"q".repeat(161),
            "\u{2013}x",
            "\u{FF0D}x",
            "/?",
            "a\u{200B}b",
            "\u{2E3A}x",
            "\u{10EAD}x",
            "a\u{2028}b",
            "a\u{2800}b",
            "a\u{FE0F}",
        ] {
            assert!(query_problem(bad).is_some(), "{bad:?}");
        }
        for good in ["visual studio build tools", "c++ compiler", "a-b", "日本語"] {
            assert_eq!(query_problem(good), None, "{good}");
        }
    }

    #[test]
    fn winget_tables_are_read_by_their_header() {
        let out = "   - \r   \\ \rName                 Id                    Version  Source\r\n\
                   ------------------------------------------------------------\r\n\
                   Git                  Git.Git               2.47.1   winget\r\n\
                   GitHub CLI           GitHub.cli            2.63.0   winget\r\n";
        let found: Vec<(String, String, String)> = parse_search(Source::Winget, out)
            .into_iter()
            .map(|f| (f.id, f.name, f.version))
            .collect();
        let want = [
            ("Git.Git", "Git", "2.47.1"),
            ("GitHub.cli", "GitHub CLI", "2.63.0"),
        ]
        .map(|(a, b, c)| (a.to_string(), b.to_string(), c.to_string()));
        assert_eq!(found, want);
        assert!(
            parse_search(Source::Winget, "No package found matching input criteria.").is_empty()
        );
        let choco = parse_search(Source::Chocolatey, "git|2.47.1\ngit.install|2.47.1\n");
        assert_eq!(choco[1].id, "git.install");
        let apt = parse_search(
            Source::Apt,
            "jq - lightweight and flexible command-line JSON processor\n",
        );
        assert_eq!(
            (apt[0].id.as_str(), apt[0].name.as_str()),
            ("jq", "lightweight and flexible command-line JSON processor")
        );
    }

    #[test]
    fn verification_reads_each_managers_answer() {
        let winget = "Name  Id       Version  Source\n------------------------------\nGit   Git.Git  2.47.1   winget\n";
        let cases: &[(Source, &str, &str, bool)] = &[
            (Source::Apt, "jq", "install ok installed 1.7.1-3\n", true),
            (Source::Apt, "jq", "install ok installed \n", false),
            (Source::Apt, "jq", "install ok installed <none>\n", false),
            (Source::Apt, "jq", "deinstall ok config-files 1.7\n", false),
            (Source::Winget, "Git.Git", winget, true),
            (
                Source::Winget,
                "Git.Git",
                "No installed package found matching input criteria: Git.Git\n",
                false,
            ),
            (Source::Winget, "Git.Git", "Error Git.Git 1.0\n", false),
            (Source::Winget, "Git", winget, false),
            (Source::Chocolatey, "git", "git|2.47.1\n", true),
            (Source::Chocolatey, "git", "git.install|2.47.1\n", false),
            (Source::Chocolatey, "git", "git|not installed\n", false),
            (Source::Chocolatey, "git", "git|\n", false),
            (Source::Brew, "jq", "jq 1.7.1\n", true),
            (Source::Brew, "jq", "Error: No such keg: jq\n", false),
            (Source::Brew, "jq", "==> Casks\njq\n", false),
            (
                Source::Scoop,
                "git",
                "Name Version Source Updated Info\n---- ------- ------ ------- ----\ngit  2.47.1  main   2024    \n",
                true,
            ),
            (
                Source::Scoop,
                "git",
                "Name Version Source Updated Info\n---- ------- ------ ------- ----\ngit  2.47.1  main   2024    Install failed\n",
                false,
            ),
            (
                Source::Scoop,
                "foo",
                "Name Version Source Updated Info\n---- ------- ------ ------- ----\nbar  1.0     foo    2024    \n",
                false,
            ),
        ];
        for (source, id, listing, want) in cases {
            assert_eq!(
                source.shows_installed(id, Some(0), listing),
                *want,
                "{source:?} {id} {listing:?}"
            );
        }
        assert!(!Source::Apt.shows_installed("jq", Some(1), "install ok installed 1.7\n"));
        assert!(Source::Apt.names_exactly("jq", Some(0), "Package: jq\nVersion: 1.7\n"));
        assert!(!Source::Apt.names_exactly("a.b", Some(0), "Package: axb\n"));
        assert_eq!(Source::Winget.exact_name_check("x"), None);
    }
}
