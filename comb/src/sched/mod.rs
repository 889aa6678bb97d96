//! Scheduling: the pure comb planner and the executor that runs its windows.

pub mod plan;
pub(crate) mod exec;
