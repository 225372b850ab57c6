//! Run reports and their renderers: `report.json`, `junit.xml` and `summary.md`.
//! Renderers are pure functions of a [`model::RunReport`]; writing the files is the caller's job.

pub mod model;
