//! Linear directory blocks: entries `{inode u32, rec_len u16, name_len u8,
//! file_type u8, name}` chained by `rec_len` to the end of each block.
//! Without the filetype feature, `name_len` is 16 bits and `file_type` is 0.

use alloc::vec;
use alloc::vec::Vec;

use crate::fs::Fs;
use crate::inode::{DiskInode, INDEX_FL};
use crate::{BlockIo, Error, Result, le16, le32, put16, put32};

/// A directory entry as `read_dir` reports it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DirEntry {
    pub ino: u32,
    pub name: Vec<u8>,
    /// `EXT2_FT_*`, 0 if the file system has no filetype feature.
    pub file_type: u8,
    /// Cookie of the entry after this one.
    pub next: u64,
}

/// An entry's place and header inside a block.
#[derive(Clone, Copy, Debug)]
pub(crate) struct RawEntry {
    pub off: usize,
    pub ino: u32,
    pub rec_len: usize,
    pub name_len: usize,
}

/// Bytes an entry with a name of `len` bytes needs.
pub(crate) fn rec_len_for(len: usize) -> usize {
    (8 + len + 3) & !3
}

/// Where an entry was found.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Found {
    pub phys: u32,
    pub entry: RawEntry,
    /// The previous entry in the same block, for merging on removal.
    pub prev: Option<RawEntry>,
}

impl<D: BlockIo> Fs<D> {
    /// The entries of one directory block in order, each checked as it is
    /// reached (a scan that stops early never decodes the rest).
    pub(crate) fn dir_entries<'b>(&self, buf: &'b [u8]) -> DirEntries<'b> {
        self.dir_entries_from(buf, 0)
    }

    /// [`Fs::dir_entries`] from byte `off`, which must be an entry
    /// boundary (a slot, crate::names).
    pub(crate) fn dir_entries_from<'b>(&self, buf: &'b [u8], off: usize) -> DirEntries<'b> {
        DirEntries {
            buf,
            off,
            filetype: self.sb.filetype(),
            inodes_count: self.sb.inodes_count,
        }
    }

    /// Number of blocks of a directory, checked against its size.
    pub(crate) fn dir_blocks(&self, dir: &DiskInode) -> Result<u64> {
        if !dir.is_dir() {
            return Err(Error::NotDir);
        }
        let size = dir.size();
        if !size.is_multiple_of(u64::from(self.bs)) {
            return Err(Error::Corrupt(
                "directory size not a multiple of the block size",
            ));
        }
        if size > u64::from(self.sb.blocks_count) * u64::from(self.bs) {
            return Err(Error::Corrupt("directory larger than the file system"));
        }
        Ok(size / u64::from(self.bs))
    }

    /// Reads block `lblk` of a directory; a hole is damage.
    pub(crate) fn dir_block(&self, dir: &DiskInode, lblk: u64, buf: &mut [u8]) -> Result<u32> {
        let phys = self
            .map(dir, lblk)?
            .ok_or(Error::Corrupt("hole in a directory"))?;
        self.read_block(phys, buf)?;
        Ok(phys)
    }

    pub(crate) fn find_entry(&self, dir: &DiskInode, name: &[u8]) -> Result<Option<Found>> {
        let mut buf = vec![0u8; self.bs as usize];
        self.find_entry_in(dir, name, &mut buf)
    }

    /// [`Fs::find_entry`] leaving the block that holds the entry in `buf`
    /// (one block long), for a caller that changes it. Only the part of
    /// each block the scan reaches is read (in growing pieces, from 512
    /// bytes): the rest of `buf` holds whatever it held before.
    pub(crate) fn find_entry_in(
        &self,
        dir: &DiskInode,
        name: &[u8],
        buf: &mut [u8],
    ) -> Result<Option<Found>> {
        let n = self.dir_blocks(dir)?;
        let bs = self.bs as usize;
        if buf.len() != bs {
            return Err(Error::Invalid);
        }
        for lblk in 0..n {
            let phys = self
                .map(dir, lblk)?
                .ok_or(Error::Corrupt("hole in a directory"))?;
            self.check_block(phys)?;
            let base = u64::from(phys) * u64::from(self.bs);
            let mut loaded = 0;
            let mut prev = None;
            let mut off = 0;
            while off < bs {
                // The entry's header, then (if it may match) its name.
                let want = if off + 8 <= bs { off + 8 } else { bs };
                self.load_upto(base, buf, &mut loaded, want)?;
                let e = self.dir_entries_from(buf, off).entry_at(off)?;
                if e.ino != 0 && e.name_len == name.len() {
                    self.load_upto(base, buf, &mut loaded, off + 8 + e.name_len)?;
                    if buf.get(off + 8..off + 8 + e.name_len) == Some(name) {
                        return Ok(Some(Found {
                            phys,
                            entry: e,
                            prev,
                        }));
                    }
                }
                prev = Some(e);
                off += e.rec_len;
            }
        }
        Ok(None)
    }

    /// Makes bytes `..want` of the block at `base` valid in `buf`, of which
    /// `..*loaded` are: reads at least as much again as is loaded (512
    /// bytes at first), up to the end of the block.
    fn load_upto(&self, base: u64, buf: &mut [u8], loaded: &mut usize, want: usize) -> Result<()> {
        if want <= *loaded {
            return Ok(());
        }
        let bs = buf.len();
        let step = (*loaded).max(512);
        let to = want
            .max(*loaded + step)
            .div_ceil(512)
            .saturating_mul(512)
            .min(bs);
        let part = buf.get_mut(*loaded..to).ok_or(Error::Invalid)?;
        self.dev.read(base + *loaded as u64, part)?;
        *loaded = to;
        Ok(())
    }

    /// Calls `f` for each live entry from `cookie` (a byte position in the
    /// directory) until it returns false.
    pub(crate) fn iterate_dir(
        &self,
        dir: &DiskInode,
        cookie: u64,
        f: &mut dyn FnMut(DirEntry) -> bool,
    ) -> Result<()> {
        let n = self.dir_blocks(dir)?;
        let bs = u64::from(self.bs);
        let mut buf = vec![0u8; self.bs as usize];
        for lblk in cookie / bs..n {
            self.dir_block(dir, lblk, &mut buf)?;
            for e in self.dir_entries(&buf) {
                let e = e?;
                let pos = lblk * bs + e.off as u64;
                if pos < cookie || e.ino == 0 {
                    continue;
                }
                let name = buf
                    .get(e.off + 8..e.off + 8 + e.name_len)
                    .unwrap_or(&[])
                    .to_vec();
                let file_type = if self.sb.filetype() {
                    buf.get(e.off + 7).copied().unwrap_or(0)
                } else {
                    0
                };
                let next = pos + e.rec_len as u64;
                if !f(DirEntry {
                    ino: e.ino,
                    name,
                    file_type,
                    next,
                }) {
                    return Ok(());
                }
            }
        }
        Ok(())
    }

    fn write_entry(
        &self,
        buf: &mut [u8],
        off: usize,
        ino: u32,
        rec_len: usize,
        name: &[u8],
        ftype: u8,
    ) {
        put32(buf, off, ino);
        put16(buf, off + 4, rec_len as u16);
        if self.sb.filetype() {
            if let Some(b) = buf.get_mut(off + 6) {
                *b = name.len() as u8;
            }
            if let Some(b) = buf.get_mut(off + 7) {
                *b = ftype;
            }
        } else {
            put16(buf, off + 6, name.len() as u16);
        }
        if let Some(s) = buf.get_mut(off + 8..off + 8 + name.len()) {
            s.copy_from_slice(name);
        }
    }

    /// Adds `name -> ino` to directory `dir_ino`, reusing slack in an
    /// existing block or appending a block. Writes the directory inode.
    ///
    /// The search for room starts at the directory's slot (crate::names)
    /// when it applies, and reads a block only from where the search
    /// starts; only the bytes the change makes are written back.
    pub(crate) fn add_entry(
        &mut self,
        dir_ino: u32,
        dir: &mut DiskInode,
        name: &[u8],
        ino: u32,
        ftype: u8,
    ) -> Result<()> {
        let mut buf = self.take_scratch();
        let r = self.add_entry_in(dir_ino, dir, name, ino, ftype, &mut buf);
        self.put_scratch(buf);
        r
    }

    fn add_entry_in(
        &mut self,
        dir_ino: u32,
        dir: &mut DiskInode,
        name: &[u8],
        ino: u32,
        ftype: u8,
        buf: &mut [u8],
    ) -> Result<()> {
        let need = rec_len_for(name.len());
        let n = self.dir_blocks(dir)?;
        let bs = self.bs as usize;
        if buf.len() != bs {
            return Err(Error::Invalid);
        }
        let t = (self.now)();
        let (lblk0, off0) = match self.names.slot(dir_ino) {
            Some(s) if s.need <= need && s.lblk < n && s.off < bs => (s.lblk, s.off),
            _ => (0, 0),
        };
        for lblk in lblk0..n {
            let start = if lblk == lblk0 { off0 } else { 0 };
            let phys = self
                .map(dir, lblk)?
                .ok_or(Error::Corrupt("hole in a directory"))?;
            self.check_block(phys)?;
            let base = u64::from(phys) * u64::from(self.bs);
            self.dev.read(base + start as u64, &mut buf[start..])?;
            let mut found = None;
            for e in self.dir_entries_from(buf, start) {
                let e = e?;
                if (e.ino == 0 && e.rec_len >= need)
                    || (e.ino != 0 && e.rec_len - rec_len_for(e.name_len) >= need)
                {
                    found = Some(e);
                    break;
                }
            }
            if let Some(e) = found {
                // The bytes changed: [lo, hi); the new entry starts at `at`.
                let (lo, at) = if e.ino == 0 {
                    self.write_entry(buf, e.off, ino, e.rec_len, name, ftype);
                    (e.off, e.off)
                } else {
                    let used = rec_len_for(e.name_len);
                    put16(buf, e.off + 4, used as u16);
                    self.write_entry(buf, e.off + used, ino, e.rec_len - used, name, ftype);
                    (e.off + 4, e.off + used)
                };
                let hi = at + 8 + name.len();
                let bytes = buf.get(lo..hi).ok_or(Error::Corrupt("directory entry"))?;
                self.dev.write(base + lo as u64, bytes)?;
                // Nothing before the new entry has room for `need` bytes.
                self.names.set_slot(
                    dir_ino,
                    crate::names::Slot {
                        lblk,
                        off: at,
                        need,
                    },
                );
                return self.touch_dir(dir_ino, dir, t);
            }
        }
        let (phys, _) = self.map_alloc(dir_ino, dir, n, false)?;
        buf.fill(0);
        self.write_entry(buf, 0, ino, bs, name, ftype);
        self.write_block(phys, buf)?;
        dir.set_size((n + 1) * bs as u64);
        self.names.set_slot(
            dir_ino,
            crate::names::Slot {
                lblk: n,
                off: 0,
                need,
            },
        );
        self.touch_dir(dir_ino, dir, t)
    }

    /// After a change: new mtime/ctime, and no htree index any more (this
    /// code does not maintain one; the blocks stay valid linear blocks).
    pub(crate) fn touch_dir(&mut self, dir_ino: u32, dir: &mut DiskInode, t: u32) -> Result<()> {
        dir.set_mtime(t);
        dir.set_ctime(t);
        dir.set_flags(dir.flags() & !INDEX_FL);
        self.write_inode(dir_ino, dir)
    }

    /// Removes a found entry: merged into the previous entry of its block,
    /// or marked unused if it is the first.
    pub(crate) fn remove_entry(
        &mut self,
        dir_ino: u32,
        dir: &mut DiskInode,
        f: &Found,
    ) -> Result<()> {
        let mut buf = vec![0u8; self.bs as usize];
        self.read_block(f.phys, &mut buf)?;
        self.remove_entry_in(dir_ino, dir, f, &mut buf)
    }

    /// [`Fs::remove_entry`] with the entry's block already in `buf`
    /// ([`Fs::find_entry_in`] left it there).
    pub(crate) fn remove_entry_in(
        &mut self,
        dir_ino: u32,
        dir: &mut DiskInode,
        f: &Found,
        buf: &mut [u8],
    ) -> Result<()> {
        // The merge makes room before the slot and may swallow it.
        self.names.clear_slot(dir_ino);
        let (lo, hi) = match f.prev {
            Some(p) => {
                put16(buf, p.off + 4, (p.rec_len + f.entry.rec_len) as u16);
                (p.off + 4, p.off + 6)
            }
            None => {
                put32(buf, f.entry.off, 0);
                (f.entry.off, f.entry.off + 4)
            }
        };
        let bytes = buf.get(lo..hi).ok_or(Error::Corrupt("directory entry"))?;
        self.check_block(f.phys)?;
        self.dev
            .write(u64::from(f.phys) * u64::from(self.bs) + lo as u64, bytes)?;
        let t = (self.now)();
        self.touch_dir(dir_ino, dir, t)
    }

    /// Points a found entry at another inode (rename over an existing name,
    /// or `..` of a moved directory).
    pub(crate) fn retarget_entry(&mut self, f: &Found, ino: u32, ftype: u8) -> Result<()> {
        let mut buf = vec![0u8; self.bs as usize];
        self.read_block(f.phys, &mut buf)?;
        put32(&mut buf, f.entry.off, ino);
        if self.sb.filetype()
            && let Some(b) = buf.get_mut(f.entry.off + 7)
        {
            *b = ftype;
        }
        self.write_block(f.phys, &buf)
    }

    /// Whether a directory holds only `.` and `..`.
    pub(crate) fn dir_is_empty(&self, dir: &DiskInode) -> Result<bool> {
        let mut empty = true;
        self.iterate_dir(dir, 0, &mut |e| {
            if e.name != b"." && e.name != b".." {
                empty = false;
            }
            empty
        })?;
        Ok(empty)
    }

    /// The first block of a new directory: `.` and `..`.
    pub(crate) fn init_dir_block(&self, phys: u32, ino: u32, parent: u32) -> Result<()> {
        let bs = self.bs as usize;
        let mut buf = vec![0u8; bs];
        self.write_entry(&mut buf, 0, ino, 12, b".", 2);
        self.write_entry(&mut buf, 12, parent, bs - 12, b"..", 2);
        self.write_block(phys, &buf)
    }
}

/// The entries of one directory block, each checked when reached; after
/// an error the iteration ends.
pub(crate) struct DirEntries<'b> {
    buf: &'b [u8],
    off: usize,
    /// The superblock's filetype feature and inode count.
    filetype: bool,
    inodes_count: u32,
}

impl DirEntries<'_> {
    /// Checks and decodes the entry at `off` (below the block's length):
    /// only its 8 header bytes are read.
    pub(crate) fn entry_at(&self, off: usize) -> Result<RawEntry> {
        let buf = self.buf;
        let bs = buf.len();
        if off + 8 > bs {
            return Err(Error::Corrupt("directory entry crosses the block"));
        }
        let ino = le32(buf, off);
        let rec_len = le16(buf, off + 4) as usize;
        let name_len = if self.filetype {
            buf.get(off + 6).copied().unwrap_or(0) as usize
        } else {
            le16(buf, off + 6) as usize
        };
        if rec_len < 12 || !rec_len.is_multiple_of(4) || off + rec_len > bs {
            return Err(Error::Corrupt("bad directory rec_len"));
        }
        if rec_len_for(name_len) > rec_len {
            return Err(Error::Corrupt("directory name longer than its entry"));
        }
        if ino > self.inodes_count {
            return Err(Error::Corrupt("directory entry inode out of range"));
        }
        if ino != 0 && name_len == 0 {
            return Err(Error::Corrupt("empty name in directory entry"));
        }
        Ok(RawEntry {
            off,
            ino,
            rec_len,
            name_len,
        })
    }
}

impl Iterator for DirEntries<'_> {
    type Item = Result<RawEntry>;

    fn next(&mut self) -> Option<Result<RawEntry>> {
        if self.off >= self.buf.len() {
            return None;
        }
        let r = self.entry_at(self.off);
        match &r {
            Ok(e) => self.off += e.rec_len,
            Err(_) => self.off = self.buf.len(),
        }
        Some(r)
    }
}
