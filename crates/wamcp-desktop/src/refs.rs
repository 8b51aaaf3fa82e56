//! Refs: short numbers for accessibility elements, so the next call can
//! name the element `see` showed (`#12`) instead of repeating a caption
//! that may not be unique, or that an element has none of.
//!
//! A ref stands for the element's UI Automation runtime id, which the
//! provider keeps while the element lives. Numbers are never given twice
//! in one window: a ref whose element went away can only be stale, never
//! quietly name another element.

use crate::accessibility::Node;
use std::collections::HashMap;

/// Most elements remembered per window; past it the window's refs are
/// forgotten, and older refs ask for a new look.
const MAX_PER_WINDOW: usize = 20_000;
/// Most windows remembered; the one looked at longest ago is forgotten.
const MAX_WINDOWS: usize = 64;

/// What a ref stands for: the element's runtime id, and what must still
/// be true of an element found by that id for it to be the same one (a
/// provider may give a freed runtime id to a new element; a window handle
/// may come back as another program's window).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Fingerprint {
    runtime: Vec<i32>,
    pid: u32,
    control_type: String,
}

impl Fingerprint {
    /// The element's fingerprint; `None` without a runtime id (no ref).
    pub fn of(node: &Node) -> Option<Fingerprint> {
        (!node.id.is_empty()).then(|| Fingerprint {
            runtime: node.id.clone(),
            pid: node.pid,
            control_type: node.control_type.clone(),
        })
    }

    /// Whether `node` is the element this stands for.
    pub fn matches(&self, node: &Node) -> bool {
        Fingerprint::of(node).as_ref() == Some(self)
    }
}

/// The refs given so far, per window, numbered by one counter for the
/// whole server: a ref from another window, or from before a window was
/// forgotten, is never a valid ref of this one.
#[derive(Default)]
pub struct Refs {
    last: u32,
    /// Windows by handle, the one named most recently last.
    windows: Vec<(isize, WindowRefs)>,
}

#[derive(Default)]
struct WindowRefs {
    by_print: HashMap<Fingerprint, u32>,
    by_ref: HashMap<u32, Fingerprint>,
}

impl Refs {
    /// The ref of each element under `hwnd` (the one it had before, or a
    /// new one); `None` where there is no fingerprint.
    pub fn name(
        &mut self,
        hwnd: isize,
        prints: impl IntoIterator<Item = Option<Fingerprint>>,
    ) -> Vec<Option<u32>> {
        let mut last = self.last;
        let window = self.window(hwnd);
        let named = prints
            .into_iter()
            .map(|print| {
                let print = print?;
                if let Some(&known) = window.by_print.get(&print) {
                    return Some(known);
                }
                if window.by_print.len() >= MAX_PER_WINDOW {
                    *window = WindowRefs::default();
                }
                last = last.saturating_add(1);
                window.by_print.insert(print.clone(), last);
                window.by_ref.insert(last, print);
                Some(last)
            })
            .collect();
        self.last = last;
        named
    }

    /// What `reference` stands for under `hwnd`, when it was given there
    /// and is still remembered.
    pub fn element(&self, hwnd: isize, reference: u32) -> Option<Fingerprint> {
        self.windows
            .iter()
            .find(|(h, _)| *h == hwnd)
            .and_then(|(_, w)| w.by_ref.get(&reference).cloned())
    }

    /// The window's refs, made the most recently used.
    fn window(&mut self, hwnd: isize) -> &mut WindowRefs {
        let refs = match self.windows.iter().position(|(h, _)| *h == hwnd) {
            Some(i) => self.windows.remove(i).1,
            None => {
                if self.windows.len() >= MAX_WINDOWS {
                    self.windows.remove(0);
                }
                WindowRefs::default()
            }
        };
        self.windows.push((hwnd, refs));
        &mut self.windows.last_mut().unwrap_or_else(|| unreachable!()).1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn print(id: i32) -> Option<Fingerprint> {
        Some(Fingerprint {
            runtime: vec![42, id],
            pid: 10,
            control_type: "Button".into(),
        })
    }

    fn name(refs: &mut Refs, hwnd: isize, ids: &[i32]) -> Vec<Option<u32>> {
        refs.name(hwnd, ids.iter().map(|&id| print(id)))
    }

    #[test]
    fn an_element_keeps_its_ref_across_looks() {
        let mut refs = Refs::default();
        let first = refs.name(1, [print(1), print(2), None]);
        assert_eq!(first, [Some(1), Some(2), None]);
        assert_eq!(name(&mut refs, 1, &[3, 2]), [Some(3), Some(2)]);
        assert_eq!(refs.element(1, 2), print(2));
    }

    #[test]
    fn a_ref_of_one_window_is_no_ref_of_another() {
        let mut refs = Refs::default();
        name(&mut refs, 1, &[1, 2]);
        // The other window's elements get numbers of their own.
        assert_eq!(name(&mut refs, 7, &[1]), [Some(3)]);
        assert_eq!(refs.element(7, 1), None);
        assert_eq!(refs.element(1, 3), None);
    }

    #[test]
    fn the_same_runtime_id_on_another_element_is_another_ref() {
        let mut refs = Refs::default();
        name(&mut refs, 1, &[1]);
        let mut reused = print(1).unwrap();
        reused.control_type = "ListItem".into();
        assert_eq!(refs.name(1, [Some(reused)]), [Some(2)]);
        let mut other_program = print(1).unwrap();
        other_program.pid = 20;
        assert_eq!(refs.name(1, [Some(other_program)]), [Some(3)]);
    }

    #[test]
    fn numbers_are_never_given_twice_even_after_starting_over() {
        let mut refs = Refs::default();
        let many: Vec<i32> = (0..MAX_PER_WINDOW as i32).collect();
        name(&mut refs, 1, &many);
        assert_eq!(refs.element(1, 1), print(0));
        // The window is full: its old refs are forgotten, not reused.
        let next = name(&mut refs, 1, &[-1]);
        assert_eq!(next, [Some(MAX_PER_WINDOW as u32 + 1)]);
        assert_eq!(refs.element(1, 1), None);
        assert_eq!(name(&mut refs, 1, &[0]), [Some(MAX_PER_WINDOW as u32 + 2)]);
    }

    #[test]
    fn a_forgotten_window_starts_from_higher_numbers() {
        let mut refs = Refs::default();
        for hwnd in 0..MAX_WINDOWS as isize {
            name(&mut refs, hwnd, &[1]);
        }
        // Window 0 is looked at again, so window 1 is the oldest.
        name(&mut refs, 0, &[1]);
        name(&mut refs, 1000, &[1]);
        assert_eq!(refs.element(0, 1), print(1));
        assert_eq!(refs.element(1, 2), None);
        // Looked at again, window 1's element gets a number never given.
        assert_eq!(name(&mut refs, 1, &[1]), [Some(MAX_WINDOWS as u32 + 2)]);
    }
}
