// expect: only a shared-heap object (`&RRef<T>` or `&mut RRef<T>`) may be lent to a domain
// A reference into the caller's memory never crosses; only shared-heap
// objects are lent.
use frame::domain::Fault;

pub struct E;

impl From<Fault> for E {
    fn from(_: Fault) -> E {
        E
    }
}

#[domain_proxy::interface]
pub trait Peeks {
    fn peek(&self, v: &u64) -> Result<u64, E>;
}
