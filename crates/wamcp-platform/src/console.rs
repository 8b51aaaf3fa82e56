//! Decoding a child's output when it is not UTF-8.
//!
//! On Windows a console program writes in the console's code page (the OEM
//! code page for the hidden console a windowless child gets): MSVC's `cl`
//! in a German or Japanese install prints its messages that way. Decoding
//! them as UTF-8 would turn every accented letter into U+FFFD. Elsewhere
//! there is no such convention, and lossy UTF-8 is the honest answer.

/// The text and the code page it was decoded with, or `None` when there is
/// no console code page to try (not Windows) or the bytes are not valid in
/// it.
pub fn decode_console(bytes: &[u8]) -> Option<(String, u32)> {
    imp::decode(bytes)
}

#[cfg(windows)]
mod imp {
    use windows_sys::Win32::Globalization::{GetOEMCP, MB_ERR_INVALID_CHARS, MultiByteToWideChar};

    pub fn decode(bytes: &[u8]) -> Option<(String, u32)> {
        if bytes.is_empty() || bytes.len() > i32::MAX as usize {
            return None;
        }
        // SAFETY: the buffers and lengths passed match; the first call only
        // measures, the second writes at most `needed` UTF-16 units.
        unsafe {
            let code_page = GetOEMCP();
            let needed = MultiByteToWideChar(
                code_page,
                MB_ERR_INVALID_CHARS,
                bytes.as_ptr(),
                bytes.len() as i32,
                std::ptr::null_mut(),
                0,
            );
            if needed <= 0 {
                return None;
            }
            let mut wide = vec![0u16; needed as usize];
            let written = MultiByteToWideChar(
                code_page,
                MB_ERR_INVALID_CHARS,
                bytes.as_ptr(),
                bytes.len() as i32,
                wide.as_mut_ptr(),
                needed,
            );
            if written <= 0 {
                return None;
            }
            wide.truncate(written as usize);
            Some((String::from_utf16_lossy(&wide), code_page))
        }
    }
}

#[cfg(not(windows))]
mod imp {
    pub fn decode(_bytes: &[u8]) -> Option<(String, u32)> {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn console_bytes_decode_on_windows_only() {
        // "Fehler: Datei nicht gefunden (ü)" with ü in code page 437/850.
        let bytes = b"Fehler: Datei nicht gefunden (\x81)";
        let decoded = decode_console(bytes);
        assert_eq!(decoded.is_some(), cfg!(windows), "{decoded:?}");
        match decoded {
            Some((text, 437 | 850)) => assert_eq!(text, "Fehler: Datei nicht gefunden (ü)"),
            Some((text, _)) => assert!(text.starts_with("Fehler: Datei")),
            None => {}
        }
    }
}
