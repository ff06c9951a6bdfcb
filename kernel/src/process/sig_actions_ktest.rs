//! `ktest=sig_actions`: the disposition tables of a CLONE_SIGHAND family
//! (`sig_actions::Dispositions`). Members share one table until one of
//! them unshares (execve): then its table is its own, the others' is
//! unchanged, a table whose members have all gone is reused, and the room
//! reserved when members joined covers every unsharing (the vector never
//! grows then).

use super::sig_actions::Dispositions;
use super::signal::{SigAction, NSIG, SIGINT};

const USR1: usize = 10;

fn handler(d: &Dispositions, sig: usize) -> u64 {
    d.with(|t| t[sig - 1].handler)
}

fn set(d: &Dispositions, sig: usize, h: u64) {
    d.with(|t| t[sig - 1] = SigAction { handler: h, ..Default::default() });
}

/// What execve does to the table: handlers back to SIG_DFL.
fn exec(d: &Dispositions) {
    d.unshare_with(|t| t.iter_mut().filter(|a| a.handler > 1).for_each(|a| *a = SigAction::default()));
}

/// Runs the checks; returns how many failed (each is printed).
pub fn run() -> usize {
    let failed = core::cell::Cell::new(0);
    let check = |ok: bool, what: &str| {
        if !ok {
            frame::println!("trellis: ktest sig_actions: FAILED: {what}");
            failed.set(failed.get() + 1);
        }
    };
    let a = Dispositions::new([SigAction::default(); NSIG]);
    set(&a, SIGINT, 1); // ignored: survives execve
    let (Ok(b), Ok(c)) = (Dispositions::sharing(&a), Dispositions::sharing(&a)) else {
        check(false, "sharing");
        return failed.get();
    };
    check(a.table_count() == (1, 0) && a.room() >= 3, "one table, room for the three members");
    let room = a.room();
    set(&b, USR1, 0x1000);
    check(handler(&a, USR1) == 0x1000 && handler(&c, USR1) == 0x1000, "a change by one member is seen by all");

    exec(&b);
    check(b.table_count() == (2, 1), "execve in a sharer gives it a second table");
    check(handler(&b, USR1) == 0 && handler(&b, SIGINT) == 1, "its handlers reset, ignored kept");
    check(handler(&a, USR1) == 0x1000 && handler(&c, USR1) == 0x1000, "the others keep theirs");
    set(&b, USR1, 0x2000);
    set(&a, USR1, 0x3000);
    check(handler(&b, USR1) == 0x2000 && handler(&c, USR1) == 0x3000, "the tables are separate");

    exec(&c);
    check(c.table_count() == (3, 2), "a second unsharing takes a third table");
    check(a.room() == room, "unsharing never grows the vector");
    check(handler(&a, USR1) == 0x3000, "the first table is untouched");

    // a is alone on table 0 now: execve keeps it there.
    exec(&a);
    check(a.table_count() == (3, 0), "an unshared member keeps its table");
    check(handler(&a, USR1) == 0 && handler(&a, SIGINT) == 1, "and resets it in place");

    // b leaves; a new sharer of c that unshares reuses b's table.
    drop(b);
    let Ok(d) = Dispositions::sharing(&c) else {
        check(false, "sharing again");
        return failed.get();
    };
    check(handler(&d, USR1) == 0, "the new sharer sees c's table");
    set(&c, USR1, 0x4000);
    exec(&d);
    check(d.table_count() == (3, 1), "the table b left is reused");
    check(handler(&c, USR1) == 0x4000 && handler(&d, USR1) == 0, "c keeps its handler, d's is reset");
    failed.get()
}
