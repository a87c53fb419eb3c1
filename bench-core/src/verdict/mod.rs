//! Judgement over a document: the [`analysis`] (RAID, layers, all at once, fleets), the [`acceptance`] verdict per disk, and the text [`table`].

pub mod acceptance;
pub mod analysis;
pub mod table;
