//! The self-test's probe for this crate's own tests, which have no wamcp
//! binary to start: the same body as `wamcp __confine-probe`.

use std::process::ExitCode;
use wamcp_exec::self_test::{PROBE, RealSystem, probe_main};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let args = match args.first().map(String::as_str) {
        Some(PROBE) => &args[1..],
        _ => &args[..],
    };
    match probe_main(args, &RealSystem) {
        Ok(report) => {
            print!("{report}");
            ExitCode::SUCCESS
        }
        Err(why) => {
            eprintln!("confine-probe: {why}");
            ExitCode::FAILURE
        }
    }
}
