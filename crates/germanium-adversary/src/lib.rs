//! Germanium's adversary: programs written to make a back end verify something false,
//! judged by oracles independent of each other (see [`oracles`]). [`generate`] writes
//! programs from a seed, [`mutate`] changes existing ones, [`minimise`] shrinks a finding,
//! and [`campaign`] runs them all against a budget and writes a report.

pub mod campaign;
pub mod generate;
pub mod minimise;
pub mod mutate;
pub mod oracles;
pub mod silicon;
