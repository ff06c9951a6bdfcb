//! Host tests of enumeration, BAR sizing, capabilities and MSI-X parsing
//! against a simulated configuration space.
