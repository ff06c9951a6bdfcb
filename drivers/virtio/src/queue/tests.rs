//! The driver side of split queues against the simulated device of `sim`.

use alloc::collections::BTreeSet;
use alloc::vec::Vec;

use super::*;
use crate::sim::{SimBus, SimDesc, SimQueue, SimRegion};

fn setup(size: u16, event_idx: bool) -> (SplitQueue<SimRegion, u32>, SimQueue) {
    let bus = SimBus::new(1 << 20);
    let layout = QueueLayout::new(size).unwrap();
    let q = SplitQueue::new(bus.alloc(layout.total), size, event_idx).unwrap();
    let dev = SimQueue::new(&bus, size, q.ring_addresses());
    (q, dev)
}

fn rd(addr: u64, len: u32) -> Buffer {
    Buffer {
        addr,
        len,
        device_writable: false,
    }
}

fn wr(addr: u64, len: u32) -> Buffer {
    Buffer {
        addr,
        len,
        device_writable: true,
    }
}

#[test]
fn layout_follows_the_spec_alignment() {
    let l = QueueLayout::new(128).unwrap();
    assert_eq!((l.desc, l.avail), (0, 2048));
    assert_eq!(l.used, (2048 + 6 + 256usize).next_multiple_of(4));
    assert_eq!(l.total, l.used + 6 + 8 * 128);
    assert_eq!(QueueLayout::new(0), None);
    assert_eq!(QueueLayout::new(96), None);
    assert!(QueueLayout::new(32768).is_some());
}

#[test]
fn a_chain_reaches_the_device_and_its_token_comes_back() {
    let (mut q, mut dev) = setup(16, false);
    let head = q
        .add(&[rd(0x1000, 16), wr(0x2000, 512), wr(0x3000, 1)], 7)
        .unwrap();
    assert_eq!(q.num_free(), 13);
    assert!(q.kick_needed());
    assert!(!q.kick_needed(), "nothing new since the last notification");
    let chain = dev.pop_avail().unwrap();
    assert_eq!(chain.head, head);
    assert_eq!(
        chain.descs,
        [
            SimDesc {
                addr: 0x1000,
                len: 16,
                writable: false
            },
            SimDesc {
                addr: 0x2000,
                len: 512,
                writable: true
            },
            SimDesc {
                addr: 0x3000,
                len: 1,
                writable: true
            },
        ]
    );
    assert!(dev.pop_avail().is_none());
    assert!(q.pop_used().is_none());
    dev.push_used(u32::from(head), 513);
    assert!(q.has_used());
    assert_eq!(
        q.pop_used(),
        Some(Ok(Used {
            head,
            len: 513,
            token: 7
        }))
    );
    assert!(q.pop_used().is_none());
    assert_eq!(q.num_free(), 16);
}

#[test]
fn a_full_ring_refuses_without_changing_anything() {
    let (mut q, mut dev) = setup(8, false);
    for t in 0..4 {
        q.add(&[rd(0x1000, 8), wr(0x2000, 8)], t).unwrap();
    }
    assert_eq!(q.num_free(), 0);
    assert_eq!(
        q.add(&[wr(0x2000, 8)], 99).map_err(|e| e.0),
        Err(AddError::Full)
    );
    assert_eq!(
        q.add(&[wr(0x2000, 8); 9], 99).map_err(|e| e.0),
        Err(AddError::TooLong)
    );
    let c = dev.pop_avail().unwrap();
    dev.push_used(u32::from(c.head), 0);
    assert_eq!(q.pop_used().unwrap().unwrap().token, 0);
    assert_eq!(
        q.add(&[rd(1, 1), rd(2, 1), rd(3, 1)], 98).map_err(|e| e.0),
        Err(AddError::Full)
    );
    q.add(&[rd(1, 1), wr(2, 1)], 4).unwrap();
    assert_eq!(q.in_flight(), 8);
    // The device sees exactly the four published chains after the first.
    let mut n = 0;
    while dev.pop_avail().is_some() {
        n += 1;
    }
    assert_eq!(n, 4);
}

#[test]
fn malformed_chains_are_refused() {
    let (mut q, _dev) = setup(8, false);
    assert_eq!(q.add(&[], 0).map_err(|e| e.0), Err(AddError::Invalid));
    assert_eq!(
        q.add(&[rd(1, 0)], 0).map_err(|e| e.0),
        Err(AddError::Invalid)
    );
    assert_eq!(
        q.add(&[wr(1, 4), rd(2, 4)], 0).map_err(|e| e.0),
        Err(AddError::Invalid)
    );
    assert_eq!(
        q.add(&[rd(1, u32::MAX), rd(2, u32::MAX)], 0)
            .map_err(|e| e.0),
        Err(AddError::Invalid)
    );
    assert_eq!(q.num_free(), 8);
    assert!(!q.kick_needed());
}

#[test]
fn out_of_order_completions_return_the_right_tokens_and_reuse_descriptors() {
    let (mut q, mut dev) = setup(8, false);
    let mut heads = Vec::new();
    for t in 0..4u32 {
        heads.push(
            q.add(&[rd(0x1000 * u64::from(t + 1), 16), wr(0x9000, 4)], t)
                .unwrap(),
        );
    }
    let chains: Vec<_> = (0..4).map(|_| dev.pop_avail().unwrap()).collect();
    for order in [2usize, 0, 3] {
        dev.push_used(u32::from(chains[order].head), 4);
    }
    let got: Vec<u32> = core::iter::from_fn(|| q.pop_used())
        .map(|r| r.unwrap().token)
        .collect();
    assert_eq!(got, [2, 0, 3]);
    // New chains must not reuse chain 1's descriptors, still in flight.
    let busy: BTreeSet<u64> = chains[1].descs.iter().map(|d| d.addr).collect();
    q.add(
        &[
            rd(0xa000, 1),
            rd(0xb000, 1),
            rd(0xc000, 1),
            wr(0xd000, 1),
            wr(0xe000, 1),
        ],
        10,
    )
    .unwrap();
    let c = dev.pop_avail().unwrap();
    assert_eq!(c.descs.len(), 5);
    assert!(c.descs.iter().all(|d| !busy.contains(&d.addr)));
    assert_ne!(c.head, chains[1].head);
    dev.push_used(u32::from(c.head), 2);
    dev.push_used(u32::from(chains[1].head), 4);
    assert_eq!(q.pop_used().unwrap().unwrap().token, 10);
    assert_eq!(q.pop_used().unwrap().unwrap().token, 1);
    assert_eq!(q.num_free(), 8);
}

#[test]
fn indices_wrap_around_after_65536_chains() {
    let (mut q, mut dev) = setup(4, false);
    let mut next_token = 0u32;
    let mut expected = 0u32;
    // Two chains in flight at a time, completed in reverse order every other round.
    while next_token < 70_000 {
        let a = q.add(&[rd(0x1000, 8), wr(0x2000, 8)], next_token).unwrap();
        let b = q.add(&[wr(0x3000, 8)], next_token + 1).unwrap();
        next_token += 2;
        let ca = dev.pop_avail().unwrap();
        let cb = dev.pop_avail().unwrap();
        assert_eq!((ca.head, cb.head), (a, b));
        let reverse = next_token.is_multiple_of(4);
        let order = if reverse {
            [cb.head, ca.head]
        } else {
            [ca.head, cb.head]
        };
        for h in order {
            dev.push_used(u32::from(h), 8);
        }
        let t1 = q.pop_used().unwrap().unwrap().token;
        let t2 = q.pop_used().unwrap().unwrap().token;
        let want = if reverse {
            [expected + 1, expected]
        } else {
            [expected, expected + 1]
        };
        assert_eq!([t1, t2], want);
        expected += 2;
        assert!(q.pop_used().is_none());
        assert_eq!(q.num_free(), 4);
    }
    assert!(!q.is_broken());
}

#[test]
fn an_unknown_used_id_is_reported_and_skipped() {
    let (mut q, mut dev) = setup(8, false);
    let h = q.add(&[wr(0x1000, 8)], 1).unwrap();
    dev.pop_avail().unwrap();
    dev.push_used(4096, 8); // out of range
    dev.push_used(5, 8); // in range, not in flight
    dev.push_used(u32::from(h), 8);
    dev.push_used(u32::from(h), 8); // completed twice
    assert_eq!(q.pop_used(), Some(Err(UsedError::UnknownId { id: 4096 })));
    assert_eq!(q.pop_used(), Some(Err(UsedError::UnknownId { id: 5 })));
    assert_eq!(
        q.pop_used(),
        Some(Ok(Used {
            head: h,
            len: 8,
            token: 1
        }))
    );
    assert_eq!(
        q.pop_used(),
        Some(Err(UsedError::UnknownId { id: u32::from(h) }))
    );
    assert_eq!(q.pop_used(), None);
    assert_eq!(q.num_free(), 8, "nothing freed twice");
    assert!(!q.is_broken());
}

#[test]
fn a_bogus_length_fails_that_chain_only() {
    let (mut q, mut dev) = setup(8, false);
    let a = q
        .add(&[rd(0x1000, 16), wr(0x2000, 512), wr(0x3000, 1)], 1)
        .unwrap();
    let b = q.add(&[rd(0x1000, 16), wr(0x3000, 1)], 2).unwrap();
    dev.pop_avail();
    dev.pop_avail();
    dev.push_used(u32::from(a), 514); // writable bytes: 513
    dev.push_used(u32::from(b), 1);
    assert_eq!(
        q.pop_used(),
        Some(Err(UsedError::BadLength {
            head: a,
            len: 514,
            token: 1
        }))
    );
    assert_eq!(
        q.pop_used(),
        Some(Ok(Used {
            head: b,
            len: 1,
            token: 2
        }))
    );
    assert_eq!(q.num_free(), 8);
}

#[test]
fn a_used_index_jump_breaks_the_queue() {
    let (mut q, mut dev) = setup(8, false);
    q.add(&[wr(0x1000, 8)], 1).unwrap();
    dev.pop_avail();
    dev.set_used_idx(9);
    assert_eq!(
        q.pop_used(),
        Some(Err(UsedError::IndexJump {
            used_idx: 9,
            last_seen: 0
        }))
    );
    assert!(q.is_broken());
    assert_eq!(q.pop_used(), None);
    assert_eq!(
        q.add(&[wr(0x1000, 8)], 2).map_err(|e| e.0),
        Err(AddError::Broken)
    );
    assert_eq!(q.drain_in_flight(), [1]);
}

#[test]
fn notifications_follow_no_notify_without_event_idx() {
    let (mut q, dev) = setup(8, false);
    dev.set_no_notify(true);
    q.add(&[wr(0x1000, 8)], 1).unwrap();
    assert!(!q.kick_needed());
    dev.set_no_notify(false);
    q.add(&[wr(0x1000, 8)], 2).unwrap();
    assert!(q.kick_needed());
}

#[test]
fn notifications_follow_avail_event_with_event_idx() {
    let (mut q, mut dev) = setup(8, true);
    // The device wants a kick once avail.idx passes 2.
    dev.set_avail_event(2);
    q.add(&[wr(0x1000, 8)], 0).unwrap(); // idx 0 -> 1: event 2 not crossed
    assert!(!q.kick_needed());
    q.add(&[wr(0x1000, 8)], 1).unwrap(); // 1 -> 2
    assert!(!q.kick_needed());
    q.add(&[wr(0x1000, 8)], 2).unwrap();
    q.add(&[wr(0x1000, 8)], 3).unwrap(); // 2 -> 4 crosses 2
    assert!(q.kick_needed());
    // The driver asks for an interrupt at the next used element.
    let c = dev.pop_avail().unwrap();
    dev.push_used(u32::from(c.head), 0);
    q.pop_used().unwrap().unwrap();
    assert_eq!(dev.used_event(), 1);
}

#[test]
fn random_interleavings_keep_chains_disjoint_and_tokens_unique() {
    let (mut q, mut dev) = setup(16, true);
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    let mut rand = move |n: u64| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed % n
    };
    let mut device_held: Vec<(u16, Vec<SimDesc>)> = Vec::new();
    let mut outstanding = BTreeSet::new();
    let mut token = 0u32;
    for _ in 0..20_000 {
        match rand(3) {
            0 => {
                let n = 1 + rand(5) as usize;
                let bufs: Vec<Buffer> = (0..n)
                    .map(|i| Buffer {
                        addr: 0x1000 * (u64::from(token) * 8 + i as u64 + 1),
                        len: 8,
                        device_writable: i + 1 == n,
                    })
                    .collect();
                match q.add(&bufs, token) {
                    Ok(_) => {
                        outstanding.insert(token);
                        token += 1;
                    }
                    Err((AddError::Full, _)) => assert!(q.num_free() < n as u16),
                    Err(e) => panic!("unexpected {e:?}"),
                }
            }
            1 => {
                while let Some(c) = dev.pop_avail() {
                    // No descriptor index may be in two chains held by the device.
                    for (_, held) in &device_held {
                        assert!(held.iter().all(|d| !c.descs.contains(d)));
                    }
                    device_held.push((c.head, c.descs));
                }
            }
            _ => {
                if !device_held.is_empty() {
                    let i = rand(device_held.len() as u64) as usize;
                    let (head, _) = device_held.swap_remove(i);
                    dev.push_used(u32::from(head), 8);
                }
                while let Some(r) = q.pop_used() {
                    let used = r.unwrap();
                    assert!(
                        outstanding.remove(&used.token),
                        "token {} returned twice",
                        used.token
                    );
                }
            }
        }
        assert_eq!(q.in_flight(), 16 - q.num_free() as usize);
    }
    assert!(token > 1000);
}
