//! The actions beyond a plain click: double and right clicks, closing,
//! moving and sizing a window, and waiting for a target.

use super::*;
use crate::{How, Placement};
use std::time::Instant;

#[test]
fn double_and_right_clicks_need_the_pointer_and_so_the_users_agreement() {
    let (fake, desktop) = setup(Some(vec![]));
    for how in [How::Double, How::Right] {
        let gate = desktop.click_as(1, "OK", how, false).unwrap();
        assert_eq!(gate["needs_permission"], true, "{how:?}");
    }
    assert!(calls(&fake).is_empty());
    let done = desktop.click_as(1, "OK", How::Double, true).unwrap();
    assert_eq!(done["route"], "SENDINPUT_POINTER");
    fake.state().foreground = 1;
    desktop.click_as(1, "id:104", How::Right, true).unwrap();
    let pointer: Vec<String> = calls(&fake)
        .into_iter()
        .filter(|c| c.starts_with("POINTER"))
        .collect();
    assert_eq!(pointer, ["POINTER 60,40 Double", "POINTER 60,40 Right"]);
}

#[test]
fn select_expand_and_collapse_refuse_native_controls_and_do_nothing() {
    let (fake, desktop) = setup(Some(vec![]));
    for how in [How::Select, How::Expand, How::Collapse] {
        let err = desktop.click_as(1, "OK", how, true).unwrap_err();
        assert_eq!(err.kind.as_str(), "INVALID_ARGUMENTS", "{how:?}");
        assert!(err.message.contains("native control"), "{}", err.message);
    }
    assert!(calls(&fake).is_empty());
}

#[test]
fn closing_a_window_reports_whether_it_went() {
    let (fake, desktop) = setup(Some(vec![]));
    let report = desktop.close_window(1).unwrap();
    assert_eq!(report["route"], "WM_CLOSE");
    assert_eq!(report["closed"], true);
    assert!(fake.window(1).is_none());
    assert_eq!(
        kind(desktop.close_window(2).unwrap_err()),
        "WINDOW_OUT_OF_SCOPE"
    );
    assert_eq!(calls(&fake), ["WM_CLOSE 1"]);
}

#[test]
fn a_window_that_asks_before_closing_names_the_question() {
    let (fake, desktop) = setup(Some(vec![]));
    fake.state().close_asks = Some(window(3, "Save changes?", 10, "app.exe"));
    let report = desktop.close_window(1).unwrap();
    assert_eq!(report["closed"], false);
    assert_eq!(strings(&report["opened"], "title"), ["Save changes?"]);
    assert!(report.get("note").is_none());
}

#[test]
fn moving_keeps_what_is_not_given_and_reads_the_place_back() {
    let (fake, desktop) = setup(Some(vec![]));
    let moved = Placement {
        x: Some(100),
        width: Some(640),
        ..Placement::default()
    };
    let report = desktop.move_window(1, moved).unwrap();
    assert_eq!(report["route"], "SETWINDOWPOS");
    assert_eq!(report["rect"], json!([100, 0, 740, 300]));
    assert_eq!(report["verified"], true);
    assert_eq!(report["foreground_unchanged"], true);
    // A program that keeps a smallest size of its own: not verified.
    fake.state().min_width = 500;
    let narrow = Placement {
        width: Some(200),
        ..Placement::default()
    };
    let report = desktop.move_window(1, narrow).unwrap();
    assert_eq!(report["rect"], json!([100, 0, 600, 300]));
    assert_eq!(report["verified"], false);
}

#[test]
fn impossible_places_are_refused_and_nothing_moves() {
    let (fake, desktop) = setup(Some(vec![]));
    let bad = [
        Placement::default(),
        Placement {
            width: Some(10),
            ..Placement::default()
        },
        Placement {
            height: Some(100_000),
            ..Placement::default()
        },
        Placement {
            x: Some(-40_000),
            ..Placement::default()
        },
    ];
    for place in bad {
        let err = desktop.move_window(1, place).unwrap_err();
        assert_eq!(err.kind.as_str(), "INVALID_ARGUMENTS", "{place:?}");
    }
    fake.state().windows[0].minimized = true;
    let err = desktop
        .move_window(
            1,
            Placement {
                x: Some(5),
                ..Placement::default()
            },
        )
        .unwrap_err();
    assert_eq!(err.kind.as_str(), "INVALID_INPUT");
    assert!(calls(&fake).is_empty());
}

#[test]
fn waiting_ends_when_the_target_comes_or_goes() {
    let (fake, desktop) = setup(Some(vec![]));
    let later = fake.clone();
    let adder = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(400));
        later
            .state()
            .controls
            .get_mut(&1)
            .unwrap()
            .push(control(15, "Static", "Done", 105));
    });
    let started = Instant::now();
    let report = desktop.wait_for(1, "Done", false, 10).unwrap();
    adder.join().unwrap();
    assert_eq!(report["met"], true);
    assert_eq!(report["target"]["text"], "Done");
    assert!(started.elapsed() < Duration::from_secs(10));
    // Already gone: met at once. Still there: not met, and said so.
    assert_eq!(
        desktop.wait_for(1, "Nothing", true, 5).unwrap()["met"],
        true
    );
    let report = desktop.wait_for(1, "Done", true, 1).unwrap();
    assert_eq!(report["met"], false);
    assert!(report["note"].as_str().unwrap().contains("still there"));
    // A window that closes meanwhile holds nothing any more.
    let closer = fake.clone();
    let closing = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(300));
        closer.state().windows.retain(|w| w.hwnd != 1);
    });
    assert_eq!(desktop.wait_for(1, "Done", true, 10).unwrap()["met"], true);
    closing.join().unwrap();
    assert!(calls(&fake).is_empty());
}

#[test]
fn waiting_refuses_bad_targets_and_windows_out_of_scope() {
    let (_, desktop) = setup(Some(vec![]));
    assert_eq!(
        kind(desktop.wait_for(1, "id:x", false, 1).unwrap_err()),
        "INVALID_ARGUMENTS"
    );
    assert_eq!(
        kind(desktop.wait_for(2, "Pay", false, 1).unwrap_err()),
        "WINDOW_OUT_OF_SCOPE"
    );
}

#[test]
fn a_native_action_reports_the_controls_it_changed() {
    let (fake, desktop) = setup(Some(vec![]));
    fake.state().click_adds = Some(control(15, "Static", "Saved.", 105));
    let report = desktop.click(1, "OK", false).unwrap();
    assert_eq!(report["route"], "BM_CLICK");
    assert_eq!(
        report["changes"],
        json!({"added": ["Static 'Saved.' id:105"]})
    );
    // Text set by message: the edit's new text is its new line.
    let report = desktop.type_text(1, "id:102", "Ada", false).unwrap();
    assert_eq!(
        report["changes"],
        json!({"target_now": "Edit 'Ada' id:102"})
    );
}

/// A desktop whose user listed `apps` for open_app.
fn with_apps(apps: &[&str]) -> (Fake, Desktop) {
    let (fake, _) = setup(Some(vec![]));
    let desktop = Desktop::new(
        Box::new(fake.clone()),
        Arc::new(FakeTree::new(Some(vec![]))),
        apps.iter().map(|a| a.to_string()).collect(),
        vec!["APP".into()],
    );
    (fake, desktop)
}

fn launches(fake: &Fake) -> Vec<String> {
    calls(fake)
        .into_iter()
        .filter(|c| c.starts_with("LAUNCH") || c.starts_with("ACTIVATE"))
        .collect()
}

#[test]
fn a_listed_shortcut_starts_its_target_with_its_own_arguments_first() {
    let (fake, desktop) = with_apps(&["/opt/menu/Notepad++.lnk"]);
    fake.state().shortcuts.insert(
        "/opt/menu/Notepad++.lnk".into(),
        ("/opt/npp/notepad++.exe".into(), "-multiInst".into()),
    );
    let started = desktop
        .open_app(
            "Notepad++",
            &["a b.txt".into()],
            false,
            &ProgramSearch::default(),
        )
        .unwrap();
    assert_eq!(started["program"], "/opt/npp/notepad++.exe");
    assert_eq!(
        launches(&fake),
        [r#"LAUNCH /opt/npp/notepad++.exe "/opt/npp/notepad++.exe" -multiInst "a b.txt""#]
    );
}

#[test]
fn a_start_menu_title_starts_when_the_name_is_listed() {
    let (fake, desktop) = with_apps(&["Visual Studio Code"]);
    {
        let mut s = fake.state();
        s.start_menu
            .insert("Visual Studio Code".into(), "/opt/menu/Code.lnk".into());
        s.shortcuts.insert(
            "/opt/menu/Code.lnk".into(),
            ("/opt/code/Code.exe".into(), String::new()),
        );
    }
    desktop
        .open_app("visual studio code", &[], false, &ProgramSearch::default())
        .unwrap();
    assert_eq!(
        launches(&fake),
        [r#"LAUNCH /opt/code/Code.exe "/opt/code/Code.exe""#]
    );
}

#[test]
fn shortcuts_the_agent_could_have_written_or_that_start_no_program_do_not_start() {
    let (fake, desktop) = with_apps(&[
        "/opt/menu/Planted.lnk",
        "/opt/menu/Script.lnk",
        "/work/proj/Mine.lnk",
        "/opt/menu/Broken.lnk",
    ]);
    {
        let mut s = fake.state();
        for (lnk, target) in [
            ("/opt/menu/Planted.lnk", "/work/proj/tool.exe"),
            ("/opt/menu/Script.lnk", "/opt/tools/run.bat"),
            ("/work/proj/Mine.lnk", "/opt/tools/tool.exe"),
        ] {
            s.shortcuts
                .insert(lnk.into(), (target.into(), String::new()));
        }
    }
    for (command, kind_expected) in [
        ("Planted", "APP_NOT_ALLOWED"),
        ("Script", "APP_NOT_ALLOWED"),
        ("/work/proj/Mine.lnk", "APP_NOT_ALLOWED"),
        ("Broken", "APP_NOT_FOUND"),
    ] {
        let err = desktop
            .open_app(command, &[], false, &ProgramSearch::default())
            .unwrap_err();
        assert_eq!(kind(err), kind_expected, "{command}");
    }
    assert!(launches(&fake).is_empty());
}

#[test]
fn a_listed_packaged_app_is_activated_by_its_id() {
    let id = "Microsoft.WindowsCalculator_8wekyb3d8bbwe!App";
    let (fake, desktop) = with_apps(&[id]);
    let started = desktop
        .open_app(id, &["two words".into()], false, &ProgramSearch::default())
        .unwrap();
    assert_eq!(
        (&started["pid"], &started["program"]),
        (&json!(78), &json!(id))
    );
    assert_eq!(launches(&fake), [format!(r#"ACTIVATE {id} "two words""#)]);
    assert_eq!(
        kind(
            desktop
                .open_app("Other.App_1!App", &[], false, &ProgramSearch::default())
                .unwrap_err()
        ),
        "APP_NOT_ALLOWED"
    );
}
