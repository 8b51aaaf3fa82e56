//! Commands: the one parser between a model's command string and a process.
//!
//! A guard that checks a string and then hands the same string to a shell
//! has two parsers that can disagree, which is where bypasses live (smart
//! quotes, backticks, grouping, `--%`...). Here the string is tokenised once,
//! following PowerShell's argument-mode rules, into argv; anything PowerShell
//! would evaluate rather than pass literally is refused; and what runs is the
//! checked argv (re-serialised canonically when it must go through
//! PowerShell), never the original text.

pub mod approvals;
pub mod best_fit;
pub mod command_line;
pub mod drivers;
pub mod effects;
pub mod filter;
pub mod grammar;
pub mod hardening;
pub mod line;
pub mod payload;
pub mod posture;
pub mod push;
pub mod rules;
pub mod sandbox;
pub mod self_test;
pub mod shell_line;
pub mod spec;
pub mod token_plan;
pub mod tokenize;
pub mod wildcard;
