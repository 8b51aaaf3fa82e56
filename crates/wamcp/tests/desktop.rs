//! The desktop tools against real Win32 windows, under Wine on Linux CI.
//!
//! The test binary is also the test application: copied under other names
//! and started with `--app`, it opens a window with a button, an edit, a
//! checkbox, a password edit, a notifying label and a multi-line edit,
//! paints coloured bands, and logs every click and text change to a file.
//! `--app … hung` stops pumping messages; `--app … grab` takes the
//! foreground twice after start, as programs do. Elsewhere the tools are
//! not registered; that side is tested in `mcp.rs`.

// Tests fail loudly by design, so they may unwrap and expect.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[cfg(windows)]
mod common;

fn main() {
    if answered_listing() {
        return;
    }
    #[cfg(windows)]
    windows::main();
    #[cfg(not(windows))]
    println!("desktop: the desktop tools exist only on Windows (tested under Wine)");
}

/// Answers a test runner's listing (`--list`, as cargo-nextest asks it
/// with `--format terse`): this binary is one test named `desktop`, never
/// ignored. Returns whether it was a listing; anything else runs the test.
fn answered_listing() -> bool {
    let args: Vec<String> = std::env::args().collect();
    if !args.iter().any(|a| a == "--list") {
        return false;
    }
    if !args.iter().any(|a| a == "--ignored") {
        println!("desktop: test");
    }
    true
}

#[cfg(windows)]
mod windows {
    use super::common::{Client, Sandbox};
    use serde_json::{Value, json};
    use std::path::{Path, PathBuf};
    use std::time::{Duration, Instant};

    pub fn main() {
        let args: Vec<String> = std::env::args().collect();
        if args.get(1).map(String::as_str) == Some("--app") {
            app::run(
                Path::new(&args[2]),
                &args[3],
                args.get(4).map_or("normal", String::as_str),
            );
            return;
        }
        tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
            .unwrap()
            .block_on(scenarios());
        println!("desktop: every check passed");
    }

    struct Apps {
        dir: PathBuf,
        /// Copies started directly, killed when the scenarios end.
        started: Vec<std::process::Child>,
    }

    impl Drop for Apps {
        fn drop(&mut self) {
            for child in &mut self.started {
                // Already gone is fine.
                let _ = child.kill();
            }
        }
    }

    impl Apps {
        /// Copies of this binary under the names the scenarios need, in a
        /// folder outside every writable root.
        fn new(root: &Path) -> Apps {
            let dir = root.join("apps");
            std::fs::create_dir_all(&dir).unwrap();
            let me = std::env::current_exe().unwrap();
            for name in ["wamcp-test-app.exe", "other-app.exe", "listed-app.exe"] {
                std::fs::copy(&me, dir.join(name)).unwrap();
            }
            Apps {
                dir,
                started: Vec::new(),
            }
        }

        fn path(&self, name: &str) -> String {
            self.dir.join(name).display().to_string()
        }

        fn log(&self, name: &str) -> PathBuf {
            self.dir.join(format!("{name}.log"))
        }

        /// Starts a copy directly (not through wamcp) and waits until its
        /// window is up; returns the main and hidden window handles.
        fn start(&mut self, exe: &str, log: &str, title: &str, mode: &str) -> (i64, i64) {
            let child = std::process::Command::new(self.path(exe))
                .args(["--app", &self.log(log).display().to_string(), title, mode])
                .spawn()
                .unwrap();
            self.started.push(child);
            ready(&self.log(log))
        }
    }

    fn log_text(log: &Path) -> String {
        std::fs::read_to_string(log).unwrap_or_default()
    }

    /// The `ready <main> <hidden>` line the app writes once its windows exist.
    fn ready(log: &Path) -> (i64, i64) {
        let started = Instant::now();
        loop {
            if let Some(line) = log_text(log).lines().find(|l| l.starts_with("ready ")) {
                let mut parts = line.split(' ').skip(1).map(|n| n.parse::<i64>().unwrap());
                return (parts.next().unwrap(), parts.next().unwrap());
            }
            assert!(
                started.elapsed() < Duration::from_secs(60),
                "the test app never got ready: {log:?}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn foreground() -> i64 {
        // SAFETY: takes no arguments and returns a handle by value.
        unsafe { windows_sys::Win32::UI::WindowsAndMessaging::GetForegroundWindow() as i64 }
    }

    /// A call that must not be an error; its structured content.
    async fn ok(client: &Client, tool: &str, args: Value) -> Value {
        let result = client.call(tool, args.clone()).await;
        assert_ne!(result.is_error, Some(true), "{tool} {args}: {result:?}");
        result.structured_content.expect("structured content")
    }

    async fn error_type(client: &Client, tool: &str, args: Value) -> String {
        client.error_of(tool, args).await["type"]
            .as_str()
            .unwrap()
            .to_string()
    }

    fn control(seen: &Value, id: i64) -> &Value {
        seen["controls"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["id"] == id)
            .unwrap_or_else(|| panic!("no control {id}: {seen}"))
    }

    async fn scenarios() {
        let sandbox = Sandbox::new();
        let mut apps = Apps::new(&sandbox.root());
        let client = sandbox
            .set("WAMCP_TOOLS", "core,desktop")
            .set("WAMCP_DESKTOP_APPS", apps.path("wamcp-test-app.exe"))
            .set("WAMCP_DESKTOP_PROCESSES", "listed-app")
            .connect()
            .await;
        let names = client.tool_names().await;
        for tool in [
            "windows",
            "see",
            "click",
            "type_text",
            "scroll",
            "key",
            "open_app",
            "reveal",
            "close_window",
            "move_window",
            "wait_for",
        ] {
            assert!(
                names.contains(&tool.to_string()),
                "{tool} missing: {names:?}"
            );
        }

        // A window of the user's holds the foreground, as on a desktop in use
        // (Wine cannot give the foreground back to the bare desktop).
        let (listed_app, _) = apps.start("listed-app.exe", "listed", "Listed App", "normal");
        wait_until(|| foreground() == listed_app, "the listed app in front");

        // open_app: starts the listed program without giving it the foreground.
        let desktop_before = foreground();
        let log = apps.log("main");
        let started = ok(
            &client,
            "open_app",
            json!({
                "command": apps.path("wamcp-test-app.exe"),
                "args": ["--app", log.display().to_string(), "Test App", "normal"],
            }),
        )
        .await;
        let (main, hidden) = ready(&log);
        assert!(
            log_text(&log).contains("stdout ") && !log_text(&log).contains("stdout 3"),
            "a started program shares the server's stdio: {}",
            log_text(&log)
        );
        assert_eq!(started["foreground_unchanged"], true, "{started}");
        assert_eq!(foreground(), desktop_before);
        assert!(
            started["windows"]
                .as_array()
                .unwrap()
                .iter()
                .any(|w| w["hwnd"] == main),
            "{started}"
        );
        let pid = started["pid"].clone();

        // windows(): found by pid, in scope, not the foreground.
        let listed = ok(&client, "windows", json!({})).await;
        let entry = listed["windows"]
            .as_array()
            .unwrap()
            .iter()
            .find(|w| w["hwnd"] == main)
            .cloned()
            .unwrap();
        assert_eq!(
            (
                &entry["pid"],
                &entry["title"],
                &entry["in_scope"],
                &entry["foreground"]
            ),
            (&pid, &json!("Test App"), &json!(true), &json!(false))
        );
        assert_eq!(entry["process"], "wamcp-test-app.exe");

        // see(): a picture that is not one colour, and the controls.
        let all_windows = ok(&client, "windows", json!({})).await;
        let seen = client
            .call("see", json!({"hwnd": main, "max_edge": 200}))
            .await;
        let report = seen.structured_content.clone().unwrap();
        let png = seen
            .content
            .iter()
            .find_map(|c| c.as_image().map(|i| i.data.clone()))
            .unwrap_or_else(|| panic!("no image: {report} {all_windows}"));
        assert_pixels_vary(&png, &report);
        assert!(
            report["image"]["width"].as_u64().unwrap() <= 200,
            "{report}"
        );
        assert_eq!(control(&report, 101)["text"], "Click Me");
        assert_eq!(control(&report, 104)["password"], true);
        assert_eq!(control(&report, 103)["checked"], false);

        // click: BM_CLICK lands as BN_CLICKED, the foreground stays.
        let clicked = ok(
            &client,
            "click",
            json!({"hwnd": main, "target": "click me"}),
        )
        .await;
        assert_eq!(
            (&clicked["route"], &clicked["foreground_unchanged"]),
            (&json!("BM_CLICK"), &json!(true))
        );
        assert!(log_text(&log).contains("clicked 101"), "{}", log_text(&log));
        assert!(clicked.get("opened").is_none(), "{clicked}");
        let checked = ok(
            &client,
            "click",
            json!({"hwnd": main, "target": "Check me"}),
        )
        .await;
        // What the click changed comes with it: no second look needed.
        assert_eq!(
            checked["changes"],
            json!({"target_now": "Button 'Check me' id:103 checked"}),
            "{checked}"
        );
        let seen = ok(&client, "see", json!({"hwnd": main})).await;
        assert_eq!(control(&seen, 103)["checked"], true);
        assert_eq!(foreground(), desktop_before);

        // A button that opens a modal dialog answers BM_CLICK only once the
        // dialog closes: the click is done and names the dialog, never a
        // hung window to click again.
        let clicked = ok(
            &client,
            "click",
            json!({"hwnd": main, "target": "Open Dialog"}),
        )
        .await;
        let opened = clicked["opened"]
            .as_array()
            .unwrap_or_else(|| panic!("{clicked}"));
        assert_eq!(
            (opened.len(), &opened[0]["title"]),
            (1, &json!("Test Dialog")),
            "{clicked}"
        );
        assert_eq!(log_text(&log).matches("clicked 107").count(), 1);
        let dialog = opened[0]["hwnd"].clone();
        let closed = ok(&client, "click", json!({"hwnd": dialog, "target": "OK"})).await;
        assert_eq!(closed["route"], "BM_CLICK", "{closed}");
        wait_for(
            || log_text(&log).contains("dialog closed"),
            "the dialog closed",
            &log,
        );
        assert_eq!(foreground(), desktop_before);

        // type_text: WM_SETTEXT read back exactly, Unicode included.
        let text = "héllo wörld 👋 ✓";
        let typed = ok(
            &client,
            "type_text",
            json!({"hwnd": main, "target": "id:102", "text": text}),
        )
        .await;
        assert_eq!(
            (
                &typed["route"],
                &typed["verified"],
                &typed["foreground_unchanged"]
            ),
            (&json!("WM_SETTEXT"), &json!(true), &json!(true))
        );
        assert_eq!(
            control(&ok(&client, "see", json!({"hwnd": main})).await, 102)["text"],
            text
        );
        assert!(log_text(&log).contains("changed 102"));

        // Password edits are never typed into.
        assert_eq!(
            error_type(
                &client,
                "type_text",
                json!({"hwnd": main, "target": "id:104", "text": "x", "allow_foreground": true})
            )
            .await,
            "PASSWORD_FIELD"
        );
        assert!(!log_text(&log).contains("changed 104"));

        // A label takes no click message: the gate, then the pointer when allowed.
        let gate = ok_gate(&client, json!({"hwnd": main, "target": "Label"}), "click").await;
        assert!(
            gate["reason"].as_str().unwrap().contains("Static"),
            "{gate}"
        );
        assert!(!log_text(&log).contains("clicked 105"));
        assert_eq!(foreground(), desktop_before);

        // scroll: the multi-line edit moves by message, checked on its scroll bar.
        let scrolled = ok(
            &client,
            "scroll",
            json!({"hwnd": main, "target": "id:106", "direction": "down", "lines": 5}),
        )
        .await;
        assert_eq!(scrolled["route"], "WM_VSCROLL", "{scrolled}");
        assert_eq!(scrolled["position"]["after"], 5, "{scrolled}");
        assert_eq!(foreground(), desktop_before);

        // key: the gate without permission; SendInput with it.
        let gate = ok_gate(&client, json!({"hwnd": main, "keys": "xyz"}), "key").await;
        assert!(gate["detail"].as_str().unwrap().contains("3 keystroke"));
        assert_eq!(foreground(), desktop_before);
        // Keys go where the window's focus is (BM_CLICK moved it to the
        // button): a real click on the edit first, as a person would.
        let focused = ok(
            &client,
            "click",
            json!({"hwnd": main, "target": "id:102", "allow_foreground": true}),
        )
        .await;
        assert_eq!(
            (&focused["route"], &focused["foreground_unchanged"]),
            (&json!("SENDINPUT_POINTER"), &json!(false))
        );
        assert_eq!(foreground(), main);
        let keyed = ok(
            &client,
            "key",
            json!({"hwnd": main, "keys": "xyz", "allow_foreground": true}),
        )
        .await;
        assert_eq!(keyed["route"], "SENDINPUT_KEYS");
        assert_eq!(foreground(), main);
        wait_for(
            || control_text_contains(&log, "xyz"),
            "the keys typed into the edit",
            &log,
        );

        // Keys never go into a password field, even one the focus is in.
        ok(
            &client,
            "click",
            json!({"hwnd": main, "target": "id:104", "allow_foreground": true}),
        )
        .await;
        assert_eq!(
            error_type(
                &client,
                "key",
                json!({"hwnd": main, "keys": "hunter2", "allow_foreground": true})
            )
            .await,
            "PASSWORD_FIELD"
        );
        // A shell chord is refused before anything moves.
        assert_eq!(
            error_type(
                &client,
                "key",
                json!({"hwnd": main, "keys": "Alt+Tab", "allow_foreground": true})
            )
            .await,
            "INVALID_ARGUMENTS"
        );

        let pointer = ok(
            &client,
            "click",
            json!({"hwnd": main, "target": "Label", "allow_foreground": true}),
        )
        .await;
        assert_eq!(pointer["route"], "SENDINPUT_POINTER");
        wait_for(
            || log_text(&log).contains("clicked 105"),
            "the pointer click on the label",
            &log,
        );
        // Double and right clicks: the real pointer too, with permission.
        for (how, logged) in [("double", "double 105"), ("right", "context menu")] {
            let args = json!({"hwnd": main, "target": "Label", "how": how});
            let gate = ok(&client, "click", args.clone()).await;
            assert_eq!(gate["needs_permission"], true, "{how}: {gate}");
            let mut allowed = args;
            allowed["allow_foreground"] = json!(true);
            let done = ok(&client, "click", allowed).await;
            assert_eq!(done["route"], "SENDINPUT_POINTER", "{how}");
            wait_for(|| log_text(&log).contains(logged), logged, &log);
        }

        // see of a hidden window: no picture, the reason instead.
        let hidden_seen = client.call("see", json!({"hwnd": hidden})).await;
        assert!(hidden_seen.content.iter().all(|c| c.as_image().is_none()));
        let reason = hidden_seen.structured_content.unwrap()["image_unavailable"]
            .as_str()
            .unwrap()
            .to_string();
        assert!(reason.contains("hidden"), "{reason}");

        // Out of scope: another program's window is listed but untouched.
        let (other, _) = apps.start("other-app.exe", "other", "Other App", "normal");
        let listed = ok(&client, "windows", json!({})).await;
        let other_entry = listed["windows"]
            .as_array()
            .unwrap()
            .iter()
            .find(|w| w["hwnd"] == other)
            .cloned()
            .unwrap();
        assert_eq!(other_entry["in_scope"], false);
        for (tool, args) in [
            (
                "click",
                json!({"hwnd": other, "target": "Click Me", "allow_foreground": true}),
            ),
            (
                "type_text",
                json!({"hwnd": other, "target": "id:102", "text": "x"}),
            ),
            ("see", json!({"hwnd": other})),
            ("reveal", json!({"hwnd": other})),
        ] {
            assert_eq!(
                error_type(&client, tool, args).await,
                "WINDOW_OUT_OF_SCOPE",
                "{tool}"
            );
        }
        assert!(
            !log_text(&apps.log("other")).contains("clicked")
                && !log_text(&apps.log("other")).contains("changed")
        );

        // Listed by image name: in scope although wamcp did not start it.
        ok(
            &client,
            "click",
            json!({"hwnd": listed_app, "target": "Click Me"}),
        )
        .await;
        assert!(log_text(&apps.log("listed")).contains("clicked 101"));

        // Programs not listed never start.
        for command in [
            "cmd",
            apps.path("other-app.exe").as_str(),
            "wamcp-test-app.cmd",
        ] {
            assert_eq!(
                error_type(&client, "open_app", json!({"command": command})).await,
                "APP_NOT_ALLOWED",
                "{command}"
            );
        }

        // reveal: takes the foreground, verified.
        assert_ne!(foreground(), main);
        let revealed = ok(&client, "reveal", json!({"hwnd": main})).await;
        assert_eq!(revealed["took_foreground"], true);
        assert_eq!(foreground(), main);

        // move_window: placed and read back, nothing activated.
        let moved = ok(
            &client,
            "move_window",
            json!({"hwnd": main, "x": 40, "y": 30, "width": 520}),
        )
        .await;
        assert_eq!(moved["verified"], true, "{moved}");
        let rect = moved["rect"].as_array().unwrap().clone();
        assert_eq!((&rect[0], &rect[1]), (&json!(40), &json!(30)));
        assert_eq!(rect[2].as_i64().unwrap() - 40, 520);
        assert_eq!(moved["foreground_unchanged"], true);
        let listed = ok(&client, "windows", json!({})).await;
        let entry = listed["windows"]
            .as_array()
            .unwrap()
            .iter()
            .find(|w| w["hwnd"] == main)
            .cloned()
            .unwrap();
        assert_eq!(entry["rect"], json!(rect));

        // wait_for: there at once, or not within the time, said so.
        let there = ok(
            &client,
            "wait_for",
            json!({"hwnd": main, "target": "Label"}),
        )
        .await;
        assert_eq!(
            (&there["met"], &there["target"]["id"]),
            (&json!(true), &json!(105))
        );
        let absent = ok(
            &client,
            "wait_for",
            json!({"hwnd": main, "target": "Nothing here", "seconds": 1}),
        )
        .await;
        assert_eq!(absent["met"], false, "{absent}");

        // A program that grabs the foreground after start is pushed back.
        let grab_log = apps.log("grab");
        let before = foreground();
        let grabbed = ok(
            &client,
            "open_app",
            json!({
                "command": "wamcp-test-app",
                "args": ["--app", grab_log.display().to_string(), "Grabbing App", "grab"],
            }),
        )
        .await;
        let (grabbing, _) = ready(&grab_log);
        assert!(
            grabbed["foreground_contests"].as_u64().unwrap() >= 1,
            "{grabbed}"
        );
        assert_eq!(foreground(), before, "{grabbed}");
        // close_window: the program's window asked to close, and gone.
        let closed = ok(&client, "close_window", json!({"hwnd": grabbing})).await;
        assert_eq!(
            (&closed["route"], &closed["closed"]),
            (&json!("WM_CLOSE"), &json!(true)),
            "{closed}"
        );
        assert_eq!(
            error_type(&client, "close_window", json!({"hwnd": other})).await,
            "WINDOW_OUT_OF_SCOPE"
        );

        // A hung window never hangs a tool.
        let (hung, _) = apps.start("listed-app.exe", "hung", "Hung App", "hung");
        std::thread::sleep(Duration::from_millis(500));
        assert_eq!(
            error_type(
                &client,
                "click",
                json!({"hwnd": hung, "target": "Click Me"})
            )
            .await,
            "WINDOW_NOT_RESPONDING"
        );
        let seen_hung = ok(&client, "see", json!({"hwnd": hung})).await;
        assert!(seen_hung["controls_unavailable"].is_string(), "{seen_hung}");

        bench(&client, main).await;

        // A real click never lands on a window on top of the target.
        let (_cover, _) = apps.start("other-app.exe", "cover", "Cover", "cover");
        assert_eq!(
            error_type(
                &client,
                "click",
                json!({"hwnd": main, "target": "Label", "allow_foreground": true})
            )
            .await,
            "TARGET_OBSCURED"
        );
        assert!(!log_text(&apps.log("cover")).contains("pointer"));

        // An argument the ANSI code page would turn into a quote is refused.
        assert_eq!(
            error_type(
                &client,
                "open_app",
                json!({"command": "wamcp-test-app", "args": ["x\u{ff02} --evil"]})
            )
            .await,
            "INVALID_ARGUMENTS"
        );
        client.close().await;
        // The programs open_app started close like any window.
        for window in [main, grabbing] {
            // SAFETY: a handle and plain values; a window already gone only
            // makes the call fail.
            unsafe {
                windows_sys::Win32::UI::WindowsAndMessaging::PostMessageW(
                    window as _,
                    windows_sys::Win32::UI::WindowsAndMessaging::WM_CLOSE,
                    0,
                    0,
                )
            };
        }
    }

    fn control_text_contains(log: &Path, text: &str) -> bool {
        log_text(log)
            .lines()
            .any(|l| l.starts_with("text 102 ") && l.contains(text))
    }

    fn wait_until(mut done: impl FnMut() -> bool, what: &str) {
        let started = Instant::now();
        while !done() {
            assert!(
                started.elapsed() < Duration::from_secs(20),
                "never happened: {what}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn wait_for(mut done: impl FnMut() -> bool, what: &str, log: &Path) {
        let started = Instant::now();
        while !done() {
            assert!(
                started.elapsed() < Duration::from_secs(20),
                "never happened: {what}; the app logged:\n{}",
                log_text(log)
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    async fn ok_gate(client: &Client, args: Value, tool: &str) -> Value {
        let gate = ok(client, tool, args).await;
        assert_eq!(
            (&gate["ok"], &gate["needs_permission"]),
            (&json!(false), &json!(true)),
            "{gate}"
        );
        assert!(
            gate["hint"]
                .as_str()
                .unwrap()
                .starts_with("Show this to the user.")
        );
        gate
    }

    fn assert_pixels_vary(png_base64: &str, report: &Value) {
        use base64::Engine;
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(png_base64)
            .unwrap();
        let mut reader = png::Decoder::new(std::io::Cursor::new(bytes))
            .read_info()
            .unwrap();
        let mut buf = vec![0; reader.output_buffer_size().unwrap()];
        let info = reader.next_frame(&mut buf).unwrap();
        let pixels: Vec<&[u8]> = buf[..info.buffer_size()].chunks(3).collect();
        assert!(
            pixels.iter().any(|p| *p != pixels[0]),
            "one colour: {report}"
        );
        // The red band the app paints is in the picture.
        assert!(
            pixels.iter().any(|p| p[0] > 200 && p[1] < 60 && p[2] < 60),
            "no red band: {report}"
        );
    }

    /// `windows()` and a message click through MCP, as the README reports
    /// them (median and 90th percentile; printed, never asserted).
    async fn bench(client: &Client, main: i64) {
        async fn time(client: &Client, tool: &str, args: Value) -> Vec<f64> {
            let mut runs = Vec::new();
            for _ in 0..40 {
                let started = Instant::now();
                ok(client, tool, args.clone()).await;
                runs.push(started.elapsed().as_secs_f64() * 1000.0);
            }
            runs.sort_by(|a, b| a.total_cmp(b));
            runs
        }
        for (tool, args) in [
            ("windows", json!({})),
            ("click", json!({"hwnd": main, "target": "id:101"})),
        ] {
            let runs = time(client, tool, args).await;
            println!(
                "bench {tool}: median {:.2} ms, p90 {:.2} ms (40 calls over stdio)",
                runs[runs.len() / 2],
                runs[runs.len() * 9 / 10]
            );
        }
    }

    /// The test application.
    mod app {
        use std::io::Write;
        use std::path::{Path, PathBuf};
        use std::sync::OnceLock;
        use std::sync::atomic::{AtomicIsize, Ordering};
        use windows_sys::Win32::Foundation::{HWND, LPARAM, LRESULT, RECT, WPARAM};
        use windows_sys::Win32::Graphics::Gdi::{
            BeginPaint, CreateSolidBrush, DeleteObject, EndPaint, FillRect, HDC, PAINTSTRUCT,
        };
        use windows_sys::Win32::Storage::FileSystem::GetFileType;
        use windows_sys::Win32::System::Console::{GetStdHandle, STD_OUTPUT_HANDLE};
        use windows_sys::Win32::System::LibraryLoader::GetModuleHandleW;
        use windows_sys::Win32::UI::Input::KeyboardAndMouse::{EnableWindow, SetFocus};
        use windows_sys::Win32::UI::WindowsAndMessaging::*;

        static LOG: OnceLock<PathBuf> = OnceLock::new();
        /// The main window, whose closing ends the program.
        static MAIN: AtomicIsize = AtomicIsize::new(0);

        fn log(line: &str) {
            let mut file = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(LOG.get().unwrap())
                .unwrap();
            writeln!(file, "{line}").unwrap();
        }

        fn wide(s: &str) -> Vec<u16> {
            s.encode_utf16().chain(Some(0)).collect()
        }

        fn paint_bands(dc: HDC, width: i32, height: i32) {
            for (i, colour) in [0x0000_00FFu32, 0x0000_FF00, 0x00FF_0000]
                .into_iter()
                .enumerate()
            {
                let band = RECT {
                    left: 0,
                    top: 200 + i as i32 * 20,
                    right: width,
                    bottom: (220 + i as i32 * 20).min(height),
                };
                // SAFETY: the brush is made here, used on the caller's paint
                // DC and deleted once; `band` outlives FillRect.
                unsafe {
                    let brush = CreateSolidBrush(colour);
                    FillRect(dc, &band, brush);
                    DeleteObject(brush);
                }
            }
        }

        fn edit_text(edit: HWND) -> String {
            let mut buf = vec![0u16; 4096];
            // SAFETY: the call writes at most `buf.len()` u16s into `buf`.
            let n = unsafe { GetWindowTextW(edit, buf.as_mut_ptr(), buf.len() as i32) };
            String::from_utf16_lossy(&buf[..n.max(0) as usize])
        }

        unsafe extern "system" fn window_proc(
            hwnd: HWND,
            msg: u32,
            wparam: WPARAM,
            lparam: LPARAM,
        ) -> LRESULT {
            // SAFETY: the system calls this with its own arguments: for
            // WM_COMMAND `lparam` is the control's handle, for WM_PRINTCLIENT
            // `wparam` is a DC to draw on. PAINTSTRUCT and RECT are plain data
            // (valid zeroed) that the calls fill; BeginPaint is paired with
            // EndPaint; any other message goes to DefWindowProcW unchanged.
            unsafe {
                match msg {
                    WM_COMMAND => {
                        let (id, code) = (wparam & 0xFFFF, (wparam >> 16) & 0xFFFF);
                        match code as u32 {
                            0 => {
                                log(&format!("clicked {id}"));
                                match id {
                                    107 => modal_dialog(hwnd),
                                    1 => {
                                        DestroyWindow(hwnd);
                                    }
                                    _ => {}
                                }
                            }
                            // STN_DBLCLK, from the label (SS_NOTIFY).
                            1 => log(&format!("double {id}")),
                            0x300 => {
                                log(&format!("changed {id}"));
                                if id != 104 {
                                    log(&format!("text {id} {}", edit_text(lparam as HWND)));
                                }
                            }
                            _ => {}
                        }
                        0
                    }
                    // Typing goes to the edit, as in a form with one field.
                    WM_SETFOCUS => {
                        SetFocus(GetDlgItem(hwnd, 102));
                        0
                    }
                    WM_LBUTTONDOWN => {
                        log("pointer");
                        0
                    }
                    // A right click's menu request, passed up by the label.
                    WM_CONTEXTMENU => {
                        log("context menu");
                        0
                    }
                    WM_PAINT => {
                        let mut ps: PAINTSTRUCT = std::mem::zeroed();
                        let dc = BeginPaint(hwnd, &mut ps);
                        let mut r: RECT = std::mem::zeroed();
                        GetClientRect(hwnd, &mut r);
                        paint_bands(dc, r.right, r.bottom);
                        EndPaint(hwnd, &ps);
                        0
                    }
                    WM_PRINTCLIENT => {
                        let mut r: RECT = std::mem::zeroed();
                        GetClientRect(hwnd, &mut r);
                        paint_bands(wparam as HDC, r.right, r.bottom);
                        0
                    }
                    WM_TIMER if wparam == 1 || wparam == 2 => {
                        SetForegroundWindow(hwnd);
                        KillTimer(hwnd, wparam);
                        0
                    }
                    WM_TIMER => {
                        PostQuitMessage(0);
                        0
                    }
                    WM_DESTROY if hwnd as isize == MAIN.load(Ordering::SeqCst) => {
                        PostQuitMessage(0);
                        0
                    }
                    _ => DefWindowProcW(hwnd, msg, wparam, lparam),
                }
            }
        }

        /// What a modal dialog does, without taking the foreground (Wine
        /// has no foreground lock to stop a background program's dialog):
        /// the owner is disabled and the click that opened the dialog is
        /// handled only when it closes, so `BM_CLICK` is answered late.
        unsafe fn modal_dialog(owner: HWND) {
            // SAFETY: the class is this program's, registered before the
            // main window; every string is alive for the call that reads
            // it; MSG is plain data the loop fills.
            unsafe {
                let instance = GetModuleHandleW(std::ptr::null());
                let dialog = CreateWindowExW(
                    WS_EX_NOACTIVATE,
                    wide("WamcpTestApp").as_ptr(),
                    wide("Test Dialog").as_ptr(),
                    // No caption: Wine on a display without a window
                    // manager waits 2 s for a captioned window to be
                    // withdrawn when it is destroyed.
                    WS_POPUP | WS_BORDER,
                    700,
                    300,
                    220,
                    120,
                    owner,
                    std::ptr::null_mut(),
                    instance,
                    std::ptr::null(),
                );
                CreateWindowExW(
                    0,
                    wide("BUTTON").as_ptr(),
                    wide("OK").as_ptr(),
                    WS_CHILD | WS_VISIBLE | BS_PUSHBUTTON as u32,
                    10,
                    10,
                    80,
                    26,
                    dialog,
                    1 as _,
                    instance,
                    std::ptr::null(),
                );
                ShowWindow(dialog, SW_SHOWNOACTIVATE);
                EnableWindow(owner, 0);
                let mut msg: MSG = std::mem::zeroed();
                while IsWindow(dialog) != 0 {
                    if GetMessageW(&mut msg, std::ptr::null_mut(), 0, 0) <= 0 {
                        PostQuitMessage(0);
                        break;
                    }
                    TranslateMessage(&msg);
                    DispatchMessageW(&msg);
                }
                EnableWindow(owner, 1);
                log("dialog closed");
            }
        }

        pub fn run(log_path: &Path, title: &str, mode: &str) {
            LOG.set(log_path.to_path_buf()).unwrap();
            // What a console program started by open_app writes to: its own
            // console (2), never the server's pipe (3).
            // SAFETY: this process's standard output handle, only queried.
            let stdout_type = unsafe { GetFileType(GetStdHandle(STD_OUTPUT_HANDLE)) };
            log(&format!("stdout {stdout_type}"));
            // SAFETY: a null module name asks for this program's own module.
            // WNDCLASSW and MSG are integers, nullable pointers and an
            // optional function (valid zeroed); `window_proc` has the
            // window procedure's signature. Every class name and title is a
            // NUL-terminated string alive for the call that reads it.
            unsafe {
                let instance = GetModuleHandleW(std::ptr::null());
                let class = wide("WamcpTestApp");
                let mut wc: WNDCLASSW = std::mem::zeroed();
                wc.lpfnWndProc = Some(window_proc);
                wc.hInstance = instance;
                wc.lpszClassName = class.as_ptr();
                wc.hbrBackground = 6 as _; // COLOR_WINDOW + 1
                RegisterClassW(&wc);
                // Apart from each other, so no test window covers another.
                let x = 20 + (std::process::id() % 7) as i32 * 90;
                // "cover": a topmost window over the whole screen.
                let (ex_style, style, rect) = match mode {
                    "cover" => (WS_EX_TOPMOST, WS_POPUP, [0, 0, 1280, 1024]),
                    _ => (0, WS_OVERLAPPEDWINDOW, [x, 40, 480, 320]),
                };
                let main = CreateWindowExW(
                    ex_style,
                    class.as_ptr(),
                    wide(title).as_ptr(),
                    style,
                    rect[0],
                    rect[1],
                    rect[2],
                    rect[3],
                    std::ptr::null_mut(),
                    std::ptr::null_mut(),
                    instance,
                    std::ptr::null(),
                );
                let child = |class: &str, text: &str, style: u32, id: usize, rect: [i32; 4]| {
                    CreateWindowExW(
                        0,
                        wide(class).as_ptr(),
                        wide(text).as_ptr(),
                        WS_CHILD | WS_VISIBLE | style,
                        rect[0],
                        rect[1],
                        rect[2],
                        rect[3],
                        main,
                        id as _,
                        instance,
                        std::ptr::null(),
                    );
                };
                child(
                    "BUTTON",
                    "Click Me",
                    BS_PUSHBUTTON as u32,
                    101,
                    [10, 10, 100, 26],
                );
                child(
                    "EDIT",
                    "",
                    WS_BORDER | ES_AUTOHSCROLL as u32,
                    102,
                    [120, 10, 200, 24],
                );
                child(
                    "BUTTON",
                    "Check me",
                    BS_AUTOCHECKBOX as u32,
                    103,
                    [10, 46, 120, 24],
                );
                child(
                    "EDIT",
                    "",
                    WS_BORDER | ES_PASSWORD as u32,
                    104,
                    [140, 46, 120, 24],
                );
                child(
                    "STATIC",
                    "Label",
                    0x100, /* SS_NOTIFY */
                    105,
                    [10, 80, 80, 20],
                );
                child(
                    "BUTTON",
                    "Open Dialog",
                    BS_PUSHBUTTON as u32,
                    107,
                    [10, 110, 100, 26],
                );
                let lines: String = (1..=60).map(|i| format!("line {i}\r\n")).collect();
                child(
                    "EDIT",
                    &lines,
                    WS_BORDER | WS_VSCROLL | ES_MULTILINE as u32 | ES_AUTOVSCROLL as u32,
                    106,
                    [120, 80, 200, 100],
                );
                let hidden = CreateWindowExW(
                    0,
                    class.as_ptr(),
                    wide("Hidden Tool").as_ptr(),
                    WS_OVERLAPPEDWINDOW,
                    600,
                    600,
                    200,
                    100,
                    std::ptr::null_mut(),
                    std::ptr::null_mut(),
                    instance,
                    std::ptr::null(),
                );
                MAIN.store(main as isize, Ordering::SeqCst);
                ShowWindow(main, SW_SHOWDEFAULT);
                log(&format!("ready {} {}", main as isize, hidden as isize));
                // Ends on its own, so a failed run leaves nothing behind.
                SetTimer(main, 3, 120_000, None);
                match mode {
                    "grab" => {
                        SetTimer(main, 1, 150, None);
                        SetTimer(main, 2, 500, None);
                    }
                    "hung" => {
                        std::thread::sleep(std::time::Duration::from_secs(120));
                        return;
                    }
                    _ => {}
                }
                let mut msg: MSG = std::mem::zeroed();
                while GetMessageW(&mut msg, std::ptr::null_mut(), 0, 0) > 0 {
                    TranslateMessage(&msg);
                    DispatchMessageW(&msg);
                }
            }
        }
    }
}
