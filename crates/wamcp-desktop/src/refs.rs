//! Refs: short numbers for accessibility elements, so the next call can
//! name the element `see` showed (`#12`) instead of repeating a caption
//! that may not be unique, or that an element has none of.
//!
//! A ref stands for the element's UI Automation runtime id, which the
//! provider keeps while the element lives. Numbers are never given twice
//! in one window: a ref whose element went away can only be stale, never
//! quietly name another element.

use std::collections::HashMap;

/// Most elements remembered per window; past it the window's refs start
/// over (from a higher number), and older refs ask for a new look.
const MAX_PER_WINDOW: usize = 20_000;
/// Most windows remembered; the one looked at longest ago is forgotten.
const MAX_WINDOWS: usize = 64;

/// The refs given so far, per window.
#[derive(Default)]
pub struct Refs {
    /// Windows by handle, the one named most recently last.
    windows: Vec<(isize, WindowRefs)>,
}

#[derive(Default)]
struct WindowRefs {
    next: u32,
    by_id: HashMap<Vec<i32>, u32>,
    by_ref: HashMap<u32, Vec<i32>>,
}

impl WindowRefs {
    fn name(&mut self, id: &[i32]) -> u32 {
        if let Some(&known) = self.by_id.get(id) {
            return known;
        }
        if self.by_id.len() >= MAX_PER_WINDOW {
            self.by_id.clear();
            self.by_ref.clear();
        }
        self.next += 1;
        self.by_id.insert(id.to_vec(), self.next);
        self.by_ref.insert(self.next, id.to_vec());
        self.next
    }
}

impl Refs {
    /// The ref of each runtime id in `ids` under `hwnd` (the same one it
    /// had before, or a new one); `None` for an element without an id.
    pub fn name<'a>(
        &mut self,
        hwnd: isize,
        ids: impl IntoIterator<Item = &'a [i32]>,
    ) -> Vec<Option<u32>> {
        let window = self.window(hwnd);
        ids.into_iter()
            .map(|id| (!id.is_empty()).then(|| window.name(id)))
            .collect()
    }

    /// The runtime id `reference` stands for under `hwnd`, when it was given
    /// there and is still remembered.
    pub fn element(&self, hwnd: isize, reference: u32) -> Option<Vec<i32>> {
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

    fn ids(list: &[&[i32]]) -> Vec<Vec<i32>> {
        list.iter().map(|id| id.to_vec()).collect()
    }

    fn name(refs: &mut Refs, hwnd: isize, list: &[Vec<i32>]) -> Vec<Option<u32>> {
        refs.name(hwnd, list.iter().map(Vec::as_slice))
    }

    #[test]
    fn an_element_keeps_its_ref_across_looks() {
        let mut refs = Refs::default();
        let first = name(&mut refs, 1, &ids(&[&[42, 1], &[42, 2], &[]]));
        assert_eq!(first, [Some(1), Some(2), None]);
        let again = name(&mut refs, 1, &ids(&[&[42, 3], &[42, 2]]));
        assert_eq!(again, [Some(3), Some(2)]);
        assert_eq!(refs.element(1, 2), Some(vec![42, 2]));
        // Another window numbers its own elements.
        assert_eq!(name(&mut refs, 7, &ids(&[&[42, 2]])), [Some(1)]);
        assert_eq!(refs.element(7, 3), None);
    }

    #[test]
    fn numbers_are_never_given_twice_even_after_starting_over() {
        let mut refs = Refs::default();
        let many: Vec<Vec<i32>> = (0..MAX_PER_WINDOW as i32).map(|i| vec![i]).collect();
        name(&mut refs, 1, &many);
        assert_eq!(refs.element(1, 1), Some(vec![0]));
        // The window is full: its old refs are forgotten, not reused.
        let next = name(&mut refs, 1, &ids(&[&[-1]]));
        assert_eq!(next, [Some(MAX_PER_WINDOW as u32 + 1)]);
        assert_eq!(refs.element(1, 1), None);
    }

    #[test]
    fn the_window_looked_at_longest_ago_is_forgotten() {
        let mut refs = Refs::default();
        for hwnd in 0..MAX_WINDOWS as isize {
            name(&mut refs, hwnd, &ids(&[&[1]]));
        }
        // Window 0 is looked at again, so window 1 is the oldest.
        name(&mut refs, 0, &ids(&[&[1]]));
        name(&mut refs, 1000, &ids(&[&[1]]));
        assert_eq!(refs.element(0, 1), Some(vec![1]));
        assert_eq!(refs.element(1, 1), None);
        assert_eq!(refs.element(1000, 1), Some(vec![1]));
    }
}
