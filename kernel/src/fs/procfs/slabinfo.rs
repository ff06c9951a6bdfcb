//! /proc/slabinfo: the kernel heap per cache, in Linux's format version 2.1
//! (slabinfo(5)), so that a leak of kernel objects shows.
//!
//! The caches are the heap policy's size classes, named as Linux names its
//! kmalloc caches (`kmalloc-16` ... `kmalloc-2k`); every slab is one page.
//! Allocations larger than a slot take whole frames: `kmalloc-large` counts
//! them one page per object.

use alloc::string::String;
use alloc::vec::Vec;
use core::fmt::Write;

use frame::mm::PAGE_SIZE;

use crate::error::Result;

/// Kernel heap in use, in pages: slab pages and large blocks, as frame
/// counts them (/proc/meminfo's Slab).
pub(super) fn heap_pages() -> usize {
    let k = frame::mm::frame_alloc::kernel_frames();
    k.slab + k.heap_large
}

fn cache_name(obj_size: usize) -> String {
    if obj_size >= 1024 {
        alloc::format!("kmalloc-{}k", obj_size / 1024)
    } else {
        alloc::format!("kmalloc-{obj_size}")
    }
}

pub(super) fn slabinfo() -> Result<Vec<u8>> {
    let mut s = String::from(
        "slabinfo - version: 2.1\n# name            <active_objs> <num_objs> <objsize> \
         <objperslab> <pagesperslab> : tunables <limit> <batchcount> <sharedfactor> \
         : slabdata <active_slabs> <num_slabs> <sharedavail>\n",
    );
    let mut line = |name: &str, active: usize, num: usize, size: usize, slabs: usize| {
        let _ = writeln!(
            s,
            "{name:<17} {active:>6} {num:>6} {size:>6} {:>4} {:>4} : tunables {:>4} {:>4} {:>4} \
             : slabdata {slabs:>6} {slabs:>6} {:>6}",
            PAGE_SIZE / size,
            1,
            0,
            0,
            0,
            0
        );
    };
    // Largest first, as Linux lists its kmalloc caches.
    let (_, large_frames) = crate::HEAP.large();
    line(
        "kmalloc-large",
        large_frames,
        large_frames,
        PAGE_SIZE,
        large_frames,
    );
    for c in crate::HEAP.caches().iter().rev() {
        line(
            &cache_name(c.obj_size),
            c.active_objs,
            c.num_objs,
            c.obj_size,
            c.num_slabs,
        );
    }
    Ok(s.into_bytes())
}
