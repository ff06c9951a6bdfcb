//! `ktest=user_copy`: frame's user copies on a loaded address space (the
//! path through the user address, with its exception fixup) stop at the
//! exact first byte the MMU refuses, in both directions and for every
//! variant, whatever the alignment, and leave the bytes around untouched.
//!
//! The space is loaded the way the kernel loads it: by running one
//! `syscall` instruction in it in user mode. Layout, from `BASE`:
//! a read-write-execute page (the code, then data), a hole, a read-write
//! page, a read-only page.

use alloc::vec;
use alloc::vec::Vec;

use frame::mm::{PAGE_SIZE, PageFlags, UFrame, USER_SPACE_END, UserFault, VmSpace};
use frame::user::{ReturnReason, UserContext};

const BASE: usize = 0x4000_0000;
const HOLE: usize = BASE + PAGE_SIZE;
const RW: usize = BASE + 2 * PAGE_SIZE;
const RO: usize = BASE + 3 * PAGE_SIZE;

fn pattern(i: usize) -> u8 {
    (i.wrapping_mul(7) + 3) as u8
}

fn frame_with(bytes: impl Fn(usize) -> u8) -> UFrame {
    let f = UFrame::alloc_zeroed().expect("frame");
    let data: Vec<u8> = (0..PAGE_SIZE).map(bytes).collect();
    f.write_bytes(0, &data).expect("fill");
    f
}

fn frame_bytes(f: &UFrame) -> Vec<u8> {
    let mut v = vec![0u8; PAGE_SIZE];
    f.read_bytes(0, &mut v).expect("read frame");
    v
}

fn fault(addr: usize, write: bool) -> Result<(), UserFault> {
    Err(UserFault { addr, write })
}

/// Runs the checks; returns how many failed (each is printed).
pub fn run() -> usize {
    let mut failed = 0;
    let mut check = |ok: bool, what: &str| {
        if !ok {
            frame::println!("trellis: ktest user_copy: FAILED: {what}");
            failed += 1;
        }
    };

    let vm = VmSpace::new().expect("vmspace");
    // `syscall` at BASE, the pattern after it.
    let code = frame_with(|i| match i {
        0 => 0x0f,
        1 => 0x05,
        _ => pattern(i),
    });
    let rw = frame_with(pattern);
    let ro = frame_with(|i| pattern(i) ^ 0xff);
    vm.map(BASE, code.clone(), PageFlags::RWX)
        .expect("map code");
    vm.map(RW, rw.clone(), PageFlags::RW).expect("map rw");
    vm.map(RO, ro.clone(), PageFlags::R).expect("map ro");

    let mut ctx = UserContext::new();
    ctx.set_rip(BASE as u64);
    ctx.set_rsp(HOLE as u64);
    let ran = ctx.execute(&vm);
    check(
        matches!(ran, ReturnReason::Syscall),
        "the user page's syscall came back",
    );

    // Reads: from 253 bytes below the hole (not quadword-aligned), 300.
    let mut buf = [0u8; 300];
    check(
        vm.read_bytes(HOLE - 253, &mut buf) == fault(HOLE, false),
        "a read running into the hole faults at its first byte",
    );
    check(
        (0..253).all(|i| buf[i] == pattern(PAGE_SIZE - 253 + i)),
        "a read running into the hole copied every byte before it",
    );
    check(
        buf[253..].iter().all(|b| *b == 0),
        "a read running into the hole wrote nothing past it",
    );
    let mut buf = [0u8; 10];
    check(
        vm.read_bytes(HOLE + 5, &mut buf) == fault(HOLE + 5, false),
        "a read starting in the hole faults at its start",
    );
    let mut buf = [0u8; 200];
    check(
        vm.read_bytes(RO - 77, &mut buf).is_ok()
            && (0..77).all(|i| buf[i] == pattern(PAGE_SIZE - 77 + i))
            && (77..200).all(|i| buf[i] == pattern(i - 77) ^ 0xff),
        "a read across a read-only page succeeds",
    );

    // Writes: into the hole, and into the read-only page.
    check(
        vm.write_bytes(HOLE - 253, &[0x5a; 300]) == fault(HOLE, true),
        "a write running into the hole faults at its first byte",
    );
    let c = frame_bytes(&code);
    check(
        c[PAGE_SIZE - 253..].iter().all(|b| *b == 0x5a)
            && c[PAGE_SIZE - 254] == pattern(PAGE_SIZE - 254),
        "a write running into the hole wrote exactly the bytes before it",
    );
    check(
        vm.write_bytes(RO - 77, &[0xa5; 200]) == fault(RO, true),
        "a write running into a read-only page faults at its first byte",
    );
    let (w, r) = (frame_bytes(&rw), frame_bytes(&ro));
    check(
        w[PAGE_SIZE - 77..].iter().all(|b| *b == 0xa5)
            && w[PAGE_SIZE - 78] == pattern(PAGE_SIZE - 78)
            && (0..PAGE_SIZE).all(|i| r[i] == pattern(i) ^ 0xff),
        "a write into a read-only page changed it or missed bytes before it",
    );
    check(
        vm.write_bytes(RO + 1, &[1]) == fault(RO + 1, true),
        "a one-byte write to a read-only page faults",
    );
    check(
        vm.fill_zero(HOLE - 13, 100) == fault(HOLE, true),
        "a zero-fill running into the hole faults at its first byte",
    );
    let c = frame_bytes(&code);
    check(
        c[PAGE_SIZE - 13..].iter().all(|b| *b == 0) && c[PAGE_SIZE - 14] == 0x5a,
        "a zero-fill into the hole zeroed exactly the bytes before it",
    );

    // Frame copies.
    let src = frame_with(|i| (i as u8) ^ 0x33);
    check(
        vm.write_from_frame(RO - 40, &src, 8, 100) == fault(RO, true),
        "write_from_frame into a read-only page faults at its first byte",
    );
    let w = frame_bytes(&rw);
    check(
        (0..40).all(|i| w[PAGE_SIZE - 40 + i] == ((8 + i) as u8) ^ 0x33),
        "write_from_frame copied the bytes before the fault",
    );
    let dst = UFrame::alloc_zeroed().expect("frame");
    check(
        vm.read_into_frame(HOLE - 41, &dst, 3, 100) == fault(HOLE, false),
        "read_into_frame from the hole faults at its first byte",
    );
    let d = frame_bytes(&dst);
    check(
        (0..41).all(|i| d[3 + i] == c[PAGE_SIZE - 41 + i]) && d[44..].iter().all(|b| *b == 0),
        "read_into_frame copied exactly the bytes before the fault",
    );
    let run = [frame_with(|i| i as u8), frame_with(|i| !(i as u8))];
    check(
        vm.write_from_frames(RW + 100, &run, 4000, PAGE_SIZE) == fault(RO, true),
        "write_from_frames into a read-only page faults at its first byte",
    );
    let w = frame_bytes(&rw);
    check(
        (0..PAGE_SIZE - 100).all(|i| {
            let at = 4000 + i;
            let want = if at < PAGE_SIZE {
                at as u8
            } else {
                !((at - PAGE_SIZE) as u8)
            };
            w[100 + i] == want
        }),
        "write_from_frames copied every byte before the fault, across its pages",
    );

    // An odd-sized, odd-aligned round trip inside a page.
    let data: Vec<u8> = (0..1001).map(|i| (i * 13) as u8).collect();
    let mut back = vec![0u8; 1001];
    check(
        vm.write_bytes(RW + 7, &data).is_ok()
            && vm.read_bytes(RW + 7, &mut back).is_ok()
            && back == data,
        "an unaligned round trip inside a page",
    );

    // Ranges leaving user space are refused before anything is copied.
    let mut buf = [0u8; 16];
    check(
        vm.read_bytes(USER_SPACE_END - 8, &mut buf) == fault(USER_SPACE_END, false),
        "a read crossing USER_SPACE_END",
    );
    check(
        vm.write_bytes(usize::MAX - 3, &[0; 8]) == fault(usize::MAX - 3, true),
        "a write whose end overflows",
    );
    check(
        vm.read_bytes(USER_SPACE_END, &mut []).is_ok(),
        "an empty read at USER_SPACE_END",
    );
    drop(vm);
    failed
}
