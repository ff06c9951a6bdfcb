//! Simulated physical memory for host tests: a host allocation stands in for
//! RAM, the direct map points at it, and a simple allocator policy serves
//! frames. Tests that use it must hold [`lock`] (frame state is global).

use std::alloc::{Layout, alloc_zeroed};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard, Once};
use std::vec::Vec;

use super::frame_alloc::{FrameAllocPolicy, add_free_range, inject_policy};
use super::{PAGE_SIZE, meta, set_linear_base};

pub const SIM_BYTES: usize = 16 * 1024 * 1024;

/// A first-fit policy over a `Vec<bool>`; `force_pfn` makes it propose a
/// chosen frame, to test that frame refuses bad proposals.
pub struct TestPolicy {
    free: Mutex<Vec<bool>>,
    pub force_pfn: AtomicUsize,
}

impl FrameAllocPolicy for TestPolicy {
    fn add_free(&self, start: usize, count: usize) {
        let mut f = self.free.lock().unwrap();
        for p in start..start + count {
            if p < f.len() {
                f[p] = true;
            }
        }
    }

    fn alloc(&self, count: usize, _align: usize) -> Option<usize> {
        let forced = self.force_pfn.load(Ordering::Relaxed);
        if forced != 0 {
            return Some(forced);
        }
        let mut f = self.free.lock().unwrap();
        let start =
            (0..f.len().saturating_sub(count)).find(|&s| f[s..s + count].iter().all(|&b| b))?;
        f[start..start + count].iter_mut().for_each(|b| *b = false);
        Some(start)
    }

    fn dealloc(&self, start: usize, count: usize) {
        let mut f = self.free.lock().unwrap();
        f[start..start + count].iter_mut().for_each(|b| *b = true);
    }

    fn free_count(&self) -> usize {
        self.free.lock().unwrap().iter().filter(|&&b| b).count()
    }
}

static POLICY: std::sync::OnceLock<TestPolicy> = std::sync::OnceLock::new();
static INIT: Once = Once::new();
static LOCK: Mutex<()> = Mutex::new(());

pub fn policy() -> &'static TestPolicy {
    POLICY.get_or_init(|| TestPolicy {
        free: Mutex::new(vec![false; SIM_BYTES / PAGE_SIZE]),
        force_pfn: AtomicUsize::new(0),
    })
}

/// Sets up the simulated RAM once and serialises the calling test.
pub fn lock() -> MutexGuard<'static, ()> {
    let guard = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    INIT.call_once(|| {
        let layout = Layout::from_size_align(SIM_BYTES, PAGE_SIZE).unwrap();
        // SAFETY (test support): a fresh, zeroed, page-aligned host
        // allocation that is never freed; it plays the role of RAM.
        let base = unsafe { alloc_zeroed(layout) };
        assert!(!base.is_null());
        set_linear_base(base);
        let meta_bytes = meta::bytes_needed(SIM_BYTES).next_multiple_of(PAGE_SIZE);
        meta::init(SIM_BYTES, 0);
        inject_policy(policy());
        add_free_range(meta_bytes, SIM_BYTES);
    });
    guard
}
