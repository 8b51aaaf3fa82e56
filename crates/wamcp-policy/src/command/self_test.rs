//! The self-test that decides whether the OS layer is trusted on this
//! machine. A probe program is started exactly as commands are, tries to
//! write inside and outside its writable root and to reach a loopback
//! listener, and reports what happened; wamcp then looks for itself. Each
//! part (writes, trust folders, network) is trusted only where the files
//! wamcp finds and the connections its listener accepted prove it: the
//! probe's own words are evidence, never the verdict.
//!
//! Pure: the probe's report is text, what wamcp saw is data, and the
//! verdict is kept as text between runs (per boot and binary).

/// A place the probe tries to change, and how.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Place {
    /// A new file inside its writable root: must succeed.
    Root,
    /// A new file in its own temp folder: must succeed.
    Temp,
    /// A new file in a canary folder outside every writable place: must be
    /// refused.
    Outside,
    /// A new file in a trust folder (`.vscode`) inside the root: must be
    /// refused.
    Trust,
    /// A file outside, truncated by its path (`truncate(2)`, which Landlock
    /// sees only from ABI 3): must be refused.
    Victim,
    /// A file outside, opened for reading with `O_TRUNC` (which empties it,
    /// and which Landlock before ABI 3 counts as a read): must be refused.
    Emptied,
    /// A file outside, deleted (a delete is not a write to every system:
    /// Windows lets a parent folder's rights decide it): must be refused.
    Doomed,
    /// A file inside the trust folder, deleted: must be refused.
    TrustFile,
    /// The trust folder itself, renamed away (a writable copy could then
    /// take its place): must be refused.
    TrustFolder,
}

impl Place {
    /// Every place, in the order the probe tries them.
    pub const ALL: [Place; 9] = [
        Place::Root,
        Place::Temp,
        Place::Outside,
        Place::Trust,
        Place::Victim,
        Place::Emptied,
        Place::Doomed,
        Place::TrustFile,
        Place::TrustFolder,
    ];

    /// The word for the place in the probe's arguments and report.
    pub fn label(self) -> &'static str {
        match self {
            Place::Root => "root",
            Place::Temp => "temp",
            Place::Outside => "outside",
            Place::Trust => "trust",
            Place::Victim => "victim",
            Place::Emptied => "emptied",
            Place::Doomed => "doomed",
            Place::TrustFile => "trust-file",
            Place::TrustFolder => "trust-folder",
        }
    }

    /// The place a label names.
    pub fn from_label(label: &str) -> Option<Place> {
        Place::ALL.into_iter().find(|p| p.label() == label)
    }

    /// What wamcp says when it finds this place changed although it must
    /// not be (`None` for the places that must change).
    fn breach(self) -> Option<&'static str> {
        Some(match self {
            Place::Root | Place::Temp => return None,
            Place::Outside => "the system let the probe write outside the writable roots",
            Place::Victim => "the system let the probe truncate a file outside the writable roots",
            Place::Emptied => {
                "the system let the probe empty a file outside the writable roots by opening it"
            }
            Place::Doomed => "the system let the probe delete a file outside the writable roots",
            Place::Trust => "the system let the probe change a trust folder inside its root",
            Place::TrustFile => "the system let the probe delete a file in a trust folder",
            Place::TrustFolder => "the system let the probe rename a trust folder away",
        })
    }

    /// The attempt, in words, for evidence.
    fn attempt(self) -> &'static str {
        match self {
            Place::Root | Place::Temp | Place::Outside | Place::Trust => "write",
            Place::Victim => "truncation",
            Place::Emptied => "emptying open",
            Place::Doomed | Place::TrustFile => "delete",
            Place::TrustFolder => "rename",
        }
    }
}

/// What the probe saw when it tried one thing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// It worked.
    Done,
    /// The system said no (access denied, read-only, not permitted).
    Refused(String),
    /// It failed for another reason.
    Failed(String),
}

impl Outcome {
    fn word(&self) -> (&'static str, &str) {
        match self {
            Outcome::Done => ("done", ""),
            Outcome::Refused(why) => ("refused", why),
            Outcome::Failed(why) => ("failed", why),
        }
    }

    fn parse(word: &str, why: &str) -> Option<Outcome> {
        let why = why.to_string();
        match word {
            "done" => Some(Outcome::Done),
            "refused" => Some(Outcome::Refused(why)),
            "failed" => Some(Outcome::Failed(why)),
            _ => None,
        }
    }

    /// The system's words, for evidence.
    fn why(&self) -> &str {
        self.word().1
    }
}

/// One line of the probe's report: `write root done`,
/// `write outside refused Access is denied`, `connect failed ...`.
pub fn report_line(what: Option<Place>, outcome: &Outcome) -> String {
    let (word, why) = outcome.word();
    let subject = match what {
        Some(place) => format!("write {}", place.label()),
        None => "connect".to_string(),
    };
    format!("{subject} {word} {}", one_line(why))
        .trim_end()
        .to_string()
}

/// What the probe reported.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Report {
    /// Each place it tried, with what happened.
    pub writes: Vec<(Place, Outcome)>,
    /// Its connection to the loopback listener, when it tried one.
    pub connect: Option<Outcome>,
}

impl Report {
    /// The outcome at `place`, when the probe reported one.
    pub fn write(&self, place: Place) -> Option<&Outcome> {
        self.writes
            .iter()
            .find(|(p, _)| *p == place)
            .map(|(_, o)| o)
    }
}

/// Reads the probe's report; lines it does not know are ignored (a
/// program's stray output), and a place reported twice keeps its first.
pub fn parse_report(text: &str) -> Report {
    let mut report = Report::default();
    for line in text.lines() {
        let mut words = line.trim_end_matches('\r').splitn(3, ' ');
        let (first, second) = (words.next(), words.next());
        match (first, second) {
            (Some("write"), Some(label)) => {
                let mut rest = words.next().unwrap_or("").splitn(2, ' ');
                let outcome = rest
                    .next()
                    .and_then(|word| Outcome::parse(word, rest.next().unwrap_or("")));
                if let (Some(place), Some(outcome)) = (Place::from_label(label), outcome)
                    && report.write(place).is_none()
                {
                    report.writes.push((place, outcome));
                }
            }
            (Some("connect"), Some(word)) if report.connect.is_none() => {
                report.connect = Outcome::parse(word, words.next().unwrap_or(""));
            }
            _ => {}
        }
    }
    report
}

/// What wamcp saw for itself once the probe had ended.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Observed {
    /// The places wamcp found changed: a new file there, a file that lost
    /// its bytes or is gone, a folder that is gone. Never [`Place::Temp`]:
    /// the temp folder goes with the run, so its write is taken from the
    /// report (a write that must succeed, not one that must be refused).
    pub changed: Vec<Place>,
    /// Whether the loopback listener accepted a connection.
    pub accepted: bool,
}

/// One part of the OS layer: `Ok` with what proved it, or `Err` with the
/// evidence that it does not hold here.
pub type Part = Result<String, String>;

/// The self-test's verdict.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Proof {
    /// Writes bounded to the writable set (and allowed inside it).
    pub writes: Part,
    /// Trust folders inside a root kept from writes.
    pub trust: Part,
    /// No network for a command without it.
    pub network: Part,
    /// Whether the probe ran and reported: a verdict from machinery that
    /// failed (no start, no set-up) is not kept for later.
    pub ran: bool,
}

impl Proof {
    /// The same evidence for every part: the probe never ran.
    pub fn unproven(why: &str) -> Proof {
        Proof {
            writes: Err(why.to_string()),
            trust: Err(why.to_string()),
            network: Err(why.to_string()),
            ran: false,
        }
    }

    /// Every part with its name, for reports.
    pub fn parts(&self) -> [(&'static str, &Part); 3] {
        [
            ("writes", &self.writes),
            ("trust_folders", &self.trust),
            ("network", &self.network),
        ]
    }
}

/// The verdict from whether the probe started, what wamcp saw and what the
/// probe reported.
pub fn judge(started: Result<(), String>, observed: &Observed, report: &Report) -> Proof {
    if let Err(why) = started {
        return Proof::unproven(&format!("the probe could not start confined: {why}"));
    }
    Proof {
        writes: writes(observed, report),
        trust: trust(observed, report),
        network: network(observed, report),
        ran: true,
    }
}

fn writes(observed: &Observed, report: &Report) -> Part {
    let outside = [Place::Outside, Place::Victim, Place::Emptied, Place::Doomed];
    refused_everywhere(observed, report, &outside)?;
    let wrote = |place| match place {
        Place::Temp => report.write(place) == Some(&Outcome::Done),
        _ => observed.changed.contains(&place),
    };
    let why = |place| report.write(place).map(Outcome::why).unwrap_or("no report");
    for (place, name) in [
        (Place::Root, "its writable root"),
        (Place::Temp, "its own temp folder"),
    ] {
        if !wrote(place) {
            return Err(format!(
                "the probe could not write inside {name} ({})",
                why(place)
            ));
        }
    }
    Ok(
        "a probe started as commands are wrote inside its root and temp folder and was refused \
        writing, truncating, emptying and deleting outside them"
            .into(),
    )
}

fn trust(observed: &Observed, report: &Report) -> Part {
    let places = [Place::Trust, Place::TrustFile, Place::TrustFolder];
    refused_everywhere(observed, report, &places)?;
    Ok("the probe was refused writing into, deleting in and renaming a trust folder inside its root".into())
}

/// `Ok` when none of `places` changed and the system refused each attempt;
/// else the evidence of the first that did not hold. A place found
/// changed is a breach whatever the probe said; an attempt that failed
/// another way (a wrong path, a timeout) proves nothing.
fn refused_everywhere(
    observed: &Observed,
    report: &Report,
    places: &[Place],
) -> Result<(), String> {
    if let Some(breach) = places
        .iter()
        .find(|p| observed.changed.contains(p))
        .and_then(|p| p.breach())
    {
        return Err(breach.to_string());
    }
    for place in places {
        if !matches!(report.write(*place), Some(Outcome::Refused(_))) {
            let why = report
                .write(*place)
                .map(Outcome::why)
                .unwrap_or("no report");
            let context = match place {
                Place::Trust | Place::TrustFile | Place::TrustFolder => "in a trust folder",
                _ => "outside the roots",
            };
            return Err(format!(
                "the probe's {} {context} failed without a refusal ({why})",
                place.attempt()
            ));
        }
    }
    Ok(())
}

fn network(observed: &Observed, report: &Report) -> Part {
    if observed.accepted {
        return Err(
            "the probe, started without the network, connected to a loopback listener".into(),
        );
    }
    // Only a refusal: a connection that timed out or found nothing
    // listening says nothing about the next host a command tries.
    match &report.connect {
        Some(Outcome::Refused(_)) => Ok(
            "the probe, started without the network, was refused a connection to a loopback listener"
                .into(),
        ),
        Some(Outcome::Failed(why)) => Err(format!(
            "the probe's connection failed without a refusal ({why})"
        )),
        Some(Outcome::Done) => {
            Err("the probe reported a connection the loopback listener never accepted".into())
        }
        None => Err("the probe did not report its connection attempt".into()),
    }
}

/// The verdict as text, with the key it holds for (boot, binary, plan).
pub fn record(key: &str, proof: &Proof) -> String {
    let mut text = format!("key {}\n", one_line(key));
    for (name, part) in proof.parts() {
        let (word, what) = match part {
            Ok(how) => ("holds", how),
            Err(why) => ("fails", why),
        };
        text.push_str(&format!("{name} {word} {}\n", one_line(what)));
    }
    text
}

/// The verdict a [`record`] holds, when it holds for `key` and is whole.
pub fn read_record(text: &str, key: &str) -> Option<Proof> {
    let mut lines = text.lines();
    if lines.next()?.strip_prefix("key ")? != one_line(key) {
        return None;
    }
    let mut part = |name: &str| -> Option<Part> {
        let line = lines.next()?.strip_prefix(name)?.strip_prefix(' ')?;
        let (word, what) = line.split_once(' ')?;
        match word {
            "holds" => Some(Ok(what.to_string())),
            "fails" => Some(Err(what.to_string())),
            _ => None,
        }
    };
    Some(Proof {
        writes: part("writes")?,
        trust: part("trust_folders")?,
        network: part("network")?,
        ran: true,
    })
}

/// `text` on one line: the report and the record are line-based.
fn one_line(text: &str) -> String {
    text.split(['\r', '\n'])
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests;
