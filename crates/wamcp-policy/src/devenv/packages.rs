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
pub const INSTALL_TIMEOUT_SECONDS: u64 = 600;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    Winget,
    Chocolatey,
    Scoop,
    Apt,
    Brew,
}

impl Source {
    pub fn name(self) -> &'static str {
        match self {
            Source::Winget => "winget",
            Source::Chocolatey => "chocolatey",
            Source::Scoop => "scoop",
            Source::Apt => "apt",
            Source::Brew => "brew",
        }
    }

    /// The program that answers for this source.
    pub fn program(self) -> &'static str {
        match self {
            Source::Winget => "winget",
            Source::Chocolatey => "choco",
            Source::Scoop => "scoop",
            Source::Apt => "apt-get",
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

    /// Whether the verify run's answer shows `id` installed.
    pub fn shows_installed(self, id: &str, exit_code: Option<i32>, stdout: &str) -> bool {
        if exit_code != Some(0) {
            return false;
        }
        let lower = id.to_ascii_lowercase();
        match self {
            Source::Apt => stdout
                .lines()
                .any(|l| l.starts_with("install ok installed")),
            Source::Chocolatey => stdout
                .lines()
                .any(|l| l.to_ascii_lowercase().starts_with(&format!("{lower}|"))),
            _ => stdout
                .split(|c: char| c.is_whitespace())
                .any(|word| word.eq_ignore_ascii_case(id)),
        }
    }
}

/// Why a package id is refused, if it is.
pub fn id_problem(id: &str) -> Option<String> {
    let mut chars = id.chars();
    let ok = chars.next().is_some_and(|c| c.is_ascii_alphanumeric())
        && chars.all(|c| c.is_ascii_alphanumeric() || "._+-".contains(c))
        && id.len() <= MAX_ID_CHARS;
    (!ok).then(|| {
        format!(
            "package_id must be 1-{MAX_ID_CHARS} characters: a letter or digit, then letters, digits, '.', '_', '+' or '-'"
        )
    })
}

/// Why a search query is refused, if it is.
pub fn query_problem(query: &str) -> Option<String> {
    let trimmed = query.trim();
    if trimmed.is_empty() || query.chars().count() > MAX_QUERY_CHARS {
        return Some(format!("query must be 1-{MAX_QUERY_CHARS} characters"));
    }
    if trimmed.starts_with('-') {
        return Some("query must not start with '-' (it would be read as an option)".into());
    }
    if query.chars().any(char::is_control) {
        return Some("query must not hold control characters".into());
    }
    None
}

/// One search result.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Found {
    pub id: String,
    pub name: String,
    pub version: String,
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
            }
        })
        .filter(|f| !f.id.is_empty())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_seeds_winget_argv_exactly() {
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
        ] {
            assert!(id_problem(bad).is_some(), "{bad:?}");
        }
        for good in [
            "Git.Git",
            "python3.12",
            "g++",
            "Microsoft.VisualStudio.2022.BuildTools",
            "7zip",
            "jq",
        ] {
            assert_eq!(id_problem(good), None, "{good}");
        }
        for bad in ["", "  ", "--version", " -x", "a\nb", &"q".repeat(161)] {
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
        let found = parse_search(Source::Winget, out);
        assert_eq!(
            found,
            [
                Found {
                    id: "Git.Git".into(),
                    name: "Git".into(),
                    version: "2.47.1".into()
                },
                Found {
                    id: "GitHub.cli".into(),
                    name: "GitHub CLI".into(),
                    version: "2.63.0".into()
                },
            ]
        );
        assert_eq!(
            parse_search(Source::Winget, "No package found matching input criteria."),
            []
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
        assert!(Source::Apt.shows_installed("jq", Some(0), "install ok installed 1.7.1-3\n"));
        assert!(!Source::Apt.shows_installed("jq", Some(0), "deinstall ok config-files 1.7\n"));
        assert!(!Source::Apt.shows_installed("jq", Some(1), "install ok installed 1.7\n"));
        assert!(Source::Winget.shows_installed(
            "Git.Git",
            Some(0),
            "Name Id Version\n---\nGit Git.Git 2.47.1\n"
        ));
        assert!(!Source::Winget.shows_installed(
            "Git.Git",
            Some(0),
            "No installed package found matching input criteria.\n"
        ));
        assert!(Source::Chocolatey.shows_installed("git", Some(0), "git|2.47.1\n"));
        assert!(!Source::Chocolatey.shows_installed("git", Some(0), "git.install|2.47.1\n"));
        assert!(Source::Brew.shows_installed("jq", Some(0), "jq 1.7.1\n"));
    }
}
