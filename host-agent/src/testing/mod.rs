//! Test support: a CA and certificates made at run time, and a fake gateway that speaks
//! the real protocol over real TLS on 127.0.0.1.

pub mod gateway;
pub mod pki;
