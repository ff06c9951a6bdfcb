//! Physical frame allocator policy over page frame numbers
//! (`pfn = physical address / 4096`).
//!
//! The state is two fixed-size bitmaps and needs no heap, so the allocator
//! can be a `static` initialised by [`BitmapFrameAllocator::new`] and used
//! before any heap exists. All of its initial state is zero, so such a
//! static lands in `.bss` rather than in the kernel image.
//!
//! Layout: frames are grouped in *words* of 64 frames, and words in
//! *groups* of 64 words (4096 frames, 16 MiB). Each group has one summary
//! word whose bit `j` is set exactly when word `j` of the group has a free
//! frame, so finding a free frame looks at one summary word per group
//! (1024 words for 16 GiB) instead of the whole 512 KiB bitmap.
//!
//! A second bitmap records which frames were ever handed to
//! [`add_free`](BitmapFrameAllocator::add_free), so `dealloc` can refuse
//! frames that were never managed as well as double frees.
//!
//! All methods take `&mut self`; the kernel wraps the allocator in a lock.

/// Frames per bitmap word.
const WORD_FRAMES: usize = 64;
/// Frames per group (64 words, one summary word).
pub const FRAMES_PER_GROUP: usize = WORD_FRAMES * 64;
/// Frames the kernel's allocator can manage: 16 GiB of 4 KiB pages.
pub const MAX_FRAMES: usize = 4 * 1024 * 1024;
/// Number of groups in the kernel's allocator.
pub const KERNEL_GROUPS: usize = MAX_FRAMES / FRAMES_PER_GROUP;

/// The allocator at the kernel's capacity ([`MAX_FRAMES`]).
pub type FrameAllocator = BitmapFrameAllocator<KERNEL_GROUPS>;

/// Two-level bitmap frame allocator managing `GROUPS * 4096` frames.
///
/// The capacity is a const parameter so tests can use small instances;
/// the default is the kernel's size.
#[derive(Clone)]
pub struct BitmapFrameAllocator<const GROUPS: usize = KERNEL_GROUPS> {
    /// One bit per frame, set when the frame is free.
    free: [[u64; 64]; GROUPS],
    /// Bit `j` of `summary[g]` is set iff `free[g][j] != 0`.
    summary: [u64; GROUPS],
    /// One bit per frame, set once the frame was added with `add_free`.
    managed: [[u64; 64]; GROUPS],
    free_frames: usize,
    total_frames: usize,
    /// Where the next single-frame search starts. Rotating through memory
    /// rather than reusing the lowest free frame spreads wear and makes a
    /// use-after-free less likely to hit a freshly reused frame.
    next_hint: usize,
}

impl BitmapFrameAllocator {
    /// An empty allocator at the kernel's capacity; `const` so it can
    /// initialise a `static`.
    pub const fn new() -> Self {
        Self::empty()
    }
}

impl<const GROUPS: usize> Default for BitmapFrameAllocator<GROUPS> {
    fn default() -> Self {
        Self::empty()
    }
}

impl<const GROUPS: usize> BitmapFrameAllocator<GROUPS> {
    /// Number of frames this allocator can manage.
    pub const CAPACITY: usize = GROUPS * FRAMES_PER_GROUP;

    /// An allocator of any capacity with no frames available.
    pub const fn empty() -> Self {
        Self {
            free: [[0; 64]; GROUPS],
            summary: [0; GROUPS],
            managed: [[0; 64]; GROUPS],
            free_frames: 0,
            total_frames: 0,
            next_hint: 0,
        }
    }

    /// Number of frames this allocator can manage.
    pub const fn capacity(&self) -> usize {
        Self::CAPACITY
    }

    /// Frames currently free.
    pub fn free_count(&self) -> usize {
        self.free_frames
    }

    /// Frames ever added with [`add_free`](Self::add_free) (free or not).
    pub fn total_count(&self) -> usize {
        self.total_frames
    }

    /// Whether `pfn` is currently free.
    pub fn is_free(&self, pfn: usize) -> bool {
        pfn < Self::CAPACITY && self.word(pfn / WORD_FRAMES) & (1 << (pfn % WORD_FRAMES)) != 0
    }

    /// Make frames `start_pfn .. start_pfn + count` available. The part of
    /// the range beyond the capacity is ignored, and so are frames already
    /// added before (they may be allocated: re-adding must not free them).
    /// Returns how many frames were newly added.
    pub fn add_free(&mut self, start_pfn: usize, count: usize) -> usize {
        let end = start_pfn.saturating_add(count).min(Self::CAPACITY);
        let mut added = 0;
        for (w, mask) in word_masks(start_pfn, end) {
            let (g, j) = (w / 64, w % 64);
            let new = mask & !self.managed[g][j];
            self.managed[g][j] |= new;
            self.set_word(w, self.word(w) | new);
            added += new.count_ones() as usize;
        }
        self.total_frames += added;
        self.free_frames += added;
        added
    }

    /// Allocate `count` contiguous frames whose first pfn is a multiple of
    /// `align_pfns` (a power of two). Returns the first pfn, or `None` if
    /// no such run is free or the arguments are invalid (`count == 0`,
    /// `align_pfns` not a power of two).
    pub fn alloc(&mut self, count: usize, align_pfns: usize) -> Option<usize> {
        if count == 0 || count > self.free_frames || !align_pfns.is_power_of_two() {
            return None;
        }
        let start = if count == 1 && align_pfns == 1 {
            self.find_one()?
        } else {
            self.find_run(count, align_pfns)?
        };
        // Both finders only return runs that lie inside the capacity.
        let end = start + count;
        for (w, mask) in word_masks(start, end) {
            self.set_word(w, self.word(w) & !mask);
        }
        self.free_frames -= count;
        self.next_hint = if end < Self::CAPACITY { end } else { 0 };
        Some(start)
    }

    /// Free frames `start_pfn .. start_pfn + count`. Every frame must have
    /// been added and be currently allocated; otherwise (double free,
    /// never-added or out-of-range frames, `count == 0`) nothing is changed
    /// and `false` is returned.
    pub fn dealloc(&mut self, start_pfn: usize, count: usize) -> bool {
        let Some(end) = start_pfn.checked_add(count) else {
            return false;
        };
        if count == 0 || end > Self::CAPACITY {
            return false;
        }
        // Check the whole range first so a bad call has no effect at all.
        let valid = word_masks(start_pfn, end).all(|(w, mask)| {
            let managed = self.managed[w / 64][w % 64];
            managed & mask == mask && self.word(w) & mask == 0
        });
        if !valid {
            return false;
        }
        for (w, mask) in word_masks(start_pfn, end) {
            self.set_word(w, self.word(w) | mask);
        }
        self.free_frames += count;
        true
    }

    fn word(&self, w: usize) -> u64 {
        self.free[w / 64][w % 64]
    }

    /// Store a free-bitmap word and keep its summary bit in sync.
    fn set_word(&mut self, w: usize, value: u64) {
        let (g, j) = (w / 64, w % 64);
        self.free[g][j] = value;
        if value != 0 {
            self.summary[g] |= 1 << j;
        } else {
            self.summary[g] &= !(1 << j);
        }
    }

    /// A free frame at or after the hint, wrapping around once.
    fn find_one(&self) -> Option<usize> {
        let hint = self.next_hint.min(Self::CAPACITY.saturating_sub(1));
        let (hw, hb) = (hint / WORD_FRAMES, hint % WORD_FRAMES);
        let here = self.word(hw) & (!0 << hb);
        if here != 0 {
            return Some(hw * WORD_FRAMES + here.trailing_zeros() as usize);
        }
        let w = self
            .next_free_word(hw + 1)
            .or_else(|| self.next_free_word(0).filter(|&w| w <= hw))?;
        Some(w * WORD_FRAMES + self.word(w).trailing_zeros() as usize)
    }

    /// First word at or after `from` that has a free frame (no wrap),
    /// found through the summary words.
    fn next_free_word(&self, from: usize) -> Option<usize> {
        let (g0, j0) = (from / 64, from % 64);
        if g0 >= GROUPS {
            return None;
        }
        let first = self.summary[g0] & (!0 << j0);
        if first != 0 {
            return Some(g0 * 64 + first.trailing_zeros() as usize);
        }
        (g0 + 1..GROUPS)
            .find(|&g| self.summary[g] != 0)
            .map(|g| g * 64 + self.summary[g].trailing_zeros() as usize)
    }

    /// First free frame at or after `from` (no wrap).
    fn next_free_frame(&self, from: usize) -> Option<usize> {
        if from >= Self::CAPACITY {
            return None;
        }
        let (w, b) = (from / WORD_FRAMES, from % WORD_FRAMES);
        let here = self.word(w) & (!0 << b);
        if here != 0 {
            return Some(w * WORD_FRAMES + here.trailing_zeros() as usize);
        }
        let w = self.next_free_word(w + 1)?;
        Some(w * WORD_FRAMES + self.word(w).trailing_zeros() as usize)
    }

    /// First frame in `start..end` that is not free.
    fn first_used(&self, start: usize, end: usize) -> Option<usize> {
        word_masks(start, end).find_map(|(w, mask)| {
            let used = mask & !self.word(w);
            (used != 0).then(|| w * WORD_FRAMES + used.trailing_zeros() as usize)
        })
    }

    /// First-fit search for an aligned run, starting at the hint and
    /// wrapping around to the start of memory once.
    fn find_run(&self, count: usize, align: usize) -> Option<usize> {
        let hint = align_up(self.next_hint, align).unwrap_or(usize::MAX);
        self.find_run_in(hint, Self::CAPACITY, count, align)
            .or_else(|| self.find_run_in(0, hint, count, align))
    }

    /// First aligned run of `count` free frames starting in `from..limit`.
    fn find_run_in(&self, from: usize, limit: usize, count: usize, align: usize) -> Option<usize> {
        let mut cand = align_up(from, align)?;
        while cand < limit {
            let end = cand.checked_add(count).filter(|&e| e <= Self::CAPACITY)?;
            match self.first_used(cand, end) {
                None => return Some(cand),
                // Skip past the obstacle to the next free frame; every
                // candidate before it would contain the used frame.
                Some(used) => cand = align_up(self.next_free_frame(used + 1)?, align)?,
            }
        }
        None
    }
}

/// Round `x` up to a multiple of the power of two `align`.
fn align_up(x: usize, align: usize) -> Option<usize> {
    Some(x.checked_add(align - 1)? & !(align - 1))
}

/// The bitmap words covering frames `start..end`, each with the mask of the
/// bits inside the range.
fn word_masks(start: usize, end: usize) -> impl Iterator<Item = (usize, u64)> {
    let mut pos = start;
    core::iter::from_fn(move || {
        if pos >= end {
            return None;
        }
        let w = pos / WORD_FRAMES;
        let base = w * WORD_FRAMES;
        let lo = pos - base;
        let hi = (end - base).min(WORD_FRAMES);
        let width = hi - lo;
        let mask = if width == WORD_FRAMES {
            !0
        } else {
            ((1u64 << width) - 1) << lo
        };
        pos = base + WORD_FRAMES;
        Some((w, mask))
    })
}

#[cfg(test)]
mod tests;

/// The kernel's frame allocator policy: the bitmap allocator behind a lock.
pub struct LockedFrameAllocator {
    inner: frame::sync::SpinLock<FrameAllocator, { frame::sync::level::FRAME_ALLOC }>,
}

impl Default for LockedFrameAllocator {
    fn default() -> Self {
        Self::new()
    }
}

impl LockedFrameAllocator {
    pub const fn new() -> Self {
        LockedFrameAllocator {
            inner: frame::sync::SpinLock::new(FrameAllocator::new()),
        }
    }
}

impl frame::mm::FrameAllocPolicy for LockedFrameAllocator {
    fn add_free(&self, start_pfn: usize, count: usize) {
        self.inner.lock_irq_disabled().add_free(start_pfn, count);
    }

    fn alloc(&self, count: usize, align: usize) -> Option<usize> {
        self.inner.lock_irq_disabled().alloc(count, align)
    }

    fn dealloc(&self, start_pfn: usize, count: usize) {
        self.inner.lock_irq_disabled().dealloc(start_pfn, count);
    }

    fn free_count(&self) -> usize {
        self.inner.lock_irq_disabled().free_count()
    }
}
