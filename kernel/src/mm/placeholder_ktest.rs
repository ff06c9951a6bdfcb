//! `ktest=exit_placeholder`: the address space exited processes share
//! (`Vmar::placeholder`) is one object, and nothing can be mapped in it:
//! mmap (`map_area`, fixed or not), `add_area` and brk are refused, so a
//! thread still in mmap or brk when its process exits cannot leave pages
//! in it. A fresh `Vmar` given the same calls accepts them (the checks
//! would otherwise pass for the wrong reason).

use alloc::sync::Arc;

use super::MapLimits;
use super::vmar::{Perms, Vma, Vmar};
use crate::error::Errno;

fn anon(start: usize, end: usize) -> Vma {
    Vma {
        start,
        end,
        perms: Perms::RW,
        shared: false,
        file: None,
        name: "",
        shm: None,
        locked: false,
        may_write: true,
        account: false,
        noreserve: false,
    }
}

/// Runs the checks; returns how many failed (each is printed).
pub fn run() -> usize {
    let mut failed = 0;
    let mut check = |ok: bool, what: &str| {
        if !ok {
            frame::println!("trellis: ktest exit_placeholder: FAILED: {what}");
            failed += 1;
        }
    };
    let (Ok(p), Ok(q)) = (Vmar::placeholder(), Vmar::placeholder()) else {
        frame::println!("trellis: ktest exit_placeholder: FAILED: no placeholder");
        return 1;
    };
    check(Arc::ptr_eq(&p, &q), "two placeholders");
    check(p.is_sealed(), "placeholder not sealed");
    let lim = MapLimits::NONE;
    let r = p.map_area(0, 4096, false, false, anon(0, 0), &lim);
    check(
        matches!(r, Err(ref e) if e.errno() == Errno::ENOMEM),
        "map_area on the placeholder",
    );
    let r = p.map_area(0x4000_0000, 8192, true, false, anon(0, 0), &lim);
    check(
        matches!(r, Err(ref e) if e.errno() == Errno::ENOMEM),
        "fixed map_area on the placeholder",
    );
    let r = p.add_area(anon(0x5000_0000, 0x5000_1000));
    check(
        matches!(r, Err(ref e) if e.errno() == Errno::ENOMEM),
        "add_area on the placeholder",
    );
    check(p.brk(0x10_0000, &lim) == 0, "brk on the placeholder");
    check(
        p.areas().is_empty() && p.rss_pages() == 0,
        "the placeholder has areas or pages",
    );

    // The same calls on an ordinary address space succeed.
    match Vmar::new() {
        Ok(v) => {
            check(!v.is_sealed(), "a new Vmar is sealed");
            check(
                v.map_area(0, 4096, false, false, anon(0, 0), &lim).is_ok(),
                "map_area on a new Vmar",
            );
            check(
                v.add_area(anon(0x5000_0000, 0x5000_1000)).is_ok(),
                "add_area on a new Vmar",
            );
            check(v.brk(0x10_0000, &lim) == 0x10_0000, "brk on a new Vmar");
        }
        Err(_) => check(false, "no memory for a Vmar"),
    }
    failed
}
