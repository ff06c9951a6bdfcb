// The control of the proxy cases: an interface with values, a shared and
// an exclusive lend, and a moved `RRef`, implemented and called through
// its proxy.
use frame::domain::{Domain, Fault, Handle, RRef};

#[derive(Debug)]
pub enum E {
    Fault(Fault),
    Io,
}

impl From<Fault> for E {
    fn from(f: Fault) -> E {
        E::Fault(f)
    }
}

// SAFETY: a plain enum.
unsafe impl frame::domain::Exchangeable for E {}

#[domain_proxy::interface]
pub trait Blk {
    fn read(&mut self, sector: u64, buf: &mut RRef<[u8; 512]>) -> Result<(), E>;
    fn write(&mut self, sector: u64, buf: &RRef<[u8; 512]>) -> Result<(), E>;
    fn swap(&mut self, buf: RRef<[u8; 512]>) -> Result<RRef<[u8; 512]>, E>;
    fn capacity(&self) -> Result<u64, E>;
}

pub struct Ram {
    sectors: u64,
}

impl Blk for Ram {
    fn read(&mut self, sector: u64, buf: &mut RRef<[u8; 512]>) -> Result<(), E> {
        buf.fill(sector as u8);
        Ok(())
    }
    fn write(&mut self, sector: u64, buf: &RRef<[u8; 512]>) -> Result<(), E> {
        if sector >= self.sectors || buf[0] == 0xff {
            return Err(E::Io);
        }
        Ok(())
    }
    fn swap(&mut self, buf: RRef<[u8; 512]>) -> Result<RRef<[u8; 512]>, E> {
        Ok(buf)
    }
    fn capacity(&self) -> Result<u64, E> {
        Ok(self.sectors)
    }
}

fn start(sectors: u64) -> Ram {
    Ram { sectors }
}

fn use_any(b: &mut impl Blk) -> Result<u64, E> {
    b.capacity()
}

pub fn f() -> Result<u64, E> {
    let mut p: BlkProxy<Ram> = Handle::new(Domain::new("ram", start, 8)?);
    let mut buf = RRef::new([0u8; 512]).map_err(|_| E::Io)?;
    p.read(1, &mut buf)?;
    p.write(1, &buf)?;
    let _buf = p.swap(buf)?;
    use_any(&mut p)
}
