//! `inferbench-inputs`: what people write, read strictly.
//!
//! The pipeline spec ([`spec`]), the provider table ([`providers`]) with the built-in wire
//! details of the reference runner's ten providers ([`known_providers`]), the dataset in the
//! reference format ([`dataset`]), and the reference runner's own records of an imported run
//! ([`reference_records`]). Every violation is reported with its file, line and field, all at
//! once, before any stage writes anything. The inputs stand on the contract alone; they know
//! nothing of a run's log, tables or directory layout.

pub mod dataset;
pub mod known_providers;
pub mod provider;
pub mod providers;
pub mod reference_records;
pub mod spec;
pub mod trace;
