//! Unquoted wildcards as Bash expands them (`*.o`, `src/*.rs`, `file?.txt`,
//! `[ab]*`): agents type them expecting the files, and no shell runs here,
//! so wamcp expands them itself before the command is judged — the
//! grammars and the loss checks see the file names, as the program will.
//!
//! As Bash does by default: a pattern that matches nothing stays as
//! written, a leading `.` must be matched by a `.`, and names are sorted.
//! Only the last part of a path may hold wildcards here; a pattern with
//! one in a folder part is left as written.

/// Whether an unquoted word is a pattern Bash would try to expand.
pub fn is_pattern(word: &str) -> bool {
    word.contains(['*', '?']) || word.contains('[') && word.contains(']')
}

/// The folder part of `pattern` (with its `/`, empty for none) and the
/// name part, or `None` when a folder part holds a wildcard.
pub fn split(pattern: &str) -> Option<(&str, &str)> {
    let at = pattern.rfind('/').map_or(0, |i| i + 1);
    let (dir, name) = pattern.split_at(at);
    (!is_pattern(dir)).then_some((dir, name))
}

/// Whether the file name `name` matches the name pattern `pattern`.
pub fn matches(pattern: &str, name: &str) -> bool {
    if name.starts_with('.') && !pattern.starts_with('.') {
        return false;
    }
    let p: Vec<char> = pattern.chars().collect();
    let t: Vec<char> = name.chars().collect();
    // One backtrack point for the last `*`: linear in practice, never
    // recursive.
    let (mut pi, mut ti) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        let step = match p.get(pi) {
            Some('*') => {
                star = Some((pi, ti));
                pi += 1;
                continue;
            }
            Some('?') => Some(1),
            Some('[') => class(&p[pi..], t[ti]),
            Some(&c) => (c == t[ti]).then_some(1),
            None => None,
        };
        match (step, star) {
            (Some(width), _) => {
                pi += width;
                ti += 1;
            }
            (None, Some((sp, st))) => {
                pi = sp + 1;
                ti = st + 1;
                star = Some((sp, st + 1));
            }
            (None, None) => return false,
        }
    }
    p[pi..].iter().all(|&c| c == '*')
}

/// A bracket class at the start of `p` (`[abc]`, `[a-z]`, `[!x]`): its
/// width when `c` is in it, `None` when not. An unclosed `[` is the
/// character itself.
fn class(p: &[char], c: char) -> Option<usize> {
    let Some(close) = p.iter().skip(2).position(|&x| x == ']').map(|i| i + 2) else {
        return (c == '[').then_some(1);
    };
    let body = &p[1..close];
    let (negated, body) = match body.first() {
        Some('!' | '^') => (true, &body[1..]),
        _ => (false, body),
    };
    let mut inside = false;
    let mut i = 0;
    while i < body.len() {
        if i + 2 < body.len() && body[i + 1] == '-' {
            inside |= (body[i]..=body[i + 2]).contains(&c);
            i += 3;
        } else {
            inside |= body[i] == c;
            i += 1;
        }
    }
    (inside != negated).then_some(close + 1)
}

#[cfg(test)]
mod tests;
