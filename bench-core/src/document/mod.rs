//! The result document ([`result`], versioned, with its schema) and the frame format records travel in ([`frame`]).

pub mod frame;
pub mod result;
