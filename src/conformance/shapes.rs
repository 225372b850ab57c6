//! Typed wire shape checks (placeholder).
