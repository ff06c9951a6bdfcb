//! A do-nothing domain for measuring what a cross-domain call costs
//! (docs/domains.md, "What a call costs"): the bench rows
//! `domain_call_*` write `MODE N` to `/sys/kernel/debug/domains/bench/run`,
//! which makes `N` calls, all in the one `write`:
//!
//! - `direct`: the interface method on a plain object, no domain (the
//!   same kernel without domains);
//! - `null`: a method with no arguments through the generated proxy;
//! - `rref`: a method that is lent one `RRef` (shared, zero-copy);
//! - `move`: a method that takes one `RRef` and gives it back.
//!
//! The file is root's only (mode 0200 in a 0700 directory, as debugfs is
//! on Linux), `N` is at most [`MAX_CALLS`], and a pending signal stops a
//! run early (`EINTR`). Anything else written is `EINVAL`.

use alloc::sync::Arc;
use core::hint::black_box;

use frame::domain::{Domain, Fault, Handle, RRef};
use frame::sync::Mutex;

use alloc::boxed::Box;
use alloc::string::String;
use alloc::vec::Vec;

use crate::error::{Errno, Error, Result};
use crate::fs::inode::{FileType, Inode};
use crate::fs::pseudo::{Attr, DirSource, FIRST_KEY, GenDir, GenFile, Item, tree_ino};

/// The most calls one write may ask for: about a second of guest time
/// under the bench's icount at a few hundred instructions a call.
pub const MAX_CALLS: u64 = 1 << 20;

/// Calls between two looks for a pending signal.
const SIGNAL_CHECK: u64 = 4096;

/// The payload lent or moved by the `rref` and `move` modes.
type Block = [u8; 64];

frame::exchangeable_struct! {
    /// Why a bench call failed: the fault that ended it.
    #[derive(Debug)]
    pub struct BenchFault {
        pub fault: Fault,
    }
}

impl From<Fault> for BenchFault {
    fn from(fault: Fault) -> Self {
        BenchFault { fault }
    }
}

/// The bench domain's interface: every method does nothing, so a call
/// through the proxy costs only the crossing.
#[domain_proxy::interface]
pub trait BenchCalls {
    fn null(&mut self) -> core::result::Result<(), BenchFault>;
    fn lend(&mut self, block: &RRef<Block>) -> core::result::Result<(), BenchFault>;
    fn swap(&mut self, block: RRef<Block>) -> core::result::Result<RRef<Block>, BenchFault>;
}

/// The domain's root (and, for `direct`, the plain object).
pub struct Bench;

impl BenchCalls for Bench {
    fn null(&mut self) -> core::result::Result<(), BenchFault> {
        Ok(())
    }
    fn lend(&mut self, _block: &RRef<Block>) -> core::result::Result<(), BenchFault> {
        Ok(())
    }
    fn swap(&mut self, block: RRef<Block>) -> core::result::Result<RRef<Block>, BenchFault> {
        Ok(block)
    }
}

fn start(_: ()) -> Bench {
    Bench
}

/// The bench domain, built by the first run. Held only to build or clone
/// the handle, never across a call.
static DOMAIN: Mutex<Option<Handle<Bench>>, { frame::sync::level::VMAR }> = Mutex::new(None);

fn handle() -> Result<Handle<Bench>> {
    let mut d = DOMAIN.lock();
    if let Some(h) = d.as_ref().filter(|h| h.is_alive()) {
        return Ok(h.clone());
    }
    let h = Handle::new(Domain::new("bench", start, ()).map_err(|_| Error::new(Errno::ENOMEM))?);
    *d = Some(h.clone());
    Ok(h)
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    Direct,
    Null,
    Rref,
    Move,
}

/// `MODE N` (white space around and between allowed), N in 1..=MAX_CALLS.
fn parse(text: &[u8]) -> Result<(Mode, u64)> {
    let inval = || Error::new(Errno::EINVAL);
    let text = core::str::from_utf8(text).map_err(|_| inval())?;
    let mut words = text.split_ascii_whitespace();
    let mode = match words.next() {
        Some("direct") => Mode::Direct,
        Some("null") => Mode::Null,
        Some("rref") => Mode::Rref,
        Some("move") => Mode::Move,
        _ => return Err(inval()),
    };
    let n: u64 = words
        .next()
        .ok_or_else(inval)?
        .parse()
        .map_err(|_| inval())?;
    if words.next().is_some() || n == 0 || n > MAX_CALLS {
        return Err(inval());
    }
    Ok((mode, n))
}

/// Whether the calling thread has a signal to handle.
fn interrupted() -> bool {
    let Some(t) = crate::process::current_thread() else {
        return false;
    };
    t.process()
        .is_some_and(|p| crate::process::signal::has_deliverable(&p, &t))
}

/// `n` calls of `mode`, in batches between signal checks.
fn run(mode: Mode, n: u64) -> Result<()> {
    let fault = |_: BenchFault| Error::new(Errno::EIO);
    let mut plain = Bench;
    let mut proxy = match mode {
        Mode::Direct => None,
        _ => Some(handle()?),
    };
    let mut block = match mode {
        Mode::Rref | Mode::Move => {
            Some(RRef::new([0u8; 64]).map_err(|_| Error::new(Errno::ENOMEM))?)
        }
        _ => None,
    };
    let mut done = 0;
    while done < n {
        if done > 0 && interrupted() {
            return Err(Error::new(Errno::EINTR));
        }
        let batch = (n - done).min(SIGNAL_CHECK);
        for _ in 0..batch {
            match (mode, proxy.as_mut(), block.as_ref()) {
                (Mode::Direct, _, _) => black_box(&mut plain).null().map_err(fault)?,
                (Mode::Null, Some(p), _) => p.null().map_err(fault)?,
                (Mode::Rref, Some(p), Some(b)) => p.lend(b).map_err(fault)?,
                (Mode::Move, Some(p), _) => {
                    let b = block.take().ok_or(Error::new(Errno::EIO))?;
                    block = Some(p.swap(b).map_err(fault)?);
                }
                _ => return Err(Error::new(Errno::EIO)),
            }
        }
        done += batch;
    }
    Ok(())
}

fn write(text: &[u8]) -> Result<()> {
    let (mode, n) = parse(text)?;
    run(mode, n)
}

/// `/sys/kernel/debug/domains/bench`: root's only (0700), holding `run`.
pub fn debug_dir(dev: u64, ino: u64, parent: Arc<dyn Inode>) -> Arc<dyn Inode> {
    GenDir::new(
        Attr::root_owned(dev, ino, 0o700),
        BenchDir { dev, ino, parent },
    )
}

struct BenchDir {
    dev: u64,
    ino: u64,
    parent: Arc<dyn Inode>,
}

impl DirSource for BenchDir {
    fn list(&self) -> Result<Vec<Item>> {
        Ok(alloc::vec![Item {
            key: FIRST_KEY,
            name: String::from("run"),
            ino: tree_ino(self.ino, "run"),
            file_type: FileType::Regular,
        }])
    }

    fn find(&self, _this: &Arc<dyn Inode>, name: &str) -> Result<Arc<dyn Inode>> {
        if name != "run" {
            return Err(Error::new(Errno::ENOENT));
        }
        let attr = Attr::root_owned(self.dev, tree_ino(self.ino, name), 0o200);
        Ok(GenFile::writable(
            attr,
            Box::new(|| Ok(Vec::new())),
            Box::new(write),
        ))
    }

    fn parent(&self, _this: &Arc<dyn Inode>) -> Result<Arc<dyn Inode>> {
        Ok(self.parent.clone())
    }
}
