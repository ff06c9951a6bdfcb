//! Parser for ELF64 little-endian x86-64 executables, enough to load static
//! (and static-PIE) programs.
//!
//! Format references: "ELF-64 Object File Format" (version 1.5) for the
//! header and program header layouts, and the "System V ABI, AMD64
//! Architecture Processor Supplement" for `EM_X86_64` and the user address
//! range.
//!
//! [`parse`] validates everything a loader relies on (header identity,
//! program header table bounds, every `PT_LOAD` segment), so a loader can
//! then map segments without re-checking the arithmetic. The parser never
//! panics and never allocates: offsets from the file are combined with
//! checked arithmetic and bytes are read with `get`.

#![forbid(unsafe_code)]
#![no_std]

#[cfg(test)]
extern crate std;

/// `\x7fELF`.
pub const ELF_MAGIC: [u8; 4] = [0x7f, b'E', b'L', b'F'];
/// Size of the ELF64 file header.
pub const EHDR_LEN: usize = 64;
/// Size of one ELF64 program header (`e_phentsize` must equal this).
pub const PHDR_LEN: usize = 56;
/// Upper bound on `e_phnum`; real executables have about a dozen.
pub const MAX_PHNUM: u16 = 256;
/// End (exclusive) of the lower canonical half on x86-64 with 4-level
/// paging: every loadable segment must lie below it.
pub const USER_END: u64 = 0x0000_8000_0000_0000;

const ELFCLASS64: u8 = 2;
const ELFDATA2LSB: u8 = 1;
const EV_CURRENT: u8 = 1;
pub const ET_EXEC: u16 = 2;
pub const ET_DYN: u16 = 3;
pub const EM_X86_64: u16 = 62;

/// Segment types (`p_type`).
pub const PT_NULL: u32 = 0;
pub const PT_LOAD: u32 = 1;
pub const PT_DYNAMIC: u32 = 2;
pub const PT_INTERP: u32 = 3;
pub const PT_NOTE: u32 = 4;
pub const PT_PHDR: u32 = 6;
pub const PT_TLS: u32 = 7;
pub const PT_GNU_EH_FRAME: u32 = 0x6474_e550;
pub const PT_GNU_STACK: u32 = 0x6474_e551;
pub const PT_GNU_RELRO: u32 = 0x6474_e552;

/// Segment permission bits (`p_flags`).
pub const PF_X: u32 = 1;
pub const PF_W: u32 = 2;
pub const PF_R: u32 = 4;

/// Why a file was rejected.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ElfError {
    /// Does not start with `\x7fELF`.
    NotElf,
    /// An ELF file, but not ELF64 / little-endian / version 1 / x86-64 /
    /// `ET_EXEC` or `ET_DYN`.
    Unsupported,
    /// The file ends inside the ELF header or the program header table.
    Truncated,
    /// Bad `e_phentsize`, `e_phnum` (0 or above [`MAX_PHNUM`]), a table
    /// offset that overflows, or no `PT_LOAD` segment.
    BadProgramHeaders,
    /// A segment whose sizes, file range, address range or alignment is
    /// invalid, or `PT_LOAD`s that overlap or are not sorted by address.
    BadSegment,
}

/// The object file type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ElfKind {
    /// `ET_EXEC`: loaded at the addresses in its program headers.
    Exec,
    /// `ET_DYN`: position independent, loaded at a base chosen by the loader.
    Dyn,
}

/// `p_flags` of a segment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SegmentFlags(pub u32);

impl SegmentFlags {
    pub fn readable(self) -> bool {
        self.0 & PF_R != 0
    }

    pub fn writable(self) -> bool {
        self.0 & PF_W != 0
    }

    pub fn executable(self) -> bool {
        self.0 & PF_X != 0
    }
}

/// One program header, decoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProgramHeader {
    pub p_type: u32,
    pub flags: SegmentFlags,
    /// Offset of the segment's bytes in the file.
    pub offset: u64,
    pub vaddr: u64,
    /// Bytes present in the file; the rest up to `memsz` is zero-filled.
    pub filesz: u64,
    pub memsz: u64,
    pub align: u64,
}

impl ProgramHeader {
    pub fn is_load(&self) -> bool {
        self.p_type == PT_LOAD
    }

    /// End (exclusive) of the segment in memory, if it does not overflow.
    pub fn vaddr_end(&self) -> Option<u64> {
        self.vaddr.checked_add(self.memsz)
    }

    /// Decode from the 56 bytes of an ELF64 `Phdr`.
    fn decode(b: &[u8]) -> Option<Self> {
        Some(ProgramHeader {
            p_type: read_u32(b, 0)?,
            flags: SegmentFlags(read_u32(b, 4)?),
            offset: read_u64(b, 8)?,
            vaddr: read_u64(b, 16)?,
            // 24: p_paddr, meaningless for user programs.
            filesz: read_u64(b, 32)?,
            memsz: read_u64(b, 40)?,
            align: read_u64(b, 48)?,
        })
    }
}

/// A validated ELF file. Borrows the file bytes.
///
/// The public fields are copies of header values; methods re-check bounds
/// when they use them, so even an `ElfFile` whose fields were modified
/// after [`parse`] cannot cause a panic.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ElfFile<'a> {
    pub kind: ElfKind,
    /// `e_entry`; for [`ElfKind::Dyn`] relative to the load base.
    pub entry: u64,
    pub phoff: u64,
    pub phentsize: u16,
    pub phnum: u16,
    data: &'a [u8],
}

/// Parse and validate an ELF64 x86-64 executable.
pub fn parse(data: &[u8]) -> Result<ElfFile<'_>, ElfError> {
    parse_prefix(data, data.len())
}

/// Like [`parse`], from the first bytes of a file of `file_len` bytes: the
/// ELF header and program header table must lie in `head`; segments are
/// checked against `file_len`. Lets a loader avoid reading a whole
/// executable to validate it. Segment data beyond `head` is not available
/// ([`ElfFile::segment_data`] reports it as truncated).
pub fn parse_prefix(data: &[u8], file_len: usize) -> Result<ElfFile<'_>, ElfError> {
    if file_len < data.len() {
        return Err(ElfError::Truncated);
    }
    // A wrong magic is reported even when the input is shorter than a
    // header, so "not ELF" is never confused with "truncated ELF".
    let n = data.len().min(ELF_MAGIC.len());
    if data.get(..n) != ELF_MAGIC.get(..n) {
        return Err(ElfError::NotElf);
    }
    let ehdr = data.get(..EHDR_LEN).ok_or(ElfError::Truncated)?;
    let ident = |i: usize| ehdr.get(i).copied();
    if ident(4) != Some(ELFCLASS64) || ident(5) != Some(ELFDATA2LSB) || ident(6) != Some(EV_CURRENT)
    {
        return Err(ElfError::Unsupported);
    }
    // EI_OSABI (7) is not checked: toolchains emit both SYSV (0) and
    // GNU/Linux (3) for ordinary Linux executables.
    let field16 = |off| read_u16(ehdr, off).ok_or(ElfError::Truncated);
    let field64 = |off| read_u64(ehdr, off).ok_or(ElfError::Truncated);
    let kind = match field16(16)? {
        ET_EXEC => ElfKind::Exec,
        ET_DYN => ElfKind::Dyn,
        _ => return Err(ElfError::Unsupported),
    };
    if field16(18)? != EM_X86_64 {
        return Err(ElfError::Unsupported);
    }
    if read_u32(ehdr, 20) != Some(u32::from(EV_CURRENT)) {
        return Err(ElfError::Unsupported);
    }
    let elf = ElfFile {
        kind,
        entry: field64(24)?,
        phoff: field64(32)?,
        phentsize: field16(54)?,
        phnum: field16(56)?,
        data,
    };

    if usize::from(elf.phentsize) != PHDR_LEN || elf.phnum == 0 || elf.phnum > MAX_PHNUM {
        return Err(ElfError::BadProgramHeaders);
    }
    let table = elf.phdr_table_range().ok_or(ElfError::BadProgramHeaders)?;
    if table.end > data.len() {
        return Err(ElfError::Truncated);
    }

    let mut loads = 0usize;
    let mut prev_end = 0u64;
    for ph in elf.program_headers() {
        match ph.p_type {
            PT_LOAD => {
                let end = validate_load(&ph, file_len)?;
                // Linux requires PT_LOADs in ascending vaddr order; also
                // reject overlap, which would make one segment clobber
                // another when mapped.
                if loads > 0 && ph.vaddr < prev_end {
                    return Err(ElfError::BadSegment);
                }
                prev_end = end;
                loads = loads.saturating_add(1);
            }
            PT_INTERP => {
                file_range(ph.offset, ph.filesz)
                    .filter(|r| r.end <= file_len)
                    .ok_or(ElfError::BadSegment)?;
            }
            _ => {}
        }
    }
    if loads == 0 {
        return Err(ElfError::BadProgramHeaders);
    }
    Ok(elf)
}

/// Check one `PT_LOAD`; returns the end of its memory range.
fn validate_load(ph: &ProgramHeader, file_len: usize) -> Result<u64, ElfError> {
    if ph.filesz > ph.memsz {
        return Err(ElfError::BadSegment);
    }
    file_range(ph.offset, ph.filesz)
        .filter(|r| r.end <= file_len)
        .ok_or(ElfError::BadSegment)?;
    let end = ph
        .vaddr_end()
        .filter(|&end| end <= USER_END)
        .ok_or(ElfError::BadSegment)?;
    // p_align 0 and 1 mean "no alignment"; otherwise the file offset and
    // the address must be congruent so the segment can be mapped by pages.
    if ph.align > 1 && (!ph.align.is_power_of_two() || ph.offset % ph.align != ph.vaddr % ph.align)
    {
        return Err(ElfError::BadSegment);
    }
    Ok(end)
}

impl<'a> ElfFile<'a> {
    /// The whole file.
    pub fn data(&self) -> &'a [u8] {
        self.data
    }

    /// All program headers in table order. Stops early (rather than
    /// panicking) if the table does not fit the file, which can only happen
    /// if the public fields were changed after [`parse`].
    pub fn program_headers(&self) -> impl Iterator<Item = ProgramHeader> + use<'a> {
        let this = *self;
        (0..this.phnum).map_while(move |i| this.program_header(i))
    }

    /// The `PT_LOAD` program headers, in ascending address order.
    pub fn load_segments(&self) -> impl Iterator<Item = ProgramHeader> + use<'a> {
        self.program_headers().filter(ProgramHeader::is_load)
    }

    /// Program header number `index`, if it exists.
    pub fn program_header(&self, index: u16) -> Option<ProgramHeader> {
        if index >= self.phnum || usize::from(self.phentsize) < PHDR_LEN {
            return None;
        }
        let start = u64::from(index)
            .checked_mul(u64::from(self.phentsize))?
            .checked_add(self.phoff)?;
        let range = file_range(start, PHDR_LEN as u64)?;
        ProgramHeader::decode(self.data.get(range)?)
    }

    /// Whether a program header of type `p_type` exists (e.g. `PT_INTERP`,
    /// which marks a dynamically linked program).
    pub fn has_segment(&self, p_type: u32) -> bool {
        self.program_headers().any(|ph| ph.p_type == p_type)
    }

    /// The interpreter path from `PT_INTERP`, without its NUL terminator.
    /// `None` for a static executable.
    pub fn interp(&self) -> Option<&'a [u8]> {
        let ph = self.program_headers().find(|ph| ph.p_type == PT_INTERP)?;
        let bytes = self.segment_data(&ph).ok()?;
        // The path ends at the first NUL (normally the segment's last byte).
        Some(bytes.split(|&b| b == 0).next().unwrap_or(bytes))
    }

    /// Virtual address of the program header table once loaded (for the
    /// `AT_PHDR` auxiliary vector entry). Taken from `PT_PHDR` if present,
    /// otherwise computed from the `PT_LOAD` whose file bytes contain the
    /// table. For [`ElfKind::Dyn`] the result is relative to the load base.
    pub fn phdr_vaddr(&self) -> Option<u64> {
        if let Some(ph) = self.program_headers().find(|ph| ph.p_type == PT_PHDR) {
            return Some(ph.vaddr);
        }
        let table = self.phdr_table_range()?;
        let (start, end) = (table.start as u64, table.end as u64);
        self.load_segments().find_map(|ph| {
            let seg_end = ph.offset.checked_add(ph.filesz)?;
            if ph.offset <= start && end <= seg_end {
                ph.vaddr.checked_add(start.checked_sub(ph.offset)?)
            } else {
                None
            }
        })
    }

    /// The bytes of a segment present in the file (`filesz` bytes at
    /// `offset`). A `BadSegment` error if they are not all in the file.
    pub fn segment_data(&self, ph: &ProgramHeader) -> Result<&'a [u8], ElfError> {
        file_range(ph.offset, ph.filesz)
            .and_then(|r| self.data.get(r))
            .ok_or(ElfError::BadSegment)
    }

    /// Byte range of the program header table, if it is representable.
    fn phdr_table_range(&self) -> Option<core::ops::Range<usize>> {
        let size = u64::from(self.phnum).checked_mul(u64::from(self.phentsize))?;
        file_range(self.phoff, size)
    }
}

/// `offset..offset+len` as a `usize` range, if it does not overflow.
fn file_range(offset: u64, len: u64) -> Option<core::ops::Range<usize>> {
    let start = usize::try_from(offset).ok()?;
    let end = start.checked_add(usize::try_from(len).ok()?)?;
    Some(start..end)
}

fn read_array<const N: usize>(b: &[u8], off: usize) -> Option<[u8; N]> {
    b.get(off..off.checked_add(N)?)?.try_into().ok()
}

fn read_u16(b: &[u8], off: usize) -> Option<u16> {
    read_array(b, off).map(u16::from_le_bytes)
}

fn read_u32(b: &[u8], off: usize) -> Option<u32> {
    read_array(b, off).map(u32::from_le_bytes)
}

fn read_u64(b: &[u8], off: usize) -> Option<u64> {
    read_array(b, off).map(u64::from_le_bytes)
}

#[cfg(test)]
mod tests;
