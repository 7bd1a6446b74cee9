//! The simulator's error type: everything a user can get wrong is a `SimError`.

use std::fmt;

/// A failure caused by user input (flags, files, parameters) or by a schedule
/// that cannot finish. Broken internal invariants panic instead.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SimError {
    /// A bad flag value, parameter or combination of options.
    Usage(String),
    /// A file that cannot be read or does not have the expected content.
    Input(String),
    /// The schedule stopped with operations that can never complete.
    Deadlock(String),
}

impl SimError {
    /// Process exit code: 2 for usage errors, 3 for input errors, 4 for a deadlocked schedule.
    pub fn exit_code(&self) -> i32 {
        match self {
            SimError::Usage(_) => 2,
            SimError::Input(_) => 3,
            SimError::Deadlock(_) => 4,
        }
    }
}

impl fmt::Display for SimError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SimError::Usage(m) | SimError::Input(m) => write!(f, "{m}"),
            SimError::Deadlock(m) => write!(f, "deadlock: {m}"),
        }
    }
}

impl std::error::Error for SimError {}

pub type Result<T> = std::result::Result<T, SimError>;

pub(crate) fn usage<T>(msg: impl Into<String>) -> Result<T> {
    Err(SimError::Usage(msg.into()))
}

pub(crate) fn input<T>(msg: impl Into<String>) -> Result<T> {
    Err(SimError::Input(msg.into()))
}
