//! Refinement tests: random operation sequences on the real page-table,
//! address-space and frame-allocation code, checked after every step against
//! an abstract model (a `BTreeMap` from virtual page to frame and rights, and
//! a set of owned frames).
//!
//! Under Miri the same properties run with a handful of short cases, so that
//! Miri walks the unsafe direct-map accesses on many different paths.

use std::collections::BTreeMap;
use std::vec::Vec;

use proptest::prelude::*;
use proptest::test_runner::Config;

use super::frame_alloc::free_frames;
use super::page_table::{CachePolicy, PageTable, Privilege};
use super::{PAGE_SIZE, Paddr, PageFlags, UFrame, USER_SPACE_END, USegment, Vaddr, VmSpace};
use crate::sim;

fn config() -> Config {
    Config {
        cases: if sim::miri_sized() { 2 } else { 64 },
        failure_persistence: None,
        ..Config::default()
    }
}

/// Longest operation sequence per case.
fn max_ops() -> usize {
    if sim::miri_sized() { 16 } else { 160 }
}

/// Candidate pages, chosen to share and to split tables at every level:
/// root entries 0, 1 and 255 (the top of the user half), level-3 entries 0
/// and 511, level-2 entries 0 and 3, leaf entries 0, 1 and 511.
fn candidate_vas() -> Vec<Vaddr> {
    let mut v = Vec::new();
    for i4 in [0usize, 1, 255] {
        for i3 in [0usize, 511] {
            for i2 in [0usize, 3] {
                for i1 in [0usize, 1, 511] {
                    v.push((i4 << 39) | (i3 << 30) | (i2 << 21) | (i1 << 12));
                }
            }
        }
    }
    v
}

fn arb_flags() -> impl Strategy<Value = PageFlags> {
    (any::<bool>(), any::<bool>(), 0u8..8).prop_map(|(write, exec, avail)| PageFlags {
        write,
        exec,
        avail,
    })
}

#[derive(Debug, Clone)]
enum PtOp {
    /// Map candidate page `va` to physical page number `pfn`.
    Map(prop::sample::Index, usize, PageFlags),
    Unmap(prop::sample::Index),
    Protect(prop::sample::Index, PageFlags),
    /// Copy the table for fork (writable pages whose page number has bit
    /// `keep_bit` set stay writable, the others become read-only in both),
    /// check the copy, then tear it down.
    Fork(u8),
}

fn arb_pt_op() -> impl Strategy<Value = PtOp> {
    prop_oneof![
        4 => (any::<prop::sample::Index>(), 0usize..1 << 20, arb_flags())
            .prop_map(|(i, pfn, f)| PtOp::Map(i, pfn, f)),
        2 => any::<prop::sample::Index>().prop_map(PtOp::Unmap),
        2 => (any::<prop::sample::Index>(), arb_flags()).prop_map(|(i, f)| PtOp::Protect(i, f)),
        1 => (0u8..36).prop_map(PtOp::Fork),
    ]
}

/// Every candidate page and the leaf walk agree with the model.
fn check_page_table(
    pt: &PageTable,
    vas: &[Vaddr],
    model: &BTreeMap<Vaddr, (Paddr, PageFlags)>,
) -> Result<(), TestCaseError> {
    for &va in vas {
        prop_assert_eq!(pt.query(va), model.get(&va).copied(), "query {:#x}", va);
        // A neighbour that is never mapped stays unmapped.
        prop_assert_eq!(pt.query(va + 2 * PAGE_SIZE), None);
    }
    let mut leaves = Vec::new();
    pt.for_each_user_leaf(|va, pa, flags| leaves.push((va, (pa, flags))));
    let expected: Vec<_> = model.iter().map(|(va, m)| (*va, *m)).collect();
    prop_assert_eq!(leaves, expected);
    Ok(())
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn page_table_refines_map_model(ops in prop::collection::vec(arb_pt_op(), 1..max_ops())) {
        sim::run(move || -> Result<(), TestCaseError> {
        let before = free_frames();
        let vas = candidate_vas();
        {
            let pt = PageTable::new_empty().unwrap();
            let mut model: BTreeMap<Vaddr, (Paddr, PageFlags)> = BTreeMap::new();
            for op in ops {
                match op {
                    PtOp::Map(i, pfn, flags) => {
                        let va = vas[i.index(vas.len())];
                        let pa = pfn * PAGE_SIZE;
                        let got = pt
                            .map(va, pa, flags, Privilege::User, CachePolicy::WriteBack)
                            .unwrap();
                        let old = model.insert(va, (pa, flags)).map(|(pa, _)| pa);
                        prop_assert_eq!(got, old, "map {:#x}", va);
                    }
                    PtOp::Unmap(i) => {
                        let va = vas[i.index(vas.len())];
                        prop_assert_eq!(pt.unmap(va), model.remove(&va), "unmap {:#x}", va);
                    }
                    PtOp::Protect(i, flags) => {
                        let va = vas[i.index(vas.len())];
                        let old = model.get_mut(&va).map(|m| core::mem::replace(&mut m.1, flags));
                        prop_assert_eq!(pt.protect(va, flags), old, "protect {:#x}", va);
                    }
                    PtOp::Fork(keep_bit) => {
                        let keep = |va: Vaddr| (va >> 12 >> keep_bit) & 1 != 0;
                        let mut child = PageTable::new_empty().unwrap();
                        let mut seen = Vec::new();
                        pt.fork_user_leaves(&mut child, |va, pa, writable| {
                            seen.push((va, pa, writable));
                            keep(va)
                        })
                        .unwrap();
                        let want: Vec<_> =
                            model.iter().map(|(va, (pa, f))| (*va, *pa, f.write)).collect();
                        prop_assert_eq!(seen, want, "fork visits every leaf once");
                        for (va, m) in model.iter_mut() {
                            if m.1.write && !keep(*va) {
                                m.1.write = false;
                            }
                        }
                        check_page_table(&child, &vas, &model)?;
                        let mut taken = Vec::new();
                        child.take_user_leaves(|pa| taken.push(pa));
                        let want: Vec<Paddr> = model.values().map(|(pa, _)| *pa).collect();
                        prop_assert_eq!(taken, want, "teardown finds every copied leaf");
                        let mut left = Vec::new();
                        child.for_each_user_leaf(|va, _, _| left.push(va));
                        prop_assert!(left.is_empty());
                    }
                }
                check_page_table(&pt, &vas, &model)?;
            }
            // Unaligned requests are refused and change nothing.
            prop_assert!(pt
                .map(vas[0] + 8, 0, PageFlags::R, Privilege::User, CachePolicy::WriteBack)
                .is_err());
            prop_assert!(pt
                .map(vas[0], 8, PageFlags::R, Privilege::User, CachePolicy::WriteBack)
                .is_err());
            check_page_table(&pt, &vas, &model)?;
            for va in model.keys() {
                pt.unmap(*va);
            }
        }
        prop_assert_eq!(free_frames(), before, "intermediate tables leaked");
            Ok(())
        })?;
    }
}

#[derive(Debug, Clone)]
enum VmOp {
    /// Map candidate page `va` to pool frame `frame`.
    Map(prop::sample::Index, prop::sample::Index, PageFlags),
    Unmap(prop::sample::Index),
    Protect(prop::sample::Index, PageFlags),
    /// Write `len` bytes of `byte` at `offset` from candidate page `va`
    /// (`None`: zero-fill them).
    Write(prop::sample::Index, usize, usize, Option<u8>),
}

fn arb_vm_op() -> impl Strategy<Value = VmOp> {
    let idx = any::<prop::sample::Index>;
    prop_oneof![
        4 => (idx(), idx(), arb_flags()).prop_map(|(v, f, fl)| VmOp::Map(v, f, fl)),
        2 => idx().prop_map(VmOp::Unmap),
        1 => (idx(), arb_flags()).prop_map(|(v, f)| VmOp::Protect(v, f)),
        3 => (idx(), 0usize..PAGE_SIZE, 1usize..2 * PAGE_SIZE, any::<Option<u8>>())
            .prop_map(|(v, o, l, b)| VmOp::Write(v, o, l, b)),
    ]
}

/// The model of a user address space: page -> (pool index, rights), and the
/// expected contents of each pool frame.
struct VmModel {
    map: BTreeMap<Vaddr, (usize, PageFlags)>,
    bytes: Vec<Vec<u8>>,
}

impl VmModel {
    /// What a copy of `len` bytes at `va` touches: `(pool index, offset in
    /// frame, length)` per page, or the first faulting address.
    fn span(
        &self,
        va: Vaddr,
        len: usize,
        write: bool,
    ) -> Result<Vec<(usize, usize, usize)>, Vaddr> {
        let mut out = Vec::new();
        // A range leaving user space faults at once, at its first address
        // outside it, before any byte is copied.
        if va + len > USER_SPACE_END {
            return Err(va.max(USER_SPACE_END));
        }
        let (mut cur, end) = (va, va + len);
        while cur < end {
            let page = cur & !(PAGE_SIZE - 1);
            let n = (page + PAGE_SIZE).min(end) - cur;
            match self.map.get(&page) {
                Some((f, flags)) if !write || flags.write => out.push((*f, cur - page, n)),
                _ => return Err(cur),
            }
            cur += n;
        }
        Ok(out)
    }
}

fn check_vm_space(vm: &VmSpace, pool: &[UFrame], m: &VmModel) -> Result<(), TestCaseError> {
    let got: Vec<(Vaddr, Paddr, PageFlags)> = vm
        .mappings()
        .into_iter()
        .map(|(va, f, flags)| (va, f.paddr(), flags))
        .collect();
    let want: Vec<(Vaddr, Paddr, PageFlags)> = m
        .map
        .iter()
        .map(|(va, (f, flags))| (*va, pool[*f].paddr(), *flags))
        .collect();
    prop_assert_eq!(got, want);
    for (i, f) in pool.iter().enumerate() {
        // Our handle plus one per mapping.
        let mapped = m.map.values().filter(|(j, _)| *j == i).count();
        prop_assert_eq!(f.ref_count() as usize, 1 + mapped, "frame {}", i);
        let mut page = std::vec![0u8; PAGE_SIZE];
        f.read_bytes(0, &mut page).unwrap();
        prop_assert!(page == m.bytes[i], "contents of frame {}", i);
    }
    Ok(())
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn vm_space_refines_map_model(ops in prop::collection::vec(arb_vm_op(), 1..max_ops())) {
        sim::run(move || -> Result<(), TestCaseError> {
        let before = free_frames();
        // Two small neighbourhoods so that multi-page copies cross mapped
        // and unmapped pages, and run up to and past the end of user space.
        let vas: Vec<Vaddr> = (0..3)
            .map(|i| 0x10_0000 + i * PAGE_SIZE)
            .chain((1..=3).rev().map(|i| USER_SPACE_END - i * PAGE_SIZE))
            .collect();
        {
            let pool: Vec<UFrame> = (0..3).map(|_| UFrame::alloc_zeroed().unwrap()).collect();
            let mut m = VmModel {
                map: BTreeMap::new(),
                bytes: std::vec![std::vec![0u8; PAGE_SIZE]; pool.len()],
            };
            let vm = VmSpace::new().unwrap();
            for op in ops {
                match op {
                    VmOp::Map(v, f, flags) => {
                        let (va, f) = (vas[v.index(vas.len())], f.index(pool.len()));
                        let old = vm.map(va, pool[f].clone(), flags).unwrap();
                        let want = m.map.insert(va, (f, flags)).map(|(j, _)| pool[j].paddr());
                        prop_assert_eq!(old.map(|o| o.paddr()), want);
                    }
                    VmOp::Unmap(v) => {
                        let va = vas[v.index(vas.len())];
                        let want = m.map.remove(&va).map(|(j, _)| pool[j].paddr());
                        prop_assert_eq!(vm.unmap(va).map(|o| o.paddr()), want);
                    }
                    VmOp::Protect(v, flags) => {
                        let va = vas[v.index(vas.len())];
                        let want = m.map.get_mut(&va).map(|e| core::mem::replace(&mut e.1, flags));
                        prop_assert_eq!(vm.protect(va, flags), want);
                    }
                    VmOp::Write(v, off, len, byte) => {
                        let va = vas[v.index(vas.len())] + off;
                        let data = std::vec![byte.unwrap_or(0); len];
                        let write = || match byte {
                            Some(_) => vm.write_bytes(va, &data),
                            None => vm.fill_zero(va, len),
                        };
                        match m.span(va, len, true) {
                            Ok(parts) => {
                                prop_assert!(write().is_ok());
                                for (f, o, n) in parts {
                                    m.bytes[f][o..o + n].fill(byte.unwrap_or(0));
                                }
                            }
                            Err(fault) if fault >= USER_SPACE_END => {
                                let e = write().unwrap_err();
                                prop_assert_eq!((e.addr, e.write), (fault, true));
                                prop_assert!(e.is_outside_user_space());
                                // Refused before copying: no frame changed.
                                check_vm_space(&vm, &pool, &m)?;
                            }
                            Err(fault) => {
                                let e = write().unwrap_err();
                                prop_assert_eq!((e.addr, e.write), (fault, true));
                                prop_assert!(!e.is_outside_user_space());
                                // The pages before the fault were written:
                                // resynchronise the model from the frames.
                                for (i, f) in pool.iter().enumerate() {
                                    f.read_bytes(0, &mut m.bytes[i]).unwrap();
                                }
                            }
                        }
                        // Reading back sees the model's bytes, or faults
                        // where the model says.
                        let mut buf = std::vec![0u8; len];
                        match m.span(va, len, false) {
                            Ok(parts) => {
                                prop_assert!(vm.read_bytes(va, &mut buf).is_ok());
                                let mut at = 0;
                                for (f, o, n) in parts {
                                    prop_assert!(buf[at..at + n] == m.bytes[f][o..o + n]);
                                    at += n;
                                }
                            }
                            Err(fault) => {
                                let e = vm.read_bytes(va, &mut buf).unwrap_err();
                                prop_assert_eq!((e.addr, e.write), (fault, false));
                            }
                        }
                    }
                }
                check_vm_space(&vm, &pool, &m)?;
            }
            drop(vm);
            for f in &pool {
                prop_assert_eq!(f.ref_count(), 1, "dropping the VmSpace releases its mappings");
            }
        }
        prop_assert_eq!(free_frames(), before, "frames or tables leaked");
            Ok(())
        })?;
    }
}

#[derive(Debug, Clone)]
enum AllocOp {
    Frame,
    Segment(usize),
    /// Drop a live allocation, chosen by index.
    Drop(prop::sample::Index),
    /// Clone a live single frame (shares it; the page stays in use).
    Clone(prop::sample::Index),
}

fn arb_alloc_op() -> impl Strategy<Value = AllocOp> {
    prop_oneof![
        3 => Just(AllocOp::Frame),
        1 => (1usize..9).prop_map(AllocOp::Segment),
        3 => any::<prop::sample::Index>().prop_map(AllocOp::Drop),
        1 => any::<prop::sample::Index>().prop_map(AllocOp::Clone),
    ]
}

enum Live {
    Frame(UFrame),
    Segment(USegment),
}

impl Live {
    fn pages(&self) -> Vec<Paddr> {
        match self {
            Live::Frame(f) => std::vec![f.paddr()],
            Live::Segment(s) => (0..s.size() / PAGE_SIZE)
                .map(|i| s.paddr() + i * PAGE_SIZE)
                .collect(),
        }
    }
}

proptest! {
    #![proptest_config(config())]

    /// Invariant 1 through the real allocation path: pages handed out are
    /// never in use (no double allocation), every owned page is counted, and
    /// dropping the last handle gives the page back (no leak).
    #[test]
    fn frame_allocation_refines_owned_set(ops in prop::collection::vec(arb_alloc_op(), 1..max_ops())) {
        sim::run(move || -> Result<(), TestCaseError> {
        let before = free_frames();
        let mut live: Vec<Live> = Vec::new();
        // Model: page -> number of live handles.
        let mut owned: BTreeMap<Paddr, usize> = BTreeMap::new();
        for op in ops {
            match op {
                AllocOp::Frame | AllocOp::Segment(_) => {
                    let item = match op {
                        AllocOp::Frame => Live::Frame(UFrame::alloc_zeroed().unwrap()),
                        AllocOp::Segment(n) => Live::Segment(USegment::alloc_zeroed(n).unwrap()),
                        _ => unreachable!(),
                    };
                    for pa in item.pages() {
                        prop_assert!(owned.insert(pa, 1).is_none(), "page {:#x} handed out twice", pa);
                    }
                    // Fresh pages read as zeroes, and stay in bounds.
                    let mut buf = std::vec![0xffu8; 64];
                    match &item {
                        Live::Frame(f) => {
                            f.write_bytes(PAGE_SIZE - 64, &buf).unwrap();
                            f.fill_zero(PAGE_SIZE - 64, 64).unwrap();
                            f.read_bytes(PAGE_SIZE - 64, &mut buf).unwrap();
                            prop_assert!(f.fill_zero(PAGE_SIZE - 1, 2).is_err());
                        }
                        Live::Segment(s) => {
                            s.read_bytes(s.size() - 64, &mut buf).unwrap();
                            prop_assert!(s.read_bytes(s.size() - 1, &mut buf).is_err());
                        }
                    }
                    prop_assert!(buf.iter().all(|&b| b == 0));
                    live.push(item);
                }
                AllocOp::Drop(i) => {
                    if live.is_empty() {
                        continue;
                    }
                    let item = live.swap_remove(i.index(live.len()));
                    for pa in item.pages() {
                        let n = owned.get_mut(&pa).unwrap();
                        *n -= 1;
                        if *n == 0 {
                            owned.remove(&pa);
                        }
                    }
                }
                AllocOp::Clone(i) => {
                    if live.is_empty() {
                        continue;
                    }
                    if let Live::Frame(f) = &live[i.index(live.len())] {
                        let f = f.clone();
                        *owned.get_mut(&f.paddr()).unwrap() += 1;
                        live.push(Live::Frame(f));
                    }
                }
            }
            prop_assert_eq!(free_frames(), before - owned.len());
            for item in &live {
                if let Live::Frame(f) = item {
                    prop_assert_eq!(f.ref_count() as usize, owned[&f.paddr()]);
                }
            }
        }
        drop(live);
        prop_assert_eq!(free_frames(), before, "pages leaked");
            Ok(())
        })?;
    }
}
