//! `vigil-shared` holds the pure domain logic that both the controller and the host agent
//! use, with no server or async code in it. Start with [`policy`], the command classifier
//! that decides whether a shell command is provably read-only (`policy::classify`).

pub mod policy;
