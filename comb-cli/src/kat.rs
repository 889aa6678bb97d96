//! Parsers for the known-answer formats (to be written).
