//! The operations a VFS calls: lookup, create, link, unlink, rename,
//! symlinks, attributes, and file data read/write/truncate. Each public
//! method passes its result through the `errors=` policy.

use alloc::vec;
use alloc::vec::Vec;

use crate::dir::DirEntry;
use crate::fs::Fs;
use crate::inode::{Attrs, DiskInode, FileKind, S_IFMT};
use crate::superblock::{RO_COMPAT_LARGE_FILE, S_FEATURE_RO_COMPAT};
use crate::{BlockIo, Error, LINK_MAX, NAME_MAX, ROOT_INO, Result};

/// Attribute changes for [`Fs::set_attr`]; `None` leaves a field alone
/// (the caller passes the new ctime of a change: an access-time update
/// alone leaves ctime as it is).
#[derive(Clone, Copy, Debug, Default)]
pub struct SetAttr {
    /// Permission bits (07777); the file type is kept.
    pub perm: Option<u16>,
    pub uid: Option<u32>,
    pub gid: Option<u32>,
    pub atime: Option<u32>,
    pub mtime: Option<u32>,
    pub ctime: Option<u32>,
}

/// Owner and permissions of a new inode.
#[derive(Clone, Copy, Debug)]
pub struct NewInode {
    pub kind: FileKind,
    pub perm: u16,
    pub uid: u32,
    pub gid: u32,
}

impl crate::names::NameCache {
    /// After a failed change of `dir/name`: an error that is only ever
    /// raised before anything is written leaves the cache as it was;
    /// any other forgets the name (and so the directory's completeness).
    fn failed(&mut self, dir: u32, name: &[u8], e: Error) {
        let before_any_write = matches!(
            e,
            Error::Exists
                | Error::NotFound
                | Error::NotDir
                | Error::IsDir
                | Error::NotEmpty
                | Error::ReadOnly
                | Error::NameTooLong
                | Error::Invalid
                | Error::TooManyLinks
        );
        if !before_any_write {
            self.forget(dir, name);
        }
    }
}

/// An inode an entry may name: in use, of a known type (Linux's
/// `ext2_iget` rejects a deleted one).
fn check_live(i: &DiskInode) -> Result<()> {
    if i.links() == 0 && (i.mode() == 0 || i.dtime() != 0) {
        return Err(Error::Corrupt("entry names a deleted inode"));
    }
    if i.kind().is_none() {
        return Err(Error::Corrupt("inode has an unknown file type"));
    }
    Ok(())
}

fn check_name(name: &[u8]) -> Result<()> {
    if name.len() > NAME_MAX {
        return Err(Error::NameTooLong);
    }
    if name.is_empty() || name == b"." || name == b".." || name.contains(&b'/') || name.contains(&0)
    {
        return Err(Error::Invalid);
    }
    Ok(())
}

impl<D: BlockIo> Fs<D> {
    /// An inode, checked for being in use (Linux's `ext2_iget` rejects a
    /// deleted one).
    pub fn inode(&mut self, ino: u32) -> Result<DiskInode> {
        let r = self.live_inode(ino);
        self.check(r)
    }

    pub(crate) fn live_inode(&self, ino: u32) -> Result<DiskInode> {
        let i = self.read_inode(ino)?;
        check_live(&i)?;
        Ok(i)
    }

    fn dir_inode(&self, ino: u32) -> Result<DiskInode> {
        let d = self.live_inode(ino)?;
        if !d.is_dir() {
            return Err(Error::NotDir);
        }
        Ok(d)
    }

    /// The attributes of a live inode ([`Fs::inode`] without the copy of
    /// the whole inode).
    pub fn attrs(&mut self, ino: u32) -> Result<Attrs> {
        let r = self
            .with_inode(ino, |i| check_live(i).map(|()| i.attrs()))
            .and_then(|a| a);
        self.check(r)
    }

    pub fn lookup(&mut self, dir: u32, name: &[u8]) -> Result<u32> {
        let r = (|| {
            // A name the cache knows needs only the directory's check.
            if let Some(known) = self.names.get(dir, name) {
                self.with_inode(dir, |d| {
                    check_live(d)?;
                    if d.is_dir() {
                        Ok(())
                    } else {
                        Err(Error::NotDir)
                    }
                })??;
                return if known == 0 {
                    Err(Error::NotFound)
                } else {
                    Ok(known)
                };
            }
            let d = self.dir_inode(dir)?;
            let mut buf = self.take_scratch();
            let found = self.find_entry_in(&d, name, &mut buf);
            self.put_scratch(buf);
            match found? {
                Some(f) => {
                    self.check_ino(f.entry.ino)?;
                    self.names.put(dir, name, f.entry.ino);
                    Ok(f.entry.ino)
                }
                None => {
                    self.names.put(dir, name, 0);
                    Err(Error::NotFound)
                }
            }
        })();
        self.check(r)
    }

    /// Lists entries from `cookie` (0 = start) until `f` returns false.
    pub fn read_dir(
        &mut self,
        dir: u32,
        cookie: u64,
        f: &mut dyn FnMut(DirEntry) -> bool,
    ) -> Result<()> {
        let r = self
            .dir_inode(dir)
            .and_then(|d| self.iterate_dir(&d, cookie, f));
        self.check(r)
    }

    /// Creates a file, directory, device node, FIFO or socket.
    pub fn create(&mut self, dir: u32, name: &[u8], new: NewInode) -> Result<u32> {
        let absent = self.names.get(dir, name) == Some(0);
        let r = self.create_inner(dir, name, new, None, absent);
        self.created(dir, name, &r, new.kind == FileKind::Directory);
        self.check(r)
    }

    /// The name cache after a creation: a new inode number has no names
    /// (it may be a removed directory's), and `dir/name` is it; a new
    /// directory is complete (only "." and ".."). After a failure the name
    /// is forgotten (the directory is no longer complete): `&mut self`
    /// kept every reader out while the change was half made.
    fn created(&mut self, dir: u32, name: &[u8], r: &Result<u32>, is_dir: bool) {
        match *r {
            Ok(ino) => {
                self.names.forget_dir(ino);
                self.names.put(dir, name, ino);
                if is_dir {
                    self.names.set_complete(ino);
                }
            }
            Err(e) => self.names.failed(dir, name, e),
        }
    }

    pub fn symlink(
        &mut self,
        dir: u32,
        name: &[u8],
        target: &[u8],
        uid: u32,
        gid: u32,
    ) -> Result<u32> {
        let new = NewInode {
            kind: FileKind::Symlink,
            perm: 0o777,
            uid,
            gid,
        };
        let absent = self.names.get(dir, name) == Some(0);
        let r = self.create_inner(dir, name, new, Some(target), absent);
        self.created(dir, name, &r, false);
        self.check(r)
    }

    fn create_inner(
        &mut self,
        dir_ino: u32,
        name: &[u8],
        new: NewInode,
        target: Option<&[u8]>,
        known_absent: bool,
    ) -> Result<u32> {
        self.writable()?;
        check_name(name)?;
        if let Some(t) = target
            && (t.is_empty() || t.len() >= self.bs as usize)
        {
            return Err(if t.is_empty() {
                Error::NotFound
            } else {
                Error::NameTooLong
            });
        }
        let mut dir = self.dir_inode(dir_ino)?;
        // (The name cache may already know the name is free.)
        if !known_absent && self.find_entry(&dir, name)?.is_some() {
            return Err(Error::Exists);
        }
        let is_dir = new.kind == FileKind::Directory;
        if is_dir && dir.links() >= LINK_MAX {
            return Err(Error::TooManyLinks);
        }
        let ino = self.alloc_inode(dir_ino, is_dir)?;
        if let Err(e) = self.zero_inode_tail(ino) {
            let _ = self.free_inode_bit(ino, is_dir);
            return Err(e);
        }
        let t = (self.now)();
        let mut i = DiskInode::zeroed();
        i.set_mode(new.kind.mode_bits() | (new.perm & 0o7777));
        i.set_uid(new.uid);
        i.set_gid(new.gid);
        i.set_atime(t);
        i.set_ctime(t);
        i.set_mtime(t);
        i.set_links(if is_dir { 2 } else { 1 });
        self.next_generation = self.next_generation.wrapping_add(1);
        i.set_generation(self.next_generation);
        match new.kind {
            FileKind::CharDev { major, minor } | FileKind::BlockDev { major, minor } => {
                i.set_rdev(major, minor)
            }
            _ => {}
        }
        let made = self.fill_new(ino, &mut i, dir_ino, target);
        if let Err(e) = made {
            // Undo the allocation; the inode was never linked.
            let _ = self.free_from(&mut i, 0);
            let _ = self.free_inode_bit(ino, is_dir);
            return Err(e);
        }
        if let Err(e) = self.add_entry(dir_ino, &mut dir, name, ino, new.kind.dirent_type()) {
            let _ = self.free_from(&mut i, 0);
            let _ = self.free_inode_bit(ino, is_dir);
            return Err(e);
        }
        if is_dir {
            dir.set_links(dir.links() + 1);
            self.write_inode(dir_ino, &dir)?;
        }
        Ok(ino)
    }

    /// Writes a new inode's first contents: a directory's first block, a
    /// symlink's target.
    fn fill_new(
        &mut self,
        ino: u32,
        i: &mut DiskInode,
        parent: u32,
        target: Option<&[u8]>,
    ) -> Result<()> {
        if i.is_dir() {
            let (phys, _) = self.map_alloc(ino, i, 0, false)?;
            self.init_dir_block(phys, ino, parent)?;
            i.set_size(u64::from(self.bs));
        } else if let Some(t) = target {
            if t.len() < 60 {
                // Fast symlink: the target (no NUL needed) in i_block.
                if let Some(s) = i.block_bytes_mut().get_mut(..t.len()) {
                    s.copy_from_slice(t);
                }
            } else {
                let (phys, _) = self.map_alloc(ino, i, 0, false)?;
                let mut buf = vec![0u8; self.bs as usize];
                if let Some(s) = buf.get_mut(..t.len()) {
                    s.copy_from_slice(t);
                }
                self.write_block(phys, &buf)?;
            }
            i.set_size(t.len() as u64);
        }
        self.write_inode(ino, i)
    }

    /// Adds a hard link `dir/name` to `ino` (not a directory).
    pub fn link(&mut self, dir_ino: u32, name: &[u8], ino: u32) -> Result<()> {
        let r = (|| {
            self.writable()?;
            check_name(name)?;
            let mut i = self.live_inode(ino)?;
            if i.is_dir() {
                return Err(Error::Invalid);
            }
            if i.links() >= LINK_MAX {
                return Err(Error::TooManyLinks);
            }
            let mut dir = self.dir_inode(dir_ino)?;
            if self.find_entry(&dir, name)?.is_some() {
                return Err(Error::Exists);
            }
            let ft = i.kind().map_or(0, |k| k.dirent_type());
            self.add_entry(dir_ino, &mut dir, name, ino, ft)?;
            i.set_links(i.links() + 1);
            i.set_ctime((self.now)());
            self.write_inode(ino, &i)
        })();
        match r {
            Ok(()) => self.names.put(dir_ino, name, ino),
            Err(e) => self.names.failed(dir_ino, name, e),
        }
        self.check(r)
    }

    /// Removes `dir/name` (not a directory). Returns the inode and its
    /// remaining link count; at 0 the caller calls [`Fs::evict`] once the
    /// inode is no longer open.
    pub fn unlink(&mut self, dir_ino: u32, name: &[u8]) -> Result<(u32, u16)> {
        let r = self.remove_inner(dir_ino, name, false);
        match r {
            Ok(_) => self.names.put(dir_ino, name, 0),
            Err(e) => self.names.failed(dir_ino, name, e),
        }
        self.check(r)
    }

    /// Removes the empty directory `dir/name`. Returns its inode (link count
    /// now 0: call [`Fs::evict`] when no longer open).
    pub fn rmdir(&mut self, dir_ino: u32, name: &[u8]) -> Result<u32> {
        let r = self.remove_inner(dir_ino, name, true).map(|(i, _)| i);
        match r {
            Ok(ino) => {
                self.names.forget_dir(ino);
                self.names.put(dir_ino, name, 0);
            }
            Err(e) => self.names.failed(dir_ino, name, e),
        }
        self.check(r)
    }

    fn remove_inner(&mut self, dir_ino: u32, name: &[u8], want_dir: bool) -> Result<(u32, u16)> {
        self.writable()?;
        if name == b"." || name == b".." {
            return Err(if want_dir {
                Error::Invalid
            } else {
                Error::IsDir
            });
        }
        let mut block = self.take_scratch();
        let r = self.remove_in(dir_ino, name, want_dir, &mut block);
        self.put_scratch(block);
        r
    }

    /// [`Fs::remove_inner`] with a block-sized buffer, where the entry's
    /// block stays for its removal.
    fn remove_in(
        &mut self,
        dir_ino: u32,
        name: &[u8],
        want_dir: bool,
        block: &mut [u8],
    ) -> Result<(u32, u16)> {
        let mut dir = self.dir_inode(dir_ino)?;
        let f = self
            .find_entry_in(&dir, name, block)?
            .ok_or(Error::NotFound)?;
        let ino = f.entry.ino;
        let mut i = self.live_inode(ino)?;
        if want_dir != i.is_dir() {
            return Err(if want_dir {
                Error::NotDir
            } else {
                Error::IsDir
            });
        }
        if want_dir && !self.dir_is_empty(&i)? {
            return Err(Error::NotEmpty);
        }
        self.remove_entry_in(dir_ino, &mut dir, &f, block)?;
        let t = (self.now)();
        i.set_ctime(t);
        if want_dir {
            i.set_links(0);
            dir.set_links(dir.links().saturating_sub(1));
            self.write_inode(dir_ino, &dir)?;
        } else {
            i.set_links(i.links().saturating_sub(1));
        }
        self.write_inode(ino, &i)?;
        Ok((ino, i.links()))
    }

    /// Whether inode `ino` lost its last link and is not freed yet (what
    /// [`Fs::evict`] frees). Reading a freed or unused inode is not damage
    /// here: a caller may ask twice about the same inode.
    pub fn awaits_eviction(&mut self, ino: u32) -> Result<bool> {
        let r = self.with_inode(ino, |i| i.links() == 0 && i.mode() != 0 && i.dtime() == 0);
        self.check(r)
    }

    /// Frees an inode whose link count is 0 and which nobody has open: its
    /// blocks, its xattr block, then the inode itself. No-op otherwise.
    pub fn evict(&mut self, ino: u32) -> Result<()> {
        self.names.forget_dir(ino);
        let r = (|| {
            self.writable()?;
            let mut i = self.read_inode(ino)?;
            if i.links() != 0 || i.mode() == 0 || i.dtime() != 0 {
                return Ok(());
            }
            if i.has_block_map(self.bs) {
                self.free_from(&mut i, 0)?;
            }
            self.drop_xattr_block(&mut i)?;
            let dir = i.is_dir();
            i.set_dtime((self.now)());
            i.set_size(0);
            self.write_inode(ino, &i)?;
            self.free_inode_bit(ino, dir)
        })();
        self.check(r)
    }

    /// Releases the inode's extended-attribute block (shared blocks carry a
    /// reference count at byte 4; magic 0xEA020000 at byte 0).
    fn drop_xattr_block(&mut self, i: &mut DiskInode) -> Result<()> {
        let b = i.file_acl();
        if b == 0 {
            return Ok(());
        }
        let mut buf = vec![0u8; self.bs as usize];
        self.read_block(b, &mut buf)?;
        if crate::le32(&buf, 0) != 0xEA02_0000 {
            return Err(Error::Corrupt("bad xattr block magic"));
        }
        let refs = crate::le32(&buf, 4);
        if refs > 1 {
            crate::put32(&mut buf, 4, refs - 1);
            self.write_block(b, &buf)?;
        } else {
            self.free_block(b)?;
        }
        i.set_blocks(i.blocks().saturating_sub(self.bs / 512));
        i.set_file_acl(0);
        Ok(())
    }

    /// Renames `odir/oname` to `ndir/nname`, replacing a target of the same
    /// kind (an empty directory for a directory). Returns the replaced inode
    /// and its remaining link count (0: [`Fs::evict`] it when closed).
    pub fn rename(
        &mut self,
        odir: u32,
        oname: &[u8],
        ndir: u32,
        nname: &[u8],
        noreplace: bool,
    ) -> Result<Option<(u32, u16)>> {
        self.names.forget(odir, oname);
        self.names.forget(ndir, nname);
        let r = self.rename_inner(odir, oname, ndir, nname, noreplace);
        if let Ok(Some((victim, _))) = r {
            self.names.forget_dir(victim);
        }
        self.check(r)
    }

    fn rename_inner(
        &mut self,
        odir_ino: u32,
        oname: &[u8],
        ndir_ino: u32,
        nname: &[u8],
        noreplace: bool,
    ) -> Result<Option<(u32, u16)>> {
        self.writable()?;
        check_name(nname)?;
        if oname == b"." || oname == b".." {
            return Err(Error::Invalid);
        }
        let odir = self.dir_inode(odir_ino)?;
        let ndir = self.dir_inode(ndir_ino)?;
        let src = self.find_entry(&odir, oname)?.ok_or(Error::NotFound)?;
        let ino = src.entry.ino;
        let mut i = self.live_inode(ino)?;
        let is_dir = i.is_dir();
        let ft = i.kind().map_or(0, |k| k.dirent_type());
        if is_dir && odir_ino != ndir_ino && self.is_ancestor(ino, ndir_ino)? {
            return Err(Error::Invalid);
        }
        let dst = self.find_entry(&ndir, nname)?;
        let t = (self.now)();
        let mut replaced = None;
        if let Some(d) = dst {
            if noreplace {
                return Err(Error::Exists);
            }
            if d.entry.ino == ino {
                return Ok(None); // same inode: nothing to do, as rename(2)
            }
            let mut victim = self.live_inode(d.entry.ino)?;
            if victim.is_dir() != is_dir {
                return Err(if is_dir { Error::NotDir } else { Error::IsDir });
            }
            if is_dir && !self.dir_is_empty(&victim)? {
                return Err(Error::NotEmpty);
            }
            self.retarget_entry(&d, ino, ft)?;
            let mut nd = self.read_inode(ndir_ino)?;
            self.touch_dir(ndir_ino, &mut nd, t)?;
            victim.set_ctime(t);
            if is_dir {
                victim.set_links(0);
                if odir_ino == ndir_ino {
                    // The directory loses the victim's `..` reference.
                    nd.set_links(nd.links().saturating_sub(1));
                    self.write_inode(ndir_ino, &nd)?;
                }
            } else {
                victim.set_links(victim.links().saturating_sub(1));
            }
            self.write_inode(d.entry.ino, &victim)?;
            replaced = Some((d.entry.ino, victim.links()));
        } else {
            if is_dir && odir_ino != ndir_ino && ndir.links() >= LINK_MAX {
                return Err(Error::TooManyLinks);
            }
            let mut nd = ndir;
            self.add_entry(ndir_ino, &mut nd, nname, ino, ft)?;
            if is_dir && odir_ino != ndir_ino {
                nd.set_links(nd.links() + 1);
                self.write_inode(ndir_ino, &nd)?;
            }
        }
        // Remove the old name; find it again: adding the new name may have
        // rewritten the block (same directory).
        let mut od = self.read_inode(odir_ino)?;
        let src = self
            .find_entry(&od, oname)?
            .ok_or(Error::Corrupt("renamed entry vanished"))?;
        self.remove_entry(odir_ino, &mut od, &src)?;
        if is_dir && odir_ino != ndir_ino {
            if let Some(dd) = self.find_entry(&i, b"..")? {
                self.retarget_entry(&dd, ndir_ino, 2)?;
            }
            // The old parent loses our `..`; a new parent that had a victim
            // directory swaps its `..` for ours (no change), else gained one
            // above.
            od.set_links(od.links().saturating_sub(1));
            self.write_inode(odir_ino, &od)?;
        }
        i.set_ctime(t);
        self.write_inode(ino, &i)?;
        Ok(replaced)
    }

    /// Whether `a` is `b` or one of `b`'s ancestors (walking `..`, bounded
    /// by the inode count so a loop in damaged `..` entries ends).
    fn is_ancestor(&self, a: u32, b: u32) -> Result<bool> {
        let mut cur = b;
        for _ in 0..self.sb.inodes_count {
            if cur == a {
                return Ok(true);
            }
            if cur == ROOT_INO {
                return Ok(false);
            }
            let d = self.dir_inode(cur)?;
            cur = self
                .find_entry(&d, b"..")?
                .ok_or(Error::Corrupt("directory without .."))?
                .entry
                .ino;
        }
        Err(Error::Corrupt("loop in .. entries"))
    }

    /// Target of a symlink.
    pub fn read_link(&mut self, ino: u32) -> Result<Vec<u8>> {
        let r = (|| {
            let i = self.live_inode(ino)?;
            if !i.is_symlink() {
                return Err(Error::Invalid);
            }
            let len = i.size() as usize;
            if i.is_fast_symlink(self.bs) {
                if len >= 60 {
                    return Err(Error::Corrupt("fast symlink too long"));
                }
                return Ok(i.block_bytes().get(..len).unwrap_or(&[]).to_vec());
            }
            if len >= self.bs as usize {
                return Err(Error::Corrupt("symlink longer than a block"));
            }
            let phys = self
                .map(&i, 0)?
                .ok_or(Error::Corrupt("slow symlink without a block"))?;
            let mut buf = vec![0u8; self.bs as usize];
            self.read_block(phys, &mut buf)?;
            buf.truncate(len);
            Ok(buf)
        })();
        self.check(r)
    }

    pub fn set_attr(&mut self, ino: u32, a: SetAttr) -> Result<()> {
        let r = (|| {
            self.writable()?;
            let mut i = self.live_inode(ino)?;
            if let Some(p) = a.perm {
                i.set_mode((i.mode() & S_IFMT) | (p & 0o7777));
            }
            if let Some(u) = a.uid {
                i.set_uid(u);
            }
            if let Some(g) = a.gid {
                i.set_gid(g);
            }
            if let Some(t) = a.atime {
                i.set_atime(t);
            }
            if let Some(t) = a.mtime {
                i.set_mtime(t);
            }
            if let Some(t) = a.ctime {
                i.set_ctime(t);
            }
            self.write_inode(ino, &i)
        })();
        self.check(r)
    }

    /// Largest file size this file system can hold.
    pub fn max_file_size(&self) -> u64 {
        let by_map = self.max_blocks() * u64::from(self.bs);
        let by_blocks = (1u64 << 32) * 512 - 2 * (1 << 30); // i_blocks, metadata slack
        let by_rev = if self.sb.rev == 0 {
            (1u64 << 31) - 1
        } else {
            u64::MAX
        };
        by_map.min(by_blocks).min(by_rev)
    }

    /// Reads file data at `offset`; holes read as zeros. Returns the bytes
    /// read (short at end of file).
    pub fn read(&mut self, ino: u32, offset: u64, buf: &mut [u8]) -> Result<usize> {
        let r = (|| {
            let i = self.live_inode(ino)?;
            if !i.is_reg() && !i.is_dir() {
                return Err(Error::Invalid);
            }
            self.read_data(&i, offset, buf)
        })();
        self.check(r)
    }

    fn read_data(&self, i: &DiskInode, offset: u64, buf: &mut [u8]) -> Result<usize> {
        let size = i.size();
        if offset >= size {
            return Ok(0);
        }
        let n = (size - offset).min(buf.len() as u64) as usize;
        let bs = u64::from(self.bs);
        let mut done = 0;
        while done < n {
            let pos = offset + done as u64;
            let in_blk = (pos % bs) as usize;
            let chunk = (bs as usize - in_blk).min(n - done);
            let out = buf.get_mut(done..done + chunk).ok_or(Error::Invalid)?;
            match self.map(i, pos / bs)? {
                Some(b) => self.dev.read(u64::from(b) * bs + in_blk as u64, out)?,
                None => out.fill(0),
            }
            done += chunk;
        }
        Ok(n)
    }

    /// Writes file data at `offset`, allocating blocks, extending the size.
    pub fn write(&mut self, ino: u32, offset: u64, data: &[u8]) -> Result<usize> {
        let r = self.write_inner(ino, offset, data);
        self.check(r)
    }

    fn write_inner(&mut self, ino: u32, offset: u64, data: &[u8]) -> Result<usize> {
        self.writable()?;
        let mut i = self.live_inode(ino)?;
        if !i.is_reg() {
            return Err(Error::Invalid);
        }
        let end = offset
            .checked_add(data.len() as u64)
            .ok_or(Error::FileTooBig)?;
        if end > self.max_file_size() {
            return Err(Error::FileTooBig);
        }
        let bs = u64::from(self.bs);
        let mut done = 0;
        let mut res = Ok(());
        while done < data.len() {
            let pos = offset + done as u64;
            let in_blk = (pos % bs) as usize;
            let chunk = (bs as usize - in_blk).min(data.len() - done);
            let partial = chunk != bs as usize;
            match self.map_alloc(ino, &mut i, pos / bs, partial) {
                Ok((b, _)) => {
                    let src = data.get(done..done + chunk).ok_or(Error::Invalid)?;
                    if let Err(e) = self.dev.write(u64::from(b) * bs + in_blk as u64, src) {
                        res = Err(e);
                        break;
                    }
                }
                Err(e) => {
                    res = Err(e);
                    break;
                }
            }
            done += chunk;
        }
        let new_end = offset + done as u64;
        if new_end > i.size() {
            self.grow_size(&mut i, new_end)?;
        }
        let t = (self.now)();
        i.set_mtime(t);
        i.set_ctime(t);
        self.write_inode(ino, &i)?;
        match res {
            Err(e) if done == 0 => Err(e),
            _ => Ok(done),
        }
    }

    fn grow_size(&mut self, i: &mut DiskInode, size: u64) -> Result<()> {
        if size > (1u64 << 31) - 1 && !self.sb.has_ro_compat(RO_COMPAT_LARGE_FILE) {
            if self.sb.rev == 0 {
                return Err(Error::FileTooBig);
            }
            let f = self.sb.get32(S_FEATURE_RO_COMPAT);
            self.sb.set32(S_FEATURE_RO_COMPAT, f | RO_COMPAT_LARGE_FILE);
            self.write_super()?;
        }
        i.set_size(size);
        Ok(())
    }

    /// Sets a regular file's size: blocks past the end are freed, the tail
    /// of the last block is zeroed, growth leaves a hole.
    pub fn truncate(&mut self, ino: u32, size: u64) -> Result<()> {
        let r = self.truncate_inner(ino, size, true);
        self.check(r)
    }

    /// [`Fs::truncate`] for a caller that keeps file data in a cache of
    /// its own: blocks past the end are freed but the tail of the last
    /// block is left alone (the caller zeroes it through its cache, so that
    /// no copy of a data block goes through [`BlockIo`]).
    pub fn set_size(&mut self, ino: u32, size: u64) -> Result<()> {
        let r = self.truncate_inner(ino, size, false);
        self.check(r)
    }

    fn truncate_inner(&mut self, ino: u32, size: u64, zero_tail: bool) -> Result<()> {
        {
            self.writable()?;
            let mut i = self.live_inode(ino)?;
            if !i.is_reg() {
                return Err(if i.is_dir() {
                    Error::IsDir
                } else {
                    Error::Invalid
                });
            }
            if size > self.max_file_size() {
                return Err(Error::FileTooBig);
            }
            let bs = u64::from(self.bs);
            let old = i.size();
            if size < old {
                self.free_from(&mut i, size.div_ceil(bs))?;
                let tail = (size % bs) as usize;
                if zero_tail
                    && tail != 0
                    && let Some(b) = self.map(&i, size / bs)?
                {
                    let z = vec![0u8; bs as usize - tail];
                    self.dev.write(u64::from(b) * bs + tail as u64, &z)?;
                }
                i.set_size(size);
            } else if size > old {
                self.grow_size(&mut i, size)?;
            }
            let t = (self.now)();
            i.set_mtime(t);
            i.set_ctime(t);
            self.write_inode(ino, &i)
        }
    }

    /// Physical block of a regular file's logical block `lblk`, allocated
    /// if it is a hole (not zeroed: the caller writes the whole block, or
    /// zeros where it has no data). Returns `(block, newly allocated)`.
    pub fn bmap_alloc(&mut self, ino: u32, lblk: u64) -> Result<(u64, bool)> {
        let r = (|| {
            self.writable()?;
            let mut i = self.live_inode(ino)?;
            if !i.is_reg() {
                return Err(Error::Invalid);
            }
            if lblk >= self.max_file_size().div_ceil(u64::from(self.bs)) {
                return Err(Error::FileTooBig);
            }
            let (b, new) = self.map_alloc(ino, &mut i, lblk, false)?;
            if new {
                self.write_inode(ino, &i)?;
            }
            Ok((u64::from(b), new))
        })();
        self.check(r)
    }

    /// Physical block of a file's logical block (`None`: hole), for a
    /// caller doing its own data I/O.
    pub fn bmap(&mut self, ino: u32, lblk: u64) -> Result<Option<u64>> {
        let r = self
            .live_inode(ino)
            .and_then(|i| self.map(&i, lblk))
            .map(|b| b.map(u64::from));
        self.check(r)
    }
}
