//! UWP apps draw into a content window of their own process
//! (`Windows.UI.Core.CoreWindow`), which Windows shows inside a frame
//! window (`ApplicationFrameWindow`) owned by `ApplicationFrameHost.exe`,
//! one host process for every such app. Judged by the frame's owner, every
//! UWP app would be the same program, and none would be the one the user
//! listed; so a frame counts as the app whose content it holds.

/// The class of the frame `ApplicationFrameHost.exe` puts around an app.
pub const FRAME_CLASS: &str = "ApplicationFrameWindow";
/// The class of a UWP app's own content window.
pub const CONTENT_CLASS: &str = "Windows.UI.Core.CoreWindow";

/// The process a top-level window stands for: for a UWP frame, the one
/// process other than the host that owns the content windows among its
/// direct `children` (class, process); otherwise `None`, and the window is
/// its own owner's. A frame without content (the app is starting,
/// minimised or suspended, and Windows moved its content out) stays the
/// host's, which no one lists. So does a frame holding content of two
/// processes: any program can make its window a child of another's, and a
/// program in scope must not make an app's frame count as its own.
pub fn content_owner(class: &str, frame_pid: u32, children: &[(String, u32)]) -> Option<u32> {
    if class != FRAME_CLASS {
        return None;
    }
    let mut owners = children
        .iter()
        .filter(|(class, _)| class == CONTENT_CLASS)
        .map(|&(_, pid)| pid);
    let first = owners.next()?;
    let one_app = first != frame_pid && first != 0 && owners.all(|pid| pid == first);
    one_app.then_some(first)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn child(class: &str, pid: u32) -> (String, u32) {
        (class.to_string(), pid)
    }

    #[test]
    fn a_frame_stands_for_the_app_whose_content_it_holds() {
        let children = [
            child("ApplicationFrameTitleBarWindow", 7),
            child("ApplicationFrameInputSinkWindow", 7),
            child(CONTENT_CLASS, 42),
        ];
        assert_eq!(content_owner(FRAME_CLASS, 7, &children), Some(42));
    }

    #[test]
    fn everything_else_is_its_own_owners() {
        let content = [child(CONTENT_CLASS, 42)];
        type Case<'a> = (&'a str, u32, &'a [(String, u32)]);
        let cases: [Case; 5] = [
            // A classic window whose child happens to be a content window.
            ("Notepad", 7, &content),
            // A frame without content (minimised or suspended app).
            (FRAME_CLASS, 7, &[]),
            (
                FRAME_CLASS,
                7,
                &[child("ApplicationFrameTitleBarWindow", 7)],
            ),
            // Content of the host itself, or of no process, is no app's.
            (FRAME_CLASS, 7, &[child(CONTENT_CLASS, 7)]),
            (FRAME_CLASS, 7, &[child(CONTENT_CLASS, 0)]),
        ];
        for (class, pid, children) in cases {
            assert_eq!(
                content_owner(class, pid, children),
                None,
                "{class} {children:?}"
            );
        }
    }

    #[test]
    fn content_of_two_programs_makes_the_frame_no_ones() {
        // A program embeds a window of the content class into another
        // app's frame, ahead of the app's own content, or after it.
        for children in [
            [child(CONTENT_CLASS, 66), child(CONTENT_CLASS, 42)],
            [child(CONTENT_CLASS, 42), child(CONTENT_CLASS, 66)],
            [child(CONTENT_CLASS, 42), child(CONTENT_CLASS, 7)],
        ] {
            assert_eq!(
                content_owner(FRAME_CLASS, 7, &children),
                None,
                "{children:?}"
            );
        }
        let same_app = [child(CONTENT_CLASS, 42), child(CONTENT_CLASS, 42)];
        assert_eq!(content_owner(FRAME_CLASS, 7, &same_app), Some(42));
    }

    #[test]
    fn class_names_are_matched_as_windows_reports_them() {
        let children = [child("windows.ui.core.corewindow", 42)];
        assert_eq!(content_owner(FRAME_CLASS, 7, &children), None);
        let content = [child(CONTENT_CLASS, 42)];
        assert_eq!(content_owner("applicationframewindow", 7, &content), None);
    }
}
