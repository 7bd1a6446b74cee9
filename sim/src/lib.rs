//! commchar-sim: a deterministic discrete-event simulator of message passing
//! under the LogGOPS model, with topologies, congestion, collective algorithms
//! generated on the fly, Jacobi, and LogGOPSim's GOAL schedules.
//!
//! The library has no command-line code; `src/main.rs` is the binary.

pub mod batch;
mod bigmem;
pub mod cold_start;
pub mod collective_start;
pub mod copy_footprint;
pub mod engine;
pub mod error;
pub mod exchange_excess;
pub mod first_touch;
mod fxhash;
pub mod matching;
pub mod network;
pub mod noise;
pub mod params;
mod per_p;
pub mod placement;
mod prefetch;
pub mod queue;
pub mod request_growth;
pub mod topology;
pub mod trace;
pub mod trace_calls;
pub mod transport;
pub mod workload;
pub mod written_send;

pub use error::{Result, SimError};
