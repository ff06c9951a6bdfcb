// expect: Exchangeable` is not satisfied
// A domain call takes no references, not even 'static ones: what they
// point at is not the domain's to leave half-changed.
use frame::domain::{DomainStack, call_isolated};

static DATA: [u8; 2] = [1, 2];

fn first(v: &'static [u8]) -> u8 {
    v[0]
}

pub fn f(stack: &mut DomainStack) {
    let _ = call_isolated(stack, first, &DATA[..]);
}
