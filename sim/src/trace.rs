//! Timelines in the Chrome trace-event format (opens in Perfetto and
//! chrome://tracing): one track per rank, one complete event per CPU span.

use crate::engine::{Span, SpanKind};
use std::io::Write;

/// Writes `spans` as trace-event JSON; times are converted from ps to us.
pub fn write_chrome<W: Write>(spans: &[Span], w: &mut W) -> std::io::Result<()> {
    writeln!(w, "{{\"displayTimeUnit\":\"ns\",\"traceEvents\":[")?;
    for (i, s) in spans.iter().enumerate() {
        let (name, detail) = match s.kind {
            SpanKind::Send => (
                "send",
                format!(",\"args\":{{\"to\":{},\"bytes\":{}}}", s.peer, s.size),
            ),
            SpanKind::Recv => (
                "recv",
                format!(",\"args\":{{\"from\":{},\"bytes\":{}}}", s.peer, s.size),
            ),
            SpanKind::Calc => ("calc", String::new()),
        };
        let sep = if i + 1 == spans.len() { "" } else { "," };
        writeln!(
            w,
            "{{\"name\":\"{name}\",\"ph\":\"X\",\"pid\":0,\"tid\":{},\"ts\":{:.6},\"dur\":{:.6}{detail}}}{sep}",
            s.rank,
            s.start as f64 / 1e6,
            (s.end - s.start) as f64 / 1e6
        )?;
    }
    writeln!(w, "]}}")
}
