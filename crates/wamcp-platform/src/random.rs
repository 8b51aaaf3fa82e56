//! Unpredictable bytes from the operating system, for secrets such as the
//! HTTP transport's bearer token.

use std::io;

/// Fills `buffer` from the system's cryptographic generator.
pub fn fill(buffer: &mut [u8]) -> io::Result<()> {
    imp::fill(buffer)
}

#[cfg(unix)]
mod imp {
    use std::io::{self, Read};

    pub fn fill(buffer: &mut [u8]) -> io::Result<()> {
        std::fs::File::open("/dev/urandom")?.read_exact(buffer)
    }
}

#[cfg(windows)]
mod imp {
    use std::io;
    use windows_sys::Win32::Security::Cryptography::{
        BCRYPT_USE_SYSTEM_PREFERRED_RNG, BCryptGenRandom,
    };

    pub fn fill(buffer: &mut [u8]) -> io::Result<()> {
        for chunk in buffer.chunks_mut(u32::MAX as usize) {
            // SAFETY: the pointer and length describe `chunk`; no algorithm
            // handle is needed with the system-preferred generator.
            let status = unsafe {
                BCryptGenRandom(
                    std::ptr::null_mut(),
                    chunk.as_mut_ptr(),
                    chunk.len() as u32,
                    BCRYPT_USE_SYSTEM_PREFERRED_RNG,
                )
            };
            if status < 0 {
                return Err(io::Error::other(format!(
                    "BCryptGenRandom failed (status {status:#x})"
                )));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn two_draws_differ_and_fill_the_buffer() {
        let (mut a, mut b) = ([0u8; 32], [0u8; 32]);
        super::fill(&mut a).unwrap();
        super::fill(&mut b).unwrap();
        assert_ne!(a, b);
        assert_ne!(a, [0u8; 32]);
    }
}
