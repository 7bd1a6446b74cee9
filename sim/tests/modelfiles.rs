//! The simulator's model reader judges the repository's model-file fixtures
//! (tests/fixtures/modelfiles) as the Python schema does: every file in
//! `valid/` read, every file in `invalid/` refused with an input error.

use commchar_sim::params::{call_costs_from_model, from_model};
use commchar_sim::SimError;
use std::path::PathBuf;

fn fixtures(kind: &str) -> Vec<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures/modelfiles")
        .join(kind);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.expect("directory entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    files
}

/// Both parts of the model the simulator reads: the loggp parameters and the call costs.
fn read(path: &PathBuf) -> Result<(), SimError> {
    let text = std::fs::read_to_string(path).expect("fixture readable");
    let name = path.display().to_string();
    from_model(&text, &name, Some("lib"))?;
    call_costs_from_model(&text, &name, Some("lib"))?;
    Ok(())
}

#[test]
fn valid_model_files_are_read() {
    let files = fixtures("valid");
    assert!(files.len() >= 4, "valid fixtures missing");
    for path in files {
        if let Err(e) = read(&path) {
            panic!("{} refused: {e}", path.display());
        }
    }
}

#[test]
fn invalid_model_files_are_refused_as_input_errors() {
    let files = fixtures("invalid");
    assert!(files.len() >= 30, "invalid fixtures missing");
    for path in files {
        match read(&path) {
            Err(SimError::Input(message)) => assert!(message.contains(&path.display().to_string())),
            other => panic!("{}: expected an input error, got {other:?}", path.display()),
        }
    }
}
