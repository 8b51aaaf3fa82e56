//! What a `git push` asks the remote to do, read from its words: which
//! refs it updates, which it forces and which it deletes. The question a
//! destructive push asks names them, so the user answers about the
//! branches at stake, not about a command line.

/// A push, as its words say.
#[derive(Debug, PartialEq, Eq)]
pub struct Push {
    /// The remote named, if one is (`origin`, a URL).
    pub remote: Option<String>,
    /// The refs it names; none means git's default (the current branch).
    pub updates: Vec<Update>,
    /// `--all`, `--mirror`, `--prune` or `--tags`: refs beyond those named.
    pub every_ref: Option<&'static str>,
}

/// One ref a push sets on the remote.
#[derive(Debug, PartialEq, Eq)]
pub struct Update {
    /// The local side; `None` deletes the remote ref (`:ref`, `--delete`).
    pub src: Option<String>,
    /// The remote ref it sets.
    pub dst: String,
    /// Whether it may overwrite commits the local side does not hold.
    pub force: bool,
}

/// Options of `git push` that take the next word as their value.
const WITH_VALUE: &[&str] = &["-o", "--push-option", "--receive-pack", "--exec", "--repo"];

/// Reads the words after `push`.
pub fn read(args: &[&str]) -> Push {
    let mut force = false;
    let mut delete = false;
    let mut every_ref = None;
    let mut positionals = Vec::new();
    let mut words = args.iter();
    while let Some(&word) = words.next() {
        if word == "--" {
            positionals.extend(words.by_ref().copied());
            break;
        }
        if WITH_VALUE.contains(&word) {
            words.next();
            continue;
        }
        match word {
            "-f" | "--force" => force = true,
            "-d" | "--delete" => delete = true,
            "--all" | "--branches" => every_ref = Some("--all"),
            "--mirror" => every_ref = Some("--mirror"),
            "--prune" => every_ref = every_ref.or(Some("--prune")),
            "--tags" => every_ref = every_ref.or(Some("--tags")),
            w if w.starts_with("--force") => force = true,
            w if w.starts_with("--") => {}
            w if w.starts_with('-') && w.len() > 1 => {
                force |= w[1..].contains('f');
                delete |= w[1..].contains('d');
            }
            w => positionals.push(w),
        }
    }
    let mut positionals = positionals.into_iter();
    let remote = positionals.next().map(String::from);
    let updates = positionals
        .map(|spec| update(spec, force, delete))
        .collect();
    Push {
        remote,
        updates,
        every_ref,
    }
}

/// One refspec: `+src:dst`, `src`, `:dst`, `src:dst`.
fn update(spec: &str, force: bool, delete: bool) -> Update {
    let (plus, spec) = match spec.strip_prefix('+') {
        Some(rest) => (true, rest),
        None => (false, spec),
    };
    let (src, dst) = match spec.split_once(':') {
        Some((src, dst)) => (src, if dst.is_empty() { src } else { dst }),
        None => (spec, spec),
    };
    let deleted = delete || src.is_empty();
    Update {
        src: (!deleted).then(|| src.to_string()),
        dst: dst.to_string(),
        force: force || plus,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn up(src: Option<&str>, dst: &str, force: bool) -> Update {
        Update {
            src: src.map(String::from),
            dst: dst.into(),
            force,
        }
    }

    #[test]
    fn refspecs_force_and_deletes_are_read_as_git_reads_them() {
        type Case<'a> = (&'a [&'a str], Option<&'a str>, Vec<Update>, Option<&'a str>);
        let cases: &[Case] = &[
            (
                &["--force", "origin", "main"],
                Some("origin"),
                vec![up(Some("main"), "main", true)],
                None,
            ),
            (
                &["origin", "+main"],
                Some("origin"),
                vec![up(Some("main"), "main", true)],
                None,
            ),
            (
                &["origin", ":feature"],
                Some("origin"),
                vec![up(None, "feature", false)],
                None,
            ),
            (
                &["--delete", "origin", "feature"],
                Some("origin"),
                vec![up(None, "feature", false)],
                None,
            ),
            (
                &["-fu", "origin", "HEAD:main"],
                Some("origin"),
                vec![up(Some("HEAD"), "main", true)],
                None,
            ),
            (
                &["-o", "ci.skip", "origin", "main"],
                Some("origin"),
                vec![up(Some("main"), "main", false)],
                None,
            ),
            (
                &["--force-with-lease=main:abc", "up"],
                Some("up"),
                vec![],
                None,
            ),
            (
                &["--mirror", "backup"],
                Some("backup"),
                vec![],
                Some("--mirror"),
            ),
            (
                &["--prune", "origin"],
                Some("origin"),
                vec![],
                Some("--prune"),
            ),
            (&[], None, vec![], None),
        ];
        for (args, remote, updates, every) in cases {
            let push = read(args);
            assert_eq!(push.remote.as_deref(), *remote, "{args:?}");
            assert_eq!(&push.updates, updates, "{args:?}");
            assert_eq!(push.every_ref, *every, "{args:?}");
        }
    }
}
