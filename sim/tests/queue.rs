//! The event queue against a sorted list: events leave in (time, sequence)
//! order whatever the interleaving of pushes and pops, and an event put back
//! with its old sequence number keeps its place among same-time events.

use commchar_sim::queue::EventQueue;
use proptest::prelude::*;

/// An action: push an event `delay` after the current time (a new event, or
/// when `again`, one reusing the sequence number of the last event popped),
/// pop one, or ask when the next is due (which must not move the current
/// time: an event may still be pushed for any time from the last popped).
#[derive(Debug, Clone)]
enum Action {
    Push { delay: u64, again: bool },
    Pop,
    Peek,
}

fn action() -> impl Strategy<Value = Action> {
    prop_oneof![
        // small delays make ties common; large ones cross many radix buckets
        (
            prop_oneof![0u64..3, 0u64..1_000_000, Just(u64::MAX / 4)],
            any::<bool>()
        )
            .prop_map(|(delay, again)| Action::Push { delay, again }),
        Just(Action::Pop),
        Just(Action::Peek),
    ]
}

proptest! {
    #[test]
    fn events_leave_in_time_then_sequence_order(actions in prop::collection::vec(action(), 1..400)) {
        let mut q: EventQueue<u32> = EventQueue::new();
        // the model: every queued (time, seq, kind, data), popped by its minimum
        let mut model: Vec<(u64, u64, u8, u32)> = Vec::new();
        let mut now = 0u64;
        let mut last: Option<(u64, u8)> = None;
        let mut data = 0u32;
        for a in actions {
            match a {
                Action::Push { delay, again } => {
                    let time = now.saturating_add(delay);
                    let (seq, kind) = match (again, last.take()) {
                        (true, Some(old)) => old,
                        _ => (q.next_seq().unwrap(), (data % 5) as u8),
                    };
                    q.push(time, seq, kind, data);
                    model.push((time, seq, kind, data));
                    data += 1;
                }
                Action::Pop => {
                    let got = q.pop();
                    let want = model
                        .iter()
                        .enumerate()
                        .min_by_key(|(_, e)| (e.0, e.1))
                        .map(|(i, _)| i)
                        .map(|i| model.remove(i));
                    match (got, want) {
                        (None, None) => {}
                        (Some(e), Some(w)) => {
                            prop_assert_eq!((e.time, e.seq(), e.kind(), e.data), w);
                            now = e.time;
                            last = Some((e.seq(), e.kind()));
                        }
                        (g, w) => prop_assert!(false, "queue gave {:?}, model {:?}", g, w),
                    }
                }
                Action::Peek => {
                    let want = model.iter().map(|e| e.0).min();
                    prop_assert_eq!(q.next_time(), want);
                }
            }
            prop_assert_eq!(q.len(), model.len());
        }
        // drained, the rest leaves in order too
        let mut rest = Vec::new();
        while let Some(e) = q.pop() {
            rest.push((e.time, e.seq(), e.kind(), e.data));
        }
        model.sort_by_key(|e| (e.0, e.1));
        prop_assert_eq!(rest, model);
    }

    #[test]
    fn same_time_events_leave_in_creation_order(times in prop::collection::vec(0u64..4, 1..200)) {
        let mut q: EventQueue<usize> = EventQueue::new();
        for (i, &t) in times.iter().enumerate() {
            let seq = q.next_seq().unwrap();
            q.push(t, seq, 0, i);
        }
        let mut out = Vec::new();
        while let Some(e) = q.pop() {
            out.push((e.time, e.data));
        }
        let mut want: Vec<(u64, usize)> = times.iter().copied().zip(0..).collect();
        want.sort_by_key(|&(t, i)| (t, i)); // a stable order: by time, then creation
        prop_assert_eq!(out, want);
        prop_assert_eq!(q.created(), times.len() as u64);
    }
}

/// Steps of hundreds of thousands of events, as a large collective makes:
/// buckets grow past the size they keep, take spare vectors, and events
/// still leave in (time, sequence) order, put-back ones among them.
#[test]
fn large_steps_through_spare_vectors_leave_in_order() {
    let mut q: EventQueue<u64> = EventQueue::new();
    let step = 300_000u64;
    for i in 0..step {
        let seq = q.next_seq().unwrap();
        q.push(10, seq, 0, i);
    }
    let mut last = (0u64, 0u64);
    let mut popped = 0u64;
    while let Some(e) = q.pop() {
        assert!(
            (e.time, e.seq()) > last || popped == 0,
            "out of order at {popped}"
        );
        last = (e.time, e.seq());
        popped += 1;
        // each event of the first three steps makes one of the next, at one of
        // two times; every seventh of them is put back with its old number
        if e.time < 40 {
            let later = e.time + 10 + (e.data % 2);
            if e.data % 7 == 0 {
                q.push(later, e.seq(), 0, e.data);
            } else {
                let seq = q.next_seq().unwrap();
                q.push(later, seq, 0, e.data);
            }
        }
    }
    assert_eq!(popped, 4 * step, "every event leaves once");
}
