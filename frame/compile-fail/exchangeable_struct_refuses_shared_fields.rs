// expect: the trait bound `Rc<u8>: Exchangeable` is not satisfied
// A declared exchangeable struct is checked field by field.
use alloc::rc::Rc;

frame::exchangeable_struct! {
    pub struct Holds {
        pub id: u64,
        pub shared: Rc<u8>,
    }
}
