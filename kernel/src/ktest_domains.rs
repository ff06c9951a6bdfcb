//! In-kernel checks of the domain continuation (`frame::domain`): a call
//! that panics comes back as a fault, the kernel goes on, and nothing is
//! lost across many faults. Run with `ktest=domain_fault` and
//! `ktest=domain_fault_locked`.

use alloc::string::String;
use alloc::vec::Vec;

use frame::domain::{DomainStack, Fault, call_isolated, faults};
use frame::sync::SpinLock;

fn double(x: u64) -> u64 {
    x * 2
}

/// Indexes past the end of a vector it builds: a failed bounds check.
fn out_of_bounds(v: [u8; 2]) -> u8 {
    let v: Vec<u8> = v.to_vec();
    let i = v.len() + usize::from(v[0]);
    v[i]
}

/// Panics without allocating anything.
fn bounds_fault(i: usize) -> usize {
    let table = [1usize, 2, 3];
    table[core::hint::black_box(i)]
}

/// Makes an inner isolated call that faults, and reports what it saw.
fn nested(_: ()) -> (bool, u64) {
    let Ok(mut inner) = DomainStack::new() else {
        return (false, 0);
    };
    let r = call_isolated(&mut inner, bounds_fault, 7);
    (r == Err(Fault::Panic), double(21))
}

/// Builds a string inside the call (its own heap) and returns plain data.
fn echo(s: [u8; 5]) -> [u8; 10] {
    let mut v = String::from_utf8_lossy(&s).into_owned();
    v.push_str(" back");
    let mut out = [0; 10];
    out.copy_from_slice(&v.as_bytes()[..10]);
    out
}

/// A lock shared with the rest of the kernel.
static SHARED: SpinLock<u64> = SpinLock::new(0);

fn panic_holding_lock(_: ()) {
    let mut g = SHARED.lock();
    *g += 1;
    panic!("ktest: domain panics holding a spin lock");
}

/// `ktest=domain_fault`: Ok(()) if every check held.
pub fn domain_fault() -> Result<(), String> {
    let mut stack = DomainStack::new().map_err(|e| alloc::format!("no domain stack: {e:?}"))?;
    let before = faults();
    if call_isolated(&mut stack, double, 21) != Ok(42) {
        return Err("a plain call did not return its value".into());
    }
    if call_isolated(&mut stack, echo, *b"there") != Ok(*b"there back") {
        return Err("an owned value did not cross and come back".into());
    }
    if call_isolated(&mut stack, out_of_bounds, [3u8, 1]) != Err(Fault::Panic) {
        return Err("a failed bounds check did not come back as a fault".into());
    }
    // The same stack serves again after a fault.
    if call_isolated(&mut stack, double, 5) != Ok(10) {
        return Err("the stack did not serve a call after a fault".into());
    }
    match call_isolated(&mut stack, nested, ()) {
        Ok((true, 42)) => {}
        other => return Err(alloc::format!("nested fault: {other:?}")),
    }
    if faults() != before + 2 {
        return Err(alloc::format!("fault count {} (expected {})", faults(), before + 2));
    }
    // Many faults lose nothing: no frame, no stack slot, no lock state.
    let free = frame::mm::frame_alloc::free_frames();
    for i in 0..1000 {
        if call_isolated(&mut stack, bounds_fault, 3 + i) != Err(Fault::Panic) {
            return Err(alloc::format!("fault {i} was not reported"));
        }
    }
    let after = frame::mm::frame_alloc::free_frames();
    if after + 1 < free {
        return Err(alloc::format!("1000 faults lost {} frames", free - after));
    }
    // Locks still work, and sleeping is still allowed (no spin depth left).
    *SHARED.lock() += 1;
    frame::task::yield_now();
    frame::println!("trellis: ktest domain_fault: {} faults recovered", faults() - before);
    Ok(())
}

/// `ktest=domain_fault_locked`: a fault with a kernel lock held is not the
/// domain's alone; the kernel must panic instead of going on.
pub fn domain_fault_locked() {
    let Ok(mut stack) = DomainStack::new() else {
        return;
    };
    let _ = call_isolated(&mut stack, panic_holding_lock, ());
    frame::println!("trellis: ktest domain_fault_locked: FAILED: the call came back");
}
