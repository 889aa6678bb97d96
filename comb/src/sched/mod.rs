//! Scheduling: the pure comb planner and the executor that runs its windows.

pub(crate) mod exec;
pub mod plan;
pub(crate) mod steps;
