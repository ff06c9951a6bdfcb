//! Netlink messages on the wire: the `struct nlmsghdr` stream a program
//! writes to an AF_NETLINK socket, the `struct rtattr`/`struct nlattr`
//! attributes inside a message, and a builder for the replies.
//!
//! Layout reference: netlink(7) and rtnetlink(7) (and the kernel's
//! include/uapi/linux/netlink.h): every message is a 16-byte header
//! (length, type, flags, sequence number, port id, host byte order)
//! followed by its payload, padded to a multiple of 4 bytes
//! (`NLMSG_ALIGN`); attributes are a 4-byte header (length, type) and
//! their data, also padded to 4 bytes (`RTA_ALIGN`).
//!
//! Nothing here panics or trusts a length: every offset is checked, and
//! hostile bytes give `None` or [`Malformed`].

#![forbid(unsafe_code)]
#![no_std]

extern crate alloc;
#[cfg(test)]
extern crate std;

use alloc::vec::Vec;

/// `sizeof(struct nlmsghdr)`.
pub const NLMSG_HDRLEN: usize = 16;
/// `sizeof(struct rtattr)` (also `struct nlattr`).
pub const RTA_HDRLEN: usize = 4;

pub const NLMSG_NOOP: u16 = 1;
pub const NLMSG_ERROR: u16 = 2;
pub const NLMSG_DONE: u16 = 3;
pub const NLMSG_OVERRUN: u16 = 4;
/// Types below this are netlink's own control messages.
pub const NLMSG_MIN_TYPE: u16 = 0x10;

pub const NLM_F_REQUEST: u16 = 0x1;
pub const NLM_F_MULTI: u16 = 0x2;
pub const NLM_F_ACK: u16 = 0x4;
pub const NLM_F_ECHO: u16 = 0x8;
pub const NLM_F_ROOT: u16 = 0x100;
pub const NLM_F_MATCH: u16 = 0x200;
pub const NLM_F_DUMP: u16 = NLM_F_ROOT | NLM_F_MATCH;
pub const NLM_F_REPLACE: u16 = 0x100;
pub const NLM_F_EXCL: u16 = 0x200;
pub const NLM_F_CREATE: u16 = 0x400;
pub const NLM_F_APPEND: u16 = 0x800;
/// In an ack: the request's payload was not copied into it.
pub const NLM_F_CAPPED: u16 = 0x100;

/// `NLMSG_ALIGN`/`RTA_ALIGN`: `len` rounded up to 4 bytes (saturating,
/// so a hostile length cannot wrap).
pub const fn align(len: usize) -> usize {
    len.saturating_add(3) & !3
}

/// A decoded `struct nlmsghdr`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Header {
    pub len: u32,
    pub ty: u16,
    pub flags: u16,
    pub seq: u32,
    pub pid: u32,
}

fn u16_at(b: &[u8], at: usize) -> Option<u16> {
    let s = b.get(at..at.checked_add(2)?)?;
    Some(u16::from_ne_bytes([s[0], s[1]]))
}

fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    let s = b.get(at..at.checked_add(4)?)?;
    Some(u32::from_ne_bytes([s[0], s[1], s[2], s[3]]))
}

impl Header {
    /// The header at the start of `b`, if there are 16 bytes.
    pub fn parse(b: &[u8]) -> Option<Header> {
        Some(Header {
            len: u32_at(b, 0)?,
            ty: u16_at(b, 4)?,
            flags: u16_at(b, 6)?,
            seq: u32_at(b, 8)?,
            pid: u32_at(b, 12)?,
        })
    }

    pub fn to_bytes(&self) -> [u8; NLMSG_HDRLEN] {
        let mut out = [0u8; NLMSG_HDRLEN];
        out[0..4].copy_from_slice(&self.len.to_ne_bytes());
        out[4..6].copy_from_slice(&self.ty.to_ne_bytes());
        out[6..8].copy_from_slice(&self.flags.to_ne_bytes());
        out[8..12].copy_from_slice(&self.seq.to_ne_bytes());
        out[12..16].copy_from_slice(&self.pid.to_ne_bytes());
        out
    }
}

/// One message of a stream: its header, its payload (the `len - 16`
/// bytes after the header) and the whole message's bytes.
#[derive(Clone, Copy, Debug)]
pub struct Message<'a> {
    pub header: Header,
    pub payload: &'a [u8],
    pub bytes: &'a [u8],
}

/// The messages of a buffer a program sent, in order. Like Linux's
/// `netlink_rcv_skb`, the walk stops (silently) at the first header whose
/// length is below 16 or runs past the buffer, and at trailing bytes too
/// short for a header.
pub struct Messages<'a> {
    rest: &'a [u8],
}

/// Iterates over the messages in `buf`.
pub fn messages(buf: &[u8]) -> Messages<'_> {
    Messages { rest: buf }
}

impl<'a> Iterator for Messages<'a> {
    type Item = Message<'a>;

    fn next(&mut self) -> Option<Message<'a>> {
        let header = Header::parse(self.rest)?;
        let len = header.len as usize;
        if len < NLMSG_HDRLEN || len > self.rest.len() {
            self.rest = &[];
            return None;
        }
        let bytes = &self.rest[..len];
        let msg = Message {
            header,
            payload: &bytes[NLMSG_HDRLEN..],
            bytes,
        };
        // The next message starts at the aligned length, or the buffer
        // ends (Linux pulls min(NLMSG_ALIGN(len), remaining)).
        let next = align(len).min(self.rest.len());
        self.rest = &self.rest[next..];
        Some(msg)
    }
}

/// An attribute whose length is below its header or past its buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Malformed;

/// The attributes (type, data) in `buf`; the nested/byte-order bits of the
/// type (0xc000) are cleared.
pub struct Attrs<'a> {
    rest: &'a [u8],
}

/// Iterates over the attributes in `buf` (the part of a message after its
/// fixed family header).
pub fn attrs(buf: &[u8]) -> Attrs<'_> {
    Attrs { rest: buf }
}

impl<'a> Iterator for Attrs<'a> {
    type Item = Result<(u16, &'a [u8]), Malformed>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.rest.len() < RTA_HDRLEN {
            // Linux ignores fewer than 4 trailing bytes (nla_ok).
            return None;
        }
        let len = u16_at(self.rest, 0).unwrap_or(0) as usize;
        let ty = u16_at(self.rest, 2).unwrap_or(0) & 0x3fff;
        if len < RTA_HDRLEN || len > self.rest.len() {
            self.rest = &[];
            return Some(Err(Malformed));
        }
        let data = &self.rest[RTA_HDRLEN..len];
        let next = align(len).min(self.rest.len());
        self.rest = &self.rest[next..];
        Some(Ok((ty, data)))
    }
}

/// Parses every attribute in `buf`: [`Malformed`] if any is.
pub fn parse_attrs(buf: &[u8]) -> Result<Vec<(u16, &[u8])>, Malformed> {
    attrs(buf).collect()
}

/// Builds a stream of messages: [`Builder::begin`] a message, append its
/// fixed header and attributes, [`Builder::end`] it (which fills in its
/// length). Messages are padded to 4 bytes.
#[derive(Default)]
pub struct Builder {
    buf: Vec<u8>,
    start: usize,
}

impl Builder {
    pub fn new() -> Builder {
        Builder::default()
    }

    /// Starts a message with this header (its length is set by `end`).
    pub fn begin(&mut self, ty: u16, flags: u16, seq: u32, pid: u32) -> &mut Self {
        self.start = self.buf.len();
        let h = Header {
            len: 0,
            ty,
            flags,
            seq,
            pid,
        };
        self.buf.extend_from_slice(&h.to_bytes());
        self
    }

    /// Appends raw payload bytes, padded to 4.
    pub fn bytes(&mut self, data: &[u8]) -> &mut Self {
        self.buf.extend_from_slice(data);
        self.pad();
        self
    }

    /// Appends an attribute.
    pub fn attr(&mut self, ty: u16, data: &[u8]) -> &mut Self {
        let len = (RTA_HDRLEN + data.len()) as u16;
        self.buf.extend_from_slice(&len.to_ne_bytes());
        self.buf.extend_from_slice(&ty.to_ne_bytes());
        self.buf.extend_from_slice(data);
        self.pad();
        self
    }

    pub fn attr_u8(&mut self, ty: u16, v: u8) -> &mut Self {
        self.attr(ty, &[v])
    }

    pub fn attr_u32(&mut self, ty: u16, v: u32) -> &mut Self {
        self.attr(ty, &v.to_ne_bytes())
    }

    /// A NUL-terminated string attribute.
    pub fn attr_str(&mut self, ty: u16, s: &str) -> &mut Self {
        let mut v = Vec::with_capacity(s.len() + 1);
        v.extend_from_slice(s.as_bytes());
        v.push(0);
        self.attr(ty, &v)
    }

    fn pad(&mut self) {
        while !self.buf.len().is_multiple_of(4) {
            self.buf.push(0);
        }
    }

    /// Ends the current message: writes its length.
    pub fn end(&mut self) -> &mut Self {
        let len = (self.buf.len() - self.start) as u32;
        if let Some(slot) = self.buf.get_mut(self.start..self.start + 4) {
            slot.copy_from_slice(&len.to_ne_bytes());
        }
        self
    }

    /// Bytes built so far.
    pub fn len(&self) -> usize {
        self.buf.len()
    }

    pub fn is_empty(&self) -> bool {
        self.buf.is_empty()
    }

    /// Drops everything after `len` bytes (undoes a message that did not
    /// fit).
    pub fn truncate(&mut self, len: usize) {
        self.buf.truncate(len);
    }

    pub fn finish(self) -> Vec<u8> {
        self.buf
    }
}

/// An NLMSG_ERROR message answering `request` (sent by port `port`):
/// `error` is 0 for an ack or a negative errno. As on Linux, an error
/// carries the whole request unless `capped` (NETLINK_CAP_ACK), an ack
/// only its header; NLM_F_CAPPED says which.
pub fn ack(request: &Message<'_>, port: u32, error: i32, capped: bool) -> Vec<u8> {
    let mut b = Builder::new();
    let capped = capped || error == 0;
    let flags = if capped { NLM_F_CAPPED } else { 0 };
    b.begin(NLMSG_ERROR, flags, request.header.seq, port);
    b.bytes(&error.to_ne_bytes());
    if capped {
        b.bytes(&request.header.to_bytes());
    } else {
        b.bytes(request.bytes);
    }
    b.end();
    b.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::vec;

    fn msg(ty: u16, flags: u16, seq: u32, payload: &[u8]) -> Vec<u8> {
        let mut b = Builder::new();
        b.begin(ty, flags, seq, 7).bytes(payload).end();
        b.finish()
    }

    #[test]
    fn builder_sets_lengths_and_padding() {
        let mut b = Builder::new();
        b.begin(18, NLM_F_REQUEST, 1, 0)
            .bytes(&[1, 2, 3])
            .attr_str(3, "lo")
            .end();
        let v = b.finish();
        // 16 header + 4 (3 padded) + 4+3 padded to 8.
        assert_eq!(v.len(), 28);
        let h = Header::parse(&v).unwrap();
        assert_eq!(h.len, 28);
        assert_eq!(h.ty, 18);
        let m = messages(&v).next().unwrap();
        let a = parse_attrs(&m.payload[4..]).unwrap();
        assert_eq!(a, vec![(3u16, &b"lo\0"[..])]);
    }

    #[test]
    fn stream_of_two_messages_yields_both() {
        let mut v = msg(18, 1, 1, &[0; 16]);
        v.extend(msg(22, 1, 2, &[0; 8]));
        let seqs: Vec<u32> = messages(&v).map(|m| m.header.seq).collect();
        assert_eq!(seqs, vec![1, 2]);
    }

    #[test]
    fn short_length_or_length_past_buffer_stops_the_walk() {
        let mut v = msg(18, 1, 1, &[0; 4]);
        v[0..4].copy_from_slice(&8u32.to_ne_bytes());
        assert_eq!(messages(&v).count(), 0);
        let mut v = msg(18, 1, 1, &[0; 4]);
        v[0..4].copy_from_slice(&1000u32.to_ne_bytes());
        assert_eq!(messages(&v).count(), 0);
        let mut v = msg(18, 1, 1, &[0; 4]);
        v[0..4].copy_from_slice(&u32::MAX.to_ne_bytes());
        assert_eq!(messages(&v).count(), 0);
        // Fewer than 16 trailing bytes after a good message.
        let mut v = msg(18, 1, 1, &[0; 4]);
        v.extend_from_slice(&[1, 2, 3]);
        assert_eq!(messages(&v).count(), 1);
    }

    #[test]
    fn unaligned_last_message_is_taken_whole() {
        let mut v = msg(18, 1, 1, &[0; 4]);
        v.extend_from_slice(
            &Header {
                len: 17,
                ty: 22,
                flags: 1,
                seq: 2,
                pid: 0,
            }
            .to_bytes(),
        );
        v.push(9);
        let m: Vec<_> = messages(&v).collect();
        assert_eq!(m.len(), 2);
        assert_eq!(m[1].payload, &[9]);
    }

    #[test]
    fn bad_attribute_lengths_are_malformed() {
        // Length 2 (below the header) and length past the buffer.
        assert_eq!(parse_attrs(&[2, 0, 1, 0]), Err(Malformed));
        assert_eq!(parse_attrs(&[9, 0, 1, 0, 0, 0, 0, 0]), Err(Malformed));
        // Three trailing bytes are ignored.
        assert_eq!(
            parse_attrs(&[5, 0, 1, 0, 42, 0, 0, 0, 1, 2, 3]).unwrap(),
            vec![(1u16, &[42u8][..])]
        );
        assert_eq!(parse_attrs(&[]).unwrap(), vec![]);
    }

    #[test]
    fn ack_carries_header_and_error_carries_request() {
        let req = msg(16, NLM_F_REQUEST | NLM_F_ACK, 42, &[0; 16]);
        let m = messages(&req).next().unwrap();
        let a = ack(&m, 99, 0, false);
        let h = Header::parse(&a).unwrap();
        assert_eq!(
            (h.ty, h.seq, h.pid, h.flags),
            (NLMSG_ERROR, 42, 99, NLM_F_CAPPED)
        );
        assert_eq!(a.len(), 16 + 4 + 16);
        assert_eq!(&a[20..36], &req[..16]);
        let e = ack(&m, 99, -1, false);
        assert_eq!(e.len(), 16 + 4 + req.len());
        assert_eq!(i32::from_ne_bytes([e[16], e[17], e[18], e[19]]), -1);
        assert_eq!(Header::parse(&e).unwrap().flags, 0);
        let c = ack(&m, 99, -1, true);
        assert_eq!(c.len(), 16 + 4 + 16);
        assert_eq!(Header::parse(&c).unwrap().flags, NLM_F_CAPPED);
    }

    #[test]
    fn arbitrary_bytes_never_panic() {
        // A deterministic sweep of short hostile buffers.
        let mut seed = 0x1234_5678u32;
        for n in 0..2000 {
            let len = n % 64;
            let mut v = vec![0u8; len];
            for b in v.iter_mut() {
                seed = seed.wrapping_mul(1_103_515_245).wrapping_add(12345);
                *b = (seed >> 16) as u8;
            }
            for m in messages(&v) {
                assert!(m.bytes.len() >= NLMSG_HDRLEN);
                let _ = parse_attrs(m.payload);
            }
            let _ = parse_attrs(&v);
        }
    }
}
