//! The command tokenizer on arbitrary text: never a panic, never an argument
//! that smuggles a NUL or a bidi control, and the canonical PowerShell
//! serialisation of accepted arguments tokenises back to the same argv.
#![no_main]

use libfuzzer_sys::fuzz_target;
use wamcp_policy::command::tokenize::{to_powershell, tokenize};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(args) = tokenize(text) else { return };
    for arg in &args {
        assert!(!arg.text.contains('\0'));
        assert!(!arg.text.contains(['\u{202E}', '\u{200B}', '\u{FEFF}']));
    }
    // The PowerShell path is only used for cmdlets, whose names are ASCII.
    let cmdlet_like = args.first().is_some_and(|a| {
        a.text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-')
    });
    if cmdlet_like {
        let serialised = to_powershell(&args);
        let again = tokenize(&serialised).unwrap_or_else(|e| panic!("{serialised:?} refused: {e}"));
        let texts = |a: &[wamcp_policy::command::tokenize::Arg]| {
            a.iter().map(|x| x.text.clone()).collect::<Vec<_>>()
        };
        assert_eq!(texts(&again), texts(&args), "{serialised:?}");
    }
});
