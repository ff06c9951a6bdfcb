// expect: the trait bound `Vec<u8>: Pod` is not satisfied
// What lives on the shared heap is plain data: a payload that points into
// a heap (here a vector) would dangle once its maker's heap is freed.
use alloc::vec::Vec;
use frame::domain::RRef;

pub fn f() {
    let _ = RRef::new(Vec::<u8>::new());
}
