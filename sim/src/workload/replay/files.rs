//! A trace directory's files: which ranks it holds, and each rank file's
//! header, read and checked before its records are replayed.
//!
//! A single run streams each file as it is replayed (`open`). A batch process
//! reads a trace's files once (`TraceFiles`) for all its requests: the
//! signatures listed for pricing and the priced replay that follows take
//! their records from memory instead of reading the files again.

use super::{i32_at, u32_at, u64_at, FINALIZED, HEADER_BYTES, MAGIC, RECORD_BYTES, VERSION};
use crate::error::{input, Result, SimError};
use std::io::Read;
use std::path::Path;

pub(super) struct Header {
    pub rank: i32,
    pub size: i32,
    pub t_init: u64,
    pub t_finalize: u64,
    pub records: u64,
    pub flags: u32,
    /// The tracer's own time per traced call outside the calls' spans (ps; 0 unknown).
    pub record_gap_ps: u32,
    /// ...and per COMPLETE record a wait or test writes after its span (ps; 0 unknown).
    pub complete_gap_ps: u32,
    /// ...and per blocking collective's wrapper (ps; 0 unknown: the wrapper's).
    pub collective_gap_ps: u32,
    /// The bytes of the distinct message buffers the rank used (0 unknown).
    pub buffer_bytes: u64,
    pub host: String,
    pub library: String,
}

/// One rank's file as the replay reads it: its name in messages, its length
/// in bytes, and its contents from the start.
pub(super) struct RankFile<R: Read> {
    pub shown: String,
    pub len: u64,
    pub reader: R,
}

/// The rank files of the directory `dir` (rank-<r>.cctrace for r from 0):
/// the directory as messages name it, and how many ranks.
pub(super) fn rank_count(dir: &Path) -> Result<(String, u32)> {
    let shown = dir.display().to_string();
    let entries = std::fs::read_dir(dir)
        .map_err(|e| SimError::Input(format!("cannot read trace directory {shown}: {e}")))?;
    let mut found: Vec<u32> = Vec::new();
    for e in entries.flatten() {
        let name = e.file_name();
        let name = name.to_string_lossy();
        if let Some(r) = name
            .strip_prefix("rank-")
            .and_then(|s| s.strip_suffix(".cctrace"))
        {
            match r.parse::<u32>() {
                Ok(r) => found.push(r),
                Err(_) => return input(format!("{shown}: unexpected trace file {name}")),
            }
        }
    }
    if found.is_empty() {
        return input(format!("{shown}: no rank-<r>.cctrace files"));
    }
    found.sort_unstable();
    let size = found.len() as u32;
    if let Some((i, _)) = found.iter().enumerate().find(|(i, &r)| r != *i as u32) {
        return input(format!(
            "{shown}: the trace of rank {i} is missing ({size} rank files)"
        ));
    }
    if size > crate::workload::MAX_RANKS {
        return input(format!("{shown}: too many ranks"));
    }
    Ok((shown, size))
}

/// Rank `rank`'s file of `dir`, to stream.
pub(super) fn open(dir: &Path, rank: u32) -> Result<RankFile<std::io::BufReader<std::fs::File>>> {
    let path = dir.join(format!("rank-{rank}.cctrace"));
    let shown = path.display().to_string();
    let file = std::fs::File::open(&path)
        .map_err(|e| SimError::Input(format!("cannot read {shown}: {e}")))?;
    let len = file
        .metadata()
        .map_err(|e| SimError::Input(format!("cannot read {shown}: {e}")))?
        .len();
    Ok(RankFile {
        shown,
        len,
        reader: std::io::BufReader::with_capacity(1 << 20, file),
    })
}

/// A trace directory read whole: each rank file's name and bytes.
pub struct TraceFiles {
    dir: String,
    files: Vec<(String, Vec<u8>)>,
}

impl TraceFiles {
    /// Reads every rank file of `dir`.
    pub fn read(dir: &Path) -> Result<TraceFiles> {
        let (shown, size) = rank_count(dir)?;
        let files = (0..size)
            .map(|rank| {
                let path = dir.join(format!("rank-{rank}.cctrace"));
                let shown = path.display().to_string();
                std::fs::read(&path)
                    .map(|bytes| (shown.clone(), bytes))
                    .map_err(|e| SimError::Input(format!("cannot read {shown}: {e}")))
            })
            .collect::<Result<_>>()?;
        Ok(TraceFiles { dir: shown, files })
    }

    /// The directory as messages name it.
    pub fn dir(&self) -> &str {
        &self.dir
    }

    pub fn ranks(&self) -> u32 {
        self.files.len() as u32
    }

    pub(super) fn rank(&self, rank: u32) -> RankFile<&[u8]> {
        let (shown, bytes) = &self.files[rank as usize];
        RankFile {
            shown: shown.clone(),
            len: bytes.len() as u64,
            reader: bytes.as_slice(),
        }
    }
}

/// The header of a rank file of `len` bytes read from `file`, and how many
/// records follow it; a file cut short or corrupt is refused.
pub(super) fn read_header<R: Read>(shown: &str, len: u64, file: &mut R) -> Result<(Header, u64)> {
    let mut h = [0u8; HEADER_BYTES];
    if len < HEADER_BYTES as u64 {
        return input(format!(
            "{shown}: truncated ({len} bytes, shorter than the {HEADER_BYTES}-byte header)"
        ));
    }
    file.read_exact(&mut h)
        .map_err(|e| SimError::Input(format!("cannot read {shown}: {e}")))?;
    if &h[0..8] != MAGIC {
        return input(format!("{shown}: not a commchar trace (bad magic)"));
    }
    let version = u32_at(&h, 8);
    if !(1..=VERSION).contains(&version) {
        return input(format!(
            "{shown}: trace format version {version}, this simulator reads versions 1 to {VERSION}"
        ));
    }
    let record_bytes = u32_at(&h, 12);
    if record_bytes as usize != RECORD_BYTES {
        return input(format!(
            "{shown}: record size {record_bytes}, expected {RECORD_BYTES}"
        ));
    }
    let header = Header {
        rank: i32_at(&h, 16),
        size: i32_at(&h, 20),
        t_init: u64_at(&h, 24),
        t_finalize: u64_at(&h, 32),
        records: u64_at(&h, 40),
        flags: u32_at(&h, 48),
        record_gap_ps: u32_at(&h, 52),
        host: c_string(&h[56..120]),
        library: c_string(&h[120..184]),
        complete_gap_ps: u32_at(&h, 184),
        collective_gap_ps: u32_at(&h, 188),
        buffer_bytes: u64_at(&h, 192),
    };
    let body = len - HEADER_BYTES as u64;
    let held = body / RECORD_BYTES as u64;
    if header.flags & FINALIZED == 0 || header.records == 0 {
        return input(format!(
            "{shown}: the trace was cut short (the rank did not reach MPI_Finalize)"
        ));
    }
    if !body.is_multiple_of(RECORD_BYTES as u64) || held != header.records {
        return input(format!(
            "{shown}: truncated or corrupt (the header says {} records, the file holds {held}{})",
            header.records,
            if !body.is_multiple_of(RECORD_BYTES as u64) {
                " and a partial one"
            } else {
                ""
            }
        ));
    }
    if header.t_finalize < header.t_init {
        return input(format!(
            "{shown}: corrupt header (MPI_Finalize before MPI_Init)"
        ));
    }
    Ok((header, held))
}

fn c_string(b: &[u8]) -> String {
    let end = b.iter().position(|&c| c == 0).unwrap_or(b.len());
    String::from_utf8_lossy(&b[..end]).into_owned()
}
