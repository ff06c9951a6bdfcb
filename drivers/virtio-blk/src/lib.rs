#![forbid(unsafe_code)]
#![no_std]
