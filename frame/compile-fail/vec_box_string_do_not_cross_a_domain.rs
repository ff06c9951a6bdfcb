// expect: the trait bound `Vec<u8>: Exchangeable` is not satisfied
// A vector made inside a domain points into the domain's heap, which its
// death frees wholesale: heap values never cross (nor `Box`, `String`).
use alloc::boxed::Box;
use alloc::string::String;
use alloc::vec::Vec;
use frame::domain::{DomainStack, call_isolated};

fn make(n: usize) -> Vec<u8> {
    alloc::vec![0; n]
}

fn boxed(b: Box<u8>) -> String {
    String::from(if *b == 0 { "zero" } else { "more" })
}

pub fn f(stack: &mut DomainStack) {
    let _ = call_isolated(stack, make, 4);
    let _ = call_isolated(stack, boxed, Box::new(1));
}
