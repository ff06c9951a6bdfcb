//! Zero-copy parser for cpio archives in the "newc" (SVR4) format, the
//! format Linux uses for its initramfs.
//!
//! Format reference: cpio(5), section "New ASCII Format" (magic `070701`)
//! and "New CRC Format" (magic `070702`), plus the kernel's
//! Documentation/driver-api/early-userspace/buffer-format.rst.
//!
//! Each member is a 110-byte ASCII header (the magic, then thirteen 8-digit
//! hexadecimal fields), then the NUL-terminated path name, padded so that
//! header+name is a multiple of 4 bytes, then the file data, padded to a
//! multiple of 4 bytes. Padding is relative to the start of the archive.
//! The archive ends with a member named `TRAILER!!!`.
//!
//! The parser never panics and never allocates: every offset derived from the
//! input is computed with checked arithmetic and every slice is taken with
//! `get`, so arbitrary (hostile) bytes produce an error, not a crash.

#![forbid(unsafe_code)]
#![no_std]

#[cfg(test)]
extern crate std;

use core::iter::FusedIterator;

/// Magic of the "new ASCII" format.
pub const MAGIC_NEWC: &[u8; 6] = b"070701";
/// Magic of the "new CRC" format (same layout, `check` holds a data checksum).
pub const MAGIC_CRC: &[u8; 6] = b"070702";
/// Size of a newc header: 6 bytes of magic plus 13 fields of 8 hex digits.
pub const HEADER_LEN: usize = 110;
/// Name of the member that marks the end of an archive.
pub const TRAILER_NAME: &[u8] = b"TRAILER!!!";

/// File type mask and values of the `mode` field (same as `st_mode`).
pub const S_IFMT: u32 = 0o170_000;
pub const S_IFSOCK: u32 = 0o140_000;
pub const S_IFLNK: u32 = 0o120_000;
pub const S_IFREG: u32 = 0o100_000;
pub const S_IFBLK: u32 = 0o060_000;
pub const S_IFDIR: u32 = 0o040_000;
pub const S_IFCHR: u32 = 0o020_000;
pub const S_IFIFO: u32 = 0o010_000;

/// Why an archive could not be parsed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CpioError {
    /// The header does not start with `070701` or `070702`.
    BadMagic,
    /// A header field contains something other than 8 hexadecimal digits.
    BadHex,
    /// A header, name or data region extends past the end of the buffer.
    Truncated,
    /// `namesize` is 0, or the name is not NUL-terminated, or contains a NUL.
    BadName,
    /// A `070702` regular file whose data does not sum to its `check` field.
    BadChecksum,
}

/// One archive member. All slices borrow from the archive buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entry<'a> {
    /// Path name without its NUL terminator and without leading `./` or `/`
    /// (so the root directory `.` of `find . | cpio -o` stays `.`, and a
    /// bare `/` or `./` becomes empty).
    pub name: &'a [u8],
    pub ino: u32,
    /// File type and permission bits, as in `st_mode`.
    pub mode: u32,
    pub uid: u32,
    pub gid: u32,
    pub nlink: u32,
    pub mtime: u32,
    pub dev_major: u32,
    pub dev_minor: u32,
    pub rdev_major: u32,
    pub rdev_minor: u32,
    /// File contents; for a symlink, the link target (not NUL-terminated).
    pub data: &'a [u8],
}

impl Entry<'_> {
    /// The `S_IFMT` bits of `mode`.
    pub fn file_type(&self) -> u32 {
        self.mode & S_IFMT
    }

    /// Permission bits, including setuid/setgid/sticky.
    pub fn permissions(&self) -> u32 {
        self.mode & 0o7777
    }

    pub fn is_dir(&self) -> bool {
        self.file_type() == S_IFDIR
    }

    pub fn is_file(&self) -> bool {
        self.file_type() == S_IFREG
    }

    pub fn is_symlink(&self) -> bool {
        self.file_type() == S_IFLNK
    }

    pub fn is_char_device(&self) -> bool {
        self.file_type() == S_IFCHR
    }

    pub fn is_block_device(&self) -> bool {
        self.file_type() == S_IFBLK
    }
}

/// Iterates over the members of an archive; see [`entries`].
#[derive(Debug, Clone)]
pub struct Entries<'a> {
    data: &'a [u8],
    /// Offset of the next header, relative to the archive start.
    pos: usize,
    state: State,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Running,
    /// Stopped at the trailer member.
    Trailer,
    /// Stopped at the end of the buffer, or after an error.
    Done,
}

/// Iterate over the members of the newc archive in `data`.
///
/// `data` must start at the first header: padding is computed relative to
/// `data[0]`. Iteration stops after the `TRAILER!!!` member (which is not
/// yielded) or when the buffer is exhausted exactly at a member boundary
/// (an archive without a trailer is accepted, like the kernel does; use
/// [`Entries::saw_trailer`] to tell the two apart). After an error the
/// iterator yields `None`.
pub fn entries(data: &[u8]) -> Entries<'_> {
    Entries {
        data,
        pos: 0,
        state: State::Running,
    }
}

impl<'a> Entries<'a> {
    /// True once iteration stopped at a `TRAILER!!!` member.
    pub fn saw_trailer(&self) -> bool {
        self.state == State::Trailer
    }

    /// Bytes following the trailer (after its padding), e.g. zero padding
    /// or another concatenated archive as the kernel allows in initramfs.
    /// Empty until the trailer has been reached.
    pub fn rest(&self) -> &'a [u8] {
        if self.state == State::Trailer {
            self.data.get(self.pos..).unwrap_or(&[])
        } else {
            &[]
        }
    }

    /// Parse the member at `self.pos`. Returns the entry and the offset of
    /// the next header, or `Ok(None)` for the trailer.
    fn parse_at(&self) -> Result<(Option<Entry<'a>>, usize), CpioError> {
        let start = self.pos;
        let header_end = start.checked_add(HEADER_LEN).ok_or(CpioError::Truncated)?;
        let Some(header) = self.data.get(start..header_end) else {
            // Report a wrong magic before a short buffer, so trailing junk
            // shorter than a header is not misreported as truncation.
            let tail = self.data.get(start..).unwrap_or(&[]);
            let n = tail.len().min(MAGIC_NEWC.len());
            let prefix = tail.get(..n).unwrap_or(&[]);
            if MAGIC_NEWC.starts_with(prefix) || MAGIC_CRC.starts_with(prefix) {
                return Err(CpioError::Truncated);
            }
            return Err(CpioError::BadMagic);
        };
        let magic = header.get(..6).ok_or(CpioError::Truncated)?;
        let crc = if magic == MAGIC_NEWC {
            false
        } else if magic == MAGIC_CRC {
            true
        } else {
            return Err(CpioError::BadMagic);
        };

        let mut fields = [0u32; 13];
        for (i, field) in fields.iter_mut().enumerate() {
            // i < 13 so this cannot overflow; still use checked ops for form.
            let off = i.checked_mul(8).and_then(|o| o.checked_add(6));
            let digits = off
                .and_then(|o| header.get(o..o.checked_add(8)?))
                .ok_or(CpioError::Truncated)?;
            *field = parse_hex(digits).ok_or(CpioError::BadHex)?;
        }
        let [
            ino,
            mode,
            uid,
            gid,
            nlink,
            mtime,
            filesize,
            dev_major,
            dev_minor,
            rdev_major,
            rdev_minor,
            namesize,
            check,
        ] = fields;

        // Name: `namesize` bytes including the NUL, right after the header.
        let namesize = usize::try_from(namesize).map_err(|_| CpioError::Truncated)?;
        if namesize == 0 {
            return Err(CpioError::BadName);
        }
        let name_end = header_end
            .checked_add(namesize)
            .ok_or(CpioError::Truncated)?;
        let raw_name = self
            .data
            .get(header_end..name_end)
            .ok_or(CpioError::Truncated)?;
        let (&nul, name) = raw_name.split_last().ok_or(CpioError::BadName)?;
        if nul != 0 || name.contains(&0) {
            return Err(CpioError::BadName);
        }

        // Data starts at the next 4-byte boundary after the name.
        let data_start = align4(name_end).ok_or(CpioError::Truncated)?;
        let filesize = usize::try_from(filesize).map_err(|_| CpioError::Truncated)?;
        let data_end = data_start
            .checked_add(filesize)
            .ok_or(CpioError::Truncated)?;
        let data = self
            .data
            .get(data_start..data_end)
            .ok_or(CpioError::Truncated)?;
        let next = align4(data_end).ok_or(CpioError::Truncated)?;

        // Only regular files carry a checksum: GNU cpio writes 0 for
        // symlink targets, and the kernel ignores the field altogether.
        if crc && mode & S_IFMT == S_IFREG && checksum(data) != check {
            return Err(CpioError::BadChecksum);
        }
        if name == TRAILER_NAME {
            return Ok((None, next));
        }
        let entry = Entry {
            name: strip_prefix(name),
            ino,
            mode,
            uid,
            gid,
            nlink,
            mtime,
            dev_major,
            dev_minor,
            rdev_major,
            rdev_minor,
            data,
        };
        Ok((Some(entry), next))
    }
}

impl<'a> Iterator for Entries<'a> {
    type Item = Result<Entry<'a>, CpioError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.state != State::Running {
            return None;
        }
        // A buffer that ends exactly at a member boundary (or inside the
        // last member's trailing padding) is a clean end.
        if self.pos >= self.data.len() {
            self.state = State::Done;
            return None;
        }
        match self.parse_at() {
            Ok((Some(entry), next)) => {
                self.pos = next;
                Some(Ok(entry))
            }
            Ok((None, next)) => {
                self.pos = next;
                self.state = State::Trailer;
                None
            }
            Err(e) => {
                self.state = State::Done;
                Some(Err(e))
            }
        }
    }
}

impl FusedIterator for Entries<'_> {}

/// Parse exactly 8 ASCII hex digits (either case) into a u32.
fn parse_hex(digits: &[u8]) -> Option<u32> {
    if digits.len() != 8 {
        return None;
    }
    digits.iter().try_fold(0u32, |acc, &c| {
        let v = match c {
            b'0'..=b'9' => c - b'0',
            b'a'..=b'f' => c - b'a' + 10,
            b'A'..=b'F' => c - b'A' + 10,
            _ => return None,
        };
        // 8 digits of 4 bits fit exactly in a u32; checked_mul keeps that
        // an explicit invariant rather than an assumption.
        acc.checked_mul(16)?.checked_add(u32::from(v))
    })
}

/// Round up to a multiple of 4, or `None` on overflow.
fn align4(x: usize) -> Option<usize> {
    Some(x.checked_add(3)? & !3)
}

/// The `070702` checksum: the sum of all data bytes, modulo 2^32.
fn checksum(data: &[u8]) -> u32 {
    data.iter()
        .fold(0u32, |acc, &b| acc.wrapping_add(u32::from(b)))
}

/// Remove any leading `./` and `/` components so names are relative.
fn strip_prefix(mut name: &[u8]) -> &[u8] {
    loop {
        if let Some(rest) = name.strip_prefix(b"./") {
            name = rest;
        } else if let Some(rest) = name.strip_prefix(b"/") {
            name = rest;
        } else {
            return name;
        }
    }
}

#[cfg(test)]
mod tests;
