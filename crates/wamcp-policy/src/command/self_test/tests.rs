use super::*;

fn refused(why: &str) -> Outcome {
    Outcome::Refused(why.into())
}

/// The report of a probe under a layer that holds.
fn holding_report() -> Report {
    let denied = || refused("Permission denied (os error 13)");
    let mut writes = vec![(Place::Root, Outcome::Done), (Place::Temp, Outcome::Done)];
    writes.extend(Place::ALL[2..].iter().map(|place| (*place, denied())));
    writes[3].1 = refused("Read-only file system (os error 30)");
    Report {
        writes,
        connect: Some(denied()),
    }
}

fn holding_observed() -> Observed {
    Observed {
        changed: vec![Place::Root],
        accepted: false,
    }
}

/// The probe did it at `place`, and wamcp saw it.
fn done(observed: &mut Observed, report: &mut Report, place: Place) {
    observed.changed.push(place);
    report_at(report, place, Outcome::Done);
}

/// Sets what the probe reported at `place`.
fn report_at(report: &mut Report, place: Place, outcome: Outcome) {
    for (p, o) in &mut report.writes {
        if *p == place {
            *o = outcome.clone();
        }
    }
}

#[test]
fn the_report_reads_back_as_written_and_ignores_stray_lines() {
    let report = holding_report();
    let mut text = String::from("some program noise\r\n");
    for (place, outcome) in &report.writes {
        text.push_str(&report_line(Some(*place), outcome));
        text.push_str("\r\n");
    }
    text.push_str(&report_line(None, report.connect.as_ref().unwrap()));
    text.push_str("\nwrite nowhere done\nwrite root refused a second report is ignored\n");
    assert_eq!(parse_report(&text), report);
    assert_eq!(
        report_line(Some(Place::Root), &Outcome::Done),
        "write root done"
    );
    assert_eq!(
        report_line(None, &Outcome::Failed("two\nlines".into())),
        "connect failed two lines"
    );
    assert_eq!(
        parse_report("write root maybe\nconnect\n"),
        Report::default()
    );
}

#[test]
fn a_layer_that_holds_is_proven_part_by_part() {
    let proof = judge(Ok(()), &holding_observed(), &holding_report());
    assert!(proof.ran);
    assert!(proof.writes.is_ok(), "{proof:?}");
    assert!(proof.trust.is_ok(), "{proof:?}");
    assert!(proof.network.is_ok(), "{proof:?}");
}

/// Each way the layer fails, with the evidence named: what wamcp saw
/// decides, whatever the probe says.
#[test]
fn each_failure_is_named_by_what_was_seen() {
    type Change = fn(&mut Observed, &mut Report);
    let cases: [(&str, Change, &str, &str); 17] = [
        (
            "Wine: the write outside went through",
            |o, r| done(o, r, Place::Outside),
            "writes",
            "the system let the probe write outside the writable roots",
        ),
        (
            "the probe lies about a refusal; the file is there",
            |o, _| o.changed.push(Place::Outside),
            "writes",
            "the system let the probe write outside the writable roots",
        ),
        (
            "Landlock before ABI 3: a file outside truncated by path",
            |o, r| done(o, r, Place::Victim),
            "writes",
            "the system let the probe truncate a file outside the writable roots",
        ),
        (
            "Landlock before ABI 3: O_TRUNC on a read-only open",
            |o, r| done(o, r, Place::Emptied),
            "writes",
            "the system let the probe empty a file outside the writable roots by opening it",
        ),
        (
            "Windows: a parent's delete-child right deletes a file outside",
            |o, r| done(o, r, Place::Doomed),
            "writes",
            "the system let the probe delete a file outside the writable roots",
        ),
        (
            "the truncation failed another way",
            |_, r| {
                report_at(
                    r,
                    Place::Victim,
                    Outcome::Failed("No such file or directory".into()),
                )
            },
            "writes",
            "the probe's truncation outside the roots failed without a refusal (No such file or directory)",
        ),
        (
            "the outside write failed for another reason",
            |_, r| {
                report_at(
                    r,
                    Place::Outside,
                    Outcome::Failed("No such file or directory".into()),
                )
            },
            "writes",
            "the probe's write outside the roots failed without a refusal (No such file or directory)",
        ),
        (
            "too strict: nothing inside the root",
            |o, r| {
                o.changed.retain(|p| *p != Place::Root);
                report_at(r, Place::Root, refused("Access is denied. (os error 5)"));
            },
            "writes",
            "the probe could not write inside its writable root (Access is denied. (os error 5))",
        ),
        (
            "no temp folder",
            |_, r| {
                report_at(
                    r,
                    Place::Temp,
                    Outcome::Failed("No space left on device".into()),
                )
            },
            "writes",
            "the probe could not write inside its own temp folder (No space left on device)",
        ),
        (
            "a trust folder was changed",
            |o, _| o.changed.push(Place::Trust),
            "trust_folders",
            "the system let the probe change a trust folder inside its root",
        ),
        (
            "a file in a trust folder was deleted",
            |o, r| done(o, r, Place::TrustFile),
            "trust_folders",
            "the system let the probe delete a file in a trust folder",
        ),
        (
            "a trust folder was renamed away",
            |o, r| done(o, r, Place::TrustFolder),
            "trust_folders",
            "the system let the probe rename a trust folder away",
        ),
        (
            "a rename that failed another way",
            |_, r| {
                report_at(
                    r,
                    Place::TrustFolder,
                    Outcome::Failed("No such file or directory".into()),
                )
            },
            "trust_folders",
            "the probe's rename in a trust folder failed without a refusal (No such file or directory)",
        ),
        (
            "a connection that timed out proves nothing",
            |_, r| r.connect = Some(Outcome::Failed("timed out".into())),
            "network",
            "the probe's connection failed without a refusal (timed out)",
        ),
        (
            "the listener saw the probe",
            |o, _| o.accepted = true,
            "network",
            "the probe, started without the network, connected to a loopback listener",
        ),
        (
            "a connection nobody saw",
            |_, r| r.connect = Some(Outcome::Done),
            "network",
            "the probe reported a connection the loopback listener never accepted",
        ),
        (
            "the probe said nothing about the network",
            |_, r| r.connect = None,
            "network",
            "the probe did not report its connection attempt",
        ),
    ];
    for (case, change, part, evidence) in cases {
        let (mut observed, mut report) = (holding_observed(), holding_report());
        change(&mut observed, &mut report);
        let proof = judge(Ok(()), &observed, &report);
        for (name, verdict) in proof.parts() {
            match name == part {
                true => assert_eq!(verdict, &Err(evidence.to_string()), "{case}"),
                false => assert!(verdict.is_ok(), "{case}: {name} {verdict:?}"),
            }
        }
    }
}

#[test]
fn a_probe_that_did_not_start_proves_nothing() {
    let proof = judge(
        Err("access denied".into()),
        &holding_observed(),
        &holding_report(),
    );
    for (_, part) in proof.parts() {
        assert_eq!(
            part,
            &Err("the probe could not start confined: access denied".to_string())
        );
    }
    assert!(!proof.ran, "a verdict of failed machinery is not kept");
    let silent = judge(Ok(()), &holding_observed(), &Report::default());
    assert!(silent.writes.is_err() && silent.trust.is_err() && silent.network.is_err());
}

#[test]
fn a_record_holds_only_for_its_key() {
    let proof = Proof {
        writes: Ok("held".into()),
        trust: Err("the system let\nit".into()),
        network: Err("connected".into()),
        ran: true,
    };
    let text = record("boot-1 wamcp 123", &proof);
    let read = read_record(&text, "boot-1 wamcp 123").unwrap();
    assert_eq!(read.writes, Ok("held".into()));
    assert_eq!(read.trust, Err("the system let it".into()));
    assert_eq!(read.network, proof.network);
    assert_eq!(read_record(&text, "boot-2 wamcp 123"), None);
    let cut: String = text.lines().take(3).map(|l| format!("{l}\n")).collect();
    assert_eq!(read_record(&cut, "boot-1 wamcp 123"), None);
    assert_eq!(
        read_record(&text.replace("holds", "maybe"), "boot-1 wamcp 123"),
        None
    );
    assert_eq!(read_record("", "k"), None);
}
