//! Host tests of the memory core against simulated RAM.

use super::frame_alloc::{FrameUsage, free_frames, kernel_frames, untyped_frames};
use super::page_table::{CachePolicy, PageTable, Privilege};
use super::vm_space::UserFault;
use super::{
    PAGE_SIZE, PageFlags, Slab, SlabList, UFrame, USER_SPACE_END, USegment, VmSpace, heap, meta,
};
use crate::sim;
use core::sync::atomic::Ordering;

#[test]
fn uframe_refcount_follows_clones_and_drops() {
    sim::run(move || {
        let before = free_frames();
        let f = UFrame::alloc_zeroed().unwrap();
        assert_eq!(f.ref_count(), 1);
        assert_eq!(free_frames(), before - 1);
        let g = f.clone();
        assert_eq!(f.ref_count(), 2);
        drop(g);
        assert_eq!(f.ref_count(), 1);
        let pa = f.paddr();
        drop(f);
        assert_eq!(free_frames(), before);
        let s = meta::slot(pa).unwrap();
        assert_eq!(s.ref_count.load(Ordering::Relaxed), 0);
        assert_eq!(s.usage.load(Ordering::Relaxed), FrameUsage::Unused as u8);
    })
}

#[test]
fn uframe_contents_are_zeroed_and_copied_in_bounds() {
    sim::run(move || {
        let f = UFrame::alloc_zeroed().unwrap();
        let mut buf = [0xffu8; 16];
        f.read_bytes(4080, &mut buf).unwrap();
        assert_eq!(buf, [0; 16]);
        f.write_bytes(10, b"hello").unwrap();
        let copy = UFrame::alloc_copy_of(&f).unwrap();
        let mut out = [0u8; 5];
        copy.read_bytes(10, &mut out).unwrap();
        assert_eq!(&out, b"hello");
        assert!(f.write_bytes(4092, &[0; 8]).is_err());
        assert!(f.read_bytes(usize::MAX, &mut [0; 2]).is_err());
    })
}

#[test]
fn policy_proposing_a_used_frame_is_refused() {
    sim::run(move || {
        let f = UFrame::alloc_zeroed().unwrap();
        sim::policy()
            .force_pfn
            .store(f.paddr() / PAGE_SIZE, Ordering::Relaxed);
        let second = UFrame::alloc_zeroed();
        sim::policy().force_pfn.store(0, Ordering::Relaxed);
        assert!(second.is_err(), "frame handed out a page that is in use");
        assert_eq!(f.ref_count(), 1);
    })
}

#[test]
fn policy_proposing_reserved_memory_is_refused() {
    sim::run(move || {
        // Page 1 is in the first MiB, which boot reserves.
        sim::policy().force_pfn.store(1, Ordering::Relaxed);
        let r = UFrame::alloc_zeroed();
        sim::policy().force_pfn.store(0, Ordering::Relaxed);
        assert!(r.is_err());
    })
}

#[test]
fn policy_proposing_frames_past_the_end_of_memory_is_refused() {
    sim::run(move || {
        let before = free_frames();
        // The last representable frame number, and one whose pages would wrap
        // around the address space: refused without a panic or a claim.
        for pfn in [usize::MAX / PAGE_SIZE, usize::MAX / PAGE_SIZE - 1, 1 << 40] {
            sim::policy().force_pfn.store(pfn, Ordering::Relaxed);
            let one = UFrame::alloc_zeroed();
            let two = USegment::alloc_zeroed(2);
            sim::policy().force_pfn.store(0, Ordering::Relaxed);
            assert!(one.is_err() && two.is_err(), "pfn {pfn:#x} was accepted");
        }
        assert_eq!(free_frames(), before);
    })
}

#[test]
fn page_table_map_query_protect_unmap() {
    sim::run(move || {
        let before = free_frames();
        {
            let pt = PageTable::new_empty().unwrap();
            let va = 0x40_0000;
            assert_eq!(
                pt.map(
                    va,
                    0x5000,
                    PageFlags::RX,
                    Privilege::User,
                    CachePolicy::WriteBack
                )
                .unwrap(),
                None
            );
            assert_eq!(pt.query(va), Some((0x5000, PageFlags::RX)));
            assert_eq!(pt.query(va + PAGE_SIZE), None);
            assert_eq!(pt.protect(va, PageFlags::RW), Some(PageFlags::RX));
            assert_eq!(pt.query(va), Some((0x5000, PageFlags::RW)));
            assert_eq!(
                pt.map(
                    va,
                    0x6000,
                    PageFlags::R,
                    Privilege::User,
                    CachePolicy::WriteBack
                )
                .unwrap(),
                Some(0x5000)
            );
            assert_eq!(pt.unmap(va), Some((0x6000, PageFlags::R)));
            assert_eq!(pt.unmap(va), None);
            assert!(
                pt.map(
                    va + 1,
                    0x6000,
                    PageFlags::R,
                    Privilege::User,
                    CachePolicy::WriteBack
                )
                .is_err()
            );
            let mut seen = 0;
            pt.map(
                0x7fff_0000_0000,
                0x7000,
                PageFlags::R,
                Privilege::User,
                CachePolicy::WriteBack,
            )
            .unwrap();
            pt.for_each_user_leaf(|v, p, _| {
                assert_eq!((v, p), (0x7fff_0000_0000, 0x7000));
                seen += 1;
            });
            assert_eq!(seen, 1);
            pt.unmap(0x7fff_0000_0000);
        }
        assert_eq!(free_frames(), before, "intermediate tables leaked");
    })
}

#[test]
fn vm_space_copies_across_pages_and_reports_faults() {
    sim::run(move || {
        let before = free_frames();
        {
            let vm = VmSpace::new().unwrap();
            let (a, b) = (
                UFrame::alloc_zeroed().unwrap(),
                UFrame::alloc_zeroed().unwrap(),
            );
            vm.map(0x1000, a, PageFlags::RW).unwrap();
            vm.map(0x2000, b.clone(), PageFlags::R).unwrap();
            assert_eq!(b.ref_count(), 2);
            // Read across the boundary works; writing into the read-only page fails.
            let mut buf = [1u8; 32];
            vm.read_bytes(0x1ff0, &mut buf).unwrap();
            assert_eq!(buf, [0; 32]);
            assert_eq!(
                vm.write_bytes(0x1ff0, &[7; 32]),
                Err(UserFault {
                    addr: 0x2000,
                    write: true
                })
            );
            vm.write_bytes(0x1ff0, &[7; 16]).unwrap();
            assert_eq!(
                vm.read_bytes(0x3000, &mut buf),
                Err(UserFault {
                    addr: 0x3000,
                    write: false
                })
            );
            assert!(vm.read_bytes(usize::MAX - 4, &mut buf).is_err());
            assert!(
                vm.map(
                    0xffff_8000_0000_0000,
                    UFrame::alloc_zeroed().unwrap(),
                    PageFlags::R
                )
                .is_err()
            );
            assert_eq!(vm.mappings().len(), 2);
            let old = vm.unmap(0x2000).unwrap();
            assert_eq!(old.ref_count(), 2);
        }
        assert_eq!(
            free_frames(),
            before,
            "VmSpace drop must release frames and tables"
        );
    })
}

#[test]
fn vm_space_copies_between_frames_and_user_pages_and_reports_faults() {
    sim::run(move || {
        let vm = VmSpace::new().unwrap();
        let (a, b) = (
            UFrame::alloc_zeroed().unwrap(),
            UFrame::alloc_zeroed().unwrap(),
        );
        vm.map(0x1000, a.clone(), PageFlags::RW).unwrap();
        vm.map(0x2000, b.clone(), PageFlags::R).unwrap();
        let cache = UFrame::alloc_zeroed().unwrap();
        let pattern: [u8; 64] = core::array::from_fn(|i| i as u8 + 1);
        cache.write_bytes(100, &pattern).unwrap();
        // Frame to user: lands at the right place of the user page.
        vm.write_from_frame(0x1010, &cache, 100, 64).unwrap();
        let mut got = [0u8; 64];
        a.read_bytes(0x10, &mut got).unwrap();
        assert_eq!(got, pattern);
        // Into a read-only page: the bytes before it are copied, the
        // fault names the page.
        assert_eq!(
            vm.write_from_frame(0x1ff0, &cache, 100, 32),
            Err(UserFault {
                addr: 0x2000,
                write: true
            })
        );
        a.read_bytes(0xff0, &mut got[..16]).unwrap();
        assert_eq!(got[..16], pattern[..16]);
        // User to frame, across the two pages (a read-only page is
        // readable).
        b.write_bytes(0, &[9; 8]).unwrap();
        let dst = UFrame::alloc_zeroed().unwrap();
        vm.read_into_frame(0x1ff8, &dst, 4000, 16).unwrap();
        let mut back = [0u8; 16];
        dst.read_bytes(4000, &mut back).unwrap();
        assert_eq!(back[..8], pattern[8..16]);
        assert_eq!(back[8..], [9; 8]);
        // From an unmapped page: nothing past it is touched.
        assert_eq!(
            vm.read_into_frame(0x2ffc, &dst, 0, 8),
            Err(UserFault {
                addr: 0x3000,
                write: false
            })
        );
        let mut head = [0u8; 8];
        dst.read_bytes(0, &mut head).unwrap();
        assert_eq!(head[..4], [0; 4]);
        assert_eq!(head[4..], [0; 4]);
        // Leaving user space: nothing is copied.
        assert!(
            vm.write_from_frame(USER_SPACE_END - 8, &cache, 0, 16)
                .unwrap_err()
                .is_outside_user_space()
        );
    })
}

#[test]
fn vm_space_map_absent_maps_only_empty_slots_and_keeps_what_is_mapped() {
    sim::run(move || {
        let before = free_frames();
        {
            let vm = VmSpace::new().unwrap();
            let private = UFrame::alloc_zeroed().unwrap();
            private.write_bytes(0, &[9]).unwrap();
            vm.map(0x11000, private.clone(), PageFlags::RW).unwrap();
            let cached: alloc::vec::Vec<UFrame> =
                (0..4).map(|_| UFrame::alloc_zeroed().unwrap()).collect();
            let mut slots: alloc::vec::Vec<Option<UFrame>> =
                cached.iter().map(|f| Some(f.clone())).collect();
            slots[2] = None;
            // 0x10000 and 0x13000 are mapped; 0x11000 keeps the private
            // page (its slot's frame stays with the caller); 0x12000 had
            // no frame to offer.
            assert_eq!(vm.map_absent(0x10000, &mut slots, PageFlags::R), Ok(2));
            assert!(slots[0].is_none() && slots[3].is_none());
            assert!(slots[1].is_some() && slots[2].is_none());
            let (f, flags) = vm.query(0x11000).unwrap();
            assert_eq!(f.paddr(), private.paddr());
            assert!(flags.write);
            drop(f);
            assert_eq!(vm.query(0x10000).unwrap().0.paddr(), cached[0].paddr());
            assert!(!vm.query(0x13000).unwrap().1.write);
            assert!(vm.query(0x12000).is_none());
            assert_eq!(cached[0].ref_count(), 2);
            assert_eq!(cached[1].ref_count(), 2, "the unused slot still holds its handle");
            drop(slots);
            assert_eq!(cached[1].ref_count(), 1);
            // A run that leaves user space stops there, and nothing past it
            // is mapped.
            let mut tail = [Some(UFrame::alloc_zeroed().unwrap()), Some(UFrame::alloc_zeroed().unwrap())];
            assert!(vm.map_absent(USER_SPACE_END - PAGE_SIZE, &mut tail, PageFlags::R).is_err());
            assert!(tail[0].is_none() && tail[1].is_some());
        }
        assert_eq!(free_frames(), before, "map_absent must not leak frames or tables");
    })
}

/// The three user copies, as `copy(vm, va, len) -> Result<(), UserFault>`,
/// with the direction each one checks (`true`: writes user memory).
type Copy = fn(&VmSpace, usize, usize) -> Result<(), UserFault>;
const COPIES: [(&str, Copy, bool); 3] = [
    (
        "read_bytes",
        |vm, va, len| vm.read_bytes(va, &mut vec![0; len]),
        false,
    ),
    (
        "write_bytes",
        |vm, va, len| vm.write_bytes(va, &vec![0x5a; len]),
        true,
    ),
    ("fill_zero", |vm, va, len| vm.fill_zero(va, len), true),
];

/// The hang of issue 11: a copy that starts in a mapped page and runs past
/// the end of user space must fault at an address outside user space, not
/// at its (mapped, "resolvable") start, and must copy nothing.
#[test]
fn vm_space_copies_past_the_end_of_user_space_fault_outside_it() {
    sim::run(move || {
        let before = free_frames();
        {
            let vm = VmSpace::new().unwrap();
            let top = USER_SPACE_END - PAGE_SIZE;
            let last = UFrame::alloc_zeroed().unwrap();
            vm.map(top, last.clone(), PageFlags::RW).unwrap();
            vm.map(
                top - PAGE_SIZE,
                UFrame::alloc_zeroed().unwrap(),
                PageFlags::RW,
            )
            .unwrap();
            for (name, copy, write) in COPIES {
                // Ending exactly at the end of user space: fine.
                assert_eq!(copy(&vm, top, PAGE_SIZE), Ok(()), "{name}: whole last page");
                assert_eq!(
                    copy(&vm, USER_SPACE_END - 1, 1),
                    Ok(()),
                    "{name}: last byte"
                );
                assert_eq!(
                    copy(&vm, top - 0x20, 0x20 + PAGE_SIZE),
                    Ok(()),
                    "{name}: across"
                );
                let outside = |addr| Err(UserFault { addr, write });
                // One byte past, the 0x1020 bytes from the last 0x20 of
                // a page, and far past (1 MiB: read/write need a buffer).
                for (va, len) in [
                    (top, PAGE_SIZE + 1),
                    (USER_SPACE_END - 1, 2),
                    (top - 0x20, 0x1020 + 1),
                    (USER_SPACE_END - 0x20, 0x1020),
                    (top - PAGE_SIZE, 1 << 20),
                ] {
                    assert_eq!(
                        copy(&vm, va, len),
                        outside(USER_SPACE_END),
                        "{name}: {va:#x}+{len:#x}"
                    );
                }
                // Starting at or past the end: the start itself is outside.
                for va in [
                    USER_SPACE_END,
                    USER_SPACE_END + 1,
                    0xffff_8000_0000_0000,
                    usize::MAX,
                ] {
                    assert_eq!(copy(&vm, va, 1), outside(va), "{name}: start {va:#x}");
                    assert!(copy(&vm, va, 1).unwrap_err().is_outside_user_space());
                }
            }
            // Lengths only `fill_zero` can take: very far past, and wrapping
            // around the address space.
            for len in [1 << 40, usize::MAX - top + 1, usize::MAX] {
                assert_eq!(
                    vm.fill_zero(top, len),
                    Err(UserFault {
                        addr: USER_SPACE_END,
                        write: true
                    }),
                    "fill_zero {len:#x}"
                );
            }
            // A refused write changed nothing (fill_zero and write_bytes above
            // wrote 0 and 0x5a over the whole page; put a marker in and check it
            // survives the refused copies).
            vm.write_bytes(top, &[7; 16]).unwrap();
            assert_eq!(
                vm.write_bytes(top, &[9; PAGE_SIZE + 1]).unwrap_err().addr,
                USER_SPACE_END
            );
            assert_eq!(
                vm.fill_zero(top, PAGE_SIZE + 1).unwrap_err().addr,
                USER_SPACE_END
            );
            let mut got = [0u8; 16];
            last.read_bytes(0, &mut got).unwrap();
            assert_eq!(got, [7; 16], "a copy leaving user space wrote memory");
            // Within user space the fault names the first byte that faulted,
            // not the start of the copy.
            vm.unmap(top - PAGE_SIZE);
            for (name, copy, write) in COPIES {
                assert_eq!(
                    copy(&vm, top - 0x10, 0x20),
                    Err(UserFault {
                        addr: top - 0x10,
                        write
                    }),
                    "{name}"
                );
            }
            vm.protect(top, PageFlags::R);
            vm.map(
                top - PAGE_SIZE,
                UFrame::alloc_zeroed().unwrap(),
                PageFlags::RW,
            )
            .unwrap();
            for (name, copy, write) in COPIES {
                let want = if write {
                    Err(UserFault { addr: top, write })
                } else {
                    Ok(())
                };
                assert_eq!(copy(&vm, top - 0x10, 0x20), want, "{name}");
                assert_eq!(copy(&vm, top - 0x10, 0x10), Ok(()), "{name}");
            }
        }
        assert_eq!(free_frames(), before);
    })
}

#[test]
fn slab_hands_out_distinct_aligned_slots_and_takes_them_back() {
    sim::run(move || {
        let before = free_frames();
        let mut slab = Slab::new(64).unwrap();
        assert_eq!(slab.capacity(), 64);
        let mut slots = Vec::new();
        while let Some(s) = slab.alloc() {
            assert_eq!(s.size(), 64);
            slots.push(s);
        }
        assert_eq!(slots.len(), 64);
        assert!(slab.is_full());
        let other = Slab::new(64).unwrap();
        let first = slots.pop().unwrap();
        assert!(!other.contains(&first));
        assert!(slab.contains(&first));
        slab.dealloc(first).unwrap();
        for s in slots.drain(..) {
            slab.dealloc(s).unwrap();
        }
        assert!(slab.is_empty());
        drop(slab);
        drop(other);
        assert_eq!(free_frames(), before);
        assert!(Slab::new(24).is_err(), "slot sizes must be powers of two");
        assert!(Slab::new(8192).is_err());
    })
}

#[test]
fn kernel_frames_are_counted_per_purpose() {
    sim::run(move || {
        let (k, untyped) = (kernel_frames(), untyped_frames());
        let s = Slab::new(64).unwrap();
        let big = super::HeapSlot::alloc_large(3 * PAGE_SIZE - 1).unwrap();
        let seg = USegment::alloc_zeroed(2).unwrap();
        let vm = VmSpace::new().unwrap();
        vm.map(0x40_0000, UFrame::alloc_zeroed().unwrap(), PageFlags::RW)
            .unwrap();
        let now = kernel_frames();
        assert_eq!(now.slab, k.slab + 1);
        assert_eq!(now.heap_large, k.heap_large + 3);
        assert_eq!(untyped_frames(), untyped + 3);
        // The root and one table per level below it.
        assert_eq!(now.page_table, k.page_table + 4);
        assert_eq!(now.kernel_stack, k.kernel_stack);
        drop((s, seg, vm));
        big.free_large();
        assert_eq!(kernel_frames(), k);
        assert_eq!(untyped_frames(), untyped);
    })
}

#[test]
fn slab_with_live_slots_is_never_freed() {
    sim::run(move || {
        let before = free_frames();
        let mut slab = Slab::new(128).unwrap();
        let _live = slab.alloc().unwrap();
        drop(slab); // invariant 9: the page must stay allocated
        assert_eq!(free_frames(), before - 1);
    })
}

#[test]
fn slab_list_finds_the_slab_of_a_slot() {
    sim::run(move || {
        let mut list = SlabList::new();
        let mut other = SlabList::new();
        list.push(Slab::new(32).unwrap());
        list.push(Slab::new(32).unwrap());
        let (slot, full) = list.alloc_front().unwrap();
        assert!(!full);
        assert!(
            other.take_containing(&slot).is_none(),
            "slot attributed to the wrong list"
        );
        let mut slab = list.take_containing(&slot).unwrap();
        assert_eq!(list.len(), 1);
        slab.dealloc(slot).unwrap();
        other.push(slab);
        while let Some(s) = list.pop() {
            drop(s);
        }
        while let Some(s) = other.pop() {
            drop(s);
        }
    })
}

#[test]
fn slab_list_frees_in_place_and_releases_an_emptied_slab_only_on_request() {
    sim::run(move || {
        let before = free_frames();
        let mut list = SlabList::new();
        let mut other = SlabList::new();
        other.push(Slab::new(32).unwrap());
        list.push(Slab::new(32).unwrap());
        let (a, _) = list.alloc_front().unwrap();
        let (b, _) = list.alloc_front().unwrap();
        assert_ne!(a.size(), 0);
        // A slot of a slab the list does not hold is given back untouched.
        let a = other.dealloc_in(a, true).unwrap_err();
        assert_eq!(other.len(), 1);
        // A slot of a slab of this list goes back in place: the slab stays.
        assert!(list.dealloc_in(a, true).unwrap().is_none());
        assert_eq!(list.len(), 1);
        // The freed slot is handed out again first.
        let (a, _) = list.alloc_front().unwrap();
        assert!(list.dealloc_in(a, false).unwrap().is_none());
        // The last live slot empties the slab: kept when not asked...
        assert!(list.dealloc_in(b, false).unwrap().is_none());
        assert_eq!(list.len(), 1);
        // ...unlinked and returned when asked.
        let (b, _) = list.alloc_front().unwrap();
        let slab = list.dealloc_in(b, true).unwrap().expect("emptied slab");
        assert!(slab.is_empty());
        assert!(list.is_empty());
        drop(slab);
        while let Some(s) = other.pop() {
            drop(s);
        }
        assert_eq!(free_frames(), before);
    })
}

#[test]
fn slab_list_refuses_to_free_a_slot_of_another_size_or_a_large_block() {
    sim::run(move || {
        let mut small = SlabList::new();
        small.push(Slab::new(32).unwrap());
        let mut big = SlabList::new();
        big.push(Slab::new(64).unwrap());
        let (s, _) = big.alloc_front().unwrap();
        let s = small.dealloc_in(s, true).unwrap_err();
        let block = super::HeapSlot::alloc_large(100).unwrap();
        let block = small.dealloc_in(block, true).unwrap_err();
        let block = SlabList::new().dealloc_in(block, true).unwrap_err();
        block.free_large();
        let slab = big.dealloc_in(s, true).unwrap().expect("emptied");
        drop(slab);
        while let Some(x) = small.pop() {
            drop(x);
        }
    })
}

#[test]
fn usegment_is_contiguous_and_bounds_checked() {
    sim::run(move || {
        let seg = USegment::alloc_zeroed(3).unwrap();
        seg.write_bytes(PAGE_SIZE - 2, b"abcd").unwrap();
        let f = seg.frame(1).unwrap();
        let mut b = [0u8; 2];
        f.read_bytes(0, &mut b).unwrap();
        assert_eq!(&b, b"cd");
        assert!(seg.frame(3).is_none());
        assert!(seg.read_bytes(3 * PAGE_SIZE - 1, &mut b).is_err());
    })
}

/// Sets the next `SlabList` id for the life of the value, then restores
/// the counter (also when the test panics).
struct ListIdCounter(u64);

impl ListIdCounter {
    fn set(id: u64) -> ListIdCounter {
        let saved = heap::next_list_id();
        heap::set_next_list_id(id);
        ListIdCounter(saved)
    }
}

impl Drop for ListIdCounter {
    fn drop(&mut self) {
        heap::set_next_list_id(self.0);
    }
}

#[test]
fn slab_list_ids_stay_unique_after_2_pow_32_lists() {
    sim::run(move || {
        let mut a = SlabList::new();
        let a_id = heap::next_list_id();
        a.push(Slab::new(64).unwrap());
        a.push(Slab::new(64).unwrap());
        let (slot, _) = a.alloc_front().unwrap();
        // 2^32 lists later, a new list must still have an id of its own.
        let counter = ListIdCounter::set(a_id + (1 << 32));
        let mut b = SlabList::new();
        b.push(Slab::new(64).unwrap());
        drop(counter);
        assert!(
            b.take_containing(&slot).is_none(),
            "a list took a slab of another list with the same id"
        );
        assert_eq!(b.len(), 1);
        let mut slab = a.take_containing(&slot).unwrap();
        slab.dealloc(slot).unwrap();
        for s in core::iter::once(slab).chain(core::iter::from_fn(|| a.pop())) {
            drop(s);
        }
        while let Some(s) = b.pop() {
            drop(s);
        }
    })
}

#[test]
#[should_panic(expected = "SlabList ids exhausted")]
fn slab_list_id_exhaustion_panics_instead_of_wrapping() {
    sim::run(move || {
        let _counter = ListIdCounter::set(u64::MAX);
        let mut list = SlabList::new();
        // Taking an id fails before the slab is linked; unwinding frees it.
        list.push(Slab::new(64).unwrap());
    })
}

#[test]
fn frame_heap_places_objects_in_fitting_slots_and_takes_them_back() {
    use core::alloc::{GlobalAlloc, Layout};
    sim::run(move || {
        let heap = super::heap::global::FrameHeap;
        let mut live = Vec::new();
        for (size, align) in [
            (1, 1),
            (24, 8),
            (100, 64),
            (2048, 2048),
            (3000, 8),
            (9000, 4096),
        ] {
            let layout = Layout::from_size_align(size, align).unwrap();
            // SAFETY (test): a non-zero-sized layout.
            let p = unsafe { heap.alloc(layout) };
            assert!(
                !p.is_null() && p.addr().is_multiple_of(align),
                "{size}/{align}"
            );
            // SAFETY (test): the block is ours and `size` bytes long; Miri
            // checks that it lies inside the simulated RAM.
            unsafe {
                p.write_bytes(size as u8, size);
                assert_eq!(p.add(size - 1).read(), size as u8);
            }
            live.push((p, layout));
        }
        // Distinct blocks do not overlap.
        for (i, (p, l)) in live.iter().enumerate() {
            for (q, m) in &live[i + 1..] {
                assert!(p.addr() + l.size() <= q.addr() || q.addr() + m.size() <= p.addr());
            }
        }
        let before = free_frames();
        let (big, big_layout) = live.pop().unwrap();
        // SAFETY (test): allocated above with this layout, freed once.
        unsafe { heap.dealloc(big, big_layout) };
        assert_eq!(
            free_frames(),
            before + 3,
            "a large block gives its frames back"
        );
        for (p, l) in live {
            // SAFETY (test): as above.
            unsafe { heap.dealloc(p, l) };
        }
    });
}

#[test]
#[should_panic(expected = "is not a heap allocation")]
fn frame_heap_refuses_to_free_what_it_did_not_allocate() {
    use core::alloc::{GlobalAlloc, Layout};
    sim::run(move || {
        let f = UFrame::alloc_zeroed().unwrap();
        let ptr = crate::mm::paddr_to_ptr::<u8>(f.paddr());
        // SAFETY (test): the point is that the heap checks the pointer
        // against frame metadata and refuses it.
        unsafe { super::heap::global::FrameHeap.dealloc(ptr, Layout::new::<u64>()) };
    });
}

#[test]
fn fill_zero_clears_exactly_the_range_asked_for() {
    sim::run(move || {
        let f = UFrame::alloc_zeroed().unwrap();
        f.write_bytes(0, &[0xee; PAGE_SIZE]).unwrap();
        f.fill_zero(100, 50).unwrap();
        let mut b = [0u8; 4];
        f.read_bytes(98, &mut b).unwrap();
        assert_eq!(b, [0xee, 0xee, 0, 0]);
        f.read_bytes(148, &mut b).unwrap();
        assert_eq!(b, [0, 0, 0xee, 0xee]);
        assert!(f.fill_zero(PAGE_SIZE - 1, 2).is_err());
        // Through an address space, across a page boundary.
        let vm = VmSpace::new().unwrap();
        vm.map(0x1000, f.clone(), PageFlags::RW).unwrap();
        let g = UFrame::alloc_zeroed().unwrap();
        g.write_bytes(0, &[0xee; 16]).unwrap();
        vm.map(0x2000, g.clone(), PageFlags::RW).unwrap();
        vm.fill_zero(0x1ff8, 16).unwrap();
        let mut c = [0xffu8; 24];
        vm.read_bytes(0x1ff4, &mut c).unwrap();
        assert_eq!(c[..4], [0xee; 4]);
        assert_eq!(c[4..20], [0; 16]);
        assert_eq!(c[20..], [0xee; 4]);
        assert!(vm.fill_zero(0x2ff8, 16).is_err(), "0x3000 is not mapped");
    });
}

#[test]
fn untyped_allocations_leave_the_kernel_reserve_alone() {
    use super::frame_alloc::{set_untyped_reserve, untyped_reserve};
    sim::run(move || {
        let old = untyped_reserve();
        let free = free_frames();
        // Exactly one frame above the reserve: one untyped page fits.
        set_untyped_reserve(free - 1);
        let one = UFrame::alloc_zeroed().unwrap();
        assert!(UFrame::alloc_zeroed().is_err());
        let copy = UFrame::alloc_copy_of(&one);
        assert!(copy.is_err());
        assert!(USegment::alloc_zeroed(1).is_err());
        assert_eq!(free_frames(), free - 1);
        // The kernel's own allocations may dip into the reserve.
        let s = Slab::new(64).unwrap();
        let vm = VmSpace::new().unwrap();
        assert!(free_frames() < free - 1);
        drop((s, vm));
        // Freed user memory is usable again.
        drop(one);
        let again = UFrame::alloc_zeroed().unwrap();
        set_untyped_reserve(old);
        drop(again);
        assert_eq!(free_frames(), free);
    })
}

/// fork's one-walk copy: every leaf is in the child, each frame gains one
/// reference, private writable pages turn read-only in both spaces, shared
/// ones stay writable, and dropping the child gives everything back.
#[test]
fn vm_space_fork_copies_leaves_and_write_protects_private_pages() {
    sim::run(move || {
        let before = free_frames();
        {
            let parent = VmSpace::new().unwrap();
            // Leaves in one L1 table, in another L1 table, another L2 table
            // and another root entry, with every kind of rights.
            let layout: [(usize, PageFlags); 5] = [
                (0x1000, PageFlags::RW),
                (0x2000, PageFlags::R),
                (0x20_0000, PageFlags::RWX),
                (0x4000_0000, PageFlags::RX),
                (0x80_0000_0000, PageFlags::RW),
            ];
            let shared_va = 0x80_0000_0000;
            let frames: Vec<UFrame> = layout
                .iter()
                .map(|&(va, flags)| {
                    let f = UFrame::alloc_zeroed().unwrap();
                    f.write_bytes(0, &va.to_le_bytes()).unwrap();
                    parent.map(va, f.clone(), flags).unwrap();
                    f
                })
                .collect();
            let mut asked = Vec::new();
            let child = parent
                .fork(|va| {
                    asked.push(va);
                    va == shared_va
                })
                .unwrap();
            // Only writable pages are asked about.
            assert_eq!(asked, [0x1000, 0x20_0000, shared_va]);
            for (&(va, flags), f) in layout.iter().zip(&frames) {
                assert_eq!(f.ref_count(), 3, "{va:#x}: handle, parent and child");
                let expect = PageFlags {
                    write: flags.write && va == shared_va,
                    ..flags
                };
                for (who, space) in [("parent", &parent), ("child", &child)] {
                    let (g, got) = space.query(va).unwrap();
                    assert_eq!(g.paddr(), f.paddr(), "{who} {va:#x}");
                    assert_eq!(got, expect, "{who} {va:#x}");
                    let mut word = [0u8; 8];
                    space.read_bytes(va, &mut word).unwrap();
                    assert_eq!(usize::from_le_bytes(word), va);
                }
            }
            assert_eq!(child.mappings().len(), layout.len());
            // Copy-on-write pages refuse stores in both; the shared one
            // takes them and both see it.
            for space in [&parent, &child] {
                assert!(space.write_bytes(0x1000, &[1]).is_err());
                assert!(space.write_bytes(0x20_0000, &[1]).is_err());
            }
            child.write_bytes(shared_va, &[0xaa]).unwrap();
            let mut b = [0u8; 1];
            parent.read_bytes(shared_va, &mut b).unwrap();
            assert_eq!(b, [0xaa]);
            drop(child);
            for f in &frames {
                assert_eq!(f.ref_count(), 2);
            }
        }
        assert_eq!(free_frames(), before, "fork and drop must not leak");
    })
}

/// Running out of page-table frames half-way through fork: an error, the
/// references the partial copy took are given back, and nothing leaks.
#[test]
fn vm_space_fork_out_of_memory_midway_leaks_nothing() {
    sim::run(move || {
        let before = free_frames();
        {
            let parent = VmSpace::new().unwrap();
            let a = UFrame::alloc_zeroed().unwrap();
            let b = UFrame::alloc_zeroed().unwrap();
            parent.map(0x1000, a.clone(), PageFlags::RW).unwrap();
            parent
                .map(0x80_0000_0000, b.clone(), PageFlags::RW)
                .unwrap();
            // Leave 5 frames: the child's root and three tables for the
            // first leaf, one more table for the second: its L2 fails.
            let mut hoard = Vec::new();
            while let Some(f) = super::frame::Frame::alloc_zeroed(FrameUsage::PageTable) {
                hoard.push(f);
            }
            // (The vector's own growth may have given some frames back.)
            while free_frames() < 5 {
                drop(hoard.pop());
            }
            assert_eq!(free_frames(), 5);
            assert!(parent.fork(|_| false).is_err());
            assert_eq!(a.ref_count(), 2, "the partial child's reference is gone");
            assert_eq!(b.ref_count(), 2);
            assert_eq!(free_frames(), 5, "the partial child's tables are freed");
            drop(hoard);
            // The parent still works: its pages are read-only at worst.
            let mut word = [0u8; 8];
            parent.read_bytes(0x1000, &mut word).unwrap();
            let child = parent.fork(|_| false).unwrap();
            assert_eq!(a.ref_count(), 3);
            drop(child);
        }
        assert_eq!(free_frames(), before);
    })
}

/// munmap's one-pass removal: only the range goes, gaps and missing tables
/// are skipped, the frames are released and the count is right.
#[test]
fn vm_space_unmap_range_removes_exactly_the_range() {
    sim::run(move || {
        let before = free_frames();
        {
            let vm = VmSpace::new().unwrap();
            let vas = [
                0x1000,
                0x3000,
                0x1f_f000,
                0x20_0000,
                0x4000_0000,
                0x4000_1000,
            ];
            let frames: Vec<UFrame> = vas
                .iter()
                .map(|&va| {
                    let f = UFrame::alloc_zeroed().unwrap();
                    vm.map(va, f.clone(), PageFlags::RW).unwrap();
                    f
                })
                .collect();
            // Crosses an L1 table boundary and a range with no tables.
            assert_eq!(vm.unmap_range(0x2000, 0x4000_1000), 4);
            let left: Vec<usize> = vm.mappings().iter().map(|m| m.0).collect();
            assert_eq!(left, [0x1000, 0x4000_1000]);
            for (va, f) in vas.iter().zip(&frames) {
                let mapped = left.contains(va);
                assert_eq!(f.ref_count(), if mapped { 2 } else { 1 }, "{va:#x}");
            }
            assert_eq!(vm.unmap_range(0x2000, 0x4000_1000), 0, "nothing left there");
            // Refused: unaligned, or leaving user space.
            assert_eq!(vm.unmap_range(0x1001, 0x2000), 0);
            assert_eq!(vm.unmap_range(0x1000, USER_SPACE_END + PAGE_SIZE), 0);
            assert_eq!(vm.unmap_range(0, USER_SPACE_END), 2);
            assert!(vm.mappings().is_empty());
        }
        assert_eq!(free_frames(), before);
    })
}

#[test]
fn vm_space_writes_a_run_of_frame_pieces_across_user_pages() {
    sim::run(move || {
        let vm = VmSpace::new().unwrap();
        // Two user pages, then a hole.
        let base = 0x20_0000;
        let (u0, u1) = (UFrame::alloc_zeroed().unwrap(), UFrame::alloc_zeroed().unwrap());
        vm.map(base, u0.clone(), PageFlags::RW).unwrap();
        vm.map(base + PAGE_SIZE, u1.clone(), PageFlags::RW).unwrap();
        // A run of three source pages read from the tail of the first to
        // the head of the third; the user range is not aligned with them,
        // so pages and user pages split each other.
        let srcs: Vec<UFrame> = (1..=3u8)
            .map(|k| {
                let f = UFrame::alloc_zeroed().unwrap();
                f.write_bytes(0, &[k; PAGE_SIZE]).unwrap();
                f
            })
            .collect();
        let va = base + PAGE_SIZE - 1000;
        vm.write_from_frames(va, &srcs, PAGE_SIZE - 100, 100 + PAGE_SIZE + 50).unwrap();
        let mut got = vec![0u8; 100 + PAGE_SIZE + 50];
        vm.read_bytes(va, &mut got).unwrap();
        assert!(got[..100].iter().all(|b| *b == 1));
        assert!(got[100..100 + PAGE_SIZE].iter().all(|b| *b == 2));
        assert!(got[100 + PAGE_SIZE..].iter().all(|b| *b == 3));
        // Into the hole: the fault names its first byte; the bytes before
        // it were copied.
        let va = base + 2 * PAGE_SIZE - 60;
        assert_eq!(
            vm.write_from_frames(va, &srcs[1..], PAGE_SIZE - 50, 100),
            Err(UserFault { addr: base + 2 * PAGE_SIZE, write: true })
        );
        let mut back = [0u8; 60];
        vm.read_bytes(va, &mut back).unwrap();
        assert!(back[..50].iter().all(|b| *b == 2) && back[50..].iter().all(|b| *b == 3));
        // A range past the end of user space copies nothing.
        assert!(vm.write_from_frames(USER_SPACE_END - 10, &srcs, 0, 20).unwrap_err().is_outside_user_space());
    });
}

#[test]
fn vm_space_copy_across_last_level_tables_uses_each_regions_table() {
    sim::run(move || {
        let vm = VmSpace::new().unwrap();
        // The last page of one 2 MiB region and the first of the next: two
        // last-level tables. Then a third page in a region with no table.
        let (lo, hi) = (0x3f_f000, 0x40_0000);
        let (a, b) = (
            UFrame::alloc_zeroed().unwrap(),
            UFrame::alloc_zeroed().unwrap(),
        );
        a.write_bytes(0, &[1; PAGE_SIZE]).unwrap();
        b.write_bytes(0, &[2; PAGE_SIZE]).unwrap();
        vm.map(lo, a.clone(), PageFlags::RW).unwrap();
        vm.map(hi, b.clone(), PageFlags::RW).unwrap();
        // Same page index in the second region is unmapped in the first
        // one's table: reusing the first table past the boundary would
        // miss `hi` (or read the wrong page).
        let mut got = [0u8; 32];
        vm.read_bytes(hi - 16, &mut got).unwrap();
        assert_eq!(got[..16], [1; 16]);
        assert_eq!(got[16..], [2; 16]);
        // Writes cross the boundary too.
        vm.write_bytes(hi - 8, &[7; 16]).unwrap();
        let mut back = [0u8; 8];
        a.read_bytes(PAGE_SIZE - 8, &mut back).unwrap();
        assert_eq!(back, [7; 8]);
        b.read_bytes(0, &mut back).unwrap();
        assert_eq!(back, [7; 8]);
        // Into a region with no last-level table: the fault names its
        // first byte, the bytes before it were copied.
        let far = 0x60_0000;
        vm.map(far - PAGE_SIZE, UFrame::alloc_zeroed().unwrap(), PageFlags::RW)
            .unwrap();
        assert_eq!(
            vm.write_bytes(far - 4, &[5; 8]),
            Err(UserFault {
                addr: far,
                write: true
            })
        );
        let (f, _) = vm.query(far - PAGE_SIZE).unwrap();
        f.read_bytes(PAGE_SIZE - 4, &mut back[..4]).unwrap();
        assert_eq!(back[..4], [5; 4]);
    })
}
