// expect: the trait bound `Arc<u64>: Exchangeable` is not satisfied
// Shared ownership never crosses into a domain: a domain abandoned halfway
// through changing it would leave the change visible outside.
use alloc::sync::Arc;
use frame::domain::{DomainStack, call_isolated};

fn peek(v: Arc<u64>) -> u64 {
    *v
}

pub fn f(stack: &mut DomainStack) {
    let _ = call_isolated(stack, peek, Arc::new(1));
}
