//! MPI matching: non-overtaking order with many outstanding receives, and a
//! property test against a naive list-scanning reference.

use commchar_sim::matching::{Entry, Matcher, ANY};
use proptest::prelude::*;

fn entry(src: u32, tag: u32, id: u32) -> Entry {
    Entry {
        src,
        tag,
        size: 0,
        id,
        aux: 0,
    }
}

#[test]
fn many_outstanding_receives_complete_in_posting_order() {
    for outstanding in [1u32, 2, 16, 17, 40, 1000] {
        let mut m = Matcher::new(2);
        for id in 0..outstanding {
            m.post(1, entry(0, 7, id));
        }
        let got: Vec<u32> = (0..outstanding)
            .map(|_| m.match_posted(1, 0, 7).unwrap().id)
            .collect();
        assert_eq!(got, (0..outstanding).collect::<Vec<_>>());
        assert!(m.match_posted(1, 0, 7).is_none());
    }
}

#[test]
fn many_unexpected_messages_are_taken_in_arrival_order() {
    let mut m = Matcher::new(2);
    for id in 0..50 {
        m.add_unexpected(
            1,
            Entry {
                src: 0,
                tag: 3,
                size: id as u64,
                id: 0,
                aux: id,
            },
        );
    }
    for id in 0..50 {
        assert_eq!(
            m.match_unexpected(1, if id % 2 == 0 { 0 } else { ANY }, 3)
                .unwrap()
                .aux,
            id
        );
    }
}

#[test]
fn an_older_wildcard_receive_wins_over_a_newer_exact_one() {
    let mut m = Matcher::new(4);
    m.post(0, entry(ANY, 5, 1));
    m.post(0, entry(2, 5, 2));
    assert_eq!(m.match_posted(0, 2, 5).unwrap().id, 1);
    assert_eq!(m.match_posted(0, 2, 5).unwrap().id, 2);
}

/// The reference: one list per rank in posting order, first match wins.
#[derive(Default)]
struct Naive {
    posted: Vec<(u32, Entry)>,
    unexpected: Vec<(u32, Entry)>,
}

fn fits(e: &Entry, src: u32, tag: u32) -> bool {
    (e.src == ANY || src == ANY || e.src == src) && (e.tag == ANY || tag == ANY || e.tag == tag)
}

impl Naive {
    fn take(list: &mut Vec<(u32, Entry)>, rank: u32, src: u32, tag: u32) -> Option<Entry> {
        let i = list
            .iter()
            .position(|(r, e)| *r == rank && fits(e, src, tag))?;
        Some(list.remove(i).1)
    }
}

proptest! {
    #[test]
    fn matcher_agrees_with_a_list_scan(ops in proptest::collection::vec((any::<bool>(), 0u32..3, 0u32..4, 0u32..3), 1..300)) {
        let mut m = Matcher::new(3);
        let mut naive = Naive::default();
        for (i, (is_recv, rank, src_code, tag_code)) in ops.into_iter().enumerate() {
            let id = i as u32;
            if is_recv {
                let src = if src_code == 3 { ANY } else { src_code };
                let tag = if tag_code == 2 { ANY } else { tag_code };
                let got = m.match_unexpected(rank, src, tag);
                let want = Naive::take(&mut naive.unexpected, rank, src, tag);
                prop_assert_eq!(got, want);
                if got.is_none() {
                    m.post(rank, entry(src, tag, id));
                    naive.posted.push((rank, entry(src, tag, id)));
                }
            } else {
                let src = src_code % 3;
                let tag = tag_code % 2;
                let msg = Entry { src, tag, size: 0, id: 0, aux: id };
                let got = m.match_posted(rank, src, tag);
                let want = Naive::take(&mut naive.posted, rank, src, tag);
                prop_assert_eq!(got, want);
                if got.is_none() {
                    m.add_unexpected(rank, msg);
                    naive.unexpected.push((rank, msg));
                }
            }
        }
        prop_assert_eq!(m.posted_len(), naive.posted.len() as u64);
        prop_assert_eq!(m.unexpected_len(), naive.unexpected.len() as u64);
    }
}
