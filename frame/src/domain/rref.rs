//! `RRef<T>`: an object on the shared heap, owned by one domain (or the
//! kernel) at a time, that crosses domain boundaries without being copied.
//!
//! Every `RRef` records its owner. Moving one into a call makes the callee
//! its owner; moving it back out (a result) makes the caller its owner
//! again (`Exchangeable::transfer`, called by `Domain::call`); one made
//! inside a call belongs to the domain that made it. When a domain dies,
//! every object it still owns is freed ([`reclaim`]): its root and stack
//! are forgotten, so nothing can reach those objects any more. Objects
//! only *lent* to it (`Domain::call_lend`, `Domain::call_lend_mut`) stay
//! their owner's.
//!
//! The payload is plain data ([`Pod`]): no pointers into anyone's heap,
//! every bit pattern valid. That is what makes an exclusive lend safe to
//! end by a fault: whatever the callee wrote is still a valid `T`.
//!
//! Live objects are linked in one list (under a spin lock, never held
//! across an allocation) so that a dead domain's objects can be found.

use core::alloc::Layout;
use core::mem::ManuallyDrop;
use core::ops::{Deref, DerefMut};
use core::ptr::NonNull;
use core::sync::atomic::{AtomicBool, AtomicPtr, AtomicU32, AtomicU64, Ordering};

use super::call::Fault;
use super::exchange::{Exchangeable, Owner};
use super::object::Domain;
use crate::Pod;
use crate::sync::{SpinLock, level};

/// What precedes the payload of every shared-heap object.
#[repr(C)]
struct Header {
    /// Neighbours in [`LIVE`] (null at the ends); only changed under its
    /// lock. Atomic so that `&Header` may be held meanwhile.
    prev: AtomicPtr<Header>,
    next: AtomicPtr<Header>,
    /// `Owner` (0: the kernel).
    owner: AtomicU64,
    /// Exclusive lends in progress (nested lends count each).
    lends: AtomicU32,
    /// Dropped by a borrower while lent: freed when the last lend ends,
    /// unless a fault ends it (then the lender still holds it).
    dropped: AtomicBool,
    /// The layout of the whole `Shared<T>`, to free it without knowing `T`.
    layout: Layout,
}

#[repr(C)]
struct Shared<T> {
    header: Header,
    value: T,
}

/// The live shared-heap objects.
struct Live {
    head: *mut Header,
    count: usize,
}

// SAFETY: the pointers are to shared-heap objects, which belong to no
// CPU or task; they are followed only under the lock that holds `Live`.
// MIRI: relied on by domain::rref::tests::a_moved_rref_is_freed_with_its_owner
unsafe impl Send for Live {}

static LIVE: SpinLock<Live, { level::HEAP - 2 }> = SpinLock::new(Live {
    head: core::ptr::null_mut(),
    count: 0,
});

/// Owners handed to domains: one per domain incarnation, never reused.
static NEXT_OWNER: AtomicU64 = AtomicU64::new(1);

/// Runs `f` allocating from the shared heap: the kernel heap, whatever
/// domain runs (a domain's heap is freed wholesale when it dies, and a
/// shared object must outlive its maker).
fn on_shared_heap<R>(f: impl FnOnce() -> R) -> R {
    super::heap::with_kernel_heap(f)
}

/// A fresh owner for a new domain.
pub(super) fn new_owner() -> Owner {
    Owner(NEXT_OWNER.fetch_add(1, Ordering::Relaxed))
}

/// The owner the current task runs as.
pub(super) fn current_owner() -> Owner {
    Owner(crate::task::try_current().map_or(0, |t| t.domain_owner()))
}

/// How many shared-heap objects are alive (tests and `/proc/domains`).
pub fn live_rrefs() -> usize {
    LIVE.lock_irq_disabled().count
}

/// Frees every object `owner` owns: it is dead, so nothing reaches them.
/// Returns how many there were.
pub(super) fn reclaim(owner: Owner) -> usize {
    if owner == Owner::KERNEL {
        return 0;
    }
    let mut freed = 0;
    loop {
        // Unlink a batch under the lock, free it outside: the heap's lock
        // ranks above this one, but freeing outside keeps the walk short.
        let victim = {
            let mut live = LIVE.lock_irq_disabled();
            let mut cur = live.head;
            let mut found = core::ptr::null_mut();
            while !cur.is_null() {
                // SAFETY: every pointer in the list is a live object's
                // header (linked by `RRef::new`, unlinked before it is
                // freed), and the list is only walked under its lock.
                let h = unsafe { &*cur };
                if h.owner.load(Ordering::Relaxed) == owner.0 {
                    found = cur;
                    break;
                }
                cur = h.next.load(Ordering::Relaxed);
            }
            if !found.is_null() {
                // SAFETY: as above: `found` is linked and we hold the lock.
                unsafe { unlink(&mut live, found) };
            }
            found
        };
        if victim.is_null() {
            return freed;
        }
        // SAFETY: `victim` was just unlinked: no list reaches it, and its
        // owner is dead, so no `RRef` that will ever be used again does
        // either (the dead domain's root and frames are forgotten).
        unsafe { free(victim) };
        freed += 1;
    }
}

/// Unlinks `h` from `live`.
///
/// # Safety
/// `h` is a live object's header linked in `live`, whose lock the caller
/// holds (the `&mut`).
unsafe fn unlink(live: &mut Live, h: *mut Header) {
    // SAFETY: the caller's promise: `h` and its neighbours are linked,
    // live headers, and the lock is held.
    unsafe {
        let (prev, next) = (
            (*h).prev.load(Ordering::Relaxed),
            (*h).next.load(Ordering::Relaxed),
        );
        if prev.is_null() {
            live.head = next;
        } else {
            (*prev).next.store(next, Ordering::Relaxed);
        }
        if !next.is_null() {
            (*next).prev.store(prev, Ordering::Relaxed);
        }
    }
    live.count -= 1;
}

/// Returns an unlinked object's memory to the heap.
///
/// # Safety
/// `h` heads an object made by `RRef::new`, unlinked, that nothing will
/// use again.
unsafe fn free(h: *mut Header) {
    // SAFETY: the caller's promise; `layout` is the one it was allocated
    // with, and the payload is `Pod` (nothing to drop).
    unsafe {
        let layout = (*h).layout;
        alloc::alloc::dealloc(h.cast(), layout);
    }
}

/// An object on the shared heap. See the module comment for ownership.
pub struct RRef<T: Pod> {
    ptr: NonNull<Shared<T>>,
}

// SAFETY: an `RRef` is the only handle to its object (it is not `Clone`;
// lends are borrows of it), so sending it sends the object; the payload is
// plain data.
// MIRI: relied on by domain::rref::tests::a_moved_rref_is_freed_with_its_owner
unsafe impl<T: Pod + Send> Send for RRef<T> {}
// SAFETY: `&RRef<T>` gives only `&T`.
// MIRI: relied on by domain::rref::tests::lends_return_to_the_owner
unsafe impl<T: Pod + Sync> Sync for RRef<T> {}

impl<T: Pod> RRef<T> {
    /// Puts `value` on the shared heap, owned by the domain that runs this
    /// (the kernel outside any call).
    pub fn new(value: T) -> Result<RRef<T>, crate::Error> {
        let layout = Layout::new::<Shared<T>>();
        // The shared heap is the kernel's: a domain's heap dies with it,
        // and this object may outlive its maker (moved to the caller).
        let raw = on_shared_heap(|| {
            // SAFETY: `Shared<T>` has a non-zero size (the header).
            unsafe { alloc::alloc::alloc(layout) }
        });
        let ptr = NonNull::new(raw.cast::<Shared<T>>()).ok_or(crate::Error::NoMemory)?;
        // SAFETY: freshly allocated with the layout of `Shared<T>`.
        unsafe {
            ptr.as_ptr().write(Shared {
                header: Header {
                    prev: AtomicPtr::new(core::ptr::null_mut()),
                    next: AtomicPtr::new(core::ptr::null_mut()),
                    owner: AtomicU64::new(current_owner().0),
                    lends: AtomicU32::new(0),
                    dropped: AtomicBool::new(false),
                    layout,
                },
                value,
            });
        }
        let h = ptr.as_ptr().cast::<Header>();
        let mut live = LIVE.lock_irq_disabled();
        // SAFETY: `h` is the new object's header (first field of a
        // `repr(C)` struct) and not linked yet; `live.head`, if any, is a
        // linked header; the lock is held.
        unsafe {
            (*h).next.store(live.head, Ordering::Relaxed);
            if !live.head.is_null() {
                (*live.head).prev.store(h, Ordering::Relaxed);
            }
        }
        live.head = h;
        live.count += 1;
        Ok(RRef { ptr })
    }

    fn header(&self) -> &Header {
        // SAFETY: the object lives as long as its `RRef` (a lent one:
        // as long as the lend, `Drop` defers); every header field that
        // changes is atomic, `layout` never does.
        unsafe { &(*self.ptr.as_ptr()).header }
    }

    /// Who owns the object now.
    pub fn owner(&self) -> Owner {
        Owner(self.header().owner.load(Ordering::Relaxed))
    }
}

impl<T: Pod> Deref for RRef<T> {
    type Target = T;

    fn deref(&self) -> &T {
        // SAFETY: the object lives as long as this `RRef`, the only handle
        // to it; the borrow of `self` bounds the reference.
        unsafe { &(*self.ptr.as_ptr()).value }
    }
}

impl<T: Pod> DerefMut for RRef<T> {
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: as above, and `&mut self` makes the access exclusive.
        unsafe { &mut (*self.ptr.as_ptr()).value }
    }
}

impl<T: Pod> Drop for RRef<T> {
    fn drop(&mut self) {
        if self.header().lends.load(Ordering::Relaxed) != 0 {
            // A borrower dropped the lent object (assigned over the lent
            // `RRef`, or swapped it out and dropped it): the lender's
            // `RRef` still points here, so it is freed only once the lend
            // ends without a fault (`Domain::call_lend_mut`).
            self.header().dropped.store(true, Ordering::Relaxed);
            return;
        }
        let h = self.ptr.as_ptr().cast::<Header>();
        {
            let mut live = LIVE.lock_irq_disabled();
            // SAFETY: a live `RRef`'s header is linked; the lock is held.
            unsafe { unlink(&mut live, h) };
        }
        // SAFETY: unlinked just now, and this was its only handle.
        unsafe { free(h) };
    }
}

// SAFETY: the object is on the shared heap (never a domain's), owned by
// whoever holds the `RRef`, which `transfer` keeps recorded; its payload is
// plain data, so a half-done change is still a valid value and reaches
// nothing else.
unsafe impl<T: Pod + Send> Exchangeable for RRef<T> {
    #[inline(always)]
    fn transfer(&self, to: Owner) {
        self.header().owner.store(to.0, Ordering::Relaxed);
    }
}

/// The packed arguments of a lending call: frame makes them, for the one
/// call, from a borrow of the lent `RRef` that outlasts the call.
struct LendArgs<T, A, L, R, F> {
    f: F,
    arg: A,
    lent: NonNull<Shared<L>>,
    _types: core::marker::PhantomData<fn(&mut T) -> R>,
}

// Why the packed lend may cross: `arg` is Exchangeable (bounds below) and
// `f` a plain `fn`. The pointer is to an object borrowed (shared or
// exclusive, matching the lend) by the caller of `Domain::call_lend{,_mut}`
// for the whole call; the type is private, made only there and consumed
// by the matching entry, which hands the callee a reference that cannot
// outlive the call (the function's lifetime is higher-ranked, its result
// `'static`).
// SAFETY: as above.
unsafe impl<T: 'static, A: Exchangeable, L: Pod + Send, R: 'static, F: Send + 'static> Exchangeable
    for LendArgs<T, A, L, R, F>
{
    #[inline(always)]
    fn transfer(&self, to: Owner) {
        // The lent object stays its owner's.
        self.arg.transfer(to);
    }
}

// SAFETY: the pointer is to a shared-heap object (no CPU's or task's);
// the rest is `Send` by the bounds.
// MIRI: relied on by domain::rref::tests::lends_return_to_the_owner
unsafe impl<T, A: Send, L: Send, R, F: Send> Send for LendArgs<T, A, L, R, F> {}

/// The result of an exclusive lend: the callee's result, and the object
/// the lent `RRef` holds at the end (another one if the callee swapped it).
struct LendMutRet<R, L> {
    ret: R,
    lent: NonNull<Shared<L>>,
}

// SAFETY: `ret` is Exchangeable; `lent` is the object the caller's `RRef`
// is about to hold, now owned by whoever this moves to.
unsafe impl<R: Exchangeable, L: Pod + Send> Exchangeable for LendMutRet<R, L> {
    #[inline(always)]
    fn transfer(&self, to: Owner) {
        self.ret.transfer(to);
        // SAFETY: the object is alive: it is the lent one or one the
        // callee swapped in, and either way held by the caller's `RRef`
        // next, which the caller's exclusive borrow keeps in place.
        let h = unsafe { &(*self.lent.as_ptr()).header };
        h.owner.store(to.0, Ordering::Relaxed);
    }
}

// SAFETY: as for `LendArgs`.
// MIRI: relied on by domain::rref::tests::lends_return_to_the_owner
unsafe impl<R: Send, L: Send> Send for LendMutRet<R, L> {}

type LendFn<T, A, L, R> = for<'a> fn(&mut T, A, &'a RRef<L>) -> R;
type LendMutFn<T, A, L, R> = for<'a> fn(&mut T, A, &'a mut RRef<L>) -> R;

fn lend_entry<T, A, L: Pod, R>(root: &mut T, a: LendArgs<T, A, L, R, LendFn<T, A, L, R>>) -> R {
    // A second handle to the lent object for the call, never dropped: the
    // caller's `RRef` still owns it.
    let tmp = ManuallyDrop::new(RRef { ptr: a.lent });
    (a.f)(root, a.arg, &tmp)
}

fn lend_mut_entry<T, A, L: Pod, R>(
    root: &mut T,
    a: LendArgs<T, A, L, R, LendMutFn<T, A, L, R>>,
) -> LendMutRet<R, L> {
    let mut tmp = ManuallyDrop::new(RRef { ptr: a.lent });
    let ret = (a.f)(root, a.arg, &mut tmp);
    if tmp.ptr != a.lent {
        // The callee swapped the lent `RRef` with one of its own: an
        // exchange. The lent object is now the callee's (it holds it), the
        // one it gave goes to the caller (`LendMutRet::transfer`).
        // SAFETY: the lent object is alive (the caller's borrow).
        let h = unsafe { &(*a.lent.as_ptr()).header };
        h.owner.store(current_owner().0, Ordering::Relaxed);
    }
    LendMutRet { ret, lent: tmp.ptr }
}

impl<T: Send + 'static> Domain<T> {
    /// Calls `f(root, arg, lent)` inside the domain, lending it `lent` for
    /// the call, shared: zero-copy, and since the payload is plain data
    /// reached only through `&`, unchanged whatever happens in the call
    /// (a write retried after a fault reads the same bytes).
    pub fn call_lend<A: Exchangeable, L: Pod + Send, R: Exchangeable>(
        &self,
        f: LendFn<T, A, L, R>,
        arg: A,
        lent: &RRef<L>,
    ) -> Result<R, Fault> {
        let args = LendArgs {
            f,
            arg,
            lent: lent.ptr,
            _types: core::marker::PhantomData,
        };
        let entry: fn(&mut T, LendArgs<T, A, L, R, LendFn<T, A, L, R>>) -> R =
            lend_entry::<T, A, L, R>;
        self.call(entry, args)
    }

    /// As [`Domain::call_lend`], lending `lent` exclusively: the callee may
    /// write the payload in place (zero-copy). After a fault the caller's
    /// `RRef` is still its own and in place, but holds whatever the callee
    /// wrote before dying: any bytes are a valid `L`, and the owner must
    /// treat them as garbage (a read retried overwrites them). If the
    /// callee swaps the lent `RRef` with another, that is an exchange: the
    /// caller ends up with the other object.
    pub fn call_lend_mut<A: Exchangeable, L: Pod + Send, R: Exchangeable>(
        &self,
        f: LendMutFn<T, A, L, R>,
        arg: A,
        lent: &mut RRef<L>,
    ) -> Result<R, Fault> {
        let args = LendArgs {
            f,
            arg,
            lent: lent.ptr,
            _types: core::marker::PhantomData,
        };
        let entry: fn(&mut T, LendArgs<T, A, L, R, LendMutFn<T, A, L, R>>) -> LendMutRet<R, L> =
            lend_mut_entry::<T, A, L, R>;
        let orig = lent.ptr;
        let lends = &lent.header().lends;
        lends.fetch_add(1, Ordering::Relaxed);
        let out = self.call(entry, args);
        // SAFETY: the lent object is not freed while a lend of it is in
        // progress (`Drop for RRef` defers it), so it is alive here.
        let h = unsafe { &(*orig.as_ptr()).header };
        let last = h.lends.fetch_sub(1, Ordering::Relaxed) == 1;
        match out {
            Ok(out) if out.lent != orig => {
                // The lent object left the caller's `RRef` (an exchange):
                // free it if the callee dropped it and no outer lend of it
                // is still in progress (that one decides when it ends).
                lent.ptr = out.lent;
                if last && h.dropped.load(Ordering::Relaxed) {
                    let h = orig.as_ptr().cast::<Header>();
                    // SAFETY: a linked header (dropped objects stay
                    // linked); the lock is held for the unlink.
                    unsafe { unlink(&mut LIVE.lock_irq_disabled(), h) };
                    // SAFETY: unlinked, dropped by its last holder, and no
                    // lend of it is left: nothing reaches it.
                    unsafe { free(h) };
                }
                Ok(out.ret)
            }
            Ok(out) => Ok(out.ret),
            Err(fault) => {
                // The caller's `RRef` still holds it, whatever the callee
                // did with its copy before dying.
                h.dropped.store(false, Ordering::Relaxed);
                Err(fault)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use alloc::vec::Vec;

    use super::*;
    use crate::sim;

    type Block = [u8; 64];

    struct Store {
        kept: Vec<RRef<Block>>,
    }

    fn start(_: ()) -> Store {
        Store { kept: Vec::new() }
    }

    /// Keeps a moved-in object, and makes one of its own.
    fn keep(s: &mut Store, r: RRef<Block>) -> (u64, u64) {
        let mine = RRef::new([9; 64]).unwrap();
        let owners = (r.owner().0, mine.owner().0);
        s.kept.push(r);
        s.kept.push(mine);
        owners
    }

    /// Gives the first kept object back.
    fn give(s: &mut Store, _: ()) -> Option<RRef<Block>> {
        (!s.kept.is_empty()).then(|| s.kept.remove(0))
    }

    /// Leaks an object of its own.
    fn leak(_: &mut Store, _: ()) -> usize {
        core::mem::forget(RRef::new([1u8; 64]).unwrap());
        live_rrefs()
    }

    fn crash(_: &mut Store, _: ()) {
        panic!("injected")
    }

    #[test]
    fn a_moved_rref_is_freed_with_its_owner() {
        sim::run(|| {
            let base = live_rrefs();
            let d = Domain::new("test-rref", start, ()).unwrap();
            let r = RRef::new([7u8; 64]).unwrap();
            assert_eq!(r.owner(), Owner::KERNEL);
            assert_eq!(live_rrefs(), base + 1);
            let (moved, made) = d.call(keep, r).unwrap();
            assert_ne!(moved, 0, "moved in: the callee owns it");
            assert_eq!(moved, made, "and what it makes");
            let back = d.call(give, ()).unwrap().unwrap();
            assert_eq!(back.owner(), Owner::KERNEL, "moved back out");
            assert_eq!(*back, [7u8; 64], "the same object, unchanged");
            assert_eq!(live_rrefs(), base + 2);
            assert_eq!(d.call(leak, ()), Ok(base + 3));
            // The domain dies owning two objects (one kept, one leaked):
            // both go; the one it gave back stays.
            assert_eq!(d.call(crash, ()), Err(Fault::Panic));
            assert_eq!(live_rrefs(), base + 1);
            assert_eq!(*back, [7u8; 64]);
            drop(back);
            assert_eq!(live_rrefs(), base);

            // Dropping a live domain frees what its root holds and what it
            // leaked, once each.
            let d = Domain::new("test-rref", start, ()).unwrap();
            d.call(keep, RRef::new([3u8; 64]).unwrap()).unwrap();
            assert_eq!(d.call(leak, ()), Ok(base + 3));
            drop(d);
            assert_eq!(live_rrefs(), base);
        });
    }

    fn sum(_: &mut Store, k: u64, r: &RRef<Block>) -> u64 {
        r.iter().map(|&b| u64::from(b)).sum::<u64>() + k
    }

    fn fill(_: &mut Store, v: u8, r: &mut RRef<Block>) -> u64 {
        r.fill(v);
        r.owner().0
    }

    fn fill_then_crash(_: &mut Store, v: u8, r: &mut RRef<Block>) {
        r[..32].fill(v);
        panic!("injected mid-write")
    }

    fn swap_in(s: &mut Store, v: u8, r: &mut RRef<Block>) {
        let mut mine = RRef::new([v; 64]).unwrap();
        core::mem::swap(&mut mine, r);
        s.kept.push(mine);
    }

    fn replace(_: &mut Store, v: u8, r: &mut RRef<Block>) {
        *r = RRef::new([v; 64]).unwrap();
    }

    fn replace_then_crash(s: &mut Store, v: u8, r: &mut RRef<Block>) {
        replace(s, v, r);
        panic!("injected after replacing")
    }

    #[test]
    fn a_borrower_cannot_free_a_lent_rref() {
        sim::run(|| {
            let base = live_rrefs();
            let d = Domain::new("test-lend-drop", start, ()).unwrap();
            let mut r = RRef::new([1u8; 64]).unwrap();
            // Assigning over the lent `RRef` drops the lent object in the
            // callee: it is freed once the lend ends, and the caller gets
            // the new one.
            d.call_lend_mut(replace, 6, &mut r).unwrap();
            assert_eq!(*r, [6u8; 64]);
            assert_eq!(r.owner(), Owner::KERNEL);
            assert_eq!(live_rrefs(), base + 1);
            // The same and then a fault: the caller still holds its object.
            assert_eq!(
                d.call_lend_mut(replace_then_crash, 7, &mut r),
                Err(Fault::Panic)
            );
            assert_eq!(*r, [6u8; 64]);
            assert_eq!(
                live_rrefs(),
                base + 1,
                "the replacement died with the domain"
            );
            drop(r);
            drop(d);
            assert_eq!(live_rrefs(), base);
        });
    }

    #[test]
    fn lends_return_to_the_owner() {
        sim::run(|| {
            let base = live_rrefs();
            let d = Domain::new("test-lend", start, ()).unwrap();
            let mut r = RRef::new([1u8; 64]).unwrap();
            assert_eq!(d.call_lend(sum, 6, &r), Ok(70));
            assert_eq!(r.owner(), Owner::KERNEL, "a shared lend keeps the owner");
            assert_eq!(
                d.call_lend_mut(fill, 2, &mut r),
                Ok(0),
                "nor does an exclusive one"
            );
            assert_eq!(*r, [2u8; 64], "written in place");
            // A swap is an exchange: each side owns what it holds.
            d.call_lend_mut(swap_in, 5, &mut r).unwrap();
            assert_eq!(*r, [5u8; 64]);
            assert_eq!(r.owner(), Owner::KERNEL);
            assert_eq!(d.call(give, ()).unwrap().map(|g| *g), Some([2u8; 64]));
            assert_eq!(live_rrefs(), base + 1);
            // A fault mid-lend: the object stays the owner's, in place, with
            // what the callee wrote (plain data); the domain's objects go.
            d.call_lend_mut(swap_in, 8, &mut r).unwrap();
            assert_eq!(live_rrefs(), base + 2);
            assert_eq!(
                d.call_lend_mut(fill_then_crash, 4, &mut r),
                Err(Fault::Panic)
            );
            assert_eq!(r.owner(), Owner::KERNEL);
            assert_eq!(r[..32], [4u8; 32]);
            assert_eq!(r[32..], [8u8; 32]);
            assert_eq!(
                live_rrefs(),
                base + 1,
                "the swapped-out object died with it"
            );
            assert_eq!(d.call_lend(sum, 0, &r), Err(Fault::Dead));
            drop(r);
            drop(d);
            assert_eq!(live_rrefs(), base);
        });
    }
}
