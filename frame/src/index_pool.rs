//! A pool of small integer indices (kernel-stack slots) that are handed out
//! and given back for reuse. Giving one back never allocates: the free list
//! always has room for every index handed out so far, reserved (fallibly)
//! when the index is first handed out. Teardown paths can therefore return
//! indices without needing memory.

use alloc::vec::Vec;

pub(crate) struct IndexPool {
    /// Indices below `next` have been handed out at least once.
    next: usize,
    /// One past the largest index the pool may hand out.
    limit: usize,
    free: Vec<usize>,
}

impl IndexPool {
    pub(crate) const fn new(limit: usize) -> IndexPool {
        IndexPool {
            next: 0,
            limit,
            free: Vec::new(),
        }
    }

    /// A free index (the most recently returned one first), or `None` when
    /// all `limit` indices are in use or memory for bookkeeping is short.
    pub(crate) fn claim(&mut self) -> Option<usize> {
        if let Some(i) = self.free.pop() {
            return Some(i);
        }
        if self.next >= self.limit {
            return None;
        }
        // Room for all `next + 1` indices to come back at once.
        let need = (self.next + 1).saturating_sub(self.free.len());
        self.free.try_reserve(need).ok()?;
        let i = self.next;
        self.next += 1;
        Some(i)
    }

    /// Gives `index` back. It must have come from [`IndexPool::claim`] and
    /// not have been released since.
    pub(crate) fn release(&mut self, index: usize) {
        assert!(
            index < self.next && self.free.len() < self.free.capacity(),
            "invariant: an index pool takes back only indices it handed out"
        );
        debug_assert!(!self.free.contains(&index), "index {index} released twice");
        self.free.push(index);
    }

    /// Indices currently handed out.
    #[cfg(test)]
    pub(crate) fn in_use(&self) -> usize {
        self.next - self.free.len()
    }
}

#[cfg(test)]
mod tests {
    use super::IndexPool;

    #[test]
    fn released_indices_are_reused_so_the_pool_never_runs_dry() {
        let mut pool = IndexPool::new(4);
        // Far more claim/release cycles than the pool has indices: without
        // reuse the fifth claim would fail (the kernel-stack region ran out
        // after ~7.9 M fork/exit cycles this way).
        for _ in 0..1000 {
            let i = pool.claim().expect("an index");
            assert!(i < 4);
            pool.release(i);
        }
        assert_eq!(pool.in_use(), 0);
    }

    #[test]
    fn the_limit_holds_and_release_never_needs_to_grow_the_list() {
        let mut pool = IndexPool::new(8);
        let held: Vec<usize> = (0..8).map(|_| pool.claim().expect("an index")).collect();
        assert_eq!(held, (0..8).collect::<Vec<_>>());
        assert_eq!(pool.claim(), None, "all 8 in use");
        let cap = pool.free.capacity();
        for i in held.iter().rev() {
            pool.release(*i); // must not reallocate: capacity was reserved
        }
        assert_eq!(pool.free.capacity(), cap);
        let again: Vec<usize> = (0..8).map(|_| pool.claim().expect("an index")).collect();
        let mut sorted = again.clone();
        sorted.sort();
        assert_eq!(sorted, (0..8).collect::<Vec<_>>());
    }

    #[test]
    #[should_panic(expected = "takes back only indices it handed out")]
    fn releasing_an_index_never_handed_out_panics() {
        let mut pool = IndexPool::new(8);
        let _ = pool.claim();
        pool.release(5);
    }
}
