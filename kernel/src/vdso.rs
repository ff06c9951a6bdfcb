//! The vDSO (vdso(7)): a small shared object, built from `kernel/vdso/` by
//! build.rs, that every process gets mapped, with a data page ("[vvar]")
//! right below it. glibc and musl find it through AT_SYSINFO_EHDR and call
//! its `clock_gettime`, `gettimeofday` and `time` instead of the system
//! calls: they read the TSC and the clock parameters from the data page
//! and compute exactly what `frame::timer::monotonic_ns` does.
//!
//! The pages are shared by all processes and mapped private and read-only:
//! a process that makes them writable (mprotect) and stores to them gets
//! its own copy, as with any private mapping, and never changes another's.

use alloc::sync::Arc;
use alloc::vec::Vec;
use core::sync::atomic::{Ordering, compiler_fence};

use frame::mm::{PAGE_SIZE, UFrame};
use frame::sync::Once;

use crate::error::{Errno, Error, Result};
use crate::mm::vmar::{Perms, SharedPages, ShmBacking, Vma};
use crate::mm::Vmar;

/// The shared object (one read-only, executable segment, no relocations).
static IMAGE: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/vdso.so"));

/// The data page's layout (kernel/vdso/vdso.c `struct vvar`).
const VVAR_SEQ: usize = 0;
const VVAR_SHIFT: usize = 4;
const VVAR_TSC_AT_BOOT: usize = 8;
const VVAR_MULT: usize = 16;
const VVAR_REALTIME_AT_BOOT: usize = 24;

/// The vDSO shifts by a constant (kernel/vdso/vdso.c `CLOCK_SHIFT`): one
/// `shrd` on its fast path instead of a shift by a loaded count. The data
/// page still carries the shift, for anything that reads it.
const _: () = assert!(frame::timer::CLOCK_SHIFT == 32, "kernel/vdso/vdso.c CLOCK_SHIFT must match");

struct Vdso {
    /// Page 0 is the data page, the image follows.
    pages: Arc<SharedPages>,
    vvar: UFrame,
    image_pages: usize,
    /// The sequence count of the data page (odd while it is written).
    seq: frame::sync::SpinLock<u32, { frame::sync::level::UNRANKED }>,
}

static VDSO: Once<Option<Vdso>> = Once::new();

/// Builds the pages at boot. Without them (no memory) processes start
/// without a vDSO, and the C library uses the system calls.
pub fn init() {
    VDSO.call_once(|| match build() {
        Ok(v) => Some(v),
        Err(e) => {
            frame::log_warn!("vdso: not available: {e:?}");
            None
        }
    });
    update_realtime();
}

fn build() -> Result<Vdso> {
    let vvar = UFrame::alloc_zeroed()?;
    let p = frame::timer::clock_params();
    vvar.write_bytes(VVAR_SHIFT, &p.shift.to_le_bytes())?;
    vvar.write_bytes(VVAR_TSC_AT_BOOT, &p.tsc_at_boot.to_le_bytes())?;
    vvar.write_bytes(VVAR_MULT, &p.mult.to_le_bytes())?;
    let mut frames = Vec::new();
    frames.push(vvar.clone());
    for chunk in IMAGE.chunks(PAGE_SIZE) {
        let f = UFrame::alloc_zeroed()?;
        f.write_bytes(0, chunk)?;
        frames.push(f);
    }
    let image_pages = frames.len() - 1;
    Ok(Vdso { pages: SharedPages::from_frames(frames), vvar, image_pages, seq: frame::sync::SpinLock::new(0) })
}

/// Publishes the wall-clock time at boot (at boot, and after every
/// clock_settime or settimeofday) under the sequence count.
pub fn update_realtime() {
    let Some(Some(v)) = VDSO.get() else { return };
    let boot = crate::time::realtime_at_boot_ns();
    let mut seq = v.seq.lock_irq_disabled();
    let write = |off: usize, bytes: &[u8]| {
        // The data page is in range: these writes cannot fail.
        let _ = v.vvar.write_bytes(off, bytes);
        compiler_fence(Ordering::SeqCst);
    };
    *seq = seq.wrapping_add(1);
    write(VVAR_SEQ, &seq.to_le_bytes());
    write(VVAR_REALTIME_AT_BOOT, &boot.to_le_bytes());
    *seq = seq.wrapping_add(1);
    write(VVAR_SEQ, &seq.to_le_bytes());
}

/// Maps the data page and the image into `vm` below its mmap base;
/// returns the image's address (AT_SYSINFO_EHDR), or None if there is no
/// vDSO.
pub fn map_into(vm: &Vmar) -> Result<Option<usize>> {
    let Some(Some(v)) = VDSO.get() else { return Ok(None) };
    let len = (1 + v.image_pages) * PAGE_SIZE;
    let start = vm.free_range(len).ok_or(Error::new(Errno::ENOMEM))?;
    // As on Linux, the image may be made writable (a debugger's
    // breakpoints: the store copies the page), the data page may not.
    let area = |offset: usize, start: usize, end: usize, perms: Perms, may_write: bool, name: &'static str| Vma {
        start,
        end,
        perms,
        shared: false,
        file: None,
        name,
        shm: Some(ShmBacking { pages: v.pages.clone(), offset, attach: None, may_write }),
        locked: false,
        may_write,
        account: false,
        noreserve: false,
    };
    vm.add_area(area(0, start, start + PAGE_SIZE, Perms { read: true, write: false, exec: false }, false, "[vvar]"))?;
    let image = start + PAGE_SIZE;
    vm.add_area(area(PAGE_SIZE, image, start + len, Perms { read: true, write: false, exec: true }, true, "[vdso]"))?;
    Ok(Some(image))
}
