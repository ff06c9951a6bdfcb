//! The kernel's error type: a Linux errno plus an optional message for logs.

use core::fmt;

/// Linux error numbers (asm-generic/errno-base.h and errno.h).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(i32)]
#[allow(clippy::upper_case_acronyms)]
pub enum Errno {
    EPERM = 1,
    ENOENT = 2,
    ESRCH = 3,
    EINTR = 4,
    EIO = 5,
    ENXIO = 6,
    E2BIG = 7,
    ENOEXEC = 8,
    EBADF = 9,
    ECHILD = 10,
    EAGAIN = 11,
    ENOMEM = 12,
    EACCES = 13,
    EFAULT = 14,
    ENOTBLK = 15,
    EBUSY = 16,
    EEXIST = 17,
    EXDEV = 18,
    ENODEV = 19,
    ENOTDIR = 20,
    EISDIR = 21,
    EINVAL = 22,
    ENFILE = 23,
    EMFILE = 24,
    ENOTTY = 25,
    ETXTBSY = 26,
    EFBIG = 27,
    ENOSPC = 28,
    ESPIPE = 29,
    EROFS = 30,
    EMLINK = 31,
    EPIPE = 32,
    EDOM = 33,
    ERANGE = 34,
    EDEADLK = 35,
    ENAMETOOLONG = 36,
    ENOLCK = 37,
    ENOSYS = 38,
    ENOTEMPTY = 39,
    ELOOP = 40,
    ENOMSG = 42,
    EIDRM = 43,
    ENODATA = 61,
    EOVERFLOW = 75,
    ELIBBAD = 80,
    ENOTSOCK = 88,
    EDESTADDRREQ = 89,
    EMSGSIZE = 90,
    EPROTOTYPE = 91,
    ENOPROTOOPT = 92,
    EPROTONOSUPPORT = 93,
    ESOCKTNOSUPPORT = 94,
    EOPNOTSUPP = 95,
    EPFNOSUPPORT = 96,
    EAFNOSUPPORT = 97,
    EADDRINUSE = 98,
    EADDRNOTAVAIL = 99,
    ENETDOWN = 100,
    ENETUNREACH = 101,
    ENETRESET = 102,
    ECONNABORTED = 103,
    ECONNRESET = 104,
    ENOBUFS = 105,
    EISCONN = 106,
    ENOTCONN = 107,
    ESHUTDOWN = 108,
    ETOOMANYREFS = 109,
    ETIMEDOUT = 110,
    ECONNREFUSED = 111,
    EHOSTDOWN = 112,
    EHOSTUNREACH = 113,
    EALREADY = 114,
    EINPROGRESS = 115,
    /// "Structure needs cleaning": a damaged file system (ext2 mount).
    EUCLEAN = 117,
    /// Kernel-internal: restart the syscall if the signal handler has
    /// SA_RESTART (or no handler runs), else EINTR. Never reaches user space.
    ERESTARTSYS = 512,
    /// Kernel-internal: restart whether or not a handler runs.
    ERESTARTNOINTR = 513,
    /// Kernel-internal: EINTR if a handler runs, else restart.
    ERESTARTNOHAND = 514,
    /// Kernel-internal: EINTR if a handler runs, else continue through
    /// restart_syscall with the thread's restart block (the rest of a
    /// relative sleep).
    #[allow(non_camel_case_types)]
    ERESTART_RESTARTBLOCK = 516,
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Error {
    errno: Errno,
    msg: Option<&'static str>,
}

impl Error {
    pub const fn new(errno: Errno) -> Self {
        Error { errno, msg: None }
    }

    pub const fn with_message(errno: Errno, msg: &'static str) -> Self {
        Error { errno, msg: Some(msg) }
    }

    pub fn errno(&self) -> Errno {
        self.errno
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.msg {
            Some(m) => write!(f, "{:?}: {}", self.errno, m),
            None => write!(f, "{:?}", self.errno),
        }
    }
}

impl From<Errno> for Error {
    fn from(errno: Errno) -> Self {
        Error::new(errno)
    }
}

impl From<frame::Error> for Error {
    fn from(e: frame::Error) -> Self {
        match e {
            frame::Error::NoMemory => Error::new(Errno::ENOMEM),
            frame::Error::InvalidArgs => Error::new(Errno::EINVAL),
            frame::Error::AccessDenied => Error::new(Errno::EFAULT),
        }
    }
}

pub type Result<T> = core::result::Result<T, Error>;

/// `return_errno!(EINVAL)` returns `Err` with that errno.
#[macro_export]
macro_rules! return_errno {
    ($errno:ident) => {
        return Err($crate::error::Error::new($crate::error::Errno::$errno))
    };
}

/// `return_errno_with_message!(EINVAL, "why")`.
#[macro_export]
macro_rules! return_errno_with_message {
    ($errno:ident, $msg:expr) => {
        return Err($crate::error::Error::with_message($crate::error::Errno::$errno, $msg))
    };
}
