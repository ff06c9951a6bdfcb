// expect: the trait bound `Arc<u64>: Exchangeable` is not satisfied
// A generated proxy checks every argument and result at compile time.
use alloc::sync::Arc;
use frame::domain::Fault;

pub struct E;

impl From<Fault> for E {
    fn from(_: Fault) -> E {
        E
    }
}

#[domain_proxy::interface]
pub trait Shares {
    fn peek(&self, v: Arc<u64>) -> Result<u64, u32>;
}
