//! What a program reading its command line in the ANSI code page receives
//! for a character: Windows converts with best-fit tables, so a look-alike
//! can arrive as the ASCII it resembles (see the policy crate's `best_fit`).

/// The single ASCII byte the best-fit conversion to this machine's ANSI
/// code page makes of non-ASCII `c`, if it makes one. `None` for ASCII,
/// off Windows, when the code page is UTF-8 (the conversion is exact), when
/// the code page holds `c` as itself, and when it cannot hold it at all.
pub fn best_fit_ascii(c: char) -> Option<u8> {
    if c.is_ascii() {
        return None;
    }
    imp::best_fit_ascii(c)
}

#[cfg(windows)]
mod imp {
    use windows_sys::Win32::Globalization::{CP_ACP, GetACP, WideCharToMultiByte};

    const UTF8_CODE_PAGE: u32 = 65001;

    pub fn best_fit_ascii(c: char) -> Option<u8> {
        // SAFETY: no arguments; it reads the process's code page.
        if unsafe { GetACP() } == UTF8_CODE_PAGE {
            return None;
        }
        let mut wide = [0u16; 2];
        let wide = c.encode_utf16(&mut wide);
        let mut out = [0u8; 8];
        // The flag, not the byte, says whether the default stood in for an
        // unrepresentable character (the program itself would see '?').
        let default = [0x7fu8, 0];
        let mut used_default = 0i32;
        // SAFETY: the buffers are valid for the lengths given; flags 0
        // allows best fit, which is what an ANSI program gets.
        let written = unsafe {
            WideCharToMultiByte(
                CP_ACP,
                0,
                wide.as_ptr(),
                wide.len() as i32,
                out.as_mut_ptr(),
                out.len() as i32,
                default.as_ptr(),
                &mut used_default,
            )
        };
        (written == 1 && used_default == 0 && out[0].is_ascii()).then_some(out[0])
    }
}

#[cfg(not(windows))]
mod imp {
    pub fn best_fit_ascii(_c: char) -> Option<u8> {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ascii_and_other_hosts_have_no_best_fit() {
        assert_eq!(best_fit_ascii('"'), None);
        assert_eq!(best_fit_ascii('a'), None);
        if !cfg!(windows) {
            assert_eq!(best_fit_ascii('\u{FF02}'), None);
        }
    }

    /// Wine ships Windows' best-fit tables for its default code page (1252).
    #[cfg(windows)]
    #[test]
    fn look_alikes_become_ascii_in_a_legacy_code_page() {
        use windows_sys::Win32::Globalization::GetACP;
        // SAFETY: takes no arguments and only reads the process's code page.
        if unsafe { GetACP() } == 65001 {
            // Straight to stderr: the harness swallows passing tests' output.
            let _ = std::io::Write::write_all(
                &mut std::io::stderr(),
                b"\n!!! SKIPPED best-fit check: the ANSI code page is UTF-8, which converts exactly !!!\n",
            );
            return;
        }
        assert_eq!(best_fit_ascii('\u{FF02}'), Some(b'"'));
        assert_eq!(best_fit_ascii('\u{FF3C}'), Some(b'\\'));
        assert_eq!(best_fit_ascii('é'), None, "held exactly");
        assert_eq!(best_fit_ascii('修'), None, "not held at all");
    }
}
